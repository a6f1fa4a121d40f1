# SPDX-License-Identifier: MIT
"""The shared fleet (fleet.json): what a client pays for sharing one fleet
with its clones: the check every operation makes, and a reconfigure."""

from .common import family, ns_per_item, rows_of


def fleet_section(rep, doc):
    rows = [r for r in rows_of(doc) if not r.get("error_occurred")]
    if not rows:
        rep.say("Shared fleet: no results (fleet.json missing)")
        rep.say()
        return
    check = [r for r in rows if family(r) == "BM_SnapshotCheck"]
    text_rows, csv_rows = [], []
    for r in rows:
        if family(r) != "BM_Reconfigure":
            continue
        servers = int(r["servers"])
        us = ns_per_item(r) / 1e3
        text_rows.append([f"{servers:,}", f"{us:,.1f}", f"{us * 1e3 / servers:,.0f}"])
        csv_rows.append({"servers": servers, "us_per_reconfigure": us})
    notes = []
    if check:
        ns = ns_per_item(check[0])
        notes.append(f"Per operation, a client compares the fleet's generation with its own: {ns:.2f} ns "
                     "(one atomic load, no lock); only after a change does it take the new snapshot.")
        csv_rows.append({"servers": 0, "us_per_reconfigure": ns / 1e3})
    notes.append("reconfigure(servers, locator): the list validated, each server's health looked up, the "
                 "snapshot published and the client moved to it (connections to servers that stay kept); "
                 "no server contacted.")
    rep.table("Shared fleet: the snapshot check and reconfigure",
              ["servers", "µs per reconfigure", "ns per server"], text_rows, "fleet.csv", csv_rows,
              notes)
