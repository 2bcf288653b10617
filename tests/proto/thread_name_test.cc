#include "proto/thread_name.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace swarmcast {
namespace {

// What the kernel shows for thread `tid` of this process.
std::string CommOf(long tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

TEST(NameThisThread, TheKernelShowsTheName) {
  std::string seen;
  std::thread([&] {
    proto::NameThisThread("push-recv");
    seen = CommOf(::syscall(SYS_gettid));
  }).join();
  EXPECT_EQ(seen, "push-recv");
}

TEST(NameThisThread, OnlyTheCallingThread) {
  const std::string before = CommOf(::syscall(SYS_gettid));
  std::thread([] { proto::NameThisThread("sha256-digest"); }).join();
  EXPECT_EQ(CommOf(::syscall(SYS_gettid)), before);
}

}  // namespace
}  // namespace swarmcast
