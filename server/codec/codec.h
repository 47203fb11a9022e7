#pragma once

// Conversion between kq's domain types (server/core) and the kq.v1 protos,
// one file per concept: the shared scalars and messages (codec.cc), the
// configuration objects, the workload, its pod templates' JSON and the
// Kueue Configuration. Used at the two edges that speak proto: the gRPC API
// and the SQLite store (which keeps objects as serialized protos). Quantities
// are parsed here, once; errors name the field path in Kueue's camelCase (the
// words users wrote in their YAML).

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "kq/v1/objects.pb.h"
#include "kq/v1/workload.pb.h"

#include "server/core/config.h"
#include "server/core/objects.h"

namespace kq::codec {

// Converts a proto configuration object. InvalidArgument naming the field
// path ("spec.resourceGroups[0].flavors[1].resources[0].nominalQuota") for
// unparsable quantities or unknown enum strings, or when no kind is set.
absl::StatusOr<ConfigObject> FromProto(const v1::ConfigObject& proto);
v1::ConfigObject ToProto(const ConfigObject& object);

// Converts a proto workload, spec and status. InvalidArgument as above.
absl::StatusOr<Workload> FromProto(const v1::Workload& proto);
// FromProto for a workload a client sent. A pod set's template may come as
// a Struct (kept as its canonical JSON text, keys sorted) or as JSON text
// (template_json, kept as given), never both. INVALID_ARGUMENT for text
// that is not one JSON object with finite numbers, and for the store's
// template_on_disk.
absl::StatusOr<Workload> FromClientProto(const v1::Workload& proto);
// An answer's workload, its pod templates in the form the client asked for.
v1::Workload ToProto(const Workload& workload,
                     v1::TemplateForm form = v1::TEMPLATE_FORM_STRUCT);
// As ToProto, with each pod template as JSON text (PodSet.template_json)
// instead of a Struct: what the store writes, so that no template is
// converted on the way to disk or back (FromProto reads either form). A
// template kept on disk (PodSet::template_on_disk) is written as that mark
// alone, never as text.
v1::Workload ToStoredProto(const Workload& workload);

// Converts one podSetUpdates entry (as a check's controller reports it).
PodSetUpdate FromProto(const v1::PodSetUpdate& proto);
v1::PodSetUpdate ToProto(const PodSetUpdate& update);

// Converts and validates (ValidateConfiguration) the admission settings of
// a Kueue Configuration document. InvalidArgument naming the field path
// ("fairSharing.preemptionStrategies[1]", "resources.transformations[0]
// .outputs[cpu]") for unknown strategies or unparsable quantities.
absl::StatusOr<Configuration> FromProto(const v1::Configuration& proto);

// A quantity as kq writes it for `resource` (binary suffixes for memory
// and storage): "1500m", "8Gi".
std::string QuantityToProto(absl::string_view resource, Quantity q);

// Kubernetes-style timestamps.
absl::Time FromProto(const google::protobuf::Timestamp& ts);
google::protobuf::Timestamp ToProto(absl::Time t);
// google.protobuf.Duration, to whole nanoseconds.
absl::Duration FromProto(const google::protobuf::Duration& d);
google::protobuf::Duration ToProto(absl::Duration d);

}  // namespace kq::codec
