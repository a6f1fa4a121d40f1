# SPDX-License-Identifier: MIT
"""The movement table (resize.json): the share of keys that change server
when one server is added or the last removed."""

from .common import KETAMA, family, rows_of, share

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
