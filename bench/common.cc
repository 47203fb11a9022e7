#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "bench/bench.h"
#include "bench/objects.h"

namespace kq::bench {

void Table::Print(std::ostream& out) const {
  out << "### " << title << "\n\n";
  if (!header.empty()) {
    out << "| " << absl::StrJoin(header, " | ") << " |\n|";
    for (size_t i = 0; i < header.size(); ++i) out << "---|";
    out << "\n";
    for (const std::vector<std::string>& row : rows) {
      out << "| " << absl::StrJoin(row, " | ") << " |\n";
    }
    out << "\n";
  }
  for (const std::string& note : notes) out << "- " << note << "\n";
  if (!notes.empty()) out << "\n";
  out.flush();
}

std::string Fraction(double value, double limit, const std::string& what) {
  if (limit <= 0 || value < 0) return "";
  return absl::StrFormat("%.1f%% of %s", 100.0 * value / limit, what);
}

Percentiles ComputePercentiles(std::vector<double>& samples) {
  Percentiles p;
  p.count = samples.size();
  if (samples.empty()) return p;
  std::sort(samples.begin(), samples.end());
  double sum = 0;
  for (double s : samples) sum += s;
  p.mean = sum / samples.size();
  auto rank = [&](double q) {
    size_t i = static_cast<size_t>(std::ceil(q * samples.size()));
    return samples[std::min(samples.size() - 1, i == 0 ? 0 : i - 1)];
  };
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  p.p999 = rank(0.999);
  p.max = samples.back();
  return p;
}

std::string FormatCount(double value) {
  std::string digits = absl::StrFormat("%.0f", value);
  std::string out;
  const size_t start = digits[0] == '-' ? 1 : 0;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > start && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string FormatFixed(double value, int decimals) {
  return absl::StrFormat("%.*f", decimals, value);
}

std::string FormatMicros(double us) {
  if (us < 1000) return absl::StrFormat("%.0f µs", us);
  if (us < 1e6) return absl::StrFormat("%.2f ms", us / 1000);
  return absl::StrFormat("%.2f s", us / 1e6);
}

std::string MachineDescription() {
  std::string cpu = "unknown CPU";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (absl::StartsWith(line, "model name")) {
      std::vector<std::string> parts =
          absl::StrSplit(line, absl::MaxSplits(':', 1));
      if (parts.size() == 2)
        cpu = std::string(absl::StripAsciiWhitespace(parts[1]));
      break;
    }
  }
  double ram_gib = 0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (absl::StartsWith(line, "MemTotal:")) {
      std::vector<std::string> parts =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      int64_t kib = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) {
        ram_gib = kib / 1024.0 / 1024.0;
      }
      break;
    }
  }
  struct utsname uts;
  std::string kernel = uname(&uts) == 0
                           ? absl::StrCat(uts.sysname, " ", uts.release)
                           : "unknown kernel";
  return absl::StrFormat("%d cores (nproc), %s, %.1f GiB RAM, %s",
                         std::thread::hardware_concurrency(), cpu, ram_gib,
                         kernel);
}

int64_t RssBytes(pid_t pid) {
  std::ifstream status(pid == 0 ? std::string("/proc/self/status")
                                : absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (absl::StartsWith(line, "VmRSS:")) {
      std::vector<std::string> parts =
          absl::StrSplit(line, ' ', absl::SkipEmpty());
      int64_t kib = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) {
        return kib * 1024;
      }
    }
  }
  return 0;
}

absl::Duration CpuTime(pid_t pid) {
  if (pid == 0) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return absl::DurationFromTimeval(usage.ru_utime) +
           absl::DurationFromTimeval(usage.ru_stime);
  }
  // /proc/<pid>/stat: fields 14 and 15 are utime and stime in clock ticks;
  // the command name (field 2) may hold spaces, so count from its ')'.
  std::ifstream stat(absl::StrCat("/proc/", pid, "/stat"));
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  if (close == std::string::npos) return absl::ZeroDuration();
  std::vector<std::string> fields =
      absl::StrSplit(text.substr(close + 2), ' ', absl::SkipEmpty());
  int64_t utime = 0, stime = 0;
  // After ')' the first field is field 3 (state): utime is index 11.
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &utime) ||
      !absl::SimpleAtoi(fields[12], &stime)) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(static_cast<double>(utime + stime) /
                       sysconf(_SC_CLK_TCK));
}

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = absl::StrCat(
      tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "-XXXXXX");
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Kqd::Kqd(std::string kqd_path, std::string data_dir)
    : kqd_path_(std::move(kqd_path)), data_dir_(std::move(data_dir)) {}

Kqd::~Kqd() {
  if (pid_ > 0) Stop();
}

std::string Kqd::log_path() const { return data_dir_ + "/kqd.log"; }

std::string Kqd::target() const { return absl::StrCat(host_, ":", port_); }

absl::Status Kqd::Start(const std::vector<std::string>& extra_args,
                        absl::Duration timeout) {
  if (access(kqd_path_.c_str(), X_OK) != 0) {
    return absl::NotFoundError(
        absl::StrCat("kqd not found at ", kqd_path_, " (use --kqd)"));
  }
  const std::string port_file = data_dir_ + "/kqd.port";
  std::error_code ec;
  std::filesystem::remove(port_file, ec);
  std::vector<std::string> args = {
      kqd_path_, "--listen=127.0.0.1:0", "--http-listen=127.0.0.1:0",
      "--data-dir=" + data_dir_, "--port-file=" + port_file};
  // Quiet unless the caller wants kqd's timeline (restart reads it).
  if (std::none_of(extra_args.begin(), extra_args.end(), [](const auto& a) {
        return absl::StartsWith(a, "--log-level");
      })) {
    args.push_back("--log-level=warn");
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int log_fd =
      open(log_path().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  started_at_ = absl::Now();
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (pid_ == 0) {
    if (log_fd >= 0) {
      dup2(log_fd, STDOUT_FILENO);
      dup2(log_fd, STDERR_FILENO);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
  const absl::Time deadline = started_at_ + timeout;
  while (absl::Now() < deadline) {
    std::ifstream in(port_file);
    if (in >> port_) {
      serving_at_ = absl::Now();
      return absl::OkStatus();
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(
          absl::StrCat("kqd exited during start; see ", log_path()));
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  Kill();
  return absl::DeadlineExceededError(
      absl::StrCat("kqd did not serve within ", absl::FormatDuration(timeout)));
}

absl::Duration Kqd::Stop() {
  if (pid_ <= 0) return absl::ZeroDuration();
  const absl::Time start = absl::Now();
  kill(pid_, SIGTERM);
  for (int i = 0; i < 10000; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::Now() - start;
    }
    absl::SleepFor(absl::Milliseconds(1));
  }
  Kill();
  return absl::Now() - start;
}

void Kqd::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

std::unique_ptr<client::Client> Kqd::NewClient() const {
  client::ClientOptions options = client_options_;
  options.target = target();
  options.deadline = absl::Seconds(120);
  return client::NewGrpcClient(options);
}

double SubmitRate(const Kqd& kqd, int threads, absl::Duration duration,
                  std::atomic<int64_t>& next) {
  std::atomic<int64_t> done{0};
  const absl::Time end = absl::Now() + duration;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::unique_ptr<client::Client> client = kqd.NewClient();
      while (absl::Now() < end) {
        WorkloadShape shape;
        shape.namespace_name = "bench";
        shape.queue_name = "submit";
        shape.name = absl::StrCat("s-", next.fetch_add(1));
        shape.cpu = "1";
        if (client->SubmitWorkload(MakeWorkload(shape)).ok()) {
          done.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return static_cast<double>(done.load()) / absl::ToDoubleSeconds(duration);
}

void SubmitPaced(
    client::Client& client, int64_t count, double rate, int in_flight,
    absl::Time start, absl::Time stop_at,
    const std::function<v1::SubmitWorkloadRequest(int64_t)>& request,
    const SubmitAnswered& answered) {
  absl::Mutex mu;
  int64_t next = 0;
  int64_t outstanding = 0;
  // Sends call `i`, counted in `outstanding` by the caller, who holds no
  // lock (an answer may come on any thread).
  std::function<void(int64_t)> send = [&](int64_t i) {
    const absl::Time sent = absl::Now();
    client.SubmitWorkloadAsync(
        request(i), [&, i, sent](absl::StatusOr<v1::SubmitWorkloadResponse> r) {
          answered(i, sent, std::move(r));
          int64_t following = -1;
          {
            absl::MutexLock lock(&mu);
            // Closed loop: an answer sends the next call.
            if (rate <= 0 && next < count && absl::Now() < stop_at) {
              following = next++;
            } else {
              --outstanding;
            }
          }
          if (following >= 0) send(following);
        });
  };
  if (rate <= 0) {
    std::vector<int64_t> first;
    {
      absl::MutexLock lock(&mu);
      for (; next < std::min<int64_t>(in_flight, count); ++next) {
        first.push_back(next);
        ++outstanding;
      }
    }
    for (int64_t i : first) send(i);
  } else {
    auto has_slot = [&] { return outstanding < in_flight; };
    for (int64_t i = 0; i < count; ++i) {
      const absl::Time due = start + absl::Seconds(i / rate);
      if (due >= stop_at) break;
      absl::SleepFor(due - absl::Now());
      {
        absl::MutexLock lock(&mu);
        mu.Await(absl::Condition(&has_slot));
        ++outstanding;
      }
      send(i);
    }
  }
  // Every answer comes (each call has a deadline) and uses `send`.
  auto none_out = [&] { return outstanding == 0; };
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(&none_out));
}

}  // namespace kq::bench
