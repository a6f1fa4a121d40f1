# SPDX-License-Identifier: MIT
"""One line on the charts bench/plot.py drew (charts.txt), or why there are
none (plot.log)."""

import os

CHART_NOTES = {
    "balance-per-server-load.svg": "keys per server / mean, servers ranked, modulo vs ketama at several "
                                   "points per server",
    "hit-rate-after-resize.svg": "hit rate after adding servers, measured vs theory, modulo vs rings",
    "resize-through-time.svg": "hit rate and database reads per window through a resize, one line per arm",
    "rollout-through-time.svg": "hit rate per 500 ms window of a migration reaching 8 processes, coordinated "
                                "through etcd or not",
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
