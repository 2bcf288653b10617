#include "proto/token_set.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

namespace swarmcast::proto {
namespace {

std::array<unsigned char, 32> Digest(std::string_view s) {
  std::array<unsigned char, 32> d;
  SHA256(reinterpret_cast<const unsigned char*>(s.data()), s.size(), d.data());
  return d;
}

}  // namespace

TokenSet::TokenSet(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens) digests_.push_back(Digest(t));
}

bool TokenSet::Matches(std::string_view candidate) const {
  auto d = Digest(candidate);
  bool match = false;
  for (const auto& t : digests_) match |= CRYPTO_memcmp(d.data(), t.data(), d.size()) == 0;
  return match;
}

}  // namespace swarmcast::proto
