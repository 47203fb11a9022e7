#pragma once

// KqdFixture: the CLI tests' world. Each test gets a real kqd of its own,
// started in the test's process (tests/testing/kqd_server.h), and runs `kq`
// commands against it through a RecordingClient, with string streams for
// stdout and stderr. Situations are made with kqd's own RPCs, through the
// unrecorded client kqd(): quota admits, no quota (or a Hold) keeps
// pending, FinishWorkload finishes.
//
// One kqd per test rather than per suite: ctest runs each test case in a
// process of its own anyway, a kqd starts in about 10 ms, and a fresh one
// makes revisions and cluster-scoped objects the test's alone.

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cli/command.h"
#include "gtest/gtest.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "kq/client/client.h"
#include "tests/cli/recording_client.h"
#include "tests/testing/kqd_server.h"

namespace kq::cli::testing {

// The seed example of the project, as users write it: ResourceFlavors
// gpu-a100 (a node label) and default-cpu, ClusterQueue ai-training-queue
// (16 GPUs, 64 cpu and 256Gi on gpu-a100, preempting lower priorities),
// LocalQueue team-ml/ml-jobs and WorkloadPriorityClass production-training
// (1000).
extern const char kSeedSetup[];

class KqdFixture : public ::testing::Test {
 protected:
  KqdFixture();
  void SetUp() override;

  // What a command runs with: the recording client, out_, err_ and now_.
  CommandContext Context() {
    return CommandContext{
        .client = *client_, .out = out_, .err = err_, .now = now_};
  }
  // The real client: for making situations and reading kqd's state, not
  // recorded.
  client::Client& kqd() { return kqd_->client(); }
  // What the commands talk to.
  RecordingClient& client() { return *client_; }
  // Empties out_ and err_.
  void Clear();
  // Replaces this test's kqd (and its clients) with a fresh one started
  // with `options`.
  void RestartKqd(const kq::testing::KqdServerOptions& options);

  // Applies the configuration objects and workloads (Jobs included) of a
  // YAML manifest with one ApplyRequest; namespaced documents without a
  // namespace go to `namespace_name`. Fails the test on any error.
  void ApplyYaml(const std::string& yaml,
                 const std::string& namespace_name = "default");
  // Submits `workload`; returns it as kqd answered (admitted already when
  // its ClusterQueue had the quota). Fails the test on an error.
  v1::Workload Submit(const v1::Workload& workload);
  // The workload as kqd has it now; fails the test when it is missing.
  v1::Workload GetWorkload(const std::string& namespace_name,
                           const std::string& name);
  // The object as kqd has it now; fails the test when it is missing.
  v1::ConfigObject GetObject(const std::string& kind,
                             const std::string& namespace_name,
                             const std::string& name);
  // Every workload kqd has, finished ones included, in (namespace, name)
  // order.
  std::vector<v1::Workload> AllWorkloads();
  // The seed example's queues (kSeedSetup).
  void ApplySeedQueues() { ApplyYaml(kSeedSetup); }
  // Workloads in team-ml's LocalQueue ml-jobs, once the seed's queues are
  // there, as kqd answered the submission (or the finish):
  // job-llm-finetune-0919: 4 pods of 8 cpu, 32Gi and 1 GPU, priority class
  // production-training; admitted (32 of 64 cpu, 4 of 16 GPUs).
  v1::Workload SubmitAdmitted();
  // job-pending: 16 pods of 8 cpu and 1 GPU; 128 cpu never fit in 64, so
  // it stays pending whatever else runs.
  v1::Workload SubmitPending();
  // job-done: 1 pod of 2 cpu and 4Gi; admitted, then finished (Succeeded).
  v1::Workload SubmitFinished();
  // Sets the stopPolicy of a ClusterQueue or LocalQueue; fails the test on
  // an error.
  void SetStopPolicy(const std::string& kind, const std::string& namespace_name,
                     const std::string& name, const std::string& policy);

  // kqd stamps objects with the real time; AGE columns are computed
  // against this: 3 days and 30 minutes after the test started, so every
  // object a test makes prints as "3d" old however long the test took
  // (up to 30 minutes).
  const absl::Time now_;
  std::unique_ptr<kq::testing::KqdServer> kqd_;
  std::unique_ptr<RecordingClient> client_;
  std::ostringstream out_;
  std::ostringstream err_;
};

// The Condition of `type` on `workload`, or nullptr.
const v1::Condition* FindCondition(const v1::Workload& workload,
                                   const std::string& type);
// Whether `workload` has condition `type` with status True.
bool IsTrue(const v1::Workload& workload, const std::string& type);

}  // namespace kq::cli::testing
