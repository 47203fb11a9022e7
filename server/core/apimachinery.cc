#include "server/core/apimachinery.h"

#include <cctype>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kq {
namespace {

constexpr char kQualifiedNameFmt[] = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr char kQualifiedNameErrMsg[] =
    "must consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character";
constexpr char kLabelValueFmt[] = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr char kLabelValueErrMsg[] =
    "a valid label must be an empty string or consist of alphanumeric "
    "characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

bool IsLowerAlnum(char c) {
  return std::islower(static_cast<unsigned char>(c)) ||
         std::isdigit(static_cast<unsigned char>(c));
}

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)); }

// Kubernetes' RegexError: the message, examples and the pattern.
std::string RegexError(absl::string_view message, absl::string_view format,
                       const std::vector<absl::string_view>& examples) {
  std::string out = absl::StrCat(message, " (e.g. ");
  for (size_t i = 0; i < examples.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, ",  or ");
    absl::StrAppend(&out, "'", examples[i], "'");
  }
  absl::StrAppend(&out, ", regex used for validation is '", format, "')");
  return out;
}

}  // namespace

const char kDns1123SubdomainFmt[] =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const char kDns1123SubdomainErrMsg[] =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character";

// RFC 1123 label body check without the length limit.
bool IsLabel(absl::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) {
    return false;
  }
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], anchored.
bool MatchesQualifiedNamePart(absl::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*, anchored:
// a DNS-1123 subdomain without its length limit.
bool MatchesDns1123Subdomain(absl::string_view s) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    absl::string_view part =
        s.substr(start, dot == absl::string_view::npos ? absl::string_view::npos
                                                       : dot - start);
    if (!IsLabel(part)) return false;
    if (dot == absl::string_view::npos) return true;
    start = dot + 1;
  }
}

// Kubernetes' IsQualifiedName.
std::vector<std::string> QualifiedNameErrors(absl::string_view value) {
  std::vector<std::string> errors;
  std::vector<absl::string_view> parts = absl::StrSplit(value, '/');
  absl::string_view name;
  if (parts.size() == 1) {
    name = parts[0];
  } else if (parts.size() == 2) {
    absl::string_view prefix = parts[0];
    name = parts[1];
    if (prefix.empty()) {
      errors.push_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > 253) {
        errors.push_back("prefix part must be no more than 253 bytes");
      }
      if (!MatchesDns1123Subdomain(prefix)) {
        errors.push_back(absl::StrCat(
            "prefix part ", RegexError(kDns1123SubdomainErrMsg,
                                       kDns1123SubdomainFmt, {"example.com"})));
      }
    }
  } else {
    errors.push_back(
        absl::StrCat("a qualified name ",
                     RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                {"MyName", "my.name", "123-abc"}),
                     " with an optional DNS subdomain prefix and '/' (e.g. "
                     "'example.com/MyName')"));
    return errors;
  }
  if (name.empty()) {
    errors.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errors.push_back("name part must be no more than 63 bytes");
  }
  if (!MatchesQualifiedNamePart(name)) {
    errors.push_back(absl::StrCat(
        "name part ", RegexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                 {"MyName", "my.name", "123-abc"})));
  }
  return errors;
}

// Kubernetes' IsValidLabelValue.
std::vector<std::string> LabelValueErrors(absl::string_view value) {
  std::vector<std::string> errors;
  if (value.size() > 63) errors.push_back("must be no more than 63 bytes");
  if (!value.empty() && !MatchesQualifiedNamePart(value)) {
    errors.push_back(RegexError(kLabelValueErrMsg, kLabelValueFmt,
                                {"MyValue", "my_value", "12345"}));
  }
  return errors;
}

// field.Invalid's text.
absl::Status InvalidValue(absl::string_view path, absl::string_view value,
                          absl::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Invalid value: \"", value, "\": ", reason));
}

absl::Status TooLong(absl::string_view path, size_t max) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": Too long: may not be more than ", max, " bytes"));
}

absl::Status TooMany(absl::string_view path, size_t got, size_t max) {
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": Too many: ", got, ": must have at most ", max, " items"));
}

absl::Status RequiredValue(absl::string_view path) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": Required value"));
}

}  // namespace kq
