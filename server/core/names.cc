#include "server/core/names.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace kq {

std::string NameGenerator::NewUid() {
  const uint64_t hi = absl::Uniform<uint64_t>(random_);
  const uint64_t lo = absl::Uniform<uint64_t>(random_);
  return absl::StrFormat(
      "%08x-%04x-4%03x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff,
      ((lo >> 48) & 0x3fff) | 0x8000, lo & 0xffffffffffffULL);
}

std::string NameGenerator::GenerateName(const std::string& prefix) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string name = prefix;
  for (int i = 0; i < 5; ++i) {
    name.push_back(
        kAlphabet[absl::Uniform<size_t>(random_, 0, sizeof(kAlphabet) - 1)]);
  }
  return name;
}

}  // namespace kq
