# SPDX-License-Identifier: MIT
"""A hot key expiring under 64 readers in 4 processes (stampede.json): loader runs per expiry and
the waiting readers' latency, for get_or_load without and with a lease, and the stampede targets
of the hot-keys work, judged on what the run counted."""

from .common import count, rows_of, verdict

ARMS = [  # (benchmark name, what the report calls it)
    ("plain", "get_or_load"),
    ("lease", "get_or_load with a lease"),
]
MAX_LOADS_GOAL = 1  # loader runs in any one expiry's cycle, with a lease
P99_SLACK_MS = 10   # the waiting readers' p99 at most the loader's time plus this


def arms_of(doc):
    """{arm: row} of the BM_Stampede rows (failed ones included)."""
    out = {}
    for r in rows_of(doc):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) >= 2 and parts[0] == "BM_Stampede":
            out[parts[1]] = r
    return out


def ms(x):
    return f"{float(x):.1f} ms"


def stampede_section(rep, doc):
    """The table and the targets; returns [(target, met)]."""
    if doc is None:
        rep.say("Stampede: no results (stampede.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    load_ms = float(context.get("memshard_stampede_load_ms", 50))
    found = arms_of(doc)
    rows, csv_rows, targets, target_rows, target_csv = [], [], [], [], []
    for arm, label in ARMS:
        r = found.get(arm)
        if r is None:
            continue
        if r.get("error_occurred"):
            rows.append([label, "error: " + r.get("error_message", "")] + [""] * 7)
            continue
        rows.append([label, count(r["expiries"]), f"{float(r['loads_per_expiry']):.2f}", count(r["max_loads"]),
                     ms(r["episode_p50_ms"]), ms(r["episode_p99_ms"]), ms(r["episode_max_ms"]),
                     count(r["timeouts"]), count(r["errors"])])
        csv_rows.append({"arm": arm, **{field: r[field] for field in (
            "expiries", "loads", "loads_per_expiry", "max_loads", "calls", "episode_calls", "episode_p50_ms",
            "episode_p99_ms", "episode_max_ms", "all_p99_ms", "timeouts", "not_stored", "errors")}})
        if arm != "lease":
            continue
        checks = [
            ("stampede: loader runs per expiry, with a lease", f"{MAX_LOADS_GOAL} (at most, in any expiry)",
             f"{count(r['max_loads'])} at most ({float(r['loads_per_expiry']):.2f} on average)",
             int(r["max_loads"]) <= MAX_LOADS_GOAL and int(r["expiries"]) > 0),
            ("stampede: waiting readers' p99, with a lease", f"<= {load_ms + P99_SLACK_MS:.0f} ms (the loader's "
             f"{load_ms:.0f} ms + {P99_SLACK_MS} ms)", ms(r["episode_p99_ms"]),
             float(r["episode_p99_ms"]) <= load_ms + P99_SLACK_MS),
            ("stampede: readers that waited out their deadline", "0", count(r["timeouts"]),
             int(r["timeouts"]) == 0),
        ]
        for target, goal, measured, met in checks:
            target_rows.append([target, measured, goal, verdict(met)])
            target_csv.append({"target": target, "measured": measured, "goal": goal, "met": met})
            targets.append((target, met))
    notes = [f"{context.get('memshard_stampede_processes', '?')} reader processes x "
             f"{context.get('memshard_stampede_threads', '?')} threads, each thread a client of its own, call "
             f"get_or_load on one key with a {load_ms:.0f} ms loader, pausing "
             f"{context.get('memshard_stampede_think_ms', '?')} ms between calls, on "
             f"{context.get('memshard_stampede_servers', '?')} local memcached servers; the key is deleted (an "
             f"expiry) every {context.get('memshard_stampede_cycle_ms', '?')} ms, "
             f"{context.get('memshard_stampede_expiries', '?')} times.",
             "loads per expiry: loader runs in the expiries' cycles over the expiries (the first fill, before "
             "the first expiry, is none's); max: the most in one cycle.",
             f"waiting readers: the calls that began less than the loader's {load_ms:.0f} ms after an expiry; "
             "without a lease each of them runs the loader itself."]
    rep.table("Stampede: a hot key expiring under 64 readers in 4 processes",
              ["arm", "expiries", "loads / expiry", "max loads", "wait p50", "wait p99", "wait max",
               "timeouts", "errors"], rows, "stampede.csv", csv_rows, notes=notes)
    if target_rows:
        rep.table("Targets of the stampede benchmark", ["target", "measured", "goal", "result"], target_rows,
                  "stampede_targets.csv", target_csv)
    return targets
