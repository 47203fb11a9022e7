// kq federation's calls on the engine: a MultiKueue manager's calls on this
// kqd as its worker, and the manager's writes to its own workloads. Many in
// one batch, each answered after the commit that made it durable.

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/core/validation.h"
#include "server/engine/engine.h"
#include "server/engine/engine_call.h"

namespace kq::engine {

absl::StatusOr<RemoteResults> Engine::RemoteCalls(
    std::vector<RemoteCall> calls) {
  return Wait<RemoteResults>(
      [&](RemoteDone done) { RemoteCalls(std::move(calls), std::move(done)); });
}

absl::StatusOr<RemoteResult> Engine::DoRemoteCall(RemoteCall& call) {
  using Kind = RemoteCall::Kind;
  const admission::RemoteRef& ref = call.ref;
  KQ_RETURN_IF_ERROR(admission::ValidateRemoteRef(ref));
  // The state holds unfinished workloads only; a finished copy is read from
  // the store so that a repeat after it finished answers alike.
  std::optional<Workload> stored;
  if (state_.FindWorkload(ref.key) == nullptr &&
      state_.FindRecentlyFinished(ref.key) == nullptr &&
      !finished_in_batch_.contains(ref.key)) {
    KQ_ASSIGN_OR_RETURN(stored, store_.GetWorkload(ref.key));
  }
  const Workload* on_disk = stored.has_value() ? &*stored : nullptr;
  RemoteResult result;
  switch (call.kind) {
    case Kind::kUpsert: {
      Workload& copy = call.copy;
      copy.meta.namespace_name = ref.key.first;
      copy.meta.name = ref.key.second;
      copy.meta.generate_name = BoxedString();
      KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(copy));
      KQ_RETURN_IF_ERROR(state_.CheckPriorityClass(copy, {}));
      const bool exists = state_.FindWorkload(ref.key) != nullptr ||
                          state_.FindRecentlyFinished(ref.key) != nullptr ||
                          on_disk != nullptr;
      std::vector<store::PodTemplate> templates;
      Uid uid;
      if (!exists) {
        uid = names_.NewUid();
        copy.meta.uid = uid;
        templates = store::DetachPodTemplates(copy);
      }
      KQ_RETURN_IF_ERROR(
          state_
              .UpsertRemote(std::move(copy), ref, uid, on_disk,
                            batch_now_ + absl::Nanoseconds(submitted_++))
              .status());
      if (!templates.empty()) batch_templates_[uid] = std::move(templates);
      break;
    }
    case Kind::kDelete: {
      KQ_ASSIGN_OR_RETURN(result.existed, state_.DeleteRemote(ref, on_disk));
      break;
    }
    case Kind::kBind:
      KQ_RETURN_IF_ERROR(
          state_.BindRemote(ref, call.lease, call.fence, batch_now_).status());
      break;
    case Kind::kRenew:
      KQ_RETURN_IF_ERROR(
          state_.RenewRemote(ref, call.lease, call.stopped, batch_now_)
              .status());
      break;
    case Kind::kDeactivate:
      KQ_RETURN_IF_ERROR(
          state_.DeactivateRemote(ref, call.message, batch_now_).status());
      break;
  }
  return result;
}

void Engine::RemoteCalls(std::vector<RemoteCall> calls, RemoteDone done) {
  auto shared_done = std::make_shared<RemoteDone>(std::move(done));
  const bool posted = Post(
      [this, calls = std::move(calls), shared_done]() mutable {
        auto batch = std::make_shared<RemoteResults>();
        std::vector<RemoteResult>* results = &batch->results;
        results->reserve(calls.size());
        for (RemoteCall& call : calls) {
          absl::StatusOr<RemoteResult> one = DoRemoteCall(call);
          if (!one.ok()) {
            RemoteResult failed;
            failed.status = About(Describe(call.ref.key), one.status());
            results->push_back(std::move(failed));
            continue;
          }
          results->push_back(*std::move(one));
        }
        // Read after the commit: each copy with the batch's revision and
        // what its scheduling passes made of it.
        replies_.push_back([this, calls = std::move(calls), batch,
                            shared_done](const absl::Status& commit) {
          if (!commit.ok()) return (*shared_done)(commit);
          std::vector<RemoteResult>* results = &batch->results;
          batch->revision = revision_;
          for (size_t i = 0; i < results->size(); ++i) {
            RemoteResult& result = (*results)[i];
            if (!result.status.ok() ||
                calls[i].kind == RemoteCall::Kind::kDelete) {
              continue;
            }
            if (calls[i].omit_workload) {
              if (const Workload* wl = FindInMemory(calls[i].ref.key)) {
                result.stop = IsEvicting(*wl);
                result.revision = wl->meta.revision;
                continue;
              }
            }
            absl::StatusOr<std::optional<Workload>> wl =
                LookupWorkload(calls[i].ref.key);
            if (!wl.ok()) {
              result.status = wl.status();
              continue;
            }
            if (!wl->has_value()) continue;
            result.stop = IsEvicting(**wl);
            result.revision = (*wl)->meta.revision;
            if (!calls[i].omit_workload) result.workload = **std::move(wl);
          }
          (*shared_done)(std::move(*batch));
        });
      },
      [shared_done](const absl::Status& status) { (*shared_done)(status); });
  if (!posted) (*shared_done)(absl::UnavailableError("kqd is shutting down"));
}

absl::StatusOr<std::vector<absl::StatusOr<Workload>>> Engine::UpdateMultiKueue(
    std::vector<admission::MultiKueueChange> changes) {
  using Results = std::vector<absl::StatusOr<Workload>>;
  return Call<Results>(
      [this, changes = std::move(changes)]() -> absl::StatusOr<Results> {
        Results results;
        results.reserve(changes.size());
        for (const admission::MultiKueueChange& change : changes) {
          results.push_back(state_.ApplyMultiKueueChange(change, batch_now_));
        }
        return results;
      });
}

absl::StatusOr<Workload> Engine::SetNominatedClusters(
    const NamespacedName& key, std::vector<std::string> names) {
  return ChangeWorkload(key, [this, key, names = std::move(names)] {
    KQ_RETURN_IF_ERROR(CheckUnfinished(key));
    return state_.SetNominatedClusters(key, names).status();
  });
}

absl::Status Engine::SetMultiKueueClusterActive(
    std::map<std::string, Condition> active) {
  return Call<bool>(
             [this, active = std::move(active)]() -> absl::StatusOr<bool> {
               for (const auto& [name, condition] : active) {
                 state_.SetMultiKueueClusterActive(name, condition);
               }
               if (state_.config_changed()) state_.Rebuild(batch_now_);
               return true;
             })
      .status();
}

}  // namespace kq::engine
