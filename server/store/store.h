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

// The pod template of one pod set, kept on disk apart from its workload:
// kqd holds the workloads it schedules in memory but not their templates,
// which admission never reads. A workload's row marks each such pod set
// (PodSet::template_on_disk) and carries no text for it. Templates never
// change once written; they go when their workload's row is deleted. A
// read asks for a workload's uid too, so a workload deleted and created
// again under its name never shows the other one's templates.
struct PodTemplate {
  NamespacedName workload;
  std::string workload_uid;
  int32_t pod_set = 0;  // index in spec.podSets
  std::string template_json;
  friend bool operator==(const PodTemplate&, const PodTemplate&) = default;
};

// Moves the template text of every pod set of `workload` that has one into
// the result (keyed by its metadata.uid, which must be set), leaving the pod
// set marked template_on_disk with no text.
std::vector<PodTemplate> DetachPodTemplates(Workload& workload);
// Whether a pod set of `workload` is marked template_on_disk without text.
bool NeedsPodTemplates(const Workload& workload);
// Puts the text of `templates` (the workload's) into its pod sets marked
// template_on_disk. Internal when such a pod set is left without text.
absl::Status FillPodTemplates(Workload& workload,
                              std::vector<PodTemplate> templates);

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
  // The watch event each upserted workload makes, one per workload in the
  // same order, or none at all: an engine batch's change to a workload is
  // both its new row and its event, so it is copied and serialized once
  // for both. Recorded after `events`.
  std::vector<Event::Type> upserted_workload_events;
  std::vector<NamespacedName> deleted_workloads;
  // Templates of the workloads this batch creates (DetachPodTemplates).
  // A workload's uid never changes under its name: a name is created again
  // only after a batch deleted its row, with its templates.
  std::vector<PodTemplate> added_templates;
  std::vector<Event> events;

  // The events the batch records, in order: `events`, then one per upserted
  // workload with upserted_workload_events (copies of the workloads).
  std::vector<Event> AllEvents() const;
  // InvalidArgument unless upserted_workload_events is empty or has one
  // type per upserted workload. Commit checks it before writing anything.
  absl::Status CheckShape() const;
};

// What a starting engine needs to rebuild its state.
struct LoadedState {
  // Revision of the last committed batch; 0 for an empty store.
  int64_t revision = 0;
  std::vector<ConfigObject> objects;
  // Workloads that are not finished, in (namespace, name) order, without
  // the text of templates kept on disk.
  std::vector<Workload> active_workloads;
};

// Durable storage of kq's state. The engine is the only writer; every method
// is called from the engine thread, so implementations are
// thread-compatible, not thread-safe.
//
// The contract every implementation keeps (MemoryStore, SqliteStore, and any
// later one). tests/server/store/store_conformance_test.cc checks each clause
// against every implementation, in the tests named after it; clause 3 only
// once a store that can be fenced exists.
//
// 1. Atomic and durable commits. When Commit returns OK the whole batch
//    survives a crash (per the implementation's durability setting);
//    when it returns an error nothing of it was applied, so a Load() after a
//    failed Commit returns the state before it.
//    (StaleRevisionIsRefusedAndWritesNothing,
//    UpsertedWorkloadsMakeTheirOwnEvents.)
// 2. Revisions only increase. A batch whose revision is not greater than
//    the store's is refused with FailedPrecondition ("batch revision N is
//    not greater than the store's revision M"); revisions need not be
//    consecutive. (StaleRevisionIsRefusedAndWritesNothing.)
// 3. Fencing. A store that more than one kqd may write (a shared database
//    with a leader) refuses a commit from a writer that is no longer the
//    leader with Aborted: the conflict is with another writer, and the
//    caller must stop writing rather than retry. The single-writer stores
//    here never return it.
// 4. A malformed batch (WriteBatch::CheckShape) is refused with
//    InvalidArgument before anything is written.
//    (UpsertedWorkloadsMakeTheirOwnEvents.)
// 5. Within a batch, upserts apply before deletes, so a key in both lists
//    ends up deleted; a deleted workload's templates go with it, and the
//    batch's added templates are written last.
//    (UpsertThenDeleteInOneBatchEndsDeleted, TemplatesGoWithTheirWorkload.)
// 6. Finished workloads stay stored: GetWorkload and ListFinishedWorkloads
//    return them, Load does not. (FinishedWorkloadsAreKeptButNotLoaded.)
// 7. Events are recorded at the batch's revision (Event::revision is
//    ignored), in batch order: `events`, then one per upserted workload.
//    (EventsAreReadAfterARevisionInOrder, UpsertedWorkloadsMakeTheirOwnEvents.)
// 8. Retention: an implementation keeps at most its retention of events,
//    pruning whole revisions, oldest first, so every revision from
//    OldestEventRevision() on is complete; the newest revision is never
//    pruned, even when it alone holds more events than the retention.
//    (RetentionPrunesOldestWholeRevisions,
//    ZeroRetentionKeepsOnlyTheNewestRevision.)
// 9. ReadEvents never splits a revision: when `limit` falls inside one, the
//    result stops before it, unless it is the result's first revision, which
//    is then returned whole, so a reader always makes progress.
//    (ReadEventsNeverSplitsARevision.)
// 10. Errors: Unavailable when the database is busy or unreachable (the
//    caller may retry), Internal on a corrupt row or any other failure.
class Store {
 public:
  virtual ~Store() = default;

  // Reads all configuration objects and all unfinished workloads.
  // Internal on a corrupt row.
  virtual absl::StatusOr<LoadedState> Load() = 0;

  // Applies `batch` atomically and durably (clauses 1-5 above): when this
  // returns OK the batch survives a crash; otherwise nothing of it was
  // applied. FailedPrecondition for a stale revision, Aborted when fenced,
  // InvalidArgument for a malformed batch, Unavailable when the database is
  // busy, Internal on any other failure.
  virtual absl::Status Commit(const WriteBatch& batch) = 0;

  // Returns a stored workload in any state, or nullopt when unknown; with
  // its templates.
  virtual absl::StatusOr<std::optional<Workload>> GetWorkload(
      const NamespacedName& key) = 0;

  // Lists finished workloads, in (namespace, name) order, with their
  // templates; an empty `namespace_name` lists every namespace.
  virtual absl::StatusOr<std::vector<Workload>> ListFinishedWorkloads(
      const std::string& namespace_name) = 0;

  // Returns up to `limit` events with revision > `after_revision`, oldest
  // first; workloads with their templates, except those of a workload
  // deleted since.
  virtual absl::StatusOr<std::vector<Event>> ReadEvents(int64_t after_revision,
                                                        size_t limit) = 0;

  // The templates kept on disk for the workload `key` of uid
  // `workload_uid`, in pod set order; empty when it has none.
  virtual absl::StatusOr<std::vector<PodTemplate>> ReadPodTemplates(
      const NamespacedName& key, const std::string& workload_uid) = 0;

  // Puts the text of each template of `workload` kept on disk back into its
  // pod set (no read when none lacks its text). Internal when the store
  // has no template for such a pod set.
  absl::Status AttachPodTemplates(Workload& workload);

  // Oldest revision whose events are still retained (0 if none). Events of
  // older revisions were pruned.
  virtual absl::StatusOr<int64_t> OldestEventRevision() = 0;

 protected:
  // AttachPodTemplates for the workloads of read events, reading each uid
  // once. A workload deleted since has no templates left: its events go
  // without them. Read errors are returned.
  absl::Status AttachEventTemplates(std::vector<Event>& events);
};

}  // namespace kq::store
