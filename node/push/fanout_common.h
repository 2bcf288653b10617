// Pieces shared by the fan-out backends (internal to node/push).
#pragma once

#include <functional>
#include <span>

#include "node/push/fanout_backend.h"

namespace swarmcast::push::detail {

// Chunk size for backends that stage payload bytes (copy buffer, pipes).
inline constexpr std::size_t kChunkBytes = 1 << 20;

// Sends the rest of the header to one target without blocking. Returns true
// when the header is fully sent (payload may follow).
bool SendHeader(const FanoutJob& job, FanoutTarget& t);

// True when errno says "try again later" rather than "failed".
bool WouldBlock(int err);

// Marks a target failed with `err`.
void Fail(FanoutTarget& t, int err);

// The group loop shared by the copy and splice backends: targets that are
// past their header and at the same payload position advance together,
// chunk by chunk. `stage(offset, n)` loads payload [offset, offset+n) once
// and returns how many bytes it staged (0 with errno set on failure);
// `deliver(target, n, more)` sends the n staged bytes to one target and
// returns how many it took (fewer when the socket would block; it sets the
// target's error on failure); `more` says more payload follows, so the
// kernel may hold a partial segment. `release()` drops the staged chunk.
struct ChunkStager {
  std::function<std::size_t(std::uint64_t offset, std::size_t n)> stage;
  std::function<std::size_t(FanoutTarget& t, std::size_t n, bool more)> deliver;
  std::function<void()> release;
};
void SendInGroups(const FanoutJob& job, std::span<FanoutTarget> targets, const ChunkStager& s);

}  // namespace swarmcast::push::detail
