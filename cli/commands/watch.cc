// `kq watch`.

#include <cstdlib>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/kinds.h"
#include "cli/printers/tab_writer.h"
#include "cli/printers/table_printer.h"
#include "cli/printers/watch_printer.h"
#include "cli/run/interrupts.h"
#include "kq/v1/queue_service.pb.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"

namespace kq::cli {
namespace {

enum class Mode { kWorkloads, kEvents };

absl::StatusOr<Mode> ParseMode(const std::string& what) {
  const std::string lower = absl::AsciiStrToLower(what);
  if (lower == "events" || lower == "event" || lower == "ev") {
    return Mode::kEvents;
  }
  absl::StatusOr<KindInfo> kind = ResolveKind(what);
  if (kind.ok() && kind->kind == Kind::kWorkload) {
    return Mode::kWorkloads;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kq watch shows workloads or events, not \"", what, "\""));
}

// Writes events as they come. Writes hold `mu_`, so an interrupt can wait
// for the current one to end before leaving the process.
class EventPrinter {
 public:
  EventPrinter(const WatchOptions& options, Mode mode, std::ostream& out,
               absl::Time fixed_now)
      : options_(options),
        mode_(mode),
        out_(out),
        fixed_now_(fixed_now),
        table_(kTableMinWidth, kTablePadding),
        table_options_{.wide = options.output == "wide",
                       .all_namespaces = options.all_namespaces} {}

  // Prints events that arrived together; the table header goes with the
  // first batch, aligned to it.
  void Print(const std::vector<v1::WatchEvent>& events)
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    std::vector<std::vector<std::string>> rows;
    if (!header_printed_ && options_.output != "json" &&
        options_.output != "yaml") {
      header_printed_ = true;
      rows.push_back(Header());
    }
    for (const v1::WatchEvent& event : events) {
      if (options_.output == "json") {
        out_ << WatchEventJson(event).dump(
                    -1, ' ', false, nlohmann::json::error_handler_t::replace)
             << "\n";
      } else if (options_.output == "yaml") {
        out_ << "---\n" << manifest::ToYaml(WatchEventJson(event));
      } else {
        rows.push_back(Row(event));
      }
    }
    out_ << table_.Lines(rows);
    out_.flush();
  }

  // Flushes and leaves the process (Ctrl-C), never in the middle of an
  // event.
  [[noreturn]] void ExitNow(int code) ABSL_LOCKS_EXCLUDED(mu_) {
    mu_.Lock();
    out_.flush();
    std::_Exit(code);
  }

 private:
  std::vector<std::string> Header() const {
    if (mode_ == Mode::kEvents) {
      return {"REVISION", "TYPE", "KIND", "NAMESPACE/NAME", "SUMMARY"};
    }
    std::vector<std::string> header = WorkloadTableHeader(table_options_);
    header.insert(header.begin(), "EVENT");
    header.push_back("REVISION");
    return header;
  }

  std::vector<std::string> Row(const v1::WatchEvent& event) const {
    if (mode_ == Mode::kEvents) {
      return {absl::StrCat(event.revision()), WatchEventType(event),
              WatchEventKind(event), WatchEventName(event),
              WatchEventSummary(event)};
    }
    std::vector<std::string> row =
        WorkloadTableRow(event.workload(), table_options_, Now());
    row.insert(row.begin(), WatchEventType(event));
    row.push_back(absl::StrCat(event.revision()));
    return row;
  }

  absl::Time Now() const {
    return options_.clock ? options_.clock() : fixed_now_;
  }

  const WatchOptions& options_;
  const Mode mode_;
  std::ostream& out_;
  const absl::Time fixed_now_;
  absl::Mutex mu_;
  StreamingTabWriter table_ ABSL_GUARDED_BY(mu_);
  bool header_printed_ ABSL_GUARDED_BY(mu_) = false;
  const TableOptions table_options_;
};

}  // namespace

int RunWatch(const WatchOptions& options, CommandContext& ctx) {
  absl::StatusOr<Mode> mode = ParseMode(options.what);
  if (!mode.ok()) {
    return ReportUsage(mode.status(), ctx.err);
  }
  const std::string& output = options.output;
  if (!output.empty() && output != "wide" && output != "json" &&
      output != "yaml") {
    return ReportUsage(
        absl::InvalidArgumentError(absl::StrCat(
            "--output must be one of wide, json, yaml; got \"", output, "\"")),
        ctx.err);
  }
  if (!options.queue.empty() && options.all_namespaces) {
    return ReportUsage(absl::InvalidArgumentError(
                           "--queue names a LocalQueue of one namespace: use "
                           "-n, not -A"),
                       ctx.err);
  }
  if (options.from_revision.has_value() && *options.from_revision < 0) {
    return ReportUsage(absl::InvalidArgumentError(absl::StrCat(
                           "invalid --from-revision ", *options.from_revision,
                           ": must not be negative")),
                       ctx.err);
  }

  const std::string ns = options.all_namespaces ? "" : options.namespace_name;
  v1::WatchRequest request;
  if (*mode == Mode::kWorkloads) {
    request.add_kinds("Workload");
    request.set_namespace_(ns);
  }
  // events: -n filters here, so cluster-scoped objects still show.
  request.set_queue_name(options.queue);
  request.set_cluster_queue(options.cluster_queue);

  EventPrinter printer(options, *mode, ctx.out, ctx.now);
  std::optional<int64_t> from = options.from_revision;
  if (*mode == Mode::kWorkloads && !from.has_value() && !options.watch_only) {
    // kubectl get -w: what is there now, then what changes after it.
    v1::ListWorkloadsRequest list;
    list.set_namespace_(ns);
    list.set_queue_name(options.queue);
    list.set_cluster_queue(options.cluster_queue);
    list.set_include_finished(true);
    absl::StatusOr<v1::ListWorkloadsResponse> listed =
        ctx.client.ListWorkloads(list);
    if (!listed.ok()) {
      return ReportError(listed.status(), ctx.err);
    }
    std::vector<v1::WatchEvent> current;
    for (const v1::Workload& workload : listed->workloads()) {
      v1::WatchEvent& event = current.emplace_back();
      event.set_type(v1::WatchEvent::ADDED);
      event.set_revision(workload.metadata().revision());
      *event.mutable_workload() = workload;
    }
    if (!current.empty()) {
      printer.Print(current);
    }
    from = listed->revision();
  }
  if (from.has_value()) {
    request.set_from_revision(*from);
  }

  std::optional<InterruptWatcher> watcher;
  if (options.handle_signals) {
    watcher.emplace([&printer](int) { printer.ExitNow(kExitOk); });
  }
  client::WatchProgress progress;
  int reconnects_seen = 0;
  absl::Status status = ctx.client.WatchResumable(
      request,
      [&](const v1::WatchEvent& event) {
        if (progress.reconnects != reconnects_seen) {
          reconnects_seen = progress.reconnects;
          ctx.err << "Warning: reconnected to kqd; resumed after revision "
                  << progress.revision << "\n";
        }
        if (*mode == Mode::kEvents && !options.all_namespaces) {
          const std::string name = WatchEventName(event);
          const bool namespaced = name.find('/') != std::string::npos;
          if (namespaced && !absl::StartsWith(name, absl::StrCat(ns, "/"))) {
            return true;
          }
        }
        printer.Print({event});
        return true;
      },
      &progress);
  watcher.reset();
  if (status.code() == absl::StatusCode::kOutOfRange) {
    ctx.err << "error: the events after revision "
            << (progress.revision > 0 ? progress.revision : from.value_or(0))
            << " are no longer kept by kqd (" << status.message()
            << "); list again (kq get workloads) and watch without "
               "--from-revision\n";
    return kExitError;
  }
  if (!status.ok()) {
    return ReportError(status, ctx.err);
  }
  return kExitOk;
}

}  // namespace kq::cli
