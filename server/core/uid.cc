#include "server/core/uid.h"

namespace kq {
namespace {

// Where the hyphens of a UUID's canonical text are.
bool IsHyphenAt(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// A lowercase hex digit's value, or -1 (uppercase is not canonical).
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

Uid::Uid(const Uid& other)
    : hi_(other.hi_),
      lo_(other.lo_),
      text_(other.text_ == nullptr
                ? nullptr
                : std::make_unique<std::string>(*other.text_)) {}

Uid& Uid::operator=(const Uid& other) {
  if (this != &other) *this = Uid(other);
  return *this;
}

void Uid::Assign(absl::string_view text) {
  hi_ = 0;
  lo_ = 0;
  text_.reset();
  if (text.empty()) return;
  bool canonical = text.size() == kUuidLength;
  uint64_t hi = 0;
  uint64_t lo = 0;
  int digits = 0;
  for (size_t i = 0; canonical && i < text.size(); ++i) {
    if (IsHyphenAt(i)) {
      canonical = text[i] == '-';
      continue;
    }
    const int value = HexValue(text[i]);
    if (value < 0) {
      canonical = false;
      break;
    }
    uint64_t& half = digits < 16 ? hi : lo;
    half = (half << 4) | static_cast<uint64_t>(value);
    ++digits;
  }
  if (canonical && (hi != 0 || lo != 0)) {
    hi_ = hi;
    lo_ = lo;
    return;
  }
  text_ = std::make_unique<std::string>(text);
}

absl::string_view Uid::Format(char (&buffer)[kUuidLength]) const {
  static constexpr char kDigits[] = "0123456789abcdef";
  int digit = 0;
  for (size_t i = 0; i < kUuidLength; ++i) {
    if (IsHyphenAt(i)) {
      buffer[i] = '-';
      continue;
    }
    const uint64_t half = digit < 16 ? hi_ : lo_;
    const int shift = 60 - 4 * (digit % 16);
    buffer[i] = kDigits[(half >> shift) & 0xf];
    ++digit;
  }
  return absl::string_view(buffer, kUuidLength);
}

std::string Uid::str() const {
  if (text_ != nullptr) return *text_;
  return WithText([](absl::string_view text) { return std::string(text); });
}

int Uid::compare(const Uid& other) const {
  if (text_ == nullptr && other.text_ == nullptr && !empty() &&
      !other.empty()) {
    if (hi_ != other.hi_) return hi_ < other.hi_ ? -1 : 1;
    if (lo_ != other.lo_) return lo_ < other.lo_ ? -1 : 1;
    return 0;
  }
  return WithText([&](absl::string_view a) {
    return other.WithText([&](absl::string_view b) { return a.compare(b); });
  });
}

}  // namespace kq
