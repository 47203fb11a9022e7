// The Kueue Configuration document's admission settings.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

#include "base/status_macros.h"
#include "server/codec/codec.h"
#include "server/codec/internal.h"
#include "server/core/config.h"

namespace kq::codec {
namespace {

absl::Duration DurationFromProto(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// Kueue's defaulting (apis/config/v1beta2/defaults.go): an absent field
// keeps MultiKueueSettings' default, a present one (even zero) is kept;
// an empty origin or dispatcher name reads as the default, and stepSize is
// defaulted only for the Incremental dispatcher. Returns whether
// incrementalDispatcherConfig was given.
absl::StatusOr<bool> MultiKueueFromProto(const v1::MultiKueueSettings& proto,
                                         MultiKueueSettings* out) {
  if (proto.has_gc_interval())
    out->gc_interval = DurationFromProto(proto.gc_interval());
  if (proto.has_origin() && !proto.origin().empty()) {
    out->origin = proto.origin();
  }
  if (proto.has_worker_lost_timeout()) {
    out->worker_lost_timeout = DurationFromProto(proto.worker_lost_timeout());
  }
  if (proto.has_dispatcher_name() && !proto.dispatcher_name().empty()) {
    out->dispatcher_name = proto.dispatcher_name();
  }
  if (proto.has_fencing()) {
    if (proto.fencing() == "Lease") {
      out->lease_fencing = true;
    } else if (proto.fencing().empty() || proto.fencing() == "None") {
      out->lease_fencing = false;
    } else {
      return UnsupportedValue("multiKueue.fencing", proto.fencing(),
                              "None or Lease");
    }
  }
  if (!proto.has_incremental_dispatcher_config()) return false;
  const v1::IncrementalDispatcherConfig& incremental =
      proto.incremental_dispatcher_config();
  if (incremental.has_step_size() &&
      out->dispatcher_name == kMultiKueueDispatcherIncremental) {
    out->incremental_step_size = incremental.step_size();
  }
  if (incremental.has_round_timeout()) {
    out->incremental_round_timeout =
        DurationFromProto(incremental.round_timeout());
  }
  return true;
}

}  // namespace

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
  bool incremental_config_given = false;
  if (proto.has_multi_kueue()) {
    KQ_ASSIGN_OR_RETURN(
        incremental_config_given,
        MultiKueueFromProto(proto.multi_kueue(), &config.multi_kueue));
  }
  // The multiKueue section first, as Kueue validates it first; its
  // incrementalDispatcherConfig rule needs to know the section was there.
  KQ_RETURN_IF_ERROR(
      ValidateMultiKueueSettings(config.multi_kueue, incremental_config_given));
  KQ_RETURN_IF_ERROR(ValidateConfiguration(config));
  return config;
}

}  // namespace kq::codec
