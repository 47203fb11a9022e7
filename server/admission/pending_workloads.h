#pragma once

// Kueue's on-demand visibility API (visibility.kueue.x-k8s.io/v1beta2,
// pkg/visibility/storage): the pending workloads of a ClusterQueue or of a
// LocalQueue, in the order the ClusterQueue tries them, with each one's
// position in both queues. Pure reads of an AdmissionState; kqd's engine
// runs them on its thread, and its gRPC and HTTP edges render them.
//
// Example:
//   absl::StatusOr<std::vector<PendingWorkload>> page =
//       PendingWorkloadsInLocalQueue(state, {"team-ml", "ml-jobs"},
//                                    {.offset = 10, .limit = 5});

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

#include "server/admission/state.h"
#include "server/core/objects.h"

namespace kq::admission {

// Kueue's DefaultPendingWorkloadsLimit and MaxPendingWorkloadsLimit.
inline constexpr int64_t kDefaultPendingWorkloadsLimit = 1000;
inline constexpr int64_t kMaxPendingWorkloadsLimit = 100'000;

// Kueue's PendingWorkloadOptions: which page of the queue's order to list.
struct PendingWorkloadOptions {
  // Position of the first workload listed, from 0 (in the ClusterQueue's
  // order for a ClusterQueue, in the LocalQueue's for a LocalQueue).
  int64_t offset = 0;
  // Most workloads listed; 0 is kDefaultPendingWorkloadsLimit, as Kueue's
  // defaulting makes it.
  int64_t limit = 0;
};

// The checks of each option, InvalidArgument naming the field:
// "offset: must not be negative", "limit: must not be negative",
// "limit: must be at most 100000". Kueue clamps such values instead
// (boundedLimitOffset); kq says what it will not serve.
absl::Status ValidatePendingWorkloadsOffset(int64_t offset);
absl::Status ValidatePendingWorkloadsLimit(int64_t limit);

// Kueue's visibility PendingWorkload: what its ObjectMeta carries (name,
// namespace, creation time; kq adds the uid, which Kueue leaves out) and
// its place in the queues.
struct PendingWorkload {
  std::string name;
  std::string namespace_name;
  Uid uid;
  absl::Time creation_timestamp = absl::UnixEpoch();
  // spec.priority.
  int32_t priority = 0;
  // spec.queueName.
  std::string local_queue_name;
  // 0-based, over the ClusterQueue's heap and inadmissible set together:
  // what `kq describe` and Admit's position say.
  int32_t position_in_cluster_queue = 0;
  // 0-based, among the workloads ahead of it with the same namespace and
  // LocalQueue name (a LocalQueue of the same name in another namespace is
  // another queue: Kueue#14431).
  int32_t position_in_local_queue = 0;

  friend bool operator==(const PendingWorkload&,
                         const PendingWorkload&) = default;
};

// Kueue's pendingWorkloadsInCqREST.Get: the pending workloads of
// ClusterQueue `cluster_queue` at positions offset .. offset+limit-1.
// NotFound when there is no such ClusterQueue; InvalidArgument for bad
// options (as the Validate functions above).
absl::StatusOr<std::vector<PendingWorkload>> PendingWorkloadsInClusterQueue(
    const AdmissionState& state, const std::string& cluster_queue,
    const PendingWorkloadOptions& options);

// Kueue's pendingWorkloadsInLqREST.Get: the pending workloads of LocalQueue
// `local_queue` (namespace, name) at its positions offset ..
// offset+limit-1, each with its ClusterQueue position too. A LocalQueue
// whose ClusterQueue does not exist has none. NotFound when there is no
// such LocalQueue; InvalidArgument for bad options.
absl::StatusOr<std::vector<PendingWorkload>> PendingWorkloadsInLocalQueue(
    const AdmissionState& state, const NamespacedName& local_queue,
    const PendingWorkloadOptions& options);

// The position in its LocalQueue that the listings above give a queued
// workload, or nullopt when no queue holds it.
std::optional<int64_t> PositionInLocalQueue(const AdmissionState& state,
                                            const NamespacedName& workload);

}  // namespace kq::admission
