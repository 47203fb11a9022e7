// `kq-bench security`: what TLS, client certificates, RBAC and the audit
// log cost. Two kqds on the same machine: one plain (no authentication, as
// `make run`), one with mTLS, an --authz-file and an --audit-log, each
// loaded by a user bound to kueue-batch-user-role in its namespace. Both
// take durable unary Submits (64 in flight) and batched Applies, in
// alternating rounds so that the host's noise falls on both; then the cost
// of one `kq` process per command (a new TLS handshake each), beside plain.

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"

#include "bench/bench.h"
#include "bench/objects.h"

namespace kq::bench {
namespace {

absl::Status Sh(const std::string& command) {
  if (std::system((command + " >/dev/null 2>&1").c_str()) != 0) {
    return absl::InternalError(absl::StrCat("failed: ", command));
  }
  return absl::OkStatus();
}

// A CA, kqd's serving certificate and client certificates for root
// (admins) and alice (team), made by openssl in `dir`.
absl::Status MakeCertificates(const std::string& dir) {
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
  if (absl::Status s = Sh(absl::StrCat(
          "cd ", dir, " && openssl req -x509 ", ec,
          " -days 2 -subj /CN=kq-bench-ca -keyout ca.key -out ca.crt"));
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Sh(absl::StrCat(
          "cd ", dir, " && openssl req ", ec,
          " -keyout srv.key -subj /CN=localhost -addext "
          "subjectAltName=DNS:localhost,IP:127.0.0.1 -CA ca.crt -CAkey ca.key "
          "-days 1 -out srv.crt"));
      !s.ok()) {
    return s;
  }
  for (const char* who : {"root/O=admins", "alice/O=team"}) {
    const std::string name =
        std::string(who).substr(0, std::string(who).find('/'));
    if (absl::Status s = Sh(absl::StrCat(
            "cd ", dir, " && openssl req ", ec, " -keyout ", name,
            ".key -subj /CN=", who,
            " -addext extendedKeyUsage=clientAuth -CA ca.crt -CAkey ca.key "
            "-days 1 -out ",
            name, ".crt"));
        !s.ok()) {
      return s;
    }
  }
  std::ofstream(dir + "/authz.yaml")
      << R"(apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: admins}]
roleRef: {kind: ClusterRole, name: kueue-batch-admin-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team, namespace: bench}
subjects: [{kind: Group, name: team}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
)";
  return absl::OkStatus();
}

client::ClientOptions As(const std::string& dir, const std::string& user) {
  client::ClientOptions o;
  o.deadline = absl::Seconds(120);
  o.tls_ca_file = dir + "/ca.crt";
  o.tls_cert_file = dir + "/" + user + ".crt";
  o.tls_key_file = dir + "/" + user + ".key";
  return o;
}

// Workloads per second accepted by batched Applies of `batch`, `threads`
// in flight, for `duration`.
double ApplyRate(const Kqd& kqd, int threads, int batch,
                 absl::Duration duration, std::atomic<int64_t>& next) {
  std::atomic<int64_t> done{0};
  const absl::Time end = absl::Now() + duration;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      std::unique_ptr<client::Client> client = kqd.NewClient();
      while (absl::Now() < end) {
        v1::ApplyRequest request;
        for (int i = 0; i < batch; ++i) {
          WorkloadShape shape;
          shape.namespace_name = "bench";
          shape.queue_name = "submit";
          shape.name = absl::StrCat("a-", next.fetch_add(1));
          shape.cpu = "1";
          *request.add_workloads() = MakeWorkload(shape);
        }
        if (client->Apply(request).ok()) done.fetch_add(batch);
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return static_cast<double>(done.load()) / absl::ToDoubleSeconds(duration);
}

// Submits per second with `in_flight` SubmitWorkloadAsync calls
// outstanding on one client (one channel, one connection: HTTP/2 carries
// the calls together, as a launcher's or the shim's client does), closed
// loop, for `duration`.
double AsyncSubmitRate(const Kqd& kqd, int in_flight, absl::Duration duration,
                       std::atomic<int64_t>& next) {
  std::unique_ptr<client::Client> client = kqd.NewClient();
  absl::Mutex mu;
  int64_t done = 0;
  int outstanding = 0;
  const absl::Time end = absl::Now() + duration;
  std::function<void()> send = [&] {
    WorkloadShape shape;
    shape.namespace_name = "bench";
    shape.queue_name = "submit";
    shape.name = absl::StrCat("c-", next.fetch_add(1));
    shape.cpu = "1";
    v1::SubmitWorkloadRequest request;
    *request.mutable_workload() = MakeWorkload(shape);
    client->SubmitWorkloadAsync(
        std::move(request), [&](absl::StatusOr<v1::SubmitWorkloadResponse> r) {
          bool again;
          {
            absl::MutexLock lock(&mu);
            if (r.ok()) ++done;
            again = absl::Now() < end;
            if (!again) --outstanding;
          }
          if (again) send();
        });
  };
  {
    absl::MutexLock lock(&mu);
    outstanding = in_flight;
  }
  for (int i = 0; i < in_flight; ++i) send();
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](int* n) { return *n == 0; }, &outstanding));
  return static_cast<double>(done) / absl::ToDoubleSeconds(duration);
}

// Median wall time of `runs` runs of `argv` (each a new process).
absl::StatusOr<double> MedianProcessMs(std::vector<std::string> argv,
                                       int runs) {
  std::vector<double> ms;
  std::vector<char*> args;
  for (std::string& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  for (int i = 0; i < runs; ++i) {
    const absl::Time start = absl::Now();
    const pid_t pid = fork();
    if (pid == 0) {
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      execv(args[0], args.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return absl::InternalError(
          absl::StrCat(argv[0], " ", argv[1], " failed (status ", status, ")"));
    }
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  return ComputePercentiles(ms).p50;
}

double Median(std::vector<double> v) { return ComputePercentiles(v).p50; }

}  // namespace

absl::StatusOr<std::vector<Table>> RunSecurity(const SecurityOptions& options,
                                               const Context& context) {
  TempDir dir("kq-bench-security");
  const std::string pki = dir.path() + "/pki";
  std::filesystem::create_directories(pki);
  if (absl::Status s = MakeCertificates(pki); !s.ok()) return s;

  // Each layer on top of the one before, so that a row's cost is its own.
  struct Variant {
    std::string name;
    std::vector<std::string> args;
    bool tls = false;
    bool client_cert = false;
    std::unique_ptr<Kqd> kqd;
    std::vector<double> submits;
    std::vector<double> applies;
    // kqd's own CPU per submitted workload, microseconds.
    std::vector<double> submit_cpu_us;
    std::vector<double> async_submits;
    std::vector<double> async_cpu_us;
  };
  const std::vector<std::string> tls_args = {"--tls-cert=" + pki + "/srv.crt",
                                             "--tls-key=" + pki + "/srv.key"};
  std::vector<Variant> variants;
  variants.push_back({.name = "plain (no authentication, as make run)"});
  variants.push_back({.name = "TLS", .args = tls_args, .tls = true});
  std::vector<std::string> rbac = tls_args;
  rbac.push_back("--client-ca=" + pki + "/ca.crt");
  rbac.push_back("--authz-file=" + pki + "/authz.yaml");
  variants.push_back(
      {.name = "mTLS + RBAC", .args = rbac, .tls = true, .client_cert = true});
  std::vector<std::string> audited = rbac;
  audited.push_back("--audit-log=" + dir.path() + "/audited/audit.log");
  variants.push_back({.name = "mTLS + RBAC + audit log",
                      .args = audited,
                      .tls = true,
                      .client_cert = true});

  v1::ApplyRequest queues;
  *queues.add_objects() = MakeFlavor("default");
  *queues.add_objects() = MakeNamespace("bench");
  *queues.add_objects() = MakeClusterQueue(
      {.name = "submit", .flavor = "default", .nominal_cpu = "100000000"});
  *queues.add_objects() = MakeLocalQueue("bench", "submit", "submit");
  for (size_t i = 0; i < variants.size(); ++i) {
    Variant& v = variants[i];
    const std::string data =
        dir.path() + (i == 3 ? "/audited" : absl::StrCat("/v", i));
    std::filesystem::create_directories(data);
    v.kqd = std::make_unique<Kqd>(context.kqd_path, data);
    if (absl::Status s = v.kqd->Start(v.args); !s.ok()) return s;
    client::ClientOptions as_root;
    client::ClientOptions as_alice;
    if (v.tls) {
      // Named as the serving certificate names it.
      v.kqd->set_target_host("localhost");
      as_root.tls_ca_file = as_alice.tls_ca_file = pki + "/ca.crt";
    }
    if (v.client_cert) {
      as_root = As(pki, "root");
      as_alice = As(pki, "alice");
    }
    v.kqd->set_client_options(as_root);
    if (auto r = v.kqd->NewClient()->Apply(queues); !r.ok()) return r.status();
    v.kqd->set_client_options(as_alice);
  }

  std::atomic<int64_t> next{0};
  for (int round = 0; round < options.rounds; ++round) {
    for (Variant& v : variants) {
      const absl::Duration cpu_before = CpuTime(v.kqd->pid());
      const double rate =
          SubmitRate(*v.kqd, options.in_flight, options.per_round, next);
      const absl::Duration cpu = CpuTime(v.kqd->pid()) - cpu_before;
      v.submits.push_back(rate);
      v.submit_cpu_us.push_back(
          absl::ToDoubleMicroseconds(cpu) /
          std::max(1.0, rate * absl::ToDoubleSeconds(options.per_round)));
    }
    for (Variant& v : variants) {
      const absl::Duration cpu_before = CpuTime(v.kqd->pid());
      const double rate =
          AsyncSubmitRate(*v.kqd, options.in_flight, options.per_round, next);
      const absl::Duration cpu = CpuTime(v.kqd->pid()) - cpu_before;
      v.async_submits.push_back(rate);
      v.async_cpu_us.push_back(
          absl::ToDoubleMicroseconds(cpu) /
          std::max(1.0, rate * absl::ToDoubleSeconds(options.per_round)));
    }
    for (Variant& v : variants) {
      v.applies.push_back(ApplyRate(*v.kqd, options.apply_in_flight,
                                    options.apply_batch, options.per_round,
                                    next));
    }
  }

  Table rates;
  rates.title =
      "Security: durable Submit and Apply, plain and with each layer of "
      "security";
  rates.header = {
      "kqd",
      absl::StrCat("Submit, ", options.in_flight, " connections /s"),
      "Beside plain",
      "kqd CPU per call",
      absl::StrCat("Submit, ", options.in_flight,
                   " in flight on 1 connection /s"),
      "Beside plain",
      "kqd CPU per call",
      absl::StrCat("Apply of ", options.apply_batch, ", ",
                   options.apply_in_flight, " in flight (workloads/s)"),
      "Beside plain"};
  const double plain_submit = Median(variants[0].submits);
  const double plain_async = Median(variants[0].async_submits);
  const double plain_apply = Median(variants[0].applies);
  for (const Variant& v : variants) {
    const double submit = Median(v.submits);
    const double async = Median(v.async_submits);
    const double apply = Median(v.applies);
    rates.rows.push_back(
        {v.name, FormatCount(submit),
         FormatFixed(100 * submit / plain_submit, 1) + "%",
         FormatMicros(Median(v.submit_cpu_us)), FormatCount(async),
         FormatFixed(100 * async / plain_async, 1) + "%",
         FormatMicros(Median(v.async_cpu_us)), FormatCount(apply),
         FormatFixed(100 * apply / plain_apply, 1) + "%"});
  }
  rates.notes.push_back(absl::StrCat(
      "Medians of ", options.rounds, " rounds of ",
      absl::FormatDuration(options.per_round),
      " per kqd and call, the kqds taking turns; all durable "
      "(synchronous=FULL) on the same disk. With mTLS, alice's client "
      "certificate is verified once per connection and every call is "
      "authorized against her RoleBinding to kueue-batch-user-role; the "
      "audit log gets one line per call. The 64 client threads share the "
      "machine's cores with kqd and pay TLS on their side too, so the rates "
      "show the whole machine's cost; kqd CPU per Submit is kqd's alone."));
  if (context.limits.grpc_calls_per_second.count(64) > 0) {
    rates.notes.push_back(Fraction(
        Median(variants.back().submits),
        context.limits.grpc_calls_per_second.at(64),
        "no-op plain gRPC calls at 64 in flight, for the secure Submit"));
  }
  Kqd& plain = *variants[0].kqd;
  Kqd& secure = *variants.back().kqd;

  // One `kq` process per command, as a job script calls it.
  const std::string kq =
      (std::filesystem::path(context.kqd_path).parent_path() / "kq").string();
  absl::StatusOr<double> plain_ms =
      MedianProcessMs({kq, "--server", plain.target(), "get", "clusterqueues"},
                      options.processes);
  if (!plain_ms.ok()) return plain_ms.status();
  absl::StatusOr<double> tls_ms = MedianProcessMs(
      {kq, "--server", secure.target(), "--tls-ca", pki + "/ca.crt", "--cert",
       pki + "/root.crt", "--key", pki + "/root.key", "get", "clusterqueues"},
      options.processes);
  if (!tls_ms.ok()) return tls_ms.status();
  Table processes;
  processes.title = "Security: one kq process per command";
  processes.header = {"Connection", "kq get clusterqueues (median)",
                      "Beside plain"};
  processes.rows.push_back(
      {"plain gRPC", FormatMicros(*plain_ms * 1000), "1.00x"});
  processes.rows.push_back({"mTLS (P-256), RBAC, audit",
                            FormatMicros(*tls_ms * 1000),
                            FormatFixed(*tls_ms / *plain_ms, 2) + "x"});
  processes.notes.push_back(absl::StrCat(
      options.processes,
      " runs each: fork, exec, connect, handshake, one ListObjects, exit."));
  return std::vector<Table>{rates, processes};
}

}  // namespace kq::bench
