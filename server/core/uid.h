#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace kq {

// An object's metadata.uid. kqd makes its uids as random UUIDs in their
// canonical text (36 lowercase hex digits and hyphens), which a Uid keeps
// as the 16 bytes they stand for: 24 bytes in all, where a std::string
// takes 32 and 48 more on the heap. Any other text (a client's or a
// test's uid) is kept as given, on the heap. Order and equality are the
// texts': canonical UUIDs order as their 128-bit values do.
class Uid {
 public:
  // The longest text a UUID has.
  static constexpr size_t kUuidLength = 36;

  Uid() = default;
  // Implicit: a uid is assigned from text wherever kqd reads one.
  Uid(absl::string_view text) { Assign(text); }   // NOLINT
  Uid(const std::string& text) { Assign(text); }  // NOLINT
  Uid(const char* text) { Assign(text); }         // NOLINT
  Uid(const Uid& other);
  Uid(Uid&&) noexcept = default;
  Uid& operator=(const Uid& other);
  Uid& operator=(Uid&&) noexcept = default;

  bool empty() const { return text_ == nullptr && hi_ == 0 && lo_ == 0; }
  void clear() { *this = Uid(); }
  std::string str() const;
  // Calls `fn` with the text as an absl::string_view, which lives only
  // during the call (a UUID's text is formatted on the stack).
  template <typename Fn>
  decltype(auto) WithText(Fn&& fn) const {
    if (text_ != nullptr) return fn(absl::string_view(*text_));
    if (empty()) return fn(absl::string_view());
    char buffer[kUuidLength];
    return fn(Format(buffer));
  }
  // <0, 0, >0 as the texts compare.
  int compare(const Uid& other) const;

  friend bool operator==(const Uid& a, const Uid& b) {
    // A canonical text is never kept as text, so a kept text never equals
    // a UUID.
    if (a.text_ != nullptr || b.text_ != nullptr) {
      return a.text_ != nullptr && b.text_ != nullptr && *a.text_ == *b.text_;
    }
    return a.hi_ == b.hi_ && a.lo_ == b.lo_;
  }
  friend bool operator<(const Uid& a, const Uid& b) { return a.compare(b) < 0; }
  template <typename H>
  friend H AbslHashValue(H h, const Uid& uid) {
    if (uid.text_ != nullptr) return H::combine(std::move(h), *uid.text_);
    return H::combine(std::move(h), uid.hi_, uid.lo_);
  }
  friend std::ostream& operator<<(std::ostream& os, const Uid& uid) {
    return uid.WithText(
        [&](absl::string_view text) -> std::ostream& { return os << text; });
  }

 private:
  void Assign(absl::string_view text);
  // The canonical text of the UUID held as hi_ and lo_, in `buffer`.
  absl::string_view Format(char (&buffer)[kUuidLength]) const;

  // The UUID's bytes, big-endian; both 0 (with no text_) for no uid. The
  // nil UUID is kept as text.
  uint64_t hi_ = 0;
  uint64_t lo_ = 0;
  std::unique_ptr<std::string> text_;
};

}  // namespace kq
