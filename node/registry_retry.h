// Retrying the tracker's registry: a get started on 500 machines at once,
// or behind a seed whose uplink is saturated by push, meets a tracker that
// is slow, refuses connections or times out for seconds. Each call is
// retried with capped exponential backoff and full jitter (so the fleet's
// retries spread out instead of arriving in waves) for a bounded time.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "node/registry_client.h"
#include "proto/log.h"

namespace swarmcast::node {

struct RetryPolicy {
  // How long after the first attempt a retry may still start (0: none).
  std::chrono::milliseconds retry_for{std::chrono::minutes(5)};
  std::chrono::milliseconds first_delay{250};
  std::chrono::milliseconds max_delay{10'000};
  // Also retry "not found": waiting for a name to be published (get --wait).
  bool until_found = false;
  // WithGrowingTimeouts: the first attempt's timeout (see AttemptTimeout).
  std::chrono::milliseconds first_attempt_timeout{2'000};
};

// The timeout of attempt `attempt` (0 for the first) of a call that is
// retried: first_attempt_timeout, doubled on each retry, never above `cap`
// (the client's --timeout); `cap` when there are no retries (retry_for 0)
// or no first timeout. A tracker on the LAN answers in milliseconds; a
// reply lost behind a saturated uplink (a seed pushing from the tracker's
// host) is not retransmitted in time, and waiting out the whole --timeout
// for it, often twice in a row, was what made the last of 64 gets finish
// up to 30 s after the others (docs/benchmarks.md).
std::chrono::milliseconds AttemptTimeout(const RetryPolicy& policy, int attempt,
                                         std::chrono::milliseconds cap);

// Whether another attempt may succeed: the tracker was unreachable, timed
// out, answered garbage (a cut connection) or said it is busy (429, 5xx);
// 404 only while waiting for a publish. Refusals (401, 403, 409, other
// 4xx, a TLS certificate the node does not trust) are final.
bool Retryable(const RegistryError& e, bool until_found);

// The delays between attempts: attempt n waits a uniform random time in
// [0, min(max_delay, first_delay * 2^n)], none once retry_for has passed.
class Backoff {
 public:
  explicit Backoff(const RetryPolicy& policy);
  // The wait before the next attempt, or nullopt when time is up.
  std::optional<std::chrono::milliseconds> Next();
  std::chrono::milliseconds elapsed() const;

 private:
  RetryPolicy policy_;
  std::chrono::steady_clock::time_point start_;
  int attempts_ = 0;
  std::mt19937_64 rng_;
};

// Runs `call` (returning Result<T, RegistryError>) until it succeeds, fails
// in a way a retry cannot fix, or the policy's time is up; logs each retry.
// The last error says how long it tried.
template <class Call>
auto WithRetries(const RetryPolicy& policy, const proto::Logger& log, const std::string& what,
                 Call&& call) -> decltype(call()) {
  Backoff backoff(policy);
  bool said_waiting = false;
  for (;;) {
    auto result = call();
    if (result || !Retryable(result.error(), policy.until_found)) return result;
    const auto delay = backoff.Next();
    if (!delay) {
      if (policy.retry_for.count() == 0) return result;
      RegistryError last = result.error();
      last.message += " (still failing after " + std::to_string(backoff.elapsed().count() / 1000) +
                      " s of retries; --tracker-retry sets how long)";
      return Unexpected(std::move(last));
    }
    if (result.error().kind == RegistryError::Kind::kNotFound) {
      if (!said_waiting) log.Info(what + ": not published yet; waiting (--wait)");
      said_waiting = true;
    } else {
      // ToString names the tracker already ("tracker: HTTP 503: ...").
      log.Info(ToString(result.error()) + "; retrying in " + std::to_string(delay->count()) +
               " ms");
    }
    std::this_thread::sleep_for(*delay);
  }
}

// WithRetries for a call on `client` whose attempts get AttemptTimeout's
// growing timeouts: `call` receives the client to use for this attempt.
template <class Call>
auto WithGrowingTimeouts(const RetryPolicy& policy, const proto::Logger& log,
                         const std::string& what, const RegistryClient& client, Call&& call)
    -> decltype(call(client)) {
  int attempt = 0;
  return WithRetries(policy, log, what, [&] {
    return call(client.WithTimeout(AttemptTimeout(policy, attempt++, client.timeout())));
  });
}

}  // namespace swarmcast::node
