#include "proto/token_text.h"

#include <gtest/gtest.h>

namespace swarmcast::proto {
namespace {

TEST(TokenText, OneTokenALineCommentsAndBlanksSkipped) {
  auto t = ParseTokenText("# publishers\n\n  alpha \r\n\tbeta\n#gamma\n");
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(*t, (std::vector<std::string>{"alpha", "beta"}));
  auto last = ParseTokenText("no-newline-at-end");
  ASSERT_TRUE(last);
  EXPECT_EQ(*last, (std::vector<std::string>{"no-newline-at-end"}));
}

TEST(TokenText, EmptyOrHugeIsRefused) {
  EXPECT_EQ(ParseTokenText("").error(), "holds no token");
  EXPECT_EQ(ParseTokenText("# only a comment\n \n").error(), "holds no token");
  EXPECT_EQ(ParseTokenText(std::string(kMaxTokenFileBytes + 1, 'a')).error(), "over 64 KiB");
}

}  // namespace
}  // namespace swarmcast::proto
