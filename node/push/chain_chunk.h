// ChainChunkLength: how finely a chain's seed cuts pieces into chunks.
//
// A chain link passes on each chunk as it lands (PushSender::Relay), so a
// hop costs a chunk's time on the link: the last of `links` links ends
// about links x chunk / rate after the head. On links that serialize at
// 10 Mbit/s, 64 of them took 1.31x the limit with 64 KiB pieces, 1.11x
// with 16 KiB chunks (docs/benchmarks.md, session 29). And a hop the chain
// crosses at its full rate never wins its lag back: one whole piece at
// the start, while the line was one link long, cost every later link a
// piece's time to the end (session 30: N = 32, 1.17x against 1.10x).
// Every relayed chunk also costs each link a copy, a send from memory and
// a wake: with 16 KiB chunks everywhere 8 links on unshaped veth took
// 1.5-1.7 s, with this rule 1.2-1.4 s (session 30).
//
// So the chunk is the largest power of two from 16 KiB (BitTorrent's
// block) to 64 KiB that
// - a head's link carries in 1 ms (`bytes_per_second`, the best a head
//   took; 0, not known yet: the least), so that a hop costs at most 1 ms
//   or a 16 KiB chunk's time, whatever the line grows to; and
// - times `links` is within 1/128 of the size, so that the whole line's
//   lag stays within 0.8% of the transfer (size / rate; the rate cancels).
// 10 and 100 Mbit/s links get 16 KiB chunks; an unshaped LAN 64 KiB ones
// for a 64 MiB file to 8 links, 16 KiB ones to 32.
//
// Pure: a test drives it alone.
#pragma once

#include <cstddef>
#include <cstdint>

namespace swarmcast::push {

inline constexpr std::uint32_t kMinChainChunk = 16u * 1024;
// Also bounds a link's relay queue (PushSender: 64 frames a subscriber)
// to 4 MiB.
inline constexpr std::uint32_t kMaxChainChunk = 64u * 1024;
// The whole line's lag may take this part of the transfer: 1/128.
inline constexpr std::uint64_t kChainDelayShare = 128;
// A hop's lag: a chunk may take this long on a head's link, in 1/s.
inline constexpr double kChainHopsPerSecond = 1000;

std::uint32_t ChainChunkLength(std::uint64_t total_size, std::size_t links,
                               double bytes_per_second);

}  // namespace swarmcast::push
