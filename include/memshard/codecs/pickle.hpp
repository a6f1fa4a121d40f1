// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_PICKLE_HPP_
#define MEMSHARD_CODECS_PICKLE_HPP_

// codecs/pickle.hpp: Python's pickle, as python-memcache (protocol 0, its
// default pickleProtocol), pylibmc and pymemcache's pickle_serde (protocol 5,
// pickle.HIGHEST_PROTOCOL) store floats, booleans, lists and dicts (flag 0x1):
// pickle_loads, a reader that builds data and never imports or calls
// anything, and pickle_dumps, which writes what CPython 3.11's
// pickle.dumps(value, protocol) writes, byte for byte.
//
// The format facts that matter:
//   * a pickle is a program for a stack machine: one-byte opcodes push
//     objects, MARK '(' remembers a stack position that LIST, TUPLE, DICT,
//     APPENDS, SETITEMS, ADDITEMS, FROZENSET and POP_MARK consume (and that
//     hides everything below it from the other opcodes), APPEND / SETITEM
//     add to the list or dict under the top, PUT/BINPUT/LONG_BINPUT/MEMOIZE
//     store the top in the memo and GET/BINGET/LONG_BINGET push it again
//     (the same object: mutating it later is seen through every copy), STOP
//     '.' ends the program and returns the top;
//   * protocol 0 is text: I42\n (ints of 32 bits; I01\n and I00\n are True
//     and False), L<digits>L\n (other ints), F<repr>\n (floats: 0.1, 1e+16,
//     inf, nan), V<raw-unicode-escape>\n (str: Latin-1 characters as single
//     bytes, '\\', NUL, CR, LF, ^Z and characters above U+00FF as \uXXXX or
//     \UXXXXXXXX), N (None), (l and (d (empty list, dict), a and s (APPEND,
//     SETITEM), and p<n>\n after every str, list and dict (the memo index,
//     counting from 0);
//   * protocols 1 to 5 are binary: K/M/J ints of 1, 2 (unsigned) and 4
//     (signed) little-endian bytes, G an 8-byte big-endian double, X a
//     UTF-8 str with a 4-byte length, ] and } the empty list and dict,
//     MARK ... APPENDS / SETITEMS in batches of 1,000 (one item alone gets
//     APPEND / SETITEM), BINPUT q<n>; protocol 2 adds the header 80 02,
//     NEWTRUE 88 / NEWFALSE 89 and LONG1 8a (other ints, little-endian
//     two's complement, as few bytes as hold the sign); 3 adds C/B bytes;
//     4 adds 8c (short str), MEMOIZE 94 instead of BINPUT, and FRAME 95: an
//     8-byte length of the opcodes that follow, written before each run of
//     at least 4 bytes, a new frame starting after 64 KiB and a str or bytes
//     payload of 64 KiB or more written outside any frame; 5 adds
//     BYTEARRAY8 96;
//   * before protocol 3 there is no bytes opcode: CPython writes
//     _codecs.encode('<the bytes as Latin-1 text>', 'latin1'), and
//     __builtin__.bytes() for b'', with GLOBAL c<module>\n<name>\n and
//     REDUCE R (call); sets and frozensets before protocol 4 and bytearray
//     before 5 are builtins.set([...]), frozenset([...]), bytearray(b'...').
//     The reader evaluates exactly these itself, on the arguments CPython
//     writes (_codecs.encode(str, 'latin1'); bytes, bytearray of nothing or
//     bytes; set, frozenset of nothing or a list, tuple or set), looking
//     up no name; __builtin__ is taken for builtins before protocol 3, as
//     CPython does;
//   * every other GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
//     NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, NEXT_BUFFER and READONLY_BUFFER
//     would import a module or call code in Python: the reader resolves no
//     name and calls nothing, it checks that the rest of the opcodes are
//     well-formed and the whole input decodes to
//     Value::serialized("pickle", bytes).
//
// Python objects as Values: None null, bool, int (int64; a larger int is a
// kTooLarge error), float, str kString, bytes and bytearray kBytes, Python 2
// str (STRING, BINSTRING, SHORT_BINSTRING) kBytes (it is a byte string:
// what pickle.loads(..., encoding='bytes') gives; Python 3 by default decodes
// it as ASCII), list and tuple kList, dict kMap (in the pickle's order),
// set and frozenset kList (in the pickle's order, i.e. the writer's
// iteration order). Equal dict keys and set items (which CPython never
// writes) are kept once, as Python keeps them: the first key, the last
// value. An object reached twice through the memo is copied (a Value is a
// tree); a str holding a lone surrogate (Python allows one) and a container
// that contains itself have no Value: serialized too.
//
// The parts: detail/pickle_python.hpp (kPickleHighestProtocol and what both
// directions take from Python: str's UTF-8, number text, key equality),
// detail/pickle_machine.hpp and detail/pickle_reader.hpp (the reader: its
// memory, then its opcodes and the Value tree), detail/pickle_writer.hpp
// (the writer).

#include <string>
#include <string_view>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/pickle_python.hpp"
#include "memshard/codecs/detail/pickle_reader.hpp"
#include "memshard/codecs/detail/pickle_writer.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// pickle_loads: the Value of a pickle of protocol 0 to 5, read without
/// importing or calling anything: None, bool, int, float, str, bytes,
/// bytearray, Python 2 str (as bytes), list, tuple (as a list), dict (a map,
/// in order), set and frozenset (lists). A pickle of anything else (a class
/// instance, a global, a persistent id) is Value::serialized("pickle",
/// bytes), as are a lone-surrogate str and a self-containing container.
/// Errors: kCorrupt (truncated, a missing STOP or bytes after it, an
/// unknown opcode, a stack underflow, a GET of an index never PUT, text
/// that is not a number, invalid UTF-8), kTooLarge (an int outside int64, a
/// float overflow, a string over limits.max_size, a tree over
/// limits.max_decoded_bytes, shared objects copied each time they are
/// reached, or an unpickler whose stack, memo and objects would take more
/// than that), kTooDeep (nesting deeper than limits.max_depth), kUnsupported
/// (protocol > 5).
[[nodiscard]] inline auto pickle_loads(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  detail::PickleReader reader(bytes, limits);
  return reader.run();
}

/// pickle_dumps: what CPython 3.11's pickle.dumps(value, protocol) writes
/// for the Python object `value` stands for: null None, bool, int, float,
/// string str, bytes bytes, list list, map dict (keys null, bool, int,
/// float, string or bytes, no two equal in Python's eyes: True, 1 and 1.0
/// are one key). Protocols 0 to 5; a negative protocol is 5, as in Python.
///
/// Byte-exactness depends on which objects are one object (the memo writes
/// a second occurrence as GET). The objects are those json.loads would
/// build: every list, dict and str is new, except that equal str dict keys
/// are one object, and that the empty str, the one-character strs below
/// U+0100, b'' and the one-byte bytes are CPython's shared singletons.
/// ["ab", "ab"] is two strs; ["a", "a"] one; [{"id": 1}, {"id": 2}] one
/// "id". A kSerialized "pickle" value is written back as it is (whatever
/// the protocol).
///
/// Errors (kNotEncodable): a protocol above 5, a kSerialized of another
/// format or inside a container, a string that is not UTF-8, a list or map
/// key, two equal keys, nesting deeper than 256.
[[nodiscard]] inline auto pickle_dumps(const Value& value, int protocol)
    -> CodecResult<std::string> {
  if (protocol < 0) {
    protocol = kPickleHighestProtocol;
  }
  if (protocol > kPickleHighestProtocol) {
    return CodecError(CodecErrc::kNotEncodable,
                      "pickle: protocol " + std::to_string(protocol) + " does not exist (0 to 5)");
  }
  if (value.is_serialized()) {
    const SerializedObject& serialized = value.as_serialized();
    if (serialized.format == detail::kPickleName) {
      return serialized.data;
    }
    return CodecError(CodecErrc::kNotEncodable,
                      "pickle: a serialized " + serialized.format + " value has no pickle form");
  }
  detail::PickleWriter writer(protocol);
  return writer.dump(value);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_PICKLE_HPP_
