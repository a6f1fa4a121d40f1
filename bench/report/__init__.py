# SPDX-License-Identifier: MIT
"""memshard's benchmark report: one module per section of the report
(lookup, targets, balance, movement, properties, hit_rate, resize_time,
client, fleet, migration_race, stampede, hot_keys, codecs, compile_time, charts),
what they share in common, and main(), which bench/run.sh runs through
__main__.py."""
