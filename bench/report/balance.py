# SPDX-License-Identifier: MIT
"""The balance table (balance.json): each placement's per-server share of
the keys, sampled and exact."""

from .common import family, rows_of

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
