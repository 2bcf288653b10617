// Every fan-out backend, over real loopback TCP sockets: identical bytes on
// every receiver, unaligned ranges, a stalled receiver that must not hold up
// the others, a receiver that closes mid-send, a file that shrinks.
#include "node/push/fanout_backend.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;

class FanoutBackendTest : public ::testing::TestWithParam<FanoutKind> {
 protected:
  // sendfile() and splice() have no MSG_NOSIGNAL: a receiver hanging up
  // would kill the process, as it would the node, which ignores SIGPIPE too.
  static void SetUpTestSuite() { ::signal(SIGPIPE, SIG_IGN); }

  void SetUp() override {
    auto backend = MakeFanoutBackend(GetParam());
    ASSERT_TRUE(backend) << backend.error().message();
    backend_ = std::move(*backend);
    char path[] = "/tmp/swarmcast-fanout-XXXXXX";
    file_fd_ = ::mkstemp(path);
    ASSERT_GE(file_fd_, 0);
    ::unlink(path);
    content_.resize((3u << 20) + 12345);
    std::mt19937 rng(42);
    for (auto& c : content_) c = static_cast<char>(rng());
    ASSERT_EQ(::pwrite(file_fd_, content_.data(), content_.size(), 0),
              static_cast<ssize_t>(content_.size()));

    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(listener_, 128), 0);
    received_.reserve(64);  // reader threads hold indices into it
    socklen_t len = sizeof addr_;
    ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr_), &len);
  }

  void TearDown() override {
    for (auto& t : readers_) t.join();
    for (int fd : server_fds_) ::close(fd);
    if (listener_ >= 0) ::close(listener_);
    if (file_fd_ >= 0) ::close(file_fd_);
  }

  // Connects a receiver that reads until EOF or `expected` bytes into
  // received_[i]; it closes early after `close_after` bytes, and waits for
  // `go` before reading at all when `go` is given. Such receivers get small
  // socket buffers, so the sender cannot hand the kernel everything at once.
  void AddReceiver(std::size_t expected, std::size_t close_after = SIZE_MAX,
                   std::atomic<bool>* go = nullptr) {
    const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int small = 16 << 10;
    const bool constrained = go || close_after != SIZE_MAX;
    if (constrained) ::setsockopt(c, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ASSERT_EQ(::connect(c, reinterpret_cast<sockaddr*>(&addr_), sizeof addr_), 0);
    const int s = ::accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    ASSERT_GE(s, 0);
    if (constrained) ::setsockopt(s, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    server_fds_.push_back(s);
    const std::size_t index = received_.size();
    received_.emplace_back();
    readers_.emplace_back([this, c, index, expected, close_after, go] {
      if (go) {
        while (!go->load()) std::this_thread::sleep_for(1ms);
      }
      std::string data;
      char buf[65536];
      while (data.size() < expected && data.size() < close_after) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        data.append(buf, static_cast<std::size_t>(n));
      }
      ::close(c);
      received_[index] = std::move(data);
    });
  }

  // Calls Send until every target is finished or failed, waiting for
  // writability in between, as the push sender does. Returns false if it
  // took longer than `limit`.
  bool Pump(const FanoutJob& job, std::vector<FanoutTarget>& targets,
            std::chrono::milliseconds limit = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      backend_->Send(job, targets);
      std::vector<pollfd> fds;
      for (auto& t : targets) {
        if (t.active(job)) fds.push_back({t.socket_fd, POLLOUT, 0});
      }
      if (fds.empty()) return true;
      ::poll(fds.data(), fds.size(), 100);
    }
    return false;
  }

  std::vector<FanoutTarget> Targets() {
    std::vector<FanoutTarget> targets;
    for (int fd : server_fds_) targets.push_back({fd, 0, {}});
    return targets;
  }

  std::string Expected(const std::string& header, std::size_t offset, std::size_t length) {
    return header + content_.substr(offset, length);
  }

  std::unique_ptr<FanoutBackend> backend_;
  int file_fd_ = -1;
  int listener_ = -1;
  sockaddr_in addr_{};
  std::string content_;
  std::vector<int> server_fds_;
  std::vector<std::thread> readers_;
  std::vector<std::string> received_;
};

void CheckAll(const std::vector<std::string>& got, const std::string& want) {
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].size(), want.size()) << "receiver " << i;
    EXPECT_TRUE(got[i] == want) << "receiver " << i << " got different bytes";
  }
}

TEST_P(FanoutBackendTest, IdenticalBytesOnEveryReceiver) {
  for (std::size_t receivers : {1u, 4u, 16u}) {
    SCOPED_TRACE(receivers);
    TearDown();
    readers_.clear();
    server_fds_.clear();
    received_.clear();
    SetUp();
    const std::string header = "HDR:" + std::to_string(receivers);
    const std::size_t offset = 4097, length = (2u << 20) + 333;  // not page aligned
    for (std::size_t i = 0; i < receivers; ++i) AddReceiver(header.size() + length);
    FanoutJob job{file_fd_, offset, static_cast<std::uint32_t>(length),
                  std::as_bytes(std::span(header.data(), header.size()))};
    auto targets = Targets();
    ASSERT_TRUE(Pump(job, targets));
    for (auto& t : targets) EXPECT_TRUE(t.finished(job)) << t.error.message();
    for (auto& r : readers_) r.join();
    readers_.clear();
    CheckAll(received_, Expected(header, offset, length));
  }
}

TEST_P(FanoutBackendTest, HeaderWithoutPayload) {
  AddReceiver(5);
  AddReceiver(5);
  const std::string header = "only!";
  FanoutJob job{file_fd_, 0, 0, std::as_bytes(std::span(header.data(), header.size()))};
  auto targets = Targets();
  ASSERT_TRUE(Pump(job, targets));
  for (auto& t : targets) EXPECT_TRUE(t.finished(job));
  for (auto& r : readers_) r.join();
  readers_.clear();
  CheckAll(received_, header);
}

TEST_P(FanoutBackendTest, StalledReceiverDoesNotHoldUpOthers) {
  const std::string header = "H";
  const std::size_t length = 3u << 20;
  std::atomic<bool> go{false};
  AddReceiver(header.size() + length);
  AddReceiver(header.size() + length, SIZE_MAX, &go);  // reads nothing yet
  AddReceiver(header.size() + length);
  FanoutJob job{file_fd_, 0, static_cast<std::uint32_t>(length),
                std::as_bytes(std::span(header.data(), header.size()))};
  auto targets = Targets();
  std::vector<FanoutTarget> fast{targets[0], targets[2]};
  std::vector<FanoutTarget> slow{targets[1]};
  // One call with all three, then the fast ones finish on their own.
  std::vector<FanoutTarget> all{fast[0], slow[0], fast[1]};
  backend_->Send(job, all);
  fast = {all[0], all[2]};
  slow = {all[1]};
  ASSERT_TRUE(Pump(job, fast, 10s));
  EXPECT_TRUE(fast[0].finished(job));
  EXPECT_TRUE(fast[1].finished(job));
  EXPECT_LT(slow[0].progress, job.total()) << "the stalled receiver cannot have taken it all";
  go = true;
  ASSERT_TRUE(Pump(job, slow, 20s));
  EXPECT_TRUE(slow[0].finished(job)) << slow[0].error.message();
  for (auto& r : readers_) r.join();
  readers_.clear();
  CheckAll(received_, Expected(header, 0, length));
}

TEST_P(FanoutBackendTest, ReceiverClosingMidSendFailsOnlyItself) {
  const std::string header = "H";
  const std::size_t length = 3u << 20;
  AddReceiver(header.size() + length);
  AddReceiver(header.size() + length, 100000);  // hangs up early
  AddReceiver(header.size() + length);
  FanoutJob job{file_fd_, 0, static_cast<std::uint32_t>(length),
                std::as_bytes(std::span(header.data(), header.size()))};
  auto targets = Targets();
  ASSERT_TRUE(Pump(job, targets));
  EXPECT_TRUE(targets[0].finished(job));
  EXPECT_TRUE(targets[1].error) << "progress " << targets[1].progress;
  EXPECT_TRUE(targets[2].finished(job));
  for (auto& r : readers_) r.join();
  readers_.clear();
  EXPECT_EQ(received_[0], Expected(header, 0, length));
  EXPECT_EQ(received_[2], Expected(header, 0, length));
}

TEST_P(FanoutBackendTest, FileShorterThanRangeIsAnError) {
  AddReceiver(SIZE_MAX);
  AddReceiver(SIZE_MAX);
  ASSERT_EQ(::ftruncate(file_fd_, 1 << 20), 0);
  FanoutJob job{file_fd_, 0, 2u << 20, {}};
  auto targets = Targets();
  ASSERT_TRUE(Pump(job, targets));
  for (auto& t : targets) {
    EXPECT_TRUE(t.error);
    EXPECT_LE(t.progress, 1u << 20);
  }
  for (int fd : server_fds_) ::shutdown(fd, SHUT_RDWR);
}

INSTANTIATE_TEST_SUITE_P(Backends, FanoutBackendTest,
                         ::testing::Values(FanoutKind::kCopy, FanoutKind::kSendfile,
                                           FanoutKind::kSplice),
                         [](const auto& info) { return std::string(FanoutKindName(info.param)); });

TEST(FanoutKindTest, ParsesEveryNameAndRejectsOthers) {
  for (auto k : {FanoutKind::kAuto, FanoutKind::kKmod, FanoutKind::kSplice, FanoutKind::kSendfile,
                 FanoutKind::kCopy}) {
    EXPECT_EQ(ParseFanoutKind(FanoutKindName(k)), k);
  }
  EXPECT_FALSE(ParseFanoutKind("Splice"));
  EXPECT_FALSE(ParseFanoutKind(""));
}

// On a machine without the module (CI hosts cannot load modules; the VM
// test in tests/kmod covers the device), kmod fails clearly and auto falls
// back to the zero-copy user-space path.
TEST(FanoutFactoryTest, KmodNeedsTheDeviceAndAutoFallsBack) {
  if (::access("/dev/swarmfan", F_OK) == 0) GTEST_SKIP() << "/dev/swarmfan exists here";
  auto kmod = MakeFanoutBackend(FanoutKind::kKmod);
  ASSERT_FALSE(kmod);
  EXPECT_EQ(kmod.error(), std::errc::no_such_file_or_directory);
  auto fallback = MakeFanoutBackend(FanoutKind::kAuto);
  ASSERT_TRUE(fallback) << fallback.error().message();
  EXPECT_EQ((*fallback)->name(), "splice");
}

}  // namespace
}  // namespace swarmcast::push
