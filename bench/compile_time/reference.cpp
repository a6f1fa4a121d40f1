// SPDX-License-Identifier: MIT
// reference.cpp: what any libmemcached client includes anyway (the standard
// headers a client needs and libmemcached's own), with an empty main. The
// other units' compile times are ratios to this one (bench/compile_time.sh).

#include <libmemcached-1.0/memcached.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ranges>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <variant>
#include <vector>

auto main() -> int { return 0; }
