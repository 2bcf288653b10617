// Which registry errors are retried, and the backoff's delays.
#include "node/registry_retry.h"

#include <gtest/gtest.h>

namespace swarmcast::node {
namespace {

using namespace std::chrono_literals;
using Kind = RegistryError::Kind;

TEST(RegistryRetryTest, RetriesWhatABusyTrackerDoesAndNotRefusals) {
  EXPECT_TRUE(Retryable({.kind = Kind::kUnreachable}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kBadResponse, .http_status = 200}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kRejected, .http_status = 503}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kRejected, .http_status = 500}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kRejected, .http_status = 429}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kRejected, .http_status = 408}, false));
  EXPECT_FALSE(Retryable({.kind = Kind::kRejected, .http_status = 401}, false));
  EXPECT_FALSE(Retryable({.kind = Kind::kRejected, .http_status = 403}, false));
  EXPECT_FALSE(Retryable({.kind = Kind::kDenied, .http_status = 401}, true));
  EXPECT_FALSE(Retryable({.kind = Kind::kDenied, .http_status = 403}, true));
  EXPECT_FALSE(Retryable({.kind = Kind::kRejected, .http_status = 400}, true));
  EXPECT_FALSE(Retryable({.kind = Kind::kConflict, .http_status = 409}, true));
  EXPECT_FALSE(Retryable({.kind = Kind::kTlsRefused}, true)) << "an untrusted certificate stays so";
  EXPECT_FALSE(Retryable({.kind = Kind::kNotFound, .http_status = 404}, false));
  EXPECT_TRUE(Retryable({.kind = Kind::kNotFound, .http_status = 404}, true)) << "--wait";
}

TEST(RegistryRetryTest, AttemptTimeoutsStartShortAndDoubleToTheClientsTimeout) {
  const RetryPolicy p{.retry_for = 1h, .first_attempt_timeout = 2s};
  EXPECT_EQ(AttemptTimeout(p, 0, 10s), 2s);
  EXPECT_EQ(AttemptTimeout(p, 1, 10s), 4s);
  EXPECT_EQ(AttemptTimeout(p, 2, 10s), 8s);
  EXPECT_EQ(AttemptTimeout(p, 3, 10s), 10s);
  EXPECT_EQ(AttemptTimeout(p, 1000, 10s), 10s) << "no overflow";
  EXPECT_EQ(AttemptTimeout(p, 0, 500ms), 500ms) << "a --timeout below 2 s wins";
  EXPECT_EQ(AttemptTimeout({.retry_for = 0ms}, 0, 10s), 10s)
      << "no retry: the one attempt gets it all";
  EXPECT_EQ(AttemptTimeout({.retry_for = 1h, .first_attempt_timeout = 0ms}, 0, 10s), 10s);
}

TEST(RegistryRetryTest, DelaysAreRandomUnderACeilingThatDoublesToTheCap) {
  Backoff b({.retry_for = 1h, .first_delay = 100ms, .max_delay = 1000ms});
  std::int64_t ceiling = 100;
  for (int i = 0; i < 12; ++i) {
    const auto d = b.Next();
    ASSERT_TRUE(d);
    EXPECT_GE(d->count(), 0);
    EXPECT_LE(d->count(), ceiling) << "attempt " << i;
    ceiling = std::min<std::int64_t>(ceiling * 2, 1000);
  }
  // Full jitter: 200 draws under a 1 s ceiling are not all alike.
  std::int64_t lo = 1000, hi = 0;
  for (int i = 0; i < 200; ++i) {
    const auto d = b.Next()->count();
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  EXPECT_LT(lo, 300);
  EXPECT_GT(hi, 700);
}

TEST(RegistryRetryTest, NoRetryOnceTheTimeIsUp) {
  Backoff none({.retry_for = 0ms});
  EXPECT_FALSE(none.Next());
  Backoff some({.retry_for = 50ms, .first_delay = 10s, .max_delay = 10s});
  const auto d = some.Next();
  ASSERT_TRUE(d);
  EXPECT_LE(d->count(), 50) << "the last wait ends within the deadline";
}

TEST(RegistryRetryTest, WithRetriesStopsAtARefusalAndSaysHowLongItTried) {
  const proto::Logger quiet;  // logs nothing
  int calls = 0;
  auto refused = WithRetries(RetryPolicy{.retry_for = 1h}, quiet, "tracker", [&] {
    ++calls;
    return Result<int, RegistryError>(
        Unexpected(RegistryError{.kind = Kind::kRejected, .http_status = 403}));
  });
  EXPECT_FALSE(refused);
  EXPECT_EQ(calls, 1);

  calls = 0;
  auto busy = WithRetries(
      RetryPolicy{.retry_for = 30ms, .first_delay = 1ms, .max_delay = 2ms}, quiet, "tracker", [&] {
        ++calls;
        return Result<int, RegistryError>(
            Unexpected(RegistryError{.kind = Kind::kUnreachable, .message = "timed out"}));
      });
  ASSERT_FALSE(busy);
  EXPECT_GT(calls, 2);
  EXPECT_NE(busy.error().message.find("still failing after"), std::string::npos);

  calls = 0;
  auto later = WithRetries(RetryPolicy{.retry_for = 1h, .first_delay = 1ms}, quiet, "tracker",
                           [&]() -> Result<int, RegistryError> {
                             if (++calls < 3) return Unexpected(RegistryError{});
                             return 7;
                           });
  ASSERT_TRUE(later);
  EXPECT_EQ(*later, 7);
}

}  // namespace
}  // namespace swarmcast::node
