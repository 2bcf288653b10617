#include "tracker/config.h"

#include <gtest/gtest.h>

#include "tracker/token_check.h"

namespace swarmcast::tracker {
namespace {

Result<CommandLine, std::string> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "swarmcast-tracker");
  return ParseCommandLine(static_cast<int>(args.size()), args.data());
}

TEST(CommandLine, DefaultsWork) {
  auto cl = Parse({});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_FALSE(cl->exit_now);
  EXPECT_EQ(cl->config.listen, std::vector<std::string>{"0.0.0.0:6969"});
  EXPECT_EQ(cl->config.state.interval, 120);
  EXPECT_EQ(cl->config.state.expire_after, 360);
  EXPECT_EQ(cl->config.state.db_refresh, 60);
  EXPECT_TRUE(cl->config.udp);
}

TEST(CommandLine, HelpExplainsEveryOption) {
  auto cl = Parse({"--help"});
  ASSERT_TRUE(cl.ok());
  EXPECT_TRUE(cl->exit_now);
  for (const char* opt : {"--listen", "--db", "--interval", "--announce-token", "--admin-token",
                          "--max-peers", "--batch-ms", "--db-refresh", "--trust-ip-param"}) {
    EXPECT_NE(cl->text.find(opt), std::string::npos) << opt;
  }
}

TEST(CommandLine, RefusesBadValues) {
  for (auto args : std::vector<std::vector<const char*>>{
           {"--threads", "0"},
           {"--interval", "0"},
           {"--expire-factor", "0.5"},
           {"--max-torrent-bytes", "10"},
           {"--announce-token", "a/b"},
           {"--interval", "10", "--db-refresh", "30"},
           {"--no-such-option"},
           {"--batch-ms", "x"},
       }) {
    EXPECT_FALSE(Parse(args).ok()) << args[0];
  }
}

TEST(CommandLine, OptionsReachTheConfig) {
  auto cl = Parse({"--listen", "127.0.0.1:1", "--listen", "[::1]:2", "--interval", "10",
                   "--expire-factor", "2", "--announce-token", "t1", "--announce-token", "t2",
                   "--no-udp", "--require-registered"});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.listen.size(), 2u);
  EXPECT_EQ(cl->config.state.expire_after, 20);
  EXPECT_EQ(cl->config.announce_tokens.size(), 2u);
  EXPECT_FALSE(cl->config.udp);
  EXPECT_TRUE(cl->config.state.require_registered);
}

TEST(TokenSet, MatchesOnlyExactTokens) {
  TokenSet none;
  EXPECT_TRUE(none.empty());
  TokenSet set({"alpha", "beta"});
  EXPECT_TRUE(set.Matches("alpha"));
  EXPECT_TRUE(set.Matches("beta"));
  EXPECT_FALSE(set.Matches("alph"));
  EXPECT_FALSE(set.Matches("alphaa"));
  EXPECT_FALSE(set.Matches(""));
}

}  // namespace
}  // namespace swarmcast::tracker
