#include "server/api/watch_encodings.h"

#include <memory>
#include <string>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

#include "server/api/proto_convert.h"

namespace kq::api {
namespace {

using ::google::protobuf::util::MessageDifferencer;

engine::SharedEvent WorkloadEvent(int64_t revision, const std::string& name) {
  Workload wl;
  wl.meta.namespace_name = "team-a";
  wl.meta.name = name;
  wl.meta.revision = revision;
  wl.queue_name = "lq";
  PodSet ps;
  ps.name = "main";
  ps.count = 2;
  ps.template_json = BoxedString(R"({"spec":{"containers":[{"name":"c"}]}})");
  wl.pod_sets.push_back(ps);
  return std::make_shared<const store::Event>(
      store::Event{revision, store::Event::Type::kModified, std::move(wl)});
}

// What a client reads: the encoded event, parsed back.
v1::WatchEvent OnTheWire(const v1::WatchEvent& sent) {
  v1::WatchEvent read;
  EXPECT_TRUE(read.ParseFromString(sent.SerializeAsString()));
  return read;
}

TEST(WatchEncodingsTest, ClientsReadWhatToProtoWouldHaveSent) {
  WatchEncodings encodings;
  const engine::SharedEvent event = WorkloadEvent(7, "a");
  for (v1::TemplateForm form :
       {v1::TEMPLATE_FORM_STRUCT, v1::TEMPLATE_FORM_JSON,
        v1::TEMPLATE_FORM_NONE}) {
    SCOPED_TRACE(v1::TemplateForm_Name(form));
    // Twice: encoded, then from the cache.
    for (int i = 0; i < 2; ++i) {
      const v1::WatchEvent read = OnTheWire(encodings.Encode(event, form));
      EXPECT_TRUE(MessageDifferencer::Equals(read, ToProto(*event, form)))
          << read.ShortDebugString();
    }
  }
  const v1::WatchEvent none =
      OnTheWire(encodings.Encode(event, v1::TEMPLATE_FORM_NONE));
  EXPECT_EQ(none.type(), v1::WatchEvent::MODIFIED);
  EXPECT_EQ(none.revision(), 7);
  EXPECT_EQ(none.workload().metadata().name(), "a");
  EXPECT_TRUE(none.workload().spec().pod_sets(0).template_json().empty());
}

// Past its capacity the cache forgets the oldest events; encoding them
// again gives the same bytes.
TEST(WatchEncodingsTest, EvictedEventsEncodeAlike) {
  WatchEncodings encodings(/*capacity=*/2);
  const engine::SharedEvent a = WorkloadEvent(1, "a");
  const std::string first =
      encodings.Encode(a, v1::TEMPLATE_FORM_JSON).SerializeAsString();
  for (int i = 2; i < 6; ++i) {
    encodings.Encode(WorkloadEvent(i, "b"), v1::TEMPLATE_FORM_JSON);
  }
  EXPECT_EQ(encodings.Encode(a, v1::TEMPLATE_FORM_JSON).SerializeAsString(),
            first);
}

TEST(WatchEncodingsTest, ConfigObjectsAreConverted) {
  WatchEncodings encodings;
  ResourceFlavor flavor;
  flavor.meta.name = "default";
  auto event = std::make_shared<const store::Event>(
      store::Event{3, store::Event::Type::kAdded, ConfigObject(flavor)});
  const v1::WatchEvent read =
      OnTheWire(encodings.Encode(event, v1::TEMPLATE_FORM_STRUCT));
  EXPECT_EQ(read.type(), v1::WatchEvent::ADDED);
  EXPECT_EQ(read.config_object().resource_flavor().metadata().name(),
            "default");
}

}  // namespace
}  // namespace kq::api
