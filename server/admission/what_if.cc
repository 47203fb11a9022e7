#include "server/admission/what_if.h"

#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

#include "base/status_macros.h"
#include "server/core/validation.h"
#include "server/preemption/classical.h"

namespace kq::admission {
namespace {

// Rounds of RunPasses at most: each round releases the quota of the
// evictions the previous one issued. Kueue's preemption never cycles; the
// bound only keeps a bug from hanging the server.
constexpr int kMaxRounds = 64;

constexpr char kConditionPreempted[] = "Preempted";

// Kueue's HumanReadablePreemptionReasons, read backwards: the Preempted
// condition keeps the reason only while it is True, the message for good.
// "while borrowing" comes first: the plain reclamation text is its prefix.
constexpr std::pair<const char*, const char*> kHumanReasons[] = {
    {"reclamation within the cohort while borrowing",
     preemption::kReasonInCohortReclaimWhileBorrowing},
    {"prioritization in the ClusterQueue", preemption::kReasonInClusterQueue},
    {"reclamation within the cohort", preemption::kReasonInCohortReclamation},
    {"Fair Sharing within the cohort", preemption::kReasonInCohortFairSharing},
};

// A copy of `state` as a restarted kqd would load it, with every runner
// detached so that evictions complete at once.
void LoadCopy(const AdmissionState& state, AdmissionState& copy,
              absl::Time now) {
  copy.SetConfiguration(state.configuration());
  for (const auto& [key, object] : state.objects()) copy.LoadObject(object);
  for (const Workload& wl : state.workloads()) {
    Workload loaded = wl;
    loaded.runner.reset();
    copy.LoadWorkload(std::move(loaded));
  }
  copy.Rebuild(now);
}

// The reason of a Preempted condition naming `uid` as the preemptor, if it
// does.
std::optional<std::string> PreemptedBy(const Condition& preempted,
                                       const std::string& uid) {
  absl::string_view message = preempted.message;
  // A victim admitted again keeps "Previously: <message>" (Kueue's
  // resetActiveCondition).
  absl::ConsumePrefix(&message, "Previously: ");
  const std::string marker =
      absl::StrCat("(UID: ", uid.empty() ? "UNKNOWN" : uid, ",");
  if (!absl::StrContains(message, marker)) return std::nullopt;
  if (preempted.status == "True") return preempted.reason;
  for (const auto& [human, reason] : kHumanReasons) {
    if (absl::StrContains(message, absl::StrCat("due to ", human, ";"))) {
      return std::string(reason);
    }
  }
  return std::string("UNKNOWN");
}

std::vector<Victim> VictimsOf(const AdmissionState& live,
                              const AdmissionState& copy,
                              const std::string& uid) {
  std::vector<Victim> victims;
  for (const Workload& before : live.workloads()) {
    if (!HoldsQuota(before)) continue;
    const Workload* after = copy.FindWorkload(KeyOf(before));
    if (after == nullptr) continue;
    const Condition* is = FindCondition(after->conditions, kConditionPreempted);
    if (is == nullptr) continue;
    const Condition* was =
        FindCondition(before.conditions, kConditionPreempted);
    // Preempted earlier, by whomever: not this simulation's doing.
    if (was != nullptr && *was == *is) continue;
    std::optional<std::string> reason = PreemptedBy(*is, uid);
    if (!reason.has_value()) continue;
    victims.push_back(
        {KeyOf(before), before.admission->cluster_queue, *reason});
  }
  return victims;
}

void SetReason(const Workload& wl, WhatIf& out) {
  if (const Condition* c = DecidingCondition(wl)) {
    out.reason = c->reason;
    out.message = c->message;
  }
}

// Kueue's generateName, made deterministic: the prefix plus "what-if",
// numbered when taken.
void NameIfGenerated(const AdmissionState& state, Workload& wl) {
  if (!wl.meta.name.empty() || wl.meta.generate_name.empty()) return;
  const std::string base =
      absl::StrCat(wl.meta.generate_name.str(), kWhatIfUid);
  wl.meta.name = base;
  for (int i = 1; state.FindWorkload(KeyOf(wl)) != nullptr; ++i) {
    wl.meta.name = absl::StrCat(base, "-", i);
  }
}

// What the engine checks before it accepts a submitted workload.
absl::Status ValidateNew(const AdmissionState& state, const Workload& wl) {
  KQ_RETURN_IF_ERROR(ValidateSubmittedWorkload(wl));
  return state.CheckPriorityClass(wl, {});
}

}  // namespace

absl::StatusOr<WhatIf> SimulateAdmission(const AdmissionState& state,
                                         Workload workload, absl::Time now) {
  NameIfGenerated(state, workload);
  const NamespacedName key = KeyOf(workload);
  const Workload* stored =
      workload.meta.name.empty() ? nullptr : state.FindWorkload(key);
  WhatIf out;
  if (stored != nullptr && HoldsQuota(*stored)) {
    out.admissible = true;
    out.workload = *stored;
    SetReason(*stored, out);
    return out;
  }
  if (stored == nullptr) KQ_RETURN_IF_ERROR(ValidateNew(state, workload));

  AdmissionState copy;
  LoadCopy(state, copy, now);
  std::string uid;
  if (stored != nullptr) {
    uid = stored->meta.uid.str();
  } else {
    uid = kWhatIfUid;
    copy.AddWorkload(std::move(workload), uid, now);
  }
  copy.RunPasses(now);
  for (int round = 1; round < kMaxRounds && copy.needs_scheduling(); ++round) {
    copy.RunPasses(now);
  }

  const Workload* result = copy.FindWorkload(key);
  if (result == nullptr) {
    return absl::InternalError(
        absl::StrCat(Describe(key), " vanished from the what-if state"));
  }
  out.admissible = HoldsQuota(*result);
  out.workload = *result;
  out.victims = VictimsOf(state, copy, uid);
  SetReason(*result, out);
  return out;
}

}  // namespace kq::admission
