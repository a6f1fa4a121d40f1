# SPDX-License-Identifier: MIT
"""The resize through time (resize_time.json): the hit rate and the database
reads window by window through a resize, under a cache-aside workload on real
memcached, per scenario and arm; and the targets of read-through migration
(T1, T2, T3), judged for the read-through arms a run has."""

from .common import pct, rows_of, verdict

# Targets of read-through migration, for the read-through arms only.
TARGET_MIN_HIT = 0.97  # T1: no window after the resize below 0.97 x the hit rate before
TARGET_SHRINK_PP = 1.0  # T1 when servers leave: no window below the new steady state - 1 pp
TARGET_PEAK_DB = 1.10  # T2: peak database reads in a window after the resize <= 1.10 x before (not when shrinking)
TARGET_TTL_ERROR_S = 1.0  # copied TTLs within 1 s of the source's (ttl_error_max_s, from the TTL probes)
TARGET_VS_DIRECT_PP = 0.5  # T3 when servers join: every window after the resize >= the direct switch's - 0.5 pp

STEADY_PP = 1.0  # a window is steady when its hit rate is within 1 pp of the final level
STEADY_TAIL = 3  # the final level: the mean hit rate of the last 3 windows

# The arms the targets apply to, by benchmark name (the read-through arms).
JUDGED_ARMS = [("read-through", "(c) read-through"), ("read-through-warmer", "(d) read-through + warmer")]

SCENARIOS = [  # (benchmark name, what the report calls it)
    ("4-to-5", "4 -> 5 servers"),
    ("5-to-4", "5 -> 4 servers"),
    ("modulo-to-ketama", "modulo(4) -> ketama(4)"),
    ("libmemcached-to-spymemcached", "libmemcached ring -> spymemcached ring (4)"),
]
ARM_ORDER = ["modulo-direct", "direct", "read-through", "read-through-warmer"]

# The migration model's first window after the resize (a simulation of 100,000 keys, Zipf 0.9, 12,000
# items per server under LRU, 2% writes): (hit rate, db reads x before).
MODEL = {
    ("4-to-5", "modulo-direct"): (0.694, 1.96),
    ("4-to-5", "direct"): (0.813, 1.19),
    ("4-to-5", "read-through"): (0.847, 0.97),
    ("4-to-5", "read-through-warmer"): (0.863, 0.87),
    ("modulo-to-ketama", "direct"): (0.700, 1.92),
    ("modulo-to-ketama", "read-through"): (0.812, 1.21),
    ("modulo-to-ketama", "read-through-warmer"): (0.837, 1.04),
    ("5-to-4", "direct"): (0.828, 1.49),
    ("5-to-4", "read-through"): (0.874, 1.09),
    ("5-to-4", "read-through-warmer"): (0.840, 1.39),
}
MODEL_BEFORE = 0.844


def scenario_label(name):
    return dict(SCENARIOS).get(name, name)


def runs_of(doc):
    """[(scenario, arm, row)] in report order; failed rows as (scenario, arm, row) too."""
    out = []
    for r in rows_of(doc):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) < 3 or parts[0] != "BM_ResizeTime":
            continue
        out.append((parts[1], parts[2], r))
    scenario_order = [name for name, _ in SCENARIOS]

    def key(item):
        scenario, arm, _ = item
        return (scenario_order.index(scenario) if scenario in scenario_order else 9,
                ARM_ORDER.index(arm) if arm in ARM_ORDER else 9, arm)

    return sorted(out, key=key)


def windows_of(r):
    """Every window of a run: [{"hit_rate", "db_reads", "requests", "seconds"}]."""
    return [{field: r[f"w{w:03d}_{field}"] for field in ("hit_rate", "db_reads", "requests", "seconds")}
            for w in range(int(r["windows"]))]


def arm_label(r):
    """The arm's label from the row's label ("(b) direct switch: a -> b")."""
    return r.get("label", "").split(":")[0]


def profiles_of(r):
    label = r.get("label", "")
    return label.split(": ", 1)[1] if ": " in label else ""


def summary(r):
    """What the tables say about one run."""
    windows = windows_of(r)
    resize = int(r["resize_window"])
    after = windows[resize:]
    before_hit, before_db = r["before_hit_rate"], r["before_db_reads"]
    tail = after[-STEADY_TAIL:]
    final = sum(w["hit_rate"] for w in tail) / len(tail)
    steady_from = len(after)
    for k in range(len(after) - 1, -1, -1):
        if abs(after[k]["hit_rate"] - final) > STEADY_PP / 100:
            break
        steady_from = k
    return {
        "before hit rate": before_hit,
        "before db reads": before_db,
        "first hit rate": after[0]["hit_rate"],
        "min hit rate": min(w["hit_rate"] for w in after),
        "min / before": min(w["hit_rate"] for w in after) / before_hit,
        "first db / before": after[0]["db_reads"] / before_db,
        "peak db / before": max(w["db_reads"] for w in after) / before_db,
        "steady hit rate": final,
        "windows to steady": steady_from,
        "moved": r["moved"],
        "moved requests": r["moved_requests"],
    }


def first_window_rows(doc):
    """For the hit-rate table: one row per arm present, the first window after the resize."""
    out = []
    for scenario, arm, r in runs_of(doc):
        if r.get("error_occurred"):
            continue
        s = summary(r)
        out.append({"scenario": scenario, "arm": arm, "label": arm_label(r), "profiles": profiles_of(r),
                    "servers before": int(r["servers_before"]), "servers after": int(r["servers_after"]),
                    "hit rate": s["first hit rate"], "before": s["before hit rate"],
                    "requests": int(r["window_requests"])})
    return out


def grows(runs, scenario):
    """Whether `scenario` adds servers (in any of its runs)."""
    return any(s == scenario and not r.get("error_occurred") and r["servers_after"] > r["servers_before"]
               for s, _, r in runs)


def goals(scenario, growth=False):
    """[(target, goal)] for a scenario: T1, T2, the copied TTLs and, when servers join, T3."""
    ttl = ("copied TTL", f"within {TARGET_TTL_ERROR_S:g} s of the source")
    if scenario == "5-to-4":
        return [("T1 lowest window", f">= new steady - {TARGET_SHRINK_PP:g} pp"),
                ("T2 peak db reads", "(not when shrinking)"), ttl]
    out = [("T1 lowest window", f">= {TARGET_MIN_HIT:.2f}x before"),
           ("T2 peak db reads", f"<= {TARGET_PEAK_DB:.2f}x before"), ttl]
    if growth:
        out.append(("T3 every window", f">= direct switch - {TARGET_VS_DIRECT_PP:g} pp"))
    return out


def judge_vs_direct(r, direct):
    """(measured, met) of T3: the lowest difference, window by window after the resize, between the hit
    rate of run `r` and that of the direct switch `direct` in the same window (numbered from the resize,
    0 the first after it); met is None without a direct switch in the run."""
    if direct is None or direct.get("error_occurred"):
        return ("no direct switch", None)
    ours, theirs = windows_of(r)[int(r["resize_window"]):], windows_of(direct)[int(direct["resize_window"]):]
    differences = [a["hit_rate"] - b["hit_rate"] for a, b in zip(ours, theirs)]
    if not differences:
        return ("no windows", None)
    worst = min(range(len(differences)), key=lambda k: differences[k])
    points = round(differences[worst] * 100, 1) + 0.0  # no "-0.0"
    return (f"{points:+.1f} pp (window {worst})", points >= -TARGET_VS_DIRECT_PP)


def judge_ttl(r):
    """(measured, met) of the copied-TTL target; met is None without TTL probes."""
    if "ttl_error_max_s" not in r or not r.get("ttl_probes"):
        return ("no probes", None)
    error = float(r["ttl_error_max_s"])
    return (f"{error:.0f} s max ({int(r['ttl_probes'])} keys)", error <= TARGET_TTL_ERROR_S)


def judge(scenario, s, r=None, direct=None):
    """[(measured, met)] for T1, T2, the copied TTLs and, when servers join, T3 (against the direct
    switch's run `direct`) of one run; met is None where a target does not apply."""
    ttl = judge_ttl(r or {})
    if scenario == "5-to-4":
        floor = s["steady hit rate"] - TARGET_SHRINK_PP / 100
        return [(f"{pct(s['min hit rate'], 1)} (steady {pct(s['steady hit rate'], 1)})",
                 round(s["min hit rate"], 3) >= round(floor, 3)),
                (f"{s['peak db / before']:.2f}x", None), ttl]
    out = [(f"{s['min / before']:.3f}x", round(s["min / before"], 3) >= TARGET_MIN_HIT),
           (f"{s['peak db / before']:.2f}x", round(s["peak db / before"], 2) <= TARGET_PEAK_DB), ttl]
    if r is not None and r["servers_after"] > r["servers_before"]:
        out.append(judge_vs_direct(r, direct))
    return out


def resize_time_section(rep, doc):
    """The resize-through-time tables; returns [(target, met)] for the judged arms present."""
    if doc is None:
        rep.say("Resize through time: no results (resize_time.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    runs = runs_of(doc)
    window = context.get("memshard_resize_time_window", "?")
    text_rows, csv_rows, window_csv, notes = [], [], [], []
    summaries = {}
    for scenario, arm, r in runs:
        if r.get("error_occurred"):
            text_rows.append([scenario_label(scenario), arm, "error: " + r.get("error_message", "")]
                             + [""] * 8)
            continue
        s = summary(r)
        summaries[(scenario, arm)] = (r, s)
        model = MODEL.get((scenario, arm))
        text_rows.append([scenario_label(scenario), arm_label(r) or arm,
                          f"{pct(s['moved'], 1)} / {pct(s['moved requests'], 1)}",
                          pct(s["before hit rate"], 1), pct(s["first hit rate"], 1), f"{s['min / before']:.3f}x",
                          f"{s['peak db / before']:.2f}x", str(s["windows to steady"]),
                          pct(s["steady hit rate"], 1),
                          f"{model[0]:.3f} / {model[1]:.2f}x" if model else "-"])
        csv_rows.append({"scenario": scenario, "arm": arm, "label": arm_label(r), "profiles": profiles_of(r),
                         "servers before": int(r["servers_before"]), "servers after": int(r["servers_after"]),
                         **s, "errors": int(r["errors"]), "hit us": r["hit_us"], "db read us": r["db_read_us"],
                         "model first hit rate": model[0] if model else "",
                         "model db / before": model[1] if model else ""})
        fill, resize = int(r["fill_windows"]), int(r["resize_window"])
        for w, values in enumerate(windows_of(r)):
            phase = "fill" if w < fill else ("before" if w < resize else "after")
            window_csv.append({"scenario": scenario, "arm": arm, "window": w - resize, "phase": phase,
                               **values})
        if int(r["errors"]):
            notes.append(f"{scenario_label(scenario)} {arm}: {int(r['errors'])} cache calls failed.")
    keys = context.get("memshard_resize_time_keys", "?")
    threads = context.get("memshard_resize_time_threads", "?")
    memory = context.get("memshard_resize_time_memory_mb", "?")
    value = context.get("memshard_resize_time_value_bytes", "?")
    hit_us = context.get("memshard_resize_time_hit_us")
    db_us = context.get("memshard_resize_time_db_read_us")
    first = runs[0][2] if runs and not runs[0][2].get("error_occurred") else None
    phases = ""
    if first is not None:
        phases = (f"{int(first['fill_windows'])} to fill the cache, "
                  f"{int(first['resize_window']) - int(first['fill_windows'])} before the resize, "
                  f"{int(first['windows']) - int(first['resize_window'])} after it")
    notes = [f"Cache-aside over SQLite on {context.get('memshard_resize_time_servers', '?').count(',') + 1} local "
             f"memcached servers ({context.get('memshard_resize_time_memcached_version', 'memcached')}, -m {memory} "
             f"each, {value}-byte values), {keys} keys drawn Zipf(0.9), 2% writes (update the row, delete the key), "
             f"{threads} threads (clones) as fast as they go; windows of {window} requests: {phases}. Every run "
             "restarts the servers empty on the same ports (the same rings).",
             "moved: keys / requests whose server (host:port) changes; before: the mean hit rate of the windows "
             "before the resize; first window: the first after it; min / before: its lowest window over before; "
             f"peak db / before: the most database reads in a window after it over the mean before; steady: the "
             f"mean of the last {STEADY_TAIL} windows, reached after 'windows to steady' windows (from then on "
             f"every window within {STEADY_PP:g} pp of it).",
             f"model: the migration model (a simulation: 100,000 keys, Zipf 0.9, 12,000 items per server under LRU, "
             f"2% writes), first window after the resize: hit rate / db reads x before "
             f"(hit rate before {MODEL_BEFORE:.3f}); its figures correspond to windows of about as many requests as "
             "there are keys, as here."] + notes
    if hit_us and db_us:
        notes.append(f"One thread alone, before the runs: a cache hit {float(hit_us):.0f} us, a database read "
                     f"{float(db_us):.0f} us.")
    rep.table(f"Resize through time: cache-aside on real memcached, windows of {window} requests",
              ["scenario", "arm", "moved keys / requests", "before", "first window", "min / before",
               "peak db / before", "windows to steady", "steady", "model first / db"],
              text_rows, "resize_time.csv", csv_rows, notes=notes)
    if window_csv:
        rep.csv("resize_time_windows.csv", window_csv)
    return targets_table(rep, runs, summaries)


def targets_table(rep, runs, summaries):
    """T1, T2 and T3 per scenario for each read-through arm: judged when present, else "not measured"."""
    targets, text_rows, csv_rows = [], [], []
    scenarios = [name for name, _ in SCENARIOS if any(s == name for s, _, _ in runs)]
    for scenario in scenarios:
        direct = summaries.get((scenario, "direct"), (None,))[0]
        for index, (name, goal) in enumerate(goals(scenario, grows(runs, scenario))):
            cells = []
            for arm, label in JUDGED_ARMS:
                found = summaries.get((scenario, arm))
                if found is None:
                    cells.append("not measured")
                    continue
                measured, met = judge(scenario, found[1], found[0], direct)[index]
                if met is None:
                    cells.append(f"{measured} (not judged)")
                    continue
                cells.append(f"{measured} {verdict(met)}")
                targets.append((f"resize {scenario_label(scenario)} {label}: {name}", met))
                csv_rows.append({"scenario": scenario, "arm": arm, "target": name, "goal": goal,
                                 "measured": measured, "met": met})
            text_rows.append([scenario_label(scenario), name, goal] + cells)
    rep.table("Targets through the resize (read-through arms)",
              ["scenario", "target", "goal"] + [label for _, label in JUDGED_ARMS], text_rows,
              "resize_time_targets.csv", csv_rows,
              notes=["Judged only for the read-through arms in the run; the direct switches (a), (b) above are "
                     "the reference they must beat. When servers leave (5 -> 4), "
                     f"T1 is the new steady state - {TARGET_SHRINK_PP:g} pp and T2 does not apply. When servers "
                     "join, T3 compares each window after the resize with the same window of the direct switch "
                     "(b): the lowest difference, and the window it was in (0 is the first after the resize)."])
    return targets
