#include "server/simulator/simulator.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"

#include "server/core/validation.h"

namespace kq::simulator {
namespace {}  // namespace

absl::StatusOr<Result> Simulate(Scenario scenario, const Options& options) {
  admission::AdmissionState state;
  state.SetConfiguration(scenario.configuration);
  absl::Time now = absl::UnixEpoch();
  std::set<ObjectKey> seen;
  for (ConfigObject& object : scenario.objects) {
    ObjectKey key = KeyOf(object);
    absl::Status valid = ValidateConfigObject(object);
    if (!valid.ok()) return About(Describe(key), valid);
    if (!seen.insert(key).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(key), ": defined twice in the scenario"));
    }
    now = std::max(now, MetaOf(object).creation_timestamp);
    state.LoadObject(std::move(object));
  }
  std::set<NamespacedName> names;
  for (Workload& wl : scenario.workloads) {
    const std::string who = Describe(KeyOf(wl));
    absl::Status valid = ValidateWorkload(wl);
    if (!valid.ok()) return About(who, valid);
    if (!names.insert({wl.meta.namespace_name, wl.meta.name}).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(who, ": defined twice in the scenario"));
    }
    absl::Status priority = state.CheckPriorityClass(wl, {});
    if (!priority.ok()) return priority;
    now = std::max(now, wl.meta.creation_timestamp);
    state.LoadWorkload(std::move(wl));
  }
  if (options.now.has_value()) now = *options.now;

  state.ResolvePriorities();
  state.Rebuild(now);
  Result result;
  result.passes = state.RunPasses(
      now, {.max_passes = options.passes < 0 ? INT_MAX : options.passes});
  for (const Workload& wl : state.workloads()) result.workloads.push_back(wl);
  for (const auto& [key, object] : state.objects()) {
    result.objects.push_back(state.ViewOf(object));
  }
  return result;
}

}  // namespace kq::simulator
