#pragma once

// The definitions of Engine's Call and Wait templates, for the files that
// define the engine's commands (engine.cc, commands.cc, admit.cc).

#include <functional>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"

#include "server/engine/engine.h"

namespace kq::engine {

template <typename T>
absl::StatusOr<T> Engine::Wait(
    const std::function<void(std::function<void(absl::StatusOr<T>)>)>& start) {
  struct Slot {
    absl::Notification done;
    absl::StatusOr<T> result = absl::UnknownError("command did not run");
  };
  auto slot = std::make_shared<Slot>();
  start([slot](absl::StatusOr<T> result) {
    slot->result = std::move(result);
    slot->done.Notify();
  });
  slot->done.WaitForNotification();
  return std::move(slot->result);
}

template <typename T>
absl::StatusOr<T> Engine::Call(std::function<absl::StatusOr<T>()> fn) {
  return Wait<T>([this, &fn](std::function<void(absl::StatusOr<T>)> done) {
    auto shared_done = std::make_shared<std::function<void(absl::StatusOr<T>)>>(
        std::move(done));
    const bool posted = Post(
        [this, fn = std::move(fn), shared_done] {
          auto result = std::make_shared<absl::StatusOr<T>>(fn());
          replies_.push_back([shared_done, result](const absl::Status& commit) {
            if (!commit.ok()) return (*shared_done)(commit);
            (*shared_done)(std::move(*result));
          });
        },
        [shared_done](const absl::Status& status) { (*shared_done)(status); });
    if (!posted) {
      (*shared_done)(absl::UnavailableError("kqd is shutting down"));
    }
  });
}

}  // namespace kq::engine
