// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_DETAIL_PICKLE_MACHINE_HPP_
#define MEMSHARD_CODECS_DETAIL_PICKLE_MACHINE_HPP_

// codecs/detail/pickle_machine.hpp: PickleMachine, the memory of the stack
// machine that pickle_loads runs (codecs/detail/pickle_reader.hpp): the
// input and its position, the stack, the marks, the memo, the strings and
// containers they share, the budget they are held to, and the constructors
// (PickleCallable) the reader evaluates itself.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/detail/decode_budget.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {
namespace detail {

/// PickleCallable: the data constructors the reader evaluates itself.
enum class PickleCallable : std::uint8_t {
  kNone,
  kCodecsEncode,  ///< _codecs.encode(str, 'latin1') -> bytes
  kBytes,         ///< builtins.bytes() / bytes(b)
  kBytearray,     ///< builtins.bytearray() / bytearray(b)
  kSet,           ///< builtins.set() / set(list)
  kFrozenSet,     ///< builtins.frozenset() / frozenset(list)
};

/// pickle_callable: the constructor that the global module.name names, or
/// kNone. `protocol`: the stream's protocol (__builtin__ is Python 2's name
/// for builtins, which CPython maps for protocols 0 to 2 only).
[[nodiscard]] constexpr auto pickle_callable(std::string_view module, std::string_view name,
                                             int protocol) noexcept -> PickleCallable {
  if (module == "_codecs") {
    return name == "encode" ? PickleCallable::kCodecsEncode : PickleCallable::kNone;
  }
  if (module != "builtins" && (module != "__builtin__" || protocol >= 3)) {
    return PickleCallable::kNone;
  }
  if (name == "bytes") {
    return PickleCallable::kBytes;
  }
  if (name == "bytearray") {
    return PickleCallable::kBytearray;
  }
  if (name == "set") {
    return PickleCallable::kSet;
  }
  if (name == "frozenset") {
    return PickleCallable::kFrozenSet;
  }
  return PickleCallable::kNone;
}

/// PickleMachine: the memory of pickle_loads' stack machine, which
/// PickleReader runs. The stack, the memo and the containers hold Refs:
/// small scalars inline, strings and containers as indexes into arenas, so
/// that the memo and the stack share objects as Python does.
///
/// Memory is held to limits.max_decoded_bytes twice over: the machine's own
/// (every Ref pushed, memo entry, mark, container and string, taken before it
/// is made: DUP, GET and a REDUCE of set() or _codecs.encode can copy much
/// from a few bytes), and, apart, the tree built after STOP (a shared object
/// is copied each time it is reached: its slots and strings are taken each
/// time, before they are allocated).
class PickleMachine {
 protected:
  PickleMachine(std::string_view input, const DecodeLimits& limits)
      : in_(input),
        limits_(limits),
        work_(limits.max_decoded_bytes),
        tree_(limits.max_decoded_bytes) {}

  /// Tag: what a Ref stands for.
  enum class Tag : std::uint8_t {
    kNone,
    kTrue,
    kFalse,
    kInt,        // bits: the int64
    kFloat,      // bits: the double's
    kText,       // bits: an index into texts_ (UTF-8)
    kBytes,      // bits: an index into texts_
    kContainer,  // bits: an index into containers_
  };
  /// Ref: one Python object.
  struct Ref {
    Tag tag = Tag::kNone;
    std::uint64_t bits = 0;
  };
  enum class Kind : std::uint8_t { kList, kTuple, kDict, kSet, kFrozenSet, kCallable };

  struct Container {
    std::vector<Ref> items;  // a dict's are key, value, key, value...
    std::size_t height = 1;  // 1 + the tallest item seen so far (not updated for later changes)
    Kind kind = Kind::kList;
    PickleCallable callable = PickleCallable::kNone;  // kCallable: the type or function
    bool hashable = false;                            // can be a dict key or a set item
    bool open = false;  // on the path being built (a cycle when met again)
  };
  /// kMemoEntryCost: what a new memo index costs of the machine's budget
  /// (the hash node: its index, its Ref, the next pointer, a bucket).
  static constexpr std::size_t kMemoEntryCost =
      sizeof(std::uint64_t) + sizeof(Ref) + 2 * sizeof(void*);

  // --- errors ---------------------------------------------------------------

  auto fail(CodecErrc code, const std::string& what) -> bool {
    error_.emplace(code, "pickle: at byte " + std::to_string(op_at_) + ": " + what);
    return false;
  }
  auto corrupt(const std::string& what) -> bool { return fail(CodecErrc::kCorrupt, what); }
  [[nodiscard]] auto underflow(std::string_view opcode) -> CodecError {
    return CodecError(CodecErrc::kCorrupt, "pickle: at byte " + std::to_string(op_at_) + ": " +
                                               std::string(opcode) +
                                               " finds too few objects on the stack above the "
                                               "last MARK");
  }
  auto fail_underflow(std::string_view opcode) -> bool {
    error_.emplace(underflow(opcode));
    return false;
  }
  [[nodiscard]] auto too_large_text() const -> CodecError {
    return CodecError(CodecErrc::kTooLarge, "pickle: a string decodes to more than " +
                                                std::to_string(limits_.max_size) + " bytes");
  }
  /// take_work: `bytes` of the machine's memory, before they are allocated.
  auto take_work(std::size_t bytes) -> bool {
    if (work_.take(bytes)) {
      return true;
    }
    return fail(CodecErrc::kTooLarge,
                "the unpickler's stack, memo and objects would take more than max_decoded_bytes " +
                    std::to_string(work_.limit()));
  }

  // --- input ----------------------------------------------------------------

  /// line: the text up to the next '\n' (which is consumed).
  auto line(std::string_view opcode, std::string_view& out) -> bool {
    const std::size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) {
      return corrupt(std::string(opcode) + " has no end of line: the input is truncated");
    }
    out = in_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return true;
  }
  /// fixed: the next `count` bytes (an opcode's fixed-size argument).
  auto fixed(std::size_t count, std::string_view opcode, std::string_view& out) -> bool {
    if (in_.size() - pos_ < count) {
      return corrupt(std::string(opcode) + " needs " + std::to_string(count) +
                     " bytes of argument, " + std::to_string(in_.size() - pos_) + " remain");
    }
    out = in_.substr(pos_, count);
    pos_ += count;
    return true;
  }
  [[nodiscard]] static auto little_endian(std::string_view bytes) noexcept -> std::uint64_t {
    std::uint64_t value = 0;
    for (std::size_t i = bytes.size(); i-- > 0;) {
      value = value << 8U | static_cast<unsigned char>(bytes[i]);
    }
    return value;
  }
  /// counted: a length of `width` bytes, then that many bytes (checked
  /// against what remains, then against max_size when `limited`).
  auto counted(std::size_t width, std::string_view opcode, bool limited, std::string_view& out)
      -> bool {
    std::string_view size_bytes;
    if (!fixed(width, opcode, size_bytes)) {
      return false;
    }
    const std::uint64_t size = little_endian(size_bytes);
    if (size > in_.size() - pos_) {
      return corrupt(std::string(opcode) + " declares " + std::to_string(size) + " bytes, " +
                     std::to_string(in_.size() - pos_) + " remain");
    }
    if (limited && size > limits_.max_size) {
      return fail(CodecErrc::kTooLarge, std::string(opcode) + " of " + std::to_string(size) +
                                            " bytes is over the limit of " +
                                            std::to_string(limits_.max_size));
    }
    out = in_.substr(pos_, static_cast<std::size_t>(size));
    pos_ += static_cast<std::size_t>(size);
    return true;
  }
  /// before_nul: the text up to its first NUL (where CPython's C string
  /// parsers stop).
  [[nodiscard]] static auto before_nul(std::string_view text) noexcept -> std::string_view {
    return text.substr(0, text.find('\0'));
  }

  // --- objects and the stack ----------------------------------------------------

  [[nodiscard]] auto fence() const noexcept -> std::size_t {
    return marks_.empty() ? 0 : marks_.back();
  }
  auto push(Ref ref) -> bool {
    if (!take_work(sizeof(Ref))) {
      return false;
    }
    stack_.push_back(ref);
    return true;
  }
  auto push_int(std::int64_t value) -> bool {
    return push(Ref{Tag::kInt, static_cast<std::uint64_t>(value)});
  }
  auto push_float(double value) -> bool {
    return push(Ref{Tag::kFloat, std::bit_cast<std::uint64_t>(value)});
  }
  auto push_bool(bool value) -> bool { return push(Ref{value ? Tag::kTrue : Tag::kFalse, 0}); }
  /// push_text: a str (`tag` kText, UTF-8) or bytes (kBytes), whose bytes
  /// the caller took with take_work before making it.
  auto push_text(Tag tag, std::string text) -> bool {
    if (!take_work(sizeof(std::string))) {
      return false;
    }
    texts_.push_back(std::move(text));
    return push(Ref{tag, texts_.size() - 1});
  }
  /// copy_text: push_text of a copy of `text`.
  auto copy_text(Tag tag, std::string_view text) -> bool {
    return take_work(text.size()) && push_text(tag, std::string(text));
  }
  auto push_container(Container container) -> bool {
    if (!take_work(sizeof(Container))) {
      return false;
    }
    containers_.push_back(std::move(container));
    return push(Ref{Tag::kContainer, containers_.size() - 1});
  }
  [[nodiscard]] auto container_of(Ref ref) -> Container* {
    return ref.tag == Tag::kContainer ? &containers_[static_cast<std::size_t>(ref.bits)] : nullptr;
  }
  [[nodiscard]] auto is_kind(Ref ref, Kind kind) -> bool {
    const Container* found = container_of(ref);
    return found != nullptr && found->kind == kind;
  }
  [[nodiscard]] auto height_of(Ref ref) -> std::size_t {
    const Container* found = container_of(ref);
    return found == nullptr || found->kind == Kind::kCallable ? 0 : found->height;
  }
  [[nodiscard]] auto hashable(Ref ref) -> bool {
    const Container* found = container_of(ref);
    return found == nullptr || found->hashable;
  }
  [[nodiscard]] auto text_of(Ref ref) const -> const std::string* {
    return ref.tag == Tag::kText ? &texts_[static_cast<std::size_t>(ref.bits)] : nullptr;
  }
  auto pop_mark(std::string_view opcode, std::size_t& mark) -> bool {
    if (marks_.empty()) {
      return corrupt(std::string(opcode) + " without a MARK");
    }
    mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  /// add_items: appends stack_[from..] to the container `target`.
  auto add_items(std::size_t target, std::size_t from) -> bool {
    std::size_t height = containers_[target].height;
    for (std::size_t i = from; i < stack_.size(); ++i) {
      const std::size_t item = height_of(stack_[i]) + 1;
      height = item > height ? item : height;
    }
    Container& node = containers_[target];
    node.items.insert(node.items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from),
                      stack_.end());
    node.height = height;
    stack_.resize(from);
    if (height > limits_.max_depth) {
      return fail(CodecErrc::kTooDeep,
                  "containers nested deeper than " + std::to_string(limits_.max_depth));
    }
    return true;
  }
  /// container: a new container of stack_[from..], which leave the stack.
  auto container(Kind kind, std::size_t from) -> bool {
    if (!take_work(sizeof(Container))) {
      return false;
    }
    Container node;
    node.kind = kind;
    node.hashable = kind == Kind::kTuple || kind == Kind::kFrozenSet;
    if (kind == Kind::kTuple) {
      for (std::size_t i = from; i < stack_.size(); ++i) {
        node.hashable = node.hashable && hashable(stack_[i]);
      }
    }
    containers_.push_back(std::move(node));
    const std::size_t index = containers_.size() - 1;
    if (!add_items(index, from)) {
      return false;
    }
    return push(Ref{Tag::kContainer, index});
  }
  auto empty_container(Kind kind) -> bool {
    Container node;
    node.kind = kind;
    return push_container(std::move(node));
  }
  auto check_hashable(std::size_t from, std::size_t step) -> bool {
    for (std::size_t i = from; i < stack_.size(); i += step) {
      if (!hashable(stack_[i])) {
        return corrupt("a list, dict or set used as a dict key or set item (unhashable)");
      }
    }
    return true;
  }
  auto memo_put(std::uint64_t index, std::string_view opcode) -> bool {
    if (stack_.size() <= fence()) {
      return fail_underflow(opcode);
    }
    if (!memo_.contains(index) && !take_work(kMemoEntryCost)) {
      return false;
    }
    memo_[index] = stack_.back();
    return true;
  }
  auto memo_get(std::uint64_t index) -> bool {
    const auto found = memo_.find(index);
    if (found == memo_.end()) {
      return corrupt("GET of memo index " + std::to_string(index) + ", which was never PUT");
    }
    return push(found->second);
  }

  std::string_view in_;
  DecodeLimits limits_;
  std::size_t pos_ = 0;
  std::size_t op_at_ = 0;
  int protocol_ = 0;
  bool opaque_ = false;
  std::vector<Ref> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, Ref> memo_;
  std::vector<std::string> texts_;
  std::vector<Container> containers_;
  DecodeBudget work_;
  DecodeBudget tree_;
  std::optional<CodecError> error_;
};

}  // namespace detail
}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_DETAIL_PICKLE_MACHINE_HPP_
