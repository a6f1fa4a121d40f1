# SPDX-License-Identifier: MIT
"""The properties of a distribution (properties.json): a summary, then
monotonicity, then spread and load under inconsistent views."""

from .common import KETAMA, count, family, label_of, rows_of, share

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
