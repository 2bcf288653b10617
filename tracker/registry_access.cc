#include "tracker/registry_access.h"

#include <openssl/sha.h>

#include <array>

#include "proto/hex.h"

namespace swarmcast::tracker {
namespace {

// Not the token's plain SHA-256: TokenSet keeps those in memory to
// compare with, and an identity must never serve as a credential.
std::string PublisherId(const std::string& token) {
  const std::string input = "swarmcast publisher\n" + token;
  std::array<std::uint8_t, SHA256_DIGEST_LENGTH> d;
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), d.data());
  return "token:" + proto::ToHex(std::span<const std::uint8_t>(d.data(), 16));
}

}  // namespace

std::string_view BearerToken(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return {};
  return authorization.substr(kBearer.size());
}

RegistryAccess::RegistryAccess(const AccessOptions& o)
    : admins_(o.admin_tokens), private_reads_(!o.announce_tokens.empty()), open_(o.open_registry) {
  for (const std::string& t : o.admin_tokens) publisher_ids_.push_back(PublisherId(t));
  std::vector<std::string> readers = o.announce_tokens;
  readers.insert(readers.end(), o.admin_tokens.begin(), o.admin_tokens.end());
  readers.insert(readers.end(), o.agent_tokens.begin(), o.agent_tokens.end());
  readers_ = TokenSet(readers);
  agents_ = TokenSet(readers);
}

Result<std::string, std::string> RegistryAccess::Writer(std::string_view authorization,
                                                        std::string_view client_ip) const {
  const std::string_view token = BearerToken(authorization);
  if (token.empty()) {
    if (open_) return "addr:" + std::string(client_ip);
    return Unexpected(std::string("admin token missing or wrong"));
  }
  // An open registry with no admin tokens has no one to match a token
  // against: the client is known by its address, as without one.
  if (open_ && admins_.empty()) return "addr:" + std::string(client_ip);
  if (auto i = admins_.Find(token)) return publisher_ids_[*i];
  return Unexpected(std::string("admin token missing or wrong"));
}

bool RegistryAccess::MayRead(std::string_view authorization) const {
  if (!private_reads_) return true;
  const std::string_view token = BearerToken(authorization);
  return !token.empty() && readers_.Matches(token);
}

Result<bool, std::string> RegistryAccess::MayAgent(std::string_view authorization) const {
  const std::string_view token = BearerToken(authorization);
  if (token.empty() && open_) return true;
  if (!token.empty() && agents_.Matches(token)) return true;
  return Unexpected(
      std::string("agent token missing or wrong (an agent, announce or admin token)"));
}

}  // namespace swarmcast::tracker
