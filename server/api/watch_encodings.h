#pragma once

// Each watch event's workload, converted and serialized once for all the
// Watch streams that send it in one template form. A worker kqd has several
// watchers of the same events (its manager's link, a dashboard, a shim):
// each would otherwise convert and serialize every workload again.

#include <array>
#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "kq/v1/queue_service.pb.h"
#include "kq/v1/workload.pb.h"

#include "server/engine/event_log.h"

namespace kq::api {

// Thread-safe.
class WatchEncodings {
 public:
  // Keeps the encodings of the `capacity` events encoded last.
  explicit WatchEncodings(size_t capacity = 8192) : capacity_(capacity) {}
  WatchEncodings(const WatchEncodings&) = delete;
  WatchEncodings& operator=(const WatchEncodings&) = delete;

  // `event` as a WatchEvent in `form`. A workload travels as its serialized
  // bytes in the unknown field numbered as `workload`: on the wire an
  // embedded message is those bytes, so a receiver parses `workload`.
  v1::WatchEvent Encode(const engine::SharedEvent& event,
                        v1::TemplateForm form);

 private:
  using Bytes = std::shared_ptr<const std::string>;
  struct Entry {
    // Held so that the event's address is not reused while cached.
    engine::SharedEvent event;
    std::array<Bytes, 3> forms;  // by v1::TemplateForm
  };

  const size_t capacity_;
  absl::Mutex mu_;
  std::unordered_map<const store::Event*, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<const store::Event*> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kq::api
