#include "node/registry_retry.h"

#include <unistd.h>

#include <algorithm>

namespace swarmcast::node {

bool Retryable(const RegistryError& e, bool until_found) {
  switch (e.kind) {
    case RegistryError::Kind::kUnreachable:
    case RegistryError::Kind::kBadResponse:
      return true;
    case RegistryError::Kind::kNotFound:
      return until_found;
    case RegistryError::Kind::kConflict:
    case RegistryError::Kind::kDenied:  // a token does not come right by waiting
    case RegistryError::Kind::kTlsRefused:
      return false;
    case RegistryError::Kind::kRejected:
      return e.http_status == 408 || e.http_status == 429 || e.http_status >= 500;
  }
  return false;
}

Backoff::Backoff(const RetryPolicy& policy)
    : policy_(policy),
      start_(std::chrono::steady_clock::now()),
      // Machines started at the same instant must not draw the same delays.
      rng_(std::random_device{}() ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^
           static_cast<std::uint64_t>(start_.time_since_epoch().count())) {}

std::chrono::milliseconds Backoff::elapsed() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start_);
}

std::chrono::milliseconds AttemptTimeout(const RetryPolicy& policy, int attempt,
                                         std::chrono::milliseconds cap) {
  if (policy.retry_for.count() == 0 || policy.first_attempt_timeout.count() <= 0) return cap;
  const int doublings = std::clamp(attempt, 0, 30);
  return std::min(cap,
                  std::chrono::milliseconds(policy.first_attempt_timeout.count() << doublings));
}

std::optional<std::chrono::milliseconds> Backoff::Next() {
  if (elapsed() >= policy_.retry_for) return std::nullopt;
  const int doublings = std::min(attempts_++, 30);
  const auto ceiling =
      std::min<std::int64_t>(policy_.max_delay.count(), policy_.first_delay.count() << doublings);
  std::uniform_int_distribution<std::int64_t> pick(0, std::max<std::int64_t>(ceiling, 1));
  // Never past the deadline: the last attempt starts in time.
  const auto left = (policy_.retry_for - elapsed()).count();
  return std::chrono::milliseconds(std::max<std::int64_t>(0, std::min(pick(rng_), left)));
}

}  // namespace swarmcast::node
