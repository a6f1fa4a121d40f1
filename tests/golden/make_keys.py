#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Writes keys.txt: the keys every golden table places, one per line.

Every key is a legal memcached key (1..250 bytes, no space or control byte)
and valid UTF-8, so that clients taking text keys (Java, Python, PHP, Ruby)
hash the same bytes as those taking byte strings. The set mixes realistic
keys, random printable ASCII of every length class up to 250 bytes, and keys
with 2-, 3- and 4-byte UTF-8 characters (bytes >= 0x80, surrogate pairs in
Java). The output depends only on the seed below.
"""
import random
import sys

SEED = 20261129
COUNT = 1000

# Code points whose UTF-8 bytes are all >= 0x80 and which no client treats as
# white space or a line break.
WIDE_RANGES = [(0x00C0, 0x00FF), (0x0410, 0x044F), (0x3041, 0x3096), (0x4E00, 0x4FFF),
               (0x1F600, 0x1F64F)]
ASCII = [chr(c) for c in range(0x21, 0x7F)]


def wide_char(rng):
    low, high = rng.choice(WIDE_RANGES)
    return chr(rng.randint(low, high))


def ascii_key(rng, length):
    return "".join(rng.choice(ASCII) for _ in range(length))


def utf8_key(rng, max_bytes):
    out, size = [], 0
    target = rng.randint(1, max_bytes)
    while size < target:
        c = wide_char(rng) if rng.random() < 0.5 else rng.choice(ASCII)
        n = len(c.encode("utf-8"))
        if size + n > target:
            break
        out.append(c)
        size += n
    return "".join(out) or "\u00e9"


def main():
    rng = random.Random(SEED)
    # "ob" has a 15-bit crc of 0, which python-memcache and pecl memcache's
    # standard strategy count as 1 and Cache::Memcached does not.
    keys = ["a", "tokyo", "kanagawa", "chiba", "saitama", "gunma", "foo", "user:42",
            "x" * 249, "y" * 250, "ob"]
    keys += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    keys += ["user:%d" % rng.randint(0, 10**7) for _ in range(150)]
    keys += ["session:%032x" % rng.getrandbits(128) for _ in range(50)]
    keys += ["sql:%08x:SELECT*FROM_items_WHERE_id=%d" % (rng.getrandbits(32), i) for i in range(40)]
    while len(keys) < 900:
        cls = rng.random()
        length = rng.randint(1, 12) if cls < 0.4 else (
            rng.randint(13, 60) if cls < 0.8 else rng.randint(61, 250))
        keys.append(ascii_key(rng, length))
    while len(keys) < COUNT:
        keys.append(utf8_key(rng, 250 if rng.random() < 0.2 else 40))
    seen, unique = set(), []
    for key in keys:
        raw = key.encode("utf-8")
        assert 1 <= len(raw) <= 250 and all(b > 0x20 and b != 0x7F for b in raw), key
        if key not in seen:
            seen.add(key)
            unique.append(key)
    out = sys.stdout if len(sys.argv) < 2 else open(sys.argv[1], "w", encoding="utf-8")
    for key in unique:
        out.write(key + "\n")


if __name__ == "__main__":
    main()
