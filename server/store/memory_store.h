#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "server/core/objects.h"
#include "server/store/store.h"

namespace kq::store {

// A Store that keeps everything in memory: a real, complete implementation
// (nothing survives the process), for tests and for running kq without a
// database. It keeps the Store contract (store.h) as SqliteStore does, with
// a retention of `event_retention` events; StoreConformanceTest runs the
// same cases against both.
//
// Thread-compatible, like every Store.
class MemoryStore final : public Store {
 public:
  static constexpr size_t kDefaultEventRetention = 100000;

  explicit MemoryStore(size_t event_retention = kDefaultEventRetention);

  absl::StatusOr<LoadedState> Load() override;
  absl::Status Commit(const WriteBatch& batch) override;
  absl::StatusOr<std::optional<Workload>> GetWorkload(
      const NamespacedName& key) override;
  absl::StatusOr<std::vector<Workload>> ListFinishedWorkloads(
      const std::string& namespace_name) override;
  absl::StatusOr<std::vector<Event>> ReadEvents(int64_t after_revision,
                                                size_t limit) override;
  absl::StatusOr<int64_t> OldestEventRevision() override;
  absl::StatusOr<std::vector<PodTemplate>> ReadPodTemplates(
      const NamespacedName& key, const std::string& workload_uid) override;

 private:
  void PruneEvents();

  const size_t event_retention_;
  int64_t revision_ = 0;
  std::map<ObjectKey, ConfigObject> objects_;
  // Workloads in every state, by (namespace, name).
  std::map<NamespacedName, Workload> workloads_;
  // Pod templates by workload uid, then pod set index.
  std::map<std::string, std::map<int32_t, std::string>> templates_;
  // Ordered by (revision, position in its batch).
  std::deque<Event> events_;
};

}  // namespace kq::store
