#include "manifest/yaml.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

#include "manifest/manifest.h"

namespace kq::manifest {
namespace {

using internal::LoadDocuments;
using internal::ResolvePlainScalar;
using internal::YamlNeedsQuotes;
using nlohmann::json;
using ::testing::HasSubstr;

// Loads text that must hold exactly one convertible document.
json LoadOne(const std::string& text) {
  auto documents = LoadDocuments(text);
  EXPECT_TRUE(documents.ok()) << documents.status();
  if (!documents.ok() || documents->size() != 1) {
    ADD_FAILURE() << "want one document in:\n" << text;
    return nullptr;
  }
  EXPECT_TRUE((*documents)[0].ok()) << (*documents)[0].status();
  return (*documents)[0].ok() ? *(*documents)[0] : json(nullptr);
}

TEST(LoadDocumentsTest, PlainScalarsBecomeTypedQuotedScalarsStayStrings) {
  const json got = LoadOne(R"(
int: 16
negative: -3
float: 1.5
exp: 1e3
bool: true
null_word: null
tilde: ~
empty:
quoted_int: "16"
single_quoted_bool: 'true'
explicit_str: !!str 42
quantity: 256Gi
time: 2026-01-02T03:04:05Z
block: |
  two
  lines
hex: 0x1F
octal: 0o17
yes_is_a_string: yes
)");
  EXPECT_EQ(got["int"], json(16));
  EXPECT_TRUE(got["int"].is_number_integer());
  EXPECT_EQ(got["negative"], json(-3));
  EXPECT_EQ(got["float"], json(1.5));
  EXPECT_EQ(got["exp"], json(1000.0));
  EXPECT_EQ(got["bool"], json(true));
  EXPECT_TRUE(got["null_word"].is_null());
  EXPECT_TRUE(got["tilde"].is_null());
  EXPECT_TRUE(got["empty"].is_null());
  EXPECT_EQ(got["quoted_int"], json("16"));
  EXPECT_EQ(got["single_quoted_bool"], json("true"));
  EXPECT_EQ(got["explicit_str"], json("42"));
  EXPECT_EQ(got["quantity"], json("256Gi"));
  EXPECT_EQ(got["time"], json("2026-01-02T03:04:05Z"));
  EXPECT_EQ(got["block"], json("two\nlines\n"));
  EXPECT_EQ(got["hex"], json(31));
  EXPECT_EQ(got["octal"], json(15));
  EXPECT_EQ(got["yes_is_a_string"], json("yes"));
}

TEST(LoadDocumentsTest, TagsAndStylesDecideWhetherAScalarIsAString) {
  const json got = LoadOne(
      "non_specific: ! 16\nfolded: >\n  a\n  b\nint_tag: !!int 5\n"
      "double_quoted: \"~\"\n");
  EXPECT_EQ(got["non_specific"], json("16"));
  EXPECT_EQ(got["folded"], json("a b\n"));
  EXPECT_EQ(got["int_tag"], json(5));
  EXPECT_EQ(got["double_quoted"], json("~"));
}

TEST(LoadDocumentsTest, NullIsNoMapKey) {
  for (const char* text : {"~: a\n", "null: a\n", "? \n: a\n"}) {
    SCOPED_TRACE(text);
    auto documents = LoadDocuments(text);
    ASSERT_TRUE(documents.ok()) << documents.status();
    ASSERT_EQ(documents->size(), 1u);
    ASSERT_FALSE((*documents)[0].ok());
    EXPECT_THAT((*documents)[0].status().message(),
                HasSubstr("map keys must be strings"));
  }
  EXPECT_EQ(LoadOne("'~': a\n"), json({{"~", "a"}}));
}

TEST(LoadDocumentsTest, ResolvesCoreSchemaScalars) {
  EXPECT_TRUE(ResolvePlainScalar("").is_null());
  EXPECT_TRUE(ResolvePlainScalar("NULL").is_null());
  EXPECT_EQ(ResolvePlainScalar("False"), json(false));
  EXPECT_EQ(ResolvePlainScalar("+7"), json(7));
  EXPECT_EQ(ResolvePlainScalar("18446744073709551615"),
            json(18446744073709551615ULL));
  EXPECT_TRUE(ResolvePlainScalar("99999999999999999999999").is_number_float());
  EXPECT_EQ(ResolvePlainScalar(".5"), json(0.5));
  EXPECT_TRUE(std::isinf(ResolvePlainScalar("-.inf").get<double>()));
  EXPECT_TRUE(std::isnan(ResolvePlainScalar(".nan").get<double>()));
  EXPECT_EQ(ResolvePlainScalar("1.2.3"), json("1.2.3"));
  EXPECT_EQ(ResolvePlainScalar("0x"), json("0x"));
  EXPECT_EQ(ResolvePlainScalar("1e"), json("1e"));
  EXPECT_EQ(ResolvePlainScalar("nvidia.com/gpu"), json("nvidia.com/gpu"));
}

TEST(LoadDocumentsTest, SkipsEmptyDocuments) {
  auto documents =
      LoadDocuments("# header\n---\na: 1\n---\n---\n# x\n---\nb: 2\n");
  ASSERT_TRUE(documents.ok()) << documents.status();
  ASSERT_EQ(documents->size(), 2u);
  EXPECT_EQ(*(*documents)[0], json({{"a", 1}}));
  EXPECT_EQ(*(*documents)[1], json({{"b", 2}}));

  auto none = LoadDocuments(" \n# only a comment\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(LoadDocumentsTest, ReadsAJsonStream) {
  auto documents = LoadDocuments(R"({"a": 1, "q": "16"} {"b": [1, 2]}
{"c": null})");
  ASSERT_TRUE(documents.ok()) << documents.status();
  ASSERT_EQ(documents->size(), 3u);
  EXPECT_EQ(*(*documents)[0], json({{"a", 1}, {"q", "16"}}));
  EXPECT_EQ(*(*documents)[1], json({{"b", {1, 2}}}));
}

TEST(LoadDocumentsTest, FlowYamlThatIsNotJsonFallsBackToYaml) {
  const json got = LoadOne("{a: 1, b: [x, 'y']}");
  EXPECT_EQ(got, json({{"a", 1}, {"b", {"x", "y"}}}));
}

TEST(LoadDocumentsTest, SyntaxErrorFailsTheWholeCallWithLineAndColumn) {
  auto documents = LoadDocuments("a: 1\nb: [1, 2\nc: 3\n");
  ASSERT_FALSE(documents.ok());
  EXPECT_EQ(documents.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(documents.status().message(), HasSubstr("yaml: line "));
  EXPECT_THAT(documents.status().message(), HasSubstr(", column "));

  auto bad_indent = LoadDocuments("a:\n  b: 1\n c: 2\n");
  ASSERT_FALSE(bad_indent.ok());
  EXPECT_THAT(bad_indent.status().message(), HasSubstr("yaml: line 3,"));
}

TEST(LoadDocumentsTest, DocumentsThatCannotBecomeJsonFailAlone) {
  auto documents = LoadDocuments(
      "a: 1\n---\nspec:\n  x: 1\n  x: 2\n---\n? [a, b]\n: 1\n---\nc: 3\n");
  ASSERT_TRUE(documents.ok()) << documents.status();
  ASSERT_EQ(documents->size(), 4u);
  EXPECT_TRUE((*documents)[0].ok());
  ASSERT_FALSE((*documents)[1].ok());
  EXPECT_EQ((*documents)[1].status().message(), "spec.x: duplicate key");
  ASSERT_FALSE((*documents)[2].ok());
  EXPECT_THAT((*documents)[2].status().message(),
              HasSubstr("map keys must be strings"));
  EXPECT_TRUE((*documents)[3].ok());
}

// yaml-cpp 0.7's LoadAll never returned on these (jbeder/yaml-cpp#1040),
// allocating until memory ran out; they stay syntax errors.
TEST(LoadDocumentsTest, InputThatStalledYamlCppIsASyntaxError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {",", "yaml: line 1, column 1: "},
      {",apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n",
       "yaml: line 1, column 1: "},
      {"- a\n,\n- b\n", "yaml: line 2, column 1: "},
      {"apiVersion: v1\n---\n,\n", "yaml: line 3, column 1: "},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    auto documents = LoadDocuments(text);
    ASSERT_FALSE(documents.ok());
    EXPECT_EQ(documents.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(documents.status().message(), HasSubstr(want));
  }
}

TEST(LoadDocumentsTest, AnchorsAndAliasesAreExpanded) {
  const json got = LoadOne(
      "base: &base {cpu: \"1\", memory: 2Gi}\n"
      "copy: *base\n"
      "list: [&one 1, *one]\n");
  EXPECT_EQ(got["copy"], json({{"cpu", "1"}, {"memory", "2Gi"}}));
  EXPECT_EQ(got["list"], json({1, 1}));

  auto unknown = LoadDocuments("a: &a [*a]\n");
  // The parser itself may refuse the self-reference; either way it is an
  // error, never a cycle.
  const bool refused =
      !unknown.ok() || (unknown->size() == 1 && !(*unknown)[0].ok());
  EXPECT_TRUE(refused);
}

TEST(LoadDocumentsTest, KeysAreStringsWhateverTheyLookLike) {
  const json got = LoadOne("16: a\ntrue: b\n'x': c\n");
  EXPECT_EQ(got, json({{"16", "a"}, {"true", "b"}, {"x", "c"}}));
}

TEST(LoadDocumentsTest, AliasBombsAreRefused) {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  std::string previous = "a";
  for (int i = 0; i < 8; ++i) {
    const std::string name = "l" + std::to_string(i);
    text += name + ": &" + name + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", *" : "*") + previous;
    text += "]\n";
    previous = name;
  }
  auto documents = LoadDocuments(text);
  ASSERT_TRUE(documents.ok()) << documents.status();
  ASSERT_EQ(documents->size(), 1u);
  ASSERT_FALSE((*documents)[0].ok());
  EXPECT_THAT((*documents)[0].status().message(), HasSubstr("too large"));
}

TEST(ToYamlTest, WritesBlockStyleLikeKubectl) {
  const json object = json::parse(R"({
    "apiVersion": "kueue.x-k8s.io/v1beta1",
    "kind": "ClusterQueue",
    "metadata": {"name": "cq", "labels": {"team": "ml"}},
    "spec": {
      "namespaceSelector": {},
      "resourceGroups": [{
        "coveredResources": ["cpu", "nvidia.com/gpu"],
        "flavors": [{"name": "a100", "resources": [
          {"name": "cpu", "nominalQuota": "16"},
          {"name": "nvidia.com/gpu", "nominalQuota": "8"}]}]
      }],
      "admissionChecks": [],
      "matrix": [[1, 2], []],
      "stopPolicy": "None"
    },
    "status": {"pendingWorkloads": 0, "ratio": 0.5, "active": true,
               "none": null}
  })");
  EXPECT_EQ(ToYaml(object), R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  labels:
    team: ml
  name: cq
spec:
  admissionChecks: []
  matrix:
  - - 1
    - 2
  - []
  namespaceSelector: {}
  resourceGroups:
  - coveredResources:
    - cpu
    - nvidia.com/gpu
    flavors:
    - name: a100
      resources:
      - name: cpu
        nominalQuota: "16"
      - name: nvidia.com/gpu
        nominalQuota: "8"
  stopPolicy: None
status:
  active: true
  none: null
  pendingWorkloads: 0
  ratio: 0.5
)");
}

TEST(ToYamlTest, WritesScalarsAndEmptyDocuments) {
  EXPECT_EQ(ToYaml(json::object()), "{}\n");
  EXPECT_EQ(ToYaml(json::array()), "[]\n");
  EXPECT_EQ(ToYaml(json("x")), "x\n");
  EXPECT_EQ(ToYaml(json({1, "a"})), "- 1\n- a\n");
}

TEST(ToYamlTest, QuotesOnlyStringsThatWouldNotReadBackAsThemselves) {
  const std::vector<std::string> quoted = {
      "",       "true", "False", "yes",
      "No",     "on",   "OFF",   "y",
      "null",   "~",    "16",    "-3",
      "1.5",    "1e3",  ".5",    "0x1F",
      ".inf",   "a: b", "- x",   "-",
      "#x",     "x #y", "x:",    "[a]",
      "{a}",    "*ref", "&anc",  "!tag",
      "|",      ">",    "'q'",   "\"q\"",
      "%x",     "@x",   "`x`",   " lead",
      "trail ", "a\nb", "tab\t", "1:20",
      "1_000",  "...",  "<<",    "2026-01-02T03:04:05Z",
      "?x",     ",x"};
  for (const std::string& s : quoted) {
    SCOPED_TRACE(s);
    EXPECT_TRUE(YamlNeedsQuotes(s));
  }
  const std::vector<std::string> plain = {
      "256Gi",
      "nvidia.com/gpu",
      "BestEffortFIFO",
      "kueue.x-k8s.io/queue-name",
      "a b",
      "x-y",
      "a:b",
      "http://x/y",
      "500m",
      "1Gi",
      "job-llm-finetune-0919",
      "Production model training; may preempt lower-priority workloads"};
  for (const std::string& s : plain) {
    SCOPED_TRACE(s);
    EXPECT_FALSE(YamlNeedsQuotes(s));
  }
}

TEST(ToYamlTest, EveryStringReadsBackUnchanged) {
  const std::vector<std::string> strings = {"",
                                            "true",
                                            "16",
                                            "1.5",
                                            "a: b",
                                            "- x",
                                            "#x",
                                            "a\nb\n",
                                            "tab\there",
                                            "quote\"s",
                                            "back\\slash",
                                            "\x01"
                                            "ctl",
                                            "ünïcødé",
                                            "256Gi",
                                            "null",
                                            "~",
                                            "2026-01-02T03:04:05Z",
                                            "[a]",
                                            " lead",
                                            "trail ",
                                            "'single'",
                                            "...",
                                            "---"};
  for (const std::string& s : strings) {
    SCOPED_TRACE(s);
    json object = {{"key", s}, {s.empty() ? "empty" : s, "value"}};
    const std::string yaml = ToYaml(object);
    EXPECT_EQ(LoadOne(yaml), object) << yaml;
  }
}

TEST(ToYamlTest, NumbersAndBooleansReadBackWithTheirTypes) {
  const json object = {
      {"int", 16},    {"neg", -3},       {"float", 1.5},         {"big", 1e100},
      {"true", true}, {"null", nullptr}, {"list", {1, 2.5, "3"}}};
  EXPECT_EQ(LoadOne(ToYaml(object)), object);
}

}  // namespace
}  // namespace kq::manifest
