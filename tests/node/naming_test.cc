#include "node/naming.h"

#include <gtest/gtest.h>

#include <string>

namespace swarmcast::node {
namespace {

TEST(SwarmName, FollowsTheRegistryGrammar) {
  EXPECT_TRUE(IsValidSwarmName("ubuntu-24.04.img"));
  EXPECT_TRUE(IsValidSwarmName("a"));
  EXPECT_TRUE(IsValidSwarmName("A_b-c.d"));
  EXPECT_TRUE(IsValidSwarmName(std::string(128, 'x')));
  EXPECT_FALSE(IsValidSwarmName(std::string(129, 'x')));
  EXPECT_FALSE(IsValidSwarmName(""));
  EXPECT_FALSE(IsValidSwarmName(".hidden"));
  EXPECT_FALSE(IsValidSwarmName("-flag"));
  EXPECT_FALSE(IsValidSwarmName("a/b"));
  EXPECT_FALSE(IsValidSwarmName("a b"));
  EXPECT_FALSE(IsValidSwarmName("a%2e"));
}

TEST(SwarmName, NeverAnInfoHashSpelling) {
  const std::string h40(40, 'a'), h64(64, 'F');
  EXPECT_FALSE(IsValidSwarmName(h40));
  EXPECT_FALSE(IsValidSwarmName(h64));
  EXPECT_TRUE(IsValidSwarmName(std::string(39, 'a')));
  EXPECT_TRUE(IsValidSwarmName(std::string(39, 'a') + "g"));
  EXPECT_TRUE(IsInfoHashHex(h40));
  EXPECT_TRUE(IsInfoHashHex("97CEBE53cf04ab02712a94991fc36e079614c008"));
  EXPECT_FALSE(IsInfoHashHex(h64));
  EXPECT_FALSE(IsInfoHashHex(std::string(39, 'a') + "g"));
}

TEST(PieceSize, AboutAThousandPiecesWithinBounds) {
  EXPECT_EQ(ChoosePieceSize(1), 64 << 10);
  EXPECT_EQ(ChoosePieceSize(64 << 20), 64 << 10);
  EXPECT_EQ(ChoosePieceSize(256 << 20), 256 << 10);
  EXPECT_EQ(ChoosePieceSize(std::int64_t{4} << 30), 4 << 20);
  EXPECT_EQ(ChoosePieceSize(std::int64_t{1} << 40), 16 << 20);
  for (std::int64_t size :
       {std::int64_t{1} << 20, std::int64_t{300} << 20, std::int64_t{7} << 30}) {
    const std::int64_t p = ChoosePieceSize(size);
    EXPECT_EQ(p & (p - 1), 0) << size;
    EXPECT_LE(size / p, 1024) << size;
  }
}

}  // namespace
}  // namespace swarmcast::node
