// SPDX-License-Identifier: MIT
#ifndef MEMSHARD_PLACEMENT_LOCATORS_ANY_LOCATOR_HPP_
#define MEMSHARD_PLACEMENT_LOCATORS_ANY_LOCATOR_HPP_

// placement/locators/any_locator.hpp: AnyLocator, a type-erased Locator for placements chosen at
// run time (a profile name in a configuration file).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "memshard/placement/locators/locator.hpp"
#include "memshard/version.hpp"

namespace memshard {
inline namespace MEMSHARD_ABI_NAMESPACE {

/// AnyLocator: holds any Locator behind one virtual call. Copies share the same
/// immutable locator, so copying is cheap and thread-safe.
///
/// Exception guarantee: construction may throw std::bad_alloc; locate and size
/// are noexcept.
class AnyLocator {
 public:
  /// Wraps `locator`; `description` says what it is (for logs and tools).
  template <Locator L>
  explicit AnyLocator(L locator, std::string description = {})
      : impl_(std::make_shared<const Model<L>>(std::move(locator))),
        description_(std::move(description)) {}

  /// locate: the index of the key's server, in the caller's order.
  [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t {
    return impl_->locate(key);
  }

  /// locate_avoiding: see FailoverLocator. A wrapped locator that is not a
  /// FailoverLocator answers locate(key).
  [[nodiscard]] auto locate_avoiding(std::string_view key,
                                     std::span<const std::uint8_t> avoid) const noexcept
      -> std::size_t {
    return impl_->locate_avoiding(key, avoid);
  }

  /// can_fail_over: whether locate_avoiding really avoids servers: true iff
  /// the wrapped locator can fail over (memshard::can_fail_over: it is a
  /// FailoverLocator, or, for a wrapped AnyLocator or HashTagLocator, its own
  /// answer).
  [[nodiscard]] auto can_fail_over() const noexcept -> bool { return impl_->can_fail_over(); }

  /// locate_many: see BatchLocator (one locate() per key for a wrapped
  /// locator that is not one).
  void locate_many(std::span<const std::string_view> keys,
                   std::span<std::size_t> out) const noexcept {
    impl_->locate_many(keys, out);
  }

  /// size: the number of servers.
  [[nodiscard]] auto size() const noexcept -> std::size_t { return impl_->size(); }

  /// description: the profile and options this locator was made from.
  [[nodiscard]] auto description() const noexcept -> std::string_view { return description_; }

  /// target: the wrapped locator if it is an `L`, else nullptr.
  template <Locator L>
  [[nodiscard]] auto target() const noexcept -> const L* {
    const auto* model = dynamic_cast<const Model<L>*>(impl_.get());
    return model == nullptr ? nullptr : &model->locator;
  }

 private:
  struct Base {
    Base() = default;
    Base(const Base&) = delete;
    auto operator=(const Base&) -> Base& = delete;
    Base(Base&&) = delete;
    auto operator=(Base&&) -> Base& = delete;
    virtual ~Base() = default;
    [[nodiscard]] virtual auto locate(std::string_view key) const noexcept -> std::size_t = 0;
    [[nodiscard]] virtual auto locate_avoiding(std::string_view key,
                                               std::span<const std::uint8_t> avoid) const noexcept
        -> std::size_t = 0;
    virtual void locate_many(std::span<const std::string_view> keys,
                             std::span<std::size_t> out) const noexcept = 0;
    [[nodiscard]] virtual auto can_fail_over() const noexcept -> bool = 0;
    [[nodiscard]] virtual auto size() const noexcept -> std::size_t = 0;
  };

  template <class L>
  struct Model final : Base {
    explicit Model(L&& value) : locator(std::move(value)) {}
    [[nodiscard]] auto locate(std::string_view key) const noexcept -> std::size_t override {
      return locator.locate(key);
    }
    [[nodiscard]] auto locate_avoiding(std::string_view key,
                                       std::span<const std::uint8_t> avoid) const noexcept
        -> std::size_t override {
      if constexpr (FailoverLocator<L>) {
        return locator.locate_avoiding(key, avoid);
      } else {
        (void)avoid;
        return locator.locate(key);
      }
    }
    void locate_many(std::span<const std::string_view> keys,
                     std::span<std::size_t> out) const noexcept override {
      if constexpr (BatchLocator<L>) {
        locator.locate_many(keys, out);
      } else {
        for (std::size_t i = 0; i < keys.size(); ++i) {
          out[i] = locator.locate(keys[i]);
        }
      }
    }
    [[nodiscard]] auto can_fail_over() const noexcept -> bool override {
      return memshard::can_fail_over(locator);
    }
    [[nodiscard]] auto size() const noexcept -> std::size_t override { return locator.size(); }
    L locator;
  };

  std::shared_ptr<const Base> impl_;
  std::string description_;
};

static_assert(FailoverLocator<AnyLocator>);
static_assert(BatchLocator<AnyLocator>);

}  // namespace MEMSHARD_ABI_NAMESPACE
}  // namespace memshard

#endif  // MEMSHARD_PLACEMENT_LOCATORS_ANY_LOCATOR_HPP_
