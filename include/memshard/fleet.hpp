// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_FLEET_HPP_
#define MEMSHARD_FLEET_HPP_

// memshard/fleet.hpp: the fleet component (CMake target memshard::fleet, package component
// `fleet`): what makes many processes one fleet, coordinated through etcd v3. It needs libcurl;
// placement and the plain client never include it.
//
// So far: the store's URL (coordination/store_url.hpp), the outcome of a request to it
// (coordination/store_status.hpp), the etcd client the fleet speaks through
// (coordination/etcd_client.hpp), the watch that streams changes (coordination/etcd_watch.hpp),
// a fleet's record (coordination/fleet_record.hpp), the operator's side of it
// (coordination/fleet_admin.hpp; the tool memshard-fleet) and a process's presence in etcd
// with its fence (coordination/lease_keeper.hpp).

#include "memshard/coordination/etcd_client.hpp"
#include "memshard/coordination/etcd_watch.hpp"
#include "memshard/coordination/fleet_admin.hpp"
#include "memshard/coordination/fleet_member.hpp"
#include "memshard/coordination/fleet_phases.hpp"
#include "memshard/coordination/fleet_record.hpp"
#include "memshard/coordination/lease_keeper.hpp"
#include "memshard/coordination/store_status.hpp"
#include "memshard/coordination/store_url.hpp"

#endif  // MEMSHARD_FLEET_HPP_
