// SPDX-License-Identifier: MIT
// umbrella.cpp: the cost of including memshard and using nothing of it.

#include <memshard/memshard.hpp>

auto main() -> int { return 0; }
