# SPDX-License-Identifier: MIT
"""The lookup cost tables (locate.json): memshard's placements, against
libmemcached, where a ketama lookup's time goes, ring build, and instructions
per lookup (callgrind/)."""

import glob
import os

from .common import KETAMA, LM_KETAMA, LM_MODULA, OAAT, family, load, ns_per_item, pct, ratio, rows_of, to_ms

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
