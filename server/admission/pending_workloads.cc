#include "server/admission/pending_workloads.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"

#include "server/queue/manager.h"

namespace kq::admission {
namespace {

// The LocalQueue a workload is queued through: Kueue's
// utilqueue.KeyFromWorkload (namespace and spec.queueName).
NamespacedName LocalQueueOf(const Workload& wl) {
  return {wl.meta.namespace_name.str(), wl.queue_name.str()};
}

PendingWorkload PendingWorkloadOf(const Workload& wl,
                                  int64_t position_in_cluster_queue,
                                  int64_t position_in_local_queue) {
  return PendingWorkload{
      .name = wl.meta.name,
      .namespace_name = wl.meta.namespace_name.str(),
      .uid = wl.meta.uid,
      .creation_timestamp = wl.meta.creation_timestamp,
      .priority = wl.priority,
      .local_queue_name = wl.queue_name.str(),
      .position_in_cluster_queue =
          static_cast<int32_t>(position_in_cluster_queue),
      .position_in_local_queue = static_cast<int32_t>(position_in_local_queue),
  };
}

absl::Status ValidateOptions(const PendingWorkloadOptions& options) {
  if (absl::Status s = ValidatePendingWorkloadsOffset(options.offset);
      !s.ok()) {
    return s;
  }
  return ValidatePendingWorkloadsLimit(options.limit);
}

int64_t LimitOf(const PendingWorkloadOptions& options) {
  return options.limit == 0 ? kDefaultPendingWorkloadsLimit : options.limit;
}

}  // namespace

absl::Status ValidatePendingWorkloadsOffset(int64_t offset) {
  if (offset < 0) {
    return absl::InvalidArgumentError("offset: must not be negative");
  }
  return absl::OkStatus();
}

absl::Status ValidatePendingWorkloadsLimit(int64_t limit) {
  if (limit < 0) {
    return absl::InvalidArgumentError("limit: must not be negative");
  }
  if (limit > kMaxPendingWorkloadsLimit) {
    return absl::InvalidArgumentError(
        absl::StrCat("limit: must be at most ", kMaxPendingWorkloadsLimit));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<PendingWorkload>> PendingWorkloadsInClusterQueue(
    const AdmissionState& state, const std::string& cluster_queue,
    const PendingWorkloadOptions& options) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  if (!state.cluster_queues().count(cluster_queue)) {
    return absl::NotFoundError(
        absl::StrCat("ClusterQueue \"", cluster_queue, "\" not found"));
  }
  const int64_t limit = LimitOf(options);
  // Positions in the LocalQueues count every workload ahead, so the walk
  // starts at the front even when the page starts further down.
  const size_t wanted = options.offset > INT64_MAX - limit
                            ? SIZE_MAX
                            : static_cast<size_t>(options.offset + limit);
  const std::vector<NamespacedName> order =
      state.queues().PendingWorkloads(cluster_queue, wanted);
  std::vector<PendingWorkload> page;
  page.reserve(std::min<size_t>(
      order.size() - std::min<size_t>(order.size(), options.offset), limit));
  std::map<NamespacedName, int64_t> local_queue_positions;
  for (size_t index = 0; index < order.size(); ++index) {
    const Workload* wl = state.FindWorkload(order[index]);
    if (wl == nullptr) continue;
    const int64_t in_local_queue = local_queue_positions[LocalQueueOf(*wl)]++;
    if (static_cast<int64_t>(index) >= options.offset) {
      page.push_back(PendingWorkloadOf(*wl, index, in_local_queue));
    }
  }
  return page;
}

absl::StatusOr<std::vector<PendingWorkload>> PendingWorkloadsInLocalQueue(
    const AdmissionState& state, const NamespacedName& local_queue,
    const PendingWorkloadOptions& options) {
  if (absl::Status s = ValidateOptions(options); !s.ok()) return s;
  auto lq = state.local_queues().find(local_queue);
  if (lq == state.local_queues().end()) {
    return absl::NotFoundError(absl::StrCat("LocalQueue \"", local_queue.first,
                                            "/", local_queue.second,
                                            "\" not found"));
  }
  const int64_t limit = LimitOf(options);
  // The LocalQueue's workloads are spread over its ClusterQueue's whole
  // order: all of it is needed for their ClusterQueue positions.
  const std::vector<NamespacedName> order =
      state.queues().PendingWorkloads(lq->second.cluster_queue);
  std::vector<PendingWorkload> page;
  int64_t in_local_queue = 0;
  for (size_t index = 0; index < order.size(); ++index) {
    if (static_cast<int64_t>(page.size()) >= limit) break;
    const Workload* wl = state.FindWorkload(order[index]);
    if (wl == nullptr || LocalQueueOf(*wl) != local_queue) continue;
    if (in_local_queue >= options.offset) {
      page.push_back(PendingWorkloadOf(*wl, index, in_local_queue));
    }
    ++in_local_queue;
  }
  return page;
}

std::optional<int64_t> PositionInLocalQueue(const AdmissionState& state,
                                            const NamespacedName& workload) {
  const Workload* wl = state.FindWorkload(workload);
  const std::string* cq = state.queues().ClusterQueueOf(workload);
  if (wl == nullptr || cq == nullptr) return std::nullopt;
  const NamespacedName own = LocalQueueOf(*wl);
  int64_t ahead = 0;
  for (const NamespacedName& key : state.queues().PendingWorkloads(*cq)) {
    if (key == workload) return ahead;
    const Workload* other = state.FindWorkload(key);
    if (other != nullptr && LocalQueueOf(*other) == own) ++ahead;
  }
  return std::nullopt;
}

}  // namespace kq::admission
