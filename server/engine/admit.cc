// Waiting for admission (QueueService.Admit): the waiters' commands, and
// the decision for each waiter a batch looks at, answered after its commit.

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/core/validation.h"
#include "server/engine/engine.h"
#include "server/engine/engine_call.h"

namespace kq::engine {

int64_t Engine::Admit(AdmitWait wait, AdmitDone done) {
  const int64_t id = waiters_.NewId();
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
        waiters_.Add({.id = id,
                      .wait = std::move(wait),
                      .done = std::move(*shared_done)});
      },
      [shared_done](const absl::Status& status) { (*shared_done)(status); });
  if (!posted) (*shared_done)(absl::UnavailableError("kqd is shutting down"));
  return id;
}

void Engine::CancelAdmit(int64_t id) {
  // Waiter bookkeeping only: it runs even while the state is unstored.
  Post([this, id] { waiters_.Cancel(id); }, nullptr);
}

void Engine::AbortAdmitWaits() {
  // Synchronous: the waiters are answered (their replies run before this
  // call's own) by the time it returns, so the server's shutdown that
  // follows does not cancel them first.
  Call<bool>([this]() -> absl::StatusOr<bool> {
    for (AdmitWaiters::Waiter& waiter : waiters_.TakeAll()) {
      replies_.push_back([done = std::move(waiter.done)](const absl::Status&) {
        done(absl::UnavailableError("kqd is shutting down"));
      });
    }
    return true;
  }).IgnoreError();
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
  for (AdmitWaiters::Due& due :
       waiters_.TakeDue(state_.pending_changes().workloads, batch_now_)) {
    AdmitWaiters::Waiter& waiter = due.waiter;
    const NamespacedName& key = waiter.wait.key;
    absl::StatusOr<std::optional<AdmitOutcome>> outcome =
        Decide(key, due.expired);
    if (outcome.ok() && !outcome->has_value()) {
      waiters_.Restore(std::move(waiter));
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
}

}  // namespace kq::engine
