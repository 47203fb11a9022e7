#include "server/api/watch_encodings.h"

#include <utility>
#include <variant>

#include "google/protobuf/unknown_field_set.h"

#include "server/api/proto_convert.h"
#include "server/codec/codec.h"

namespace kq::api {

v1::WatchEvent WatchEncodings::Encode(const engine::SharedEvent& event,
                                      v1::TemplateForm form) {
  const Workload* wl = std::get_if<Workload>(&event->object);
  // Config objects are few and small: converted for each stream.
  if (wl == nullptr) return ToProto(*event, form);
  const size_t slot = form == v1::TEMPLATE_FORM_JSON   ? 1
                      : form == v1::TEMPLATE_FORM_NONE ? 2
                                                       : 0;
  Bytes bytes;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(event.get());
    if (it != entries_.end()) bytes = it->second.forms[slot];
  }
  if (bytes == nullptr) {
    auto encoded = std::make_shared<std::string>();
    codec::ToProto(*wl, form).SerializeToString(encoded.get());
    bytes = std::move(encoded);
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = entries_.try_emplace(event.get());
    if (inserted) {
      it->second.event = event;
      order_.push_back(event.get());
      while (order_.size() > capacity_) {
        entries_.erase(order_.front());
        order_.pop_front();
      }
    }
    // Another stream may have encoded it meanwhile: the same bytes.
    if (it->second.forms[slot] == nullptr) it->second.forms[slot] = bytes;
  }
  v1::WatchEvent out;
  out.set_type(WatchTypeOf(event->type));
  out.set_revision(event->revision);
  out.GetReflection()->MutableUnknownFields(&out)->AddLengthDelimited(
      v1::WatchEvent::kWorkloadFieldNumber, *bytes);
  return out;
}

}  // namespace kq::api
