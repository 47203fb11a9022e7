// RunCli: argument parsing, exit codes and wiring, against a real kqd
// (KqdFixture).

#include "cli/app.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/admin_service.pb.h"

#include "kq/client/client.h"
#include "tests/cli/kqd_fixture.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Whatever server `kq` is told to use, it reaches the test's kqd; the
// names it was given are kept in servers_.
class AppTest : public testing::KqdFixture {
 protected:
  AppTest() {
    env_.connect =
        [this](const client::ClientOptions& options) -> client::Client& {
      servers_.push_back(options.target);
      return client();
    };
    env_.default_server = "127.0.0.1:7070";
    env_.in = &in_;
    env_.out = &out_;
    env_.err = &err_;
    env_.now = now_;
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "kq");
    return RunCli(args, env_);
  }

  std::vector<std::string> servers_;
  std::istringstream in_;
  Environment env_;
};

TEST_F(AppTest, NoCommandIsAUsageError) {
  EXPECT_EQ(Run({}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("subcommand"));
}

TEST_F(AppTest, UnknownCommandIsAUsageError) {
  EXPECT_EQ(Run({"frobnicate"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: unknown command \"frobnicate\" for \"kq\"\n"
            "Run 'kq --help' for usage.\n");
  EXPECT_THAT(servers_, IsEmpty());
}

TEST_F(AppTest, UnknownCommandSuggestsTheNearestOne) {
  EXPECT_EQ(Run({"--server", "h:1", "wach", "-A"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: unknown command \"wach\" for \"kq\"\n\nDid you mean "
            "this?\n\twatch\n\nRun 'kq --help' for usage.\n");
  EXPECT_THAT(servers_, IsEmpty());
}

TEST_F(AppTest, UnknownFlagIsNamedWithTheNearestOne) {
  EXPECT_EQ(Run({"get", "cq", "--all-namespace"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: unknown flag: --all-namespace\n\nDid you mean "
            "this?\n\t--all-namespaces\n\nSee 'kq get --help' for usage.\n");
  EXPECT_THAT(servers_, IsEmpty());
}

TEST_F(AppTest, HelpSucceeds) {
  EXPECT_EQ(Run({"--help"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("apply"));
  EXPECT_THAT(out_.str(), HasSubstr("describe"));
}

TEST_F(AppTest, VersionNeedsNoServer) {
  EXPECT_EQ(Run({"version"}), kExitOk);
  EXPECT_THAT(out_.str(), HasSubstr("kq version v"));
  EXPECT_THAT(servers_, IsEmpty());
}

TEST_F(AppTest, SubmitWithoutQueueIsAUsageError) {
  EXPECT_EQ(Run({"submit", "--request", "cpu=1"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("--queue"));
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AppTest, SubmitWithBadRequestIsAUsageError) {
  EXPECT_EQ(Run({"submit", "--queue", "q", "--request", "cpu"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("invalid --request item \"cpu\""));
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AppTest, SubmitPassesEveryFlag) {
  // kqd resolves the priority class at submission. No LocalQueue ml-jobs:
  // the workload waits for one, and only its creation is printed.
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: experiment
value: 10
)yaml");
  ASSERT_EQ(Run({"submit", "--queue", "ml-jobs", "-n", "team-ml", "--name",
                 "w1", "--count", "3", "--request", "cpu=2", "--priority-class",
                 "experiment", "--pod-set", "workers"}),
            kExitOk)
      << err_.str();
  const v1::Workload sent = GetWorkload("team-ml", "w1");
  EXPECT_EQ(sent.metadata().namespace_(), "team-ml");
  EXPECT_EQ(sent.metadata().name(), "w1");
  EXPECT_EQ(sent.spec().priority_class_name(), "experiment");
  EXPECT_EQ(sent.spec().pod_sets(0).name(), "workers");
  EXPECT_EQ(sent.spec().pod_sets(0).count(), 3);
  EXPECT_EQ(out_.str(), "workload.kueue.x-k8s.io/w1 created\n");
}

TEST_F(AppTest, ServerFlagBeforeOrAfterTheCommand) {
  EXPECT_EQ(Run({"get", "cq"}), kExitOk);
  EXPECT_EQ(Run({"--server", "kq.example:7070", "get", "cq"}), kExitOk);
  EXPECT_EQ(Run({"get", "cq", "--server", "other:1"}), kExitOk);
  EXPECT_THAT(servers_,
              ElementsAre("127.0.0.1:7070", "kq.example:7070", "other:1"));
}

TEST_F(AppTest, DefaultServerComesFromTheEnvironment) {
  env_.default_server = "from-env:9000";
  EXPECT_EQ(Run({"get", "rf"}), kExitOk);
  EXPECT_THAT(servers_, ElementsAre("from-env:9000"));
}

TEST_F(AppTest, ApplyReadsStdin) {
  in_.str(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default-cpu
)yaml");
  EXPECT_EQ(Run({"apply", "-f", "-"}), kExitOk) << err_.str();
  EXPECT_EQ(out_.str(), "resourceflavor.kueue.x-k8s.io/default-cpu created\n");
}

TEST_F(AppTest, ApplyMissingFileFailsBeforeSending) {
  EXPECT_EQ(Run({"apply", "-f", "/nonexistent/kq-setup.yaml"}), kExitError);
  EXPECT_EQ(err_.str(),
            "error: the path \"/nonexistent/kq-setup.yaml\" does not exist\n");
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AppTest, ApplyWithoutFileIsAUsageError) {
  EXPECT_EQ(Run({"apply"}), kExitUsage);
}

TEST_F(AppTest, GetFlagsReachTheCommand) {
  ApplySeedQueues();
  SubmitPending();
  ASSERT_EQ(Run({"get", "wl", "-A", "-o", "wide"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("NAMESPACE"));
  EXPECT_THAT(out_.str(), HasSubstr("PRIORITY"));
  EXPECT_THAT(out_.str(), HasSubstr("team-ml"));
}

TEST_F(AppTest, GetBadOutputIsAUsageError) {
  EXPECT_EQ(Run({"get", "cq", "-o", "xml"}), kExitUsage);
}

TEST_F(AppTest, CancelTakesOneOrTwoArguments) {
  ApplySeedQueues();
  SubmitPending();
  EXPECT_EQ(Run({"cancel", "wl", "job-pending", "-n", "team-ml"}), kExitOk)
      << err_.str();
  EXPECT_EQ(Run({"cancel"}), kExitUsage);
  EXPECT_EQ(Run({"cancel", "a", "b", "c"}), kExitUsage);
}

TEST_F(AppTest, RunPassesEveryFlagAndTheCommandAfterDashes) {
  // Room for the job's two pods in ClusterQueue cq, behind LocalQueue
  // ns/q; priority class high.
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "example.com/x"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 2
      - name: memory
        nominalQuota: 4Gi
      - name: example.com/x
        nominalQuota: 2
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: ns
  name: q
spec:
  clusterQueue: cq
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
)yaml");
  ASSERT_EQ(Run({"run",
                 "--queue",
                 "q",
                 "-n",
                 "ns",
                 "--name",
                 "job",
                 "--request",
                 "cpu=1",
                 "--request",
                 "memory=2Gi,example.com/x=1",
                 "--count",
                 "2",
                 "--priority-class",
                 "high",
                 "--lease",
                 "3s",
                 "--grace",
                 "2s",
                 "--",
                 "sh",
                 "-c",
                 "exit 7"}),
            7)
      << err_.str();
  const v1::Workload sent = GetWorkload("ns", "job");
  EXPECT_EQ(sent.metadata().namespace_(), "ns");
  EXPECT_EQ(sent.metadata().name(), "job");
  EXPECT_EQ(sent.spec().queue_name(), "q");
  EXPECT_EQ(sent.spec().priority_class_name(), "high");
  EXPECT_EQ(sent.spec().pod_sets(0).name(), "main");
  EXPECT_EQ(sent.spec().pod_sets(0).count(), 2);
  EXPECT_THAT(sent.spec().pod_sets(0).requests(),
              ::testing::UnorderedElementsAre(
                  ::testing::Pair("cpu", "1"), ::testing::Pair("memory", "2Gi"),
                  ::testing::Pair("example.com/x", "1")));
  std::vector<v1::AdmitRequest> admits = client().admit_requests();
  ASSERT_FALSE(admits.empty());
  EXPECT_EQ(admits[0].lease().seconds(), 3);
  EXPECT_THAT(admits[0].runner_id(),
              ::testing::EndsWith(absl::StrCat(":", getpid())));
  const v1::Workload finished = GetWorkload("ns", "job");
  ASSERT_TRUE(testing::IsTrue(finished, "Finished")) << finished.DebugString();
  const v1::Condition& last = *testing::FindCondition(finished, "Finished");
  EXPECT_EQ(last.reason(), "Failed");
  EXPECT_EQ(last.message(), "exit code 7");
  EXPECT_EQ(out_.str(), "");
}

TEST_F(AppTest, RunDefaultsToQueueDefaultAndAGeneratedName) {
  // LocalQueue default/default, with room in ClusterQueue cq.
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: default
spec:
  clusterQueue: cq
)yaml");
  ASSERT_EQ(Run({"run", "--request", "cpu=1", "--", "true"}), kExitOk)
      << err_.str();
  const std::vector<v1::Workload> workloads = AllWorkloads();
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(workloads[0].spec().queue_name(), "default");
  EXPECT_EQ(workloads[0].metadata().namespace_(), "default");
  EXPECT_EQ(workloads[0].metadata().generate_name(), "run-");
}

TEST_F(AppTest, RunUsageErrors) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string want_err;
  };
  for (const Case& tc : std::vector<Case>{
           {"no_command",
            {"run", "--request", "cpu=1"},
            "error: kq run needs a command: kq run [flags] -- COMMAND "
            "[ARGS...]\n"},
           {"name_and_generate_name",
            {"run", "--name", "a", "--generate-name", "b-", "--request",
             "cpu=1", "--", "true"},
            "error: --name and --generate-name are mutually exclusive\n"},
           {"no_request",
            {"run", "--", "true"},
            "error: at least one --request is required, e.g. --request "
            "cpu=4 --request memory=8Gi\n"},
           {"bad_request",
            {"run", "--request", "cpu=lots", "--", "true"},
            "error: invalid --request item \"cpu=lots\": \"lots\" is not a "
            "quantity (e.g. 8, 500m, 32Gi)\n"},
           {"duplicate_request",
            {"run", "--request", "cpu=1", "--request", "cpu=2", "--", "true"},
            "error: invalid --request item \"cpu=2\": \"cpu\" is requested "
            "twice\n"},
           {"lease_without_unit",
            {"run", "--request", "cpu=1", "--lease", "30", "--", "true"},
            "error: invalid --lease \"30\": want a duration such as 30s or "
            "2m\n"},
           {"zero_grace",
            {"run", "--request", "cpu=1", "--grace", "0s", "--", "true"},
            "error: invalid --grace \"0s\": must be positive\n"},
           {"zero_count",
            {"run", "--request", "cpu=1", "--count", "0", "--", "true"},
            "error: invalid --count 0: must be at least 1\n"},
       }) {
    SCOPED_TRACE(tc.name);
    err_.str("");
    EXPECT_EQ(Run(tc.args), kExitUsage);
    EXPECT_EQ(err_.str(), tc.want_err);
  }
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AppTest, RunCommandWithFlagsNeedsDashes) {
  EXPECT_EQ(Run({"run", "--request", "cpu=1", "sh", "-c", "true"}), kExitUsage);
  EXPECT_THAT(err_.str(),
              HasSubstr("hint: put the command after --: kq run [flags] -- "
                        "COMMAND [ARGS...]\n"));
  EXPECT_THAT(client().calls(), IsEmpty());
}

TEST_F(AppTest, WatchFlagsReachTheCommand) {
  // ClusterQueue cq behind LocalQueue team-ml/to-cq, beside the seed's
  // queues, in revisions 1 to 5: the first watch starts after 5.
  ApplySeedQueues();
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
)yaml");
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 2
)yaml");
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  namespace: team-ml
  name: to-cq
spec:
  clusterQueue: cq
)yaml");
  ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: experiment
value: 10
)yaml");
  {
    absl::StatusOr<v1::ListObjectsResponse> listed =
        kqd().ListObjects("ClusterQueue", "");
    ASSERT_TRUE(listed.ok()) << listed.status();
    ASSERT_EQ(listed->revision(), 5);
  }
  // Each watch shows one workload submitted once it streams (to cq for
  // the first, to team-ml/ml-jobs for the second), then ends.
  int watches = 0;
  client().OnWatchStart([&](int64_t) {
    ++watches;
    Submit(BuildWorkload({.queue = watches == 1 ? "to-cq" : "ml-jobs",
                          .namespace_name = "team-ml",
                          .name = absl::StrCat("w-", watches),
                          .requests = {{"cpu", "1"}}}));
  });
  client().EndWatchesAfter(1);
  ASSERT_EQ(Run({"watch", "events", "-A", "--cluster-queue", "cq", "-o", "json",
                 "--from-revision", "5"}),
            kExitOk)
      << err_.str();
  ASSERT_EQ(
      Run({"watch", "-n", "team-ml", "--queue", "ml-jobs", "--watch-only"}),
      kExitOk)
      << err_.str();
  std::vector<v1::WatchRequest> requests = client().watch_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].from_revision(), 5);
  EXPECT_EQ(requests[0].cluster_queue(), "cq");
  EXPECT_EQ(requests[0].namespace_(), "");
  EXPECT_THAT(requests[0].kinds(), IsEmpty());
  EXPECT_FALSE(requests[1].has_from_revision());
  EXPECT_EQ(requests[1].namespace_(), "team-ml");
  EXPECT_EQ(requests[1].queue_name(), "ml-jobs");
  EXPECT_THAT(requests[1].kinds(), ElementsAre("Workload"));
}

TEST_F(AppTest, PreemptNamesTheUserAsActor) {
  env_.user = "alice";
  ApplySeedQueues();
  SubmitAdmitted();
  // So that kqd leaves it evicted instead of admitting it again at once.
  SetStopPolicy("ClusterQueue", "", "ai-training-queue", "Hold");
  ASSERT_EQ(Run({"preempt", "workload", "job-llm-finetune-0919", "-n",
                 "team-ml", "--reason", "node drain"}),
            kExitOk)
      << err_.str();
  // kqd records who asked and why in the eviction.
  const v1::Workload preempted =
      GetWorkload("team-ml", "job-llm-finetune-0919");
  ASSERT_TRUE(testing::IsTrue(preempted, "Evicted")) << preempted.DebugString();
  EXPECT_EQ(testing::FindCondition(preempted, "Evicted")->message(),
            "Preempted by alice: node drain");
}

TEST_F(AppTest, StopAndResumeQueues) {
  ApplySeedQueues();
  auto stop_policy = [this] {
    return GetObject("ClusterQueue", "", "ai-training-queue")
        .cluster_queue()
        .spec()
        .stop_policy();
  };
  ASSERT_EQ(Run({"stop", "clusterqueue", "ai-training-queue",
                 "--keep-already-running"}),
            kExitOk)
      << err_.str();
  EXPECT_EQ(stop_policy(), "Hold");
  ASSERT_EQ(Run({"resume", "cq", "ai-training-queue"}), kExitOk) << err_.str();
  EXPECT_EQ(stop_policy(), "None");
  EXPECT_EQ(out_.str(),
            "clusterqueue.kueue.x-k8s.io/ai-training-queue stopped\n"
            "clusterqueue.kueue.x-k8s.io/ai-training-queue resumed\n");
  EXPECT_EQ(Run({"stop", "clusterqueue"}), kExitUsage);
}

TEST_F(AppTest, SimulateServerAsksKqd) {
  // No LocalQueue q anywhere: kqd answers "not admissible".
  ASSERT_EQ(Run({"simulate", "--server", "--queue", "q", "--request", "cpu=1",
                 "-n", "ns"}),
            kExitOk)
      << err_.str();
  ASSERT_EQ(Run({"simulate", "--server", "kq.example:7070", "--queue", "q",
                 "--request", "cpu=1"}),
            kExitOk)
      << err_.str();
  EXPECT_THAT(servers_, ElementsAre("127.0.0.1:7070", "kq.example:7070"));
  std::vector<v1::SimulateRequest> requests = client().simulate_requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].workload().metadata().namespace_(), "ns");
  EXPECT_EQ(requests[0].workload().metadata().generate_name(), "wl-");
  EXPECT_THAT(out_.str(), HasSubstr("workload ns/wl-: not admissible\n"));
}

TEST_F(AppTest, SimulateOfflineUsageErrors) {
  EXPECT_EQ(Run({"simulate"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: kq simulate needs -f FILE (a scenario), or --server to "
            "ask kqd\n");
  err_.str("");
  in_.str("");
  EXPECT_EQ(Run({"simulate", "-f", "-", "--request", "cpu=1"}), kExitUsage);
  EXPECT_EQ(err_.str(),
            "error: --request and --queue need --server: an offline "
            "simulation reads its workloads from -f\n");
  EXPECT_THAT(servers_, IsEmpty());
}

// A loopback port nothing listens on: bound by the test, then closed.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  close(fd);
  return ntohs(address.sin_port);
}

// `kq` with the gRPC client main.cc gives it, to whatever address it is
// told, instead of the recording client of the test's kqd.
class AppConnectTest : public AppTest {
 protected:
  AppConnectTest() {
    env_.connect =
        [this](const client::ClientOptions& options) -> client::Client& {
      servers_.push_back(options.target);
      real_ = client::NewGrpcClient(options);
      return *real_;
    };
  }

  std::unique_ptr<client::Client> real_;
};

TEST_F(AppConnectTest, ClosedPortFailsAtOnceWithKubectlsHint) {
  const std::string server = absl::StrCat("127.0.0.1:", ClosedPort());
  const std::string refused =
      absl::StrCat("The connection to the server ", server,
                   " was refused - did you specify the right host or port?\n");
  struct Case {
    std::string name;
    std::vector<std::string> args;
    std::string env_server;
    std::string want_hint;
  } cases[] = {
      {.name = "flag",
       .args = {"--server", server, "get", "cq"},
       .want_hint =
           "(kq reads --server, KQ_SERVER or the kq context's server; this "
           "address came from "
           "--server)\n"},
      {.name = "environment",
       .args = {"get", "cq"},
       .env_server = server,
       .want_hint =
           "(kq reads --server, KQ_SERVER or the kq context's server; this "
           "address came from "
           "KQ_SERVER)\n"},
      {.name = "default",
       .args = {"describe", "cq", "x"},
       .want_hint = absl::StrCat("(kq reads --server, KQ_SERVER or the kq "
                                 "context's server; none is set, so kq "
                                 "tried its default, ",
                                 server, ")\n")},
      {.name = "simulate_server",
       .args = {"simulate", absl::StrCat("--server=", server), "--queue", "q",
                "--request", "cpu=1"},
       .want_hint =
           "(kq reads --server, KQ_SERVER or the kq context's server; this "
           "address came from "
           "--server)\n"},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    Clear();
    env_.default_server = server;
    env_.env_server = tc.env_server;
    const absl::Time start = absl::Now();
    EXPECT_EQ(Run(tc.args), kExitError);
    // At once in fact; 5 s so that a loaded machine cannot make it flake.
    EXPECT_LT(absl::Now() - start, absl::Seconds(5));
    EXPECT_EQ(err_.str(), refused + tc.want_hint);
    EXPECT_EQ(out_.str(), "");
  }
}

TEST_F(AppConnectTest, SilentServerFailsAfterTheConnectTimeout) {
  // Accepts TCP connections (the kernel does, into the backlog) but never
  // speaks HTTP/2, as an address behind a black hole would not either.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const std::string server =
      absl::StrCat("127.0.0.1:", ntohs(address.sin_port));
  const absl::Time start = absl::Now();
  EXPECT_EQ(Run({"--server", server, "get", "cq"}), kExitError);
  const absl::Duration took = absl::Now() - start;
  close(fd);
  EXPECT_GE(took, env_.connect_timeout);
  EXPECT_LT(took, absl::Seconds(5));
  EXPECT_EQ(
      err_.str(),
      absl::StrCat("Unable to connect to the server: no connection to ", server,
                   " within 1s\n(kq reads --server, KQ_SERVER or the kq "
                   "context's server; this "
                   "address came from --server)\n"));
}

TEST_F(AppConnectTest, CallsOutlastTheConnectTimeout) {
  // kq run's wait for admission is one long Admit call after another; none
  // may be cut to the connect timeout. The seed's ClusterQueue has 64 cpu,
  // 32 of them held until the finish below.
  ApplySeedQueues();
  SubmitAdmitted();
  env_.connect_timeout = absl::Milliseconds(200);
  const absl::Duration hold = absl::Milliseconds(1500);
  std::thread finish([this, hold] {
    absl::SleepFor(hold);
    EXPECT_TRUE(
        kqd()
            .FinishWorkload("team-ml", "job-llm-finetune-0919", true, "")
            .ok());
  });
  env_.default_server = kqd_->target();
  const absl::Time start = absl::Now();
  const int code = Run({"run", "-n", "team-ml", "--queue", "ml-jobs", "--name",
                        "waits", "--request", "cpu=40", "--", "true"});
  const absl::Duration took = absl::Now() - start;
  finish.join();
  EXPECT_EQ(code, kExitOk) << err_.str();
  EXPECT_GE(took, hold);
  EXPECT_TRUE(testing::IsTrue(GetWorkload("team-ml", "waits"), "Finished"));
}

}  // namespace
}  // namespace kq::cli
