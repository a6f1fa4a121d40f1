#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Draws the charts of one run of memshard's benchmarks.

Reads, from a results directory that bench/run.sh filled:
  balance_loads.csv  per-server key counts (the balance benchmark with
                     MEMSHARD_BENCH_LOADS_OUT), for balance-per-server-load.svg;
  hit_rate.json      the hit-rate benchmark (one row per trial), for
                     hit-rate-after-resize.svg (means over the trials);
  resize_time.json   the resize-through-time runs, for resize-through-time.svg
                     (hit rate and database reads per window, one line per arm,
                     one row of two charts per scenario);
  rollout.json       the rollout to 8 processes, coordinated through etcd or
                     not, for rollout-through-time.svg (hit rate per window);
writes those SVG files there, and charts.txt naming the ones drawn. Needs
matplotlib (Debian: python3-matplotlib). Exits 1 when no chart was drawn, with
the reason as the last line of its output.

Usage: plot.py RESULTS_DIR
"""

import csv
import json
import math
import os
import sys

BALANCE_CHART = "balance-per-server-load.svg"
HIT_RATE_CHART = "hit-rate-after-resize.svg"
RESIZE_TIME_CHART = "resize-through-time.svg"
ROLLOUT_CHART = "rollout-through-time.svg"

# The per-server load chart: which runs, in which style.
LOAD_SERIES = [  # (placement, points per server or None for any, legend, colour, line style)
    ("modulo-crc32", None, "modulo-crc32", "#d62728", "-"),
    ("ketama-md5", 1, "ketama-md5, 1 point/server", "#bbbbbb", "-"),
    ("ketama-md5", 64, "ketama-md5, 64 points", "#9ecae1", "-"),
    ("ketama-md5", 160, "ketama-md5, 160 points", "#3182bd", "-"),
    ("ketama-md5", 1000, "ketama-md5, 1000 points", "#08306b", "-"),
    ("ketama-md5-weighted", None, "ketama-md5-weighted (libketama)", "#2ca02c", "--"),
]
LOAD_SIZES = [10, 100, 1000]
LOAD_CAP = 2.0  # y axis limit: one point per server goes far above it
LOAD_SAMPLES = 200  # at most this many points per curve (keeps the SVG small)

HIT_RATE_SERIES = [  # (placement, legend, colour, marker)
    ("modulo-crc32", "modulo-crc32", "#d62728", "s"),
    ("ring-crc32", "ring-crc32 (64 points)", "#ff7f0e", "^"),
    ("ketama-md5-weighted", "ketama-md5-weighted (160 points)", "#1f77b4", "o"),
]

RESIZE_TIME_SCENARIOS = [  # (benchmark name, title)
    ("4-to-5", "4 -> 5 servers"),
    ("5-to-4", "5 -> 4 servers"),
    ("modulo-to-ketama", "modulo(4) -> ketama(4)"),
    ("libmemcached-to-spymemcached", "libmemcached ring -> spymemcached ring"),
]
RESIZE_TIME_ARMS = {  # arm -> (colour, marker); other arms get the next colours
    "modulo-direct": ("#d62728", "s"),
    "direct": ("#1f77b4", "o"),
    "read-through": ("#2ca02c", "^"),
    "read-through-warmer": ("#9467bd", "D"),
}
RESIZE_TIME_MIN_HIT = 0.97  # T1 (bench/report/resize_time.py)
RESIZE_TIME_PEAK_DB = 1.10  # T2


def setup():
    """Imports matplotlib for files (no display), with small, reproducible SVG."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({
        "svg.fonttype": "none",  # text stays text: small files
        "svg.hashsalt": "memshard",  # the same ids on every run
        "font.size": 9,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })
    import matplotlib.pyplot as plt

    return plt


def save(plt, fig, results_dir, name):
    fig.savefig(os.path.join(results_dir, name), format="svg", metadata={"Date": None},
                bbox_inches="tight")
    plt.close(fig)


def balance_chart(plt, results_dir):
    """Per-server keys / mean, servers ranked busiest first, one panel per N."""
    path = os.path.join(results_dir, "balance_loads.csv")
    if not os.path.exists(path):
        return "balance_loads.csv missing"
    loads = {}  # (placement, servers, points) -> [keys]
    with open(path, newline="") as handle:
        for row in csv.DictReader(handle):
            key = (row["placement"], int(row["servers"]), int(row["points_per_server"]))
            loads.setdefault(key, []).append(int(row["keys"]))
    sizes = [n for n in LOAD_SIZES if any(k[1] == n for k in loads)]
    if not sizes:
        return "no per-server loads for N = " + ", ".join(map(str, LOAD_SIZES))
    fig, axes = plt.subplots(1, len(sizes), figsize=(3.4 * len(sizes), 3.2), sharey=True, squeeze=False)
    for ax, n in zip(axes[0], sizes):
        for placement, points, legend, colour, style in LOAD_SERIES:
            match = [k for k in loads if k[0] == placement and k[1] == n and (points is None or k[2] == points)]
            if not match:
                continue
            counts = sorted(loads[match[0]], reverse=True)
            mean = sum(counts) / len(counts)
            picked = range(len(counts))
            if len(counts) > LOAD_SAMPLES:  # the busiest, the idlest, evenly between
                step = (len(counts) - 1) / (LOAD_SAMPLES - 1)
                picked = sorted({round(i * step) for i in range(LOAD_SAMPLES)})
            ranks = [(i + 0.5) / len(counts) for i in picked]
            ax.plot(ranks, [min(counts[i] / mean, LOAD_CAP * 1.05) for i in picked], style, color=colour,
                    lw=1.4, label=legend, marker="." if n <= 10 else None, ms=4, clip_on=True)
        ax.axhline(1.0, color="black", lw=0.6)
        ax.set_title(f"{n:,} servers, {sum(loads[next(k for k in loads if k[1] == n)]):,} keys")
        ax.set_xlabel("servers, busiest first (rank / N)")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, LOAD_CAP)
        ax.grid(True, lw=0.3, alpha=0.5)
    axes[0][0].set_ylabel(f"keys / mean (cut at {LOAD_CAP:g})")
    handles, labels = axes[0][0].get_legend_handles_labels()
    axes[0][-1].legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    fig.suptitle("Per-server load: modulo against ketama rings by points per server "
                 "(flat at 1.0 is perfect balance)", y=1.02)
    save(plt, fig, results_dir, BALANCE_CHART)
    return None


def hit_rate_chart(plt, results_dir):
    """Hit rate after adding m servers to n: the mean over the trials (bars: min..max) on theory curves."""
    path = os.path.join(results_dir, "hit_rate.json")
    if not os.path.exists(path):
        return "hit_rate.json missing"
    with open(path) as handle:
        doc = json.load(handle)
    measured = {}  # placement -> {m: [hit rate of each trial]}
    before = None
    context = doc.get("context", {})
    keys = context.get("memshard_keys", "?")
    for r in doc.get("benchmarks", []):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) < 3 or parts[1] != "add" or r.get("error_occurred") or "hit_rate" not in r:
            continue
        before = int(r["servers_before"])
        m = int(r["servers_after"]) - before
        measured.setdefault(parts[2], {}).setdefault(m, []).append(r["hit_rate"])
    if not measured or before is None:
        return "no add runs in hit_rate.json"
    trials = max(len(rates) for points in measured.values() for rates in points.values())
    top = max(max(v) for v in measured.values())
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    steps = list(range(1, top + 1))
    fine = [1 + i * (top - 1) / 200 for i in range(201)]
    ax.plot(fine, [100 * before / (before + m) for m in fine], ":", color="#555555", lw=1.2,
            label="theory, ring: n/(n+m)")
    ax.plot(steps, [100 * math.gcd(before, m) / (before + m) for m in steps], ":", color="#d62728", lw=1.2,
            marker="x", ms=6, label="theory, modulo: gcd(n,m)/(n+m)")
    for placement, legend, colour, marker in HIT_RATE_SERIES:
        points = measured.get(placement)
        if not points:
            continue
        xs = sorted(points)
        means = [100 * sum(points[m]) / len(points[m]) for m in xs]
        low = [mean - 100 * min(points[m]) for mean, m in zip(means, xs)]
        high = [100 * max(points[m]) - mean for mean, m in zip(means, xs)]
        ax.errorbar(xs, means, yerr=[low, high], fmt="-", color=colour, marker=marker, ms=5, lw=1.2,
                    elinewidth=1.0, capsize=3, label=f"measured, {legend}")
    ax.set_xticks(steps)
    ax.set_xticklabels([f"+{m}\n({before}\u2192{before + m})" for m in steps])
    ax.set_xlabel(f"servers added (m) to n = {before}")
    ax.set_ylabel("keys still found after the add (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, lw=0.3, alpha=0.5)
    keys_text = f"{int(keys):,} keys" if str(keys).isdigit() else "keys"
    if trials > 1:
        title = (f"Hit rate after adding servers on real memcached\n"
                 f"mean of {trials} rings, {keys_text} each; bars: min..max over the rings")
    else:
        title = f"Hit rate after adding servers on real memcached\none ring, {keys_text}"
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    save(plt, fig, results_dir, HIT_RATE_CHART)
    return None


def resize_time_chart(plt, results_dir):
    """Hit rate and database reads (x the mean before) per window through the resize, one row per scenario."""
    path = os.path.join(results_dir, "resize_time.json")
    if not os.path.exists(path):
        return "resize_time.json missing"
    with open(path) as handle:
        doc = json.load(handle)
    runs = {}  # scenario -> [(arm, label, row)]
    for r in doc.get("benchmarks", []):
        parts = r.get("run_name", r["name"]).split("/")
        if len(parts) < 3 or parts[0] != "BM_ResizeTime" or r.get("error_occurred") or "windows" not in r:
            continue
        runs.setdefault(parts[1], []).append((parts[2], r.get("label", parts[2]).split(":")[0], r))
    scenarios = [(name, title) for name, title in RESIZE_TIME_SCENARIOS if name in runs]
    if not scenarios:
        return "no runs in resize_time.json"
    window = doc.get("context", {}).get("memshard_resize_time_window", "?")
    fig, axes = plt.subplots(len(scenarios), 2, figsize=(9.6, 2.5 * len(scenarios)), sharex=True,
                             squeeze=False)
    spare = iter(["#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"])
    for (name, title), (hit_ax, db_ax) in zip(scenarios, axes):
        befores = []
        for arm, label, r in runs[name]:
            colour, marker = RESIZE_TIME_ARMS.get(arm) or (next(spare, "#555555"), ".")
            fill, resize = int(r["fill_windows"]), int(r["resize_window"])
            shown = range(fill, int(r["windows"]))
            xs = [w - resize + 1 for w in shown]  # 1: the first window after the resize
            hit_ax.plot(xs, [100 * r[f"w{w:03d}_hit_rate"] for w in shown], "-", color=colour, marker=marker,
                        ms=3.5, lw=1.2, label=label)
            db_ax.plot(xs, [r[f"w{w:03d}_db_reads"] / r["before_db_reads"] for w in shown], "-", color=colour,
                       marker=marker, ms=3.5, lw=1.2, label=label)
            befores.append(r["before_hit_rate"])
        if name != "5-to-4":  # T1 and T2 as drawn hold where no server leaves (the report has the rest)
            floor = 100 * RESIZE_TIME_MIN_HIT * sum(befores) / len(befores)
            hit_ax.axhline(floor, color="#555555", ls=":", lw=1.0,
                           label=f"{RESIZE_TIME_MIN_HIT:g} x before (T1), {RESIZE_TIME_PEAK_DB:.2f} x (T2)")
            db_ax.axhline(RESIZE_TIME_PEAK_DB, color="#555555", ls=":", lw=1.0)
        for ax in (hit_ax, db_ax):
            ax.axvline(0.5, color="black", lw=0.6)
            ax.grid(True, lw=0.3, alpha=0.5)
            ax.xaxis.get_major_locator().set_params(integer=True)
        hit_ax.set_ylabel(f"{title}\nhit rate (%)")
        db_ax.set_ylabel("db reads / window, x before")
        db_ax.set_ylim(bottom=0)
        handles, labels = hit_ax.get_legend_handles_labels()
        db_ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    for ax in axes[-1]:
        ax.set_xlabel(f"window of {window} requests (resize before window 1)")
    axes[0][0].set_title("Hit rate per window")
    axes[0][1].set_title("Database reads per window")
    fig.suptitle("Resize through time: cache-aside over SQLite on real memcached, Zipf(0.9), 2% writes", y=1.0)
    fig.tight_layout()
    save(plt, fig, results_dir, RESIZE_TIME_CHART)
    return None


def rollout_chart(plt, results_dir):
    """Hit rate per 500 ms window of the rollout, coordinated and not, with each arm's stale reads."""
    path = os.path.join(results_dir, "rollout.json")
    if not os.path.exists(path):
        return "rollout.json missing"
    with open(path) as handle:
        doc = json.load(handle)
    arms = [(r.get("run_name", r["name"]).split("/")[1], r) for r in doc.get("benchmarks", [])
            if r.get("run_name", r["name"]).startswith("BM_Rollout/") and not r.get("error_occurred")]
    if not arms:
        return "no runs in rollout.json"
    fig, ax = plt.subplots(figsize=(7.2, 3.0))
    styles = {"coordinated": ("#1f77b4", "o"), "uncoordinated": ("#d62728", "s")}
    for arm, r in arms:
        windows = sorted(k for k in r if len(k) == 3 and k[0] == "w" and k[1:].isdigit())
        xs = [-1.0 + 0.5 * int(k[1:]) for k in windows]
        colour, marker = styles.get(arm, ("#555555", "."))
        ax.plot(xs, [100 * r[k] for k in windows], "-", color=colour, marker=marker, ms=3.5, lw=1.2,
                label=f"{arm}: {int(r['stale']):,} stale of {int(r['hits']):,} hits")
    ax.axvspan(0, 2, color="#dddddd", alpha=0.5, lw=0, label="migrate (uncoordinated: begins within)")
    ax.axvspan(4, 6, color="#eeeeee", alpha=0.7, lw=0, label="commit (uncoordinated: within)")
    ax.set_xlabel("seconds from the change (window of 500 ms starting there)")
    ax.set_ylabel("hit rate (%)")
    ax.grid(True, lw=0.3, alpha=0.5)
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    ax.set_title("A 4 -> 5 migration rolled out to 8 processes (kFast), 64 shared keys")
    fig.tight_layout()
    save(plt, fig, results_dir, ROLLOUT_CHART)
    return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results_dir = sys.argv[1]
    try:
        plt = setup()
    except ImportError as error:
        print(f"matplotlib is not available to {sys.executable} ({error}): install python3-matplotlib")
        return 1
    drawn, problems = [], []
    for name, draw in ((BALANCE_CHART, balance_chart), (HIT_RATE_CHART, hit_rate_chart),
                       (RESIZE_TIME_CHART, resize_time_chart), (ROLLOUT_CHART, rollout_chart)):
        try:
            problem = draw(plt, results_dir)
        except Exception as error:  # one broken chart must not cost the other
            problem = f"{type(error).__name__}: {error}"
        if problem:
            problems.append(f"{name}: {problem}")
        else:
            drawn.append(name)
    with open(os.path.join(results_dir, "charts.txt"), "w") as handle:
        handle.writelines(name + "\n" for name in drawn)
    for problem in problems:
        print("not drawn: " + problem)
    if not drawn:
        os.remove(os.path.join(results_dir, "charts.txt"))
        print("no chart drawn: " + "; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
