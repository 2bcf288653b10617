// What a push seed says before it closes a connection a test opened by
// hand: its BYE (docs/protocol.md), read with the real decoder.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <optional>

#include "proto/push_frame.h"
#include "tests/common/wait_until.h"

namespace swarmcast::testing {

// The BYE that arrives on `fd`, or nothing if the other side closes (or
// says nothing for `limit`, or something else first) without one.
inline std::optional<proto::Bye> ByeFrom(int fd, std::chrono::milliseconds limit) {
  proto::PushFrameDecoder decoder;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (WaitReadable(fd, std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now()))) {
    auto room = decoder.PrepareWrite(4096);
    const ssize_t n = ::recv(fd, room.data(), room.size(), 0);
    decoder.Commit(n > 0 ? static_cast<std::size_t>(n) : 0);
    if (n <= 0) return std::nullopt;
    auto next = decoder.Next();
    if (auto* m = std::get_if<proto::Message>(&next)) {
      if (auto* bye = std::get_if<proto::Bye>(m)) return *bye;
      return std::nullopt;
    }
    if (std::holds_alternative<std::error_code>(next)) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace swarmcast::testing
