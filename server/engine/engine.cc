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
#include "server/engine/engine_call.h"

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
      event_log_(options.event_log_capacity) {
  observers_.push_back(&admission_rate_);
  observers_.push_back(&workload_log_);
}

void Engine::AddObserver(BatchObserver* observer) {
  observers_.push_back(observer);
}

Engine::~Engine() { Stop(); }

// ---------------------------------------------------------------------------
// Threading: commands in, one batch at a time, replies after the commit.

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
  started_.store(true, std::memory_order_release);
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
  for (AdmitWaiters::Waiter& waiter : waiters_.TakeAll()) {
    waiter.done(absl::UnavailableError("kqd is shutting down"));
  }
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
        const std::optional<absl::Time> waiter = waiters_.NextDeadline();
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
  batch_commands_ = commands.size();
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
    absl::Time pass_start = start;
    state_.RunPasses(
        batch_now_,
        {.out_of_time =
             [this, start, reservations] {
               const absl::Duration spent = clock_.TimeNow() - start;
               if (spent > options_.pass_budget) return true;
               if (spent <= options_.pass_budget_when_busy) {
                 return false;
               }
               if (state_.reservations() != reservations) return true;
               absl::MutexLock lock(&mu_);
               return !commands_.empty();
             },
         .after_pass =
             [this, &pass_start](int reserved) {
               const absl::Time end = clock_.TimeNow();
               batch_passes_.push_back({reserved, end - pass_start});
               pass_start = end;
             }});
  }
  // 4. Answer the admission waiters whose workload was decided (runners
  //    attach in this same batch).
  ResolveWaiters();
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
  stored_.store(unstored_.ok(), std::memory_order_relaxed);
  batch_passes_.clear();
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
  if (changes.empty()) {
    if (!batch_passes_.empty()) NotifyObservers({}, absl::ZeroDuration());
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
    if (change == admission::Change::kDeleted) {
      auto deleted = changes.deleted_workloads.find(key);
      if (deleted == changes.deleted_workloads.end()) continue;
      batch.deleted_workloads.push_back(key);
      // Its templates, if the batch created it, have no row to belong to.
      batch_templates_.erase(deleted->second.meta.uid);
      deleted->second.meta.revision = batch.revision;
      batch.events.push_back(
          {batch.revision, EventType::kDeleted, std::move(deleted->second)});
      continue;
    }
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
  // Kept until the batch's replies are sent (RunBatch): the events and
  // answers about a workload it created need no read of what it wrote.
  for (const auto& [uid, templates] : batch_templates_) {
    batch.added_templates.insert(batch.added_templates.end(), templates.begin(),
                                 templates.end());
  }
  const absl::Time commit_start = clock_.TimeNow();
  KQ_RETURN_IF_ERROR(store_.Commit(batch));
  const absl::Duration commit_duration = clock_.TimeNow() - commit_start;
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
  NotifyObservers(events, commit_duration);
  event_log_.Append(revision_, std::move(events));
  return absl::OkStatus();
}

void Engine::NotifyObservers(absl::Span<const store::Event> events,
                             absl::Duration commit_duration) {
  const CommittedBatch committed{.state = &state_,
                                 .revision = revision_,
                                 .time = batch_now_,
                                 .events = events,
                                 .passes = batch_passes_,
                                 .commands = batch_commands_,
                                 .duration = clock_.TimeNow() - batch_now_,
                                 .commit_duration = commit_duration};
  for (BatchObserver* observer : observers_) observer->OnCommitted(committed);
}

void Engine::ReadState(StateReader read) {
  auto shared = std::make_shared<StateReader>(std::move(read));
  const bool posted = Post(
      [this, shared] {
        // A reply: it runs after the batch's commit, on the state as
        // committed (or as reloaded when the commit failed).
        replies_.push_back([this, shared](const absl::Status& commit) {
          if (commit.ok() && unstored_.ok())
            (*shared)(&state_, revision_);
          else
            (*shared)(nullptr, revision_);
        });
      },
      [shared](const absl::Status&) { (*shared)(nullptr, 0); });
  if (!posted) (*shared)(nullptr, 0);
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

bool Engine::Post(std::function<void()> run,
                  std::function<void(const absl::Status&)> refuse) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || !running_) return false;
  commands_.push_back({std::move(run), std::move(refuse)});
  wake_.Signal();
  return true;
}

}  // namespace kq::engine
