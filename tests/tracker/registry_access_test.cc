#include "tracker/registry_access.h"

#include <gtest/gtest.h>

namespace swarmcast::tracker {
namespace {

TEST(RegistryAccess, EachAdminTokenIsItsOwnPublisherNamedByADigest) {
  RegistryAccess a(AccessOptions{{"alice-token", "bob-token"}, {}, false, {}});
  auto alice = a.Writer("Bearer alice-token", "10.0.0.1");
  auto bob = a.Writer("Bearer bob-token", "10.0.0.1");
  ASSERT_TRUE(alice && bob);
  EXPECT_NE(*alice, *bob);
  EXPECT_EQ(alice->substr(0, 6), "token:");
  EXPECT_EQ(alice->size(), 6u + 32u);
  EXPECT_EQ(alice->find("alice"), std::string::npos) << "the identity must not hold the token";
  EXPECT_EQ(*a.Writer("Bearer alice-token", "10.9.9.9"), *alice) << "not tied to the address";
  EXPECT_FALSE(a.Writer("", "10.0.0.1"));
  EXPECT_FALSE(a.Writer("Bearer carol-token", "10.0.0.1"));
  EXPECT_FALSE(a.Writer("Basic alice-token", "10.0.0.1"));
  EXPECT_TRUE(a.MayRead("")) << "reads are open unless the tracker is private";
}

TEST(RegistryAccess, AnOpenRegistryNamesTokenlessWritersByAddress) {
  RegistryAccess open(AccessOptions{{}, {}, true, {}});
  EXPECT_EQ(*open.Writer("", "10.0.0.1"), "addr:10.0.0.1");
  EXPECT_EQ(*open.Writer("Bearer anything", "10.0.0.1"), "addr:10.0.0.1");
  RegistryAccess mixed(AccessOptions{{"alice-token"}, {}, true, {}});
  EXPECT_EQ(*mixed.Writer("", "10.0.0.2"), "addr:10.0.0.2");
  EXPECT_EQ(mixed.Writer("Bearer alice-token", "10.0.0.2")->substr(0, 6), "token:");
  EXPECT_FALSE(mixed.Writer("Bearer wrong", "10.0.0.2")) << "a wrong token is never anonymous";
}

TEST(RegistryAccess, PrivateReadsNeedAnAnnounceOrAdminToken) {
  RegistryAccess a(AccessOptions{{"admin"}, {"peers"}, false, {}});
  EXPECT_TRUE(a.private_reads());
  EXPECT_FALSE(a.MayRead(""));
  EXPECT_FALSE(a.MayRead("Bearer nope"));
  EXPECT_FALSE(a.MayRead("peers"));
  EXPECT_TRUE(a.MayRead("Bearer peers"));
  EXPECT_TRUE(a.MayRead("Bearer admin"));
  EXPECT_FALSE(a.Writer("Bearer peers", "10.0.0.1")) << "an announce token does not publish";
}

}  // namespace
}  // namespace swarmcast::tracker
