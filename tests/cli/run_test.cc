// `kq run`: the Runner against FakeClient, running real commands (sh) in
// a scratch directory; and its pure helpers.

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

#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

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

class RunnerTest : public ::testing::Test {
 protected:
  RunnerTest() {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "kq_run_test_", getpid(), "_",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    // The LocalQueue the waiting line names the ClusterQueue of.
    v1::ApplyRequest apply;
    v1::LocalQueue& queue = *apply.add_objects()->mutable_local_queue();
    queue.mutable_metadata()->set_namespace_("default");
    queue.mutable_metadata()->set_name("q");
    queue.mutable_spec()->set_cluster_queue("cq");
    EXPECT_TRUE(client_.Apply(apply).ok());
  }
  ~RunnerTest() override { std::filesystem::remove_all(dir_); }

  // A Runner for `name` in LocalQueue q asking cpu=2, running `script`
  // with sh in dir_.
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
        .lease = absl::Milliseconds(300),
        .grace = absl::Seconds(10),
        .poll = absl::Milliseconds(50),
        .reattach_delay = absl::Milliseconds(10),
    };
  }

  std::filesystem::path File(const std::string& name) const {
    return dir_ / name;
  }

  const v1::Condition* Condition(const v1::Workload& workload,
                                 const std::string& type) {
    for (const v1::Condition& condition : workload.status().conditions()) {
      if (condition.type() == type) {
        return &condition;
      }
    }
    return nullptr;
  }

  // The Finished condition's "Reason: message" of workload `name`.
  std::string Finished(const std::string& name = "job") {
    std::optional<v1::Workload> workload =
        client_.FindWorkload("default", name);
    if (!workload.has_value()) {
      return "<no workload>";
    }
    const v1::Condition* finished = Condition(*workload, "Finished");
    if (finished == nullptr) {
      return "<not finished>";
    }
    return absl::StrCat(finished->reason(), ": ", finished->message());
  }

  std::filesystem::path dir_;
  testing::FakeClient client_{testing::kNow};
  std::ostringstream err_;
};

TEST_F(RunnerTest, CommandSucceedsWithTheAdmissionInItsEnvironment) {
  client_.AdmitOnSubmit("cq", "default");
  client_.SetFlavorNodeLabels("default", {{"zone", "a"}, {"arch", "x86"}});
  Runner runner(client_,
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
  std::vector<v1::AdmitRequest> admits = client_.admit_requests();
  ASSERT_FALSE(admits.empty());
  EXPECT_EQ(admits[0].runner_id(), "host:42");
  EXPECT_EQ(admits[0].lease().nanos(), 300'000'000);
  std::vector<v1::HeartbeatRequest> heartbeats = client_.heartbeats();
  ASSERT_FALSE(heartbeats.empty());
  EXPECT_EQ(heartbeats[0].runner_id(), "host:42");
  EXPECT_FALSE(heartbeats[0].stopped());
}

TEST_F(RunnerTest, ExitCodeOfTheCommandIsKqsAndRecordedAsFailed) {
  client_.AdmitOnSubmit("cq", "default");
  Runner runner(client_, Config("exit 3"), err_);
  EXPECT_EQ(runner.Run(), 3);
  EXPECT_EQ(Finished(), "Failed: exit code 3");
}

TEST_F(RunnerTest, CommandKilledBySignalIs128PlusSignal) {
  client_.AdmitOnSubmit("cq", "default");
  Runner runner(client_, Config("kill -KILL $$"), err_);
  EXPECT_EQ(runner.Run(), 137);
  EXPECT_EQ(Finished(), "Failed: killed by signal 9 (SIGKILL)");
}

TEST_F(RunnerTest, CommandNotFoundIs127AndFailsTheWorkload) {
  client_.AdmitOnSubmit("cq", "default");
  RunnerConfig config = Config("");
  config.command = {"/nonexistent/kq-test-command", "x"};
  Runner runner(client_, std::move(config), err_);
  EXPECT_EQ(runner.Run(), 127);
  EXPECT_EQ(Finished(),
            "Failed: cannot run \"/nonexistent/kq-test-command\": No such "
            "file or directory");
  EXPECT_THAT(err_.str(),
              HasSubstr("kq: cannot run \"/nonexistent/kq-test-command\""));
}

TEST_F(RunnerTest, WaitingLineIsPrintedWhenItChanges) {
  client_.PendOnSubmit(kPendingMessage);
  // Ahead of "job" in LocalQueue q.
  v1::Workload ahead = BuildWorkload({.queue = "q", .name = "a-first"});
  ahead.mutable_status()->add_conditions()->set_type("QuotaReserved");
  client_.PutWorkload(ahead);
  Runner runner(client_, Config("true"), err_);
  std::thread scheduler([this] {
    ASSERT_TRUE(
        Eventually([&] { return client_.admit_requests().size() >= 3; }));
    client_.AdmitPending("default", "a-first", "cq", "default");
    const size_t seen = client_.admit_requests().size();
    ASSERT_TRUE(Eventually(
        [&] { return client_.admit_requests().size() >= seen + 3; }));
    client_.AdmitPending("default", "job", "cq", "default");
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
  client_.AdmitOnSubmit("cq", "default");
  // Re-admitted once the stop is confirmed, as after a preemptor finished.
  client_.OnHeartbeat(
      [this](const v1::HeartbeatRequest& request, const absl::Status& status) {
        if (request.stopped() && status.ok()) {
          client_.AdmitPending("default", "job", "cq", "default");
        }
      });
  Runner runner(client_,
                Config("if [ -e first ]; then echo again > second; exit 0; fi; "
                       "touch first; trap 'echo term > term; exit 143' TERM; "
                       "sleep 30 & wait"),
                err_);
  std::thread preemptor([this] {
    ASSERT_TRUE(
        Eventually([&] { return std::filesystem::exists(File("first")); }));
    client_.Evict("default", "job", "Preempted",
                  "Preempted to accommodate a workload (UID: uid-9) due to "
                  "prioritization in the ClusterQueue");
  });
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  preemptor.join();
  EXPECT_EQ(ReadFile(File("term")), "term\n");
  EXPECT_EQ(ReadFile(File("second")), "again\n");
  EXPECT_EQ(Finished(), "Succeeded: exit code 0");
  const std::string why =
      "Preempted: Preempted to accommodate a workload (UID: uid-9) due to "
      "prioritization in the ClusterQueue";
  EXPECT_THAT(err_.str(), HasSubstr(absl::StrCat("stopping: ", why, "\n")));
  EXPECT_THAT(err_.str(),
              HasSubstr(absl::StrCat("evicted: ", why,
                                     "; waiting to be admitted again\n")));
  int confirmations = 0;
  for (const v1::HeartbeatRequest& heartbeat : client_.heartbeats()) {
    confirmations += heartbeat.stopped();
  }
  EXPECT_EQ(confirmations, 1);
}

TEST_F(RunnerTest, CommandIgnoringSigtermIsKilledAfterTheGracePeriod) {
  client_.AdmitOnSubmit("cq", "default");
  client_.OnHeartbeat(
      [this](const v1::HeartbeatRequest& request, const absl::Status& status) {
        if (request.stopped() && status.ok()) {
          client_.AdmitPending("default", "job", "cq", "default");
        }
      });
  RunnerConfig config = Config(
      "if [ -e pid ]; then exit 0; fi; trap '' TERM; echo $$ > pid; "
      "while :; do sleep 0.05; done");
  config.grace = absl::Milliseconds(300);
  Runner runner(client_, std::move(config), err_);
  std::thread preemptor([this] {
    ASSERT_TRUE(Eventually([&] { return !ReadFile(File("pid")).empty(); }));
    client_.Evict("default", "job", "Preempted", "by a test");
  });
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  preemptor.join();
  EXPECT_THAT(err_.str(),
              HasSubstr("the command did not stop within 300ms: killing it\n"));
  const pid_t first = std::stoi(ReadFile(File("pid")));
  EXPECT_EQ(kill(first, 0), -1) << "the first command still runs";
}

TEST_F(RunnerTest, InterruptWhileRunningForwardsTheSignalAndFailsTheWorkload) {
  client_.AdmitOnSubmit("cq", "default");
  Runner runner(client_,
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
  client_.PendOnSubmit(kPendingMessage);
  Runner runner(client_, Config("touch ran"), err_);
  std::thread user([&] {
    ASSERT_TRUE(
        Eventually([&] { return client_.admit_requests().size() >= 2; }));
    runner.Interrupt(SIGTERM);
  });
  EXPECT_EQ(runner.Run(), 143) << err_.str();
  user.join();
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
  EXPECT_THAT(client_.cancels(),
              Contains(std::pair<std::string, std::string>("default", "job")));
  EXPECT_THAT(Finished(), HasSubstr("Cancelled"));
  EXPECT_THAT(err_.str(),
              HasSubstr("interrupted: workload default/job cancelled\n"));
}

TEST_F(RunnerTest, CancelledWhileRunningStopsTheCommandAndFails) {
  client_.AdmitOnSubmit("cq", "default");
  Runner runner(client_,
                Config("touch started; trap 'echo term > term; exit 143' TERM; "
                       "sleep 30 & wait"),
                err_);
  std::thread other([this] {
    ASSERT_TRUE(
        Eventually([&] { return std::filesystem::exists(File("started")); }));
    ASSERT_TRUE(client_.CancelWorkload("default", "job").ok());
  });
  EXPECT_EQ(runner.Run(), kExitError) << err_.str();
  other.join();
  EXPECT_EQ(ReadFile(File("term")), "term\n");
  EXPECT_THAT(err_.str(), HasSubstr("kq: workload default/job finished: "
                                    "Cancelled: cancelled by the user\n"));
}

TEST_F(RunnerTest, DeactivatedWhileWaitingEndsWithAnError) {
  client_.PendOnSubmit(kPendingMessage);
  Runner runner(client_, Config("touch ran"), err_);
  std::thread other([this] {
    ASSERT_TRUE(
        Eventually([&] { return client_.admit_requests().size() >= 2; }));
    ASSERT_TRUE(client_.SetWorkloadActive("default", "job", false).ok());
  });
  EXPECT_EQ(runner.Run(), kExitError);
  other.join();
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
  EXPECT_THAT(err_.str(), HasSubstr("kq: workload default/job was "
                                    "deactivated: The workload is "
                                    "deactivated\n"));
}

TEST_F(RunnerTest, TakenNameIsAnErrorNotAnAdoption) {
  client_.PutWorkload(BuildWorkload({.queue = "q", .name = "job"}));
  Runner runner(client_, Config("touch ran"), err_);
  EXPECT_EQ(runner.Run(), kExitError);
  EXPECT_THAT(err_.str(), HasSubstr("kq: ALREADY_EXISTS: "));
  EXPECT_FALSE(std::filesystem::exists(File("ran")));
}

TEST_F(RunnerTest, GeneratedNameIsUsedForTheWholeRun) {
  client_.AdmitOnSubmit("cq", "default");
  RunnerConfig config = Config("echo $KQ_WORKLOAD > name");
  config.workload.mutable_metadata()->clear_name();
  config.workload.mutable_metadata()->set_generate_name("run-");
  Runner runner(client_, std::move(config), err_);
  EXPECT_EQ(runner.Run(), 0) << err_.str();
  EXPECT_EQ(ReadFile(File("name")), "default/run-00001\n");
  EXPECT_EQ(Finished("run-00001"), "Succeeded: exit code 0");
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
