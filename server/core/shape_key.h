#pragma once

// Byte keys for a workload's scheduling shape, written one way for the two
// places that compare shapes: the scheduler's NominationMemo keys (compared
// exactly) and queue::SchedulingHash (Kueue's equivalence hash, a 64-bit
// digest of such a key). Each field is a tag byte, then fixed-width
// integers or length-prefixed strings, so that two different shapes never
// write the same bytes whatever their strings hold, and nothing is
// formatted as decimal text (keys are made for every head of every pass).
//
// Example:
//   std::string key;
//   ShapeKeyWriter(key).Tag('P').Int(wl.priority).Placement(wl.pod_sets[0]);
//   uint64_t digest = StableHash(key);

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

#include "server/core/objects.h"

namespace kq {

// Appends to `out`, which it clears first. Not thread-safe; the string must
// outlive it.
class ShapeKeyWriter {
 public:
  explicit ShapeKeyWriter(std::string& out) : out_(out) { out_.clear(); }

  ShapeKeyWriter& Tag(char tag) {
    out_.push_back(tag);
    return *this;
  }
  ShapeKeyWriter& Int(int64_t value);
  ShapeKeyWriter& Str(absl::string_view text);
  // What the flavor assigner reads of a pod set besides its name and
  // counts: per-pod requests, node selector, tolerations and required node
  // affinity.
  ShapeKeyWriter& Placement(const PodSet& pod_set);

 private:
  std::string& out_;
};

// FNV-1a over `bytes`: the same in every process and build, as a digest
// kept on disk must be; never 0 (which callers keep for "unknown").
uint64_t StableHash(absl::string_view bytes);

}  // namespace kq
