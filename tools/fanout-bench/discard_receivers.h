// Receivers for the push benchmarks: N loopback connections that each send
// `hello` (may be empty), then read and discard exactly `expected` bytes
// (recv with MSG_TRUNC: nothing is copied out). Connection i opens at
// i * join_interval. Returns each receiver's completion time in seconds
// from the start, or an empty vector on any failure (short read, extra
// bytes, 60 s without data).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace swarmcast::bench {

std::vector<double> RunDiscardReceivers(std::uint16_t port, int n,
                                        std::chrono::milliseconds join_interval,
                                        const std::string& hello, std::uint64_t expected);

// Seconds of CPU (user + system) this process has used.
double ProcessCpuSeconds();

}  // namespace swarmcast::bench
