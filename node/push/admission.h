// Admission: who may hold a push connection and who may subscribe (issue
// 14). At most `max_connections` connections in all and
// `max_per_address` from one address, subscribed or not, so that idle
// connections from one host cannot fill the seed; a HELLO within
// `hello_timeout` of connecting; and, in private mode (a non-empty token
// set), a HELLO token the seed accepts, compared in constant time.
//
// Pure bookkeeping (the caller passes the time); not thread-safe: the push
// sender's thread owns it.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proto/push_frame.h"
#include "proto/token_set.h"

namespace swarmcast::push {

struct AdmissionPolicy {
  std::size_t max_connections = 512;
  std::size_t max_per_address = 4;
  std::chrono::milliseconds hello_timeout{10000};
  proto::TokenSet tokens;  // empty: any subscriber (open mode)
};

// Why a connection is turned away: the BYE the seed sends before closing.
struct Refusal {
  proto::ByeReason reason = proto::ByeReason::kNormal;
  std::string text;
};

class Admission {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Admission(AdmissionPolicy policy) : policy_(std::move(policy)) {}

  // A connection from `address` was accepted; it counts until OnClose, even
  // when refused (it still holds a socket until its BYE is out).
  std::optional<Refusal> OnConnect(const std::string& address);
  void OnClose(const std::string& address);
  // A HELLO arrived with `token`.
  std::optional<Refusal> OnHello(std::string_view token) const;
  // A connection made at `connected` that has not said HELLO by `now`.
  std::optional<Refusal> CheckHelloDeadline(Clock::time_point connected,
                                            Clock::time_point now) const;

  bool private_mode() const { return !policy_.tokens.empty(); }
  std::size_t connections() const { return total_; }

 private:
  AdmissionPolicy policy_;
  std::unordered_map<std::string, std::size_t> per_address_;
  std::size_t total_ = 0;
};

}  // namespace swarmcast::push
