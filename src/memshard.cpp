// SPDX-License-Identifier: MIT
// memshard::compiled: the one unit that defines what the headers only declare in the compiled
// mode (MEMSHARD_COMPILED_LIB): make_client and the members of the client's non-template parts
// (ClientCore, the connections, the deadline watch, health, the migration paths...). The
// clients themselves are compiled in units that CMakeLists.txt generates, one per entry of
// client/detail/compiled_clients.hpp; they see these functions declared only.

#define MEMSHARD_DETAIL_COMPILED_SOURCE
#include "memshard/memshard.hpp"
