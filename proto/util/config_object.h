#pragma once

// Helpers over the kq.v1 messages that every side of the API needs: the
// server's handlers, the client library, the CLI and the shim.

#include "kq/v1/objects.pb.h"

namespace kq::proto_util {

// The metadata of whichever kind `object` holds; the empty ObjectMeta when
// it holds none.
const v1::ObjectMeta& MetaOf(const v1::ConfigObject& object);
// The same, to change; null when `object` holds no kind.
v1::ObjectMeta* MutableMetaOf(v1::ConfigObject* object);

}  // namespace kq::proto_util
