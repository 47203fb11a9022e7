#include "tests/shim/provisioning/fake_kube_client.h"

#include "absl/strings/str_cat.h"

namespace kq::testing {

using shim::kube::Resource;

FakeKubeClient::Key FakeKubeClient::KeyOf(const Resource& resource,
                                          const std::string& ns,
                                          const std::string& name) const {
  return {resource.plural, resource.namespaced ? ns : "", name};
}

void FakeKubeClient::Stamp(json& object) {
  json& meta = object["metadata"];
  if (!meta.contains("uid")) meta["uid"] = absl::StrCat("uid-", ++uids_);
  meta["resourceVersion"] = absl::StrCat(++version_);
}

void FakeKubeClient::Add(const Resource& resource, json object) {
  Stamp(object);
  const std::string ns = object["metadata"].value("namespace", "");
  const std::string name = object["metadata"].value("name", "");
  objects_[KeyOf(resource, ns, name)] = std::move(object);
}

const nlohmann::json* FakeKubeClient::Find(const Resource& resource,
                                           const std::string& ns,
                                           const std::string& name) const {
  auto it = objects_.find(KeyOf(resource, ns, name));
  return it == objects_.end() ? nullptr : &it->second;
}

std::vector<nlohmann::json> FakeKubeClient::All(
    const Resource& resource) const {
  std::vector<json> out;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) == resource.plural) out.push_back(object);
  }
  return out;
}

absl::StatusOr<std::string> FakeKubeClient::ServerVersion() {
  return std::string("v1.30.0-fake");
}

absl::StatusOr<nlohmann::json> FakeKubeClient::Get(const Resource& resource,
                                                   const std::string& ns,
                                                   const std::string& name) {
  const json* object = Find(resource, ns, name);
  if (object == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(resource.plural, " \"", name, "\" not found"));
  }
  return *object;
}

absl::StatusOr<shim::kube::ListResult> FakeKubeClient::List(
    const Resource& resource, const std::string& ns,
    const shim::kube::ListOptions& options) {
  shim::kube::ListResult result;
  for (const auto& [key, object] : objects_) {
    if (std::get<0>(key) != resource.plural) continue;
    if (!ns.empty() && std::get<1>(key) != ns) continue;
    result.items.push_back(object);
  }
  result.resource_version = absl::StrCat(version_);
  return result;
}

absl::Status FakeKubeClient::Watch(
    const Resource& resource, const std::string& ns,
    const shim::kube::WatchOptions& options,
    const std::function<bool(const shim::kube::WatchEvent&)>& on_event) {
  return absl::UnimplementedError("FakeKubeClient does not watch");
}

absl::StatusOr<nlohmann::json> FakeKubeClient::Create(const Resource& resource,
                                                      const std::string& ns,
                                                      const json& object) {
  if (on_create) {
    absl::Status status = on_create(resource, object);
    if (!status.ok()) return status;
  }
  json stored = object;
  const std::string object_ns =
      ns.empty() ? stored["metadata"].value("namespace", "") : ns;
  stored["metadata"]["namespace"] = object_ns;
  const std::string name = stored["metadata"].value("name", "");
  const Key key = KeyOf(resource, object_ns, name);
  if (objects_.count(key) > 0) {
    return absl::AlreadyExistsError(absl::StrCat(resource.plural, ".",
                                                 resource.group, " \"", name,
                                                 "\" already exists"));
  }
  stored["metadata"].erase("uid");
  Stamp(stored);
  objects_[key] = stored;
  return stored;
}

absl::StatusOr<nlohmann::json> FakeKubeClient::Update(const Resource& resource,
                                                      const std::string& ns,
                                                      const json& object) {
  const std::string name = object["metadata"].value("name", "");
  auto it = objects_.find(KeyOf(resource, ns, name));
  if (it == objects_.end()) return absl::NotFoundError(name);
  json stored = object;
  Stamp(stored);
  it->second = stored;
  return stored;
}

absl::StatusOr<nlohmann::json> FakeKubeClient::Patch(const Resource& resource,
                                                     const std::string& ns,
                                                     const std::string& name,
                                                     shim::kube::PatchType type,
                                                     const json& patch) {
  if (type != shim::kube::PatchType::kMergePatch) {
    return absl::UnimplementedError("FakeKubeClient: merge patches only");
  }
  auto it = objects_.find(KeyOf(resource, ns, name));
  if (it == objects_.end()) {
    return absl::NotFoundError(
        absl::StrCat(resource.plural, " \"", name, "\" not found"));
  }
  it->second.merge_patch(patch);
  Stamp(it->second);
  return it->second;
}

absl::Status FakeKubeClient::Delete(const Resource& resource,
                                    const std::string& ns,
                                    const std::string& name,
                                    const std::string& uid) {
  auto it = objects_.find(KeyOf(resource, ns, name));
  if (it == objects_.end()) {
    return absl::NotFoundError(
        absl::StrCat(resource.plural, " \"", name, "\" not found"));
  }
  if (!uid.empty() && it->second["metadata"].value("uid", "") != uid) {
    return absl::FailedPreconditionError("uid precondition failed");
  }
  objects_.erase(it);
  deletes_.push_back(absl::StrCat(resource.plural, "/", ns, "/", name));
  return absl::OkStatus();
}

}  // namespace kq::testing
