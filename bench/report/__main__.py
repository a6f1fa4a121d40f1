# SPDX-License-Identifier: MIT
"""Summarises one run of memshard's benchmarks.

Reads the Google Benchmark JSON files that bench/run.sh wrote into a results
directory (locate.json, balance.json, resize.json, properties.json,
hit_rate.json, resize_time.json, client.json, fleet.json, migration_race.json, stampede.json, hot_keys.json,
coordination.json, rollout.json, codecs.json, compile-time/compile_time.json, and callgrind/*.json + *.callgrind and
callgrind_client/client.callgrind.<n> when instruction counts were taken), and
charts.txt or plot.log from bench/plot.py, prints one report on stdout, and
writes it to summary.txt with one CSV file per table.

Usage: python3 bench/report RESULTS_DIR
"""

import os
import sys

if not __package__:
    # Run as a directory (python3 bench/report): import the package from bench/.
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    __package__ = "report"  # noqa: A001 (lets the relative imports below resolve)

from .balance import balance_section  # noqa: E402
from .charts import charts_section  # noqa: E402
from .client import client_callgrind, client_section  # noqa: E402
from .codecs import codecs_section  # noqa: E402
from .compile_time import PATH as COMPILE_TIME_PATH, compile_time_section  # noqa: E402
from .common import Report, failed, load, rows_of  # noqa: E402
from .fleet import fleet_section  # noqa: E402
from .hit_rate import hit_rate_section  # noqa: E402
from .lookup import callgrind_counts, lookup_section  # noqa: E402
from .coordination import coordination_section  # noqa: E402
from .rollout import rollout_section  # noqa: E402
from .migration_race import migration_race_section  # noqa: E402
from .stampede import stampede_section  # noqa: E402
from .hot_keys import hot_keys_section  # noqa: E402
from .movement import movement_section  # noqa: E402
from .properties import properties_section  # noqa: E402
from .resize_time import first_window_rows, resize_time_section  # noqa: E402
from .targets import targets_section  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results_dir = sys.argv[1]
    rep = Report(results_dir)
    locate = load(os.path.join(results_dir, "locate.json"))
    context = (locate or {}).get("context", {})
    rep.say("memshard benchmark report")
    rep.say("=========================")
    if context:
        rep.say(f"{context.get('date', '')}  host {context.get('host_name', '?')}: "
                f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
                f"load average {', '.join(f'{x:.2f}' for x in context.get('load_avg', []))}")
        extra = [f"{k[len('memshard_'):]}={v}" for k, v in sorted(context.items()) if k.startswith("memshard_")]
        if extra:
            rep.say("run: " + ", ".join(extra))
        if context.get("library_build_type") == "debug":
            rep.say("note: Debian's libbenchmark reports itself as a debug build; memshard and the "
                    "benchmarks are built in Release.")
    rep.say()
    errors = []
    for name in ("locate", "balance", "resize", "properties", "hit_rate", "resize_time", "client", "fleet",
                 "migration_race", "stampede", "hot_keys", "coordination", "rollout", "codecs"):
        errors += [f"{name}: {r['name']}: {r.get('error_message', '')}"
                   for r in failed(rows_of(load(os.path.join(results_dir, name + ".json"))))]
    data = lookup_section(rep, locate, callgrind_counts(results_dir))
    targets = targets_section(rep, data)
    balance_section(rep, load(os.path.join(results_dir, "balance.json")))
    movement_section(rep, load(os.path.join(results_dir, "resize.json")))
    properties_section(rep, load(os.path.join(results_dir, "properties.json")))
    resize_time = load(os.path.join(results_dir, "resize_time.json"))
    targets += hit_rate_section(rep, load(os.path.join(results_dir, "hit_rate.json")),
                                first_window_rows(resize_time) if resize_time else [])
    targets += resize_time_section(rep, resize_time)
    targets += client_section(rep, load(os.path.join(results_dir, "client.json")),
                              client_callgrind(results_dir))
    fleet_section(rep, load(os.path.join(results_dir, "fleet.json")))
    targets += migration_race_section(rep, load(os.path.join(results_dir, "migration_race.json")))
    targets += stampede_section(rep, load(os.path.join(results_dir, "stampede.json")))
    targets += hot_keys_section(rep, load(os.path.join(results_dir, "hot_keys.json")))
    targets += coordination_section(rep, load(os.path.join(results_dir, "coordination.json")))
    targets += rollout_section(rep, load(os.path.join(results_dir, "rollout.json")))
    codecs_section(rep, load(os.path.join(results_dir, "codecs.json")))
    targets += compile_time_section(rep, load(os.path.join(results_dir, *COMPILE_TIME_PATH)))
    if errors:
        rep.say("Errors")
        rep.say("======")
        for e in errors:
            rep.say(e)
        rep.say()
    missed = [t for t, ok in targets if not ok]
    rep.say(f"Targets met: {len(targets) - len(missed)} of {len(targets)}"
            + (f"; missed: {'; '.join(missed)}" if missed else ""))
    charts_section(rep, results_dir)
    rep.say(f"Files: {results_dir}/ (raw JSON per benchmark, one CSV per table, summary.txt)")
    text = rep.text()
    with open(os.path.join(results_dir, "summary.txt"), "w") as handle:
        handle.write(text)
    sys.stdout.write(text)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
