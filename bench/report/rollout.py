# SPDX-License-Identifier: MIT
"""A migration rolled out to 8 processes (rollout.json), coordinated through etcd or each process
on its own: stale reads, lost writes and the hit rate per window, with the targets."""

from .common import count, share, verdict

TARGET_FAST_RATE = 1e-4  # kFast across processes: at most 1 stale read in 10,000 hits

ARMS = [("coordinated", "coordinated through etcd (FleetAdmin, phases)"),
        ("uncoordinated", "each process on its own (begin_migration at random in 2 s)")]


def rollout_section(rep, doc):
    """The arms' table, the windows' table and the targets; returns [(target, met)]."""
    if doc is None:
        rep.say("Rollout to 8 processes: no results (rollout.json missing)")
        rep.say()
        return []
    found = {}
    for r in doc.get("benchmarks", []):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) >= 2 and parts[0] == "BM_Rollout":
            found[parts[1]] = r
    rows, csv_rows, windows = [], [], {}
    for arm, label in ARMS:
        r = found.get(arm)
        if r is None:
            continue
        if r.get("error_occurred"):
            rows.append([label, "error: " + r.get("error_message", "")] + [""] * 6)
            continue
        keys = sorted(k for k in r if len(k) == 3 and k[0] == "w" and k[1:].isdigit())
        windows[arm] = [r[k] for k in keys]
        rows.append([label, count(r["calls"]), count(r["hits"]), count(r["stale"]), share(r["stale_rate"]),
                     count(r["lost"]), count(r["wrong"]), f"{100 * min(windows[arm]):.1f}%"])
        csv_rows.append({"arm": arm, **{k: int(r[k]) for k in ("calls", "gets", "hits", "stale", "lost", "wrong")},
                         "stale_rate": r["stale_rate"], "lowest_window_hit_rate": min(windows[arm])})
    if not rows:
        rep.say("Rollout to 8 processes: no runs in rollout.json")
        rep.say()
        return []
    rep.table("Rollout: a 4 -> 5 migration reaching 8 processes, coordinated or not (kFast)",
              ["arm", "calls", "hits", "stale", "stale rate", "lost writes", "wrong", "lowest window"],
              rows, "rollout.csv", csv_rows,
              notes=["8 processes, each with its own client, read and write 64 shared keys (70% gets, 25% sets, "
                     "5% deletes) on 5 local memcached servers. coordinated: members of a fleet in a local etcd, "
                     "migrated at 0 s and committed at 4 s by FleetAdmin; uncoordinated: each calls "
                     "begin_migration at a random moment of 0-2 s and commit_migration of 4-6 s. Every call is "
                     "logged and the merged logs checked: stale, a hit older than a write acknowledged before "
                     "the get began; lost, an acknowledged write no later read could see. lowest window: the "
                     "lowest hit rate of the 500 ms windows (rollout-through-time.svg)."])
    if windows:
        arms = [arm for arm, _ in ARMS if arm in windows]
        n = max(len(v) for v in windows.values())
        rep.table("Rollout: hit rate per 500 ms window (seconds from the change)",
                  ["window"] + arms,
                  [[f"{-1.0 + 0.5 * w:+.1f} s"] + [f"{100 * windows[a][w]:.1f}%" if w < len(windows[a]) else ""
                                                    for a in arms] for w in range(n)],
                  "rollout_windows.csv",
                  [{"window_start_s": -1.0 + 0.5 * w, **{a: windows[a][w] for a in arms if w < len(windows[a])}}
                   for w in range(n)])
    targets, target_rows, target_csv = [], [], []
    r = found.get("coordinated")
    if r is not None and not r.get("error_occurred"):
        stale, hits = int(r["stale"]), int(r["hits"])
        met = hits > 0 and stale <= TARGET_FAST_RATE * hits and int(r["lost"]) == 0 and int(r["wrong"]) == 0
        target_rows.append(["coordinated: stale per hit, lost writes, wrong values",
                            f"{stale:,} of {hits:,}, {int(r['lost'])}, {int(r['wrong'])}",
                            f"<= 1 in {1 / TARGET_FAST_RATE:,.0f}, 0, 0", verdict(met)])
        target_csv.append({"target": "coordinated", "stale": stale, "hits": hits, "met": met})
        targets.append(("rollout coordinated through etcd: stale, lost, wrong", met))
    u = found.get("uncoordinated")
    if u is not None and not u.get("error_occurred"):
        met = int(u["stale"]) > 0
        target_rows.append(["uncoordinated control shows the race", f"{int(u['stale']):,} stale", "> 0",
                            verdict(met)])
        target_csv.append({"target": "uncoordinated", "stale": int(u["stale"]), "hits": int(u["hits"]), "met": met})
        targets.append(("rollout uncoordinated control shows the race", met))
    if target_rows:
        rep.table("Targets of the rollout", ["target", "measured", "goal", "result"], target_rows,
                  "rollout_targets.csv", target_csv)
    return targets
