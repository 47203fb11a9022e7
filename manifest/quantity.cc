#include "manifest/quantity.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kq::manifest::internal {
namespace {

using Wide = unsigned __int128;

// More significant digits than this cannot be summed exactly in int64
// milli-units anyway; refusing them keeps the arithmetic below in 128 bits.
constexpr size_t kMaxSignificantDigits = 20;
// Exponents beyond this are either zero or overflow for any mantissa that
// passed the digit limit; bounding them bounds the scaling loops.
constexpr int kMaxExponent = 1000;

absl::Status NotAQuantity(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("\"", text, "\" is not a quantity: ", why));
}

// Suffix -> (power of ten, power of two, format). Exactly one of the powers
// is non-zero, except for the empty suffix.
struct Suffix {
  absl::string_view text;
  int exp10;
  int exp2;
};
constexpr Suffix kSuffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},
    {"k", 3, 0},   {"M", 6, 0},   {"G", 9, 0},   {"T", 12, 0},
    {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

}  // namespace

absl::StatusOr<MilliQuantity> ParseQuantity(absl::string_view text) {
  absl::string_view rest = text;
  if (rest.empty()) return NotAQuantity(text, "it is empty");
  bool negative = false;
  if (rest[0] == '+' || rest[0] == '-') {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }

  // 1. The mantissa: digits with an optional point, kept as an integer
  //    `digits` and the number of digits after the point `scale`.
  std::string digits;
  int scale = 0;
  bool seen_digit = false;
  bool seen_point = false;
  size_t i = 0;
  for (; i < rest.size(); ++i) {
    const char c = rest[i];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
      digits.push_back(c);
      if (seen_point) ++scale;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return NotAQuantity(text, "it has no digits");

  // 2. The suffix: SI, binary SI, or a decimal exponent ("e3", "E-2").
  const absl::string_view suffix = rest.substr(i);
  int exp10 = 0;
  int exp2 = 0;
  bool known = false;
  for (const Suffix& s : kSuffixes) {
    if (s.text == suffix) {
      exp10 = s.exp10;
      exp2 = s.exp2;
      known = true;
      break;
    }
  }
  if (!known) {
    // "E" alone is exa (handled above); "e"/"E" followed by a signed
    // integer is an exponent.
    if (suffix.size() >= 2 && (suffix[0] == 'e' || suffix[0] == 'E')) {
      absl::string_view exponent = suffix.substr(1);
      absl::string_view unsigned_part = exponent;
      if (!unsigned_part.empty() &&
          (unsigned_part[0] == '+' || unsigned_part[0] == '-')) {
        unsigned_part.remove_prefix(1);
      }
      const bool all_digits = !unsigned_part.empty() &&
                              unsigned_part.find_first_not_of("0123456789") ==
                                  absl::string_view::npos;
      int value = 0;
      if (!all_digits || !absl::SimpleAtoi(exponent, &value) ||
          value > kMaxExponent || value < -kMaxExponent) {
        return NotAQuantity(text, "bad exponent");
      }
      exp10 = value;
      known = true;
    }
  }
  if (!known) {
    return NotAQuantity(text, absl::StrCat("unknown suffix \"", suffix, "\""));
  }
  const QuantityFormat format =
      exp2 > 0 ? QuantityFormat::kBinary : QuantityFormat::kDecimal;

  // 3. Normalise the mantissa: drop fractional trailing zeros (they change
  //    nothing) and leading zeros, so the digit limit counts what matters.
  while (scale > 0 && digits.back() == '0') {
    digits.pop_back();
    --scale;
  }
  const size_t first_non_zero = digits.find_first_not_of('0');
  if (first_non_zero == std::string::npos) {
    return MilliQuantity{.milli = 0, .format = QuantityFormat::kNone};
  }
  digits.erase(0, first_non_zero);
  if (digits.size() > kMaxSignificantDigits) {
    return NotAQuantity(text, "too many significant digits");
  }

  // 4. Scale to milli-units exactly: value * 2^exp2 * 10^(3 - scale + exp10),
  //    rounding a fractional milli-unit up as Kubernetes does.
  Wide magnitude = 0;
  for (const char c : digits) magnitude = magnitude * 10 + (c - '0');
  magnitude <<= exp2;  // < 10^20 * 2^60 < 2^127: cannot overflow.
  const Wide limit =
      negative ? Wide{1} << 63
               : static_cast<Wide>(std::numeric_limits<int64_t>::max());
  const int power = 3 - scale + exp10;
  if (power >= 0) {
    for (int p = 0; p < power; ++p) {
      if (magnitude > limit / 10) return NotAQuantity(text, "it is too large");
      magnitude *= 10;
    }
  } else {
    bool remainder = false;
    for (int p = 0; p < -power && magnitude != 0; ++p) {
      if (magnitude % 10 != 0) remainder = true;
      magnitude /= 10;
    }
    if (magnitude == 0) remainder = true;  // The mantissa was non-zero.
    // Rounding up means away from zero only for positive values.
    if (remainder && !negative) magnitude += 1;
  }
  if (magnitude > limit) return NotAQuantity(text, "it is too large");

  int64_t milli = 0;
  if (negative) {
    milli = magnitude == (Wide{1} << 63) ? std::numeric_limits<int64_t>::min()
                                         : -static_cast<int64_t>(magnitude);
  } else {
    milli = static_cast<int64_t>(magnitude);
  }
  return MilliQuantity{.milli = milli,
                       .format = milli == 0 ? QuantityFormat::kNone : format};
}

std::string FormatQuantity(const MilliQuantity& quantity) {
  if (quantity.milli == 0) return "0";
  const bool negative = quantity.milli < 0;
  // Unsigned arithmetic makes INT64_MIN's magnitude representable.
  const uint64_t magnitude = negative
                                 ? ~static_cast<uint64_t>(quantity.milli) + 1
                                 : static_cast<uint64_t>(quantity.milli);
  const absl::string_view sign = negative ? "-" : "";
  if (magnitude % 1000 != 0) return absl::StrCat(sign, magnitude, "m");
  const uint64_t value = magnitude / 1000;

  static constexpr absl::string_view kBinary[] = {"Ki", "Mi", "Gi",
                                                  "Ti", "Pi", "Ei"};
  static constexpr absl::string_view kDecimal[] = {"k", "M", "G",
                                                   "T", "P", "E"};
  const bool binary = quantity.format == QuantityFormat::kBinary;
  const uint64_t base = binary ? 1024 : 1000;
  uint64_t scaled = value;
  int steps = 0;
  while (steps < 6 && scaled % base == 0) {
    scaled /= base;
    ++steps;
  }
  if (steps == 0) return absl::StrCat(sign, value);
  return absl::StrCat(sign, scaled,
                      binary ? kBinary[steps - 1] : kDecimal[steps - 1]);
}

absl::StatusOr<MilliQuantity> AddQuantities(const MilliQuantity& a,
                                            const MilliQuantity& b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a.milli, b.milli, &sum)) {
    return absl::InvalidArgumentError(absl::StrCat("sum of ", FormatQuantity(a),
                                                   " and ", FormatQuantity(b),
                                                   " is too large"));
  }
  QuantityFormat format = QuantityFormat::kDecimal;
  if (a.format == QuantityFormat::kNone) {
    format = b.format;
  } else if (b.format == QuantityFormat::kNone || a.format == b.format) {
    format = a.format;
  }
  return MilliQuantity{.milli = sum, .format = format};
}

MilliQuantity MaxQuantity(const MilliQuantity& a, const MilliQuantity& b) {
  return b.milli > a.milli ? b : a;
}

}  // namespace kq::manifest::internal
