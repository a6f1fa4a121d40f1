// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_JAVA_SERIALIZATION_HPP_
#define MEMSHARD_CODECS_JAVA_SERIALIZATION_HPP_

// codecs/java_serialization.hpp: is_java_serialization, the recogniser of Java
// object serialization streams (java.io.ObjectOutputStream), what
// spymemcached's SerializingTranscoder stores under flag 0x1 for anything that
// is not a String, a number, a Boolean, a Date or a byte[] (a HashMap, a
// List, any Serializable object).
//
// A stream starts with the magic ac ed and the protocol version 00 05, then
// the objects: a java.util.HashMap is `73 72 00 11 "java.util.HashMap" ...`, a
// class descriptor followed by data its own writeObject() laid out (the load
// factor, threshold, bucket count, size, then the keys and values). memshard
// does not take these streams apart: a codec that meets one keeps it as
// Value::serialized("java-serialization", bytes).

#include <string_view>

#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// is_java_serialization: whether `bytes` start with the Java serialization
/// stream magic and version, ac ed 00 05.
[[nodiscard]] constexpr auto is_java_serialization(std::string_view bytes) noexcept -> bool {
  return bytes.size() >= 4 && static_cast<unsigned char>(bytes[0]) == 0xACU &&
         static_cast<unsigned char>(bytes[1]) == 0xEDU && bytes[2] == '\0' && bytes[3] == '\x05';
}

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_JAVA_SERIALIZATION_HPP_
