# SPDX-License-Identifier: MIT
"""What every section of the report shares: loading the benchmark JSON,
picking its rows, formatting numbers, the placement labels, and Report, which
collects the text and writes one CSV per table."""

import csv
import json
import os
import re

KETAMA = "ketama-md5-weighted"
LM_KETAMA = "libmemcached:ketama-weighted"
LM_MODULA = "libmemcached:modula"
OAAT = "modulo-one_at_a_time"


class Report:
    """Collects the text report and writes one CSV per table."""

    def __init__(self, results_dir):
        self.results_dir = results_dir
        self.lines = []

    def say(self, text=""):
        self.lines.append(text)

    def table(self, title, headers, rows, csv_name, csv_rows, notes=()):
        """Prints an aligned table (text in `rows`) and writes `csv_rows` (raw values)."""
        self.say(title)
        self.say("=" * len(title))
        widths = [len(h) for h in headers]
        for row in rows:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))

        def fmt(cells):
            out = []
            for i, cell in enumerate(cells):
                # The first column is text (left); the others are numbers (right).
                out.append(cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]))
            return "  ".join(out).rstrip()

        self.say(fmt(headers))
        self.say("  ".join("-" * w for w in widths))
        for row in rows:
            self.say(fmt(row))
        for note in notes:
            self.say(note)
        self.say()
        path = os.path.join(self.results_dir, csv_name)
        with open(path, "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(csv_rows[0].keys()) if csv_rows else headers)
            for row in csv_rows:
                writer.writerow(list(row.values()))

    def csv(self, csv_name, csv_rows):
        """Writes `csv_rows` (raw values, a header from the first) with no table in the text."""
        with open(os.path.join(self.results_dir, csv_name), "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(list(csv_rows[0].keys()))
            for row in csv_rows:
                writer.writerow(list(row.values()))

    def text(self):
        return "\n".join(self.lines) + "\n"


def load(path):
    if not os.path.exists(path):
        return None
    with open(path) as handle:
        return json.load(handle)


def rows_of(doc):
    """The benchmark rows to use: medians when the run had repetitions."""
    if doc is None:
        return []
    rows = doc.get("benchmarks", [])
    medians = [r for r in rows if r.get("run_type") == "aggregate" and r.get("aggregate_name") == "median"]
    if medians:
        return medians
    return [r for r in rows if r.get("run_type", "iteration") == "iteration"]


def failed(rows):
    return [r for r in rows if r.get("error_occurred")]


def ns_per_item(row):
    rate = row.get("items_per_second")
    return 1e9 / rate if rate else float("nan")


def to_ms(row):
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[row.get("time_unit", "ns")]
    return row["cpu_time"] * scale


def family(row):
    """BM_Locate<KetamaMd5Weighted>/servers:10 -> BM_Locate."""
    return re.split(r"[</]", row.get("run_name", row["name"]))[0]


def pct(x, digits=2):
    return f"{100 * x:.{digits}f}%"


def share(x):
    """A percentage with enough digits for small shares (0.0100%, 0.105%, 9.11%)."""
    if x != 0 and abs(x) < 0.001:
        return pct(x, 4)
    if x != 0 and abs(x) < 0.01:
        return pct(x, 3)
    return pct(x)


def count(x):
    return f"{int(round(x)):,}"


def label_of(row):
    """The placement label of a row: its label, else the template argument."""
    return row.get("label") or row.get("run_name", row["name"]).split("/")[0]


def ratio(x):
    return f"{x:.2f}x"


def verdict(ok):
    return "met" if ok else "MISSED"
