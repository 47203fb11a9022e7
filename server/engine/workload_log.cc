#include "server/engine/workload_log.h"

#include <string>
#include <variant>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "spdlog/spdlog.h"

#include "server/core/conditions.h"
#include "server/core/objects.h"
#include "server/logging/logging.h"
#include "server/store/store.h"

namespace kq::engine {
namespace {

// One line to write about a workload.
struct Line {
  spdlog::level::level_enum level;
  const char* message;
  // The condition that turned True, for its reason and message; null when
  // they say nothing more (a submission, an admission).
  const Condition* condition;
};

void LogWorkload(const store::Event& event, const Workload& wl, absl::Time at) {
  // In the order they happen within one batch: a workload may be evicted
  // and admitted again (elsewhere) by the same batch.
  struct Transition {
    const char* type;
    spdlog::level::level_enum level;
    const char* message;
    // Whether the condition's reason and message say more than the line
    // ("The workload is admitted" does not).
    bool why;
  };
  static constexpr Transition kTransitions[] = {
      {kConditionEvicted, spdlog::level::info, "workload evicted", true},
      {kConditionPreempted, spdlog::level::info, "workload preempted", true},
      {kConditionQuotaReserved, spdlog::level::debug, "workload reserved quota",
       false},
      {kConditionAdmitted, spdlog::level::debug, "workload admitted", false},
      {kConditionFinished, spdlog::level::debug, "workload finished", true},
  };
  absl::InlinedVector<Line, 4> lines;
  if (event.type == store::Event::Type::kAdded &&
      logging::ShouldLog(spdlog::level::debug)) {
    lines.push_back({spdlog::level::debug, "workload submitted", nullptr});
  }
  for (const Transition& t : kTransitions) {
    if (!logging::ShouldLog(t.level)) continue;
    if (const Condition* c =
            FindConditionTurnedTrue(wl.conditions, t.type, at)) {
      lines.push_back({t.level, t.message, t.why ? c : nullptr});
    }
  }
  // Most events of a busy kqd log nothing: no strings built for them.
  if (lines.empty()) return;
  const std::string workload =
      absl::StrCat(wl.meta.namespace_name.view(), "/", wl.meta.name);
  const std::string local_queue =
      wl.queue_name.empty() ? std::string()
                            : absl::StrCat(wl.meta.namespace_name.view(), "/",
                                           wl.queue_name.view());
  const absl::string_view cluster_queue =
      wl.admission ? absl::string_view(wl.admission->cluster_queue)
                   : absl::string_view();
  const std::string revision = absl::StrCat(event.revision);
  for (const Line& line : lines) {
    absl::string_view reason;
    absl::string_view message;
    if (line.condition != nullptr) {
      reason = line.condition->reason;
      message = line.condition->message;
    }
    logging::With({{"workload", workload},
                   {"local_queue", local_queue},
                   {"cluster_queue", cluster_queue},
                   {"reason", reason},
                   {"message", message},
                   {"revision", revision}})
        .log(line.level, "{}", line.message);
  }
}

}  // namespace

void LogWorkloadTransitions(const CommittedBatch& batch) {
  // Nothing below info is ever written here.
  if (!logging::ShouldLog(spdlog::level::info)) return;
  for (const store::Event& event : batch.events) {
    if (const Workload* wl = std::get_if<Workload>(&event.object)) {
      LogWorkload(event, *wl, batch.time);
    }
  }
}

}  // namespace kq::engine
