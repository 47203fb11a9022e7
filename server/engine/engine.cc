#include "server/engine/engine.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "spdlog/spdlog.h"

#include "base/status_macros.h"
#include "server/core/validation.h"

namespace kq::engine {
namespace {

using EventType = store::Event::Type;

// How often an engine whose state is unstored retries the reload when no
// command comes to try it sooner.
constexpr absl::Duration kReloadRetry = absl::Seconds(1);

EventType EventTypeOf(admission::Change change) {
  switch (change) {
    case admission::Change::kAdded:
      return EventType::kAdded;
    case admission::Change::kModified:
      return EventType::kModified;
    case admission::Change::kDeleted:
      return EventType::kDeleted;
  }
  return EventType::kModified;
}

}  // namespace

Engine::Engine(store::Store& store, Clock& clock, EngineOptions options)
    : store_(store),
      clock_(clock),
      options_(options),
      event_log_(options.event_log_capacity) {}

Engine::~Engine() { Stop(); }

// ---------------------------------------------------------------------------
// Threading: commands in, one batch at a time, replies after the commit.

template <typename T>
absl::StatusOr<T> Engine::Wait(
    const std::function<void(std::function<void(absl::StatusOr<T>)>)>& start) {
  struct Slot {
    absl::Notification done;
    absl::StatusOr<T> result = absl::UnknownError("command did not run");
  };
  auto slot = std::make_shared<Slot>();
  start([slot](absl::StatusOr<T> result) {
    slot->result = std::move(result);
    slot->done.Notify();
  });
  slot->done.WaitForNotification();
  return std::move(slot->result);
}

template <typename T>
absl::StatusOr<T> Engine::Call(std::function<absl::StatusOr<T>()> fn) {
  return Wait<T>([this, &fn](std::function<void(absl::StatusOr<T>)> done) {
    auto shared_done = std::make_shared<std::function<void(absl::StatusOr<T>)>>(
        std::move(done));
    const bool posted = Post(
        [this, fn = std::move(fn), shared_done] {
          auto result = std::make_shared<absl::StatusOr<T>>(fn());
          replies_.push_back([shared_done, result](const absl::Status& commit) {
            if (!commit.ok()) return (*shared_done)(commit);
            (*shared_done)(std::move(*result));
          });
        },
        [shared_done](const absl::Status& status) { (*shared_done)(status); });
    if (!posted) {
      (*shared_done)(absl::UnavailableError("kqd is shutting down"));
    }
  });
}

absl::Status Engine::Start() {
  state_.SetConfiguration(options_.configuration);
  state_.set_eviction_grace(options_.eviction_grace);
  KQ_RETURN_IF_ERROR(Load());
  KQ_ASSIGN_OR_RETURN(int64_t oldest, store_.OldestEventRevision());
  KQ_ASSIGN_OR_RETURN(std::vector<store::Event> events,
                      store_.ReadEvents(oldest > 0 ? oldest - 1 : 0,
                                        options_.event_log_capacity));
  event_log_.Reset(revision_, std::move(events));
  // Converge before serving: a crash may have left admissible work.
  std::deque<Command> none;
  state_.set_needs_scheduling();
  RunBatch(none);
  {
    absl::MutexLock lock(&mu_);
    running_ = true;
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Engine::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_.Signal();
  }
  if (thread_.joinable()) thread_.join();
  // The engine thread is gone: what still waits for admission never will.
  for (auto& [key, list] : waiters_) {
    for (Waiter& waiter : list) {
      waiter.done(absl::UnavailableError("kqd is shutting down"));
    }
  }
  waiters_.clear();
  waiter_deadlines_.clear();
  waiter_keys_.clear();
  event_log_.Close();
}

void Engine::Loop() {
  while (true) {
    std::deque<Command> batch;
    {
      absl::MutexLock lock(&mu_);
      // needs_scheduling() is only touched by this thread; reading it under
      // the lock just orders it with the wait.
      // An admission check backoff ending is the one event that comes from
      // the clock rather than a command: wait for it with a deadline.
      while (commands_.empty() && !stopping_ &&
             (!unstored_.ok() || !state_.needs_scheduling())) {
        // Nothing can be scheduled on an unstored state: wait for a command
        // or for the next reload attempt.
        if (!unstored_.ok()) {
          if (wake_.WaitWithDeadline(&mu_, absl::Now() + kReloadRetry)) break;
          continue;
        }
        std::optional<absl::Time> wakeup = state_.NextWakeup();
        const std::optional<absl::Time> waiter = NextWaiterDeadline();
        if (waiter.has_value() && (!wakeup || *waiter < *wakeup)) {
          wakeup = waiter;
        }
        if (!wakeup.has_value()) {
          wake_.Wait(&mu_);
          continue;
        }
        const absl::Duration left = *wakeup - clock_.TimeNow();
        // Due: a batch without commands runs the passes and answers the
        // waiters whose time is up.
        if (left <= absl::ZeroDuration()) break;
        // The injected clock may not be real time; wake at least once a
        // second to look at it again.
        wake_.WaitWithDeadline(&mu_,
                               absl::Now() + std::min(left, absl::Seconds(1)));
      }
      if (commands_.empty() && stopping_) break;
      while (!commands_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(commands_.front()));
        commands_.pop_front();
      }
    }
    RunBatch(batch);
  }
}

bool Engine::ReloadOrRefuse(std::deque<Command>& commands) {
  absl::Status reload = Load();
  if (reload.ok()) {
    spdlog::warn("reloaded revision {} from the store: serving again",
                 revision_);
    unstored_ = absl::OkStatus();
    state_.set_needs_scheduling();
    return true;
  }
  spdlog::error("reloading state failed again: {}", reload.ToString());
  for (Command& command : commands) {
    if (command.refuse) {
      command.refuse(unstored_);
    } else {
      command.run();
    }
  }
  return false;
}

void Engine::RunBatch(std::deque<Command>& commands) {
  if (!unstored_.ok() && !ReloadOrRefuse(commands)) return;
  batch_now_ = clock_.TimeNow();
  submitted_ = 0;
  // 1. Apply every command of the batch in arrival order.
  for (Command& command : commands) command.run();
  // 2. Configuration changed: rebuild the quota tree and the queues.
  if (state_.config_changed()) state_.Rebuild(batch_now_);
  // 3. Scheduling passes over the batch's state, within a time budget so
  //    that queued commands are not starved. A workload whose admission
  //    check backoff is over needs a pass to be queued again.
  std::optional<absl::Time> wakeup = state_.NextWakeup();
  if (wakeup.has_value() && *wakeup <= batch_now_) {
    state_.set_needs_scheduling();
  }
  if (state_.needs_scheduling()) {
    const absl::Time start = clock_.TimeNow();
    const int64_t reservations = state_.reservations();
    state_.RunPasses(batch_now_, {.out_of_time = [this, start, reservations] {
                       const absl::Duration spent = clock_.TimeNow() - start;
                       if (spent > options_.pass_budget) return true;
                       if (spent <= options_.pass_budget_when_busy) {
                         return false;
                       }
                       if (state_.reservations() != reservations) return true;
                       absl::MutexLock lock(&mu_);
                       return !commands_.empty();
                     }});
  }
  // 4. Answer the admission waiters whose workload was decided (runners
  //    attach in this same batch).
  ResolveWaiters();
  RecordAdmissions();
  // 5. One transaction for everything, then the replies.
  absl::Status commit = CommitBatch();
  if (!commit.ok()) {
    spdlog::error("commit of revision {} failed: {}; reloading state",
                  revision_ + 1, commit.ToString());
    absl::Status reload = Load();
    if (!reload.ok()) {
      // Fail stop: serving this state would build later batches, and
      // answers, on changes that were never stored.
      spdlog::critical(
          "reloading state failed: {}; refusing every call until a reload "
          "succeeds",
          reload.ToString());
      unstored_ = absl::UnavailableError(absl::StrCat(
          "kqd could not store a change (", commit.message(),
          ") nor reload its state from the store (", reload.message(),
          "); it refuses every call until a reload succeeds"));
    }
    commit = absl::UnavailableError(
        absl::StrCat("the change was not stored: ", commit.message()));
  }
  std::vector<Reply> replies;
  replies.swap(replies_);
  for (Reply& reply : replies) reply(commit);
  // Replies may read workloads that finished in this batch, and the
  // templates of those it created; now forget them.
  finished_in_batch_.clear();
  batch_templates_.clear();
}

absl::Status Engine::CommitBatch() {
  admission::Changes changes = state_.TakeChanges();
  store::WriteBatch batch;
  // Kept until the batch's replies are sent (RunBatch): the events and
  // answers about a workload it created need no read of what it wrote.
  for (const auto& [uid, templates] : batch_templates_) {
    batch.added_templates.insert(batch.added_templates.end(), templates.begin(),
                                 templates.end());
  }
  if (changes.empty()) {
    return absl::OkStatus();
  }
  batch.revision = revision_ + 1;
  for (const auto& [key, change] : changes.objects) {
    if (change == admission::Change::kDeleted) {
      batch.deleted_objects.push_back(key);
      auto d = changes.deleted_objects.find(key);
      if (d != changes.deleted_objects.end()) {
        MutableMetaOf(d->second).revision = batch.revision;
        batch.events.push_back(
            {batch.revision, EventType::kDeleted, d->second});
      }
      continue;
    }
    state_.StampRevision(key, batch.revision);
    const ConfigObject* object = state_.FindObject(key);
    if (object == nullptr) continue;
    batch.upserted_objects.push_back(*object);
    batch.events.push_back({batch.revision, EventTypeOf(change), *object});
  }
  batch.upserted_workloads.reserve(changes.workloads.size());
  for (auto& [key, change] : changes.workloads) {
    if (const Workload* live = state_.StampRevision(key, batch.revision)) {
      batch.upserted_workloads.push_back(*live);
    } else {
      auto finished = changes.finished_workloads.find(key);
      if (finished == changes.finished_workloads.end()) continue;
      finished->second.meta.revision = batch.revision;
      batch.upserted_workloads.push_back(finished->second);
    }
    batch.upserted_workload_events.push_back(EventTypeOf(change));
  }
  // Finished workloads stay readable by this batch's replies.
  finished_in_batch_ = std::move(changes.finished_workloads);
  KQ_RETURN_IF_ERROR(store_.Commit(batch));
  revision_ = batch.revision;
  // The store has its copy; the workloads move on to the watchers as
  // events, with the templates the state does not hold.
  std::vector<store::Event> events = std::move(batch.events);
  events.reserve(events.size() + batch.upserted_workloads.size());
  for (size_t i = 0; i < batch.upserted_workloads.size(); ++i) {
    Workload& wl = batch.upserted_workloads[i];
    // Committed: the event is published whatever this read gives.
    if (absl::Status s = AttachPodTemplates(wl); !s.ok()) {
      spdlog::error("watch event of revision {}: {}", revision_, s.ToString());
    }
    events.push_back(
        {revision_, batch.upserted_workload_events[i], std::move(wl)});
  }
  event_log_.Append(revision_, std::move(events));
  return absl::OkStatus();
}

absl::Status Engine::Load() {
  KQ_ASSIGN_OR_RETURN(store::LoadedState loaded, store_.Load());
  revision_ = loaded.revision;
  state_.Clear();
  for (ConfigObject& object : loaded.objects) {
    state_.LoadObject(std::move(object));
  }
  for (Workload& wl : loaded.active_workloads) {
    state_.LoadWorkload(std::move(wl));
  }
  state_.Rebuild(clock_.TimeNow());
  // Condition refreshes from the rebuild are written by the next batch.
  spdlog::info("loaded revision {}: {} objects, {} unfinished workloads",
               revision_, state_.objects().size(), state_.workloads().size());
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// Commands (engine thread).

void Engine::NameIfGenerated(Workload& wl) {
  if (!wl.meta.name.empty() || wl.meta.generate_name.empty()) return;
  do {
    wl.meta.name = names_.GenerateName(wl.meta.generate_name);
  } while (state_.FindWorkload(KeyOf(wl)) != nullptr);
}

absl::StatusOr<std::optional<Workload>> Engine::LookupWorkload(
    const NamespacedName& key) {
  const Workload* in_memory = state_.FindWorkload(key);
  if (in_memory == nullptr) {
    auto finished = finished_in_batch_.find(key);
    if (finished != finished_in_batch_.end()) in_memory = &finished->second;
  }
  if (in_memory == nullptr) in_memory = state_.FindRecentlyFinished(key);
  if (in_memory == nullptr) return store_.GetWorkload(key);
  Workload wl = *in_memory;
  KQ_RETURN_IF_ERROR(AttachPodTemplates(wl));
  return wl;
}

absl::Status Engine::AttachPodTemplates(Workload& wl) {
  if (!store::NeedsPodTemplates(wl)) return absl::OkStatus();
  // A workload created by the batch being built: not in the store yet.
  auto pending = batch_templates_.find(wl.meta.uid);
  if (pending != batch_templates_.end()) {
    return store::FillPodTemplates(wl, pending->second);
  }
  return store_.AttachPodTemplates(wl);
}

absl::StatusOr<ApplyResult> Engine::DoSubmit(Workload wl, bool from_apply) {
  NamespacedName key = KeyOf(wl);
  KQ_ASSIGN_OR_RETURN(std::optional<Workload> existing, LookupWorkload(key));
  if (existing.has_value()) {
    if (!from_apply) {
      return absl::AlreadyExistsError(
          absl::StrCat(Describe(key), " already exists"));
    }
    return ApplyResult{"unchanged", *existing, {}};
  }
  // The templates go to disk with this batch; the state holds none.
  wl.meta.uid = names_.NewUid();
  std::vector<store::PodTemplate> templates = store::DetachPodTemplates(wl);
  // Workloads submitted in one batch keep their arrival order: each gets
  // its own creation instant, so FIFO ties never fall to random UIDs.
  const Uid uid = wl.meta.uid;
  const Workload& added = state_.AddWorkload(
      std::move(wl), uid, batch_now_ + absl::Nanoseconds(submitted_++));
  ApplyResult result{"created", added, {}};
  if (templates.empty()) return result;
  std::vector<store::PodTemplate>& kept = batch_templates_[uid];
  kept = std::move(templates);
  KQ_RETURN_IF_ERROR(
      store::FillPodTemplates(std::get<Workload>(result.object), kept));
  return result;
}

absl::StatusOr<std::vector<ApplyResult>> Engine::DoApply(
    std::vector<ConfigObject>& objects, std::vector<Workload>& workloads) {
  // 1. Validate everything before changing anything.
  for (const ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    absl::Status valid = ValidateConfigObject(object);
    if (!valid.ok()) return About(Describe(key), valid);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      auto old = state_.local_queues().find({key.namespace_name, key.name});
      if (old != state_.local_queues().end() &&
          old->second.cluster_queue != lq->cluster_queue) {
        return absl::InvalidArgumentError(absl::StrCat(
            Describe(key), ": spec.clusterQueue: field is immutable (was \"",
            old->second.cluster_queue, "\")"));
      }
    }
  }
  for (Workload& wl : workloads) {
    NameIfGenerated(wl);
    KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(wl));
    KQ_RETURN_IF_ERROR(state_.CheckPriorityClass(wl, objects));
  }

  // 2. Apply the configuration objects.
  std::vector<ApplyResult> results;
  for (ConfigObject& object : objects) {
    ObjectKey key = KeyOf(object);
    ApplyResult result;
    result.warnings = ConfigWarnings(object);
    result.action =
        state_.PutObject(std::move(object), names_.NewUid(), batch_now_);
    result.object = *state_.FindObject(key);
    results.push_back(std::move(result));
  }
  // References that do not resolve yet: accepted, as Kueue accepts them.
  for (ApplyResult& result : results) {
    const ConfigObject& object = std::get<ConfigObject>(result.object);
    if (const auto* lq = std::get_if<LocalQueue>(&object)) {
      if (!state_.cluster_queues().count(lq->cluster_queue)) {
        result.warnings.push_back(absl::StrCat(
            "LocalQueue \"", lq->meta.namespace_name.str(), "/", lq->meta.name,
            "\": ClusterQueue \"", lq->cluster_queue,
            "\" does not exist yet; the LocalQueue is inactive "
            "(ClusterQueueDoesNotExist) until it does"));
      }
    } else if (const auto* cq = std::get_if<ClusterQueue>(&object)) {
      std::vector<std::string> missing;
      for (const ResourceGroup& g : cq->resource_groups) {
        for (const FlavorQuotas& f : g.flavors) {
          if (!state_.flavors().count(f.name)) missing.push_back(f.name);
        }
      }
      if (!missing.empty()) {
        result.warnings.push_back(
            absl::StrCat("ClusterQueue \"", cq->meta.name,
                         "\": ResourceFlavor(s) ", absl::StrJoin(missing, ", "),
                         " do not exist yet; the ClusterQueue is inactive "
                         "(FlavorNotFound) until they do"));
      }
      std::vector<std::string> missing_checks;
      for (const AdmissionCheckStrategyRule& r : cq->admission_checks) {
        if (!state_.admission_checks().count(r.name)) {
          missing_checks.push_back(r.name);
        }
      }
      if (!missing_checks.empty()) {
        result.warnings.push_back(absl::StrCat(
            "ClusterQueue \"", cq->meta.name, "\": AdmissionCheck(s) ",
            absl::StrJoin(missing_checks, ", "),
            " do not exist yet; the ClusterQueue is inactive "
            "(AdmissionCheckNotFound) until they do"));
      }
    }
  }
  // Workloads submitted below must see the new queues.
  if (state_.config_changed()) state_.Rebuild(batch_now_);

  // 3. Submit the workloads.
  for (Workload& wl : workloads) {
    KQ_ASSIGN_OR_RETURN(ApplyResult result, DoSubmit(std::move(wl), true));
    results.push_back(std::move(result));
  }
  return results;
}

// ---------------------------------------------------------------------------
// Public API: each call is one command.

absl::StatusOr<std::vector<ApplyResult>> Engine::Apply(
    std::vector<ConfigObject> objects, std::vector<Workload> workloads) {
  return Call<std::vector<ApplyResult>>(
      [this, objects = std::move(objects),
       workloads = std::move(workloads)]() mutable {
        return DoApply(objects, workloads);
      });
}

absl::Status Engine::Delete(const ObjectKey& key) {
  return Call<bool>([this, key]() -> absl::StatusOr<bool> {
           KQ_RETURN_IF_ERROR(state_.RemoveObject(key));
           return true;
         })
      .status();
}

absl::StatusOr<WorkloadView> Engine::Submit(Workload workload) {
  return Wait<WorkloadView>(
      [&](SubmitDone done) { Submit(std::move(workload), std::move(done)); });
}

void Engine::Submit(Workload workload, SubmitDone done) {
  // Answered after the commit, in the same batch: the view carries the
  // batch's revision and what its passes did (one engine round trip).
  ChangeThenReadAsync<WorkloadView>(
      [this, workload = std::move(
                 workload)]() mutable -> absl::StatusOr<NamespacedName> {
        NameIfGenerated(workload);
        const NamespacedName key = KeyOf(workload);
        KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(workload));
        KQ_RETURN_IF_ERROR(state_.CheckPriorityClass(workload, {}));
        KQ_RETURN_IF_ERROR(DoSubmit(std::move(workload), false).status());
        return key;
      },
      [this](Workload wl) {
        return state_.ViewOf(std::move(wl), /*with_position=*/false);
      },
      std::move(done));
}

absl::StatusOr<WorkloadView> Engine::GetWorkload(const NamespacedName& key) {
  return Call<WorkloadView>([this, key]() -> absl::StatusOr<WorkloadView> {
    KQ_ASSIGN_OR_RETURN(std::optional<Workload> wl, LookupWorkload(key));
    if (!wl.has_value()) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return state_.ViewOf(*std::move(wl));
  });
}

absl::StatusOr<Listed<Workload>> Engine::ListWorkloads(
    const WorkloadFilter& filter) {
  return Call<Listed<Workload>>([this,
                                 filter]() -> absl::StatusOr<Listed<Workload>> {
    Listed<Workload> listed;
    auto keep = [&](const Workload& wl) {
      if (!filter.namespace_name.empty() &&
          wl.meta.namespace_name != filter.namespace_name) {
        return false;
      }
      if (!filter.queue_name.empty() && wl.queue_name != filter.queue_name) {
        return false;
      }
      if (!filter.cluster_queue.empty() &&
          state_.ClusterQueueForWorkload(wl) != filter.cluster_queue) {
        return false;
      }
      return true;
    };
    // Workloads are keyed by namespace first: one namespace is one range.
    const auto& workloads = state_.workloads();
    auto it =
        filter.namespace_name.empty()
            ? workloads.begin()
            : workloads.lower_bound(NamespacedName{filter.namespace_name, ""});
    for (; it != workloads.end(); ++it) {
      if (!filter.namespace_name.empty() &&
          it->meta.namespace_name != filter.namespace_name) {
        break;
      }
      if (!keep(*it)) continue;
      listed.items.push_back(*it);
      KQ_RETURN_IF_ERROR(AttachPodTemplates(listed.items.back()));
    }
    if (filter.include_finished) {
      KQ_ASSIGN_OR_RETURN(std::vector<Workload> finished,
                          store_.ListFinishedWorkloads(filter.namespace_name));
      for (Workload& wl : finished) {
        if (keep(wl)) listed.items.push_back(std::move(wl));
      }
      std::sort(listed.items.begin(), listed.items.end(),
                [](const Workload& a, const Workload& b) {
                  return KeyOf(a) < KeyOf(b);
                });
    }
    listed.revision = revision_;
    return listed;
  });
}

template <typename T>
void Engine::ChangeThenReadAsync(
    std::function<absl::StatusOr<NamespacedName>()> change,
    std::function<T(Workload)> read,
    std::function<void(absl::StatusOr<T>)> done) {
  auto shared_done =
      std::make_shared<std::function<void(absl::StatusOr<T>)>>(std::move(done));
  const bool posted = Post(
      [this, change = std::move(change), read = std::move(read), shared_done] {
        absl::StatusOr<NamespacedName> changed = change();
        // Replies run on this thread after the commit, so the workload read
        // here carries the batch's revision and what its passes did.
        replies_.push_back([this, read, shared_done,
                            changed](const absl::Status& commit) {
          if (!changed.ok()) return (*shared_done)(changed.status());
          if (!commit.ok()) return (*shared_done)(commit);
          absl::StatusOr<std::optional<Workload>> wl = LookupWorkload(*changed);
          if (!wl.ok()) return (*shared_done)(wl.status());
          if (!wl->has_value()) {
            return (*shared_done)(absl::NotFoundError(
                absl::StrCat(Describe(*changed), " not found")));
          }
          (*shared_done)(read(**std::move(wl)));
        });
      },
      [shared_done](const absl::Status& status) { (*shared_done)(status); });
  if (!posted) {
    (*shared_done)(absl::UnavailableError("kqd is shutting down"));
  }
}

absl::StatusOr<Workload> Engine::ChangeWorkload(
    const NamespacedName& key, std::function<absl::Status()> change) {
  return Wait<Workload>([&](WorkloadDone done) {
    ChangeWorkload(key, std::move(change), std::move(done));
  });
}

void Engine::ChangeWorkload(const NamespacedName& key,
                            std::function<absl::Status()> change,
                            WorkloadDone done) {
  ChangeThenReadAsync<Workload>(
      [key, change = std::move(change)]() -> absl::StatusOr<NamespacedName> {
        KQ_RETURN_IF_ERROR(change());
        return key;
      },
      [](Workload wl) { return wl; }, std::move(done));
}

absl::StatusOr<Workload> Engine::Cancel(const NamespacedName& key) {
  return Wait<Workload>(
      [&](WorkloadDone done) { Cancel(key, std::move(done)); });
}

void Engine::Cancel(const NamespacedName& key, WorkloadDone done) {
  ChangeWorkload(
      key,
      [this, key]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_
            .FinishWorkload(key, "Cancelled", "The workload was cancelled",
                            batch_now_)
            .status();
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::Finish(const NamespacedName& key,
                                        bool succeeded,
                                        const std::string& message) {
  return Wait<Workload>([&](WorkloadDone done) {
    Finish(key, succeeded, message, std::move(done));
  });
}

void Engine::Finish(const NamespacedName& key, bool succeeded,
                    const std::string& message, WorkloadDone done) {
  ChangeWorkload(
      key,
      [this, key, succeeded, message]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        const Workload* wl = state_.FindWorkload(key);
        if (!HoldsQuota(*wl)) {
          return absl::FailedPreconditionError(absl::StrCat(
              Describe(key),
              " holds no quota reservation; only admitted workloads finish "
              "(use cancel to drop a pending one)"));
        }
        std::string text = message;
        if (text.empty()) {
          text = succeeded ? "Job finished successfully" : "Job failed";
        }
        return state_
            .FinishWorkload(key, succeeded ? "Succeeded" : "Failed", text,
                            batch_now_)
            .status();
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::SetAdmissionCheckState(
    const NamespacedName& key, const std::string& check,
    const std::string& state, const std::string& message,
    std::optional<int32_t> requeue_after_seconds,
    std::vector<PodSetUpdate> pod_set_updates) {
  return ChangeWorkload(
      key,
      [this, key, check, state, message, requeue_after_seconds,
       pod_set_updates = std::move(pod_set_updates)]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        // The updates are checked against the templates' labels.
        std::optional<Workload> with_templates;
        const Workload* wl = state_.FindWorkload(key);
        if (!pod_set_updates.empty() && store::NeedsPodTemplates(*wl)) {
          with_templates = *wl;
          KQ_RETURN_IF_ERROR(AttachPodTemplates(*with_templates));
        }
        return state_
            .SetAdmissionCheckState(
                key, check, state, message, requeue_after_seconds, batch_now_,
                pod_set_updates,
                with_templates.has_value() ? &*with_templates : nullptr)
            .status();
      });
}

bool Engine::Post(std::function<void()> run,
                  std::function<void(const absl::Status&)> refuse) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || !running_) return false;
  commands_.push_back({std::move(run), std::move(refuse)});
  wake_.Signal();
  return true;
}

int64_t Engine::Admit(AdmitWait wait, AdmitDone done) {
  const int64_t id = next_waiter_id_.fetch_add(1);
  auto shared_done = std::make_shared<AdmitDone>(std::move(done));
  const bool posted = Post(
      [this, id, wait = std::move(wait), shared_done]() mutable {
        auto fail = [this, shared_done](absl::Status status) {
          replies_.push_back([shared_done, status](const absl::Status&) {
            (*shared_done)(status);
          });
        };
        if (wait.submit.has_value()) {
          NameIfGenerated(*wait.submit);
          wait.key = KeyOf(*wait.submit);
          if (!state_.FindWorkload(wait.key)) {
            absl::Status valid = ValidateSubmittedWorkload(*wait.submit);
            if (valid.ok()) valid = state_.CheckPriorityClass(*wait.submit, {});
            if (!valid.ok()) return fail(valid);
            absl::StatusOr<ApplyResult> submitted =
                DoSubmit(*std::move(wait.submit), /*from_apply=*/true);
            if (!submitted.ok()) return fail(submitted.status());
          }
          wait.submit.reset();
        }
        const NamespacedName key = wait.key;
        absl::StatusOr<std::optional<Workload>> known = LookupWorkload(key);
        if (!known.ok()) return fail(known.status());
        if (!known->has_value()) {
          return fail(
              absl::NotFoundError(absl::StrCat(Describe(key), " not found")));
        }
        waiter_deadlines_.insert({wait.deadline, id});
        waiter_keys_[id] = key;
        waiters_[key].push_back(
            Waiter{id, std::move(wait), std::move(*shared_done)});
        fresh_waiters_.push_back(key);
      },
      [shared_done](const absl::Status& status) { (*shared_done)(status); });
  if (!posted) (*shared_done)(absl::UnavailableError("kqd is shutting down"));
  return id;
}

void Engine::CancelAdmit(int64_t id) {
  // Waiter bookkeeping only: it runs even while the state is unstored.
  Post(
      [this, id] {
        auto key = waiter_keys_.find(id);
        if (key == waiter_keys_.end()) return;
        auto list = waiters_.find(key->second);
        if (list != waiters_.end()) {
          std::erase_if(list->second, [&](const Waiter& w) {
            if (w.id != id) return false;
            waiter_deadlines_.erase({w.wait.deadline, id});
            return true;
          });
          if (list->second.empty()) waiters_.erase(list);
        }
        waiter_keys_.erase(key);
      },
      nullptr);
}

void Engine::RecordAdmissions() {
  for (const auto& [key, change] : state_.pending_changes().workloads) {
    const Workload* wl = state_.FindWorkload(key);
    if (wl == nullptr || !HoldsQuota(*wl)) continue;
    const Condition* reserved =
        FindCondition(wl->conditions, kConditionQuotaReserved);
    if (reserved == nullptr || reserved->last_transition_time != batch_now_) {
      continue;
    }
    admission_rate_.Record(wl->admission->cluster_queue, batch_now_);
  }
  admission_rate_.Forget(batch_now_);
}

absl::StatusOr<ExplainResult> Engine::Explain(const NamespacedName& key) {
  return Call<ExplainResult>([this, key]() -> absl::StatusOr<ExplainResult> {
    KQ_RETURN_IF_ERROR(CheckUnfinished(key));
    const absl::Time now = clock_.TimeNow();
    ExplainResult result;
    KQ_ASSIGN_OR_RETURN(result.explanation,
                        admission::Explain(state_, key, now));
    KQ_RETURN_IF_ERROR(AttachPodTemplates(result.explanation.workload));
    const std::string& cq = result.explanation.cluster_queue;
    result.admissions_per_minute = admission_rate_.PerMinute(cq, now);
    if (result.explanation.position_in_cluster_queue.has_value()) {
      result.estimated_start = admission_rate_.EstimatedStart(
          cq, *result.explanation.position_in_cluster_queue, now);
    }
    return result;
  });
}

absl::StatusOr<admission::WhatIf> Engine::Simulate(
    std::optional<Workload> workload, const NamespacedName& key) {
  return Call<admission::WhatIf>(
      [this, workload = std::move(workload),
       key]() mutable -> absl::StatusOr<admission::WhatIf> {
        Workload subject;
        if (workload.has_value()) {
          subject = *std::move(workload);
        } else {
          // CheckUnfinished is OK only for a workload in memory.
          KQ_RETURN_IF_ERROR(CheckUnfinished(key));
          subject = *state_.FindWorkload(key);
        }
        KQ_ASSIGN_OR_RETURN(admission::WhatIf what_if,
                            admission::SimulateAdmission(
                                state_, std::move(subject), clock_.TimeNow()));
        KQ_RETURN_IF_ERROR(AttachPodTemplates(what_if.workload));
        return what_if;
      });
}

void Engine::AbortAdmitWaits() {
  // Synchronous: the waiters are answered (their replies run before this
  // call's own) by the time it returns, so the server's shutdown that
  // follows does not cancel them first.
  Call<bool>([this]() -> absl::StatusOr<bool> {
    for (auto& [key, list] : waiters_) {
      for (Waiter& waiter : list) {
        replies_.push_back(
            [done = std::move(waiter.done)](const absl::Status&) {
              done(absl::UnavailableError("kqd is shutting down"));
            });
      }
    }
    waiters_.clear();
    waiter_deadlines_.clear();
    waiter_keys_.clear();
    return true;
  }).IgnoreError();
}

std::optional<absl::Time> Engine::NextWaiterDeadline() const {
  if (waiter_deadlines_.empty()) return std::nullopt;
  return waiter_deadlines_.begin()->first;
}

absl::StatusOr<std::optional<AdmitOutcome>> Engine::Decide(
    const NamespacedName& key, bool expired) {
  AdmitOutcome outcome;
  const Workload* wl = state_.FindWorkload(key);
  if (wl == nullptr) {
    KQ_ASSIGN_OR_RETURN(std::optional<Workload> stored, LookupWorkload(key));
    if (!stored.has_value()) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    outcome.kind = AdmitOutcome::Kind::kFinished;
    outcome.view.workload = *std::move(stored);
    if (const Condition* c = FindCondition(outcome.view.workload.conditions,
                                           kConditionFinished)) {
      outcome.reason = c->reason;
      outcome.message = c->message;
    }
    return outcome;
  }
  outcome.view = state_.ViewOf(*wl);
  if (!wl->active) {
    outcome.kind = AdmitOutcome::Kind::kDeactivated;
    if (const Condition* c = FindCondition(wl->conditions, kConditionEvicted)) {
      outcome.reason = c->reason;
      outcome.message = c->message;
    }
    return outcome;
  }
  if (HoldsQuota(*wl) && !IsEvicting(*wl) &&
      IsConditionTrue(wl->conditions, kConditionAdmitted)) {
    outcome.kind = AdmitOutcome::Kind::kAdmitted;
    if (const Condition* c =
            FindCondition(wl->conditions, kConditionAdmitted)) {
      outcome.reason = c->reason;
      outcome.message = c->message;
    }
    return outcome;
  }
  if (!expired) return std::nullopt;
  outcome.kind = AdmitOutcome::Kind::kPending;
  if (const Condition* c =
          FindCondition(wl->conditions, kConditionQuotaReserved)) {
    outcome.reason = c->reason;
    outcome.message = c->message;
  }
  return outcome;
}

void Engine::ResolveWaiters() {
  if (waiters_.empty()) {
    fresh_waiters_.clear();
    return;
  }
  std::set<NamespacedName> keys(fresh_waiters_.begin(), fresh_waiters_.end());
  fresh_waiters_.clear();
  for (const auto& [key, change] : state_.pending_changes().workloads) {
    if (waiters_.count(key)) keys.insert(key);
  }
  std::set<int64_t> expired;
  for (auto it = waiter_deadlines_.begin();
       it != waiter_deadlines_.end() && it->first <= batch_now_; ++it) {
    expired.insert(it->second);
    keys.insert(waiter_keys_.at(it->second));
  }
  for (const NamespacedName& key : keys) {
    auto list = waiters_.find(key);
    if (list == waiters_.end()) continue;
    std::vector<Waiter> still_waiting;
    for (Waiter& waiter : list->second) {
      absl::StatusOr<std::optional<AdmitOutcome>> outcome =
          Decide(key, expired.count(waiter.id) > 0);
      if (outcome.ok() && !outcome->has_value()) {
        still_waiting.push_back(std::move(waiter));
        continue;
      }
      if (outcome.ok() && (*outcome)->kind == AdmitOutcome::Kind::kAdmitted &&
          !waiter.wait.runner_id.empty()) {
        absl::StatusOr<admission::HeartbeatResult> attached =
            state_.Heartbeat(key, waiter.wait.runner_id, waiter.wait.lease,
                             /*stopped=*/false, batch_now_);
        if (attached.ok()) {
          (*outcome)->view = state_.ViewOf(attached->workload);
        } else {
          outcome = attached.status();
        }
      }
      waiter_deadlines_.erase({waiter.wait.deadline, waiter.id});
      waiter_keys_.erase(waiter.id);
      // The templates are read once the answer is decided and committed.
      replies_.push_back(
          [this, done = std::move(waiter.done),
           outcome = std::move(outcome)](const absl::Status& commit) mutable {
            if (!commit.ok()) return done(commit);
            if (!outcome.ok()) return done(outcome.status());
            AdmitOutcome answer = **std::move(outcome);
            absl::Status attached = AttachPodTemplates(answer.view.workload);
            if (!attached.ok()) return done(attached);
            done(std::move(answer));
          });
    }
    if (still_waiting.empty()) {
      waiters_.erase(list);
    } else {
      list->second = std::move(still_waiting);
    }
  }
}

absl::Status Engine::CheckUnfinished(const NamespacedName& key) {
  if (state_.FindWorkload(key) != nullptr) return absl::OkStatus();
  KQ_ASSIGN_OR_RETURN(std::optional<Workload> stored, LookupWorkload(key));
  if (stored.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat(Describe(key), " already finished"));
  }
  return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
}

absl::StatusOr<admission::HeartbeatResult> Engine::Heartbeat(
    const NamespacedName& key, const std::string& runner_id,
    absl::Duration lease, bool stopped) {
  return Wait<admission::HeartbeatResult>([&](HeartbeatDone done) {
    Heartbeat(key, runner_id, lease, stopped, std::move(done));
  });
}

void Engine::Heartbeat(const NamespacedName& key, const std::string& runner_id,
                       absl::Duration lease, bool stopped, HeartbeatDone done) {
  ChangeThenReadAsync<admission::HeartbeatResult>(
      [this, key, runner_id, lease,
       stopped]() -> absl::StatusOr<NamespacedName> {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        KQ_RETURN_IF_ERROR(
            state_.Heartbeat(key, runner_id, lease, stopped, batch_now_)
                .status());
        return key;
      },
      [](Workload wl) {
        // As committed: still evicted and holding quota means stop.
        const bool stop = IsEvicting(wl);
        return admission::HeartbeatResult{std::move(wl), stop};
      },
      std::move(done));
}

absl::StatusOr<Workload> Engine::Preempt(const NamespacedName& key,
                                         const std::string& message,
                                         const std::string& actor,
                                         bool deactivate) {
  return ChangeWorkload(
      key, [this, key, message, actor, deactivate]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_.Preempt(key, message, actor, deactivate, batch_now_)
            .status();
      });
}

absl::StatusOr<Workload> Engine::SetWorkloadActive(const NamespacedName& key,
                                                   bool active) {
  return ChangeWorkload(key, [this, key, active]() -> absl::Status {
    KQ_RETURN_IF_ERROR(CheckUnfinished(key));
    return state_.SetActive(key, active, batch_now_).status();
  });
}

absl::StatusOr<Workload> Engine::SetReclaimablePods(
    const NamespacedName& key, std::vector<ReclaimablePod> pods) {
  return ChangeWorkload(
      key, [this, key, pods = std::move(pods)]() -> absl::Status {
        KQ_RETURN_IF_ERROR(CheckUnfinished(key));
        return state_.SetReclaimablePods(key, pods, batch_now_).status();
      });
}

absl::StatusOr<ObjectView> Engine::SetStopPolicy(const ObjectKey& key,
                                                 StopPolicy policy) {
  if (key.kind != ObjectKind::kClusterQueue &&
      key.kind != ObjectKind::kLocalQueue) {
    return absl::InvalidArgumentError(
        "kind: only a ClusterQueue or a LocalQueue has a stopPolicy");
  }
  KQ_RETURN_IF_ERROR(
      Call<std::string>([this, key, policy]() -> absl::StatusOr<std::string> {
        const ConfigObject* found = state_.FindObject(key);
        if (found == nullptr) {
          return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
        }
        ConfigObject object = *found;
        if (auto* cq = std::get_if<ClusterQueue>(&object)) {
          cq->stop_policy = policy;
        } else if (auto* lq = std::get_if<LocalQueue>(&object)) {
          lq->stop_policy = policy;
        }
        return state_.PutObject(std::move(object), names_.NewUid(), batch_now_);
      }).status());
  return GetObject(key);
}

absl::StatusOr<ObjectView> Engine::GetObject(const ObjectKey& key) {
  return Call<ObjectView>([this, key]() -> absl::StatusOr<ObjectView> {
    const ConfigObject* object = state_.FindObject(key);
    if (object == nullptr) {
      return absl::NotFoundError(absl::StrCat(Describe(key), " not found"));
    }
    return state_.ViewOf(*object);
  });
}

absl::StatusOr<Listed<ObjectView>> Engine::ListObjects(
    ObjectKind kind, const std::string& namespace_name) {
  return Call<Listed<ObjectView>>(
      [this, kind, namespace_name]() -> absl::StatusOr<Listed<ObjectView>> {
        Listed<ObjectView> listed;
        for (const auto& [key, object] : state_.objects()) {
          if (key.kind != kind) continue;
          if (!namespace_name.empty() && key.namespace_name != namespace_name) {
            continue;
          }
          listed.items.push_back(state_.ViewOf(object));
        }
        listed.revision = revision_;
        return listed;
      });
}

}  // namespace kq::engine
