#include "server/auth/rbac.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

#include "manifest/yaml.h"

namespace kq::auth {
namespace {

using nlohmann::json;

constexpr char kRbacApiVersion[] = "rbac.authorization.k8s.io/v1";

bool Contains(const std::vector<std::string>& values,
              const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool ContainsOrStar(const std::vector<std::string>& values,
                    const std::string& value) {
  return Contains(values, "*") || Contains(values, value);
}

// Kubernetes' ResourceMatches: "*", the resource with its subresource
// ("workloads/status"), or "*/subresource".
bool ResourceMatches(const std::vector<std::string>& resources,
                     const Attributes& request) {
  const std::string combined =
      request.subresource.empty()
          ? request.resource
          : absl::StrCat(request.resource, "/", request.subresource);
  for (const std::string& r : resources) {
    if (r == "*" || r == combined) return true;
    if (!request.subresource.empty() && r.size() > 2 &&
        absl::StartsWith(r, "*/") && r.substr(2) == request.subresource) {
      return true;
    }
  }
  return false;
}

// Kubernetes' NonResourceURLMatches: exact, "*", or a prefix ending in "*".
bool UrlMatches(const std::vector<std::string>& urls, const std::string& path) {
  for (const std::string& u : urls) {
    if (u == "*" || u == path) return true;
    if (absl::EndsWith(u, "*") &&
        absl::StartsWith(path, u.substr(0, u.size() - 1))) {
      return true;
    }
  }
  return false;
}

// Errors name the document ("document 3 (RoleBinding \"x\")") and field.
class Reader {
 public:
  explicit Reader(std::string where) : where_(std::move(where)) {}

  absl::Status Error(absl::string_view field, absl::string_view reason) const {
    return absl::InvalidArgumentError(
        absl::StrCat(where_, ": ", field, ": ", reason));
  }

  absl::StatusOr<std::string> String(const json& object, const std::string& key,
                                     const std::string& field,
                                     bool required) const {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) {
      if (required) return Error(field, "is required");
      return std::string();
    }
    if (!it->is_string()) return Error(field, "must be a string");
    if (required && it->get<std::string>().empty()) {
      return Error(field, "is required");
    }
    return it->get<std::string>();
  }

  absl::StatusOr<std::vector<std::string>> Strings(
      const json& object, const std::string& key,
      const std::string& field) const {
    std::vector<std::string> out;
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return out;
    if (!it->is_array()) return Error(field, "must be a list of strings");
    for (size_t i = 0; i < it->size(); ++i) {
      if (!(*it)[i].is_string()) {
        return Error(absl::StrCat(field, "[", i, "]"), "must be a string");
      }
      out.push_back((*it)[i].get<std::string>());
    }
    return out;
  }

 private:
  std::string where_;
};

struct Selector {
  std::map<std::string, std::string> match_labels;
  struct Expression {
    std::string key;
    std::string op;
    std::vector<std::string> values;
  };
  std::vector<Expression> expressions;

  bool Matches(const std::map<std::string, std::string>& labels) const {
    for (const auto& [k, v] : match_labels) {
      auto it = labels.find(k);
      if (it == labels.end() || it->second != v) return false;
    }
    for (const Expression& e : expressions) {
      auto it = labels.find(e.key);
      const bool has = it != labels.end();
      if (e.op == "In") {
        if (!has || !Contains(e.values, it->second)) return false;
      } else if (e.op == "NotIn") {
        if (has && Contains(e.values, it->second)) return false;
      } else if (e.op == "Exists") {
        if (!has) return false;
      } else if (e.op == "DoesNotExist") {
        if (has) return false;
      }
    }
    return true;
  }
};

struct ParsedRole {
  std::string kind;  // ClusterRole or Role
  std::string namespace_name;
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<PolicyRule> rules;
  // ClusterRole aggregationRule.clusterRoleSelectors; empty: none.
  std::vector<Selector> aggregation;
  bool builtin = false;
};

absl::Status ParseRules(const Reader& r, const json& doc,
                        std::vector<PolicyRule>* rules) {
  auto it = doc.find("rules");
  if (it == doc.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) return r.Error("rules", "must be a list");
  for (size_t i = 0; i < it->size(); ++i) {
    const json& item = (*it)[i];
    const std::string field = absl::StrCat("rules[", i, "]");
    if (!item.is_object()) return r.Error(field, "must be a map");
    PolicyRule rule;
    auto strings = [&](const char* key, std::vector<std::string>* out) {
      absl::StatusOr<std::vector<std::string>> v =
          r.Strings(item, key, absl::StrCat(field, ".", key));
      if (!v.ok()) return v.status();
      *out = *std::move(v);
      return absl::OkStatus();
    };
    if (absl::Status s = strings("verbs", &rule.verbs); !s.ok()) return s;
    if (absl::Status s = strings("apiGroups", &rule.api_groups); !s.ok()) {
      return s;
    }
    if (absl::Status s = strings("resources", &rule.resources); !s.ok()) {
      return s;
    }
    if (absl::Status s = strings("resourceNames", &rule.resource_names);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = strings("nonResourceURLs", &rule.non_resource_urls);
        !s.ok()) {
      return s;
    }
    if (rule.verbs.empty()) {
      return r.Error(absl::StrCat(field, ".verbs"), "is required");
    }
    if (!rule.non_resource_urls.empty() && !rule.resources.empty()) {
      return r.Error(field, "a rule names either resources or nonResourceURLs");
    }
    rules->push_back(std::move(rule));
  }
  return absl::OkStatus();
}

absl::Status ParseAggregation(const Reader& r, const json& doc,
                              std::vector<Selector>* out) {
  auto it = doc.find("aggregationRule");
  if (it == doc.end() || it->is_null()) return absl::OkStatus();
  auto selectors = it->find("clusterRoleSelectors");
  if (!it->is_object() || selectors == it->end() || !selectors->is_array()) {
    return r.Error("aggregationRule.clusterRoleSelectors",
                   "must be a list of label selectors");
  }
  for (size_t i = 0; i < selectors->size(); ++i) {
    const json& s = (*selectors)[i];
    const std::string field =
        absl::StrCat("aggregationRule.clusterRoleSelectors[", i, "]");
    if (!s.is_object()) return r.Error(field, "must be a label selector");
    Selector selector;
    if (auto labels = s.find("matchLabels"); labels != s.end()) {
      if (!labels->is_object()) {
        return r.Error(field + ".matchLabels", "must be a map");
      }
      for (const auto& [k, v] : labels->items()) {
        if (!v.is_string()) {
          return r.Error(absl::StrCat(field, ".matchLabels.", k),
                         "must be a string");
        }
        selector.match_labels[k] = v.get<std::string>();
      }
    }
    if (auto exprs = s.find("matchExpressions"); exprs != s.end()) {
      if (!exprs->is_array()) {
        return r.Error(field + ".matchExpressions", "must be a list");
      }
      for (size_t j = 0; j < exprs->size(); ++j) {
        const std::string ef =
            absl::StrCat(field, ".matchExpressions[", j, "]");
        Selector::Expression e;
        absl::StatusOr<std::string> key =
            r.String((*exprs)[j], "key", ef + ".key", true);
        if (!key.ok()) return key.status();
        absl::StatusOr<std::string> op =
            r.String((*exprs)[j], "operator", ef + ".operator", true);
        if (!op.ok()) return op.status();
        if (*op != "In" && *op != "NotIn" && *op != "Exists" &&
            *op != "DoesNotExist") {
          return r.Error(ef + ".operator",
                         absl::StrCat("unsupported value \"", *op,
                                      "\": must be In, NotIn, Exists or "
                                      "DoesNotExist"));
        }
        absl::StatusOr<std::vector<std::string>> values =
            r.Strings((*exprs)[j], "values", ef + ".values");
        if (!values.ok()) return values.status();
        e.key = *key;
        e.op = *op;
        e.values = *values;
        selector.expressions.push_back(std::move(e));
      }
    }
    out->push_back(std::move(selector));
  }
  return absl::OkStatus();
}

absl::Status ParseBinding(const Reader& r, const json& doc,
                          const std::string& kind, const std::string& name,
                          const std::string& namespace_name, Binding* out) {
  out->kind = kind;
  out->name = name;
  out->namespace_name = kind == "RoleBinding" ? namespace_name : "";
  if (kind == "RoleBinding" && namespace_name.empty()) {
    return r.Error("metadata.namespace", "is required for a RoleBinding");
  }
  auto ref = doc.find("roleRef");
  if (ref == doc.end() || !ref->is_object()) {
    return r.Error("roleRef", "is required");
  }
  absl::StatusOr<std::string> role_kind =
      r.String(*ref, "kind", "roleRef.kind", true);
  if (!role_kind.ok()) return role_kind.status();
  absl::StatusOr<std::string> role_name =
      r.String(*ref, "name", "roleRef.name", true);
  if (!role_name.ok()) return role_name.status();
  if (*role_kind != "ClusterRole" && *role_kind != "Role") {
    return r.Error("roleRef.kind",
                   absl::StrCat("unsupported value \"", *role_kind,
                                "\": must be ClusterRole or Role"));
  }
  if (*role_kind == "Role" && kind == "ClusterRoleBinding") {
    return r.Error("roleRef.kind",
                   "a ClusterRoleBinding can only refer to a ClusterRole");
  }
  out->role_kind = *role_kind;
  out->role_name = *role_name;
  auto subjects = doc.find("subjects");
  if (subjects != doc.end() && !subjects->is_null()) {
    if (!subjects->is_array()) return r.Error("subjects", "must be a list");
    for (size_t i = 0; i < subjects->size(); ++i) {
      const std::string field = absl::StrCat("subjects[", i, "]");
      const json& s = (*subjects)[i];
      if (!s.is_object()) return r.Error(field, "must be a map");
      Subject subject;
      absl::StatusOr<std::string> skind =
          r.String(s, "kind", field + ".kind", true);
      if (!skind.ok()) return skind.status();
      absl::StatusOr<std::string> sname =
          r.String(s, "name", field + ".name", true);
      if (!sname.ok()) return sname.status();
      absl::StatusOr<std::string> sns =
          r.String(s, "namespace", field + ".namespace", false);
      if (!sns.ok()) return sns.status();
      if (*skind != "User" && *skind != "Group" && *skind != "ServiceAccount") {
        return r.Error(field + ".kind",
                       absl::StrCat("unsupported value \"", *skind,
                                    "\": must be User, Group or "
                                    "ServiceAccount"));
      }
      subject.kind = *skind;
      subject.name = *sname;
      subject.namespace_name = *sns;
      if (subject.kind == "ServiceAccount" && subject.namespace_name.empty()) {
        if (kind == "RoleBinding") {
          subject.namespace_name = namespace_name;
        } else {
          return r.Error(field + ".namespace",
                         "is required for a ServiceAccount");
        }
      }
      out->subjects.push_back(std::move(subject));
    }
  }
  return absl::OkStatus();
}

std::string DescribeSubject(const Subject& s) {
  if (s.kind == "ServiceAccount") {
    return absl::StrCat("ServiceAccount \"", s.name, "/", s.namespace_name,
                        "\"");
  }
  return absl::StrCat(s.kind, " \"", s.name, "\"");
}

bool SubjectMatches(const Subject& s, const UserInfo& user) {
  if (s.kind == "User") return s.name == user.name;
  if (s.kind == "Group") return Contains(user.groups, s.name);
  // Kubernetes' service account user name.
  return user.name ==
         absl::StrCat("system:serviceaccount:", s.namespace_name, ":", s.name);
}

// Parses `yaml` (one file) into roles and bindings.
absl::Status ParseInto(absl::string_view yaml, bool builtin,
                       std::vector<ParsedRole>* roles,
                       std::vector<Binding>* bindings,
                       std::vector<std::string>* warnings) {
  absl::StatusOr<std::vector<absl::StatusOr<json>>> docs =
      manifest::internal::LoadDocuments(yaml);
  if (!docs.ok()) return docs.status();
  std::vector<json> items;
  std::vector<std::string> places;
  for (size_t i = 0; i < docs->size(); ++i) {
    const std::string place = absl::StrCat("document ", i + 1);
    if (!(*docs)[i].ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(place, ": ", (*docs)[i].status().message()));
    }
    const json& doc = *(*docs)[i];
    if (doc.is_object() && doc.value("kind", "") == "List" &&
        doc.contains("items") && doc["items"].is_array()) {
      for (size_t j = 0; j < doc["items"].size(); ++j) {
        items.push_back(doc["items"][j]);
        places.push_back(absl::StrCat(place, " items[", j, "]"));
      }
      continue;
    }
    items.push_back(doc);
    places.push_back(place);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const json& doc = items[i];
    if (!doc.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(places[i], ": expected a map"));
    }
    const std::string kind = doc.value("kind", "");
    const std::string api_version = doc.value("apiVersion", "");
    std::string name;
    std::string namespace_name;
    if (auto meta = doc.find("metadata");
        meta != doc.end() && meta->is_object()) {
      if (auto n = meta->find("name"); n != meta->end() && n->is_string()) {
        name = n->get<std::string>();
      }
      if (auto n = meta->find("namespace");
          n != meta->end() && n->is_string()) {
        namespace_name = n->get<std::string>();
      }
    }
    const std::string where = absl::StrCat(
        places[i], " (", kind.empty() ? "?" : kind, " \"",
        namespace_name.empty() ? "" : namespace_name + "/", name, "\")");
    Reader r(where);
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding" &&
        kind != "ClusterRole" && kind != "Role") {
      return r.Error("kind", absl::StrCat("unsupported value \"", kind,
                                          "\": the bindings file holds "
                                          "ClusterRoleBinding, RoleBinding, "
                                          "ClusterRole and Role"));
    }
    if (api_version != kRbacApiVersion) {
      return r.Error("apiVersion",
                     absl::StrCat("unsupported value \"", api_version,
                                  "\": must be ", kRbacApiVersion));
    }
    if (name.empty()) return r.Error("metadata.name", "is required");
    if (kind == "ClusterRoleBinding" || kind == "RoleBinding") {
      Binding binding;
      if (absl::Status s =
              ParseBinding(r, doc, kind, name, namespace_name, &binding);
          !s.ok()) {
        return s;
      }
      bindings->push_back(std::move(binding));
      continue;
    }
    ParsedRole role;
    role.kind = kind;
    role.name = name;
    role.builtin = builtin;
    if (kind == "Role") {
      if (namespace_name.empty()) {
        return r.Error("metadata.namespace", "is required for a Role");
      }
      role.namespace_name = namespace_name;
    }
    if (auto labels = doc["metadata"].find("labels");
        labels != doc["metadata"].end() && labels->is_object()) {
      for (const auto& [k, v] : labels->items()) {
        if (v.is_string()) role.labels[k] = v.get<std::string>();
      }
    }
    if (absl::Status s = ParseRules(r, doc, &role.rules); !s.ok()) return s;
    if (kind == "ClusterRole") {
      if (absl::Status s = ParseAggregation(r, doc, &role.aggregation);
          !s.ok()) {
        return s;
      }
    }
    if (!builtin && kind == "ClusterRole") {
      auto same = std::find_if(
          roles->begin(), roles->end(), [&](const ParsedRole& other) {
            return other.builtin && other.kind == "ClusterRole" &&
                   other.name == name;
          });
      if (same != roles->end()) {
        if (warnings != nullptr) {
          warnings->push_back(absl::StrCat(
              where, ": ClusterRole \"", name,
              "\" is built into kqd and keeps its built-in rules"));
        }
        continue;
      }
    }
    roles->push_back(std::move(role));
  }
  return absl::OkStatus();
}

}  // namespace

bool PolicyRule::Allows(const Attributes& request) const {
  if (!ContainsOrStar(verbs, request.verb)) return false;
  if (!request.path.empty()) {
    return UrlMatches(non_resource_urls, request.path);
  }
  if (!ContainsOrStar(api_groups, request.api_group)) return false;
  if (!ResourceMatches(resources, request)) return false;
  return resource_names.empty() || Contains(resource_names, request.name);
}

std::string ForbiddenMessage(const UserInfo& user, const Attributes& request) {
  std::string message;
  if (!request.path.empty()) {
    message = absl::StrCat("user \"", user.name, "\" cannot ", request.verb,
                           " path \"", request.path, "\"");
  } else {
    const std::string resource =
        request.subresource.empty()
            ? request.resource
            : absl::StrCat(request.resource, "/", request.subresource);
    message = absl::StrCat("user \"", user.name, "\" cannot ", request.verb,
                           " resource \"", resource, "\"");
    if (request.namespace_name.empty()) {
      absl::StrAppend(&message, " at the cluster scope");
    } else {
      absl::StrAppend(&message, " in the namespace \"", request.namespace_name,
                      "\"");
    }
  }
  if (!user.groups.empty()) {
    absl::StrAppend(&message, "; groups: ", absl::StrJoin(user.groups, ", "));
  }
  return message;
}

std::string Policy::RoleKey(const std::string& kind,
                            const std::string& namespace_name,
                            const std::string& name) {
  return kind == "Role" ? absl::StrCat("Role/", namespace_name, "/", name)
                        : absl::StrCat("ClusterRole/", name);
}

absl::StatusOr<std::shared_ptr<const Policy>> Policy::Parse(
    absl::string_view yaml, std::vector<std::string>* warnings) {
  std::vector<ParsedRole> roles;
  std::vector<Binding> bindings;
  if (absl::Status s = ParseInto(BuiltinRolesYaml(), /*builtin=*/true, &roles,
                                 &bindings, nullptr);
      !s.ok()) {
    return absl::InternalError(absl::StrCat("built-in roles: ", s.message()));
  }
  if (absl::Status s =
          ParseInto(yaml, /*builtin=*/false, &roles, &bindings, warnings);
      !s.ok()) {
    return s;
  }
  auto policy = std::shared_ptr<Policy>(new Policy());
  std::set<std::string> seen;
  for (const ParsedRole& role : roles) {
    const std::string key = RoleKey(role.kind, role.namespace_name, role.name);
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(role.kind, " \"", role.name, "\" is defined twice"));
    }
    policy->roles_[key].rules = role.rules;
  }
  // Aggregation (Kubernetes' ClusterRoleAggregation controller): a role
  // with selectors also holds the rules of every ClusterRole they select.
  // Repeated until nothing changes, so aggregated roles may select other
  // aggregated roles.
  for (int round = 0; round < 8; ++round) {
    bool changed = false;
    for (const ParsedRole& role : roles) {
      if (role.aggregation.empty()) continue;
      std::vector<PolicyRule> rules = role.rules;
      for (const ParsedRole& other : roles) {
        if (&other == &role || other.kind != "ClusterRole") continue;
        const bool selected = std::any_of(
            role.aggregation.begin(), role.aggregation.end(),
            [&](const Selector& s) { return s.Matches(other.labels); });
        if (!selected) continue;
        const Role& current =
            policy->roles_[RoleKey(other.kind, "", other.name)];
        rules.insert(rules.end(), current.rules.begin(), current.rules.end());
      }
      Role& mine = policy->roles_[RoleKey(role.kind, "", role.name)];
      if (rules.size() != mine.rules.size()) {
        mine.rules = std::move(rules);
        changed = true;
      }
    }
    if (!changed) break;
  }
  std::set<std::string> binding_names;
  for (const Binding& b : bindings) {
    if (!binding_names
             .insert(absl::StrCat(b.kind, "/", b.namespace_name, "/", b.name))
             .second) {
      return absl::InvalidArgumentError(absl::StrCat(
          b.kind, " \"", b.namespace_name.empty() ? "" : b.namespace_name + "/",
          b.name, "\" is defined twice"));
    }
    // A binding to a role that does not exist grants nothing, as in
    // Kubernetes; say so, since it is most likely a typo.
    if (!policy->roles_.contains(
            RoleKey(b.role_kind, b.namespace_name, b.role_name)) &&
        warnings != nullptr) {
      warnings->push_back(absl::StrCat(b.kind, " \"", b.name,
                                       "\": ", b.role_kind, " \"", b.role_name,
                                       "\" does not exist; it grants nothing"));
    }
  }
  policy->bindings_ = std::move(bindings);
  return std::shared_ptr<const Policy>(std::move(policy));
}

bool Policy::Matches(const Binding& binding, const UserInfo& user,
                     const Attributes& request, const Subject** subject) const {
  // A RoleBinding counts only in its own namespace, and never for a
  // cluster-scoped request, whichever role it names.
  if (binding.kind == "RoleBinding" &&
      (request.namespace_name.empty() || !request.path.empty() ||
       binding.namespace_name != request.namespace_name)) {
    return false;
  }
  const Subject* who = nullptr;
  for (const Subject& s : binding.subjects) {
    if (SubjectMatches(s, user)) {
      who = &s;
      break;
    }
  }
  if (who == nullptr) return false;
  auto role = roles_.find(
      RoleKey(binding.role_kind, binding.namespace_name, binding.role_name));
  if (role == roles_.end()) return false;
  for (const PolicyRule& rule : role->second.rules) {
    if (rule.Allows(request)) {
      *subject = who;
      return true;
    }
  }
  return false;
}

Decision Policy::Authorize(const UserInfo& user,
                           const Attributes& request) const {
  for (const Binding& binding : bindings_) {
    const Subject* subject = nullptr;
    if (!Matches(binding, user, request, &subject)) continue;
    // kube-apiserver's wording (plugin/pkg/auth/authorizer/rbac).
    const std::string binding_name =
        binding.kind == "RoleBinding"
            ? absl::StrCat(binding.name, "/", binding.namespace_name)
            : binding.name;
    return {true,
            absl::StrCat("RBAC: allowed by ", binding.kind, " \"", binding_name,
                         "\" of ", binding.role_kind, " \"", binding.role_name,
                         "\" to ", DescribeSubject(*subject))};
  }
  return {false, ForbiddenMessage(user, request)};
}

}  // namespace kq::auth
