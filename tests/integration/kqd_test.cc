// A real kqd on a loopback port, driven through the C++ client: the
// foundation's end-to-end guarantees, including kill -9.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

#include "manifest/manifest.h"
#include "tests/integration/kqd_process.h"
#include "tests/testing/temp_dir.h"

namespace kq::testing {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.is_open()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string SeedPath(const std::string& file) {
  return std::string(KQ_EXAMPLES_DIR) + "/seed/" + file;
}

// The seed's configuration, with `namespaceSelector: {}` added so the
// ClusterQueue admits from every namespace.
v1::ApplyRequest SeedConfig() {
  v1::ApplyRequest request;
  for (const char* file : {"resource-flavors.yaml", "cluster-queue.yaml",
                           "local-queue.yaml", "workload-priority.yaml"}) {
    auto docs = manifest::ParseManifests(ReadFile(SeedPath(file)));
    EXPECT_TRUE(docs.ok()) << docs.status();
    for (manifest::Document& doc : *docs) {
      EXPECT_TRUE(doc.status.ok()) << doc.status;
      if (!doc.config_object) continue;
      if (doc.config_object->has_cluster_queue()) {
        doc.config_object->mutable_cluster_queue()
            ->mutable_spec()
            ->mutable_namespace_selector();
      }
      *request.add_objects() = *doc.config_object;
    }
  }
  return request;
}

v1::Workload GpuWorkload(const std::string& name, int count,
                         const std::string& priority_class = "") {
  v1::Workload wl;
  wl.mutable_metadata()->set_name(name);
  wl.mutable_metadata()->set_namespace_("team-ml");
  wl.mutable_spec()->set_queue_name("ml-jobs");
  wl.mutable_spec()->set_priority_class_name(priority_class);
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(count);
  (*ps->mutable_requests())["nvidia.com/gpu"] = "1";
  (*ps->mutable_requests())["cpu"] = "2";
  (*ps->mutable_requests())["memory"] = "8Gi";
  return wl;
}

bool IsAdmitted(const v1::Workload& wl) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == "Admitted") return c.status() == "True";
  }
  return false;
}

bool IsFinished(const v1::Workload& wl) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == "Finished") return c.status() == "True";
  }
  return false;
}

class KqdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kqd_ = std::make_unique<KqdProcess>(dir_.path());
    ASSERT_TRUE(kqd_->Start().ok());
    client_ = kqd_->NewClient();
  }
  void Restart(bool kill) {
    if (kill) {
      kqd_->Kill();
    } else {
      EXPECT_EQ(kqd_->Terminate(), 0);
    }
    ASSERT_TRUE(kqd_->Start().ok());
    client_ = kqd_->NewClient();
  }

  // The team-ml workloads kqd holds, by name (empty when the list fails).
  std::map<std::string, v1::Workload> Stored(bool with_finished) {
    v1::ListWorkloadsRequest list;
    list.set_namespace_("team-ml");
    list.set_include_finished(with_finished);
    auto listed = client_->ListWorkloads(list);
    EXPECT_TRUE(listed.ok()) << listed.status();
    std::map<std::string, v1::Workload> stored;
    if (!listed.ok()) return stored;
    for (const v1::Workload& wl : listed->workloads()) {
      stored[wl.metadata().name()] = wl;
    }
    return stored;
  }

  ScopedTempDir dir_;
  std::unique_ptr<KqdProcess> kqd_;
  std::unique_ptr<client::Client> client_;
};

TEST_F(KqdTest, SubmitAdmitFinishCancel) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  auto a = client_->SubmitWorkload(GpuWorkload("a", 4));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_TRUE(IsAdmitted(a->workload()));
  EXPECT_EQ(a->workload().status().admission().cluster_queue(),
            "ai-training-queue");
  const auto& flavors =
      a->workload().status().admission().pod_set_assignments(0).flavors();
  EXPECT_EQ(flavors.at("nvidia.com/gpu"), "gpu-a100");
  ASSERT_EQ(a->placements_size(), 1);
  EXPECT_EQ(a->placements(0).flavors(0).node_labels().at(
                "cloud.google.com/gke-accelerator"),
            "nvidia-tesla-a100");

  // 16 GPUs nominal: a (4) + b (12) fill it; c waits.
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("b", 12)).ok());
  auto c = client_->SubmitWorkload(GpuWorkload("c", 4));
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(IsAdmitted(c->workload()));

  auto finished = client_->FinishWorkload("team-ml", "a", true, "");
  ASSERT_TRUE(finished.ok()) << finished.status();
  auto c_now = client_->GetWorkload("team-ml", "c");
  ASSERT_TRUE(c_now.ok());
  EXPECT_TRUE(IsAdmitted(c_now->workload()));

  auto cancelled = client_->CancelWorkload("team-ml", "b");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_TRUE(IsFinished(*cancelled));
  auto again = client_->CancelWorkload("team-ml", "b");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  auto unknown = client_->GetWorkload("team-ml", "nope");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);

  auto cq = client_->GetObject("ClusterQueue", "", "ai-training-queue");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ(cq->cluster_queue().status().admitted_workloads(), 1);
}

TEST_F(KqdTest, AdmissionCheckReadyAdmitsReservedWorkload) {
  v1::ApplyRequest config;
  auto docs = manifest::ParseManifests(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: prov}
spec: {controllerName: example.com/prov}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  admissionChecks: [prov]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ns, name: lq}
spec: {clusterQueue: cq}
)");
  ASSERT_TRUE(docs.ok()) << docs.status();
  for (manifest::Document& doc : *docs) {
    ASSERT_TRUE(doc.status.ok()) << doc.status;
    ASSERT_TRUE(doc.config_object.has_value());
    *config.add_objects() = *doc.config_object;
  }
  auto applied = client_->Apply(config);
  ASSERT_TRUE(applied.ok()) << applied.status();

  v1::Workload wl;
  wl.mutable_metadata()->set_name("w");
  wl.mutable_metadata()->set_namespace_("ns");
  wl.mutable_spec()->set_queue_name("lq");
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "2";
  auto submitted = client_->SubmitWorkload(wl);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  // Quota reserved, waiting for the check.
  EXPECT_EQ(submitted->workload().status().admission().cluster_queue(), "cq");
  EXPECT_FALSE(IsAdmitted(submitted->workload()));
  ASSERT_EQ(submitted->workload().status().admission_checks_size(), 1);
  EXPECT_EQ(submitted->workload().status().admission_checks(0).state(),
            "Pending");

  v1::SetAdmissionCheckStateRequest request;
  request.set_namespace_("ns");
  request.set_workload("w");
  request.set_check("prov");
  request.set_state("Ready");
  request.set_message("provisioned");
  auto ready = client_->SetAdmissionCheckState(request);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_TRUE(IsAdmitted(*ready));
  EXPECT_EQ(ready->status().admission_checks(0).state(), "Ready");
  EXPECT_EQ(ready->status().admission_checks(0).message(), "provisioned");
  auto cq = client_->GetObject("ClusterQueue", "", "cq");
  ASSERT_TRUE(cq.ok());
  EXPECT_EQ(cq->cluster_queue().status().admitted_workloads(), 1);

  // Errors cross the wire with their codes.
  request.set_check("nope");
  EXPECT_EQ(client_->SetAdmissionCheckState(request).status().code(),
            absl::StatusCode::kNotFound);
  request.set_check("prov");
  request.set_state("Maybe");
  EXPECT_EQ(client_->SetAdmissionCheckState(request).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(KqdTest, BadInputIsRefusedAndChangesNothing) {
  v1::ApplyRequest request = SeedConfig();
  v1::ConfigObject* bad = request.add_objects();
  bad->mutable_resource_flavor()->mutable_metadata()->set_name("Bad_Name");
  auto result = client_->Apply(request);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("metadata.name"));
  auto listed = client_->ListObjects("ResourceFlavor", "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->objects_size(), 0);

  v1::ApplyRequest quantity = SeedConfig();
  quantity.mutable_objects(2)
      ->mutable_cluster_queue()
      ->mutable_spec()
      ->mutable_resource_groups(0)
      ->mutable_flavors(0)
      ->mutable_resources(0)
      ->set_nominal_quota("-3");
  result = client_->Apply(quantity);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("nominalQuota"));

  v1::Workload no_pod_sets = GpuWorkload("x", 1);
  no_pod_sets.mutable_spec()->clear_pod_sets();
  EXPECT_EQ(client_->SubmitWorkload(no_pod_sets).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(KqdTest, GracefulRestartKeepsEverything) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("a", 4)).ok());
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("big", 40)).ok());
  Restart(/*kill=*/false);
  auto a = client_->GetWorkload("team-ml", "a");
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(IsAdmitted(a->workload()));
  auto big = client_->GetWorkload("team-ml", "big");
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE(IsAdmitted(big->workload()));
}

// Submitters race a SIGKILL. Every acknowledged workload, and every
// acknowledged admission, must survive; usage must equal the sum of what
// the admitted workloads hold and never exceed the quota.
TEST_F(KqdTest, KillNineKeepsAcknowledgedWorkloadsAndAdmissions) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  std::mutex mu;
  std::map<std::string, bool> acked;  // name -> admitted when acknowledged
  std::atomic<int> count{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 4; ++t) {
    submitters.emplace_back([&, t] {
      auto client = kqd_->NewClient();
      for (int i = 0; !stop; ++i) {
        std::string name = "w-" + std::to_string(t) + "-" + std::to_string(i);
        auto r = client->SubmitWorkload(GpuWorkload(name, 1));
        if (!r.ok()) break;  // kqd is gone
        std::lock_guard<std::mutex> lock(mu);
        acked[name] = IsAdmitted(r->workload());
        ++count;
        if (i % 3 == 0) {
          // Finish some admitted ones so admissions keep happening.
          if (acked[name] &&
              client->FinishWorkload("team-ml", name, true, "").ok()) {
            acked[name] = false;
          }
        }
      }
    });
  }
  while (count < 200) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kqd_->Kill();
  stop = true;
  for (std::thread& t : submitters) t.join();

  ASSERT_TRUE(kqd_->Start().ok());
  client_ = kqd_->NewClient();
  std::map<std::string, v1::Workload> stored = Stored(/*with_finished=*/true);
  int gpus_reserved = 0;
  for (const auto& [name, wl] : stored) {
    if (!IsFinished(wl) && wl.status().has_admission()) ++gpus_reserved;
  }
  for (const auto& [name, admitted] : acked) {
    ASSERT_TRUE(stored.count(name)) << "acknowledged workload lost: " << name;
    if (admitted) {
      EXPECT_TRUE(IsAdmitted(stored[name]) || IsFinished(stored[name]))
          << "acknowledged admission lost: " << name;
    }
  }
  EXPECT_LE(gpus_reserved, 16);
  auto cq = client_->GetObject("ClusterQueue", "", "ai-training-queue");
  ASSERT_TRUE(cq.ok());
  std::string gpu_total;
  for (const v1::FlavorUsage& f :
       cq->cluster_queue().status().flavors_reservation()) {
    for (const v1::ResourceUsage& r : f.resources()) {
      if (f.name() == "gpu-a100" && r.name() == "nvidia.com/gpu") {
        gpu_total = r.total();
      }
    }
  }
  EXPECT_EQ(gpu_total, std::to_string(gpus_reserved));
}

// SubmitWorkload and FinishWorkload are answered by the engine's thread
// after its commit (callback handlers): their refusals keep their codes.
TEST_F(KqdTest, SubmitAndFinishRefusalsKeepTheirCodes) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("a", 16)).ok());
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("waits", 1)).ok());
  EXPECT_EQ(client_->SubmitWorkload(GpuWorkload("a", 1)).status().code(),
            absl::StatusCode::kAlreadyExists);
  v1::Workload bad = GpuWorkload("bad", 1);
  (*bad.mutable_spec()->mutable_pod_sets(0)->mutable_requests())["cpu"] =
      "lots";
  absl::Status refused = client_->SubmitWorkload(bad).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("requests"));
  absl::Status pending =
      client_->FinishWorkload("team-ml", "waits", true, "").status();
  EXPECT_EQ(pending.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(pending.message()),
              HasSubstr("holds no quota reservation"));
  EXPECT_EQ(
      client_->FinishWorkload("team-ml", "nope", true, "").status().code(),
      absl::StatusCode::kNotFound);
  auto finished = client_->FinishWorkload("team-ml", "a", false, "oom");
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_TRUE(IsFinished(*finished));

  // CancelWorkload and Heartbeat, the other callback handlers.
  absl::Status again = client_->CancelWorkload("team-ml", "a").status();
  EXPECT_EQ(again.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(client_->CancelWorkload("team-ml", "nope").status().code(),
            absl::StatusCode::kNotFound);
  v1::HeartbeatRequest beat;
  beat.set_namespace_("team-ml");
  beat.set_name("a");
  beat.set_runner_id("runner-1");
  EXPECT_EQ(client_->Heartbeat(beat).status().code(),
            absl::StatusCode::kFailedPrecondition);
  beat.set_name("nope");
  EXPECT_EQ(client_->Heartbeat(beat).status().code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("runs", 1)).ok());
  beat.set_name("runs");
  auto lease = client_->Heartbeat(beat);
  ASSERT_TRUE(lease.ok()) << lease.status();
  EXPECT_FALSE(lease->stop());
  EXPECT_TRUE(lease->has_lease_expire_time());
  auto cancelled = client_->CancelWorkload("team-ml", "runs");
  ASSERT_TRUE(cancelled.ok()) << cancelled.status();
  EXPECT_TRUE(IsFinished(*cancelled));
}

// A SIGTERM while submissions are in flight: kqd answers what it took in,
// exits cleanly, and every acknowledged workload is there after the
// restart.
TEST_F(KqdTest, SigtermWithSubmissionsInFlightKeepsAcknowledgedOnes) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  std::mutex mu;
  std::vector<std::string> acked;
  std::atomic<bool> stop{false};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 8; ++t) {
    submitters.emplace_back([&, t] {
      auto client = kqd_->NewClient();
      for (int i = 0; !stop; ++i) {
        std::string name = absl::StrCat("s-", t, "-", i);
        if (!client->SubmitWorkload(GpuWorkload(name, 1)).ok()) break;
        std::lock_guard<std::mutex> lock(mu);
        acked.push_back(name);
      }
    });
  }
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (acked.size() >= 200) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(kqd_->Terminate(), 0);
  stop = true;
  for (std::thread& t : submitters) t.join();

  ASSERT_TRUE(kqd_->Start().ok());
  client_ = kqd_->NewClient();
  const std::map<std::string, v1::Workload> stored =
      Stored(/*with_finished=*/false);
  for (const std::string& name : acked) {
    EXPECT_TRUE(stored.count(name)) << "acknowledged workload lost: " << name;
  }
}

// An HTTP/2 connection to kqd that says hello and then never reads again,
// as a connected client with no call in flight looks to kqd between its
// polls. The socket closes with the object.
class SilentConnection {
 public:
  explicit SilentConnection(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      return;
    }
    // The client preface, then an empty SETTINGS frame (length 0, type 4,
    // no flags, stream 0).
    const std::string hello = std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") +
                              std::string("\0\0\0\x04\0\0\0\0\0", 9);
    connected_ = write(fd_, hello.data(), hello.size()) ==
                 static_cast<ssize_t>(hello.size());
  }
  ~SilentConnection() { close(fd_); }
  bool connected() const { return connected_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// kqd lets its calls finish when it stops, but an open connection with no
// call on it is not one: gRPC's graceful shutdown alone waited the whole
// 5 s grace for such a connection to answer its GOAWAY's ping.
TEST_F(KqdTest, SigtermDoesNotWaitForIdleConnections) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());  // connected, now idle
  SilentConnection silent(kqd_->port());
  ASSERT_TRUE(silent.connected());
  // Let kqd's transport take the connection in before the signal.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kqd_->Terminate(), 0);
  const auto took = std::chrono::steady_clock::now() - start;
  // Far from both: ~10 ms now, 5 s before.
  EXPECT_LT(took, std::chrono::milliseconds(2500));

  // What was applied before the stop is kept.
  ASSERT_TRUE(kqd_->Start().ok());
  client_ = kqd_->NewClient();
  EXPECT_TRUE(client_->SubmitWorkload(GpuWorkload("after", 1)).ok());
}

TEST_F(KqdTest, WatchStreamsCommittedChangesInOrder) {
  auto listed = client_->ListObjects("ResourceFlavor", "");
  ASSERT_TRUE(listed.ok());
  int64_t from = listed->revision();
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  ASSERT_TRUE(client_->SubmitWorkload(GpuWorkload("a", 1)).ok());
  v1::WatchRequest request;
  request.set_from_revision(from);
  request.add_kinds("Workload");
  std::vector<v1::WatchEvent> events;
  absl::Status status = client_->Watch(request, [&](const v1::WatchEvent& e) {
    events.push_back(e);
    return false;
  });
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type(), v1::WatchEvent::ADDED);
  EXPECT_EQ(events[0].workload().metadata().name(), "a");
  EXPECT_GT(events[0].revision(), from);
}

// Pod templates may travel as JSON text both ways: sent as text (kept as
// given), answered as text when the request asks, and as a Struct
// otherwise; a kill -9 changes none of it.
TEST_F(KqdTest, TemplatesTravelAsJsonTextWhenAsked) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  const std::string sent =
      R"({"spec": {"restartPolicy": "Never", "containers": [{"name": "c",)"
      R"( "image": "i", "ports": [{"containerPort": 8080.0}]}]}})";
  // What a Struct of `sent` is kept as.
  const std::string canonical =
      R"({"spec":{"containers":[{"image":"i","name":"c",)"
      R"("ports":[{"containerPort":8080}]}],"restartPolicy":"Never"}})";

  v1::ApplyRequest apply;
  apply.set_template_form(v1::TEMPLATE_FORM_JSON);
  *apply.add_workloads() = GpuWorkload("text", 1);
  apply.mutable_workloads(0)
      ->mutable_spec()
      ->mutable_pod_sets(0)
      ->set_template_json(sent);
  auto applied = client_->Apply(apply);
  ASSERT_TRUE(applied.ok()) << applied.status();
  const v1::PodSet& applied_set =
      applied->results(0).workload().spec().pod_sets(0);
  EXPECT_EQ(applied_set.template_json(), sent);
  EXPECT_FALSE(applied_set.has_template_());

  // A Struct in, text out.
  v1::SubmitWorkloadRequest submit;
  submit.set_template_form(v1::TEMPLATE_FORM_JSON);
  *submit.mutable_workload() = GpuWorkload("struct", 1);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  sent, submit.mutable_workload()
                            ->mutable_spec()
                            ->mutable_pod_sets(0)
                            ->mutable_template_())
                  .ok());
  auto submitted = client_->SubmitWorkload(submit);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->workload().spec().pod_sets(0).template_json(),
            canonical);

  // Text that is not one JSON object is refused, naming the field, and
  // nothing is stored.
  v1::ApplyRequest bad;
  *bad.add_workloads() = GpuWorkload("bad", 1);
  bad.mutable_workloads(0)
      ->mutable_spec()
      ->mutable_pod_sets(0)
      ->set_template_json(R"(["not", "an", "object"])");
  auto refused = client_->Apply(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("workloads[0] (Workload \"team-ml/bad\"): "
                        "spec.podSets[0].templateJson: must be a JSON object"));
  EXPECT_EQ(client_->GetWorkload("team-ml", "bad").status().code(),
            absl::StatusCode::kNotFound);

  Restart(/*kill=*/true);
  // Unasked, answers carry a Struct; asked, the text.
  auto got = client_->GetWorkload("team-ml", "struct");
  ASSERT_TRUE(got.ok()) << got.status();
  google::protobuf::Struct want;
  ASSERT_TRUE(
      google::protobuf::util::JsonStringToMessage(canonical, &want).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      got->workload().spec().pod_sets(0).template_(), want));
  EXPECT_TRUE(got->workload().spec().pod_sets(0).template_json().empty());

  v1::GetWorkloadRequest get;
  get.set_namespace_("team-ml");
  get.set_name("text");
  get.set_template_form(v1::TEMPLATE_FORM_JSON);
  auto got_text = client_->GetWorkload(get);
  ASSERT_TRUE(got_text.ok()) << got_text.status();
  EXPECT_EQ(got_text->workload().spec().pod_sets(0).template_json(), sent);

  v1::AdmitRequest admit;
  admit.set_namespace_("team-ml");
  admit.set_name("text");
  admit.mutable_timeout()->set_nanos(1000000);
  admit.set_template_form(v1::TEMPLATE_FORM_JSON);
  auto admitted = client_->Admit(admit);
  ASSERT_TRUE(admitted.ok()) << admitted.status();
  EXPECT_EQ(admitted->workload().spec().pod_sets(0).template_json(), sent);

  v1::ListWorkloadsRequest list;
  list.set_namespace_("team-ml");
  list.set_template_form(v1::TEMPLATE_FORM_JSON);
  auto listed = client_->ListWorkloads(list);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->workloads_size(), 2);
  for (const v1::Workload& wl : listed->workloads()) {
    EXPECT_EQ(wl.spec().pod_sets(0).template_json(),
              wl.metadata().name() == "text" ? sent : canonical)
        << wl.metadata().name();
    EXPECT_FALSE(wl.spec().pod_sets(0).has_template_());
  }

  v1::WatchRequest watch;
  watch.set_from_revision(0);
  watch.add_kinds("Workload");
  watch.set_workload_name("text");
  watch.set_template_form(v1::TEMPLATE_FORM_JSON);
  std::string watched;
  ASSERT_TRUE(client_
                  ->Watch(watch,
                          [&](const v1::WatchEvent& e) {
                            watched =
                                e.workload().spec().pod_sets(0).template_json();
                            return false;
                          })
                  .ok());
  EXPECT_EQ(watched, sent);

  // TEMPLATE_FORM_NONE: no template in either field, everything else kept.
  list.set_template_form(v1::TEMPLATE_FORM_NONE);
  auto bare = client_->ListWorkloads(list);
  ASSERT_TRUE(bare.ok()) << bare.status();
  ASSERT_EQ(bare->workloads_size(), 2);
  for (const v1::Workload& wl : bare->workloads()) {
    const v1::PodSet& ps = wl.spec().pod_sets(0);
    EXPECT_TRUE(ps.template_json().empty()) << wl.metadata().name();
    EXPECT_FALSE(ps.has_template_()) << wl.metadata().name();
    EXPECT_EQ(ps.requests().at("nvidia.com/gpu"), "1");
  }
  watch.set_template_form(v1::TEMPLATE_FORM_NONE);
  bool watched_bare = false;
  ASSERT_TRUE(client_
                  ->Watch(watch,
                          [&](const v1::WatchEvent& e) {
                            const v1::PodSet& ps =
                                e.workload().spec().pod_sets(0);
                            watched_bare = ps.template_json().empty() &&
                                           !ps.has_template_() &&
                                           ps.count() == 1;
                            return false;
                          })
                  .ok());
  EXPECT_TRUE(watched_bare);
  get.set_template_form(v1::TEMPLATE_FORM_NONE);
  auto got_bare = client_->GetWorkload(get);
  ASSERT_TRUE(got_bare.ok()) << got_bare.status();
  EXPECT_TRUE(got_bare->workload().spec().pod_sets(0).template_json().empty());
  // Still kept: the next answer that asks has it.
  get.set_template_form(v1::TEMPLATE_FORM_JSON);
  EXPECT_EQ(
      client_->GetWorkload(get)->workload().spec().pod_sets(0).template_json(),
      sent);
}

const v1::Condition* FindCondition(const v1::Workload& wl,
                                   const std::string& type) {
  for (const v1::Condition& c : wl.status().conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

TEST_F(KqdTest, HighPriorityWorkloadPreemptsRunningOne) {
  // The seed ClusterQueue preempts LowerPriority within itself.
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  auto low = client_->SubmitWorkload(GpuWorkload("low", 16, "experiment"));
  ASSERT_TRUE(low.ok()) << low.status();
  ASSERT_TRUE(IsAdmitted(low->workload()));

  // Acknowledged once the victim is evicted, its quota released and the
  // preemptor admitted, all committed.
  auto high =
      client_->SubmitWorkload(GpuWorkload("high", 8, "production-training"));
  ASSERT_TRUE(high.ok()) << high.status();
  EXPECT_TRUE(IsAdmitted(high->workload()));

  auto victim = client_->GetWorkload("team-ml", "low");
  ASSERT_TRUE(victim.ok()) << victim.status();
  EXPECT_FALSE(IsAdmitted(victim->workload()));
  EXPECT_FALSE(victim->workload().status().has_admission());
  const v1::Condition* evicted = FindCondition(victim->workload(), "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->status(), "True");
  EXPECT_EQ(evicted->reason(), "Preempted");
  const v1::Condition* preempted =
      FindCondition(victim->workload(), "Preempted");
  ASSERT_NE(preempted, nullptr);
  EXPECT_EQ(preempted->reason(), "InClusterQueue");
  EXPECT_THAT(preempted->message(), HasSubstr("Preempted to accommodate"));
  // Back in the queue, waiting for the quota the preemptor holds.
  const v1::Condition* reserved =
      FindCondition(victim->workload(), "QuotaReserved");
  ASSERT_NE(reserved, nullptr);
  EXPECT_EQ(reserved->status(), "False");

  // The preemption survives a kill -9: the victim is still pending.
  Restart(/*kill=*/true);
  auto after = client_->GetWorkload("team-ml", "low");
  ASSERT_TRUE(after.ok());
  EXPECT_FALSE(IsAdmitted(after->workload()));
  auto high_after = client_->GetWorkload("team-ml", "high");
  ASSERT_TRUE(high_after.ok());
  EXPECT_TRUE(IsAdmitted(high_after->workload()));
}

// kqd --config: the Kueue Configuration's resource transformations apply
// to what kqd admits; a bad Configuration stops kqd before it serves.
TEST(KqdConfigTest, ConfigurationFileTransformsRequests) {
  ScopedTempDir dir;
  const std::string config_path = dir.path() + "/kueue-config.yaml";
  {
    std::ofstream out(config_path);
    out << R"(apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing:
  enable: true
resources:
  transformations:
  - input: nvidia.com/mig-1g.5gb
    strategy: Replace
    outputs: {credits: "10"}
)";
  }
  KqdProcess kqd(dir.path());
  ASSERT_TRUE(kqd.Start({"--config=" + config_path}).ok());
  auto client = kqd.NewClient();
  auto docs = manifest::ParseManifests(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [credits]
    flavors:
    - name: default
      resources: [{name: credits, nominalQuota: 30}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: ml, name: lq}
spec: {clusterQueue: cq}
)");
  ASSERT_TRUE(docs.ok());
  v1::ApplyRequest request;
  for (manifest::Document& doc : *docs) {
    ASSERT_TRUE(doc.status.ok()) << doc.status;
    *request.add_objects() = *doc.config_object;
  }
  ASSERT_TRUE(client->Apply(request).ok());

  auto mig_workload = [](const std::string& name, int count) {
    v1::Workload wl;
    wl.mutable_metadata()->set_name(name);
    wl.mutable_metadata()->set_namespace_("ml");
    wl.mutable_spec()->set_queue_name("lq");
    v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(count);
    (*ps->mutable_requests())["nvidia.com/mig-1g.5gb"] = "1";
    return wl;
  };
  // 2 slices = 20 credits: admitted, charged in credits.
  auto a = client->SubmitWorkload(mig_workload("a", 2));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(IsAdmitted(a->workload()));
  const v1::PodSetAssignment& assignment =
      a->workload().status().admission().pod_set_assignments(0);
  EXPECT_EQ(assignment.resource_usage().at("credits"), "20");
  EXPECT_EQ(assignment.resource_usage().count("nvidia.com/mig-1g.5gb"), 0u);
  // 2 more would need 40 of 30 credits.
  auto b = client->SubmitWorkload(mig_workload("b", 2));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(IsAdmitted(b->workload()));
}

TEST(KqdConfigTest, InvalidConfigurationStopsKqd) {
  ScopedTempDir dir;
  const std::string config_path = dir.path() + "/kueue-config.yaml";
  {
    std::ofstream out(config_path);
    out << R"(apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
)";
  }
  KqdProcess kqd(dir.path());
  absl::Status started = kqd.Start({"--config=" + config_path});
  EXPECT_FALSE(started.ok());
  EXPECT_THAT(std::string(started.message()), HasSubstr("exited early"));
  KqdProcess missing(dir.path());
  EXPECT_FALSE(missing.Start({"--config=" + dir.path() + "/nope.yaml"}).ok());
}

TEST_F(KqdTest, ReclaimablePodsFreeQuotaForPendingWorkloads) {
  ASSERT_TRUE(client_->Apply(SeedConfig()).ok());
  // 16 GPUs: a takes all of them with 16 pods; b waits for 4.
  auto a = client_->SubmitWorkload(GpuWorkload("a", 16));
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(IsAdmitted(a->workload()));
  auto b = client_->SubmitWorkload(GpuWorkload("b", 4));
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(IsAdmitted(b->workload()));

  // 4 of a's pods finished for good: a holds 12 GPUs, b is admitted.
  auto reported = client_->SetReclaimablePods("team-ml", "a", {{"main", 4}});
  ASSERT_TRUE(reported.ok()) << reported.status();
  ASSERT_EQ(reported->status().reclaimable_pods_size(), 1);
  EXPECT_EQ(reported->status().reclaimable_pods(0).count(), 4);
  auto b_now = client_->GetWorkload("team-ml", "b");
  ASSERT_TRUE(b_now.ok());
  EXPECT_TRUE(IsAdmitted(b_now->workload()));

  // Kueue's webhook rules: unknown pod sets and decreasing counts while
  // holding quota are refused, naming the field; nothing changes.
  auto unknown = client_->SetReclaimablePods("team-ml", "a", {{"nope", 1}});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kInvalidArgument);
  auto lower = client_->SetReclaimablePods("team-ml", "a", {{"main", 2}});
  EXPECT_EQ(lower.status().code(), absl::StatusCode::kInvalidArgument);
  auto missing = client_->SetReclaimablePods("team-ml", "zz", {{"main", 1}});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

// Kueue's provisioning example as it is, plus the seed's AdmissionCheck
// whose ProvisioningRequestConfig the seed does not define.
v1::ApplyRequest ProvisioningConfig() {
  v1::ApplyRequest request;
  for (const std::string& path :
       {std::string(KQ_EXAMPLES_DIR) +
            "/kueue/provisioning/provisioning-setup.yaml",
        SeedPath("admission-check.yaml")}) {
    auto docs = manifest::ParseManifests(ReadFile(path));
    EXPECT_TRUE(docs.ok()) << docs.status();
    for (manifest::Document& doc : *docs) {
      EXPECT_TRUE(doc.status.ok()) << path << ": " << doc.status;
      EXPECT_TRUE(doc.warnings.empty()) << path;
      if (doc.config_object) *request.add_objects() = *doc.config_object;
    }
  }
  return request;
}

const v1::Condition* ActiveCondition(const v1::ConfigObject& check) {
  for (const v1::Condition& c : check.admission_check().status().conditions()) {
    if (c.type() == "Active") return &c;
  }
  return nullptr;
}

TEST_F(KqdTest, ProvisioningRequestConfigIsStoredAndGatesItsChecks) {
  auto applied = client_->Apply(ProvisioningConfig());
  ASSERT_TRUE(applied.ok()) << applied.status();
  for (bool restarted : {false, true}) {
    SCOPED_TRACE(restarted ? "after kill -9" : "as applied");
    auto configs = client_->ListObjects("ProvisioningRequestConfig", "");
    ASSERT_TRUE(configs.ok()) << configs.status();
    ASSERT_EQ(configs->objects_size(), 1);
    const v1::ProvisioningRequestConfig& prc =
        configs->objects(0).provisioning_request_config();
    EXPECT_EQ(prc.metadata().name(), "prov-test-config");
    EXPECT_EQ(prc.spec().provisioning_class_name(),
              "check-capacity.autoscaling.x-k8s.io");
    EXPECT_EQ(prc.spec().retry_strategy().backoff_limit_count(), 2);
    EXPECT_TRUE(prc.spec().retry_strategy().has_backoff_base_seconds());
    EXPECT_EQ(prc.spec().retry_strategy().backoff_base_seconds(), 0);
    EXPECT_EQ(prc.spec().retry_strategy().backoff_max_seconds(), 1800);

    auto active = client_->GetObject("AdmissionCheck", "", "sample-prov");
    ASSERT_TRUE(active.ok()) << active.status();
    ASSERT_NE(ActiveCondition(*active), nullptr);
    EXPECT_EQ(ActiveCondition(*active)->status(), "True");
    // The seed's check names a config nobody defined: Kueue's provisioning
    // controller marks it inactive.
    auto seed = client_->GetObject("AdmissionCheck", "", "provision-gpu-nodes");
    ASSERT_TRUE(seed.ok()) << seed.status();
    ASSERT_NE(ActiveCondition(*seed), nullptr);
    EXPECT_EQ(ActiveCondition(*seed)->status(), "False");
    EXPECT_EQ(ActiveCondition(*seed)->reason(), "BadParametersRef");
    EXPECT_EQ(ActiveCondition(*seed)->message(),
              "provisioningrequestconfigs.kueue.x-k8s.io "
              "\"gpu-provision-config\" not found");
    if (!restarted) Restart(/*kill=*/true);
  }

  // Without its config, the check's ClusterQueue admits nothing.
  ASSERT_TRUE(
      client_->Delete("ProvisioningRequestConfig", "", "prov-test-config")
          .ok());
  auto cq = client_->GetObject("ClusterQueue", "", "cluster-queue");
  ASSERT_TRUE(cq.ok()) << cq.status();
  ASSERT_GE(cq->cluster_queue().status().conditions_size(), 1);
  EXPECT_EQ(cq->cluster_queue().status().conditions(0).reason(),
            "AdmissionCheckInactive");
  EXPECT_EQ(
      client_->GetObject("ProvisioningRequestConfig", "", "prov-test-config")
          .status()
          .code(),
      absl::StatusCode::kNotFound);
}

TEST_F(KqdTest, ProvisioningCheckReadyCarriesPodSetUpdatesThroughKillNine) {
  auto applied = client_->Apply(ProvisioningConfig());
  ASSERT_TRUE(applied.ok()) << applied.status();
  v1::Workload wl;
  wl.mutable_metadata()->set_name("sample-job");
  wl.mutable_metadata()->set_namespace_("default");
  wl.mutable_spec()->set_queue_name("user-queue");
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "100m";
  (*ps->mutable_requests())["nvidia.com/gpu"] = "1";
  auto submitted = client_->SubmitWorkload(wl);
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  ASSERT_EQ(submitted->workload().status().admission().cluster_queue(),
            "cluster-queue");
  ASSERT_EQ(submitted->workload().status().admission_checks_size(), 1);
  EXPECT_EQ(submitted->workload().status().admission_checks(0).name(),
            "sample-prov");
  EXPECT_FALSE(IsAdmitted(submitted->workload()));

  v1::SetAdmissionCheckStateRequest request;
  request.set_namespace_("default");
  request.set_workload("sample-job");
  request.set_check("sample-prov");
  request.set_state("Ready");
  // What Kueue's provisioning controller writes once the request is
  // Provisioned.
  v1::PodSetUpdate* update = request.add_pod_set_updates();
  update->set_name("main");
  (*update->mutable_annotations())
      ["autoscaling.x-k8s.io/consume-provisioning-request"] =
          "sample-job-sample-prov-1";
  (*update->mutable_annotations())
      ["autoscaling.x-k8s.io/provisioning-class-name"] =
          "check-capacity.autoscaling.x-k8s.io";
  (*update->mutable_node_selector())["cloud.google.com/gke-nodepool"] =
      "pool-1";
  const v1::PodSetUpdate sent = *update;

  // Refused as Kueue's webhook refuses it, naming the field.
  v1::SetAdmissionCheckStateRequest bad = request;
  bad.mutable_pod_set_updates(0)->set_name("launcher");
  auto refused = client_->SetAdmissionCheckState(bad);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("status.admissionChecks[0].podSetUpdates[0].name: "
                        "Unsupported value: \"launcher\""));

  auto ready = client_->SetAdmissionCheckState(request);
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_TRUE(IsAdmitted(*ready));
  ASSERT_EQ(ready->status().admission_checks(0).pod_set_updates_size(), 1);
  // Maps serialise in any order: compare as messages.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      ready->status().admission_checks(0).pod_set_updates(0), sent))
      << ready->status().admission_checks(0).pod_set_updates(0).DebugString();

  Restart(/*kill=*/true);
  // What a runner reads: the workload, its check Ready with the updates,
  // and the flavors' placement beside it.
  auto got = client_->GetWorkload("default", "sample-job");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(IsAdmitted(got->workload()));
  ASSERT_EQ(got->workload().status().admission_checks_size(), 1);
  const v1::AdmissionCheckState& check =
      got->workload().status().admission_checks(0);
  EXPECT_EQ(check.state(), "Ready");
  ASSERT_EQ(check.pod_set_updates_size(), 1);
  EXPECT_EQ(check.pod_set_updates(0).node_selector().at(
                "cloud.google.com/gke-nodepool"),
            "pool-1");
  EXPECT_EQ(check.pod_set_updates(0).annotations().at(
                "autoscaling.x-k8s.io/consume-provisioning-request"),
            "sample-job-sample-prov-1");
  ASSERT_EQ(got->placements_size(), 1);
  EXPECT_EQ(got->placements(0).flavors(0).flavor(), "default-flavor");

  // While Ready the updates stay as they are (Kueue's webhook).
  (*request.mutable_pod_set_updates(0)
        ->mutable_node_selector())["cloud.google.com/gke-nodepool"] = "pool-2";
  auto changed = client_->SetAdmissionCheckState(request);
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(changed.status().message()),
              HasSubstr("field is immutable"));
}

}  // namespace
}  // namespace kq::testing
