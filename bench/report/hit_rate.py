# SPDX-License-Identifier: MIT
"""The hit rate after resize on real memcached (hit_rate.json), and its
target."""

import math

from .common import KETAMA, pct, rows_of, verdict

# Target the hit-rate benchmark is held to.
TARGET_HIT_RATE_PP = 2.0  # ketama-md5-weighted: |mean hit rate over the trials - n/(n+m)|, percentage points


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


def live_what(before, after):
    if after > before:
        return f"{before} -> {after} (+{after - before})"
    if after < before:
        return f"{before} -> {after} (last gone)"
    return f"{before} -> {after} (new placement)"


def hit_rate_section(rep, doc, live=()):
    """The hit-rate table (mean over trials), with a row per arm of the resize-through-time runs in
    `live` (resize_time.first_window_rows); returns [(target, met)] and writes hit_rate_targets.csv."""
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
    for row in live:
        what = live_what(row["servers before"], row["servers after"])
        profiles = [KETAMA if p == "libmemcached-ketama-weighted" else p for p in row["profiles"].split(" -> ")]
        placement = profiles[0] if len(set(profiles)) == 1 else " -> ".join(profiles)
        text_rows.append([f"{placement}, live {row['label'].split(' ')[0]}", what, "1 run", pct(row["hit rate"]),
                          "-", "-", "-", "-", "-", pct(row["before"], 1), "-"])
        csv_rows.append({"placement": row["profiles"], "resize": f"live {row['scenario']} {row['arm']}",
                         "servers before": row["servers before"], "servers after": row["servers after"],
                         "trial": "first window", "hit rate": row["hit rate"], "predicted": "", "theory": "",
                         "baseline": row["before"], "wrong values": "", "trials": 1, "hit rate min": "",
                         "hit rate max": "", "standard error": "", "servers": ""})
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
    if live:
        notes.append(f"live (a), (b), ...: the arms of the resize-through-time runs (below): the hit rate of the first "
                     f"window ({live[0]['requests']} requests) after the resize under a cache-aside workload, "
                     "where evictions, writes and refills go on; before resize: the mean of the windows before.")
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
