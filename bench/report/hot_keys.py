# SPDX-License-Identifier: MIT
"""Finding hot keys (hot_keys.json): what HotKeySketch::record costs a call at each sampling,
and how the keys it reports for a window compare with the true ones; the cost target of the
hot-keys work (at the default sampling), judged on what the run measured."""

from .common import rows_of, verdict

TARGET_NS = 50.0  # record() per call, on average, at the default sampling (1 in 8)
DEFAULT_SAMPLE_EVERY = "8"


def rows_by(doc, family):
    """{sample_every: row} of the BM_HotKeySketch/<family>/<n> rows."""
    out = {}
    for r in rows_of(doc):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) >= 3 and parts[0] == "BM_HotKeySketch" and parts[1] == family:
            out[parts[2]] = r
    return out


def ns_of(row):
    """The row's time per call, in ns."""
    scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[row.get("time_unit", "ns")]
    return float(row["real_time"]) * scale


def hot_keys_section(rep, doc):
    """The table and the cost target; returns [(target, met)]."""
    if doc is None:
        rep.say("Hot keys: no results (hot_keys.json missing)")
        rep.say()
        return []
    costs, found = rows_by(doc, "record"), rows_by(doc, "accuracy")
    rows, csv_rows, targets = [], [], []
    for every in sorted(set(costs) | set(found), key=int):
        cost, acc = costs.get(every), found.get(every)
        if (cost and cost.get("error_occurred")) or (acc and acc.get("error_occurred")):
            rows.append([every, "error"] + [""] * 6)
            continue
        ns = ns_of(cost) if cost else None
        rows.append([every + (" (default)" if every == DEFAULT_SAMPLE_EVERY else ""),
                     f"{ns:.1f}" if ns is not None else "-",
                     f"{int(acc['true_hot'])}" if acc else "-", f"{int(acc['reported'])}" if acc else "-",
                     f"{float(acc['precision']):.2f}" if acc else "-", f"{float(acc['recall']):.2f}" if acc else "-",
                     f"{float(acc['recall_2x']):.2f}" if acc else "-",
                     f"{float(acc['max_share_error']):.3f}" if acc else "-"])
        csv_rows.append({"sample_every": int(every), "ns_per_call": ns if ns is not None else "",
                         **({field: acc[field] for field in ("true_hot", "reported", "precision", "recall",
                                                             "recall_2x", "max_share_error")} if acc else {})})
        if every == DEFAULT_SAMPLE_EVERY and ns is not None:
            met = ns <= TARGET_NS
            targets.append((f"hot keys: record() per call {ns:.1f} ns (at most {TARGET_NS:.0f})", met))
    rep.table("Hot keys: what counting costs a call, and which keys the sketch finds",
              ["sample 1 in", "ns/call", "true hot", "reported", "precision", "recall", "recall 2x share",
               "share error, points"], rows, "hot_keys.csv", csv_rows,
              notes=["HotKeySketch (64 entries, hot from a 1% share) on 4,000,000 generated operations over "
                     "100,000 keys (Zipf 0.99, and one key at 10%), 1,000,000 a window; no server.",
                     "ns/call: record() over the stream, the counted calls included. Accuracy: the keys hot() "
                     "reports for the third window against an exact count of it; recall 2x share: of the keys "
                     "at 2% or more. A key is reported on its guaranteed count (Space-Saving's count minus "
                     "what it may have inherited): no false hot key, and keys just above the share may be "
                     "missed."])
    for target, met in targets:
        rep.say(f"Target: {target}: {verdict(met)}")
    if targets:
        rep.say()
    return targets
