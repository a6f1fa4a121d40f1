#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summarises one run of memshard's benchmarks.

Reads the Google Benchmark JSON files that bench/run.sh wrote into a results
directory (locate.json, balance.json, resize.json, properties.json,
hit_rate.json, client.json, and callgrind/*.json + *.callgrind and
callgrind_client/client.callgrind.<n> when instruction counts were taken), and
charts.txt or plot.log from bench/plot.py, prints one report on stdout, and
writes it to summary.txt with one CSV file per table.

Usage: report.py RESULTS_DIR
"""

import csv
import glob
import json
import math
import os
import re
import sys

# Targets the lookup benchmarks are held to.
TARGET_VS_LIBMEMCACHED = 0.60  # ketama-md5-weighted at N=10 / libmemcached KETAMA_WEIGHTED
TARGET_SCALING = 1.30  # ketama-md5-weighted at N=1000 / at N=10
TARGET_SEARCH_SHARE = 0.10  # ring search alone / full md5 lookup
TARGET_BUILD_MS = 50.0  # building a 1000-server weighted ring
# Targets the client benchmark is held to (time ratios, ShardedClient / libmemcached).
TARGET_CLIENT_SINGLE = 1.03  # single get / set against libmemcached on the same server
TARGET_CLIENT_MULTI = 1.00  # get_multi of 100 keys against (c), libmemcached's multi-server mget + fetch_result
TARGET_CLIENT_VS_TWEMPROXY = 0.50  # ShardedClient single get / the same get through twemproxy
# Target the hit-rate benchmark is held to.
TARGET_HIT_RATE_PP = 2.0  # ketama-md5-weighted: |mean hit rate over the trials - n/(n+m)|, percentage points

KETAMA = "ketama-md5-weighted"
LM_KETAMA = "libmemcached:ketama-weighted"
LM_MODULA = "libmemcached:modula"
OAAT = "modulo-one_at_a_time"


class Report:
    """Collects the text report and writes one CSV per table."""

    def __init__(self, results_dir):
        self.results_dir = results_dir
        self.lines = []

    def say(self, text=""):
        self.lines.append(text)

    def table(self, title, headers, rows, csv_name, csv_rows, notes=()):
        """Prints an aligned table (text in `rows`) and writes `csv_rows` (raw values)."""
        self.say(title)
        self.say("=" * len(title))
        widths = [len(h) for h in headers]
        for row in rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))

        def fmt(cells):
            out = []
            for i, cell in enumerate(cells):
                # The first column is text (left); the others are numbers (right).
                out.append(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]))
            return "  ".join(out).rstrip()

        self.say(fmt(headers))
        self.say("  ".join("-" * w for w in widths))
        for row in rows:
            self.say(fmt(row))
        for note in notes:
            self.say(note)
        self.say()
        path = os.path.join(self.results_dir, csv_name)
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(csv_rows[0].keys()) if csv_rows else headers)
            for row in csv_rows:
                writer.writerow(list(row.values()))

    def text(self):
        return "\n".join(self.lines) + "\n"


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def rows_of(doc):
    """The benchmark rows to use: medians when the run had repetitions."""
    if doc is None:
        return []
    rows = doc.get("benchmarks", [])
    medians = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    if medians:
        return medians
    return [r for r in rows if r.get("run_type", "iteration") == "iteration"]


def failed(rows):
    return [r for r in rows if r.get("error_occurred")]


def ns_per_item(row):
    rate = row.get("items_per_second")
    return 1e9 / rate if rate else float("nan")


def to_ms(row):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[row.get("time_unit", "ns")]
    return row["cpu_time"] * scale


def family(row):
    """BM_Locate<KetamaMd5Weighted>/servers:10 -> BM_Locate."""
    return re.split(r"[</]", row.get("run_name", row["name"]))[0]


def pct(x, digits=2):
    return f"{100 * x:.{digits}f}%"


def share(x):
    """A percentage with enough digits for small shares (0.0100%, 0.105%, 9.11%)."""
    if x != 0 and abs(x) < 0.001:
        return pct(x, 4)
    if x != 0 and abs(x) < 0.01:
        return pct(x, 3)
    return pct(x)


def count(x):
    return f"{int(round(x)):,}"


def label_of(row):
    """The placement label of a row: its label, else the template argument."""
    return row.get("label") or row.get("run_name", row["name"]).split("/")[0]


def ratio(x):
    return f"{x:.2f}x"


def verdict(ok):
    return "met" if ok else "MISSED"


def callgrind_counts(results_dir):
    """{(label, servers, family): instructions per item} from callgrind/*.callgrind."""
    counts = {}
    for out in sorted(glob.glob(os.path.join(results_dir, "callgrind", "*.callgrind"))):
        doc = load(out[: -len(".callgrind")] + ".json")
        if doc is None:
            continue
        total = None
        with open(out) as handle:
            for line in handle:
                if line.startswith("totals:") or line.startswith("summary:"):
                    total = int(line.split()[1])
        rows = rows_of(doc)
        if total is None or not rows:
            continue
        row = rows[0]
        items = row.get("iterations", 1) * row.get("keys_per_pass", 4096)
        counts[(row.get("label", ""), int(row.get("servers", 0)), family(row))] = total / items
    return counts


def lookup_section(rep, doc, counts):
    rows = rows_of(doc)
    if not rows:
        rep.say("Lookup cost: no results (locate.json missing)")
        rep.say()
        return []
    repetitions = doc.get("context", {}).get("memshard_repetitions") if any(
        r.get("aggregate_name") == "median" for r in doc["benchmarks"]) else None
    runs = f"median of {repetitions} runs" if repetitions else "one run"
    by_key = {}
    for r in rows:
        if not r.get("error_occurred"):
            by_key[(family(r), r.get("label", ""), int(r.get("servers", 0)))] = r
    locate = {(label, n): ns_per_item(r) for (fam, label, n), r in by_key.items()
              if fam in ("BM_Locate", "BM_LocateLibmemcached")}
    search = {n: ns_per_item(r) for (fam, label, n), r in by_key.items() if fam == "BM_SearchOnly"}
    many = {n: ns_per_item(r) for (fam, label, n), r in by_key.items() if fam == "BM_LocateMany"}
    hash_only = {label: ns_per_item(r) for (fam, label, n), r in by_key.items() if fam == "BM_HashOnly"}
    build = {(label, n): to_ms(r) for (fam, label, n), r in by_key.items()
             if fam in ("BM_Build", "BM_BuildLibmemcached")}
    sizes = sorted({n for (_, n) in locate})

    def ns(v, digits=1):
        return f"{v:.{digits}f}" if v is not None else "-"

    # memshard's placements.
    columns = ["modulo-crc32", OAAT, "ring-crc32", KETAMA, "any:" + KETAMA]
    headers = ["servers", "modulo-crc32", "modulo-oaat", "ring-crc32", "ketama-md5",
               "ketama-md5 (AnyLocator)", "search only", "search / full"]
    text_rows, csv_rows = [], []
    for n in sizes:
        full, alone = locate.get((KETAMA, n)), search.get(n)
        share = alone / full if full and alone else None
        text_rows.append([str(n)] + [ns(locate.get((c, n))) for c in columns]
                         + [ns(alone, 2), pct(share, 1) if share is not None else "-"])
        record = {"servers": n}
        record.update({c + " ns": locate.get((c, n), "") for c in columns})
        record.update({"ketama-md5 search only ns": alone if alone is not None else "",
                       "search/full": share if share is not None else ""})
        csv_rows.append(record)
    rep.table(f"Lookup cost, memshard: ns per lookup ({runs}; 4096 keys of 10-40 bytes)",
              headers, text_rows, "lookup.csv", csv_rows,
              notes=["modulo-oaat = one_at_a_time % N (libmemcached MODULA); ketama-md5 = "
                     "profiles::libmemcached_ketama_weighted (libketama ring, md5 keys);",
                     "AnyLocator = the same ring from make_locator(); search only = "
                     "locate_hash() on pre-hashed keys; search / full = search only / ketama-md5."])

    # Against libmemcached.
    text_rows, csv_rows = [], []
    for n in sizes:
        k, lk = locate.get((KETAMA, n)), locate.get((LM_KETAMA, n))
        m, lm = locate.get((OAAT, n)), locate.get((LM_MODULA, n))
        b = many.get(n)
        text_rows.append([str(n), ns(k), ns(lk) if lk else "n/a", ratio(k / lk) if k and lk else "-",
                          ns(b), ratio(b / lk) if b and lk else "-",
                          ns(m), ns(lm) if lm else "n/a", ratio(m / lm) if m and lm else "-"])
        csv_rows.append({"servers": n, "memshard ketama-md5 ns": k if k else "",
                         "libmemcached KETAMA_WEIGHTED ns": lk if lk else "",
                         "ketama ratio": k / lk if k and lk else "",
                         "memshard ketama-md5 locate_many ns": b if b else "",
                         "locate_many ratio": b / lk if b and lk else "",
                         "memshard modulo-oaat ns": m if m else "",
                         "libmemcached MODULA ns": lm if lm else "",
                         "modula ratio": m / lm if m and lm else ""})
    rep.table("Lookup cost against libmemcached's memcached_generate_hash(): ns per lookup, same run",
              ["servers", "memshard ketama-md5", "libmemcached KETAMA_WEIGHTED", "ratio",
               "locate_many", "ratio", "memshard modulo-oaat", "libmemcached MODULA", "ratio"],
              text_rows, "versus_libmemcached.csv", csv_rows,
              notes=["ratio = memshard / libmemcached: below 1.00x memshard is faster. Same servers, "
                     "same keys; before timing, every key was checked",
                     "to land on the same server in both.",
                     "libmemcached asserts above 100 servers in its consistent distributions: n/a at 1000.",
                     "locate_many = the same ring placing all 4096 keys in one call (md5 of four keys at "
                     "a time), as multi-gets do; the lookup target is judged on locate(), key by key."])

    # Where a ketama lookup's time goes.
    k10, lk10 = locate.get((KETAMA, 10)), locate.get((LM_KETAMA, 10))
    mine, theirs = hash_only.get("memshard md5"), hash_only.get("libhashkit md5")
    if k10 and lk10 and mine:
        text_rows = [["md5 of the key", ns(mine), ns(theirs) if theirs else "-"],
                     ["everything else (ring search, calls)", ns(k10 - mine),
                      ns(lk10 - theirs) if theirs else "-"],
                     ["full lookup", ns(k10), ns(lk10)]]
        csv_rows = [{"part": r[0], "memshard ns": r[1], "libmemcached ns": r[2]} for r in text_rows]
        rep.table("Where a ketama-md5 lookup's time goes at 10 servers: ns per lookup",
                  ["part", "memshard", "libmemcached"], text_rows, "lookup_parts.csv", csv_rows,
                  notes=["libmemcached's md5 is libhashkit_md5(), which KETAMA_WEIGHTED uses for keys."])

    # Ring build.
    text_rows, csv_rows = [], []
    for n in sorted({n for (_, n) in build}):
        mine_ms, theirs_ms = build.get((KETAMA, n)), build.get((LM_KETAMA, n))
        text_rows.append([str(n), ns(mine_ms, 3), ns(theirs_ms, 3) if theirs_ms is not None else "n/a",
                          ratio(mine_ms / theirs_ms) if mine_ms and theirs_ms else "-"])
        csv_rows.append({"servers": n, "memshard ms": mine_ms if mine_ms is not None else "",
                         "libmemcached ms": theirs_ms if theirs_ms is not None else ""})
    rep.table("Ring build: ms to build a weighted ketama ring (160 md5 x4 points per server)",
              ["servers", "memshard", "libmemcached", "memshard / libmemcached"],
              text_rows, "build.csv", csv_rows,
              notes=["libmemcached: memcached_create + KETAMA_WEIGHTED + memcached_server_push "
                     "(which builds its continuum)."])

    # Instruction counts.
    if counts:
        text_rows, csv_rows = [], []
        order = sorted(counts, key=lambda k: (k[2] == "BM_SearchOnly", k[0], k[1]))
        for label, n, fam in order:
            what = f"{label}{' search only' if fam == 'BM_SearchOnly' else ''}"
            text_rows.append([what, str(n), f"{counts[(label, n, fam)]:.1f}"])
            csv_rows.append({"placement": label, "servers": n, "kind": fam,
                             "instructions per lookup": round(counts[(label, n, fam)], 2)})
        ik = counts.get((KETAMA, 10, "BM_Locate"))
        ilk = counts.get((LM_KETAMA, 10, "BM_LocateLibmemcached"))
        notes = ["valgrind --tool=callgrind over exactly the timed passes: repeatable on a noisy "
                 "machine, unlike time."]
        if ik and ilk:
            notes.append(f"memshard ketama-md5 / libmemcached KETAMA_WEIGHTED at 10 servers: "
                         f"{ik / ilk:.3f}x the instructions.")
        rep.table("Instructions per lookup (callgrind)", ["placement", "servers", "instructions"],
                  text_rows, "instructions.csv", csv_rows, notes=notes)
    return [locate, search, build, counts]


def targets_section(rep, data):
    """Evaluates the targets; returns [(name, met)] for the real targets."""
    if not data:
        return []
    locate, search, build, counts = data
    lines = []  # (name, measured, goal, met, value, is_target)
    k10, lm10 = locate.get((KETAMA, 10)), locate.get((LM_KETAMA, 10))
    if k10 and lm10:
        r = k10 / lm10
        lines.append(("ketama-md5-weighted lookup at N=10 / libmemcached KETAMA_WEIGHTED",
                      f"{r:.3f}x", f"<= {TARGET_VS_LIBMEMCACHED:.2f}x", r <= TARGET_VS_LIBMEMCACHED, r, True))
    ik = counts.get((KETAMA, 10, "BM_Locate"))
    ilk = counts.get((LM_KETAMA, 10, "BM_LocateLibmemcached"))
    if ik and ilk:
        r = ik / ilk
        lines.append(("  the same in instructions (callgrind, for reference)", f"{r:.3f}x",
                      f"<= {TARGET_VS_LIBMEMCACHED:.2f}x", r <= TARGET_VS_LIBMEMCACHED, r, False))
    k1000 = locate.get((KETAMA, 1000))
    if k10 and k1000:
        r = k1000 / k10
        lines.append(("ketama-md5-weighted lookup at N=1000 / at N=10", f"{r:.3f}x",
                      f"<= {TARGET_SCALING:.2f}x", r <= TARGET_SCALING, r, True))
    shares = {n: search[n] / locate[(KETAMA, n)] for n in search if locate.get((KETAMA, n))}
    if shares:
        worst = max(shares, key=shares.get)
        r = shares[worst]
        lines.append((f"ring search alone / full md5 lookup (worst N: {worst})", pct(r, 1),
                      f"<= {pct(TARGET_SEARCH_SHARE, 0)}", r <= TARGET_SEARCH_SHARE, r, True))
    b = build.get((KETAMA, 1000))
    if b is not None:
        lines.append(("build a 1000-server weighted ring", f"{b:.1f} ms", f"< {TARGET_BUILD_MS:.0f} ms",
                      b < TARGET_BUILD_MS, b, True))
    rep.table("Targets (all from this run)", ["target", "measured", "goal", "result"],
              [[t, m, g, verdict(ok) if real else ("below" if ok else "above")]
               for t, m, g, ok, _, real in lines],
              "targets.csv",
              [{"target": t.strip(), "measured": v, "goal": g, "met": ok}
               for t, _, g, ok, v, real in lines if real])
    return [(t, ok) for t, _, _, ok, _, real in lines if real]


def balance_section(rep, doc):
    rows = rows_of(doc)
    if not rows:
        rep.say("Balance: no results (balance.json missing)")
        rep.say()
        return
    def key(r):
        fam = family(r)
        order = {"BM_BalanceKetamaMd5": 0, "BM_BalanceKetamaMd5Weighted": 1, "BM_BalanceModuloCrc32": 2}
        return (order.get(fam, 3), int(r.get("servers", 0)), int(r.get("points_per_server", 0)))
    text_rows, csv_rows = [], []
    keys = None
    weighted_points, modulo_noise = {}, {}
    for r in sorted(rows, key=key):
        if r.get("error_occurred"):
            text_rows.append([r["name"], "error: " + r.get("error_message", "")] + [""] * 8)
            continue
        keys = int(r.get("keys", 0))
        fam = family(r)
        name = {"BM_BalanceKetamaMd5": "ketama-md5 (fixed points)",
                "BM_BalanceKetamaMd5Weighted": "ketama-md5-weighted (libketama)",
                "BM_BalanceModuloCrc32": "modulo-crc32"}.get(fam, fam)
        points = r.get("points_per_server")
        n = int(r["servers"])
        if fam == "BM_BalanceKetamaMd5Weighted" and points:
            weighted_points[n] = int(points)
        if fam == "BM_BalanceModuloCrc32":
            modulo_noise[n] = r["peak_over_mean"]
        exact_peak = r.get("ring_peak_over_mean")
        text_rows.append([name, f"{n:,}", str(int(points)) if points else "-",
                          f"{keys / n:,.0f}", f"{r['peak_over_mean']:.3f}", f"{r['min_over_mean']:.3f}",
                          f"{r['cv']:.4f}", f"{exact_peak:.3f}" if exact_peak is not None else "-",
                          f"{r['ring_cv']:.4f}", f"{r['sampling_cv']:.4f}"])
        csv_rows.append({"placement": name, "servers": n,
                         "points per server": int(points) if points else "",
                         "keys per server": keys / n,
                         "peak/mean": r["peak_over_mean"], "min/mean": r["min_over_mean"], "cv": r["cv"],
                         "ring peak/mean (exact)": exact_peak if exact_peak is not None else "",
                         "ring min/mean (exact)": r.get("ring_min_over_mean", ""),
                         "ring cv (exact)": r["ring_cv"], "sampling cv": r["sampling_cv"]})
    notes = ["peak/mean: the busiest server's load over the mean (1.000 is perfect); "
             "cv: stddev/mean of per-server key counts.",
             "ring peak/mean, ring cv: the same over the exact shares of the 2^32 hash space (no key "
             "sampling): the balance an endless stream of keys sees.",
             "sampling cv: what ideal random placement of these keys shows.",
             "One point per server leaves some servers with several times the mean load: "
             "that is why rings use virtual nodes."]
    if modulo_noise:
        top = max(modulo_noise)
        notes.append(f"At N={top:,} there are {keys / top:,.0f} keys per server: the key columns are "
                     f"mostly sampling noise there (modulo's exact shares are even, yet its keys show "
                     f"peak/mean {modulo_noise[top]:.3f}); read the exact columns.")
    odd = {}
    for n, pts in sorted(weighted_points.items()):
        if pts != 160:
            odd.setdefault(pts, []).append(f"{n:,}")
    if odd:
        notes.append("ketama-md5-weighted gets " + "; ".join(
            f"{pts} points per server at N={' and '.join(ns)}" for pts, ns in odd.items())
            + " (libketama's float32 point count), 160 otherwise.")
    rep.table(f"Balance: per-server share of {keys:,} keys" if keys else "Balance",
              ["placement", "servers", "points/server", "keys/server", "peak/mean", "min/mean", "cv",
               "ring peak/mean (exact)", "ring cv (exact)", "sampling cv"], text_rows, "balance.csv",
              csv_rows, notes=notes)


def movement_section(rep, doc):
    rows = rows_of(doc)
    if not rows:
        rep.say("Movement: no results (resize.json missing)")
        rep.say()
        return
    table = {}
    keys = None
    for r in rows:
        if r.get("error_occurred"):
            continue
        keys = int(r.get("keys", 0))
        op = "add" if family(r) == "BM_AddOne" else "remove"
        table.setdefault((r.get("label", ""), int(r["servers"])), {})[op] = r
    order = ["modulo-crc32", "ring-crc32", KETAMA]
    text_rows, csv_rows = [], []
    recounted = {}  # label -> resizes where every server's point count changed
    for (label, n) in sorted(table, key=lambda k: (order.index(k[0]) if k[0] in order else 9, k[1])):
        add, rem = table[(label, n)].get("add"), table[(label, n)].get("remove")
        def cells(r):
            if r is None:
                return ["-", "-", "-"]
            return [share(r["moved"]), share(r["theory"]), share(r["needless"])]
        points = "-"
        if add is not None and "points_before" in add:
            points = f"{add['points_before']:.0f} -> {add['points_after']:.0f}"
            if rem is not None and "points_after" in rem:
                points += f" / {rem['points_after']:.0f}"
            changed = {f"{n:,} -> {n + 1:,}": add} if round(add["points_before"]) != round(add["points_after"]) else {}
            if rem is not None and round(rem["points_before"]) != round(rem["points_after"]):
                changed[f"{n:,} -> {n - 1:,}"] = rem
            for what, r in changed.items():
                recounted.setdefault(label, []).append(
                    f"{what} ({r['points_before']:.0f} -> {r['points_after']:.0f} points, "
                    f"{share(r['needless'])} needless)")
        text_rows.append([label, f"{n:,}"] + cells(add) + cells(rem) + [points])
        csv_rows.append({"placement": label, "servers": n,
                         "add moved": add["moved"] if add else "", "add theory": add["theory"] if add else "",
                         "add needless": add["needless"] if add else "",
                         "remove moved": rem["moved"] if rem else "",
                         "remove theory": rem["theory"] if rem else "",
                         "remove needless": rem["needless"] if rem else "",
                         "points/server before": add.get("points_before", "") if add else "",
                         "points/server after add": add.get("points_after", "") if add else "",
                         "points/server after remove": rem.get("points_after", "") if rem else ""})
    rep.table(f"Movement on resize: share of {keys:,} keys that change server" if keys else "Movement",
              ["placement", "N", "add: moved", "theory", "needless", "remove last: moved", "theory",
               "needless", "points N -> N+1 / N-1"], text_rows, "movement.csv", csv_rows,
              notes=["theory: modulo N/(N+1) on add and (N-1)/N on remove; a ring 1/(N+1) on add and "
                     "1/N on remove.",
                     "needless: keys that moved between two servers present before and after (a ring "
                     "should move none).",
                     "A ring's measured share differs from theory by the new (or removed) server's "
                     "actual share of the ring."]
              + [f"{label}: libketama's float32 point count changes every server's points at "
                 + ", ".join(where) + ", so keys move needlessly." for label, where in recounted.items()])


FIXED160 = "ketama-md5 160 points"
PROPERTY_ORDER = ["modulo-crc32", FIXED160, KETAMA]


def properties_section(rep, doc):
    """Karger et al.'s properties: a summary, then monotonicity, then spread and load."""
    rows = [r for r in rows_of(doc) if not r.get("error_occurred")]
    if not rows:
        rep.say("Properties of a distribution: no results (properties.json missing)")
        rep.say()
        return
    keys = int(rows[0].get("keys", 0))
    mono = [r for r in rows if family(r) == "BM_Monotonicity"]
    views = [r for r in rows if family(r) in ("BM_ViewsRolling", "BM_ViewsRandom")]
    labels = [l for l in PROPERTY_ORDER if any(label_of(r) == l for r in rows)]
    labels += sorted({label_of(r) for r in rows} - set(labels))

    def order(r):
        return labels.index(label_of(r))

    def view_name(r):
        n, v = int(r["servers"]), int(r["views"])
        if family(r) == "BM_ViewsRolling":
            return f"rolling {n - v + 1:,} -> {n:,}"
        return f"random, >= half of {n:,}"

    # At a glance: one number per property and placement.
    glance_n = 100
    random_ref = {label_of(r): r for r in views
                  if family(r) == "BM_ViewsRandom" and int(r["servers"]) == glance_n}
    text_rows, csv_rows = [], []
    for label in labels:
        mine = [r for r in mono if label_of(r) == label]
        balance = next((r["peak_over_mean"] for r in mine if int(r["servers"]) == glance_n), None)
        violations = sum(r["violations"] for r in mine)
        bad = sum(1 for r in mine if r["violations"] > 0)
        v = random_ref.get(label)
        text_rows.append([label, f"{balance:.3f}" if balance is not None else "-",
                          f"{count(violations)} ({bad} of {len(mine)} adds)" if mine else "-",
                          f"{v['spread_mean']:.2f} / {int(v['spread_max'])}" if v else "-",
                          f"{v['load_max']:.2f}x ({v['view_load_max']:.2f}x)" if v else "-"])
        csv_rows.append({"placement": label, f"balance peak/mean N={glance_n}": balance if balance else "",
                         "monotonicity violations": violations, "adds with violations": bad, "adds": len(mine),
                         "spread mean": v["spread_mean"] if v else "", "spread max": v["spread_max"] if v else "",
                         "load max / (K/N)": v["load_max"] if v else "",
                         "one view's max / (K/N)": v["view_load_max"] if v else ""})
    rep.table(f"Properties of a distribution (Karger et al. 1997), modulo against ketama: {keys:,} keys",
              ["placement", f"balance (N={glance_n})", "monotonicity: violations", "spread: mean / max",
               "load: max (one view)"], text_rows, "properties.csv", csv_rows,
              notes=["balance: the busiest server's keys / the mean, one client that knows all N servers "
                     "(1.000 is ideal; by points per server and up to N=10,000 in the Balance table).",
                     "monotonicity: when servers are added, a key may move only from an old server to a "
                     "new one; a violation is a key that moves from one old server to another (0 is "
                     "ideal), counted in every add below.",
                     "spread: V clients (views) each know a different subset of the servers; a key's "
                     "spread is the number of distinct servers it is placed on across the V views "
                     "(1 is ideal, V the worst).",
                     "load: the number of distinct keys one server is given across all V views, over "
                     "K/N, the single-view mean when a client knows all N servers (1.00x is ideal); "
                     "in brackets: the busiest server of any one view alone.",
                     f"spread and load here: {glance_n} servers, 10 views of random subsets (see below).",
                     f"{FIXED160}: the libketama ring (md5 x4 points \"host-i\") with a fixed count; "
                     f"{KETAMA}: the same ring with libketama's float32 point count "
                     "(profiles::libmemcached_ketama_weighted)."])

    # Monotonicity.
    text_rows, csv_rows = [], []
    for r in sorted(mono, key=lambda r: (order(r), int(r["servers"]), int(r["added"]))):
        n, m = int(r["servers"]), int(r["added"])
        points = (f"{r['points_before']:.0f} -> {r['points_after']:.0f}" if "points_before" in r else "-")
        text_rows.append([label_of(r), f"{n:,} -> {n + m:,}", share(r["moved"]), share(r["theory"]),
                          share(r["to_new"]), count(r["violations"]), share(r["violations"] / keys), points])
        csv_rows.append({"placement": label_of(r), "servers before": n, "servers added": m, "moved": r["moved"],
                         "theory": r["theory"], "moved to new servers": r["to_new"],
                         "violations": int(r["violations"]), "violations share": r["violations"] / keys,
                         "points/server before": r.get("points_before", ""),
                         "points/server after": r.get("points_after", "")})
    verdicts = []
    for label in labels:
        mine = [r for r in mono if label_of(r) == label]
        if not mine:
            continue
        total = sum(r["violations"] for r in mine)
        bad = [r for r in mine if r["violations"] > 0]
        sizes = sorted({int(r["servers"]) for r in mine})
        if not bad:
            verdicts.append(f"{label}: violations: 0 in all {len(mine)} adds (N = {sizes[0]:,} .. {sizes[-1]:,}, "
                            "counted key by key): monotone.")
        else:
            where = [f"{int(r['servers']):,} -> {int(r['servers']) + int(r['added']):,}" for r in bad]
            because = ""
            if all("points_before" in r and round(r["points_before"]) != round(r["points_after"]) for r in bad):
                because = "; each time the float32 point count changed every server's points"
            verdicts.append(f"{label}: violations: {count(total)} in {len(bad)} of {len(mine)} adds"
                            + (f" ({', '.join(where)}{because})" if len(bad) < len(mine) else "")
                            + ": not monotone.")
    rep.table(f"Monotonicity: servers added to a list of N, {keys:,} keys",
              ["placement", "servers", "moved", "theory", "to new servers", "violations", "of keys",
               "points/server"], text_rows, "monotonicity.csv", csv_rows,
              notes=verdicts + ["moved = to new servers + violations; theory: a ring m/(n+m), modulo "
                                "1 - gcd(n,m)/(n+m) (keys stay where h % n == h % (n+m)).",
                                "Modulo is monotone only when the list doubles (h % 2n is h % n or h % n + n); "
                                "a ring is monotone whenever the old servers keep their points."])

    # Spread and load under inconsistent views.
    text_rows, csv_rows = [], []
    for r in sorted(views, key=lambda r: (family(r) != "BM_ViewsRolling", int(r["servers"]), order(r))):
        lo, hi = int(r["view_min"]), int(r["view_max"])
        text_rows.append([view_name(r), label_of(r), str(int(r["views"])), f"{lo:,} .. {hi:,}",
                          f"{r['spread_mean']:.2f}", str(int(r["spread_max"])), f"{r['load_mean']:.2f}x",
                          f"{r['load_max']:.2f}x", f"{r['view_load_max']:.2f}x"])
        csv_rows.append({"views": view_name(r), "placement": label_of(r), "servers": int(r["servers"]),
                         "view count": int(r["views"]), "servers per view min": lo, "servers per view max": hi,
                         "spread mean": r["spread_mean"], "spread max": r["spread_max"],
                         "load mean / (K/N)": r["load_mean"], "load max / (K/N)": r["load_max"],
                         "one view's max / (K/N)": r["view_load_max"]})
    rep.table(f"Spread and load: V clients with different server lists, {keys:,} keys",
              ["views", "placement", "V", "servers per view", "spread mean", "max", "load mean", "load max",
               "one view's max"], text_rows, "views.csv", csv_rows,
              notes=["rolling a -> b: a deploy that adds servers one at a time; view v knows the first a + v "
                     "servers (the last view knows all b).",
                     "random, >= half of N: view v knows a random subset of the N servers, its size drawn "
                     "uniformly from N/2 .. N (fixed seed), in list order.",
                     "spread: distinct servers one key is placed on across the V views (mean and max over "
                     "the keys; 1 is ideal, V the worst).",
                     "load: distinct keys one server is given across all V views, / (K/N) with N every server "
                     "(mean and max over the servers; load mean = spread mean).",
                     "one view's max: the busiest server within any one view, / (K/N): the cost of a shorter "
                     "server list alone; load max above it is what the views' disagreement adds."])


def mean_and_se(values):
    """The mean and the standard error of the mean (None for fewer than 2 values)."""
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, None
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance / len(values))


def pp(x, digits=2):
    """A difference of two rates in percentage points."""
    return f"{100 * x:.{digits}f} pp"


def hit_rate_section(rep, doc):
    """The hit-rate table (mean over trials); returns [(target, met)] and writes hit_rate_targets.csv."""
    rows = rows_of(doc)
    if doc is None:
        rep.say("Hit rate on real memcached: no results (hit_rate.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    trials = int(context.get("memshard_hit_trials", 1))
    order = ["modulo-crc32", "ring-crc32", KETAMA]
    groups = {}  # (op, placement) + servers -> {"ok": [rows], "errors": [rows]}
    endpoints = {}  # trial -> its servers
    for r in rows:
        parts = r["run_name"].split("/")
        op, label = parts[1], parts[2]
        trial = next((int(p[len("trial:"):]) for p in parts if p.startswith("trial:")), 0)
        if r.get("error_occurred"):
            group_key = (op, label, parts[3] if op == "add" else "")
            groups.setdefault(group_key, {"ok": [], "errors": [], "before": None, "after": None})
            groups[group_key]["errors"].append((trial, r.get("error_message", "")))
            continue
        group_key = (op, label, f"added:{int(r['servers_after']) - int(r['servers_before'])}" if op == "add" else "")
        group = groups.setdefault(group_key, {"ok": [], "errors": [], "before": None, "after": None})
        group["ok"].append((trial, r))
        group["before"], group["after"] = int(r["servers_before"]), int(r["servers_after"])
        if r.get("label"):
            endpoints[trial] = r["label"]

    def sort_key(item):
        (op, label, added), group = item
        return (op != "add", group["after"] or 0, added, order.index(label) if label in order else 9)

    text_rows, csv_rows, targets, target_rows, target_csv = [], [], [], [], []
    for (op, label, _), group in sorted(groups.items(), key=sort_key):
        ok = sorted(group["ok"], key=lambda t: t[0])
        if not ok:
            text_rows.append([label, op, "error: " + group["errors"][0][1], "", "", "", "", "", "", "", ""])
            continue
        before, after = group["before"], group["after"]
        what = f"{before} -> {after}" + (f" (+{after - before})" if op == "add" else " (first gone)")
        hits = [r["hit_rate"] for _, r in ok]
        mean, se = mean_and_se(hits)
        predicted = sum(r["predicted"] for _, r in ok) / len(ok)
        theory = ok[0][1]["theory"]
        baseline = min(r["baseline"] for _, r in ok)
        wrong = sum(int(r["wrong_values"]) for _, r in ok)
        counted = f"{len(ok)}" if len(ok) == trials else f"{len(ok)} of {trials}"
        text_rows.append([label, what, counted, pct(mean), f"{pct(min(hits))}..{pct(max(hits))}",
                          pp(se) if se is not None else "-", pct(predicted), pct(theory),
                          f"{100 * (mean - theory):+.2f} pp", pct(baseline, 1), str(wrong)])
        base = {"placement": label, "resize": op, "servers before": before, "servers after": after}
        for trial, r in ok:
            csv_rows.append({**base, "trial": trial, "hit rate": r["hit_rate"], "predicted": r["predicted"],
                             "theory": r["theory"], "baseline": r["baseline"],
                             "wrong values": int(r["wrong_values"]), "trials": "", "hit rate min": "",
                             "hit rate max": "", "standard error": "", "servers": r.get("label", "")})
        csv_rows.append({**base, "trial": "mean", "hit rate": mean, "predicted": predicted, "theory": theory,
                         "baseline": baseline, "wrong values": wrong, "trials": len(ok),
                         "hit rate min": min(hits), "hit rate max": max(hits),
                         "standard error": se if se is not None else "", "servers": ""})
        if label == KETAMA and op == "add":
            met = abs(mean - theory) <= TARGET_HIT_RATE_PP / 100
            name = f"{KETAMA} hit rate {what}: mean of {len(ok)} vs n/(n+m)"
            targets.append((name, met))
            target_rows.append([what, counted, pct(mean), pct(theory), f"{100 * (mean - theory):+.2f} pp",
                                pp(se) if se is not None else "- (1 trial)",
                                f"within {TARGET_HIT_RATE_PP:g} pp", verdict(met)])
            target_csv.append({"placement": KETAMA, "servers before": before, "servers after": after,
                               "trials": len(ok), "mean hit rate": mean, "theory": theory,
                               "mean - theory": mean - theory, "standard error": se if se is not None else "",
                               "goal (pp)": TARGET_HIT_RATE_PP, "met": met})
    source = context.get("memshard_server_source", "?")
    version = context.get("memshard_memcached_version", "")
    keys = context.get("memshard_keys", "?")
    if source == "local":
        how = (f"{trials} trials, each on fresh local memcached processes ({version or 'memcached'}): new kernel "
               "ports, so new host:port point strings and a new ring, and its own keys. Every trial counts: "
               "hit rate is the mean over the trials, min..max their range, SE the standard error of the "
               "mean (sample standard deviation / sqrt(trials)).")
    else:
        how = (f"{trials} trial: {source} fixes the servers' identities, so there is one ring and no "
               "standard error; one ring's hit rate is one draw and can sit ~3 pp off the theory.")
    notes = [how]
    notes += [f"servers of trial {t}: {endpoints[t]}" for t in sorted(endpoints)]
    notes += ["n -> n+m (+m): fill the first n servers through the n-server placement (once per trial and "
              "placement), read every key through the placement of the first n+m (multi-get; a read never "
              "stores).",
              "n -> n-1 (first gone): the same fill, then the first server is dropped from the list; read "
              "through the placement of the other n-1.",
              "predicted: keys both placements put on the same server (the hit rate if every stored key "
              "survives; mean over the trials); theory: add m to n: a ring n/(n+m), modulo gcd(n,m)/(n+m) "
              "(adding as many servers as there were keeps half); remove one of n: a ring (n-1)/n, "
              "modulo 1/n.",
              "vs theory: mean - theory. before resize: the lowest hit rate through the placement that "
              "stored (must be 100%); wrong: values read back that were not the key's, over all trials.",
              "A ring's hit rate varies from ring to ring (it is the share of the hash space the servers "
              "keep); modulo does not depend on the servers' names, so its spread is only the key sample."]
    for (op, label, _), group in sorted(groups.items(), key=sort_key):
        for trial, message in group["errors"]:
            notes.append(f"not counted: {label} {op} trial {trial}: error: {message}")
    rep.table(f"Hit rate after resize on real memcached ({trials} trial{'s' if trials != 1 else ''} x {keys} "
              f"keys)",
              ["placement", "servers", "trials", "hit rate", "min..max", "SE", "predicted", "theory",
               "vs theory", "before resize", "wrong"],
              text_rows, "hit_rate.csv", csv_rows, notes=notes)
    if target_rows:
        rep.table(f"Target: {KETAMA} (160 points per server), mean hit rate within {TARGET_HIT_RATE_PP:g} "
                  f"pp of n/(n+m)",
                  ["servers", "trials", "mean", "theory", "mean - theory", "SE", "goal", "result"],
                  target_rows, "hit_rate_targets.csv", target_csv,
                  notes=["The mean over the trials is judged, not any one ring; SE, its standard error, is "
                         "how far the mean itself moves from run to run (new rings each run)."])
    return targets


# The client benchmark's contenders of get and set: (counter prefix, label).
CLIENT_SINGLE = [
    ("ketama", "(a)  ShardedClient ketama-md5-weighted, keys on every server"),
    ("modulo", "(a)  ShardedClient modulo-crc32, keys on every server"),
    ("ketama_same", "(a') ShardedClient ketama-md5-weighted, keys on (b)'s server"),
    ("modulo_same", "(a') ShardedClient modulo-crc32, keys on (b)'s server"),
    ("libmemcached_all", "(c)  libmemcached KETAMA_WEIGHTED, every server in one memcached_st"),
    ("twemproxy", "(d)  libmemcached through twemproxy (nutcracker), keys on every server"),
    ("libmemcached", "(b)  libmemcached, a memcached_st holding (b)'s server alone"),
]
CLIENT_MULTI = [
    ("ketama", "(a)  ShardedClient ketama-md5-weighted get_multi, keys on every server"),
    ("ketama_visit", "(a)  ShardedClient ketama-md5-weighted visit_multi, keys on every server"),
    ("ketama_per_server", "(a)  ShardedClient ketama-md5-weighted get_multi, MultiGetMode::kPerServer"),
    ("modulo", "(a)  ShardedClient modulo-crc32 get_multi, keys on every server"),
    ("ketama_same", "(a') ShardedClient ketama-md5-weighted get_multi, keys on (b)'s server"),
    ("ketama_same_visit", "(a') ShardedClient ketama-md5-weighted visit_multi, keys on (b)'s server"),
    ("modulo_same", "(a') ShardedClient modulo-crc32 get_multi, keys on (b)'s server"),
    ("libmemcached_all", "(c)  libmemcached KETAMA_WEIGHTED mget, every server in one memcached_st"),
    ("twemproxy", "(d)  libmemcached mget through twemproxy (nutcracker), keys on every server"),
    ("libmemcached", "(b)  libmemcached mget, a memcached_st holding (b)'s server alone"),
]


def client_callgrind(results_dir):
    """{(op, contender): (instructions per call, keys per call)} from callgrind_client/."""
    counts = {}
    prefix = "desc: Trigger: Client Request: "
    for path in glob.glob(os.path.join(results_dir, "callgrind_client", "client.callgrind.*")):
        name, total = None, None
        with open(path) as handle:
            for line in handle:
                if line.startswith(prefix):
                    name = line[len(prefix):].strip()
                elif line.startswith("summary:"):
                    total = int(line.split()[1])
        if name is None or total is None or name.count("/") != 3:
            continue
        op, contender, calls, keys = name.split("/")
        counts[(op, contender)] = (total / int(calls), int(keys))
    return counts


def judge_against_c(targets, op, name, ref, goal):
    """Judges contender `name`'s ratio to (c) when (c) is its like-for-like
    reference (ketama: (c) places the same keys on the same servers), appending
    to `targets`; returns the verdict text."""
    if not name.startswith("ketama"):
        return "(other placement)"
    if name == "ketama_per_server":
        return "(an option: shown, not judged)"
    ok = round(ref, 3) <= goal
    targets.append((op, name, "(c)", ref, goal, ok))
    return verdict(ok) + " (vs c)"


def client_section(rep, doc, counts):
    """The client tables; returns [(target, met)] and writes client_targets.csv."""
    if doc is None:
        rep.say("ShardedClient against libmemcached: no results (client.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    rows = {r["run_name"].split("/")[1]: r for r in rows_of(doc) if r.get("run_name", "").startswith("BM_Client/")}
    source = context.get("memshard_client_server_source", "?")
    version = context.get("memshard_client_memcached_version", "")
    servers_note = (f"servers ({'started locally' if source == 'local' else source}"
                    f"{', ' + version if version else ''}): {context.get('memshard_client_servers', '?')}; "
                    f"(b)'s server is the first.")
    targets = []  # judged on the ratio as printed (3 decimals)

    def interval(r, prefix):
        return f"[{r[prefix + '_lo']:.3f}, {r[prefix + '_hi']:.3f}]"

    # Single get and set.
    text_rows, csv_rows, rounds = [], [], None
    for op in ("get", "set"):
        r = rows.get(op)
        if r is None:
            continue
        if r.get("error_occurred"):
            text_rows.append([f"{op}: error: " + r.get("error_message", "")] + [""] * 7)
            continue
        rounds = int(r.get("rounds", 0))
        for name, label in CLIENT_SINGLE:
            if name + "_ns" not in r:
                continue
            us = r[name + "_ns"] / 1000
            is_base = name == "libmemcached"
            verdict_text, ref = "", None
            if name.endswith("_same"):
                ok = round(r[name + "_ratio"], 3) <= TARGET_CLIENT_SINGLE
                verdict_text = verdict(ok)
                targets.append((op, name, "(b)", r[name + "_ratio"], TARGET_CLIENT_SINGLE, ok))
            elif name + "_ratio_ref" in r:
                ref = r[name + "_ratio_ref"]
                verdict_text = judge_against_c(targets, op, name, ref, TARGET_CLIENT_SINGLE)
            text_rows.append([f"{op}  {label}", str(int(r[name + "_keys"])), f"{us:.2f}", f"{1e6 / us:,.0f}",
                              "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                              "" if is_base else interval(r, name + "_ratio"),
                              f"{ref:.3f}x {interval(r, name + '_ratio_ref')}" if ref is not None else "",
                              verdict_text])
            csv_rows.append({"operation": op, "contender": name, "label": label.strip(),
                             "keys": int(r[name + "_keys"]), "us per op": us, "ops per s": 1e6 / us,
                             "ratio to (b)": r[name + "_ratio"], "ratio to (b) low": r[name + "_ratio_lo"],
                             "ratio to (b) high": r[name + "_ratio_hi"],
                             "ratio to (c)": ref if ref is not None else "",
                             "ratio to (c) low": r[name + "_ratio_ref_lo"] if ref is not None else "",
                             "ratio to (c) high": r[name + "_ratio_ref_hi"] if ref is not None else "",
                             "rounds": rounds, "batch": int(r.get("batch", 0))})
    # (a) against twemproxy (d): judged on single get only.
    proxy_notes = []
    proxy = context.get("memshard_client_twemproxy", "")
    if proxy.startswith("skipped"):
        proxy_notes.append(f"(d) twemproxy: {proxy}.")
    elif proxy:
        parts = []
        for op in ("get", "set"):
            r = rows.get(op)
            if r is None or r.get("error_occurred") or "ketama_ratio_twemproxy" not in r:
                continue
            value = r["ketama_ratio_twemproxy"]
            text = f"{op} {value:.3f}x {interval(r, 'ketama_ratio_twemproxy')}"
            if op == "get":
                ok = round(value, 3) <= TARGET_CLIENT_VS_TWEMPROXY
                text += (f", target <= {TARGET_CLIENT_VS_TWEMPROXY:.2f}x (ShardedClient single get at "
                         f"least 2x faster than twemproxy): {verdict(ok)}")
                targets.append((op, "ketama", "(d)", value, TARGET_CLIENT_VS_TWEMPROXY, ok))
            parts.append(text)
        if parts:
            proxy_notes.append("ShardedClient (a, ketama) / twemproxy (d): " + "; ".join(parts) + ".")
        proxy_notes.append(f"(d): {proxy}; one pool of the servers above, a memcached_st (same "
                           "behaviours) holding the proxy as its only server; values written and read "
                           "through it checked before timing.")
        placement = context.get("memshard_client_twemproxy_placement")
        if placement:
            proxy_notes.append(f"twemproxy placement: {placement}.")
    if text_rows:
        batch = int(rows["get"].get("batch", 0)) if "get" in rows and not rows["get"].get("error_occurred") else "?"
        rep.table(f"ShardedClient against libmemcached on real memcached: single get (hit) and set of "
                  f"100-byte values, {rounds} interleaved rounds",
                  ["op   contender", "keys", "µs/op", "ops/s", "/ (b)", "95% CI", "/ (c) [95% CI]",
                   f"target <= {TARGET_CLIENT_SINGLE:.2f}x"],
                  text_rows, "client_single.csv", csv_rows,
                  notes=[servers_note,
                         f"Interleaved: each round runs every contender for a batch of {batch} calls, in a "
                         "fresh random order; / (b) is the median over the rounds of (contender's time "
                         "per call / (b)'s in the same round),",
                         "so noise that lasts longer than a round cancels and a burst that hits one side "
                         "only is outvoted. 95% CI: distribution-free interval of that median (binomial "
                         "order statistics). µs/op: median over rounds.",
                         "(a') and (b) talk to the same server: only the client differs. (a) spreads its keys "
                         "over every server, and so does (c), libmemcached placing the same keys itself:",
                         "(a) / (b) and (c) / (b) measure the servers (each memcached wakes up for only its share "
                         "of the calls), not the client; (a) ketama is judged against (c), which places the same keys (modulo places others: shown, not judged).",
                         "Every libmemcached handle has ShardedClient's own behaviours (NO_BLOCK, "
                         "TCP_NODELAY, SUPPORT_CAS, timeouts; checked), text protocol; every answer is "
                         "checked (hit, right value; stored)."] + proxy_notes)

    # Multi-get.
    r = rows.get("get_multi")
    if r is not None:
        text_rows, csv_rows = [], []
        multi_notes = []
        if r.get("error_occurred"):
            text_rows.append(["error: " + r.get("error_message", "")] + [""] * 6)
        else:
            keys_per_call = int(r.get("keys_per_call", 100))
            for name, label in CLIENT_MULTI:
                if name + "_ns" not in r:
                    continue
                us = r[name + "_ns"] / 1000
                is_base = name == "libmemcached"
                verdict_text, ref = "", None
                if name + "_ratio_ref" in r:
                    ref = r[name + "_ratio_ref"]
                    verdict_text = judge_against_c(targets, "get_multi", name, ref,
                                                   TARGET_CLIENT_MULTI)
                text_rows.append([label, f"{us:.1f}", f"{keys_per_call * 1e6 / us:,.0f}",
                                  "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                                  "" if is_base else interval(r, name + "_ratio"),
                                  f"{ref:.3f}x {interval(r, name + '_ratio_ref')}" if ref is not None else "",
                                  verdict_text])
                csv_rows.append({"contender": name, "label": label, "us per request": us,
                                 "keys per s": keys_per_call * 1e6 / us,
                                 "ratio to (b)": r[name + "_ratio"], "ratio to (b) low": r[name + "_ratio_lo"],
                                 "ratio to (b) high": r[name + "_ratio_hi"],
                                 "ratio to (c)": ref if ref is not None else "",
                                 "ratio to (c) low": r[name + "_ratio_ref_lo"] if ref is not None else "",
                                 "ratio to (c) high": r[name + "_ratio_ref_hi"] if ref is not None else "",
                                 "key lists": int(r[name + "_keys"]), "keys per request": keys_per_call,
                                 "rounds": int(r.get("rounds", 0)), "batch": int(r.get("batch", 0))})
            if "ketama_ratio_twemproxy" in r:
                multi_notes.append("ShardedClient (a, ketama get_multi) / twemproxy (d): "
                                   f"{r['ketama_ratio_twemproxy']:.3f}x "
                                   f"{interval(r, 'ketama_ratio_twemproxy')} (not a target).")
            elif proxy.startswith("skipped"):
                multi_notes.append(f"(d) twemproxy: {proxy}.")
        spread = ""
        if "keys_per_server_min" in r:
            spread = (f" (keys per server per request: {int(r['keys_per_server_min'])} to "
                      f"{int(r['keys_per_server_max'])} under ketama")
            if "modulo_keys_per_server_min" in r:
                spread += (f", {int(r['modulo_keys_per_server_min'])} to "
                           f"{int(r['modulo_keys_per_server_max'])} under modulo")
            spread += ")"
        rep.table(f"ShardedClient against libmemcached on real memcached: multi-get of "
                  f"{int(r.get('keys_per_call', 100))} keys (all hits) over "
                  f"{int(r.get('servers', 0)) or '?'} servers, {int(r.get('rounds', 0))} interleaved rounds",
                  ["contender", "µs/request", "keys/s", "/ (b)", "95% CI", "/ (c) [95% CI]",
                   f"target <= {TARGET_CLIENT_MULTI:.2f}x"], text_rows, "client_multi.csv", csv_rows,
                  notes=[f"Each contender cycles over 16 requests of 100 distinct keys{spread}; same "
                         f"interleaving and statistics as above, batches of {int(r.get('batch', 0))} "
                         "requests.",
                         "(a), (c) and (d) read the same lists, written through each client. (b) and (a') "
                         "ketama read other lists, of keys memshard's ketama puts on (b)'s server; (a') "
                         "modulo, keys modulo puts there.",
                         "Checked before timing, for every request of every contender: all 100 values, "
                         "each once, equal to what was stored; (c) and (b) were checked before any other "
                         "client wrote their keys,",
                         "so libmemcached places every key where memshard's ketama does, and (b)'s keys "
                         "are on (b)'s server.",
                         "libmemcached contenders: memcached_mget, then memcached_fetch_result into a "
                         "caller-owned memcached_result_st, each key and value copied into reused strings "
                         "(ShardedClient's behaviours, checked).",
                         "get_multi returns a MultiGetResult that owns its values (one std::string each) and "
                         "a Status per key; visit_multi copies each value into a reused string, like (b).",
                         "(a') visit_multi / (b): the same keys on the same server, only the client differs; "
                         "(a) ketama is judged against (c), which places and hashes keys as it does."]
                  + multi_notes)

    # Instructions per call.
    if counts:
        text_rows, csv_rows = [], []
        for op, names in (("get", CLIENT_SINGLE), ("set", CLIENT_SINGLE), ("get_multi", CLIENT_MULTI)):
            base = counts.get((op, "libmemcached"))
            ref = counts.get((op, "libmemcached_all"))
            for name, label in names:
                if (op, name) not in counts:
                    continue
                per_call, keys = counts[(op, name)]
                text_rows.append([f"{op:<9}  {label}", f"{per_call:,.0f}",
                                  f"{per_call / base[0]:.3f}x" if base else "-",
                                  f"{per_call / ref[0]:.3f}x" if ref else "-"])
                csv_rows.append({"operation": op, "contender": name, "instructions per call": round(per_call, 1),
                                 "keys per call": keys, "ratio to (b)": per_call / base[0] if base else "",
                                 "ratio to (c)": per_call / ref[0] if ref else ""})
        rep.table("Instructions per client call (callgrind, client side only)",
                  ["op         contender", "instructions/call", "/ (b)", "/ (c)"], text_rows,
                  "client_instructions.csv", csv_rows,
                  notes=["Each contender alone (2000 calls; 200 for get_multi) between CALLGRIND_ZERO_STATS "
                         "and CALLGRIND_DUMP_STATS_AT, after the same checks; / (b) and / (c): the same "
                         "operation's (b) and (c) rows.",
                         "User-space instructions of the client process, libmemcached included; the kernel "
                         "and the servers are not counted. Repeatable where times are not."])
    if targets:
        with open(os.path.join(rep.results_dir, "client_targets.csv"), "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["operation", "contender", "against", "time ratio", "goal", "met"])
            writer.writerows(targets)
    return [(f"client {op} {name} / {against} {value:.3f}x", ok)
            for op, name, against, value, _, ok in targets]


CHART_NOTES = {
    "balance-per-server-load.svg": "keys per server / mean, servers ranked, modulo vs ketama at several "
                                   "points per server",
    "hit-rate-after-resize.svg": "hit rate after adding servers, measured vs theory, modulo vs rings",
}


def charts_section(rep, results_dir):
    """One line on the charts bench/plot.py drew, or why there are none."""
    log_lines = []
    log = os.path.join(results_dir, "plot.log")
    if os.path.exists(log):
        with open(log) as handle:
            log_lines = [line.strip() for line in handle if line.strip()]
    listed = os.path.join(results_dir, "charts.txt")
    if os.path.exists(listed):
        with open(listed) as handle:
            names = [line.strip() for line in handle if line.strip()]
        rep.say("Charts: " + "; ".join(f"{name} ({CHART_NOTES[name]})" if name in CHART_NOTES else name
                                       for name in names))
        for line in log_lines:
            if line.startswith("not drawn:"):
                rep.say(f"  {line} (see plot.log)")
        return
    reason = log_lines[-1] if log_lines else ("plot.py failed" if os.path.exists(log) else "plot.py did not run")
    rep.say(f"Charts: none drawn ({reason}; see plot.log); the tables above are complete without them.")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results_dir = sys.argv[1]
    rep = Report(results_dir)
    locate = load(os.path.join(results_dir, "locate.json"))
    context = (locate or {}).get("context", {})
    rep.say("memshard benchmark report")
    rep.say("=========================")
    if context:
        rep.say(f"{context.get('date', '')}  host {context.get('host_name', '?')}: "
                f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
                f"load average {', '.join(f'{x:.2f}' for x in context.get('load_avg', []))}")
        extra = [f"{k[len('memshard_'):]}={v}" for k, v in sorted(context.items()) if k.startswith("memshard_")]
        if extra:
            rep.say("run: " + ", ".join(extra))
        if context.get("library_build_type") == "debug":
            rep.say("note: Debian's libbenchmark reports itself as a debug build; memshard and the "
                    "benchmarks are built in Release.")
    rep.say()
    errors = []
    for name in ("locate", "balance", "resize", "properties", "hit_rate", "client"):
        errors += [f"{name}: {r['name']}: {r.get('error_message', '')}"
                   for r in failed(rows_of(load(os.path.join(results_dir, name + ".json"))))]
    data = lookup_section(rep, locate, callgrind_counts(results_dir))
    targets = targets_section(rep, data)
    balance_section(rep, load(os.path.join(results_dir, "balance.json")))
    movement_section(rep, load(os.path.join(results_dir, "resize.json")))
    properties_section(rep, load(os.path.join(results_dir, "properties.json")))
    targets += hit_rate_section(rep, load(os.path.join(results_dir, "hit_rate.json")))
    targets += client_section(rep, load(os.path.join(results_dir, "client.json")),
                              client_callgrind(results_dir))
    if errors:
        rep.say("Errors")
        rep.say("======")
        for e in errors:
            rep.say(e)
        rep.say()
    missed = [t for t, ok in targets if not ok]
    rep.say(f"Targets met: {len(targets) - len(missed)} of {len(targets)}"
            + (f"; missed: {'; '.join(missed)}" if missed else ""))
    charts_section(rep, results_dir)
    rep.say(f"Files: {results_dir}/ (raw JSON per benchmark, one CSV per table, summary.txt)")
    text = rep.text()
    with open(os.path.join(results_dir, "summary.txt"), "w") as handle:
        handle.write(text)
    sys.stdout.write(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
