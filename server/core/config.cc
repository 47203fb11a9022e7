#include "server/core/config.h"

#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "base/status_macros.h"
#include "server/core/apimachinery.h"

namespace kq {
namespace {

// The exact product of two quantities, rounded up to a milli-unit (Kueue
// multiplies decimals exactly and then reads milli-units for CPU and
// rounds other resources up to units, which rounding up to milli keeps).
Quantity Multiply(Quantity a, Quantity b) {
  const __int128 product = static_cast<__int128>(a.milli()) * b.milli();
  __int128 milli = product / 1000;
  if (product % 1000 > 0) ++milli;
  if (milli > std::numeric_limits<int64_t>::max()) return Quantity::Max();
  if (milli < std::numeric_limits<int64_t>::min()) {
    return Quantity::FromMilli(std::numeric_limits<int64_t>::min());
  }
  return Quantity::FromMilli(static_cast<int64_t>(milli));
}

Quantity Add(Quantity a, Quantity b) {
  return Quantity::FromMilli(SaturatingAdd(a.milli(), b.milli()));
}

}  // namespace

const char* FairSharingStrategyName(FairSharingStrategy strategy) {
  switch (strategy) {
    case FairSharingStrategy::kLessThanOrEqualToFinalShare:
      return "LessThanOrEqualToFinalShare";
    case FairSharingStrategy::kLessThanInitialShare:
      return "LessThanInitialShare";
  }
  return "Unknown";
}

absl::Status ValidateMultiKueueSettings(const MultiKueueSettings& settings,
                                        bool incremental_config_given) {
  constexpr char kNegative[] = ": must be greater than or equal to 0";
  if (settings.gc_interval < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("multiKueue.gcInterval: Invalid value: ",
                     absl::FormatDuration(settings.gc_interval), kNegative));
  }
  if (settings.worker_lost_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "multiKueue.workerLostTimeout: Invalid value: ",
        absl::FormatDuration(settings.worker_lost_timeout), kNegative));
  }
  if (std::vector<std::string> errors = LabelValueErrors(settings.origin);
      !errors.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("multiKueue.origin: Invalid value: \"", settings.origin,
                     "\": ", absl::StrJoin(errors, ",")));
  }
  if (incremental_config_given &&
      settings.dispatcher_name != kMultiKueueDispatcherIncremental) {
    return absl::InvalidArgumentError(
        "multiKueue.incrementalDispatcherConfig: Invalid value: "
        "incrementalDispatcherConfig is only valid when dispatcherName is set "
        "to the incremental dispatcher");
  }
  if (settings.incremental_step_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("multiKueue.incrementalDispatcherConfig.stepSize: Invalid "
                     "value: ",
                     settings.incremental_step_size,
                     ": must be greater than or equal to 1"));
  }
  if (settings.incremental_round_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "multiKueue.incrementalDispatcherConfig.roundTimeout: Invalid value: ",
        absl::FormatDuration(settings.incremental_round_timeout),
        ": must be greater than 0 (a kq extension)"));
  }
  return absl::OkStatus();
}

// Checks run in the order of Kueue's Validate (multiKueue, fair sharing,
// transformations, quota check strategy), so the error returned is the first
// Kueue lists.
absl::Status ValidateConfiguration(const Configuration& config) {
  KQ_RETURN_IF_ERROR(ValidateMultiKueueSettings(config.multi_kueue,
                                                /*incremental_config_given=*/
                                                false));
  if (config.fair_sharing.has_value()) {
    using enum FairSharingStrategy;
    const std::vector<FairSharingStrategy>& got =
        config.fair_sharing->preemption_strategies;
    if (got.empty()) {
      return absl::InvalidArgumentError(
          "fairSharing.preemptionStrategies: Required value: must be "
          "specified");
    }
    const std::vector<std::vector<FairSharingStrategy>> allowed = {
        {kLessThanOrEqualToFinalShare},
        {kLessThanInitialShare},
        {kLessThanOrEqualToFinalShare, kLessThanInitialShare}};
    bool ok = false;
    for (const auto& list : allowed) ok |= got == list;
    if (!ok) {
      std::vector<std::string> names;
      for (FairSharingStrategy s : got) {
        names.push_back(FairSharingStrategyName(s));
      }
      return absl::InvalidArgumentError(
          absl::StrCat("fairSharing.preemptionStrategies: Unsupported value: [",
                       absl::StrJoin(names, ", "),
                       "]: supported values: [LessThanOrEqualToFinalShare], "
                       "[LessThanInitialShare], [LessThanOrEqualToFinalShare, "
                       "LessThanInitialShare]"));
    }
  }
  const ResourceConfig& resources = config.resources;
  std::set<std::string> inputs;
  for (size_t i = 0; i < resources.transformations.size(); ++i) {
    const ResourceTransformation& t = resources.transformations[i];
    const std::string path = absl::StrCat("resources.transformations[", i, "]");
    if (t.input.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".input: Required value"));
    }
    if (!inputs.insert(t.input).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".input: Duplicate value: \"", t.input, "\""));
    }
  }
  if (resources.quota_check_strategy == QuotaCheckStrategy::kIgnoreUndeclared &&
      !resources.exclude_resource_prefixes.empty()) {
    return absl::InvalidArgumentError(
        "resources.quotaCheckStrategy: Invalid value: \"IgnoreUndeclared\": "
        "excludeResourcePrefixes is not allowed when quotaCheckStrategy is "
        "IgnoreUndeclared");
  }
  return absl::OkStatus();
}

ResourceList EffectiveRequests(const ResourceList& per_pod,
                               const ResourceConfig& resources) {
  ResourceList kept;
  for (const auto& [name, quantity] : per_pod) {
    bool excluded = false;
    for (const std::string& prefix : resources.exclude_resource_prefixes) {
      if (absl::StartsWith(name, prefix)) {
        excluded = true;
        break;
      }
    }
    if (!excluded) kept.emplace(name, quantity);
  }
  if (resources.transformations.empty()) return kept;

  ResourceList retained;
  ResourceList generated;
  for (const auto& [name, quantity] : kept) {
    const ResourceTransformation* mapping = nullptr;
    for (const ResourceTransformation& t : resources.transformations) {
      if (t.input == name) mapping = &t;
    }
    if (mapping == nullptr) {
      retained[name] = quantity;
      continue;
    }
    // The multiplier scales what the outputs are computed from, not the
    // input a Retain strategy keeps.
    Quantity base = quantity;
    if (!mapping->multiply_by.empty()) {
      auto it = kept.find(mapping->multiply_by);
      if (it != kept.end()) base = Multiply(quantity, it->second);
    }
    for (const auto& [output, factor] : mapping->outputs) {
      generated[output] = Add(generated[output], Multiply(base, factor));
    }
    if (mapping->strategy == TransformationStrategy::kRetain) {
      retained[name] = quantity;
    }
  }
  for (auto& [name, quantity] : generated) {
    if (quantity.IsNegative()) quantity = Quantity();
    retained[name] = Add(retained[name], quantity);
  }
  return retained;
}

}  // namespace kq
