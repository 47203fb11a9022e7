#include "manifest/yaml.h"

#include <yaml.h>

#include <algorithm>
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

#include "absl/cleanup/cleanup.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

#include "base/status_macros.h"
#include "manifest/manifest.h"
#include "manifest/reader.h"

namespace kq::manifest {
namespace internal {
namespace {

using nlohmann::json;

// Aliases let a small YAML text expand into a huge tree ("billion laughs");
// no Kueue object comes near these bounds.
constexpr size_t kMaxNodesPerDocument = 1'000'000;
constexpr size_t kMaxDepth = 128;

// The tags that make a scalar a string whatever it looks like: the
// non-specific "!" (`! 16`) and `!!str`.
constexpr absl::string_view kNonSpecificTag = "!";
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

bool ResolvesToNull(absl::string_view text) {
  return text.empty() || text == "~" || text == "null" || text == "Null" ||
         text == "NULL";
}

// A libyaml string (anchor, tag), or "" for none.
absl::string_view TextOf(const yaml_char_t* text) {
  return text == nullptr
             ? absl::string_view()
             : absl::string_view(reinterpret_cast<const char*>(text));
}

// Why libyaml stopped, as "yaml: line L, column C: <problem>".
absl::Status ParseError(const yaml_parser_t& parser, absl::string_view text) {
  size_t line = parser.problem_mark.line;
  size_t column = parser.problem_mark.column;
  if (parser.error == YAML_READER_ERROR) {
    // The reader (bad UTF-8, say) gives a byte offset only; columns count
    // characters, as the scanner's do.
    const size_t offset = std::min(parser.problem_offset, text.size());
    line = column = 0;
    for (size_t i = 0; i < offset; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 0;
      } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
        ++column;
      }
    }
  }
  // libyaml's marks are 0-based; people count lines and columns from 1.
  std::string message =
      absl::StrCat("yaml: line ", line + 1, ", column ", column + 1, ": ",
                   parser.problem != nullptr ? parser.problem : "not YAML");
  if (parser.context != nullptr) {
    absl::StrAppend(&message, " (", parser.context, " at line ",
                    parser.context_mark.line + 1, ")");
  }
  return absl::InvalidArgumentError(message);
}

// Builds one JSON value per YAML document from libyaml's parser events
// (LoadDocuments feeds them). Thread-compatible; reused across the
// documents of one text.
class JsonBuilder {
 public:
  // The finished document: its JSON (null when empty), or why it cannot be
  // JSON.
  absl::StatusOr<json> Take() {
    if (!error_.ok()) return error_;
    return std::move(root_);
  }

  void OnDocumentStart() {
    root_ = nullptr;
    stack_.clear();
    anchors_.clear();
    error_ = absl::OkStatus();
    budget_ = kMaxNodesPerDocument;
  }

  void OnAlias(absl::string_view anchor) {
    if (!error_.ok() || !NotAKey()) return;
    const auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Fail(ChildPath(), "alias of an unknown anchor");
      return;
    }
    // Aliases copy: charge the copy, so a small text cannot expand into a
    // huge tree ("billion laughs").
    if (!Charge(CountNodes(it->second, budget_ + 1))) return;
    Add(it->second, "");
  }

  // `is_string`: quoted, block or tagged as a string; otherwise the value
  // is resolved as a plain scalar.
  void OnScalar(absl::string_view anchor, absl::string_view value,
                bool is_string) {
    if (!Charge(1)) return;
    Frame* top = stack_.empty() ? nullptr : &stack_.back();
    if (top != nullptr && top->value.is_object() && !top->key.has_value()) {
      // Map keys are strings whatever they look like (`16: x` has key
      // "16"), as Kubernetes' YAML reader makes them; but null is no key.
      if (!is_string && ResolvesToNull(value)) {
        Fail(top->path, "map keys must be strings");
        return;
      }
      std::string key(value);
      if (top->value.contains(key)) {
        Fail(FieldPath(top->path, key), "duplicate key");
        return;
      }
      top->key = std::move(key);
      return;
    }
    Add(is_string ? json(std::string(value)) : ResolvePlainScalar(value),
        anchor);
  }

  void OnSequenceStart(absl::string_view anchor) {
    Open(json::array(), anchor);
  }
  void OnMappingStart(absl::string_view anchor) {
    Open(json::object(), anchor);
  }
  void OnCollectionEnd() { Close(); }

 private:
  // A collection being built.
  struct Frame {
    json value;
    std::string anchor;  // empty: none
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

  void Open(json value, absl::string_view anchor) {
    if (!Charge(1) || !NotAKey()) return;
    if (stack_.size() >= kMaxDepth) {
      Fail(ChildPath(), "nested too deeply");
      return;
    }
    std::string path = ChildPath();
    stack_.push_back(Frame{.value = std::move(value),
                           .anchor = std::string(anchor),
                           .path = std::move(path)});
  }

  void Close() {
    if (!error_.ok() || stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Add(std::move(frame.value), frame.anchor);
  }

  // Places a finished node in its parent (or as the document).
  void Add(json value, absl::string_view anchor) {
    if (!anchor.empty()) anchors_[std::string(anchor)] = value;
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

  json root_;
  std::vector<Frame> stack_;
  std::map<std::string, json, std::less<>> anchors_;
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
  if (ResolvesToNull(text)) return json(nullptr);
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

  // libyaml, the parser Kubernetes' own YAML reader was ported from (go-yaml),
  // so kq reads a manifest as kubectl does.
  yaml_parser_t parser;
  if (!yaml_parser_initialize(&parser)) {
    return absl::ResourceExhaustedError("yaml: cannot initialize the parser");
  }
  absl::Cleanup delete_parser = [&parser] { yaml_parser_delete(&parser); };
  yaml_parser_set_input_string(
      &parser, reinterpret_cast<const unsigned char*>(text.data()),
      text.size());
  JsonBuilder builder;
  while (true) {
    yaml_event_t event;
    if (!yaml_parser_parse(&parser, &event)) return ParseError(parser, text);
    absl::Cleanup delete_event = [&event] { yaml_event_delete(&event); };
    switch (event.type) {
      case YAML_STREAM_END_EVENT:
        return documents;
      case YAML_DOCUMENT_START_EVENT:
        builder.OnDocumentStart();
        break;
      case YAML_DOCUMENT_END_EVENT: {
        absl::StatusOr<json> document = builder.Take();
        if (document.ok() && document->is_null()) break;  // Empty.
        documents.push_back(std::move(document));
        break;
      }
      case YAML_ALIAS_EVENT:
        builder.OnAlias(TextOf(event.data.alias.anchor));
        break;
      case YAML_SCALAR_EVENT: {
        const auto& scalar = event.data.scalar;
        const absl::string_view tag = TextOf(scalar.tag);
        const bool is_string = tag.empty()
                                   ? scalar.style != YAML_PLAIN_SCALAR_STYLE
                                   : tag == kNonSpecificTag || tag == kStrTag;
        builder.OnScalar(
            TextOf(scalar.anchor),
            absl::string_view(reinterpret_cast<const char*>(scalar.value),
                              scalar.length),
            is_string);
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
        builder.OnSequenceStart(TextOf(event.data.sequence_start.anchor));
        break;
      case YAML_MAPPING_START_EVENT:
        builder.OnMappingStart(TextOf(event.data.mapping_start.anchor));
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        builder.OnCollectionEnd();
        break;
      default:  // Stream start, and no event at all.
        break;
    }
  }
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
