#include "node/push/admission.h"

#include <gtest/gtest.h>

namespace swarmcast::push {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST(Admission, CapsConnectionsPerAddressAndInAll) {
  Admission a(AdmissionPolicy{5, 2, 10s, {}});
  EXPECT_FALSE(a.OnConnect("10.0.0.9"));
  EXPECT_FALSE(a.OnConnect("10.0.0.9"));
  auto third = a.OnConnect("10.0.0.9");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->reason, proto::ByeReason::kTooManyConnections);
  EXPECT_NE(third->text.find("10.0.0.9"), std::string::npos);
  EXPECT_FALSE(a.OnConnect("10.0.0.2"));  // another host still gets in
  a.OnClose("10.0.0.9");                  // the refused one goes
  a.OnClose("10.0.0.9");
  EXPECT_FALSE(a.OnConnect("10.0.0.9"));
  EXPECT_FALSE(a.OnConnect("10.0.0.3"));
  EXPECT_FALSE(a.OnConnect("10.0.0.4"));
  EXPECT_EQ(a.connections(), 5u);
  auto sixth = a.OnConnect("10.0.0.5");
  ASSERT_TRUE(sixth);
  EXPECT_EQ(sixth->text, "subscriber limit reached");
}

TEST(Admission, HelloDeadline) {
  Admission a(AdmissionPolicy{512, 4, 10s, {}});
  const auto t0 = Clock::now();
  EXPECT_FALSE(a.CheckHelloDeadline(t0, t0 + 9999ms));
  auto late = a.CheckHelloDeadline(t0, t0 + 10s);
  ASSERT_TRUE(late);
  EXPECT_EQ(late->reason, proto::ByeReason::kHelloTimeout);
}

TEST(Admission, PrivateModeNeedsTheToken) {
  Admission open(AdmissionPolicy{});
  EXPECT_FALSE(open.private_mode());
  EXPECT_FALSE(open.OnHello(""));
  EXPECT_FALSE(open.OnHello("anything"));
  Admission closed(AdmissionPolicy{512, 4, 10s, proto::TokenSet({"s3cret", "other"})});
  EXPECT_TRUE(closed.private_mode());
  EXPECT_FALSE(closed.OnHello("s3cret"));
  EXPECT_FALSE(closed.OnHello("other"));
  for (const char* bad : {"", "s3cre", "s3cret ", "S3CRET"}) {
    auto r = closed.OnHello(bad);
    ASSERT_TRUE(r) << bad;
    EXPECT_EQ(r->reason, proto::ByeReason::kNotAuthorized);
  }
}

}  // namespace
}  // namespace swarmcast::push
