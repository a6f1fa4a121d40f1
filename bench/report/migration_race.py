# SPDX-License-Identifier: MIT
"""Concurrent readers and writers in a live migration (migration_race.json):
stale reads per arm (kFast, kStrict, the naive control) on real memcached, and
the stale-read targets (T6), judged on what the run counted."""

from .common import count, rows_of, share, verdict

TARGET_FAST_RATE = 1e-4  # T6: kFast at most 1 stale read in 10,000 hits

ARMS = [  # (benchmark name, what the report calls it)
    ("fast", "kFast"),
    ("strict", "kStrict"),
    ("naive", "naive control"),
]


def arms_of(doc):
    """{arm: row} of the BM_MigrationRace rows (failed ones included)."""
    out = {}
    for r in rows_of(doc):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) >= 2 and parts[0] == "BM_MigrationRace":
            out[parts[1]] = r
    return out


def judge(arm, r):
    """(target, goal, measured, met) for one arm's row."""
    stale, hits = int(r["stale"]), int(r["hits"])
    measured = f"{stale:,} of {hits:,} ({share(r['stale_rate'])})"
    if arm == "strict":
        return ("kStrict: stale reads", "0", measured, stale == 0)
    if arm == "fast":
        return ("kFast: stale reads per hit", f"<= 1 in {1 / TARGET_FAST_RATE:,.0f}", measured,
                hits > 0 and stale <= TARGET_FAST_RATE * hits)
    return ("naive control shows the race", "> 0 stale reads", measured, stale > 0)


def migration_race_section(rep, doc):
    """The table and the stale-read targets; returns [(target, met)]."""
    if doc is None:
        rep.say("Migration race: no results (migration_race.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    found = arms_of(doc)
    text_rows, csv_rows, target_rows, target_csv, targets = [], [], [], [], []
    for arm, label in ARMS:
        r = found.get(arm)
        if r is None:
            continue
        if r.get("error_occurred"):
            text_rows.append([label, "error: " + r.get("error_message", "")] + [""] * 8)
            continue
        text_rows.append([label, count(r["rounds"]), count(r["gets"]), count(r["hits"]), count(r["stale"]),
                          share(r["stale_rate"]), count(r["copies_stored"]), count(r["copies_revoked"]),
                          f"{count(r['leases_won'])} / {count(r['leases_busy'])}", count(r["errors"])])
        csv_rows.append({"arm": arm, "label": r.get("label", ""),
                         **{field: int(r[field]) for field in (
                             "rounds", "gets", "hits", "stale")},
                         "stale_rate": r["stale_rate"],
                         **{field: int(r[field]) for field in (
                             "bad_values", "errors", "writes", "removes", "sets", "copies_stored",
                             "copies_revoked", "fallback_hits", "leases_won", "leases_busy")},
                         "seconds": r.get("real_time", "")})
        target, goal, measured, met = judge(arm, r)
        target_rows.append([target, measured, goal, verdict(met)])
        target_csv.append({"arm": arm, "target": target, "goal": goal, "stale": int(r["stale"]),
                           "hits": int(r["hits"]), "met": met})
        targets.append((f"migration race {target}", met))
    servers = context.get("memshard_migration_race_servers", "?")
    notes = [f"{context.get('memshard_migration_race_rounds', '?')} fresh migrations per arm on 4 local memcached "
             f"servers ({context.get('memshard_migration_race_memcached_version', 'memcached')}; {servers}: "
             f"2 old -> 2 new, every key moves): the last round's keys deleted, version 0 of "
             f"{context.get('memshard_migration_race_keys', '?')} keys through the old placement, begin_migration, "
             f"{context.get('memshard_migration_race_readers', '?')} readers x "
             f"{context.get('memshard_migration_race_reads_per_round', '?')} gets and "
             f"{context.get('memshard_migration_race_writers', '?')} writers (one per key; "
             f"{context.get('memshard_migration_race_remove_percent', '?')}% remove, the rest set) until the "
             "readers are done, then commit. Readers never fill a miss.",
             "stale: a hit older than the version the writers had completed when the get began (or not a version "
             "at all); stale rate: stale / hits. copies: stored forward (kStrict: leases filled; naive: adds "
             "stored); revoked: copies deleted again because the old copy changed (kStrict: fills refused); "
             "leases: kStrict, won / held by another reader.",
             "naive control: two plain clients, no migration: a miss on the new owner reads the old one and adds "
             "its value to the new owner unchecked; writers delete (or set) the new owner first, then delete the "
             "old copy."]
    if any(int(r.get("errors", 0)) for r in found.values() if not r.get("error_occurred")):
        notes.append("errors: memcached calls that failed; the stale counts cover the calls that answered.")
    rep.table("Migration race: concurrent readers and writers, stale reads",
              ["arm", "rounds", "gets", "hits", "stale", "stale rate", "copies", "revoked",
               "leases won / busy", "errors"],
              text_rows, "migration_race.csv", csv_rows, notes=notes)
    if target_rows:
        rep.table("Targets of the migration race (T6)", ["target", "measured", "goal", "result"], target_rows,
                  "migration_race_targets.csv", target_csv)
    return targets
