// `kq run`: the Runner against a real kqd (KqdFixture), running real
// commands (sh) in a scratch directory; and its pure helpers.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cli/command.h"
#include "cli/commands/commands.h"
#include "cli/run/runner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

#include "tests/cli/kqd_fixture.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

constexpr char kPendingMessage[] =
    "couldn't assign flavors to pod set main: insufficient unused quota "
    "for cpu in flavor default, 2 more needed";

// Polls `done` every 10 ms for up to 20 s (slow, loaded machines).
bool Eventually(const std::function<bool()>& done) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (done()) {
      return true;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return done();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class RunnerTest : public testing::KqdFixture {
 protected:
  RunnerTest() {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "kq_run_test_", getpid(), "_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~RunnerTest() override { std::filesystem::remove_all(dir_); }

  // ClusterQueue cq, room for one job (2 cpu, 1Gi) on flavor default (node
  // labels zone=a and arch=x86), preempting lower priorities; LocalQueue
  // default/q; priority class high (1000) above the jobs' 0.
  void SetUp() override {
    KqdFixture::SetUp();
    ApplyYaml(R"yaml(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: default
spec:
  nodeLabels:
    zone: a
    arch: x86
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: cq
spec:
  namespaceSelector: {}
  preemption:
    withinClusterQueue: LowerPriority
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: 2
      - name: memory
        nominalQuota: 1Gi
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
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
  }

  // A Runner for `name` in LocalQueue q asking cpu=2, running `script`
  // with sh in dir_. The lease is long enough for a loaded machine to
  // renew it in time: kqd releases an evicted workload's quota early when
  // its runner's lease lapses.
  RunnerConfig Config(const std::string& script,
                      const std::string& name = "job") {
    WorkloadFlags flags{.queue = "q",
                        .name = name,
                        .requests = {{"cpu", "2"}, {"memory", "1Gi"}}};
    return RunnerConfig{
        .workload = BuildWorkload(flags),
        .command = {"sh", "-c",
                    absl::StrCat("cd '", dir_.string(), "' && ", script)},
        .runner_id = "host:42",
        .lease = absl::Seconds(3),
        .grace = absl::Seconds(10),
        .poll = absl::Milliseconds(50),
        .reattach_delay = absl::Milliseconds(10),
    };
  }

  // Submits workload `name` asking cpu=2 in q (at `priority_class`, if
  // set) and returns it as kqd answered.
  v1::Workload SubmitOther(const std::string& name,
                           const std::string& priority_class = "") {
    return Submit(BuildWorkload({.queue = "q",
                                 .name = name,
                                 .requests = {{"cpu", "2"}},
                                 .priority_class = priority_class}));
  }

  // Takes cq's whole cpu with workload "blocker", so that the job waits
  // for it: "insufficient unused quota for cpu in flavor default, 2 more
  // needed".
  void Block() {
    const v1::Workload blocker = SubmitOther("blocker");
    ASSERT_TRUE(testing::IsTrue(blocker, "Admitted")) << blocker.DebugString();
  }

  // Whether kqd admitted workload `name`.
  bool Admitted(const std::string& name) {
    absl::StatusOr<v1::GetWorkloadResponse> got =
        kqd().GetWorkload("default", name);
    return got.ok() && testing::IsTrue(got->workload(), "Admitted");
  }

  std::filesystem::path File(const std::string& name) const {
    return dir_ / name;
  }

  // The Finished condition's "Reason: message" of workload `name`.
  std::string Finished(const std::string& name = "job") {
    absl::StatusOr<v1::GetWorkloadResponse> got =
        kqd().GetWorkload("default", name);
    if (!got.ok()) {
      return absl::StrCat("<", got.status().ToString(), ">");
    }
    const v1::Condition* finished =
        testing::FindCondition(got->workload(), "Finished");
    if (finished == nullptr || finished->status() != "True") {
      return "<not finished>";
    }
    return absl::StrCat(finished->reason(), ": ", finished->message());
  }

  std::filesystem::path dir_;
};

TEST_F(RunnerTest, CommandSucceedsWithTheAdmissionInItsEnvironment) {
  Runner runner(client(),
                Config("echo \"$KQ_WORKLOAD|$KQ_CLUSTER_QUEUE|$KQ_FLAVORS|"
                       "$KQ_NODE_LABELS\" > env.txt"),
                err_);
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  EXPECT_EQ(ReadFile(File("env.txt")),
            "default/job|cq|main:cpu=default,memory=default|arch=x86,zone=a\n");
  EXPECT_EQ(Finished(), "Succeeded: exit code 0");
  EXPECT_THAT(err_.str(), HasSubstr("workload.kueue.x-k8s.io/job created\n"));
  EXPECT_THAT(
      err_.str(),
      HasSubstr("admitted by ClusterQueue cq on flavors "
                "main:cpu=default,memory=default; running: sh -c 'cd "));
  // Admit attached the runner with the lease; the first heartbeat renewed
  // it.
  std::vector<v1::AdmitRequest> admits = client().admit_requests();
  ASSERT_FALSE(admits.empty());
  EXPECT_EQ(admits[0].runner_id(), "host:42");
  EXPECT_EQ(admits[0].lease().seconds(), 3);
  std::vector<v1::HeartbeatRequest> heartbeats = client().heartbeats();
  ASSERT_FALSE(heartbeats.empty());
  EXPECT_EQ(heartbeats[0].runner_id(), "host:42");
  EXPECT_FALSE(heartbeats[0].stopped());
}

TEST_F(RunnerTest, ExitCodeOfTheCommandIsKqsAndRecordedAsFailed) {
  Runner runner(client(), Config("exit 3"), err_);
  EXPECT_EQ(runner.Run(), 3);
  EXPECT_EQ(Finished(), "Failed: exit code 3");
}

TEST_F(RunnerTest, CommandKilledBySignalIs128PlusSignal) {
  Runner runner(client(), Config("kill -KILL $$"), err_);
  EXPECT_EQ(runner.Run(), 137);
  EXPECT_EQ(Finished(), "Failed: killed by signal 9 (SIGKILL)");
}

TEST_F(RunnerTest, CommandNotFoundIs127AndFailsTheWorkload) {
  RunnerConfig config = Config("");
  config.command = {"/nonexistent/kq-test-command", "x"};
  Runner runner(client(), std::move(config), err_);
  EXPECT_EQ(runner.Run(), 127);
  EXPECT_EQ(Finished(),
            "Failed: cannot run \"/nonexistent/kq-test-command\": No such "
            "file or directory");
  EXPECT_THAT(err_.str(),
              HasSubstr("kq: cannot run \"/nonexistent/kq-test-command\""));
}

TEST_F(RunnerTest, WaitingLineIsPrintedWhenItChanges) {
  Block();
  // Ahead of "job" in LocalQueue q: as old, and submitted before it.
  ASSERT_FALSE(testing::IsTrue(SubmitOther("a-first"), "QuotaReserved"));
  Runner runner(client(), Config("true"), err_);
  // Whether the runner was told it waits at `position`.
  auto told = [this](int position) {
    for (const v1::AdmitResponse& pending : client().pending_answers()) {
      if (pending.has_position() && pending.position() == position) {
        return true;
      }
    }
    return false;
  };
  std::thread scheduler([&] {
    ASSERT_TRUE(Eventually([&] { return told(1); }));
    // The blocker ends: a-first takes the cpu, job is next.
    ASSERT_TRUE(kqd().FinishWorkload("default", "blocker", true, "").ok());
    ASSERT_TRUE(Eventually([&] { return told(0); }));
    ASSERT_TRUE(kqd().FinishWorkload("default", "a-first", true, "").ok());
  });
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  scheduler.join();
  const std::string waiting = absl::StrCat("waiting: ", kPendingMessage);
  EXPECT_THAT(err_.str(),
              HasSubstr(absl::StrCat(
                  "created\n", waiting, " (position 1 in ClusterQueue cq)\n",
                  waiting, " (position 0 in ClusterQueue cq)\nadmitted by")));
}

TEST_F(RunnerTest, EvictionStopsTheCommandAndItRunsAgainWhenReadmitted) {
  Runner runner(client(),
                Config("if [ -e first ]; then echo again > second; exit 0; fi; "
                       "touch first; trap 'echo term > term; exit 143' TERM; "
                       "sleep 30 & wait"),
                err_);
  // A workload of higher priority preempts the job; once it finished, the
  // job is admitted again.
  std::string preemptor_uid;
  std::thread preemptor([&] {
    ASSERT_TRUE(
        Eventually([&] { return std::filesystem::exists(File("first")); }));
    preemptor_uid = SubmitOther("preemptor", "high").metadata().uid();
    ASSERT_TRUE(Eventually([&] { return Admitted("preemptor"); }));
    ASSERT_TRUE(kqd().FinishWorkload("default", "preemptor", true, "").ok());
  });
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  preemptor.join();
  EXPECT_EQ(ReadFile(File("term")), "term\n");
  EXPECT_EQ(ReadFile(File("second")), "again\n");
  EXPECT_EQ(Finished(), "Succeeded: exit code 0");
  const std::string why = absl::StrCat(
      "Preempted: Preempted to accommodate a workload (UID: ", preemptor_uid,
      ", JobUID: UNKNOWN) due to prioritization in the ClusterQueue; "
      "preemptor path: /cq; preemptee path: /cq");
  EXPECT_THAT(err_.str(), HasSubstr(absl::StrCat("stopping: ", why, "\n")));
  EXPECT_THAT(err_.str(),
              HasSubstr(absl::StrCat("evicted: ", why,
                                     "; waiting to be admitted again\n")));
  int confirmations = 0;
  for (const v1::HeartbeatRequest& heartbeat : client().heartbeats()) {
    confirmations += heartbeat.stopped();
  }
  EXPECT_EQ(confirmations, 1);
}

TEST_F(RunnerTest, CommandIgnoringSigtermIsKilledAfterTheGracePeriod) {
  RunnerConfig config = Config(
      "if [ -e pid ]; then exit 0; fi; trap '' TERM; echo $$ > pid; "
      "while :; do sleep 0.05; done");
  config.grace = absl::Milliseconds(300);
  Runner runner(client(), std::move(config), err_);
  // An operator's preemption; the quota is free again once the runner
  // confirmed the stop, so kqd admits the job again.
  std::thread preemptor([this] {
    ASSERT_TRUE(Eventually([&] { return !ReadFile(File("pid")).empty(); }));
    v1::PreemptRequest preempt;
    preempt.set_namespace_("default");
    preempt.set_name("job");
    preempt.set_message("by a test");
    ASSERT_TRUE(kqd().Preempt(preempt).ok());
  });
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  preemptor.join();
  EXPECT_THAT(err_.str(),
              HasSubstr("the command did not stop within 300ms: killing it\n"));
  const pid_t first = std::stoi(ReadFile(File("pid")));
  EXPECT_EQ(kill(first, 0), -1) << "the first command still runs";
}

TEST_F(RunnerTest, InterruptWhileRunningForwardsTheSignalAndFailsTheWorkload) {
  Runner runner(client(),
                Config("touch started; trap 'echo int > int; exit 1' INT; "
                       "sleep 30 & wait"),
                err_);
  std::thread user([&] {
    ASSERT_TRUE(
        Eventually([&] { return std::filesystem::exists(File("started")); }));
    runner.Interrupt(SIGINT);
  });
  EXPECT_EQ(runner.Run(), 130) << err_.str();
  user.join();
  EXPECT_EQ(ReadFile(File("int")), "int\n");
  EXPECT_EQ(Finished(), "Failed: interrupted");
  EXPECT_THAT(err_.str(), HasSubstr("interrupted: stopping the command\n"));
}

TEST_F(RunnerTest, InterruptWhileWaitingCancelsTheWorkload) {
  Block();
  Runner runner(client(), Config("touch ran"), err_);
  std::thread user([&] {
    // The Admit that submitted it, then WaitAdmitted.
    ASSERT_TRUE(
        Eventually([&] { return client().admit_requests().size() >= 2; }));
    runner.Interrupt(SIGTERM);
  });
  EXPECT_EQ(runner.Run(), 143) << err_.str();
  user.join();
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
  EXPECT_THAT(Finished(), ::testing::StartsWith("Cancelled: "));
  EXPECT_THAT(err_.str(),
              HasSubstr("interrupted: workload default/job cancelled\n"));
}

TEST_F(RunnerTest, CancelledWhileRunningStopsTheCommandAndFails) {
  Runner runner(client(),
                Config("touch started; trap 'echo term > term; exit 143' TERM; "
                       "sleep 30 & wait"),
                err_);
  std::thread other([this] {
    ASSERT_TRUE(
        Eventually([&] { return std::filesystem::exists(File("started")); }));
    ASSERT_TRUE(kqd().CancelWorkload("default", "job").ok());
  });
  EXPECT_EQ(runner.Run(), kExitError) << err_.str();
  other.join();
  EXPECT_EQ(ReadFile(File("term")), "term\n");
  EXPECT_THAT(err_.str(), HasSubstr("kq: workload default/job finished: "
                                    "Cancelled: The workload was "
                                    "cancelled\n"));
}

TEST_F(RunnerTest, DeactivatedWhileWaitingEndsWithAnError) {
  Block();
  Runner runner(client(), Config("touch ran"), err_);
  std::thread other([this] {
    ASSERT_TRUE(
        Eventually([&] { return client().admit_requests().size() >= 2; }));
    ASSERT_TRUE(kqd().SetWorkloadActive("default", "job", false).ok());
  });
  EXPECT_EQ(runner.Run(), kExitError);
  other.join();
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
  EXPECT_THAT(err_.str(), HasSubstr("kq: workload default/job was "
                                    "deactivated: The workload is "
                                    "deactivated\n"));
}

TEST_F(RunnerTest, TakenNameIsAnErrorNotAnAdoption) {
  SubmitOther("job");
  Runner runner(client(), Config("touch ran"), err_);
  EXPECT_EQ(runner.Run(), kExitError);
  EXPECT_THAT(err_.str(), HasSubstr("kq: ALREADY_EXISTS: "));
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
}

TEST_F(RunnerTest, GeneratedNameIsUsedForTheWholeRun) {
  RunnerConfig config = Config("echo $KQ_WORKLOAD > name");
  config.workload.mutable_metadata()->clear_name();
  config.workload.mutable_metadata()->set_generate_name("run-");
  Runner runner(client(), std::move(config), err_);
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  // kqd appends five random characters to generateName.
  const std::string name = ReadFile(File("name"));
  EXPECT_THAT(name, MatchesRegex("default/run-[a-z0-9]{5}\n"));
  const std::vector<v1::Workload> workloads = AllWorkloads();
  ASSERT_EQ(workloads.size(), 1u);
  EXPECT_EQ(name,
            absl::StrCat("default/", workloads[0].metadata().name(), "\n"));
  EXPECT_EQ(Finished(workloads[0].metadata().name()), "Succeeded: exit code 0");
}

TEST(RunnerHelpersTest, FlavorsEnvListsEveryPodSet) {
  v1::Workload workload = testing::ParseText<v1::Workload>(R"pb(
    status {
      admission {
        cluster_queue: "cq"
        pod_set_assignments {
          name: "main"
          flavors { key: "memory" value: "default" }
          flavors { key: "cpu" value: "default" }
        }
        pod_set_assignments {
          name: "workers"
          flavors { key: "nvidia.com/gpu" value: "a100" }
        }
      }
    }
  )pb");
  EXPECT_EQ(FlavorsEnv(workload),
            "main:cpu=default,memory=default;workers:nvidia.com/gpu=a100");
  EXPECT_EQ(FlavorsEnv(v1::Workload()), "");
}

TEST(RunnerHelpersTest, NodeLabelsEnvMergesEveryFlavor) {
  v1::AdmitResponse admitted;
  v1::PodSetPlacement& main = *admitted.add_placements();
  v1::FlavorPlacement& a = *main.add_flavors();
  (*a.mutable_node_labels())["zone"] = "z1";
  v1::FlavorPlacement& b = *main.add_flavors();
  (*b.mutable_node_labels())["accelerator"] = "a100";
  EXPECT_EQ(NodeLabelsEnv(admitted.placements()), "accelerator=a100,zone=z1");
  EXPECT_EQ(NodeLabelsEnv({}), "");
}

TEST(RunnerHelpersTest, ExitCodesAndMessages) {
  struct Case {
    std::string name;
    int wait_status;
    int want_code;
    std::string want_message;
  };
  for (const Case& tc : std::vector<Case>{
           {"exit_0", 0 << 8, 0, "exit code 0"},
           {"exit_3", 3 << 8, 3, "exit code 3"},
           {"killed", SIGKILL, 137, "killed by signal 9 (SIGKILL)"},
           {"terminated", SIGTERM, 143, "killed by signal 15 (SIGTERM)"},
       }) {
    SCOPED_TRACE(tc.name);
    EXPECT_EQ(ExitCodeOf(tc.wait_status), tc.want_code);
    EXPECT_EQ(DescribeWaitStatus(tc.wait_status), tc.want_message);
  }
}

TEST(RunnerHelpersTest, CommandLineQuotesLikeAShell) {
  EXPECT_EQ(CommandLine({"sleep", "30"}), "sleep 30");
  EXPECT_EQ(CommandLine({"sh", "-c", "echo it's $HOME"}),
            "sh -c 'echo it'\\''s $HOME'");
  EXPECT_EQ(CommandLine({"python3", "train.py", "--lr=0.1", ""}),
            "python3 train.py --lr=0.1 ''");
}

TEST(RunnerHelpersTest, DefaultRunnerIdIsHostAndPid) {
  EXPECT_THAT(DefaultRunnerId(),
              ::testing::EndsWith(absl::StrCat(":", getpid())));
}

}  // namespace
}  // namespace kq::cli
