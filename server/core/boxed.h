#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace kq {

// std::optional's interface with the value on the heap: for a field most
// objects leave unset, which then costs a pointer instead of the value's
// size. kqd holds every pending workload in memory, and a pending one has
// no admission, runner or deadlines. Copies are deep; comparison compares
// values. Unlike std::optional, a moved-from Boxed is empty, and comparing
// with a T makes a Boxed of it first.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT: as std::optional
  Boxed(const T& value) : value_(std::make_unique<T>(value)) {}  // NOLINT
  Boxed(T&& value)  // NOLINT: as std::optional
      : value_(std::make_unique<T>(std::move(value))) {}
  Boxed(const std::optional<T>& value) {  // NOLINT: as std::optional
    if (value.has_value()) value_ = std::make_unique<T>(*value);
  }
  Boxed(const Boxed& other)
      : value_(other.value_ ? std::make_unique<T>(*other.value_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;

  Boxed& operator=(const Boxed& other) {
    if (this == &other) return *this;
    if (!other.value_) {
      value_.reset();
    } else if (value_) {
      *value_ = *other.value_;
    } else {
      value_ = std::make_unique<T>(*other.value_);
    }
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    value_.reset();
    return *this;
  }
  Boxed& operator=(const T& value) {
    if (value_) {
      *value_ = value;
    } else {
      value_ = std::make_unique<T>(value);
    }
    return *this;
  }
  Boxed& operator=(T&& value) {
    if (value_) {
      *value_ = std::move(value);
    } else {
      value_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }
  Boxed& operator=(const std::optional<T>& value) {
    if (value.has_value()) return *this = *value;
    value_.reset();
    return *this;
  }

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return value_.get(); }
  const T* operator->() const { return value_.get(); }
  template <typename U>
  T value_or(U&& fallback) const {
    return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
  }
  void reset() { value_.reset(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    value_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *value_;
  }
  // As std::optional<T>: for callers that keep a copy.
  std::optional<T> ToOptional() const {
    return value_ ? std::optional<T>(*value_) : std::nullopt;
  }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    if (!a.value_ || !b.value_) return !a.value_ && !b.value_;
    return *a.value_ == *b.value_;
  }
  friend bool operator==(const Boxed& a, std::nullopt_t) {
    return !a.has_value();
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace kq
