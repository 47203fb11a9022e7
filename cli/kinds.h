#pragma once

// The kinds `kq` works with, the names kubectl users type for them, and
// small accessors over v1::ConfigObject's oneof.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "kq/v1/objects.pb.h"

namespace kq::cli {

// Every kind the CLI can get, describe or delete.
enum class Kind {
  kResourceFlavor,
  kClusterQueue,
  kCohort,
  kLocalQueue,
  kWorkloadPriorityClass,
  kAdmissionCheck,
  kProvisioningRequestConfig,
  kMultiKueueConfig,
  kMultiKueueCluster,
  kNamespace,
  kWorkload,
};

// Static facts about one kind.
struct KindInfo {
  Kind kind;
  // Kueue's kind name, as the AdminService expects it ("ClusterQueue").
  const char* name;
  // kubectl's qualified resource name ("clusterqueue.kueue.x-k8s.io"), the
  // prefix of `-o name` and of apply/delete output lines.
  const char* resource;
  // Whether objects of this kind live in a namespace.
  bool namespaced;
};

// Resolves what a user typed for a kind the way kubectl does, case
// insensitively: the kind ("ClusterQueue"), its plural, a short name ("cq"),
// optionally qualified with ".kueue.x-k8s.io". InvalidArgument names the
// argument when it is not a kind kq knows.
absl::StatusOr<KindInfo> ResolveKind(absl::string_view text);

// Facts about `kind`.
const KindInfo& InfoOf(Kind kind);

// The kind held by `object`; InvalidArgument when its oneof is empty.
absl::StatusOr<Kind> KindOf(const v1::ConfigObject& object);

// "clusterqueue.kueue.x-k8s.io/NAME", as kubectl prints objects.
std::string QualifiedName(Kind kind, absl::string_view name);

// Whether `text` names the Workload kind ("workload", "wl", ...).
bool IsWorkloadKind(absl::string_view text);

}  // namespace kq::cli
