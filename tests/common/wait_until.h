// The one way tests wait: on the event itself, with a deadline. A test
// that sleeps a fixed time to let something happen passes only at some
// machine speeds; one that polls its condition passes at all of them and
// fails only when the event truly does not come.
#pragma once

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

namespace swarmcast::testing {

// Calls `pred` every `every` until it holds or `timeout` passes; whether
// it held (a last call is made at the deadline).
template <typename Pred>
bool WaitUntil(std::chrono::milliseconds timeout, Pred&& pred,
               std::chrono::milliseconds every = std::chrono::milliseconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(every);
  }
  return static_cast<bool>(pred());
}

// Waits up to `timeout` for `fd` to be readable (data, EOF or an error).
inline bool WaitReadable(int fd, std::chrono::milliseconds timeout) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

// Reads and drops what arrives on `fd` until the other side closes (or
// `timeout` passes without a byte). A fake peer holds its connection open
// this way until the real one has judged what it was sent and hung up:
// closing first could reset the connection and lose the unread bytes.
inline void DrainUntilClosed(int fd, std::chrono::milliseconds timeout) {
  char buf[4096];
  while (WaitReadable(fd, timeout) && ::recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
}

}  // namespace swarmcast::testing
