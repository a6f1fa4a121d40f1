// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_CODECS_ANY_CODEC_HPP_
#define MEMSHARD_CODECS_ANY_CODEC_HPP_

// codecs/any_codec.hpp: AnyCodec, any Codec behind one type, for a codec
// chosen at run time (per call, from configuration, by memshard-get). Copies
// share the codec, which is immutable.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "memshard/codecs/codec.hpp"
#include "memshard/codecs/codec_result.hpp"
#include "memshard/codecs/value.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// AnyCodec: a Codec holding any other.
///
/// **Example**:
///   AnyCodec codec = PhpMemcachedCodec{};
///   auto value = codec.decode(item.value, item.flags);
class AnyCodec {
 public:
  template <class C>
  requires(Codec<std::remove_cvref_t<C>> && !std::is_same_v<std::remove_cvref_t<C>, AnyCodec>)
      AnyCodec(C&& codec)  // NOLINT(google-explicit-constructor)
      : self_(std::make_shared<const Model<std::remove_cvref_t<C>>>(std::forward<C>(codec))) {}

  [[nodiscard]] auto name() const noexcept -> std::string_view { return self_->name(); }
  [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> {
    return self_->encode(value);
  }
  [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
      -> CodecResult<Value> {
    return self_->decode(bytes, flags);
  }

  /// target: the codec held, when it is a C; nullptr otherwise.
  template <class C>
  [[nodiscard]] auto target() const noexcept -> const C* {
    const auto* model = dynamic_cast<const Model<C>*>(self_.get());
    return model == nullptr ? nullptr : &model->codec;
  }

 private:
  struct Interface {
    Interface() = default;
    Interface(const Interface&) = delete;
    auto operator=(const Interface&) -> Interface& = delete;
    virtual ~Interface() = default;
    [[nodiscard]] virtual auto name() const noexcept -> std::string_view = 0;
    [[nodiscard]] virtual auto encode(const Value& value) const -> CodecResult<Encoded> = 0;
    [[nodiscard]] virtual auto decode(std::string_view bytes, std::uint32_t flags) const
        -> CodecResult<Value> = 0;
  };
  template <class C>
  struct Model final : Interface {
    explicit Model(C held) : codec(std::move(held)), kept_name(codec.name()) {}
    // The name is kept: a codec's name() may return a std::string by value.
    [[nodiscard]] auto name() const noexcept -> std::string_view override { return kept_name; }
    [[nodiscard]] auto encode(const Value& value) const -> CodecResult<Encoded> override {
      return codec.encode(value);
    }
    [[nodiscard]] auto decode(std::string_view bytes, std::uint32_t flags) const
        -> CodecResult<Value> override {
      return codec.decode(bytes, flags);
    }
    C codec;
    std::string kept_name;
  };

  std::shared_ptr<const Interface> self_;
};

static_assert(Codec<AnyCodec>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_CODECS_ANY_CODEC_HPP_
