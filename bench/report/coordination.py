# SPDX-License-Identifier: MIT
"""Following a fleet in etcd (coordination.json): the requests idle members put on etcd, and how
fast a phase change reaches 50 members and is acknowledged by all, with their targets."""

from .common import verdict

TARGET_REST_RATE = 1.0  # requests per member and second, at rest
TARGET_SERVED_P50_MS = 100.0  # a phase change reaches every member, median on loopback


def coordination_section(rep, doc):
    """The two tables and their targets; returns [(target, met)]."""
    if doc is None:
        rep.say("Coordination through etcd: no results (coordination.json missing)")
        rep.say()
        return []
    rows = {r.get("run_name", r["name"]).split("/")[0]: r for r in doc.get("benchmarks", [])}
    targets, target_rows, target_csv = [], [], []
    rest = rows.get("BM_EtcdAtRest")
    if rest is not None and not rest.get("error_occurred"):
        members = rest.get("run_name", rest["name"]).split("/")[1].split(":")[-1]
        rate = float(rest["per_member_per_second"])
        rep.table("Coordination through etcd: members at rest",
                  ["members", "lease TTL", "seconds", "requests to etcd", "per member and second"],
                  [[members, f"{rest['lease_ttl_s']:.0f} s", f"{rest['seconds']:.0f}", f"{rest['requests']:.0f}",
                    f"{rate:.3f}"]],
                  "coordination_rest.csv",
                  [{"members": members, "lease_ttl_s": rest["lease_ttl_s"], "seconds": rest["seconds"],
                    "requests": rest["requests"], "per_member_per_second": rate}],
                  notes=["requests: etcd's grpc_server_started_total over the rest (every request of its JSON "
                         "gateway, and every watch stream opened). A member keeps its lease alive and reads the "
                         "record every third of the TTL; its watch stays open."])
        met = rate <= TARGET_REST_RATE
        target_rows.append(["requests per member and second at rest", f"{rate:.3f}",
                            f"<= {TARGET_REST_RATE:g}", verdict(met)])
        target_csv.append({"target": "rest", "measured": rate, "goal": TARGET_REST_RATE, "met": met})
        targets.append(("coordination: requests per member and second at rest", met))
    elif rest is not None:
        rep.say("Coordination at rest: error: " + rest.get("error_message", ""))
    phases = rows.get("BM_PhasePropagation")
    if phases is not None and not phases.get("error_occurred"):
        members = phases.get("run_name", phases["name"]).split("/")[1].split(":")[-1]
        rep.table("Coordination through etcd: a phase change reaching every member",
                  ["members", "records", "", "p50 ms", "p99 ms", "max ms"],
                  [[members, f"{phases['records']:.0f}", "served by each member",
                    f"{phases['served_p50_ms']:.1f}", f"{phases['served_p99_ms']:.1f}",
                    f"{phases['served_max_ms']:.1f}"],
                   [members, f"{phases['records']:.0f}", "acknowledged by the last",
                    f"{phases['acked_p50_ms']:.1f}", f"{phases['acked_p99_ms']:.1f}",
                    f"{phases['acked_max_ms']:.1f}"]],
                  "coordination_phases.csv",
                  [{"members": members, "records": phases["records"], **{
                      k: phases[k] for k in ("served_p50_ms", "served_p99_ms", "served_max_ms",
                                             "acked_p50_ms", "acked_p99_ms", "acked_max_ms")}}],
                  notes=["In-process members on a local etcd, the fleet reconfigured back and forth (phases 1, 3, "
                         "4, steady), each record written once all acknowledged the one before. served: from the "
                         "record's write until a member serves it (FleetMember::record(), polled every 200 us), "
                         "per member and record; acknowledged: until the last member's acknowledgement is in "
                         "etcd (what a coordinator waits for), per record."])
        p50 = float(phases["served_p50_ms"])
        met = p50 <= TARGET_SERVED_P50_MS
        target_rows.append([f"a phase change served by each of {members} members, median", f"{p50:.1f} ms",
                            f"<= {TARGET_SERVED_P50_MS:g} ms", verdict(met)])
        target_csv.append({"target": "served_p50_ms", "measured": p50, "goal": TARGET_SERVED_P50_MS, "met": met})
        targets.append(("coordination: a phase change reaches every member (median)", met))
    elif phases is not None:
        rep.say("Coordination phases: error: " + phases.get("error_message", ""))
    if target_rows:
        rep.table("Targets of the coordination", ["target", "measured", "goal", "result"], target_rows,
                  "coordination_targets.csv", target_csv)
    return targets
