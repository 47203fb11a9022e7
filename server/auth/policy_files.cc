#include "server/auth/policy_files.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace kq::auth {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& flag,
                                     const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

PolicyFiles::PolicyFiles(std::string token_file, std::string authz_file,
                         AuthMetrics* metrics)
    : metrics_(metrics) {
  absl::MutexLock lock(&mu_);
  token_file_.path = std::move(token_file);
  authz_file_.path = std::move(authz_file);
}

PolicyFiles::~PolicyFiles() { Stop(); }

absl::Status PolicyFiles::Load() {
  absl::MutexLock reload(&reload_mu_);
  if (absl::Status s = LoadTokens(/*force=*/true); !s.ok()) return s;
  return LoadPolicy(/*force=*/true);
}

absl::Status PolicyFiles::Reload() {
  absl::MutexLock reload(&reload_mu_);
  absl::Status tokens = LoadTokens(/*force=*/true);
  absl::Status policy = LoadPolicy(/*force=*/true);
  return tokens.ok() ? policy : tokens;
}

absl::Status PolicyFiles::LoadTokens(bool force) {
  std::string path;
  {
    absl::MutexLock lock(&mu_);
    path = token_file_.path;
  }
  if (path.empty()) {
    absl::StatusOr<std::shared_ptr<const TokenTable>> none =
        TokenTable::Parse("");
    absl::MutexLock lock(&mu_);
    if (tokens_ == nullptr) tokens_ = *std::move(none);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> text = ReadFile("--token-file", path);
  absl::Status status = text.status();
  std::shared_ptr<const TokenTable> table;
  if (text.ok()) {
    {
      absl::MutexLock lock(&mu_);
      if (!force && *text == token_file_.content) return absl::OkStatus();
    }
    absl::StatusOr<std::shared_ptr<const TokenTable>> parsed =
        TokenTable::Parse(*text);
    if (parsed.ok()) {
      table = *std::move(parsed);
    } else {
      status = absl::InvalidArgumentError(
          absl::StrCat("--token-file ", path, ": ", parsed.status().message()));
    }
  }
  absl::MutexLock lock(&mu_);
  const bool first = tokens_ == nullptr;
  if (!status.ok()) {
    // Remember the bad content so that polling does not log it every
    // interval; a changed file is tried again.
    if (text.ok()) token_file_.content = *text;
    if (!first) {
      spdlog::error("{}; keeping the {} tokens loaded before",
                    std::string(status.message()), tokens_->size());
      if (metrics_ != nullptr) metrics_->Reloaded("tokens", false);
    }
    return status;
  }
  token_file_.content = *std::move(text);
  tokens_ = std::move(table);
  if (!first) {
    spdlog::info("--token-file {}: reloaded, {} tokens", path, tokens_->size());
    if (metrics_ != nullptr) metrics_->Reloaded("tokens", true);
  }
  return absl::OkStatus();
}

absl::Status PolicyFiles::LoadPolicy(bool force) {
  std::string path;
  {
    absl::MutexLock lock(&mu_);
    path = authz_file_.path;
  }
  std::string text;
  absl::Status status;
  if (!path.empty()) {
    absl::StatusOr<std::string> read = ReadFile("--authz-file", path);
    if (read.ok()) {
      text = *std::move(read);
    } else {
      status = read.status();
    }
  }
  std::shared_ptr<const Policy> policy;
  std::vector<std::string> warnings;
  if (status.ok()) {
    {
      absl::MutexLock lock(&mu_);
      if (!force && policy_ != nullptr && text == authz_file_.content) {
        return absl::OkStatus();
      }
    }
    absl::StatusOr<std::shared_ptr<const Policy>> parsed =
        Policy::Parse(text, &warnings);
    if (parsed.ok()) {
      policy = *std::move(parsed);
    } else {
      status = absl::InvalidArgumentError(
          absl::StrCat("--authz-file ", path, ": ", parsed.status().message()));
    }
  }
  absl::MutexLock lock(&mu_);
  const bool first = policy_ == nullptr;
  if (!status.ok()) {
    authz_file_.content = text;
    if (!first) {
      spdlog::error("{}; keeping the {} bindings loaded before",
                    std::string(status.message()), policy_->binding_count());
      if (metrics_ != nullptr) metrics_->Reloaded("authz", false);
    }
    return status;
  }
  for (const std::string& w : warnings) {
    spdlog::warn("--authz-file {}: {}", path, w);
  }
  authz_file_.content = std::move(text);
  policy_ = std::move(policy);
  if (!path.empty()) {
    spdlog::info("--authz-file {}: {} {} bindings", path,
                 first ? "loaded" : "reloaded", policy_->binding_count());
  }
  if (!first && metrics_ != nullptr) metrics_->Reloaded("authz", true);
  return absl::OkStatus();
}

void PolicyFiles::StartWatching(absl::Duration interval) {
  watcher_ = std::thread([this, interval] {
    while (!stop_.WaitForNotificationWithTimeout(interval)) {
      absl::MutexLock reload(&reload_mu_);
      // Errors are logged and counted by the loaders.
      LoadTokens(/*force=*/false).IgnoreError();
      LoadPolicy(/*force=*/false).IgnoreError();
    }
  });
}

void PolicyFiles::Stop() {
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (watcher_.joinable()) watcher_.join();
}

std::shared_ptr<const TokenTable> PolicyFiles::tokens() const {
  absl::MutexLock lock(&mu_);
  return tokens_;
}

std::shared_ptr<const Policy> PolicyFiles::policy() const {
  absl::MutexLock lock(&mu_);
  return policy_;
}

}  // namespace kq::auth
