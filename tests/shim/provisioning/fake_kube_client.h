#pragma once

// An in-memory kube::Client for the reconciler's unit tests, as
// controller-runtime's fake client is for Kueue's: objects by resource,
// namespace and name, with uid and resourceVersion set on create, JSON merge
// patch, and hooks that fail writes (Kueue's interceptor.Funcs). Watch is
// not supported. Not thread-safe.

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include "shim/kube/client.h"

namespace kq::testing {

class FakeKubeClient : public shim::kube::Client {
 public:
  using json = nlohmann::json;

  // Stores `object` as it is (uid and resourceVersion set when absent).
  void Add(const shim::kube::Resource& resource, json object);
  // The stored object, or nullptr.
  const json* Find(const shim::kube::Resource& resource, const std::string& ns,
                   const std::string& name) const;
  // Every stored object of the resource, by namespace then name.
  std::vector<json> All(const shim::kube::Resource& resource) const;

  // Runs before each Create; a non-OK status fails it without storing.
  std::function<absl::Status(const shim::kube::Resource&, const json&)>
      on_create;

  // Deletes done, as "plural/ns/name".
  const std::vector<std::string>& deletes() const { return deletes_; }

  absl::StatusOr<std::string> ServerVersion() override;
  absl::StatusOr<json> Get(const shim::kube::Resource& resource,
                           const std::string& ns,
                           const std::string& name) override;
  absl::StatusOr<shim::kube::ListResult> List(
      const shim::kube::Resource& resource, const std::string& ns,
      const shim::kube::ListOptions& options) override;
  absl::Status Watch(const shim::kube::Resource& resource,
                     const std::string& ns,
                     const shim::kube::WatchOptions& options,
                     const std::function<bool(const shim::kube::WatchEvent&)>&
                         on_event) override;
  absl::StatusOr<json> Create(const shim::kube::Resource& resource,
                              const std::string& ns,
                              const json& object) override;
  absl::StatusOr<json> Update(const shim::kube::Resource& resource,
                              const std::string& ns,
                              const json& object) override;
  absl::StatusOr<json> Patch(const shim::kube::Resource& resource,
                             const std::string& ns, const std::string& name,
                             shim::kube::PatchType type,
                             const json& patch) override;
  absl::Status Delete(const shim::kube::Resource& resource,
                      const std::string& ns, const std::string& name,
                      const std::string& uid) override;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  Key KeyOf(const shim::kube::Resource& resource, const std::string& ns,
            const std::string& name) const;
  void Stamp(json& object);

  std::map<Key, json> objects_;
  std::vector<std::string> deletes_;
  int64_t version_ = 0;
  int64_t uids_ = 0;
};

}  // namespace kq::testing
