#include "node/push/token_bucket.h"

#include <gtest/gtest.h>

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(TokenBucket, RefillsAtTheRateUpToTheBurst) {
  const auto t0 = Clock::now();
  TokenBucket b(1000, 100ms, t0);  // 1000 B/s, 100 B of burst
  EXPECT_EQ(b.Available(t0), 0);
  EXPECT_EQ(b.Available(t0 + 50ms), 50);
  EXPECT_EQ(b.Available(t0 + 10s), 100);  // never more than the burst
  b.Take(300);                            // overdrawn by 200
  EXPECT_EQ(b.Available(t0 + 10s), 0);
  EXPECT_EQ(b.Wait(), 201ms);
  EXPECT_EQ(b.Available(t0 + 10s + 200ms), 0);
  EXPECT_GT(b.Available(t0 + 10s + 210ms), 0);
  EXPECT_EQ(b.Wait(), 0ms);
}

TEST(TokenBucket, ZeroRateIsUnlimited) {
  TokenBucket b(0);
  EXPECT_TRUE(b.unlimited());
  b.Take(1 << 30);
  EXPECT_GT(b.Available(Clock::now()), std::int64_t{1} << 40);
  EXPECT_EQ(b.Wait(), 0ms);
}

}  // namespace
}  // namespace swarmcast::push
