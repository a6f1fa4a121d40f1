# SPDX-License-Identifier: MIT
"""ShardedClient against libmemcached and twemproxy on real memcached
(client.json): single get and set, multi-get, instructions per call
(callgrind_client/), a fleet member's client against a plain one, and the
client targets."""

import csv
import glob
import os

from .common import rows_of, verdict

# Targets the client benchmark is held to (time ratios, ShardedClient / libmemcached).
TARGET_CLIENT_SINGLE = 1.03  # single get / set against libmemcached on the same server
TARGET_CLIENT_MULTI = 1.00  # get_multi of 100 keys against (c), libmemcached's multi-server mget + fetch_result
TARGET_CLIENT_VS_TWEMPROXY = 0.50  # ShardedClient single get / the same get through twemproxy
# A fleet member's client (ketama_member) / the plain client beside it (ketama), single get and
# set: the paired median time ratio and the instructions per call, each.
TARGET_FLEET_MEMBER = 1.01
# During a live migration (BM_Client/get_in_migration, miss_in_migration, migration_round_trips).
TARGET_MIGRATION_HIT = 1.03  # a hit in the window / the same hit without a migration
TARGET_MIGRATION_MOVED_MISS = 2.00  # a moved-key miss / a plain get (informational, not judged)
# Extra round trips per call, counted by the servers (cmd_get), judged exactly; and the
# requests reaching the old owners per call (moved keys only).
MIGRATION_ROUND_TRIPS = [
    ("hit", "hit on the new owner (a moved key)", 0, 0),
    ("moved_miss", "miss of a moved key (on neither owner)", 1, 1),
    ("same_owner_miss", "miss of a key whose owner did not change", 0, None),
]


# The client benchmark's contenders of get and set: (counter prefix, label).
CLIENT_SINGLE = [
    ("ketama", "(a)  ShardedClient ketama-md5-weighted, keys on every server"),
    ("ketama_member", "(a)  the same as a fleet member's client (served, fence gate checked)"),
    ("ketama_hot_keys", "(a)  the same counting its hot keys (ClientOptions::hot_keys)"),
    ("modulo", "(a)  ShardedClient modulo-crc32, keys on every server"),
    ("ketama_same", "(a') ShardedClient ketama-md5-weighted, keys on (b)'s server"),
    ("modulo_same", "(a') ShardedClient modulo-crc32, keys on (b)'s server"),
    ("libmemcached_all", "(c)  libmemcached KETAMA_WEIGHTED, every server in one memcached_st"),
    ("twemproxy", "(d)  libmemcached through twemproxy (nutcracker), keys on every server"),
    ("libmemcached", "(b)  libmemcached, a memcached_st holding (b)'s server alone"),
]
# The migration contenders: (benchmark, counter prefix, label).
CLIENT_MIGRATION = [
    ("get_in_migration", "in_migration", "get, a hit, in a migration window"),
    ("get_in_migration", "no_migration", "get, a hit, no migration (the baseline)"),
    ("miss_in_migration", "moved_miss", "get, a miss of a moved key, in the window"),
    ("miss_in_migration", "same_owner_miss", "get, a miss of a key that did not move, in the window"),
    ("miss_in_migration", "miss", "get, a miss, no migration"),
    ("miss_in_migration", "hit", "get, a hit, no migration (the baseline)"),
]
CLIENT_MIGRATION_BASELINE = {"get_in_migration": "no_migration", "miss_in_migration": "hit"}

CLIENT_MULTI = [
    ("ketama", "(a)  ShardedClient ketama-md5-weighted get_multi, keys on every server"),
    ("ketama_visit", "(a)  ShardedClient ketama-md5-weighted visit_multi, keys on every server"),
    ("ketama_member", "(a)  the same get_multi as a fleet member's client (served, fence gate checked)"),
    ("ketama_hot_keys", "(a)  the same get_multi counting its hot keys (ClientOptions::hot_keys)"),
    ("ketama_per_server", "(a)  ShardedClient ketama-md5-weighted get_multi, MultiGetMode::kPerServer"),
    ("modulo", "(a)  ShardedClient modulo-crc32 get_multi, keys on every server"),
    ("ketama_same", "(a') ShardedClient ketama-md5-weighted get_multi, keys on (b)'s server"),
    ("ketama_same_visit", "(a') ShardedClient ketama-md5-weighted visit_multi, keys on (b)'s server"),
    ("modulo_same", "(a') ShardedClient modulo-crc32 get_multi, keys on (b)'s server"),
    ("libmemcached_all", "(c)  libmemcached KETAMA_WEIGHTED mget, every server in one memcached_st"),
    ("twemproxy", "(d)  libmemcached mget through twemproxy (nutcracker), keys on every server"),
    ("libmemcached", "(b)  libmemcached mget, a memcached_st holding (b)'s server alone"),
]


CLIENT_SET_MULTI = [
    ("ketama_set_multi", "ShardedClient ketama-md5-weighted set_multi"),
    ("ketama_set_loop", "ShardedClient ketama-md5-weighted set, key after key"),
    ("libmemcached_all", "libmemcached memcached_set, key after key (every server, KETAMA_WEIGHTED)"),
]


def client_callgrind(results_dir):
    """{(op, contender): (instructions per call, keys per call)} from callgrind_client/."""
    counts = {}
    prefix = "desc: Trigger: Client Request: "
    for path in glob.glob(os.path.join(results_dir, "callgrind_client", "client.callgrind.*")):
        name, total = None, None
        with open(path) as handle:
            for line in handle:
                if line.startswith(prefix):
                    name = line[len(prefix):].strip()
                elif line.startswith("summary:"):
                    total = int(line.split()[1])
        if name is None or total is None or name.count("/") != 3:
            continue
        op, contender, calls, keys = name.split("/")
        counts[(op, contender)] = (total / int(calls), int(keys))
    return counts


# The function of the client benchmark whose inclusive cost in a dump is what the contender's
# calls cost the calling thread (client/paired_statistics.hpp).
CALLS_ALONE = "memshard::bench::client::calls_alone("


def calling_thread_callgrind(results_dir):
    """{(op, contender): instructions per call of the calling thread} from callgrind_client/: the
    inclusive cost of calls_alone in each dump, without what other threads did meanwhile (which
    the dump's summary holds). Dumps without calls_alone are left out."""
    counts = {}
    prefix = "desc: Trigger: Client Request: "
    for path in glob.glob(os.path.join(results_dir, "callgrind_client", "client.callgrind.*")):
        name, names, positions, callee, after_calls, total = None, {}, 1, None, False, None
        with open(path) as handle:
            for line in handle:
                if after_calls:
                    # The line after calls=: the call's position(s), then its inclusive costs (Ir first).
                    after_calls = False
                    if callee is not None and CALLS_ALONE in names.get(callee, ""):
                        total = (total or 0) + int(line.split()[positions])
                elif line.startswith(prefix):
                    name = line[len(prefix):].strip()
                elif line.startswith("positions:"):
                    positions = len(line.split()) - 1
                elif line.startswith(("fn=(", "cfn=(")):
                    ident, _, function = line.split("=", 1)[1].partition(")")
                    if function.strip():
                        names[ident] = function.strip()
                    if line.startswith("cfn="):
                        callee = ident
                elif line.startswith("calls="):
                    after_calls = True
        if name is None or total is None or name.count("/") != 3:
            continue
        op, contender, calls, _ = name.split("/")
        counts[(op, contender)] = total / int(calls)
    return counts


def judge_against_c(targets, op, name, ref, goal):
    """Judges contender `name`'s ratio to (c) when (c) is its like-for-like
    reference (ketama: (c) places the same keys on the same servers), appending
    to `targets`; returns the verdict text."""
    if not name.startswith("ketama"):
        return "(other placement)"
    if name == "ketama_per_server":
        return "(an option: shown, not judged)"
    ok = round(ref, 3) <= goal
    targets.append((op, name, "(c)", ref, goal, ok))
    return verdict(ok) + " (vs c)"


def client_section(rep, doc, counts):
    """The client tables; returns [(target, met)] and writes client_targets.csv."""
    if doc is None:
        rep.say("ShardedClient against libmemcached: no results (client.json missing)")
        rep.say()
        return []
    context = doc.get("context", {})
    rows = {r["run_name"].split("/")[1]: r for r in rows_of(doc) if r.get("run_name", "").startswith("BM_Client/")}
    source = context.get("memshard_client_server_source", "?")
    version = context.get("memshard_client_memcached_version", "")
    servers_note = (f"servers ({'started locally' if source == 'local' else source}"
                    f"{', ' + version if version else ''}): {context.get('memshard_client_servers', '?')}; "
                    f"(b)'s server is the first.")
    targets = []  # judged on the ratio as printed (3 decimals)

    def interval(r, prefix):
        return f"[{r[prefix + '_lo']:.3f}, {r[prefix + '_hi']:.3f}]"

    # Single get and set.
    text_rows, csv_rows, rounds = [], [], None
    for op in ("get", "set"):
        r = rows.get(op)
        if r is None:
            continue
        if r.get("error_occurred"):
            text_rows.append([f"{op}: error: " + r.get("error_message", "")] + [""] * 7)
            continue
        rounds = int(r.get("rounds", 0))
        for name, label in CLIENT_SINGLE:
            if name + "_ns" not in r:
                continue
            us = r[name + "_ns"] / 1000
            is_base = name == "libmemcached"
            verdict_text, ref = "", None
            if name.endswith("_same"):
                ok = round(r[name + "_ratio"], 3) <= TARGET_CLIENT_SINGLE
                verdict_text = verdict(ok)
                targets.append((op, name, "(b)", r[name + "_ratio"], TARGET_CLIENT_SINGLE, ok))
            elif name + "_ratio_ref" in r:
                ref = r[name + "_ratio_ref"]
                verdict_text = judge_against_c(targets, op, name, ref, TARGET_CLIENT_SINGLE)
            text_rows.append([f"{op}  {label}", str(int(r[name + "_keys"])), f"{us:.2f}", f"{1e6 / us:,.0f}",
                              "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                              "" if is_base else interval(r, name + "_ratio"),
                              f"{ref:.3f}x {interval(r, name + '_ratio_ref')}" if ref is not None else "",
                              verdict_text])
            csv_rows.append({"operation": op, "contender": name, "label": label.strip(),
                             "keys": int(r[name + "_keys"]), "us per op": us, "ops per s": 1e6 / us,
                             "ratio to (b)": r[name + "_ratio"], "ratio to (b) low": r[name + "_ratio_lo"],
                             "ratio to (b) high": r[name + "_ratio_hi"],
                             "ratio to (c)": ref if ref is not None else "",
                             "ratio to (c) low": r[name + "_ratio_ref_lo"] if ref is not None else "",
                             "ratio to (c) high": r[name + "_ratio_ref_hi"] if ref is not None else "",
                             "rounds": rounds, "batch": int(r.get("batch", 0))})
    # (a) against twemproxy (d): judged on single get only.
    proxy_notes = []
    proxy = context.get("memshard_client_twemproxy", "")
    if proxy.startswith("skipped"):
        proxy_notes.append(f"(d) twemproxy: {proxy}.")
    elif proxy:
        parts = []
        for op in ("get", "set"):
            r = rows.get(op)
            if r is None or r.get("error_occurred") or "ketama_ratio_twemproxy" not in r:
                continue
            value = r["ketama_ratio_twemproxy"]
            text = f"{op} {value:.3f}x {interval(r, 'ketama_ratio_twemproxy')}"
            if op == "get":
                ok = round(value, 3) <= TARGET_CLIENT_VS_TWEMPROXY
                text += (f", target <= {TARGET_CLIENT_VS_TWEMPROXY:.2f}x (ShardedClient single get at "
                         f"least 2x faster than twemproxy): {verdict(ok)}")
                targets.append((op, "ketama", "(d)", value, TARGET_CLIENT_VS_TWEMPROXY, ok))
            parts.append(text)
        if parts:
            proxy_notes.append("ShardedClient (a, ketama) / twemproxy (d): " + "; ".join(parts) + ".")
        proxy_notes.append(f"(d): {proxy}; one pool of the servers above, a memcached_st (same "
                           "behaviours) holding the proxy as its only server; values written and read "
                           "through it checked before timing.")
        placement = context.get("memshard_client_twemproxy_placement")
        if placement:
            proxy_notes.append(f"twemproxy placement: {placement}.")
    if text_rows:
        batch = int(rows["get"].get("batch", 0)) if "get" in rows and not rows["get"].get("error_occurred") else "?"
        rep.table(f"ShardedClient against libmemcached on real memcached: single get (hit) and set of "
                  f"100-byte values, {rounds} interleaved rounds",
                  ["op   contender", "keys", "µs/op", "ops/s", "/ (b)", "95% CI", "/ (c) [95% CI]",
                   f"target <= {TARGET_CLIENT_SINGLE:.2f}x"],
                  text_rows, "client_single.csv", csv_rows,
                  notes=[servers_note,
                         f"Interleaved: each round runs every contender for a batch of {batch} calls, in a "
                         "fresh random order; / (b) is the median over the rounds of (contender's time "
                         "per call / (b)'s in the same round),",
                         "so noise that lasts longer than a round cancels and a burst that hits one side "
                         "only is outvoted. 95% CI: distribution-free interval of that median (binomial "
                         "order statistics). µs/op: median over rounds.",
                         "(a') and (b) talk to the same server: only the client differs. (a) spreads its keys "
                         "over every server, and so does (c), libmemcached placing the same keys itself:",
                         "(a) / (b) and (c) / (b) measure the servers (each memcached wakes up for only its share "
                         "of the calls), not the client; (a) ketama is judged against (c), which places the same keys (modulo places others: shown, not judged).",
                         "Every libmemcached handle has ShardedClient's own behaviours (NO_BLOCK, "
                         "TCP_NODELAY, SUPPORT_CAS, timeouts; checked), text protocol; every answer is "
                         "checked (hit, right value; stored)."] + proxy_notes)

    # Multi-get.
    r = rows.get("get_multi")
    if r is not None:
        text_rows, csv_rows = [], []
        multi_notes = []
        if r.get("error_occurred"):
            text_rows.append(["error: " + r.get("error_message", "")] + [""] * 6)
        else:
            keys_per_call = int(r.get("keys_per_call", 100))
            for name, label in CLIENT_MULTI:
                if name + "_ns" not in r:
                    continue
                us = r[name + "_ns"] / 1000
                is_base = name == "libmemcached"
                verdict_text, ref = "", None
                if name + "_ratio_ref" in r:
                    ref = r[name + "_ratio_ref"]
                    verdict_text = judge_against_c(targets, "get_multi", name, ref,
                                                   TARGET_CLIENT_MULTI)
                text_rows.append([label, f"{us:.1f}", f"{keys_per_call * 1e6 / us:,.0f}",
                                  "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                                  "" if is_base else interval(r, name + "_ratio"),
                                  f"{ref:.3f}x {interval(r, name + '_ratio_ref')}" if ref is not None else "",
                                  verdict_text])
                csv_rows.append({"contender": name, "label": label, "us per request": us,
                                 "keys per s": keys_per_call * 1e6 / us,
                                 "ratio to (b)": r[name + "_ratio"], "ratio to (b) low": r[name + "_ratio_lo"],
                                 "ratio to (b) high": r[name + "_ratio_hi"],
                                 "ratio to (c)": ref if ref is not None else "",
                                 "ratio to (c) low": r[name + "_ratio_ref_lo"] if ref is not None else "",
                                 "ratio to (c) high": r[name + "_ratio_ref_hi"] if ref is not None else "",
                                 "key lists": int(r[name + "_keys"]), "keys per request": keys_per_call,
                                 "rounds": int(r.get("rounds", 0)), "batch": int(r.get("batch", 0))})
            if "ketama_ratio_twemproxy" in r:
                multi_notes.append("ShardedClient (a, ketama get_multi) / twemproxy (d): "
                                   f"{r['ketama_ratio_twemproxy']:.3f}x "
                                   f"{interval(r, 'ketama_ratio_twemproxy')} (not a target).")
            elif proxy.startswith("skipped"):
                multi_notes.append(f"(d) twemproxy: {proxy}.")
        spread = ""
        if "keys_per_server_min" in r:
            spread = (f" (keys per server per request: {int(r['keys_per_server_min'])} to "
                      f"{int(r['keys_per_server_max'])} under ketama")
            if "modulo_keys_per_server_min" in r:
                spread += (f", {int(r['modulo_keys_per_server_min'])} to "
                           f"{int(r['modulo_keys_per_server_max'])} under modulo")
            spread += ")"
        rep.table(f"ShardedClient against libmemcached on real memcached: multi-get of "
                  f"{int(r.get('keys_per_call', 100))} keys (all hits) over "
                  f"{int(r.get('servers', 0)) or '?'} servers, {int(r.get('rounds', 0))} interleaved rounds",
                  ["contender", "µs/request", "keys/s", "/ (b)", "95% CI", "/ (c) [95% CI]",
                   f"target <= {TARGET_CLIENT_MULTI:.2f}x"], text_rows, "client_multi.csv", csv_rows,
                  notes=[f"Each contender cycles over 16 requests of 100 distinct keys{spread}; same "
                         f"interleaving and statistics as above, batches of {int(r.get('batch', 0))} "
                         "requests.",
                         "(a), (c) and (d) read the same lists, written through each client. (b) and (a') "
                         "ketama read other lists, of keys memshard's ketama puts on (b)'s server; (a') "
                         "modulo, keys modulo puts there.",
                         "Checked before timing, for every request of every contender: all 100 values, "
                         "each once, equal to what was stored; (c) and (b) were checked before any other "
                         "client wrote their keys,",
                         "so libmemcached places every key where memshard's ketama does, and (b)'s keys "
                         "are on (b)'s server.",
                         "libmemcached contenders: memcached_mget, then memcached_fetch_result into a "
                         "caller-owned memcached_result_st, each key and value copied into reused strings "
                         "(ShardedClient's behaviours, checked).",
                         "get_multi returns a MultiGetResult that owns its values (one std::string each) and "
                         "a Status per key; visit_multi copies each value into a reused string, like (b).",
                         "(a') visit_multi / (b): the same keys on the same server, only the client differs; "
                         "(a) ketama is judged against (c), which places and hashes keys as it does."]
                  + multi_notes)

    # Batch writes.
    r = rows.get("set_multi")
    if r is not None:
        text_rows, csv_rows = [], []
        if r.get("error_occurred"):
            text_rows.append(["error: " + r.get("error_message", "")] + [""] * 4)
        else:
            keys_per_call = int(r.get("keys_per_call", 100))
            for name, label in CLIENT_SET_MULTI:
                if name + "_ns" not in r:
                    continue
                us = r[name + "_ns"] / 1000
                is_base = name == "libmemcached_all"
                text_rows.append([label, f"{us:.1f}", f"{keys_per_call * 1e6 / us:,.0f}",
                                  "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                                  "" if is_base else interval(r, name + "_ratio")])
                csv_rows.append({"contender": name, "label": label, "us per batch": us,
                                 "keys per s": keys_per_call * 1e6 / us,
                                 "ratio to libmemcached": r[name + "_ratio"],
                                 "ratio low": r[name + "_ratio_lo"], "ratio high": r[name + "_ratio_hi"],
                                 "keys per batch": keys_per_call, "rounds": int(r.get("rounds", 0))})
        rep.table(f"Batch writes on real memcached: {int(r.get('keys_per_call', 100))} sets over "
                  f"{int(r.get('servers', 0)) or '?'} servers, {int(r.get('rounds', 0))} interleaved rounds",
                  ["contender", "µs/batch", "keys/s", "/ libmemcached", "95% CI"], text_rows,
                  "client_set_multi.csv", csv_rows,
                  notes=["Each contender writes ketama's 16 lists of 100 keys in turn (values already "
                         "stored: every write replaces one); every key's answer is checked (stored).",
                         "set_multi sends each server its keys as one pipeline of meta commands; the loops "
                         "wait for each key's reply before the next. libmemcached has no multi-set with an "
                         "answer per key: its loop of memcached_set is the baseline."])

    # Instructions per call.
    if any(op in ("get", "set", "get_multi") for op, _ in counts):
        text_rows, csv_rows = [], []
        for op, names in (("get", CLIENT_SINGLE), ("set", CLIENT_SINGLE), ("get_multi", CLIENT_MULTI)):
            base = counts.get((op, "libmemcached"))
            ref = counts.get((op, "libmemcached_all"))
            for name, label in names:
                if (op, name) not in counts:
                    continue
                per_call, keys = counts[(op, name)]
                text_rows.append([f"{op:<9}  {label}", f"{per_call:,.0f}",
                                  f"{per_call / base[0]:.3f}x" if base else "-",
                                  f"{per_call / ref[0]:.3f}x" if ref else "-"])
                csv_rows.append({"operation": op, "contender": name, "instructions per call": round(per_call, 1),
                                 "keys per call": keys, "ratio to (b)": per_call / base[0] if base else "",
                                 "ratio to (c)": per_call / ref[0] if ref else ""})
        rep.table("Instructions per client call (callgrind, client side only)",
                  ["op         contender", "instructions/call", "/ (b)", "/ (c)"], text_rows,
                  "client_instructions.csv", csv_rows,
                  notes=["Each contender alone (2000 calls; 200 for get_multi) between CALLGRIND_ZERO_STATS "
                         "and CALLGRIND_DUMP_STATS_AT, after the same checks; / (b) and / (c): the same "
                         "operation's (b) and (c) rows.",
                         "User-space instructions of the client process, libmemcached included; the kernel "
                         "and the servers are not counted. Repeatable where times are not."])
    member = beside_ketama_sections(rep, rows, counts, calling_thread_callgrind(rep.results_dir))
    trips = migration_section(rep, rows, counts, targets)
    if targets:
        with open(os.path.join(rep.results_dir, "client_targets.csv"), "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["operation", "contender", "against", "time ratio", "goal", "met"])
            writer.writerows(targets)
    return [(f"client {op} {name} / {against} {value:.3f}x", ok)
            for op, name, against, value, _, ok in targets] + member + trips


# A client beside the plain ketama client, on its keys and options, each judged on its ratio to it
# in the operations named: (contender, column, table title, CSV file, target name, judged, notes).
BESIDE_KETAMA = [
    ("ketama_member", "fleet member",
     "A fleet member's client against a plain client: ShardedClient ketama-md5-weighted, the same "
     "servers, options and keys",
     "client_fleet_member.csv", "client fleet member", ("get", "set"),
     ["Fleet member: the ShardedClient<AnyLocator> that join_fleet builds (make_client on the "
      "plain client's profile), its family served as a steady record's phase (Fleet::serve) "
      "and its fence gate opened as a member opens it,",
      "so every call checks the gate and locates through AnyLocator, as a member's does; no "
      "etcd (the member's follower thread, which moves the fence every 100 ms, is not there). "
      "Plain client: (a) ketama above."]),
    ("ketama_hot_keys", "hot keys counted",
     "A client counting its hot keys against a plain client: ShardedClient ketama-md5-weighted, the "
     "same servers, options and keys",
     "client_hot_keys.csv", "client hot keys", ("get",),
     ["Hot keys counted: the plain client with ClientOptions::hot_keys = HotKeyOptions{} (1 in 8 "
      "operations counted in a 64-entry sketch, 1 s windows). Plain client: (a) ketama above.",
      "Judged on a get (the hot-key target); set and get_multi are shown. Under callgrind a call is "
      "about 50 times slower, so the once-a-window report (HotKeyWatch::roll) weighs about 50 times "
      "more per call than at full speed."]),
]
BESIDE_NOTES = [
    "Time: both in the same interleaved run; the ratio is the median over the rounds of "
    "the contender's time per call / the plain client's in the same round, with its 95% CI; "
    "µs: medians over rounds.",
    "Instructions (callgrind): each alone, as in the instructions table above; calling "
    "thread: the calls' own (calls_alone's inclusive cost), without the other threads' "
    "work in the same dump (the deadline watch's 4 ms ticks),",
    "which the whole process's figure (the table above; older dumps) holds and which can move "
    "it by 1 to 2%."]


def beside_ketama_sections(rep, rows, counts, calling):
    """Each client of BESIDE_KETAMA against the plain client beside it (ketama): the paired
    median time ratio of the same interleaved run, and the instructions per call of both (the
    calling thread's when the dumps have calls_alone, else the whole process's). The operations
    each names are judged (TARGET_FLEET_MEMBER, on the ratio as printed); the others are shown.
    Returns [(target, met)]."""
    judged = []
    for name, column, title, csv_name, target_prefix, judged_ops, notes in BESIDE_KETAMA:
        judged += beside_ketama_section(rep, rows, counts, calling, name, column, title, csv_name,
                                        target_prefix, judged_ops, notes + BESIDE_NOTES)
    return judged


def beside_ketama_section(rep, rows, counts, calling, name, column, title, csv_name, target_prefix,
                          judged_ops, notes):
    """One client of BESIDE_KETAMA (see beside_ketama_sections)."""
    text_rows, csv_rows, judged = [], [], []

    def add(op, measure, plain, other, ratio, low, high, plain_text, other_text, target_name):
        ok = None
        if op in judged_ops:
            ok = round(ratio, 3) <= TARGET_FLEET_MEMBER
            judged.append((f"{target_prefix} {op} / plain client: {target_name} {ratio:.3f}x", ok))
        text_rows.append([f"{op:<9}  {measure}", plain_text, other_text, f"{ratio:.3f}x",
                          f"[{low:.3f}, {high:.3f}]" if low is not None else "",
                          verdict(ok) if ok is not None else "(not judged)"])
        csv_rows.append({"operation": op, "measure": measure, "plain client": plain, column: other,
                         "ratio": ratio, "ratio low": low if low is not None else "",
                         "ratio high": high if high is not None else "",
                         "goal": TARGET_FLEET_MEMBER if ok is not None else "",
                         "met": ok if ok is not None else ""})

    ratio_name = f"{name}_ratio_ketama"
    for op in ("get", "set", "get_multi"):
        r = rows.get(op)
        unit = "µs/request" if op == "get_multi" else "µs/op"
        if r is not None and not r.get("error_occurred") and ratio_name in r:
            plain, other = r["ketama_ns"] / 1000, r[f"{name}_ns"] / 1000
            add(op, f"time, {unit} (paired median ratio)", plain, other, r[ratio_name],
                r[f"{ratio_name}_lo"], r[f"{ratio_name}_hi"], f"{plain:.2f}", f"{other:.2f}", "time")
        if (op, name) in counts and (op, "ketama") in counts:
            if (op, name) in calling and (op, "ketama") in calling:
                plain, other = calling[(op, "ketama")], calling[(op, name)]
                source = "calling thread"
            else:
                plain, other = counts[(op, "ketama")][0], counts[(op, name)][0]
                source = "whole process"
            add(op, f"instructions/call ({source})", plain, other, other / plain, None, None,
                f"{plain:,.0f}", f"{other:,.0f}", "instructions")
    if not text_rows:
        return []
    rep.table(title, ["op         measure", "plain client", column, f"{column} / plain", "95% CI",
                      f"target <= {TARGET_FLEET_MEMBER:.2f}x"],
              text_rows, csv_name, csv_rows, notes=notes)
    return judged


def migration_section(rep, rows, counts, targets):
    """The client during a live migration: the times of a hit and a miss in the
    window (the hit judged, appended to `targets`), the round trips counted by
    the servers (judged exactly), and instructions per call; returns the round
    trip targets as [(target, met)]."""
    timed = [(op, rows[op]) for op in ("get_in_migration", "miss_in_migration") if op in rows]
    counted = rows.get("migration_round_trips")
    if not timed and counted is None:
        return []

    def interval(r, prefix):
        return f"[{r[prefix + '_lo']:.3f}, {r[prefix + '_hi']:.3f}]"

    text_rows, csv_rows, notes = [], [], []
    for op, r in timed:
        if r.get("error_occurred"):
            text_rows.append([f"{op}: error: " + r.get("error_message", "")] + [""] * 6)
            continue
        base = CLIENT_MIGRATION_BASELINE[op]
        for bench, name, label in CLIENT_MIGRATION:
            if bench != op or name + "_ns" not in r:
                continue
            us = r[name + "_ns"] / 1000
            is_base = name == base
            ref = r.get(name + "_ratio_ref")
            goal_text = ""
            if name == "in_migration":
                ok = round(r[name + "_ratio"], 3) <= TARGET_MIGRATION_HIT
                goal_text = f"<= {TARGET_MIGRATION_HIT:.2f}x: {verdict(ok)}"
                targets.append((op, name, "no migration", r[name + "_ratio"], TARGET_MIGRATION_HIT, ok))
            elif name == "moved_miss":
                ok = round(r[name + "_ratio"], 3) <= TARGET_MIGRATION_MOVED_MISS
                goal_text = f"<= {TARGET_MIGRATION_MOVED_MISS:.2f}x: {'within' if ok else 'above'} (informational)"
            text_rows.append([label, str(int(r[name + "_keys"])), f"{us:.2f}",
                              "1.000x" if is_base else f"{r[name + '_ratio']:.3f}x",
                              "" if is_base else interval(r, name + "_ratio"),
                              f"{ref:.3f}x {interval(r, name + '_ratio_ref')}" if ref is not None else "",
                              goal_text])
            csv_rows.append({"benchmark": op, "contender": name, "label": label, "keys": int(r[name + "_keys"]),
                             "us per op": us, "ratio to baseline": r[name + "_ratio"],
                             "ratio to baseline low": r[name + "_ratio_lo"],
                             "ratio to baseline high": r[name + "_ratio_hi"],
                             "ratio to plain miss": ref if ref is not None else "",
                             "ratio to plain miss low": r[name + "_ratio_ref_lo"] if ref is not None else "",
                             "ratio to plain miss high": r[name + "_ratio_ref_hi"] if ref is not None else "",
                             "rounds": int(r.get("rounds", 0)), "batch": int(r.get("batch", 0))})
        if op == "get_in_migration" and "moved_hit_keys" in r:
            notes.append(f"The hits in the window: {int(r['moved_hit_keys'])} of {int(r['in_migration_keys'])} "
                         "keys moved and were copied to their new owner with migrate_key before timing; the "
                         "others did not move.")
    if text_rows:
        rounds = next((int(r.get("rounds", 0)) for _, r in timed if not r.get("error_occurred")), 0)
        rep.table(f"ShardedClient during a live migration: single get of 100-byte values, {rounds} "
                  "interleaved rounds",
                  ["contender", "keys", "µs/op", "/ baseline", "95% CI", "/ plain miss [95% CI]", "target"],
                  text_rows, "client_migration.csv", csv_rows,
                  notes=["Two families of ShardedClient ketama-md5-weighted: one wrote every key on the "
                         "client servers above (the old placement), then began a migration (MoveOnCopy::kNever) "
                         "to them plus one extra local memcached;",
                         "the other has no migration and is built on the new list, so it reads each key on "
                         "the same server: only the window differs. Same interleaving and statistics as the "
                         "single get above; / baseline: the row marked (the baseline) of the same benchmark.",
                         "A moved-key miss reads the new owner, then the old one; its target (against a "
                         "plain get) is informational, not counted in the targets met."] + notes)
    trips = []
    if counted is not None:
        text_rows, csv_rows = [], []
        if counted.get("error_occurred"):
            text_rows.append(["error: " + counted.get("error_message", "")] + [""] * 8)
        for kind, label, goal, old_goal in ([] if counted.get("error_occurred") else MIGRATION_ROUND_TRIPS):
            if kind + "_calls" not in counted:
                continue
            calls = int(counted[kind + "_calls"])
            gets = int(counted[kind + "_gets"])
            extra = int(counted[kind + "_extra_round_trips"])
            old = counted.get(kind + "_old_owner_gets")
            ok = extra == goal * calls and (old_goal is None or (old is not None and int(old) == old_goal * calls))
            goal_text = f"{goal}" + (f", old owners {old_goal}" if old_goal is not None else "")
            text_rows.append([label, str(calls), str(gets), f"{extra / calls:g}",
                              "-" if old is None else f"{int(old)} ({int(old) / calls:g}/call)",
                              str(int(counted[kind + "_get_hits"])), str(int(counted[kind + "_get_misses"])),
                              str(int(counted[kind + "_stat"])), f"{goal_text}: {verdict(ok)}"])
            csv_rows.append({"kind": kind, "label": label, "calls": calls, "requests": gets,
                             "extra round trips": extra, "extra round trips per call": extra / calls,
                             "old owner requests": "" if old is None else int(old),
                             "get_hits": int(counted[kind + "_get_hits"]),
                             "get_misses": int(counted[kind + "_get_misses"]),
                             "migration stat": int(counted[kind + "_stat"]), "goal per call": goal,
                             "old owner goal per call": "" if old_goal is None else old_goal, "met": ok})
            trips.append((f"client migration {kind}: {extra / calls:g} extra round trips per call"
                          + ("" if old is None else f", {int(old) / calls:g} on old owners"), ok))
        servers = (f"{int(counted.get('servers_before', 0))} servers to {int(counted.get('servers_after', 0))}"
                   if "servers_before" in counted else "")
        rep.table("Round trips during a live migration, counted by memcached (cmd_get of every server "
                  "before and after)",
                  ["kind", "calls", "requests", "extra/call", "old owners", "get_hits", "get_misses",
                   "MigrationStats", "target (per call)"],
                  text_rows, "client_migration_round_trips.csv", csv_rows,
                  notes=[f"The family in the window ({servers}), each kind's calls in a row between two reads "
                         "of every server's stats; requests: cmd_get summed over every server (one per "
                         "call without a migration);",
                         "extra/call: (requests - calls) / calls, judged exactly; old owners: requests "
                         "reaching servers that were a key's owner and are no key's new owner (moved keys "
                         "only).",
                         "MigrationStats: new_hits, fallback_misses and same_owner_misses counted by the "
                         "client over the same calls."])
    # Instructions per call.
    if any((op, name) in counts for op, name, _ in CLIENT_MIGRATION):
        text_rows, csv_rows = [], []
        for op, name, label in CLIENT_MIGRATION:
            if (op, name) not in counts:
                continue
            per_call, _ = counts[(op, name)]
            base = counts.get((op, CLIENT_MIGRATION_BASELINE[op]))
            text_rows.append([label, f"{per_call:,.0f}", f"{per_call / base[0]:.3f}x" if base else "-"])
            csv_rows.append({"benchmark": op, "contender": name, "instructions per call": round(per_call, 1),
                             "ratio to baseline": per_call / base[0] if base else ""})
        rep.table("Instructions per get during a live migration (callgrind, client side only)",
                  ["contender", "instructions/call", "/ baseline"], text_rows,
                  "client_migration_instructions.csv", csv_rows,
                  notes=["Each contender alone, as in the instructions table above; / baseline: the row "
                         "marked (the baseline) of the same benchmark. Not a target: repeatable where times "
                         "are not."])
    return trips
