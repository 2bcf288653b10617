// SipHash-2-4 (Aumasson and Bernstein): a fast keyed hash. Used where an
// outsider must not predict the output: UDP connection ids (BEP 15) and the
// bucket choice of hash tables keyed by client-chosen bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace swarmcast::tracker {

using SipKey = std::array<std::uint64_t, 2>;

std::uint64_t SipHash24(const SipKey& key, const void* data, std::size_t n);

// 128 bits from the OS random source (getrandom); aborts if the OS cannot
// provide them, since a predictable key would defeat the purpose.
SipKey RandomSipKey();

}  // namespace swarmcast::tracker
