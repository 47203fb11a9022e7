#pragma once

// The files that decide who may do what: --token-file and --authz-file,
// read at start (an error stops kqd), then re-read when they change (polled)
// or on Reload (SIGHUP). A file that fails to parse on reload keeps the old
// contents in force and says why in the log and in
// kq_auth_policy_reloads_total{result="failure"}.

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

#include "server/auth/auth_metrics.h"
#include "server/auth/rbac.h"
#include "server/auth/tokens.h"

namespace kq::auth {

class PolicyFiles {
 public:
  // Either path may be empty (no tokens; only the built-in roles, so no
  // bindings). `metrics` may be null and must outlive this.
  PolicyFiles(std::string token_file, std::string authz_file,
              AuthMetrics* metrics);
  ~PolicyFiles();
  PolicyFiles(const PolicyFiles&) = delete;
  PolicyFiles& operator=(const PolicyFiles&) = delete;

  // The first read: InvalidArgument or NotFound naming the flag and file.
  absl::Status Load();
  // Polls the files every `interval` from a thread of its own.
  void StartWatching(absl::Duration interval);
  void Stop();
  // Re-reads both files now (SIGHUP). Returns the first failure; the
  // failed file's old contents stay in force.
  absl::Status Reload();

  std::shared_ptr<const TokenTable> tokens() const;
  std::shared_ptr<const Policy> policy() const;

 private:
  struct Watched {
    std::string path;
    // Content last loaded (compared, since an mtime can repeat within its
    // resolution and a rename keeps the source's).
    std::string content;
  };
  // Loads `file` if its content changed (or `force`).
  absl::Status LoadTokens(bool force);
  absl::Status LoadPolicy(bool force);

  AuthMetrics* metrics_;
  mutable absl::Mutex mu_;
  Watched token_file_ ABSL_GUARDED_BY(mu_);
  Watched authz_file_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const TokenTable> tokens_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Policy> policy_ ABSL_GUARDED_BY(mu_);
  absl::Mutex reload_mu_;  // one reload at a time
  absl::Notification stop_;
  std::thread watcher_;
};

}  // namespace kq::auth
