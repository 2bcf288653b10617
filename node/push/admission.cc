#include "node/push/admission.h"

namespace swarmcast::push {

std::optional<Refusal> Admission::OnConnect(const std::string& address) {
  ++total_;
  const std::size_t from_here = ++per_address_[address];
  if (total_ > policy_.max_connections) {
    return Refusal{proto::ByeReason::kTooManyConnections, "subscriber limit reached"};
  }
  if (from_here > policy_.max_per_address) {
    return Refusal{proto::ByeReason::kTooManyConnections,
                   "too many push connections from " + address + " (at most " +
                       std::to_string(policy_.max_per_address) + ")"};
  }
  return std::nullopt;
}

void Admission::OnClose(const std::string& address) {
  if (total_ > 0) --total_;
  auto it = per_address_.find(address);
  if (it == per_address_.end()) return;
  if (--it->second == 0) per_address_.erase(it);
}

std::optional<Refusal> Admission::OnHello(std::string_view token) const {
  if (policy_.tokens.empty() || policy_.tokens.Matches(token)) return std::nullopt;
  return Refusal{proto::ByeReason::kNotAuthorized,
                 token.empty() ? "this seed pushes only to subscribers with the swarm's token"
                               : "wrong token for this swarm"};
}

std::optional<Refusal> Admission::CheckHelloDeadline(Clock::time_point connected,
                                                     Clock::time_point now) const {
  if (now - connected < policy_.hello_timeout) return std::nullopt;
  return Refusal{proto::ByeReason::kHelloTimeout,
                 "no HELLO within " + std::to_string(policy_.hello_timeout.count()) + " ms"};
}

}  // namespace swarmcast::push
