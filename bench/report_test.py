#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Runs bench/report on the saved result sets under bench/testdata/ and
compares what it prints, summary.txt and every CSV it writes with the
expected files there.

  testdata/results/           one run of bench/run.sh (callgrind files cut down
                              to the lines the report reads)
  testdata/summary.expected   the report of that run
  testdata/expected/*.csv     the tables of that run
  testdata/summary_empty.expected  the report of an empty results directory
  testdata/resize_time/       a small made-up resize_time.json with read-through
                              arms, so that the targets are judged, and its
                              report and CSV files
  testdata/client_migration/  one run of the client benchmark's migration rows
                              (--benchmark_filter=migration, and its callgrind
                              files cut down), its report and CSV files
  testdata/client_beside/     one run of the client benchmark's get, set and
                              get_multi (its callgrind files cut down): the
                              clients judged beside ketama (a fleet member's,
                              one counting its hot keys), its report and CSV
                              files
  testdata/migration_race/    one run of the migration race benchmark
                              (migration_race.json), and its report and CSV
                              files
  testdata/coordination/      one run of the coordination benchmark (etcd at
                              rest, a phase change reaching 50 members), and its
                              report and CSV files
  testdata/rollout/           one run of the rollout benchmark (coordinated and
                              uncoordinated), and its report and CSV files
  testdata/stampede/          one run of the stampede benchmark (without and
                              with a lease), and its report and CSV files
  testdata/hot_keys/          one run of the hot-key sketch benchmark (cost
                              and accuracy at three samplings), and its
                              report and CSV files
  testdata/codecs/            one run of the codec benchmark against PHP
                              (codecs.json), and its report and CSV files
  testdata/compile_time/      one run of bench/compile_time.sh
                              (compile-time/compile_time.json, compiled mode
                              n/a), and its report and CSV files

Usage: python3 bench/report_test.py (standard library only);
python3 bench/report_test.py --regenerate rewrites the expected files from
what the report prints now (after a change to a table made on purpose).
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BENCH = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(BENCH, "testdata")
RESIZE_TIME = os.path.join(TESTDATA, "resize_time")
CLIENT_MIGRATION = os.path.join(TESTDATA, "client_migration")
CLIENT_BESIDE = os.path.join(TESTDATA, "client_beside")
MIGRATION_RACE = os.path.join(TESTDATA, "migration_race")
COORDINATION = os.path.join(TESTDATA, "coordination")
ROLLOUT = os.path.join(TESTDATA, "rollout")
STAMPEDE = os.path.join(TESTDATA, "stampede")
HOT_KEYS = os.path.join(TESTDATA, "hot_keys")
CODECS = os.path.join(TESTDATA, "codecs")
COMPILE_TIME = os.path.join(TESTDATA, "compile_time")


class Quiet:
    """A report that prints nothing, for calling one section on a made-up document."""

    def say(self, *_):
        pass

    def table(self, *_, **__):
        pass


def run_report(results):
    """Runs the report as bench/run.sh does, on a copy of `results` (None: an
    empty directory) named results/ in a temporary working directory, so that
    its "Files:" line does not depend on where the checkout is."""
    work = tempfile.mkdtemp(prefix="memshard-report-")
    target = os.path.join(work, "results")
    if results is None:
        os.mkdir(target)
    else:
        shutil.copytree(results, target)
    done = subprocess.run([sys.executable, os.path.join(BENCH, "report"), "results"], cwd=work,
                          capture_output=True, text=True, check=False)
    return work, target, done


def read(path):
    with open(path, newline="") as handle:
        return handle.read()


class ReportTest(unittest.TestCase):
    def run_on(self, results, expected):
        work, target, done = run_report(results)
        self.addCleanup(shutil.rmtree, work)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stderr, "")
        want = read(expected)
        self.assertEqual(done.stdout, want)
        self.assertEqual(read(os.path.join(target, "summary.txt")), want)
        return target

    def check_csv(self, target, expected_dir):
        expected = sorted(name for name in os.listdir(expected_dir) if name.endswith(".csv"))
        written = sorted(name for name in os.listdir(target) if name.endswith(".csv"))
        self.assertEqual(written, expected)
        for name in expected:
            with self.subTest(csv=name):
                self.assertEqual(read(os.path.join(target, name)), read(os.path.join(expected_dir, name)))

    def test_saved_run(self):
        target = self.run_on(os.path.join(TESTDATA, "results"),
                             os.path.join(TESTDATA, "summary.expected"))
        self.check_csv(target, os.path.join(TESTDATA, "expected"))

    def test_resize_time_targets(self):
        target = self.run_on(os.path.join(RESIZE_TIME, "results"),
                             os.path.join(RESIZE_TIME, "summary.expected"))
        self.check_csv(target, os.path.join(RESIZE_TIME, "expected"))

    def test_client_migration_targets(self):
        target = self.run_on(os.path.join(CLIENT_MIGRATION, "results"),
                             os.path.join(CLIENT_MIGRATION, "summary.expected"))
        self.check_csv(target, os.path.join(CLIENT_MIGRATION, "expected"))

    def test_client_migration_round_trips_are_judged_exactly(self):
        """One request more or less than the goal, anywhere, misses the target."""
        for counter, value, missed in (
                ("hit_extra_round_trips", 1, "client migration hit: 0.01 extra round trips per call"),
                ("hit_old_owner_gets", 1, "client migration hit: 0 extra round trips per call, 0.01 on old owners"),
                ("moved_miss_extra_round_trips", 99, "client migration moved_miss: 0.99 extra round trips"),
                ("moved_miss_old_owner_gets", 101, "client migration moved_miss: 1 extra round trips per call, "
                                                   "1.01 on old owners"),
                ("same_owner_miss_extra_round_trips", 1, "client migration same_owner_miss: 0.01 extra")):
            with self.subTest(counter=counter):
                source = tempfile.mkdtemp(prefix="memshard-report-src-")
                self.addCleanup(shutil.rmtree, source)
                results = os.path.join(source, "results")
                shutil.copytree(os.path.join(CLIENT_MIGRATION, "results"), results)
                path = os.path.join(results, "client.json")
                with open(path) as handle:
                    doc = json.load(handle)
                for row in doc["benchmarks"]:
                    if row["run_name"].startswith("BM_Client/migration_round_trips"):
                        row[counter] = value
                with open(path, "w") as handle:
                    json.dump(doc, handle)
                work, _, done = run_report(results)
                self.addCleanup(shutil.rmtree, work)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("Targets met: 3 of 4; missed: " + missed, done.stdout)

    def test_client_migration_hit_time_is_judged(self):
        source = tempfile.mkdtemp(prefix="memshard-report-src-")
        self.addCleanup(shutil.rmtree, source)
        results = os.path.join(source, "results")
        shutil.copytree(os.path.join(CLIENT_MIGRATION, "results"), results)
        path = os.path.join(results, "client.json")
        with open(path) as handle:
            doc = json.load(handle)
        for row in doc["benchmarks"]:
            if row["run_name"].startswith("BM_Client/get_in_migration"):
                row["in_migration_ratio"] = 1.0312  # 1.031x as printed: above 1.03
        with open(path, "w") as handle:
            json.dump(doc, handle)
        work, _, done = run_report(results)
        self.addCleanup(shutil.rmtree, work)
        self.assertIn("Targets met: 3 of 4; missed: client get_in_migration in_migration / no migration "
                      "1.031x", done.stdout)
    def fleet_member_run(self, time_ratios, dumps):
        """Reports a results directory holding the saved run's client.json with a fleet member's
        counters in get and set (`time_ratios`: {op: its paired ratio to ketama}), and one
        callgrind dump per entry of `dumps`: {(op, contender): (summary, calls_alone's inclusive
        cost or None)}, each over 2000 calls. Answers what the report printed."""
        source = tempfile.mkdtemp(prefix="memshard-report-src-")
        self.addCleanup(shutil.rmtree, source)
        results = os.path.join(source, "results")
        os.makedirs(os.path.join(results, "callgrind_client"))
        with open(os.path.join(TESTDATA, "results", "client.json")) as handle:
            doc = json.load(handle)
        for row in doc["benchmarks"]:
            op = row["run_name"].split("/")[1]
            if op in time_ratios:
                row.update({"ketama_member_ns": row["ketama_ns"] * time_ratios[op], "ketama_member_keys": 1024,
                            "ketama_member_ratio": row["ketama_ratio"] * time_ratios[op],
                            "ketama_member_ratio_lo": row["ketama_ratio_lo"], "ketama_member_ratio_hi":
                            row["ketama_ratio_hi"], "ketama_member_ratio_ketama": time_ratios[op],
                            "ketama_member_ratio_ketama_lo": 0.98, "ketama_member_ratio_ketama_hi": 1.02})
        with open(os.path.join(results, "client.json"), "w") as handle:
            json.dump(doc, handle)
        for part, ((op, contender), (summary, alone)) in enumerate(sorted(dumps.items()), start=1):
            lines = ["# callgrind format", "version: 1", f"part: {part}", "",
                     f"desc: Trigger: Client Request: {op}/{contender}/2000/1", "", "positions: line",
                     "events: Ir", f"summary: {summary}", "", "fn=(1) main", "0 15"]
            if alone is not None:
                lines += ["cfn=(2) memshard::bench::client::calls_alone(memshard::bench::client::Contender "
                          "const&, unsigned long)", "calls=1 0 ", f"0 {alone}", "", "fn=(2)", "0 8"]
            with open(os.path.join(results, "callgrind_client", f"client.callgrind.{part}"), "w") as handle:
                handle.write("\n".join(lines) + "\n")
        work, _, done = run_report(results)
        self.addCleanup(shutil.rmtree, work)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout

    def test_client_fleet_member_is_judged(self):
        """Time (paired median) and the calling thread's instructions, against 1.01x as printed."""
        out = self.fleet_member_run(
            {"get": 1.004, "set": 1.0112},  # set: 1.011x as printed, above 1.01
            {("get", "ketama"): (18_800_000, 18_000_000), ("get", "ketama_member"): (18_200_000, 18_100_000),
             ("set", "ketama"): (12_700_000, 12_600_000), ("set", "ketama_member"): (12_900_000, 12_800_000)})
        self.assertRegex(out, r"\nget +time, µs/op \(paired median ratio\) +[0-9.]+ +[0-9.]+ +1\.004x +"
                              r"\[0\.980, 1\.020\] +met\n")
        # The calls' own instructions, not the dump's summary (where the member looks cheaper).
        self.assertRegex(out, r"\nget +instructions/call \(calling thread\) +9,000 +9,050 +1\.006x +met\n")
        self.assertRegex(out, r"\nset +time, µs/op \(paired median ratio\) +[0-9.]+ +[0-9.]+ +1\.011x +"
                              r"\[0\.980, 1\.020\] +MISSED\n")
        self.assertRegex(out, r"\nset +instructions/call \(calling thread\) +6,300 +6,400 +1\.016x +MISSED\n")
        self.assertRegex(out, r"Targets met: \d+ of \d+; missed: [^\n]*client fleet member set / plain client: "
                              r"time 1\.011x; client fleet member set / plain client: instructions 1\.016x\n")
        self.assertNotIn("client fleet member get", out.split("Targets met")[1])

    def test_client_fleet_member_without_calls_alone(self):
        """Dumps without calls_alone: the whole process's instructions, judged the same way."""
        out = self.fleet_member_run({}, {("get", "ketama"): (20_000_000, None),
                                         ("get", "ketama_member"): (20_100_000, None)})
        self.assertRegex(out, r"\nget +instructions/call \(whole process\) +10,000 +10,050 +1\.005x +met\n")
        self.assertNotIn("time, µs/op", out)

    def test_resize_time_vs_direct_judge(self):
        """T3: every window after a growth at least the direct switch's same window - 0.5 pp."""
        sys.path.insert(0, BENCH)
        from report.resize_time import judge_vs_direct

        def run(*after):
            row = {"windows": 2 + len(after), "resize_window": 2, "servers_before": 4, "servers_after": 5}
            for w, rate in enumerate((0.84, 0.84) + after):
                row.update({f"w{w:03d}_hit_rate": rate, f"w{w:03d}_db_reads": 0, f"w{w:03d}_requests": 0,
                            f"w{w:03d}_seconds": 0})
            return row

        direct = run(0.80, 0.88, 0.884)
        self.assertEqual(judge_vs_direct(run(0.85, 0.879, 0.884), direct), ("-0.1 pp (window 1)", True))
        self.assertEqual(judge_vs_direct(run(0.85, 0.875, 0.884), direct), ("-0.5 pp (window 1)", True))
        self.assertEqual(judge_vs_direct(run(0.85, 0.88, 0.858), direct), ("-2.6 pp (window 2)", False))
        self.assertEqual(judge_vs_direct(run(0.80, 0.88, 0.884), direct), ("+0.0 pp (window 0)", True))
        self.assertEqual(judge_vs_direct(run(0.85, 0.88, 0.884), None), ("no direct switch", None))

    def test_client_beside_ketama(self):
        target = self.run_on(os.path.join(CLIENT_BESIDE, "results"),
                             os.path.join(CLIENT_BESIDE, "summary.expected"))
        self.check_csv(target, os.path.join(CLIENT_BESIDE, "expected"))
        with open(os.path.join(target, "client_hot_keys.csv"), newline="") as handle:
            rows = list(csv.DictReader(handle))
        judged = [row["operation"] for row in rows if row["goal"]]
        self.assertEqual(judged, ["get", "get"])  # hot keys: time and instructions of a get only

    def test_migration_race_targets(self):
        target = self.run_on(os.path.join(MIGRATION_RACE, "results"),
                             os.path.join(MIGRATION_RACE, "summary.expected"))
        self.check_csv(target, os.path.join(MIGRATION_RACE, "expected"))

    def test_coordination_targets(self):
        target = self.run_on(os.path.join(COORDINATION, "results"),
                             os.path.join(COORDINATION, "summary.expected"))
        self.check_csv(target, os.path.join(COORDINATION, "expected"))

    def test_rollout_targets(self):
        target = self.run_on(os.path.join(ROLLOUT, "results"), os.path.join(ROLLOUT, "summary.expected"))
        self.check_csv(target, os.path.join(ROLLOUT, "expected"))

    def test_stampede_targets(self):
        target = self.run_on(os.path.join(STAMPEDE, "results"), os.path.join(STAMPEDE, "summary.expected"))
        self.check_csv(target, os.path.join(STAMPEDE, "expected"))

    def test_hot_keys(self):
        target = self.run_on(os.path.join(HOT_KEYS, "results"), os.path.join(HOT_KEYS, "summary.expected"))
        self.check_csv(target, os.path.join(HOT_KEYS, "expected"))

    def test_hot_keys_judge(self):
        """The cost target is judged at the default sampling only, on the time per call."""
        sys.path.insert(0, BENCH)
        from report.hot_keys import hot_keys_section

        def judged(ns_at_8, ns_at_1):
            rows = [{"name": f"BM_HotKeySketch/record/{every}", "run_name": f"BM_HotKeySketch/record/{every}",
                     "real_time": ns, "time_unit": "ns"} for every, ns in (("1", ns_at_1), ("8", ns_at_8))]
            return [met for _, met in hot_keys_section(Quiet(), {"benchmarks": rows})]

        self.assertEqual(judged(49.9, 80.0), [True])
        self.assertEqual(judged(50.1, 10.0), [False])

    def test_stampede_judge(self):
        """A lease run that loaded twice in one expiry, or whose readers waited too long, misses."""
        sys.path.insert(0, BENCH)
        from report.stampede import stampede_section

        def lease(max_loads, p99, timeouts=0):
            row = {"name": "BM_Stampede/lease/iterations:1", "run_name": "BM_Stampede/lease", "expiries": 20,
                   "loads": 20, "loads_per_expiry": 1.0, "max_loads": max_loads, "calls": 1000,
                   "episode_calls": 100, "episode_p50_ms": 50, "episode_p99_ms": p99, "episode_max_ms": p99,
                   "all_p99_ms": p99, "timeouts": timeouts, "not_stored": 0, "errors": 0}
            doc = {"context": {"memshard_stampede_load_ms": "50"}, "benchmarks": [row]}
            return [met for _, met in stampede_section(Quiet(), doc)]

        self.assertEqual(lease(1, 59.9), [True, True, True])
        self.assertEqual(lease(2, 59.9), [False, True, True])
        self.assertEqual(lease(1, 60.1), [True, False, True])
        self.assertEqual(lease(1, 50, timeouts=1), [True, True, False])

    def test_migration_race_judge(self):
        sys.path.insert(0, BENCH)
        from report.migration_race import judge

        def met(arm, stale, hits):
            return judge(arm, {"stale": stale, "hits": hits, "stale_rate": stale / hits if hits else 0})[3]

        self.assertTrue(met("strict", 0, 50_000))
        self.assertFalse(met("strict", 1, 50_000))
        self.assertTrue(met("fast", 1, 10_000))
        self.assertFalse(met("fast", 2, 10_000))
        self.assertFalse(met("fast", 0, 0))
        self.assertTrue(met("naive", 1, 10_000))
        self.assertFalse(met("naive", 0, 10_000))

    def test_codecs(self):
        target = self.run_on(os.path.join(CODECS, "results"), os.path.join(CODECS, "summary.expected"))
        self.check_csv(target, os.path.join(CODECS, "expected"))

    def test_codecs_without_php(self):
        """A run without PHP: memshard's figures alone, "-" where PHP's would be."""
        source = tempfile.mkdtemp(prefix="memshard-report-src-")
        self.addCleanup(shutil.rmtree, source)
        results = os.path.join(source, "results")
        shutil.copytree(os.path.join(CODECS, "results"), results)
        path = os.path.join(results, "codecs.json")
        with open(path) as handle:
            doc = json.load(handle)
        doc["context"]["memshard_codecs_php"] = "none: /usr/bin/php not found"
        for row in doc["benchmarks"]:
            for name in [k for k in row if k.startswith("php_") or "_vs_php_" in k]:
                del row[name]
        with open(path, "w") as handle:
            json.dump(doc, handle)
        work, _, done = run_report(results)
        self.addCleanup(shutil.rmtree, work)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("PHP: none: /usr/bin/php not found.", done.stdout)
        self.assertRegex(done.stdout, r"zlib encode +gzcompress\(\) +[0-9.]+ +- +[0-9,]+ +- +-\n")
        self.assertRegex(done.stdout, r"FastLZ encode \(in set\) +[0-9.]+ +- +[0-9,]+ +- +-\n")

    def test_compile_time(self):
        target = self.run_on(os.path.join(COMPILE_TIME, "results"),
                             os.path.join(COMPILE_TIME, "summary.expected"))
        self.check_csv(target, os.path.join(COMPILE_TIME, "expected"))

    def test_compile_time_compiled_mode(self):
        """Once compiled mode is measured, its rows are judged like the others."""
        source = tempfile.mkdtemp(prefix="memshard-report-src-")
        self.addCleanup(shutil.rmtree, source)
        results = os.path.join(source, "results")
        shutil.copytree(os.path.join(COMPILE_TIME, "results"), results)
        path = os.path.join(results, "compile-time", "compile_time.json")
        with open(path) as handle:
            doc = json.load(handle)
        reference = next(u["seconds"] for u in doc["units"] if u["unit"] == "reference")
        doc["compiled_mode"] = "measured"
        for unit in doc["units"]:
            if unit["unit"] == "typed_client_compiled":
                unit.update(seconds=2.4 * reference, all_seconds=[2.4 * reference], text_bytes=4096)
            elif unit["unit"] == "make_client_compiled":
                unit.update(seconds=2.6 * reference, all_seconds=[2.6 * reference])
        with open(path, "w") as handle:
            json.dump(doc, handle)
        work, _, done = run_report(results)
        self.addCleanup(shutil.rmtree, work)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertRegex(done.stdout, r"typed_client_compiled: [^\n]* 2\.40x +<= 2\.5x +met +4,096\n")
        self.assertRegex(done.stdout, r"make_client_compiled: [^\n]* 2\.60x +<= 2\.5x +MISSED +n/a\n")
        self.assertNotIn("compiled mode:", done.stdout)
        self.assertRegex(done.stdout, r"Targets met: 1 of 5; missed: compile time umbrella [0-9.]+x; "
                                      r"compile time typed_client [0-9.]+x; compile time make_client [0-9.]+x; "
                                      r"compile time make_client_compiled 2\.60x\n")

    def test_compile_time_judge(self):
        sys.path.insert(0, BENCH)
        from report.compile_time import judge

        self.assertEqual(judge(2.0, 1.0, 2.0), (2.0, True))
        self.assertEqual(judge(2.002, 1.0, 2.0), (2.002, False))
        self.assertEqual(judge(0.5, 1.0, None), (0.5, None))
        self.assertEqual(judge(None, 1.0, 2.5), (None, None))
        self.assertEqual(judge(3.0, None, 2.0), (None, None))

    def test_empty_results(self):
        target = self.run_on(None, os.path.join(TESTDATA, "summary_empty.expected"))
        self.assertEqual(os.listdir(target), ["summary.txt"])


def regenerate():
    """Writes the expected files from the report as it is now."""
    for results, expected, expected_dir in (
            (os.path.join(TESTDATA, "results"), os.path.join(TESTDATA, "summary.expected"),
             os.path.join(TESTDATA, "expected")),
            (None, os.path.join(TESTDATA, "summary_empty.expected"), None),
            (os.path.join(RESIZE_TIME, "results"), os.path.join(RESIZE_TIME, "summary.expected"),
             os.path.join(RESIZE_TIME, "expected")),
            (os.path.join(CLIENT_MIGRATION, "results"), os.path.join(CLIENT_MIGRATION, "summary.expected"),
             os.path.join(CLIENT_MIGRATION, "expected")),
            (os.path.join(CLIENT_BESIDE, "results"), os.path.join(CLIENT_BESIDE, "summary.expected"),
             os.path.join(CLIENT_BESIDE, "expected")),
            (os.path.join(MIGRATION_RACE, "results"), os.path.join(MIGRATION_RACE, "summary.expected"),
             os.path.join(MIGRATION_RACE, "expected")),
            (os.path.join(COORDINATION, "results"), os.path.join(COORDINATION, "summary.expected"),
             os.path.join(COORDINATION, "expected")),
            (os.path.join(ROLLOUT, "results"), os.path.join(ROLLOUT, "summary.expected"),
             os.path.join(ROLLOUT, "expected")),
            (os.path.join(STAMPEDE, "results"), os.path.join(STAMPEDE, "summary.expected"),
             os.path.join(STAMPEDE, "expected")),
            (os.path.join(HOT_KEYS, "results"), os.path.join(HOT_KEYS, "summary.expected"),
             os.path.join(HOT_KEYS, "expected")),
            (os.path.join(CODECS, "results"), os.path.join(CODECS, "summary.expected"),
             os.path.join(CODECS, "expected")),
            (os.path.join(COMPILE_TIME, "results"), os.path.join(COMPILE_TIME, "summary.expected"),
             os.path.join(COMPILE_TIME, "expected"))):
        work, target, done = run_report(results)
        try:
            if done.returncode != 0:
                sys.exit(done.stderr)
            with open(expected, "w", newline="") as handle:
                handle.write(done.stdout)
            if expected_dir is not None:
                shutil.rmtree(expected_dir, ignore_errors=True)
                os.mkdir(expected_dir)
                for name in sorted(os.listdir(target)):
                    if name.endswith(".csv"):
                        shutil.copy(os.path.join(target, name), expected_dir)
        finally:
            shutil.rmtree(work)


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        unittest.main()
