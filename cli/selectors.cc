#include "cli/selectors.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace kq::cli {
namespace {

// labels.Parse's lexer: identifiers, and its special symbols.
enum class Token {
  kEnd,
  kIdentifier,
  kIn,
  kNotIn,
  kEquals,        // =
  kDoubleEquals,  // ==
  kNotEquals,     // !=
  kBang,          // !
  kOpenParen,
  kCloseParen,
  kComma,
  kGreaterThan,
  kLessThan,
};

struct Lexeme {
  Token token;
  std::string text;
};

bool IsSpecial(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' ||
         c == '<';
}

std::vector<Lexeme> Lex(absl::string_view text) {
  std::vector<Lexeme> out;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (IsSpecial(c)) {
      // The longest symbol: "==" and "!=" before "=" and "!".
      const bool pair = i + 1 < text.size() && text[i + 1] == '=';
      if (c == '=' && pair) {
        out.push_back({Token::kDoubleEquals, "=="});
        i += 2;
      } else if (c == '!' && pair) {
        out.push_back({Token::kNotEquals, "!="});
        i += 2;
      } else {
        static constexpr std::pair<char, Token> kSingle[] = {
            {'=', Token::kEquals},    {'!', Token::kBang},
            {'(', Token::kOpenParen}, {')', Token::kCloseParen},
            {',', Token::kComma},     {'>', Token::kGreaterThan},
            {'<', Token::kLessThan}};
        for (const auto& [symbol, token] : kSingle) {
          if (symbol == c) out.push_back({token, std::string(1, c)});
        }
        ++i;
      }
      continue;
    }
    size_t end = i;
    while (end < text.size() &&
           !absl::ascii_isspace(static_cast<unsigned char>(text[end])) &&
           !IsSpecial(text[end])) {
      ++end;
    }
    std::string word(text.substr(i, end - i));
    const Token token = word == "in"      ? Token::kIn
                        : word == "notin" ? Token::kNotIn
                                          : Token::kIdentifier;
    out.push_back({token, std::move(word)});
    i = end;
  }
  out.push_back({Token::kEnd, ""});
  return out;
}

// labels.Parse's errors, naming the selector.
absl::Status Found(absl::string_view selector, const Lexeme& lexeme,
                   absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("unable to parse label selector \"", selector, "\": found '",
                   lexeme.text, "', expected: ", expected));
}

// In a key's or a value's place the keywords are plain words, as
// labels.Parse's lookahead in its Values context makes them.
bool IsWord(Token token) {
  return token == Token::kIdentifier || token == Token::kIn ||
         token == Token::kNotIn;
}

// Field selector terms split at unescaped commas, with the escapes kept.
std::vector<std::string> SplitTerms(absl::string_view text) {
  std::vector<std::string> terms(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      absl::StrAppend(&terms.back(), text.substr(i, 2));
      ++i;
    } else if (text[i] == ',') {
      terms.emplace_back();
    } else {
      terms.back() += text[i];
    }
  }
  return terms;
}

// fields.UnescapeValue: a backslash must escape one of `\`, `,` and `=`.
absl::StatusOr<std::string> Unescape(absl::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '\\') {
      if (value[i] == ',' || value[i] == '=') {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid field selector: unescaped '",
                         value.substr(i, 1), "' in value"));
      }
      out += value[i];
      continue;
    }
    if (i + 1 == value.size() ||
        (value[i + 1] != '\\' && value[i + 1] != ',' && value[i + 1] != '=')) {
      return absl::InvalidArgumentError(
          "invalid field selector: invalid escape sequence");
    }
    out += value[++i];
  }
  return out;
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(absl::string_view text) {
  LabelSelector selector;
  const std::vector<Lexeme> lexemes = Lex(text);
  size_t at = 0;
  auto next = [&]() -> const Lexeme& { return lexemes[at]; };
  auto take = [&]() -> const Lexeme& { return lexemes[at++]; };
  if (next().token == Token::kEnd) return selector;
  while (true) {
    Requirement r;
    // 1. The key, and `!key`.
    bool negated = false;
    if (next().token == Token::kBang) {
      negated = true;
      take();
    }
    if (!IsWord(next().token)) {
      return Found(text, next(),
                   selector.requirements_.empty() || negated
                       ? "!, identifier, or 'end of string'"
                       : "identifier after ','");
    }
    r.key = take().text;
    // 2. The operator; a bare key (or `!key`) tests its presence.
    if (negated || next().token == Token::kEnd ||
        next().token == Token::kComma) {
      if (negated && next().token != Token::kEnd &&
          next().token != Token::kComma) {
        return Found(text, next(), "',' or 'end of string'");
      }
      r.op = negated ? Op::kNotExists : Op::kExists;
    } else {
      switch (next().token) {
        case Token::kEquals:
        case Token::kDoubleEquals:
          r.op = Op::kEquals;
          break;
        case Token::kNotEquals:
          r.op = Op::kNotEquals;
          break;
        case Token::kIn:
          r.op = Op::kIn;
          break;
        case Token::kNotIn:
          r.op = Op::kNotIn;
          break;
        case Token::kGreaterThan:
          r.op = Op::kGreaterThan;
          break;
        case Token::kLessThan:
          r.op = Op::kLessThan;
          break;
        default:
          return Found(text, next(), "=, !=, ==, in, notin, >, <");
      }
      take();
      // 3. The values: a set for in/notin, else one (maybe empty) value.
      if (r.op == Op::kIn || r.op == Op::kNotIn) {
        if (next().token != Token::kOpenParen)
          return Found(text, next(), "'('");
        take();
        while (true) {
          if (IsWord(next().token)) {
            r.values.insert(take().text);
          } else if (next().token == Token::kComma ||
                     next().token == Token::kCloseParen) {
            r.values.insert("");
          } else {
            return Found(text, next(), "',', ')' or identifier");
          }
          if (next().token == Token::kCloseParen) break;
          if (next().token != Token::kComma) {
            return Found(text, next(), "',' or ')'");
          }
          take();
        }
        take();
      } else if (IsWord(next().token)) {
        r.values.insert(take().text);
      } else if (next().token == Token::kEnd || next().token == Token::kComma) {
        r.values.insert("");
      } else {
        return Found(text, next(), "identifier");
      }
      if (r.op == Op::kGreaterThan || r.op == Op::kLessThan) {
        if (!absl::SimpleAtoi(*r.values.begin(), &r.number)) {
          return absl::InvalidArgumentError(absl::StrCat(
              "unable to parse label selector \"", text,
              "\": for 'Gt', 'Lt' operators, the value must be an integer "
              "(got \"",
              *r.values.begin(), "\")"));
        }
      }
    }
    selector.requirements_.push_back(std::move(r));
    // 4. More requirements after a comma, or the end.
    if (next().token == Token::kEnd) break;
    if (next().token != Token::kComma) {
      return Found(text, next(), "',' or 'end of string'");
    }
    take();
  }
  return selector;
}

bool LabelSelector::Matches(
    const google::protobuf::Map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    const bool has = it != labels.end();
    bool ok = false;
    switch (r.op) {
      case Op::kExists:
        ok = has;
        break;
      case Op::kNotExists:
        ok = !has;
        break;
      case Op::kEquals:
      case Op::kIn:
        ok = has && r.values.count(it->second) > 0;
        break;
      case Op::kNotEquals:
      case Op::kNotIn:
        ok = !has || r.values.count(it->second) == 0;
        break;
      case Op::kGreaterThan:
      case Op::kLessThan: {
        int64_t value = 0;
        ok = has && absl::SimpleAtoi(it->second, &value) &&
             (r.op == Op::kGreaterThan ? value > r.number : value < r.number);
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<FieldSelector> FieldSelector::Parse(
    absl::string_view text, const std::vector<std::string>& supported) {
  FieldSelector selector;
  if (absl::StripAsciiWhitespace(text).empty()) return selector;
  for (const std::string& raw : SplitTerms(text)) {
    // The operator is the first unescaped "!=", "==" or "=".
    size_t op = std::string::npos;
    size_t op_len = 0;
    bool equals = true;
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\') {
        ++i;
        continue;
      }
      if (raw.compare(i, 2, "!=") == 0 || raw.compare(i, 2, "==") == 0) {
        equals = raw[i] == '=';
        op_len = 2;
      } else if (raw[i] == '=') {
        op_len = 1;
      } else {
        continue;
      }
      op = i;
      break;
    }
    if (op == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid selector: '", text, "'; can't understand '", raw, "'"));
    }
    Term term{std::string(absl::StripAsciiWhitespace(raw.substr(0, op))),
              equals, ""};
    absl::StatusOr<std::string> value = Unescape(raw.substr(op + op_len));
    if (!value.ok()) return value.status();
    term.value = *std::move(value);
    if (std::find(supported.begin(), supported.end(), term.field) ==
        supported.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("field label not supported: ", term.field));
    }
    selector.terms_.push_back(std::move(term));
  }
  return selector;
}

bool FieldSelector::Matches(const FieldReader& read) const {
  for (const Term& term : terms_) {
    if ((read(term.field) == term.value) != term.equals) return false;
  }
  return true;
}

}  // namespace kq::cli
