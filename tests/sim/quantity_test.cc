#include "tools/sim/quantity.h"

#include <gtest/gtest.h>

namespace swarmcast::sim {
namespace {

TEST(QuantityTest, Rates) {
  EXPECT_DOUBLE_EQ(*ParseRate("100Mbit"), 100e6);
  EXPECT_DOUBLE_EQ(*ParseRate("10gbit"), 10e9);
  EXPECT_DOUBLE_EQ(*ParseRate("2.5Gbit/s"), 2.5e9);
  EXPECT_DOUBLE_EQ(*ParseRate("25Gbps"), 25e9);
  EXPECT_FALSE(ParseRate("fast").ok());
  EXPECT_FALSE(ParseRate("10MB").ok());
  EXPECT_FALSE(ParseRate("0Mbit").ok());
}

TEST(QuantityTest, Sizes) {
  EXPECT_EQ(*ParseSize("64MiB"), 64ll << 20);
  EXPECT_EQ(*ParseSize("10GB"), 10'000'000'000ll);
  EXPECT_EQ(*ParseSize("256KiB"), 256 << 10);
  EXPECT_EQ(*ParseSize("1048576"), 1 << 20);
  EXPECT_EQ(*ParseSize("1.5GiB"), 3ll << 29);
  EXPECT_FALSE(ParseSize("-1").ok());
  EXPECT_FALSE(ParseSize("12 parsecs").ok());
  EXPECT_FALSE(ParseSize("0").ok());
}

}  // namespace
}  // namespace swarmcast::sim
