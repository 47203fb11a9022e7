#pragma once

// The names kqd makes for what it creates, as the Kubernetes API server
// does: a random version-4 UUID for every object's metadata.uid, and a
// random suffix for a workload that asks for metadata.generateName.
// Thread-compatible: one owner (the engine thread) draws from it.

#include <string>

#include "absl/random/random.h"

namespace kq {

class NameGenerator {
 public:
  // A random UUID in its canonical text: 8-4-4-4-12 lowercase hex digits,
  // version 4, RFC 4122 variant (k8s.io/apimachinery's uuid.NewUUID).
  std::string NewUid();
  // `prefix` and 5 random characters of Kubernetes' alphabet for generated
  // names (apiserver's names.SimpleNameGenerator): no vowels, no digits
  // that read as letters.
  std::string GenerateName(const std::string& prefix);

 private:
  absl::BitGen random_;
};

}  // namespace kq
