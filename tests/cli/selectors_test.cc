// kubectl's label and field selectors as `kq list` matches them
// (cli/selectors.h). The label cases follow k8s.io/apimachinery's
// labels/selector_test.go (TestSelectorMatches, TestSelectorParse and
// TestLexer's inputs) where kq supports the operator.

#include "cli/selectors.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/map.h"
#include "gtest/gtest.h"

namespace kq::cli {
namespace {

using ::testing::HasSubstr;

google::protobuf::Map<std::string, std::string> Labels(
    const std::map<std::string, std::string>& labels) {
  return {labels.begin(), labels.end()};
}

struct MatchCase {
  std::string selector;
  std::map<std::string, std::string> labels;
  bool want;
};

TEST(LabelSelectorTest, Matches) {
  for (const MatchCase& tc : std::vector<MatchCase>{
           {"", {{"x", "y"}}, true},
           {"x=y", {{"x", "y"}}, true},
           {"x=y,z=w", {{"x", "y"}, {"z", "w"}}, true},
           {"x!=y,z!=w", {{"x", "z"}, {"z", "a"}}, true},
           {"notin=in", {{"notin", "in"}}, true},
           {"x", {{"x", "z"}}, true},
           {"!x", {{"y", "z"}}, true},
           {"x>1", {{"x", "2"}}, true},
           {"x<1", {{"x", "0"}}, true},
           {"x in (y,z)", {{"x", "z"}}, true},
           {"x notin (y,z)", {{"x", "w"}}, true},
           {"x notin (y,z)", {}, true},
           {"x==y", {{"x", "y"}}, true},
           {"x=", {{"x", ""}}, true},
           {"x in (,y)", {{"x", ""}}, true},
           {" x = y , z ", {{"x", "y"}, {"z", "1"}}, true},
           {"x=z", {}, false},
           {"x=y", {{"x", "z"}}, false},
           {"x=y,z=w", {{"x", "w"}, {"z", "w"}}, false},
           {"x!=y", {{"x", "y"}}, false},
           {"x", {}, false},
           {"!x", {{"x", "z"}}, false},
           {"x>1", {{"x", "0"}}, false},
           {"x>1", {{"x", "a"}}, false},
           {"x<1", {{"x", "2"}}, false},
           {"x in (y,z)", {{"x", "w"}}, false},
           {"x in (y,z)", {}, false},
           {"x notin (y,z)", {{"x", "y"}}, false},
       }) {
    SCOPED_TRACE(tc.selector);
    absl::StatusOr<LabelSelector> selector = LabelSelector::Parse(tc.selector);
    ASSERT_TRUE(selector.ok()) << selector.status();
    EXPECT_EQ(selector->Matches(Labels(tc.labels)), tc.want);
  }
}

TEST(LabelSelectorTest, RefusesMalformedSelectors) {
  struct Case {
    std::string selector;
    std::string want;
  };
  for (const Case& tc : std::vector<Case>{
           {"x=a,y=b,", "found '', expected: identifier after ','"},
           {",x=y", "found ',', expected: !, identifier"},
           {"x in (a", "found '', expected: ',' or ')'"},
           {"x in a", "found 'a', expected: '('"},
           {"x y", "found 'y', expected: =, !=, ==, in, notin, >, <"},
           {"!x=y", "found '=', expected: ',' or 'end of string'"},
           {"x=y z", "found 'z', expected: ',' or 'end of string'"},
           {"x>a", "the value must be an integer"},
           {"x=(", "found '(', expected: identifier"},
       }) {
    SCOPED_TRACE(tc.selector);
    absl::StatusOr<LabelSelector> selector = LabelSelector::Parse(tc.selector);
    ASSERT_FALSE(selector.ok());
    EXPECT_EQ(selector.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(selector.status().message(),
                HasSubstr(absl::StrCat("unable to parse label selector \"",
                                       tc.selector, "\": ")));
    EXPECT_THAT(selector.status().message(), HasSubstr(tc.want));
  }
}

TEST(FieldSelectorTest, MatchesTheNamedFields) {
  const std::vector<std::string> supported = {"metadata.name",
                                              "metadata.namespace"};
  const std::map<std::string, std::string> object = {
      {"metadata.name", "a,b=c"}, {"metadata.namespace", "ns"}};
  auto read = [&](const std::string& field) { return object.at(field); };
  struct Case {
    std::string selector;
    bool want;
  };
  for (const Case& tc : std::vector<Case>{
           {"", true},
           {"metadata.namespace=ns", true},
           {"metadata.namespace==ns", true},
           {"metadata.namespace!=other", true},
           {"metadata.name=a\\,b\\=c,metadata.namespace=ns", true},
           {"metadata.namespace=other", false},
           {"metadata.namespace!=ns", false},
           {"metadata.name=a", false},
       }) {
    SCOPED_TRACE(tc.selector);
    absl::StatusOr<FieldSelector> selector =
        FieldSelector::Parse(tc.selector, supported);
    ASSERT_TRUE(selector.ok()) << selector.status();
    EXPECT_EQ(selector->Matches(read), tc.want);
  }
}

TEST(FieldSelectorTest, RefusesUnknownFieldsAndBadTerms) {
  const std::vector<std::string> supported = {"metadata.name"};
  absl::StatusOr<FieldSelector> unknown =
      FieldSelector::Parse("spec.queueName=q", supported);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "field label not supported: spec.queueName");
  absl::StatusOr<FieldSelector> no_operator =
      FieldSelector::Parse("metadata.name", supported);
  ASSERT_FALSE(no_operator.ok());
  EXPECT_THAT(no_operator.status().message(),
              HasSubstr("can't understand 'metadata.name'"));
  absl::StatusOr<FieldSelector> bad_escape =
      FieldSelector::Parse("metadata.name=a\\b", supported);
  ASSERT_FALSE(bad_escape.ok());
  EXPECT_THAT(bad_escape.status().message(),
              HasSubstr("invalid escape sequence"));
}

}  // namespace
}  // namespace kq::cli
