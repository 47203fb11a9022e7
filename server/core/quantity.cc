#include "server/core/quantity.h"

#include <cctype>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace kq {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

absl::Status Malformed(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("quantity \"", text, "\" is malformed: ", why));
}

// An exact rational value: digits * 10^exp10 * 2^exp2, with digits as a
// decimal string, so no precision is lost before the final rounding.
struct Parsed {
  bool negative = false;
  std::string digits;  // integer + fraction digits, no leading sign
  int exp10 = 0;
  int exp2 = 0;
};

// Converts digits * 10^exp10 * 2^exp2 * 1000 to int64, rounding up away from
// zero's floor (ceil of the magnitude), saturating on overflow.
int64_t ToMilli(const Parsed& p) {
  // Work in unsigned __int128 on the magnitude; saturate beyond int64.
  using U = unsigned __int128;
  const U limit = static_cast<U>(kMax);
  int exp10 = p.exp10 + 3;  // milli
  U value = 0;
  bool overflow = false;
  for (char c : p.digits) {
    value = value * 10 + static_cast<U>(c - '0');
    if (value > (static_cast<U>(1) << 100)) {
      overflow = true;
      break;
    }
  }
  if (!overflow) {
    for (int i = 0; i < p.exp2; ++i) {
      value *= 2;
      if (value > (static_cast<U>(1) << 120)) {
        overflow = true;
        break;
      }
    }
  }
  bool round_up = false;
  if (!overflow) {
    while (exp10 > 0) {
      value *= 10;
      --exp10;
      if (value > (static_cast<U>(1) << 120)) {
        overflow = true;
        break;
      }
    }
    while (exp10 < 0 && !overflow) {
      if (value % 10 != 0) round_up = true;
      value /= 10;
      ++exp10;
    }
  }
  if (!overflow && round_up) value += 1;
  if (overflow || value > limit) return p.negative ? kMin + 1 : kMax;
  int64_t v = static_cast<int64_t>(value);
  return p.negative ? -v : v;
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(absl::string_view text) {
  if (text.empty()) return Malformed(text, "empty");
  Parsed p;
  size_t i = 0;
  if (text[i] == '+' || text[i] == '-') {
    p.negative = text[i] == '-';
    ++i;
  }
  size_t int_digits = 0, frac_digits = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    p.digits.push_back(text[i]);
    ++i;
    ++int_digits;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() &&
           std::isdigit(static_cast<unsigned char>(text[i]))) {
      p.digits.push_back(text[i]);
      ++i;
      ++frac_digits;
    }
  }
  if (int_digits + frac_digits == 0) {
    return Malformed(text, "expected a number");
  }
  p.exp10 = -static_cast<int>(frac_digits);
  absl::string_view suffix = text.substr(i);
  if (suffix.empty()) {
  } else if (suffix == "Ki") {
    p.exp2 = 10;
  } else if (suffix == "Mi") {
    p.exp2 = 20;
  } else if (suffix == "Gi") {
    p.exp2 = 30;
  } else if (suffix == "Ti") {
    p.exp2 = 40;
  } else if (suffix == "Pi") {
    p.exp2 = 50;
  } else if (suffix == "Ei") {
    p.exp2 = 60;
  } else if (suffix == "n") {
    p.exp10 -= 9;
  } else if (suffix == "u") {
    p.exp10 -= 6;
  } else if (suffix == "m") {
    p.exp10 -= 3;
  } else if (suffix == "k") {
    p.exp10 += 3;
  } else if (suffix == "M") {
    p.exp10 += 6;
  } else if (suffix == "G") {
    p.exp10 += 9;
  } else if (suffix == "T") {
    p.exp10 += 12;
  } else if (suffix == "P") {
    p.exp10 += 15;
  } else if (suffix == "E") {
    p.exp10 += 18;
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    absl::string_view exp = suffix.substr(1);
    bool neg = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      neg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 4) {
      return Malformed(text, "bad exponent");
    }
    int e = 0;
    for (char c : exp) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return Malformed(text, "bad exponent");
      }
      e = e * 10 + (c - '0');
    }
    p.exp10 += neg ? -e : e;
  } else {
    return Malformed(text, absl::StrCat("unknown suffix \"", suffix, "\""));
  }
  if (p.exp10 > 40) return Quantity(p.negative ? kMin + 1 : kMax);
  if (p.exp10 < -40) {
    // Tiny but non-zero values still round up to one milli-unit.
    bool nonzero = p.digits.find_first_not_of('0') != std::string::npos;
    return Quantity(nonzero ? (p.negative ? -1 : 1) : 0);
  }
  return Quantity(ToMilli(p));
}

int64_t Quantity::Value() const {
  if (milli_ == kMax) return kMax;
  if (milli_ >= 0) return milli_ / 1000 + (milli_ % 1000 != 0 ? 1 : 0);
  return milli_ / 1000;  // rounds toward zero, i.e. up for negatives
}

std::string Quantity::ToString(bool binary) const {
  if (milli_ == kMax) return "9223372036854775807m";
  if (milli_ % 1000 != 0) return absl::StrCat(milli_, "m");
  int64_t v = milli_ / 1000;
  if (v == 0) return "0";
  if (binary) {
    static constexpr const char* kBinary[] = {"",   "Ki", "Mi", "Gi",
                                              "Ti", "Pi", "Ei"};
    int k = 0;
    while (k < 6 && v % 1024 == 0) {
      v /= 1024;
      ++k;
    }
    return absl::StrCat(v, kBinary[k]);
  }
  static constexpr const char* kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  int k = 0;
  while (k < 6 && v % 1000 == 0) {
    v /= 1000;
    ++k;
  }
  return absl::StrCat(v, kDecimal[k]);
}

int64_t ResourceAmount(absl::string_view resource, Quantity q) {
  return resource == "cpu" ? q.milli() : q.Value();
}

Quantity QuantityFromAmount(absl::string_view resource, int64_t amount) {
  if (resource == "cpu") return Quantity::FromMilli(amount);
  if (amount == kMax) return Quantity::Max();
  return Quantity::FromMilli(SaturatingMul(amount, 1000));
}

bool UsesBinaryFormat(absl::string_view resource) {
  return resource == "memory" || resource == "ephemeral-storage" ||
         absl::StartsWith(resource, "hugepages-");
}

std::string FormatAmount(absl::string_view resource, int64_t amount) {
  return QuantityFromAmount(resource, amount)
      .ToString(UsesBinaryFormat(resource));
}

int64_t SaturatingAdd(int64_t a, int64_t b) {
  if (a == kMax || b == kMax) return kMax;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMax : kMin;
  return r;
}

int64_t SaturatingSub(int64_t a, int64_t b) {
  if (a == kMax && b == kMax) return 0;
  if (a == kMax) return kMax;
  if (b == kMax) return kMin;
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kMax : kMin;
  return r;
}

int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return ((a < 0) != (b < 0)) ? kMin : kMax;
  }
  return r;
}

}  // namespace kq
