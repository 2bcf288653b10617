// Receivers for the push benchmarks: N loopback connections that each send
// `hello` (may be empty), then read and discard exactly `expected` bytes
// (recv with MSG_TRUNC: nothing is copied out). Connection i opens at
// i * join_interval. Returns each receiver's completion time in seconds
// from the start, or an empty vector on any failure (short read, extra
// bytes, 60 s without data).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "node/push/push_sender.h"

namespace swarmcast::bench {

// A push source for one file of `size` bytes in pieces of `piece` bytes.
push::PushSource SingleFileSource(const std::string& path, std::uint64_t size, std::uint32_t piece,
                                  std::uint8_t hash_byte);
// The bytes the seed sends one receiver of `source` that has nothing: its
// HELLO (`hello_bytes`), then every chunk's PIECE header and payload.
std::uint64_t PushedBytes(const push::PushSource& source, std::size_t hello_bytes);

std::vector<double> RunDiscardReceivers(std::uint16_t port, int n,
                                        std::chrono::milliseconds join_interval,
                                        const std::string& hello, std::uint64_t expected);

// Seconds of CPU (user + system) this process has used.
double ProcessCpuSeconds();

}  // namespace swarmcast::bench
