#pragma once

// Kubernetes' apimachinery validation (k8s.io/apimachinery/pkg/util/
// validation and its field errors) as the API server words it, for the
// checks kq makes as Kueue's webhooks and CRDs would on a Kubernetes API
// server.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kq {

// The messages of IsDNS1123Subdomain.
extern const char kDns1123SubdomainFmt[];
extern const char kDns1123SubdomainErrMsg[];

// A DNS-1123 label without its length limit: lower-case alphanumerics and
// '-', starting and ending with an alphanumeric.
bool IsLabel(absl::string_view s);
// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], anchored.
bool MatchesQualifiedNamePart(absl::string_view s);
// A DNS-1123 subdomain without its length limit.
bool MatchesDns1123Subdomain(absl::string_view s);
// Kubernetes' IsQualifiedName and IsValidLabelValue: the errors, none when
// valid.
std::vector<std::string> QualifiedNameErrors(absl::string_view value);
std::vector<std::string> LabelValueErrors(absl::string_view value);

// field.Invalid, field.TooLong, field.TooMany and field.Required, as
// InvalidArgument naming `path`.
absl::Status InvalidValue(absl::string_view path, absl::string_view value,
                          absl::string_view reason);
absl::Status TooLong(absl::string_view path, size_t max);
absl::Status TooMany(absl::string_view path, size_t got, size_t max);
absl::Status RequiredValue(absl::string_view path);

}  // namespace kq
