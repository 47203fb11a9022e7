#pragma once

// kubectl's -l/--selector and --field-selector, matched by `kq` itself: kqd
// answers whole listings, and `kq list` filters them as the Kubernetes API
// server would (k8s.io/apimachinery labels.Parse and fields.ParseSelector).

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"

namespace kq::cli {

// A label selector: requirements that must all hold. The grammar is
// labels.Parse's: comma-separated requirements, each `key`, `!key`,
// `key=value`, `key==value`, `key!=value`, `key in (v1,v2)`,
// `key notin (v1,v2)`, `key>N` or `key<N` (N an integer). `!=` and `notin`
// also match objects without the key, as in Kubernetes. Thread-compatible.
class LabelSelector {
 public:
  // Parses `text`; the empty selector matches everything. InvalidArgument
  // with kubectl's wording ("unable to parse requirement: ...") for a
  // malformed one.
  static absl::StatusOr<LabelSelector> Parse(absl::string_view text);

  bool Matches(
      const google::protobuf::Map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }

 private:
  enum class Op {
    kExists,
    kNotExists,
    kEquals,
    kNotEquals,
    kIn,
    kNotIn,
    kGreaterThan,
    kLessThan,
  };
  struct Requirement {
    std::string key;
    Op op;
    std::set<std::string> values;
    int64_t number = 0;
  };

  std::vector<Requirement> requirements_;
};

// A field selector: comma-separated `field=value`, `field==value` or
// `field!=value` terms (a backslash escapes `,`, `=`, `!` and itself in a
// value), all of which must hold, over the fields a kind supports.
// Thread-compatible.
class FieldSelector {
 public:
  // Reads a field of an object ("" when the object lacks it).
  using FieldReader = std::function<std::string(const std::string& field)>;

  // Parses `text` for a kind whose selectable fields are `supported`.
  // InvalidArgument for a malformed term, and "field label not supported:
  // F" (the API server's words) for a field outside `supported`.
  static absl::StatusOr<FieldSelector> Parse(
      absl::string_view text, const std::vector<std::string>& supported);

  bool Matches(const FieldReader& read) const;
  bool empty() const { return terms_.empty(); }

 private:
  struct Term {
    std::string field;
    bool equals;
    std::string value;
  };

  std::vector<Term> terms_;
};

}  // namespace kq::cli
