// The Kueue Configuration document's admission settings.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "base/status_macros.h"
#include "server/codec/codec.h"
#include "server/codec/internal.h"
#include "server/core/config.h"

namespace kq::codec {

absl::StatusOr<Configuration> FromProto(const v1::Configuration& proto) {
  Configuration config;
  if (proto.has_fair_sharing()) {
    FairSharingConfig& fair_sharing = config.fair_sharing.emplace();
    const auto& strategies = proto.fair_sharing().preemption_strategies();
    if (!strategies.empty()) fair_sharing.preemption_strategies.clear();
    for (int i = 0; i < strategies.size(); ++i) {
      const std::string path =
          absl::StrCat("fairSharing.preemptionStrategies[", i, "]");
      if (strategies[i] == "LessThanOrEqualToFinalShare") {
        fair_sharing.preemption_strategies.push_back(
            FairSharingStrategy::kLessThanOrEqualToFinalShare);
      } else if (strategies[i] == "LessThanInitialShare") {
        fair_sharing.preemption_strategies.push_back(
            FairSharingStrategy::kLessThanInitialShare);
      } else {
        return UnsupportedValue(
            path, strategies[i],
            "LessThanOrEqualToFinalShare or LessThanInitialShare");
      }
    }
  }
  const v1::ResourcesConfig& resources = proto.resources();
  const std::string& check = resources.quota_check_strategy();
  if (check.empty() || check == "BlockUndeclared") {
    config.resources.quota_check_strategy =
        QuotaCheckStrategy::kBlockUndeclared;
  } else if (check == "IgnoreUndeclared") {
    config.resources.quota_check_strategy =
        QuotaCheckStrategy::kIgnoreUndeclared;
  } else {
    return UnsupportedValue("resources.quotaCheckStrategy", check,
                            "BlockUndeclared or IgnoreUndeclared");
  }
  for (const std::string& prefix : resources.exclude_resource_prefixes()) {
    config.resources.exclude_resource_prefixes.push_back(prefix);
  }
  for (int i = 0; i < resources.transformations_size(); ++i) {
    const v1::ResourceTransformation& in = resources.transformations(i);
    const std::string path = absl::StrCat("resources.transformations[", i, "]");
    ResourceTransformation& out =
        config.resources.transformations.emplace_back();
    out.input = in.input();
    if (in.strategy().empty() || in.strategy() == "Retain") {
      out.strategy = TransformationStrategy::kRetain;
    } else if (in.strategy() == "Replace") {
      out.strategy = TransformationStrategy::kReplace;
    } else {
      return UnsupportedValue(absl::StrCat(path, ".strategy"), in.strategy(),
                              "Retain or Replace");
    }
    out.multiply_by = in.multiply_by();
    KQ_ASSIGN_OR_RETURN(
        out.outputs,
        ResourceListFromProto(absl::StrCat(path, ".outputs"), in.outputs()));
  }
  KQ_RETURN_IF_ERROR(ValidateConfiguration(config));
  return config;
}

}  // namespace kq::codec
