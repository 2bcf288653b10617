#include "tracker/siphash.h"

#include <sys/random.h>

#include <cstdlib>
#include <cstring>

namespace swarmcast::tracker {
namespace {

inline std::uint64_t Rotl(std::uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

inline void Round(std::uint64_t& v0, std::uint64_t& v1, std::uint64_t& v2, std::uint64_t& v3) {
  v0 += v1;
  v1 = Rotl(v1, 13);
  v1 ^= v0;
  v0 = Rotl(v0, 32);
  v2 += v3;
  v3 = Rotl(v3, 16);
  v3 ^= v2;
  v0 += v3;
  v3 = Rotl(v3, 21);
  v3 ^= v0;
  v2 += v1;
  v1 = Rotl(v1, 17);
  v1 ^= v2;
  v2 = Rotl(v2, 32);
}

inline std::uint64_t Load64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, aarch64); matches the reference vectors there
}

}  // namespace

std::uint64_t SipHash24(const SipKey& key, const void* data, std::size_t n) {
  const auto* in = static_cast<const std::uint8_t*>(data);
  std::uint64_t v0 = 0x736f6d6570736575ULL ^ key[0];
  std::uint64_t v1 = 0x646f72616e646f6dULL ^ key[1];
  std::uint64_t v2 = 0x6c7967656e657261ULL ^ key[0];
  std::uint64_t v3 = 0x7465646279746573ULL ^ key[1];
  const std::size_t full = n - n % 8;
  for (std::size_t i = 0; i < full; i += 8) {
    std::uint64_t m = Load64(in + i);
    v3 ^= m;
    Round(v0, v1, v2, v3);
    Round(v0, v1, v2, v3);
    v0 ^= m;
  }
  std::uint64_t b = static_cast<std::uint64_t>(n) << 56;
  for (std::size_t i = 0; i < n % 8; ++i) b |= static_cast<std::uint64_t>(in[full + i]) << (8 * i);
  v3 ^= b;
  Round(v0, v1, v2, v3);
  Round(v0, v1, v2, v3);
  v0 ^= b;
  v2 ^= 0xff;
  for (int i = 0; i < 4; ++i) Round(v0, v1, v2, v3);
  return v0 ^ v1 ^ v2 ^ v3;
}

SipKey RandomSipKey() {
  SipKey key;
  if (getrandom(key.data(), sizeof key, 0) != static_cast<ssize_t>(sizeof key)) std::abort();
  return key;
}

}  // namespace swarmcast::tracker
