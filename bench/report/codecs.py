# SPDX-License-Identifier: MIT
"""The value codecs on a 20,000-byte string (codecs.json): encode and decode
throughput per codec, memshard against PHP itself in the same run
(interleaved), and a typed get against a raw get."""

from .common import family, rows_of

MB = 1e6  # MB/s: decimal megabytes

# BM_VsPhp/zlib: (operation, memshard arm, PHP arm, what PHP calls).
VS_PHP_ZLIB = [
    ("zlib encode", "memshard_encode", "php_encode", "gzcompress()"),
    ("zlib decode", "memshard_decode", "php_decode", "gzuncompress()"),
]
# BM_VsPhp/set and /get: the compression of each pair of arms.
COMPRESSIONS = [("fastlz", "FastLZ"), ("zlib", "zlib"), ("raw", "none (raw)")]
# Their raw arms that move the compressed items' bytes: (arm, its compression, counter of the size).
SAME_SIZE_RAW = [("raw_fastlz", "FastLZ", "fastlz_bytes"), ("raw_zlib", "zlib", "zlib_bytes")]
# BM_TypedGet: (item, label).
TYPED_ITEMS = [
    ("fastlz", "str20000, FastLZ (1,899 bytes stored)"),
    ("int", "the integer 42"),
    ("small", '"hello, memshard"'),
]


def _us(ns):
    return f"{ns / 1e3:,.1f}"


def _mbps(size, ns):
    return size * 1e9 / ns / MB if ns and ns > 0 else float("nan")


def _interval(r, name):
    return f"{r[name]:.3f}x [{r[name + '_lo']:.3f}, {r[name + '_hi']:.3f}]"


def _throughput(rep, rows, size):
    encode = {r["run_name"].split("/", 1)[1]: r for r in rows if family(r) == "BM_Encode"}
    decode = {r["run_name"].split("/", 1)[1]: r for r in rows if family(r) == "BM_Decode"}
    text_rows, csv_rows = [], []
    for case, enc in encode.items():
        dec = decode.get(case)
        enc_mbps = enc["bytes_per_second"] / MB
        dec_mbps = dec["bytes_per_second"] / MB if dec else float("nan")
        same = "yes" if enc.get("golden_bytes") == 1 else "no"
        text_rows.append([enc.get("label", case), case, f"{int(enc['stored_bytes']):,}",
                          f"{enc_mbps:,.0f}", f"{dec_mbps:,.0f}", same])
        csv_rows.append({"codec": enc.get("label", case), "case": case, "stored_bytes": int(enc["stored_bytes"]),
                         "encode_mb_per_s": enc_mbps, "decode_mb_per_s": dec_mbps,
                         "same_bytes_as_client": enc.get("golden_bytes") == 1})
    if not text_rows:
        return
    rep.table(f"Codecs: encode and decode of a {size:,}-byte string (str20000)",
              ["codec", "value table case", "stored bytes", "encode MB/s", "decode MB/s", "same bytes"],
              text_rows, "codecs.csv", csv_rows,
              ["MB/s of the string's bytes (10^6 bytes per second of CPU time). Each codec has the settings "
               "under which its client compressed the string (the case); decode reads the item that client "
               "stored. Same bytes: memshard's encoding is the client's, byte for byte (a gzip header holds "
               "a time, so gzip may differ there)."])


def _vs_php(rep, rows, size, php):
    by = {r["run_name"].split("/iterations")[0]: r for r in rows if family(r) == "BM_VsPhp"}
    text_rows, csv_rows = [], []

    def add(operation, r, mine, theirs, what, moved=size):
        """A row; `moved`: the string's bytes the call moves (None: not the string: no MB/s)."""
        if r is None or mine + "_ns" not in r:
            return
        ratio_name = f"{mine}_vs_{theirs}"
        has_php = theirs + "_ns" in r and ratio_name in r
        m_ns = r[mine + "_ns"]
        p_ns = r[theirs + "_ns"] if has_php else None
        m_mbps = _mbps(moved, m_ns) if moved else None
        p_mbps = _mbps(moved, p_ns) if moved and has_php else None
        text_rows.append([operation, what, _us(m_ns), _us(p_ns) if has_php else "-",
                          f"{m_mbps:,.0f}" if m_mbps is not None else "-",
                          f"{p_mbps:,.0f}" if p_mbps is not None else "-",
                          _interval(r, ratio_name) if has_php else "-"])
        csv_rows.append({"operation": operation, "php": what, "memshard_us": m_ns / 1e3,
                         "php_us": p_ns / 1e3 if has_php else "",
                         "memshard_mb_per_s": m_mbps if m_mbps is not None else "",
                         "php_mb_per_s": p_mbps if p_mbps is not None else "",
                         "ratio": r[ratio_name] if has_php else "",
                         "ratio_low": r[ratio_name + "_lo"] if has_php else "",
                         "ratio_high": r[ratio_name + "_hi"] if has_php else ""})

    for operation, mine, theirs, what in VS_PHP_ZLIB:
        add(operation, by.get("BM_VsPhp/zlib"), mine, theirs, what)
    for op in ("set", "get"):
        r = by.get(f"BM_VsPhp/{op}")
        for c, label in COMPRESSIONS:
            add(f"{op} round trip, {label}", r, f"memshard_{c}", f"php_{c}", f"Memcached::{op}")
        for arm, label, bytes_counter in SAME_SIZE_RAW:
            if r is not None and bytes_counter in r:
                add(f"{op} round trip, raw {int(r[bytes_counter]):,} bytes ({label}'s item)", r,
                    f"memshard_{arm}", f"php_{arm}", f"Memcached::{op}", None)
    if not text_rows:
        return
    rounds = next((int(r["rounds"]) for r in by.values() if "rounds" in r), 0)
    rep.table("Codecs: memshard against PHP, same run, interleaved",
              ["operation", "PHP does", "memshard µs", "PHP µs", "memshard MB/s", "PHP MB/s",
               "memshard / PHP [95% CI]"],
              text_rows, "codecs_vs_php.csv", csv_rows,
              [f"PHP: {php}. Median µs per call; the ratio is the median of {rounds} per-round ratios "
               "(each round runs every arm once, 10 calls, in a random order). memshard: PhpMemcachedCodec "
               "(encode/decode), ShardedClient::set_value/get_value with it, or set/get with no codec (raw); "
               "PHP: its own zlib calls, or php-memcached's Memcached with compression FastLZ, zlib or off. "
               "Both sides store byte-identical items (checked). MB/s: of the 20,000-byte string. The last two "
               "rows of each round trip move, with no codec, the bytes that FastLZ's and zlib's items hold."])

    # The codec's share of a round trip: compressing arm minus the raw arm that moves the same bytes.
    text_rows, csv_rows = [], []
    for op, what in (("set", "encode"), ("get", "decode")):
        r = by.get(f"BM_VsPhp/{op}")
        if r is None:
            continue
        for c, label in COMPRESSIONS[:2]:
            mine = r.get(f"memshard_{c}_codec_ns")
            theirs = r.get(f"php_{c}_codec_ns")
            if mine is None:
                continue
            text_rows.append([f"{label} {what} (in {op})", _us(mine), _us(theirs) if theirs is not None else "-",
                              f"{_mbps(size, mine):,.0f}", f"{_mbps(size, theirs):,.0f}" if theirs is not None else "-",
                              f"{mine / theirs:.2f}x" if theirs else "-"])
            csv_rows.append({"codec_work": f"{label} {what}", "round_trip": op, "memshard_us": mine / 1e3,
                             "php_us": theirs / 1e3 if theirs is not None else "",
                             "memshard_mb_per_s": _mbps(size, mine),
                             "php_mb_per_s": _mbps(size, theirs) if theirs is not None else "",
                             "ratio": mine / theirs if theirs else ""})
    if text_rows:
        rep.table("Codecs: the codec's cost inside the round trip (per side: compressed minus raw, same bytes)",
                  ["codec work", "memshard µs", "PHP µs", "memshard MB/s", "PHP MB/s", "memshard / PHP"],
                  text_rows, "codecs_codec_cost.csv", csv_rows,
                  ["Per side, the median of the per-round differences between the compressing arm and the "
                   "raw arm that moves the same stored bytes uncompressed; MB/s of the 20,000-byte string; the "
                   "ratio is of those medians (no interval: a difference of two noisy times)."])


def _typed_get(rep, rows):
    r = next((r for r in rows if family(r) == "BM_TypedGet"), None)
    if r is None:
        return
    text_rows, csv_rows = [], []
    for item, label in TYPED_ITEMS:
        typed, raw, php = f"typed_{item}", f"raw_{item}", f"php_{item}"
        if typed + "_ns" not in r:
            continue
        vs_php = f"{typed}_vs_{php}"
        text_rows.append([label, _us(r[typed + "_ns"]), _us(r[raw + "_ns"]), _interval(r, f"{typed}_vs_{raw}"),
                          _us(r[php + "_ns"]) if php + "_ns" in r else "-",
                          _interval(r, vs_php) if vs_php in r else "-"])
        csv_rows.append({"item": label, "get_value_us": r[typed + "_ns"] / 1e3, "get_us": r[raw + "_ns"] / 1e3,
                         "ratio": r[f"{typed}_vs_{raw}"], "ratio_low": r[f"{typed}_vs_{raw}_lo"],
                         "ratio_high": r[f"{typed}_vs_{raw}_hi"],
                         "php_get_us": r[php + "_ns"] / 1e3 if php + "_ns" in r else "",
                         "ratio_to_php": r.get(vs_php, ""), "ratio_to_php_low": r.get(vs_php + "_lo", ""),
                         "ratio_to_php_high": r.get(vs_php + "_hi", "")})
    rep.table("Codecs: typed get (get_value, PhpMemcachedCodec) against raw get of the same item",
              ["item", "get_value µs", "get µs", "get_value / get [95% CI]", "PHP get µs",
               "get_value / PHP [95% CI]"],
              text_rows, "codecs_typed_get.csv", csv_rows,
              ["Same run, interleaved like the table above; PHP get: php-memcached's Memcached::get of the "
               "same value (its own item)."])


def codecs_section(rep, doc):
    rows = [r for r in rows_of(doc) if not r.get("error_occurred")]
    if not rows:
        rep.say("Codecs: no results (codecs.json missing)")
        rep.say()
        return
    context = doc.get("context", {})
    size = int(context.get("memshard_codecs_value_bytes", 20000))
    php = context.get("memshard_codecs_php", "?")
    _throughput(rep, rows, size)
    _vs_php(rep, rows, size, php)
    _typed_get(rep, rows)
