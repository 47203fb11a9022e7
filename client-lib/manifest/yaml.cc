#include "client-lib/manifest/yaml.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/anchor.h"
#include "yaml-cpp/emitterstyle.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/mark.h"
#include "yaml-cpp/parser.h"

#include "client-lib/manifest/manifest.h"
#include "client-lib/manifest/reader.h"
#include "client-lib/manifest/status_macros.h"

namespace kq::manifest {
namespace internal {
namespace {

using nlohmann::json;

// Aliases let a small YAML text expand into a huge tree ("billion laughs");
// no Kueue object comes near these bounds.
constexpr size_t kMaxNodesPerDocument = 1'000'000;
constexpr size_t kMaxDepth = 128;

// yaml-cpp's tag for the explicit `!!str` tag.
constexpr absl::string_view kStrTag = "tag:yaml.org,2002:str";

bool IsDigits(absl::string_view s, absl::string_view alphabet) {
  return !s.empty() && s.find_first_not_of(alphabet) == absl::string_view::npos;
}

// [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?
bool IsCoreFloat(absl::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  size_t i = 0;
  size_t int_digits = 0;
  while (i < s.size() && absl::ascii_isdigit(s[i])) {
    ++i;
    ++int_digits;
  }
  size_t frac_digits = 0;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) {
      ++i;
      ++frac_digits;
    }
  }
  if (int_digits == 0 && frac_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t exponent_start = i;
    while (i < s.size() && absl::ascii_isdigit(s[i])) ++i;
    if (i == exponent_start) return false;
  }
  return i == s.size();
}

// Builds one JSON value per YAML document from yaml-cpp's parser events.
// kq drives the parser itself instead of calling YAML::LoadAll, whose loop
// never ends on some malformed input in yaml-cpp 0.7 (a stray ',': the
// parser keeps reporting empty documents without consuming the token,
// jbeder/yaml-cpp#1040), allocating until the machine runs out of memory.
// Thread-compatible; reused across the documents of one text.
class JsonBuilder : public YAML::EventHandler {
 public:
  // Where the current document starts, to detect a parser making no
  // progress.
  const YAML::Mark& start() const { return start_; }

  // The finished document: its JSON (null when empty), or why it cannot be
  // JSON.
  absl::StatusOr<json> Take() {
    if (!error_.ok()) return error_;
    return std::move(root_);
  }

  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    root_ = nullptr;
    stack_.clear();
    anchors_.clear();
    error_ = absl::OkStatus();
    budget_ = kMaxNodesPerDocument;
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!Charge(1) || !NotAKey()) return;
    Add(json(nullptr), anchor);
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (!error_.ok() || !NotAKey()) return;
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Fail(ChildPath(), "alias of an unknown anchor");
      return;
    }
    // Aliases copy: charge the copy, so a small text cannot expand into a
    // huge tree ("billion laughs").
    if (!Charge(CountNodes(it->second, budget_ + 1))) return;
    Add(it->second, YAML::NullAnchor);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    if (!Charge(1)) return;
    Frame* top = stack_.empty() ? nullptr : &stack_.back();
    if (top != nullptr && top->value.is_object() && !top->key.has_value()) {
      // Map keys are strings whatever they look like (`16: x` has key
      // "16"), as Kubernetes' YAML reader makes them.
      if (top->value.contains(value)) {
        Fail(FieldPath(top->path, value), "duplicate key");
        return;
      }
      top->key = value;
      return;
    }
    // "!" is yaml-cpp's tag for quoted and block scalars: always strings.
    if (tag == "!" || tag == kStrTag) {
      Add(json(value), anchor);
    } else {
      Add(ResolvePlainScalar(value), anchor);
    }
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag,
                       YAML::anchor_t anchor,
                       YAML::EmitterStyle::value style) override {
    Open(json::array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string& tag,
                  YAML::anchor_t anchor,
                  YAML::EmitterStyle::value style) override {
    Open(json::object(), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  // A collection being built.
  struct Frame {
    json value;
    YAML::anchor_t anchor;
    std::string path;
    // In a map: the key whose value comes next.
    std::optional<std::string> key;
  };

  // Counts the nodes of `value`, stopping once `limit` is reached.
  static size_t CountNodes(const json& value, size_t limit) {
    size_t count = 1;
    if (value.is_structured()) {
      for (const json& child : value) {
        if (count >= limit) break;
        count += CountNodes(child, limit - count);
      }
    }
    return count;
  }

  void Fail(const std::string& path, absl::string_view reason) {
    if (error_.ok()) {
      error_ = FieldError(path.empty() ? "document" : path, reason);
    }
  }

  // Spends `nodes` of the document's budget; false once the document has
  // failed (the rest of its events are then ignored).
  bool Charge(size_t nodes) {
    if (!error_.ok()) return false;
    if (nodes > budget_) {
      Fail(ChildPath(), "document is too large");
      return false;
    }
    budget_ -= nodes;
    return true;
  }

  // Fails when the next node would be a map key: only scalars may be.
  bool NotAKey() {
    if (!stack_.empty() && stack_.back().value.is_object() &&
        !stack_.back().key.has_value()) {
      Fail(stack_.back().path, "map keys must be strings");
      return false;
    }
    return true;
  }

  // The path of the node that comes next.
  std::string ChildPath() const {
    if (stack_.empty()) return "";
    const Frame& top = stack_.back();
    if (top.value.is_array()) return IndexPath(top.path, top.value.size());
    return top.key.has_value() ? FieldPath(top.path, *top.key) : top.path;
  }

  void Open(json value, YAML::anchor_t anchor) {
    if (!Charge(1) || !NotAKey()) return;
    if (stack_.size() >= kMaxDepth) {
      Fail(ChildPath(), "nested too deeply");
      return;
    }
    std::string path = ChildPath();
    stack_.push_back(
        Frame{.value = std::move(value), .anchor = anchor, .path = path});
  }

  void Close() {
    if (!error_.ok() || stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Add(std::move(frame.value), frame.anchor);
  }

  // Places a finished node in its parent (or as the document).
  void Add(json value, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = value;
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else {
      top.value[*top.key] = std::move(value);
      top.key.reset();
    }
  }

  YAML::Mark start_;
  json root_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, json> anchors_;
  absl::Status error_;
  size_t budget_ = kMaxNodesPerDocument;
};

// Reads a stream of JSON values; nullopt when the text is not such a stream.
std::optional<std::vector<json>> LoadJsonStream(absl::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<json> values;
  try {
    while (true) {
      in >> std::ws;
      if (in.eof()) break;
      json value;
      in >> value;
      values.push_back(std::move(value));
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return values;
}

bool IsJsonDepthOk(const json& value, size_t depth) {
  if (depth > kMaxDepth) return false;
  if (value.is_structured()) {
    for (const json& child : value) {
      if (!IsJsonDepthOk(child, depth + 1)) return false;
    }
  }
  return true;
}

}  // namespace

json ResolvePlainScalar(absl::string_view text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" ||
      text == "NULL") {
    return json(nullptr);
  }
  if (text == "true" || text == "True" || text == "TRUE") return json(true);
  if (text == "false" || text == "False" || text == "FALSE") {
    return json(false);
  }
  absl::string_view unsigned_part = text;
  const bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    unsigned_part.remove_prefix(1);
  }
  if (IsDigits(unsigned_part, "0123456789")) {
    int64_t signed_value = 0;
    if (absl::SimpleAtoi(text, &signed_value)) return json(signed_value);
    uint64_t unsigned_value = 0;
    if (!negative && absl::SimpleAtoi(unsigned_part, &unsigned_value)) {
      return json(unsigned_value);
    }
    return json(std::strtod(std::string(text).c_str(), nullptr));
  }
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'o')) {
    const absl::string_view digits = text.substr(2);
    const bool hex = text[1] == 'x';
    if (IsDigits(digits, hex ? "0123456789abcdefABCDEF" : "01234567")) {
      errno = 0;
      char* end = nullptr;
      const std::string owned(digits);
      const unsigned long long value =
          std::strtoull(owned.c_str(), &end, hex ? 16 : 8);
      if (errno == 0 && end != nullptr && *end == '\0') {
        return json(static_cast<uint64_t>(value));
      }
    }
  }
  if (IsCoreFloat(text)) {
    return json(std::strtod(std::string(text).c_str(), nullptr));
  }
  if (unsigned_part == ".inf" || unsigned_part == ".Inf" ||
      unsigned_part == ".INF") {
    return json(negative ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity());
  }
  if (text == ".nan" || text == ".NaN" || text == ".NAN") {
    return json(std::numeric_limits<double>::quiet_NaN());
  }
  return json(std::string(text));
}

bool YamlNeedsQuotes(absl::string_view text) {
  if (text.empty()) return true;
  // Anything that would not read back as this string.
  if (!ResolvePlainScalar(text).is_string()) return true;
  // YAML 1.1 booleans and null, which kubectl's reader would convert.
  static constexpr absl::string_view kYaml11[] = {
      "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "<<"};
  const std::string lower = absl::AsciiStrToLower(text);
  for (absl::string_view word : kYaml11) {
    if (lower == word) return true;
  }
  // Indicators that start YAML syntax instead of a plain scalar.
  static constexpr absl::string_view kIndicators = "-?:,[]{}#&*!|>'\"%@` \t";
  if (kIndicators.find(text.front()) != absl::string_view::npos) return true;
  if (text.back() == ' ' || text.back() == ':') return true;
  if (absl::StartsWith(text, "...")) return true;
  if (text.find(": ") != absl::string_view::npos ||
      text.find(" #") != absl::string_view::npos) {
    return true;
  }
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return true;
  }
  // Number-like strings YAML 1.1 reads as numbers or times ("1:20",
  // "1_000", "2026-01-02T03:04:05Z"): quoted, as kubectl prints them.
  if (absl::ascii_isdigit(text.front()) || text.front() == '.' ||
      text.front() == '+') {
    if (IsDigits(text, "0123456789:._eE+-")) return true;
    if (text.size() >= 5 && IsDigits(text.substr(0, 4), "0123456789") &&
        text[4] == '-') {
      return true;
    }
  }
  return false;
}

absl::StatusOr<std::vector<absl::StatusOr<json>>> LoadDocuments(
    absl::string_view text) {
  std::vector<absl::StatusOr<json>> documents;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == absl::string_view::npos) return documents;
  if (text[first] == '{' || text[first] == '[') {
    if (std::optional<std::vector<json>> values = LoadJsonStream(text)) {
      for (json& value : *values) {
        if (value.is_null()) continue;
        if (!IsJsonDepthOk(value, 0)) {
          documents.push_back(
              absl::InvalidArgumentError("document: nested too deeply"));
        } else {
          documents.push_back(std::move(value));
        }
      }
      return documents;
    }
  }

  std::istringstream in{std::string(text)};
  try {
    YAML::Parser parser(in);
    JsonBuilder builder;
    std::optional<int> previous_start;
    while (parser.HandleNextDocument(builder)) {
      // A document that starts where the previous one did consumed
      // nothing: yaml-cpp 0.7 is stuck on a token it cannot place.
      if (previous_start == builder.start().pos) {
        return absl::InvalidArgumentError(
            absl::StrCat("yaml: line ", builder.start().line + 1, ", column ",
                         builder.start().column + 1, ": unexpected character"));
      }
      previous_start = builder.start().pos;
      absl::StatusOr<json> document = builder.Take();
      if (document.ok() && document->is_null()) continue;  // Empty.
      documents.push_back(std::move(document));
    }
  } catch (const YAML::Exception& e) {
    // yaml-cpp marks are 0-based; people count lines and columns from 1.
    return absl::InvalidArgumentError(
        absl::StrCat("yaml: line ", e.mark.line + 1, ", column ",
                     e.mark.column + 1, ": ", e.msg));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("yaml: ", e.what()));
  }
  return documents;
}

namespace {

void AppendQuoted(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\r':
        out->append("\\r");
        break;
      default:
        if (u < 0x20 || u == 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\x");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 0xf]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendString(absl::string_view text, std::string* out) {
  if (YamlNeedsQuotes(text)) {
    AppendQuoted(text, out);
  } else {
    out->append(text.data(), text.size());
  }
}

// A value that prints on the line of its key or dash.
bool IsInline(const json& value) {
  return !value.is_structured() || value.empty();
}

void AppendScalar(const json& value, std::string* out) {
  switch (value.type()) {
    case json::value_t::object:
      out->append("{}");
      break;
    case json::value_t::array:
      out->append("[]");
      break;
    case json::value_t::string:
      AppendString(value.get_ref<const std::string&>(), out);
      break;
    case json::value_t::boolean:
      out->append(value.get<bool>() ? "true" : "false");
      break;
    case json::value_t::number_float: {
      const double number = value.get<double>();
      if (std::isnan(number)) {
        out->append(".nan");
      } else if (std::isinf(number)) {
        out->append(number < 0 ? "-.inf" : ".inf");
      } else {
        out->append(value.dump());
      }
      break;
    }
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      out->append(value.dump());
      break;
    default:
      out->append("null");
  }
}

void AppendSequence(const json& list, int indent, bool first_inline,
                    std::string* out);

// Writes the entries of a non-empty object at `indent`. With `first_inline`
// the first entry continues the current line (after "- ").
void AppendMapping(const json& object, int indent, bool first_inline,
                   std::string* out) {
  bool first = true;
  for (const auto& [key, value] : object.items()) {
    if (!(first && first_inline)) out->append(indent, ' ');
    first = false;
    AppendString(key, out);
    out->push_back(':');
    if (IsInline(value)) {
      out->push_back(' ');
      AppendScalar(value, out);
      out->push_back('\n');
    } else if (value.is_object()) {
      out->push_back('\n');
      AppendMapping(value, indent + 2, false, out);
    } else {
      // kubectl's style: a list under a key is not indented further.
      out->push_back('\n');
      AppendSequence(value, indent, false, out);
    }
  }
}

void AppendSequence(const json& list, int indent, bool first_inline,
                    std::string* out) {
  bool first = true;
  for (const json& item : list) {
    if (!(first && first_inline)) out->append(indent, ' ');
    first = false;
    out->append("- ");
    if (IsInline(item)) {
      AppendScalar(item, out);
      out->push_back('\n');
    } else if (item.is_object()) {
      AppendMapping(item, indent + 2, true, out);
    } else {
      AppendSequence(item, indent + 2, true, out);
    }
  }
}

}  // namespace
}  // namespace internal

std::string ToYaml(const nlohmann::json& json) {
  std::string out;
  if (internal::IsInline(json)) {
    internal::AppendScalar(json, &out);
    out.push_back('\n');
  } else if (json.is_object()) {
    internal::AppendMapping(json, 0, false, &out);
  } else {
    internal::AppendSequence(json, 0, false, &out);
  }
  return out;
}

}  // namespace kq::manifest
