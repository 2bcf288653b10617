// Secret comparison for private mode (the tracker's announce and admin
// tokens, the push channel's HELLO token). Tokens are compared through their
// SHA-256 digests with CRYPTO_memcmp, so the time taken does not depend on
// how much of a guess was right, nor on its length. Immutable after
// construction; safe from any thread.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace swarmcast::proto {

class TokenSet {
 public:
  TokenSet() = default;
  explicit TokenSet(const std::vector<std::string>& tokens);

  bool empty() const { return digests_.empty(); }
  std::size_t size() const { return digests_.size(); }
  // True when `candidate` equals one of the tokens. Checks all of them.
  bool Matches(std::string_view candidate) const { return Find(candidate).has_value(); }
  // The position (in construction order) of the token `candidate` equals,
  // if any. Checks all of them, whichever matches.
  std::optional<std::size_t> Find(std::string_view candidate) const;

 private:
  std::vector<std::array<unsigned char, 32>> digests_;
};

}  // namespace swarmcast::proto
