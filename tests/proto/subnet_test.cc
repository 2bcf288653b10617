#include "proto/subnet.h"

#include <gtest/gtest.h>

#include <array>

namespace swarmcast::proto {
namespace {

using V4 = std::array<std::uint8_t, 4>;
using V6 = std::array<std::uint8_t, 16>;

TEST(SameSubnet, Ipv4ComparesTheFirst24BitsByDefault) {
  EXPECT_TRUE(SameSubnet(V4{10, 0, 1, 5}, V4{10, 0, 1, 200}));
  EXPECT_FALSE(SameSubnet(V4{10, 0, 1, 5}, V4{10, 0, 2, 5}));
  EXPECT_TRUE(SameSubnet(V4{10, 0, 2, 5}, V4{10, 0, 3, 5}, {.v4 = 23}));
  EXPECT_FALSE(SameSubnet(V4{10, 0, 1, 5}, V4{10, 0, 2, 5}, {.v4 = 23}));
  EXPECT_TRUE(SameSubnet(V4{10, 0, 1, 5}, V4{192, 168, 1, 5}, {.v4 = 0}));
  EXPECT_FALSE(SameSubnet(V4{10, 0, 1, 5}, V4{10, 0, 1, 6}, {.v4 = 99}));  // clamped to 32
}

TEST(SameSubnet, Ipv6ComparesTheFirst64BitsByDefault) {
  V6 a{0xfd, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1};
  V6 b = a;
  b[15] = 2;
  EXPECT_TRUE(SameSubnet(a, b));
  b[7] = 2;
  EXPECT_FALSE(SameSubnet(a, b));
  EXPECT_TRUE(SameSubnet(a, b, {.v6 = 60}));
}

TEST(SameSubnet, MixedFamiliesAndOtherLengthsNeverMatch) {
  V6 mapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 1, 5};
  EXPECT_FALSE(SameSubnet(V4{10, 0, 1, 5}, mapped));
  std::array<std::uint8_t, 5> odd{10, 0, 1, 5, 0};
  EXPECT_FALSE(SameSubnet(odd, odd));
}

}  // namespace
}  // namespace swarmcast::proto
