// SPDX-License-Identifier: MIT
// memshard::compiled: make_client. The clients themselves are compiled in units that
// CMakeLists.txt generates, one per entry of client/detail/compiled_clients.hpp.

#include "memshard/client/make_client.hpp"
