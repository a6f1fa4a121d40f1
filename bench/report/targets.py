# SPDX-License-Identifier: MIT
"""The lookup targets, judged on what the lookup section measured."""

from .common import KETAMA, LM_KETAMA, pct, verdict

# Targets the lookup benchmarks are held to.
TARGET_VS_LIBMEMCACHED = 0.60  # ketama-md5-weighted at N=10 / libmemcached KETAMA_WEIGHTED
TARGET_SCALING = 1.30  # ketama-md5-weighted at N=1000 / at N=10
TARGET_SEARCH_SHARE = 0.10  # ring search alone / full md5 lookup
TARGET_BUILD_MS = 50.0  # building a 1000-server weighted ring


def targets_section(rep, data):
    """Evaluates the targets; returns [(name, met)] for the real targets."""
    if not data:
        return []
    locate, search, build, counts = data
    lines = []  # (name, measured, goal, met, value, is_target)
    k10, lm10 = locate.get((KETAMA, 10)), locate.get((LM_KETAMA, 10))
    if k10 and lm10:
        r = k10 / lm10
        lines.append(("ketama-md5-weighted lookup at N=10 / libmemcached KETAMA_WEIGHTED",
                      f"{r:.3f}x", f"<= {TARGET_VS_LIBMEMCACHED:.2f}x", r <= TARGET_VS_LIBMEMCACHED, r, True))
    ik = counts.get((KETAMA, 10, "BM_Locate"))
    ilk = counts.get((LM_KETAMA, 10, "BM_LocateLibmemcached"))
    if ik and ilk:
        r = ik / ilk
        lines.append(("  the same in instructions (callgrind, for reference)", f"{r:.3f}x",
                      f"<= {TARGET_VS_LIBMEMCACHED:.2f}x", r <= TARGET_VS_LIBMEMCACHED, r, False))
    k1000 = locate.get((KETAMA, 1000))
    if k10 and k1000:
        r = k1000 / k10
        lines.append(("ketama-md5-weighted lookup at N=1000 / at N=10", f"{r:.3f}x",
                      f"<= {TARGET_SCALING:.2f}x", r <= TARGET_SCALING, r, True))
    shares = {n: search[n] / locate[(KETAMA, n)] for n in search if locate.get((KETAMA, n))}
    if shares:
        worst = max(shares, key=shares.get)
        r = shares[worst]
        lines.append((f"ring search alone / full md5 lookup (worst N: {worst})", pct(r, 1),
                      f"<= {pct(TARGET_SEARCH_SHARE, 0)}", r <= TARGET_SEARCH_SHARE, r, True))
    b = build.get((KETAMA, 1000))
    if b is not None:
        lines.append(("build a 1000-server weighted ring", f"{b:.1f} ms", f"< {TARGET_BUILD_MS:.0f} ms",
                      b < TARGET_BUILD_MS, b, True))
    rep.table("Targets (all from this run)", ["target", "measured", "goal", "result"],
              [[t, m, g, verdict(ok) if real else ("below" if ok else "above")]
               for t, m, g, ok, _, real in lines],
              "targets.csv",
              [{"target": t.strip(), "measured": v, "goal": g, "met": ok}
               for t, _, g, ok, v, real in lines if real])
    return [(t, ok) for t, _, _, ok, _, real in lines if real]
