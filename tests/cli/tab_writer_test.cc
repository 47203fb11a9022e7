#include "cli/printers/tab_writer.h"

#include "gtest/gtest.h"

namespace kq::cli {
namespace {

TEST(TabWriterTest, PadsEveryColumnButTheLast) {
  TabWriter w(0, 3);
  w.AddLine({"NAME", "AGE"});
  w.AddLine({"a-long-name", "5m"});
  EXPECT_EQ(w.Render(),
            "NAME          AGE\n"
            "a-long-name   5m\n");
}

TEST(TabWriterTest, MinimumWidthIncludesPadding) {
  TabWriter w(6, 3);
  w.AddLine({"A", "B", "C"});
  w.AddLine({"x", "yy", "z"});
  EXPECT_EQ(w.Render(),
            "A     B     C\n"
            "x     yy    z\n");
}

TEST(TabWriterTest, TrimsTrailingSpacesOfEmptyLastCells) {
  TabWriter w(0, 2);
  w.AddLine({"Key:", ""});
  w.AddLine({"Longer:", "v"});
  EXPECT_EQ(w.Render(),
            "Key:\n"
            "Longer:  v\n");
}

TEST(TabWriterTest, SingleCellLineEndsTheColumnBlock) {
  TabWriter w(0, 2);
  w.AddLine({"A:", "1"});
  w.AddLine({"Section:"});
  w.AddLine({"  Much-longer-key:", "2"});
  w.AddLine({"  B:", "3"});
  EXPECT_EQ(w.Render(),
            "A:  1\n"
            "Section:\n"
            "  Much-longer-key:  2\n"
            "  B:                3\n");
}

TEST(TabWriterTest, CountsUtf8CodePoints) {
  TabWriter w(0, 1);
  w.AddLine({"\xC3\xA9t\xC3\xA9", "x"});  // "été": 3 code points, 5 bytes
  w.AddLine({"abc", "y"});
  EXPECT_EQ(w.Render(),
            "\xC3\xA9t\xC3\xA9 x\n"
            "abc y\n");
}

TEST(StreamingTabWriterTest, BatchLinesUpAndLaterRowsOnlyWiden) {
  StreamingTabWriter w(6, 3);
  EXPECT_EQ(w.Lines({{"NAME", "AGE", "STATUS"}, {"a", "5m", "Pending"}}),
            "NAME   AGE   STATUS\n"
            "a      5m    Pending\n");
  // Narrower: keeps the columns.
  EXPECT_EQ(w.Line({"b", "1s", "Admitted"}), "b      1s    Admitted\n");
  // Wider: that column grows, and stays grown.
  EXPECT_EQ(w.Line({"long-name", "2h", "Admitted"}),
            "long-name   2h    Admitted\n");
  EXPECT_EQ(w.Line({"c", "3d", ""}), "c           3d\n");
}

}  // namespace
}  // namespace kq::cli
