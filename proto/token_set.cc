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

std::optional<std::size_t> TokenSet::Find(std::string_view candidate) const {
  auto d = Digest(candidate);
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < digests_.size(); ++i) {
    if (CRYPTO_memcmp(d.data(), digests_[i].data(), d.size()) == 0) found = i;
  }
  return found;
}

}  // namespace swarmcast::proto
