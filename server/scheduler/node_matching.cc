#include "server/scheduler/node_matching.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kq::scheduler {
namespace {

// Kubernetes' Toleration.ToleratesTaint.
bool ToleratesTaint(const Toleration& t, const Taint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  return t.op == "Exists";
}

// Go's %#v of a []string, as apimachinery prints an invalid value.
std::string GoStringSlice(const std::vector<std::string>& values) {
  std::vector<std::string> quoted;
  for (const std::string& v : values)
    quoted.push_back(absl::StrCat("\"", v, "\""));
  return absl::StrCat("[]string{", absl::StrJoin(quoted, ", "), "}");
}

// The parse errors Kubernetes' nodeSelectorRequirementsAsSelector and
// labels.NewRequirement report for one requirement at `path` (label key and
// value syntax is not checked). Several errors print as an aggregate.
std::string RequirementError(const LabelSelectorRequirement& req,
                             const std::string& path) {
  std::vector<std::string> errors;
  const std::string values_path = absl::StrCat(path, ".values");
  if (req.op == "In" || req.op == "NotIn") {
    if (req.values.empty()) {
      errors.push_back(absl::StrCat(
          values_path, ": Invalid value: ", GoStringSlice(req.values),
          ": for 'in', 'notin' operators, values set can't be empty"));
    }
  } else if (req.op == "Exists" || req.op == "DoesNotExist") {
    if (!req.values.empty()) {
      errors.push_back(absl::StrCat(
          values_path, ": Invalid value: ", GoStringSlice(req.values),
          ": values set must be empty for exists and does not exist"));
    }
  } else if (req.op == "Gt" || req.op == "Lt") {
    if (req.values.size() != 1) {
      errors.push_back(absl::StrCat(
          values_path, ": Invalid value: ", GoStringSlice(req.values),
          ": for 'Gt', 'Lt' operators, exactly one value is required"));
    }
    for (size_t i = 0; i < req.values.size(); ++i) {
      int64_t unused;
      if (!absl::SimpleAtoi(req.values[i], &unused)) {
        errors.push_back(absl::StrCat(
            values_path, "[", i, "]: Invalid value: \"", req.values[i],
            "\": for 'Gt', 'Lt' operators, the value must be an integer"));
      }
    }
  } else {
    errors.push_back(
        absl::StrCat(path, ".operator: Unsupported value: \"", req.op, "\""));
  }
  if (errors.size() <= 1) return errors.empty() ? "" : errors[0];
  return absl::StrCat("[", absl::StrJoin(errors, ", "), "]");
}

// A valid requirement against node labels (labels.Requirement.Matches).
bool RequirementMatches(const LabelSelectorRequirement& req,
                        const Labels& labels) {
  auto it = labels.find(req.key);
  const bool has = it != labels.end();
  if (req.op == "In" || req.op == "NotIn") {
    bool in = has && std::find(req.values.begin(), req.values.end(),
                               it->second) != req.values.end();
    return req.op == "In" ? in : !in;
  }
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  // Gt / Lt: the label must parse as an integer.
  int64_t label_value, bound;
  if (!has || !absl::SimpleAtoi(it->second, &label_value) ||
      !absl::SimpleAtoi(req.values[0], &bound)) {
    return false;
  }
  return req.op == "Gt" ? label_value > bound : label_value < bound;
}

}  // namespace

const Taint* FindUntoleratedTaint(const std::vector<Taint>& taints,
                                  const std::vector<Toleration>& tolerations) {
  for (const Taint& taint : taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    bool tolerated = false;
    for (const Toleration& t : tolerations) {
      if (ToleratesTaint(t, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return &taint;
  }
  return nullptr;
}

std::string GoTaintString(const Taint& taint) {
  return absl::StrCat("{", taint.key, " ", taint.value, " ", taint.effect,
                      " <nil>}");
}

bool FlavorMatchesNodeAffinity(const PodSet& ps, const Labels& node,
                               std::string* error) {
  for (const auto& [key, value] : ps.node_selector) {
    auto it = node.find(key);
    if (it == node.end()) continue;  // not one of the flavor's keys
    if (it->second != value) return false;
  }
  std::vector<NodeSelectorTerm> terms;
  for (const NodeSelectorTerm& term : ps.required_node_affinity) {
    NodeSelectorTerm kept;
    for (const LabelSelectorRequirement& req : term.match_expressions) {
      if (node.count(req.key)) kept.match_expressions.push_back(req);
    }
    if (kept.match_expressions.empty()) {
      terms.clear();
      break;
    }
    terms.push_back(std::move(kept));
  }
  if (terms.empty()) return true;
  for (size_t t = 0; t < terms.size(); ++t) {
    std::string parse_error;
    for (size_t e = 0; e < terms[t].match_expressions.size(); ++e) {
      parse_error = RequirementError(
          terms[t].match_expressions[e],
          absl::StrCat("nodeSelectorTerms[", t, "].matchExpressions[", e, "]"));
      if (!parse_error.empty()) break;
    }
    if (!parse_error.empty()) {
      *error = parse_error;
      return false;
    }
    bool all = true;
    for (const LabelSelectorRequirement& req : terms[t].match_expressions) {
      if (!RequirementMatches(req, node)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

}  // namespace kq::scheduler
