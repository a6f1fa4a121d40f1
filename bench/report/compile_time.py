# SPDX-License-Identifier: MIT
"""The compile time of a user's translation unit (compile-time/compile_time.json,
written by bench/compile_time.sh): each unit's best user CPU time of the
compiler as a ratio to the reference unit's, held to the unit's target, and the
text size of the unit linked into a program. Units the run could not measure
(compiled mode before the headers offer it) are shown as n/a and not judged."""

from .common import count, ratio, verdict

PATH = ("compile-time", "compile_time.json")
REFERENCE = "reference"


def judge(seconds, reference, target):
    """(ratio, met) of one unit: met when seconds / reference <= target; met is
    None without a target, and both are None when the unit was not measured."""
    if seconds is None or not reference:
        return None, None
    r = seconds / reference
    return r, (None if target is None else r <= target)


def compile_time_section(rep, doc):
    """The table; returns [(target, met)] for the units measured against a target."""
    if doc is None:
        rep.say("Compile time: no results (compile-time/compile_time.json missing)")
        rep.say()
        return []
    units = doc.get("units", [])
    reference = next((u.get("seconds") for u in units if u["unit"] == REFERENCE), None)
    text_rows, csv_rows, targets = [], [], []
    for u in units:
        seconds, target, text = u.get("seconds"), u.get("target"), u.get("text_bytes")
        r, met = judge(seconds, reference, target)
        if target is None:
            result = "-"
        elif met is None:
            result = "n/a"
        else:
            result = verdict(met)
            targets.append((f"compile time {u['unit']} {r:.2f}x", met))
        what = u.get("what")
        text_rows.append([f"{u['unit']}: {what}" if what else u["unit"],
                          "n/a" if seconds is None else f"{seconds:.3f}", "n/a" if r is None else ratio(r),
                          "-" if target is None else f"<= {target:.1f}x", result,
                          "n/a" if text is None else count(text)])
        csv_rows.append({"unit": u["unit"], "seconds": "" if seconds is None else seconds,
                         "ratio": "" if r is None else r, "target": "" if target is None else target,
                         "met": "" if met is None else met, "text_bytes": "" if text is None else text,
                         "all_seconds": " ".join(f"{s:.3f}" for s in u.get("all_seconds", []))})
    notes = [f"{doc.get('compiler', '?')}: {doc.get('command', '?')}; the best user CPU time of "
             f"{doc.get('rounds', '?')} interleaved rounds (each compiles every unit once, in an order that "
             "rotates), as a ratio to the reference unit's; text bytes: size(1) text of the unit linked with "
             "libmemcached.",
             f"commit {doc.get('commit', '?')}, {doc.get('date', '?')}, {doc.get('cpus', '?')} CPUs, "
             f"load average {doc.get('load_average', '?')}."]
    share = doc.get("template_instantiation_share")
    if share is not None:
        notes.append(f"umbrella unit: {100 * share:.0f}% of the compiler's time in template instantiation "
                     "(-ftime-report).")
    mode = doc.get("compiled_mode", "")
    if mode and mode != "measured":
        notes.append(f"compiled mode: {mode}.")
    rep.table("Compile time of a user's translation unit",
              ["unit", "seconds", "ratio", "target", "result", "text bytes"],
              text_rows, "compile_time.csv", csv_rows, notes)
    return targets
