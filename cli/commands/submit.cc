// `kq submit`.

#include <cctype>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "cli/printers/format.h"
#include "kq/v1/workload.pb.h"

namespace kq::cli {
namespace {

// Consumes leading decimal digits; returns how many.
int ConsumeDigits(absl::string_view& text) {
  int n = 0;
  while (!text.empty() && absl::ascii_isdigit(text.front())) {
    text.remove_prefix(1);
    ++n;
  }
  return n;
}

// Kubernetes quantity syntax (k8s.io/apimachinery resource.Quantity):
//   [+-] (digits | digits. | digits.digits | .digits) suffix
// where suffix is one of "", m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi, Ei or
// an exponent e|E [+-] digits. Only the syntax is checked here; kqd checks
// ranges and meaning.
bool IsQuantity(absl::string_view text) {
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    text.remove_prefix(1);
  }
  int digits = ConsumeDigits(text);
  if (absl::ConsumePrefix(&text, ".")) {
    digits += ConsumeDigits(text);
  }
  if (digits == 0) {
    return false;
  }
  static const std::set<absl::string_view> kSuffixes = {
      "",  "m",  "k",  "M",  "G",  "T",  "P",
      "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  if (kSuffixes.contains(text)) {
    return true;
  }
  if (absl::ConsumePrefix(&text, "e") || absl::ConsumePrefix(&text, "E")) {
    if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
      text.remove_prefix(1);
    }
    return ConsumeDigits(text) > 0 && text.empty();
  }
  return false;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseRequests(
    absl::string_view flag) {
  std::map<std::string, std::string> requests;
  if (absl::StripAsciiWhitespace(flag).empty()) {
    return absl::InvalidArgumentError(
        "--request is empty: want NAME=QUANTITY[,NAME=QUANTITY...]");
  }
  for (absl::string_view item : absl::StrSplit(flag, ',')) {
    item = absl::StripAsciiWhitespace(item);
    std::pair<absl::string_view, absl::string_view> parts =
        absl::StrSplit(item, absl::MaxSplits('=', 1));
    const bool has_equals = absl::StrContains(item, '=');
    absl::string_view name = absl::StripAsciiWhitespace(parts.first);
    absl::string_view quantity = absl::StripAsciiWhitespace(parts.second);
    if (!has_equals || name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --request item \"", item,
                       "\": want NAME=QUANTITY, e.g. cpu=8"));
    }
    if (!IsQuantity(quantity)) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --request item \"", item, "\": \"", quantity,
                       "\" is not a quantity (e.g. 8, 500m, 32Gi)"));
    }
    if (!requests.emplace(std::string(name), std::string(quantity)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --request item \"", item, "\": \"", name,
                       "\" is requested twice"));
    }
  }
  return requests;
}

v1::Workload BuildWorkload(const WorkloadFlags& flags) {
  v1::Workload workload;
  v1::ObjectMeta& metadata = *workload.mutable_metadata();
  metadata.set_namespace_(flags.namespace_name);
  if (!flags.name.empty()) {
    metadata.set_name(flags.name);
  } else {
    metadata.set_generate_name(flags.generate_name);
  }
  v1::WorkloadSpec& spec = *workload.mutable_spec();
  spec.set_queue_name(flags.queue);
  if (!flags.priority_class.empty()) {
    spec.set_priority_class_name(flags.priority_class);
    spec.set_priority_class_source("kueue.x-k8s.io/workloadpriorityclass");
  }
  v1::PodSet& pod_set = *spec.add_pod_sets();
  pod_set.set_name(flags.pod_set);
  pod_set.set_count(flags.count);
  pod_set.mutable_requests()->insert(flags.requests.begin(),
                                     flags.requests.end());
  return workload;
}

int RunSubmit(const SubmitOptions& options, CommandContext& ctx) {
  absl::StatusOr<std::map<std::string, std::string>> requests =
      ParseRequests(options.requests);
  if (!requests.ok()) {
    return ReportUsage(requests.status(), ctx.err);
  }
  const v1::Workload workload =
      BuildWorkload({.queue = options.queue,
                     .namespace_name = options.namespace_name,
                     .name = options.name,
                     .generate_name = options.name.empty() ? "wl-" : "",
                     .count = options.count,
                     .requests = *std::move(requests),
                     .priority_class = options.priority_class,
                     .pod_set = options.pod_set});

  absl::StatusOr<v1::SubmitWorkloadResponse> response =
      ctx.client.SubmitWorkload(workload);
  if (!response.ok()) {
    return ReportError(response.status(), ctx.err);
  }
  const v1::Workload& stored = response->workload();
  ctx.out << QualifiedName(Kind::kWorkload, stored.metadata().name())
          << " created\n";
  if (WorkloadState(stored) == "Admitted") {
    // Resource -> flavor over all pod sets; one pod set here, but a
    // server may return more.
    std::map<std::string, std::string> flavors;
    for (const v1::PodSetAssignment& assignment :
         stored.status().admission().pod_set_assignments()) {
      flavors.insert(assignment.flavors().begin(), assignment.flavors().end());
    }
    ctx.out << "admitted by ClusterQueue "
            << stored.status().admission().cluster_queue() << " on flavors "
            << absl::StrJoin(flavors, ",", absl::PairFormatter("=")) << "\n";
  }
  return kExitOk;
}

}  // namespace kq::cli
