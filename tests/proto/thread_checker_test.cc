#include "proto/thread_checker.h"

#include <gtest/gtest.h>

#include <thread>

namespace swarmcast {
namespace {

TEST(ThreadChecker, TheFirstCallerOwnsIt) {
  ThreadChecker checker;
  EXPECT_FALSE(checker.OnOwnerThread());
  checker.AssertOnOwnerThread();
  EXPECT_TRUE(checker.OnOwnerThread());
  checker.AssertOnOwnerThread();  // again, same thread: fine
  bool other_owns = true;
  std::thread([&] { other_owns = checker.OnOwnerThread(); }).join();
  EXPECT_FALSE(other_owns);
}

TEST(ThreadCheckerDeathTest, AnotherThreadAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ThreadChecker checker;
  checker.AssertOnOwnerThread();
  EXPECT_DEATH(std::thread([&] { checker.AssertOnOwnerThread(); }).join(),
               "owned by one thread used from another");
}

TEST(ThreadChecker, OwnedByWhicheverThreadCameFirst) {
  ThreadChecker checker;
  std::thread([&] { checker.AssertOnOwnerThread(); }).join();
  EXPECT_FALSE(checker.OnOwnerThread());
}

}  // namespace
}  // namespace swarmcast
