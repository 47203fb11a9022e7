// RunCli: argument parsing, exit codes and wiring, with a FakeClient.

#include "cli/app.h"

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "kq/client/client.h"
#include "tests/cli/fake_client.h"
#include "tests/cli/test_objects.h"

namespace kq::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class AppTest : public ::testing::Test {
 protected:
  AppTest() {
    env_.connect = [this](const std::string& server) -> client::Client& {
      servers_.push_back(server);
      return client_;
    };
    env_.default_server = "127.0.0.1:7070";
    env_.in = &in_;
    env_.out = &out_;
    env_.err = &err_;
    env_.now = testing::kNow;
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "kq");
    return RunCli(args, env_);
  }

  testing::FakeClient client_{testing::kNow};
  std::vector<std::string> servers_;
  std::istringstream in_;
  std::ostringstream out_;
  std::ostringstream err_;
  Environment env_;
};

TEST_F(AppTest, NoCommandIsAUsageError) {
  EXPECT_EQ(Run({}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("subcommand"));
}

TEST_F(AppTest, UnknownCommandIsAUsageError) {
  EXPECT_EQ(Run({"frobnicate"}), kExitUsage);
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
  EXPECT_THAT(client_.submitted(), IsEmpty());
}

TEST_F(AppTest, SubmitWithBadRequestIsAUsageError) {
  EXPECT_EQ(Run({"submit", "--queue", "q", "--request", "cpu"}), kExitUsage);
  EXPECT_THAT(err_.str(), HasSubstr("invalid --request item \"cpu\""));
  EXPECT_THAT(client_.submitted(), IsEmpty());
}

TEST_F(AppTest, SubmitPassesEveryFlag) {
  ASSERT_EQ(Run({"submit", "--queue", "ml-jobs", "-n", "team-ml", "--name",
                 "w1", "--count", "3", "--request", "cpu=2", "--priority-class",
                 "experiment", "--pod-set", "workers"}),
            kExitOk)
      << err_.str();
  ASSERT_EQ(client_.submitted().size(), 1u);
  const v1::Workload& sent = client_.submitted()[0];
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
  EXPECT_THAT(client_.apply_requests(), IsEmpty());
}

TEST_F(AppTest, ApplyWithoutFileIsAUsageError) {
  EXPECT_EQ(Run({"apply"}), kExitUsage);
}

TEST_F(AppTest, GetFlagsReachTheCommand) {
  client_.PutWorkload(testing::PendingWorkload());
  ASSERT_EQ(Run({"get", "wl", "-A", "-o", "wide"}), kExitOk) << err_.str();
  EXPECT_THAT(out_.str(), HasSubstr("NAMESPACE"));
  EXPECT_THAT(out_.str(), HasSubstr("PRIORITY"));
  EXPECT_THAT(out_.str(), HasSubstr("team-ml"));
}

TEST_F(AppTest, GetBadOutputIsAUsageError) {
  EXPECT_EQ(Run({"get", "cq", "-o", "xml"}), kExitUsage);
}

TEST_F(AppTest, CancelTakesOneOrTwoArguments) {
  client_.PutWorkload(testing::PendingWorkload());
  EXPECT_EQ(Run({"cancel", "wl", "job-pending", "-n", "team-ml"}), kExitOk)
      << err_.str();
  EXPECT_EQ(Run({"cancel"}), kExitUsage);
  EXPECT_EQ(Run({"cancel", "a", "b", "c"}), kExitUsage);
}

}  // namespace
}  // namespace kq::cli
