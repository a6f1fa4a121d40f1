// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_RUBY_MARSHAL_HPP_
#define MEMSHARD_CODECS_RUBY_MARSHAL_HPP_

// codecs/ruby_marshal.hpp: marshal_load and marshal_dump, Ruby's Marshal
// format 4.8 for the values Dalli stores (Dalli's default serializer writes
// every value with Marshal.dump, Strings included, under flag 0x1), written
// byte for byte as Ruby 3.1 writes them.
//
// A stream is the version `04 08` and one object. Each object starts with a
// type byte:
//
//   0 T F                  nil, true, false
//   i <long>               Fixnum: Ruby writes it for -2^30 .. 2^30-1
//   l <+|-> <long n> <2n bytes>  Bignum: sign, count of 16-bit words, the
//                          magnitude little-endian (2^40 is `l + 08 00 00 00 00 00 01`)
//   f <long n> <n bytes>   Float as text: the shortest digits that read back
//                          as the double, in exponent form when the decimal
//                          point is more than 3 places left of the digits or
//                          right of their end (3.25, 0.3333333333333333,
//                          0.0001, 1e-5, 1e2 for 100.0, 1e21,
//                          4.611686018427388e18), or 0, -0, inf, -inf, nan
//   " <long n> <n bytes>   String: its bytes (binary, ASCII-8BIT, as is)
//   : <long n> <n bytes>   Symbol; ; <long k> is the k-th Symbol written before
//   [ <long n> <n objects> Array
//   { <long n> <n key, value pairs>   Hash; } is a Hash with a default value
//                          (the default follows the pairs)
//   @ <long k>             the k-th object written before (a back-reference)
//   I <object> <long n> <n Symbol, object pairs>   the object's instance
//                          variables: a String's encoding is `:E` true
//                          (UTF-8), `:E` false (US-ASCII) or `:encoding` and
//                          the encoding's name as a String
//   o c m M e C u U d S /  an Object, Class, Module, extended or user-class
//                          object, _dump or marshal_dump data, Data, Struct,
//                          Regexp: each names a class or module
//
// A <long> is packed: 00 is 0; 05..7f are 0..122 (the byte minus 5); 80..fb
// are -123..0 (the signed byte plus 5); 01..04 are followed by that many
// bytes of an unsigned little-endian number; ff..fc by that many bytes that
// replace the low bytes of -1. Ruby writes the shortest form (0 as 00).
//
// Symbols are numbered from 0 in the order they are first written; so are
// objects: every String, Array, Hash, Float and Bignum (and every class
// instance), as it starts, nil, true, false, Fixnums and Symbols excepted.
// Ruby writes `@` for an object it has already written. A tree of values has
// such repeats where Ruby shares objects: a Float in the "flonum" range
// (exponent bits 0x300..0x4ff, and +0.0) is one object per value, so a
// repeated 1.5 is written as `@`; Hash keys that are Strings are interned, so
// a key equal (same bytes, same encoding) to an earlier key is written as
// `@`; an encoding name String is written once and linked after that. The
// first UTF-8 String writes the Symbol E (`: 06 45`), later ones link it
// (`; 00` when E is the first Symbol).
//
// marshal_load decodes nil, true, false, Fixnum and Bignum (int64, else
// kTooLarge), Float, String (kString when an encoding is declared, kBytes
// for a binary String), Symbol (kString), Array (list), Hash (map, keys of
// any kind) and links (a copy of the object linked to). Anything that names a
// class or module, a Hash with a default, instance variables other than a
// String's encoding, and a link back into an unfinished object (a cycle) are
// recognised and kept: the whole input decodes to
// Value::serialized("ruby-marshal", input). No class is ever looked up or
// instantiated. Links can repeat an object many times: the first pass
// measures the memory of the value they make (sizeof(Value) for each node,
// plus the bytes of its strings and Symbols, a link counting as the copy it
// places), which must be within limits.max_decoded_bytes before anything is
// built. Ruby's own Marshal.load ignores bytes after the object;
// marshal_load refuses them (kCorrupt). Ruby 1.8's Float form (text, NUL,
// binary mantissa) is kUnsupported.
//
// marshal_dump writes kString as a UTF-8 String, kBytes as a binary String,
// lists as Arrays, maps as Hashes, ints as Fixnums or Bignums, with Ruby's
// Symbol and object links. A Float that is not a flonum (1e300, -0.0,
// infinities, NaN) is written as a separate object each time, as Ruby does
// for Floats computed separately (Ruby links a repeated Float::INFINITY
// constant, one object; a Value cannot say that).
//
// The parts: detail/ruby_marshal_format.hpp (the format's name and its Float
// text, both directions), detail/ruby_marshal_reader.hpp (the reader),
// detail/ruby_marshal_writer.hpp (the writer and kMarshalMaxDumpDepth).

#include <string>
#include <string_view>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/ruby_marshal_format.hpp"
#include "memshard/codecs/detail/ruby_marshal_reader.hpp"
#include "memshard/codecs/detail/ruby_marshal_writer.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// marshal_load: the Value of a Ruby Marshal 4.8 stream (`04 08` and one
/// object): kNull, kBool, kInt, kFloat, kString (a String with an encoding,
/// or a Symbol), kBytes (a binary String), kList, kMap; a link is a copy of
/// the object it names. An input that holds an object of a class, a Hash
/// with a default, other instance variables or a cycle is
/// Value::serialized("ruby-marshal", bytes). Errors: kUnsupported for
/// another version; kCorrupt for a truncated or malformed stream, a link to
/// an object or Symbol not yet written, or bytes after the object;
/// kTooLarge for an integer outside int64, an input over limits.max_size or a
/// value (links copied) over limits.max_decoded_bytes, measured before
/// anything is built; kTooDeep past limits.max_depth.
[[nodiscard]] inline auto marshal_load(std::string_view bytes, const DecodeLimits& limits = {})
    -> CodecResult<Value> {
  if (bytes.size() > limits.max_size) {
    return detail::marshal_error(CodecErrc::kTooLarge, 0,
                                 "the input has " + std::to_string(bytes.size()) +
                                     " bytes, more than the limit of " +
                                     std::to_string(limits.max_size));
  }
  if (bytes.size() < 2) {
    return detail::marshal_error(CodecErrc::kCorrupt, bytes.size(),
                                 "the data ends inside the version bytes");
  }
  const auto major = static_cast<unsigned char>(bytes[0]);
  const auto minor = static_cast<unsigned char>(bytes[1]);
  if (major != 4 || minor != 8) {
    return detail::marshal_error(
        CodecErrc::kUnsupported, 0,
        "version " + std::to_string(major) + "." + std::to_string(minor) + " (only 4.8 is read)");
  }
  detail::MarshalReader reader(bytes, limits);
  return reader.load();
}

/// marshal_dump: `value` as Ruby 3.1's Marshal.dump writes the matching Ruby
/// object: kString as a UTF-8 String (`I"…` with `:E` true), kBytes as a
/// binary String, kList as an Array, kMap as a Hash (String keys interned, as
/// Hash#[]= does), kInt as a Fixnum or a Bignum, kFloat as Float text. A
/// kSerialized "ruby-marshal" value is its data, unchanged; any other
/// kSerialized value, one nested in a list or map, or a string or list of
/// 2^31 or more bytes or items is kNotEncodable.
[[nodiscard]] inline auto marshal_dump(const Value& value) -> CodecResult<std::string> {
  if (value.is_serialized()) {
    const SerializedObject& object = value.as_serialized();
    if (object.format == detail::kMarshalFormat) {
      return object.data;
    }
    return CodecError(CodecErrc::kNotEncodable, std::string(detail::kMarshalFormat) +
                                                    ": a serialized " + object.format +
                                                    " value has no Marshal form");
  }
  detail::MarshalWriter writer;
  return writer.dump(value);
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_RUBY_MARSHAL_HPP_
