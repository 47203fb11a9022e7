#include "server/metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

#include "server/metrics/kueue_metrics.h"

namespace kq::metrics {
namespace {

prometheus::MetricFamily One(const char* name, const char* help,
                             prometheus::MetricType type, double value) {
  prometheus::ClientMetric metric;
  metric.label.push_back({kReplicaRole, kStandalone});
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  return {name, help, type, {metric}};
}

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<prometheus::MetricFamily> CollectProcessMetrics() {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  // /proc/self/stat: the command may hold spaces and parentheses, so the
  // fields are counted from the last ')' (proc(5): field 3 follows it).
  const std::string stat = ReadFile("/proc/self/stat");
  const size_t paren = stat.rfind(')');
  if (paren != std::string::npos && ticks > 0) {
    std::vector<absl::string_view> f = absl::StrSplit(
        absl::string_view(stat).substr(paren + 2), ' ', absl::SkipEmpty());
    // f[0] is field 3 (state): field n is f[n - 3].
    double utime = 0, stime = 0, threads = 0, start = 0, vsize = 0, rss = 0;
    if (f.size() > 21 && absl::SimpleAtod(f[11], &utime) &&
        absl::SimpleAtod(f[12], &stime) && absl::SimpleAtod(f[17], &threads) &&
        absl::SimpleAtod(f[19], &start) && absl::SimpleAtod(f[20], &vsize) &&
        absl::SimpleAtod(f[21], &rss)) {
      out.push_back(One("process_cpu_seconds_total",
                        "User and system CPU time spent, in seconds.",
                        MetricType::Counter, (utime + stime) / ticks));
      out.push_back(One("process_threads", "Threads of the process.",
                        MetricType::Gauge, threads));
      out.push_back(One("process_virtual_memory_bytes",
                        "Virtual memory size, in bytes.", MetricType::Gauge,
                        vsize));
      out.push_back(One("process_resident_memory_bytes",
                        "Resident memory size, in bytes.", MetricType::Gauge,
                        rss * page));
      // Start time: boot time (btime in /proc/stat) plus the start in
      // clock ticks after boot.
      for (absl::string_view line :
           absl::StrSplit(ReadFile("/proc/stat"), '\n')) {
        double btime = 0;
        if (absl::ConsumePrefix(&line, "btime ") &&
            absl::SimpleAtod(line, &btime)) {
          out.push_back(One("process_start_time_seconds",
                            "Start time of the process since the Unix epoch, "
                            "in seconds.",
                            MetricType::Gauge, btime + start / ticks));
        }
      }
    }
  }
  std::error_code ec;
  double fds = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end;
       !ec && it != end; it.increment(ec)) {
    ++fds;
  }
  if (!ec) {
    out.push_back(One("process_open_fds", "Open file descriptors.",
                      MetricType::Gauge, fds));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
    out.push_back(One("process_max_fds",
                      "The most file descriptors the process may open.",
                      MetricType::Gauge, static_cast<double>(limit.rlim_cur)));
  }
  return out;
}

}  // namespace kq::metrics
