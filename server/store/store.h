#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "server/core/objects.h"

namespace kq::store {

// One committed change, kept for Watch (Kubernetes' watch event).
struct Event {
  enum class Type { kAdded, kModified, kDeleted };
  int64_t revision = 0;
  Type type = Type::kAdded;
  // The object after the change (before it, for kDeleted).
  std::variant<ConfigObject, Workload> object;
};

// Everything one engine batch changed, written in ONE transaction.
struct WriteBatch {
  // The batch's revision; every object below carries it. Must be greater
  // than the store's current revision.
  int64_t revision = 0;
  std::vector<ConfigObject> upserted_objects;
  std::vector<ObjectKey> deleted_objects;
  // Workloads in any state; finished ones stay stored for Get/List and are
  // not returned by Load().
  std::vector<Workload> upserted_workloads;
  std::vector<NamespacedName> deleted_workloads;
  std::vector<Event> events;
};

// What a starting engine needs to rebuild its state.
struct LoadedState {
  // Revision of the last committed batch; 0 for an empty store.
  int64_t revision = 0;
  std::vector<ConfigObject> objects;
  // Workloads that are not finished, in (namespace, name) order.
  std::vector<Workload> active_workloads;
};

// Durable storage of kq's state. The engine is the only writer; every method
// is called from the engine thread, so implementations are
// thread-compatible, not thread-safe.
class Store {
 public:
  virtual ~Store() = default;

  // Reads all configuration objects and all unfinished workloads.
  // Internal on a corrupt row.
  virtual absl::StatusOr<LoadedState> Load() = 0;

  // Applies `batch` atomically and durably: when this returns OK the batch
  // survives a crash; otherwise nothing of it was applied. Unavailable when
  // the database is busy, Internal on any other failure.
  virtual absl::Status Commit(const WriteBatch& batch) = 0;

  // Returns a stored workload in any state, or nullopt when unknown.
  virtual absl::StatusOr<std::optional<Workload>> GetWorkload(
      const NamespacedName& key) = 0;

  // Lists finished workloads, in (namespace, name) order; an empty
  // `namespace_name` lists every namespace.
  virtual absl::StatusOr<std::vector<Workload>> ListFinishedWorkloads(
      const std::string& namespace_name) = 0;

  // Returns up to `limit` events with revision > `after_revision`, oldest
  // first.
  virtual absl::StatusOr<std::vector<Event>> ReadEvents(int64_t after_revision,
                                                        size_t limit) = 0;

  // Oldest revision whose events are still retained (0 if none). Events of
  // older revisions were pruned.
  virtual absl::StatusOr<int64_t> OldestEventRevision() = 0;
};

}  // namespace kq::store
