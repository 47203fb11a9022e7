// Pod templates as JSON: the canonical text kq keeps of a template a client
// sent as a protobuf Struct, the check of one sent as text, and the way back
// to a Struct.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/stubs/strutil.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

#include "server/codec/internal.h"
#include "server/core/spec_shape.h"

namespace kq::codec {
namespace {

// The JSON value of a protobuf Value as nlohmann::json, what parsing
// protobuf's JSON for it would give; false for what that fast path does not
// cover (a non-finite number, a Value without a kind), which takes the slow
// path. Numbers are written as protobuf writes them (SimpleDtoa) and read
// back as nlohmann reads them, so "1" stays an integer.
bool ValueToJson(const google::protobuf::Value& value, nlohmann::json& out);

// A Struct's fields as a JSON object, as ValueToJson.
bool StructToJson(const google::protobuf::Struct& fields, nlohmann::json& out) {
  out = nlohmann::json::object();
  for (const auto& [key, field] : fields.fields()) {
    if (!ValueToJson(field, out[key])) return false;
  }
  return true;
}

bool ValueToJson(const google::protobuf::Value& value, nlohmann::json& out) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kNullValue:
      out = nullptr;
      return true;
    case google::protobuf::Value::kBoolValue:
      out = value.bool_value();
      return true;
    case google::protobuf::Value::kStringValue:
      out = value.string_value();
      return true;
    case google::protobuf::Value::kNumberValue: {
      if (!std::isfinite(value.number_value())) return false;
      out = nlohmann::json::parse(
          google::protobuf::SimpleDtoa(value.number_value()), nullptr,
          /*allow_exceptions=*/false);
      return !out.is_discarded();
    }
    case google::protobuf::Value::kStructValue:
      return StructToJson(value.struct_value(), out);
    case google::protobuf::Value::kListValue: {
      out = nlohmann::json::array();
      for (const google::protobuf::Value& item : value.list_value().values()) {
        out.push_back(nullptr);
        if (!ValueToJson(item, out.back())) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

// The reverse: nlohmann::json into a protobuf Value, as protobuf's JSON
// parser fills one (every number a double).
void JsonToValue(const nlohmann::json& json, google::protobuf::Value* value);

// A JSON object's members as a Struct's fields, as JsonToValue.
void JsonToStruct(const nlohmann::json& json, google::protobuf::Struct* out) {
  auto* fields = out->mutable_fields();
  for (const auto& [key, item] : json.items()) {
    JsonToValue(item, &(*fields)[key]);
  }
}

void JsonToValue(const nlohmann::json& json, google::protobuf::Value* value) {
  switch (json.type()) {
    case nlohmann::json::value_t::null:
      value->set_null_value(google::protobuf::NULL_VALUE);
      return;
    case nlohmann::json::value_t::boolean:
      value->set_bool_value(json.get<bool>());
      return;
    case nlohmann::json::value_t::string:
      value->set_string_value(json.get_ref<const std::string&>());
      return;
    case nlohmann::json::value_t::number_integer:
      value->set_number_value(
          static_cast<double>(json.get<nlohmann::json::number_integer_t>()));
      return;
    case nlohmann::json::value_t::number_unsigned:
      value->set_number_value(
          static_cast<double>(json.get<nlohmann::json::number_unsigned_t>()));
      return;
    case nlohmann::json::value_t::number_float:
      value->set_number_value(json.get<double>());
      return;
    case nlohmann::json::value_t::object:
      JsonToStruct(json, value->mutable_struct_value());
      return;
    case nlohmann::json::value_t::array: {
      auto* list = value->mutable_list_value();
      for (const nlohmann::json& item : json) {
        JsonToValue(item, list->add_values());
      }
      return;
    }
    default:
      value->set_null_value(google::protobuf::NULL_VALUE);
      return;
  }
}

}  // namespace

// Writes a Struct as JSON with object keys sorted. Protobuf prints a
// Struct's keys in hash-map order, which differs between two copies of the
// same template; sorting makes equal templates equal strings, so a workload
// compares equal to itself after a trip through the store. Sets
// `*spec_shape` to the text's SpecShapeDigest, made from the parsed
// template rather than by parsing the text again.
absl::StatusOr<std::string> CanonicalJson(
    absl::string_view path, const google::protobuf::Struct& template_struct,
    uint64_t* spec_shape) {
  // nlohmann::json keeps objects in a std::map, so dump() sorts keys. The
  // calls below are the non-throwing forms; the catch is a guard so that no
  // exception can leave the codec.
  try {
    // Fast path: the Struct straight into nlohmann::json (protobuf's JSON
    // writer and a parse of its output cost most of a submission's CPU).
    nlohmann::json direct;
    if (StructToJson(template_struct, direct)) {
      *spec_shape = SpecShapeDigestOfParsed(direct);
      return direct.dump(-1, ' ', /*ensure_ascii=*/false,
                         nlohmann::json::error_handler_t::replace);
    }
    std::string json;
    google::protobuf::util::Status status =
        google::protobuf::util::MessageToJsonString(template_struct, &json);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": cannot be written as JSON: ", status.message().ToString()));
    }
    nlohmann::json parsed =
        nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": protobuf wrote JSON that does not parse"));
    }
    std::string canonical =
        parsed.dump(-1, ' ', /*ensure_ascii=*/false,
                    nlohmann::json::error_handler_t::replace);
    *spec_shape = SpecShapeDigest(canonical);
    return canonical;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

// Reads a template kept as JSON text (CanonicalJson's, or a client's that
// CheckTemplateText accepted) back into a Struct; false when it is not a
// JSON object.
bool StructFromJson(const std::string& json, google::protobuf::Struct* out) {
  try {
    nlohmann::json parsed =
        nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_object()) return false;
    JsonToStruct(parsed, out);
    return true;
  } catch (const nlohmann::json::exception&) {
    out->Clear();
    return false;
  }
}

namespace {

// Reads a template a client sent as JSON text without building it (a DOM,
// its sorted dump and their allocations cost three times as much): it must
// be one JSON object, nested no deeper than a Struct can be in kqd's
// answers. nlohmann refuses numbers out of a double's range, as Kubernetes'
// API server does. The first problem found is kept in `error`.
class TemplateTextChecker : public nlohmann::json::json_sax_t {
 public:
  // Each JSON object level is three message levels of a Struct (Struct, its
  // fields' map entry, Value), and gRPC parses messages up to 100 levels
  // deep: 30 levels leave room for the answers' own (a WatchEvent's
  // workload, spec and pod set).
  static constexpr int kMaxDepth = 30;

  std::string error;

  bool null() override { return Value("null"); }
  bool boolean(bool) override { return Value("boolean"); }
  bool number_integer(number_integer_t) override { return Value("number"); }
  bool number_unsigned(number_unsigned_t) override { return Value("number"); }
  bool number_float(number_float_t, const string_t&) override {
    return Value("number");
  }
  bool string(string_t&) override { return Value("string"); }
  bool binary(binary_t&) override { return Value("binary"); }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return Value("array") && Enter(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::json::exception& e) override {
    // "[json.exception.parse_error.101] parse error at line 1, ...": the
    // bracketed id means nothing to the client.
    absl::string_view what = e.what();
    if (size_t end = what.find("] ");
        absl::StartsWith(what, "[") && end != absl::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    error = std::string(what);
    return false;
  }

 private:
  // A value outside any object or array is the whole document.
  bool Value(const char* type) {
    if (depth_ > 0) return true;
    error =
        absl::StrCat("must be a JSON object (a PodTemplateSpec), not ",
                     absl::string_view(type) == "array" ? "an " : "a ", type);
    return false;
  }
  bool Enter() {
    if (++depth_ <= kMaxDepth) return true;
    error = absl::StrCat("nested deeper than ", kMaxDepth, " levels");
    return false;
  }
  int depth_ = 0;
};

}  // namespace

// A template a client sent as JSON text is kept as given, once
// TemplateTextChecker accepts it; InvalidArgument at `path` otherwise.
absl::Status CheckTemplateText(absl::string_view path,
                               const std::string& text) {
  // nlohmann stops reading at a NUL and skips a byte order mark; JSON
  // allows neither, and the text is kept and handed on as it is.
  if (text.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": contains a NUL byte"));
  }
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": starts with a byte order mark"));
  }
  TemplateTextChecker checker;
  if (nlohmann::json::sax_parse(text, &checker) && checker.error.empty()) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": ", checker.error.empty() ? "not JSON" : checker.error));
}

}  // namespace kq::codec
