#include "node/units.h"

#include <gtest/gtest.h>

namespace swarmcast::node {
namespace {

using std::chrono::milliseconds;

TEST(ParseByteSize, UnitsAreBinary) {
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(*ParseByteSize("256KiB"), 256 * 1024);
  EXPECT_EQ(*ParseByteSize("256K"), 256 * 1024);
  EXPECT_EQ(*ParseByteSize("4MiB"), 4 << 20);
  EXPECT_EQ(*ParseByteSize("2G"), std::int64_t{2} << 30);
  EXPECT_EQ(*ParseByteSize("0"), 0);
}

TEST(ParseByteSize, RejectsJunkAndOverflow) {
  EXPECT_FALSE(ParseByteSize(""));
  EXPECT_FALSE(ParseByteSize("-1"));
  EXPECT_FALSE(ParseByteSize("12XB"));
  EXPECT_FALSE(ParseByteSize("MiB"));
  EXPECT_FALSE(ParseByteSize("99999999999999999999"));
  EXPECT_FALSE(ParseByteSize("9999999999999TiB"));
}

TEST(ParseDuration, AcceptsUnitsAndCombinations) {
  EXPECT_EQ(*ParseDuration("0"), milliseconds(0));
  EXPECT_EQ(*ParseDuration("45"), milliseconds(45'000));
  EXPECT_EQ(*ParseDuration("45s"), milliseconds(45'000));
  EXPECT_EQ(*ParseDuration("5m"), milliseconds(300'000));
  EXPECT_EQ(*ParseDuration("1h30m"), milliseconds(5'400'000));
  EXPECT_EQ(*ParseDuration("1500ms"), milliseconds(1500));
}

TEST(ParseDuration, RejectsJunkAndHugeValues) {
  EXPECT_FALSE(ParseDuration(""));
  EXPECT_FALSE(ParseDuration("s"));
  EXPECT_FALSE(ParseDuration("5x"));
  EXPECT_FALSE(ParseDuration("5m3"));  // a bare number only on its own
  EXPECT_FALSE(ParseDuration("-5s"));
  EXPECT_FALSE(ParseDuration("31d"));
  EXPECT_FALSE(ParseDuration("99999999999999999999h"));
}

TEST(Format, BytesAndSeconds) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(256.0 * (1 << 20)), "256.0 MiB");
  EXPECT_EQ(FormatSeconds(42), "42s");
  EXPECT_EQ(FormatSeconds(65), "1m05s");
  EXPECT_EQ(FormatSeconds(3720), "1h02m");
  EXPECT_EQ(FormatSeconds(-1), "--");
}

}  // namespace
}  // namespace swarmcast::node
