// Secret comparison for private mode (the tracker's announce and admin
// tokens, the push channel's HELLO token). Tokens are compared through their
// SHA-256 digests with CRYPTO_memcmp, so the time taken does not depend on
// how much of a guess was right, nor on its length. Immutable after
// construction; safe from any thread.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace swarmcast::proto {

class TokenSet {
 public:
  TokenSet() = default;
  explicit TokenSet(const std::vector<std::string>& tokens);

  bool empty() const { return digests_.empty(); }
  // True when `candidate` equals one of the tokens. Checks all of them.
  bool Matches(std::string_view candidate) const;

 private:
  std::vector<std::array<unsigned char, 32>> digests_;
};

}  // namespace swarmcast::proto
