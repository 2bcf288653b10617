#include "tracker/config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

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
  // Registry writes need a credential: none given, the tracker makes one.
  EXPECT_TRUE(cl->config.admin_tokens.empty());
  EXPECT_FALSE(cl->config.open_registry);
  EXPECT_EQ(cl->config.generated_token_file, "swarmcast-tracker.db.token");
}

TEST(CommandLine, HelpExplainsEveryOption) {
  auto cl = Parse({"--help"});
  ASSERT_TRUE(cl.ok());
  EXPECT_TRUE(cl->exit_now);
  for (const char* opt :
       {"--listen", "--db", "--interval", "--announce-token", "--admin-token", "--max-peers",
        "--batch-ms", "--db-refresh", "--trust-ip-param", "--open-registry",
        "--generated-token-file", "--tls-cert", "--tls-key", "--tls-handshake-timeout-ms"}) {
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
           {"--tls-cert", "c.pem"},
           {"--tls-key", "k.pem"},
           {"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-handshake-timeout-ms", "5"},
       }) {
    EXPECT_FALSE(Parse(args).ok()) << args[0];
  }
}

// A file that removes itself.
struct TokenFile {
  explicit TokenFile(const std::string& text)
      : path("/tmp/swarmcast-token-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++)) {
    std::ofstream(path) << text;
  }
  ~TokenFile() { std::remove(path.c_str()); }
  std::string path;
  static inline int counter = 0;
};

TEST(CommandLine, PublishersAndTheOpenRegistry) {
  TokenFile alice("alice\n"), bob("# bob's\nbob\n");
  auto cl = Parse({"--db", "/var/lib/t.db", "--admin-token-file", alice.path.c_str(),
                   "--admin-token-file", bob.path.c_str(), "--open-registry"});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.admin_tokens, (std::vector<std::string>{"alice", "bob"}));
  EXPECT_TRUE(cl->config.open_registry);
  EXPECT_EQ(cl->config.generated_token_file, "/var/lib/t.db.token");
  auto own =
      Parse({"--generated-token-file", "/run/t.token", "--admin-token", "a", "--admin-token", "b"});
  ASSERT_TRUE(own.ok()) << own.error();
  EXPECT_EQ(own->config.generated_token_file, "/run/t.token");
  EXPECT_EQ(own->config.admin_tokens.size(), 2u);
  EXPECT_FALSE(Parse({"--admin-token", "has blank"}).ok());
}

TEST(CommandLine, TokensComeFromFiles) {
  TokenFile admin("  s3cret \n");
  TokenFile announce("# the cluster's nodes\nalpha\n\n  beta\r\n");
  auto cl = Parse({"--admin-token-file", admin.path.c_str(), "--announce-token-file",
                   announce.path.c_str(), "--announce-token", "gamma"});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.admin_tokens, (std::vector<std::string>{"s3cret"}));
  EXPECT_EQ(cl->config.announce_tokens, (std::vector<std::string>{"gamma", "alpha", "beta"}));
}

TEST(CommandLine, BadTokenFilesAreRefusedWithTheReason) {
  TokenFile empty("# nothing\n\n");
  TokenFile two("a\nb\n");
  TokenFile slash("a/b\n");
  TokenFile big(std::string(70 << 10, 'x'));
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--admin-token-file", "/nonexistent/token"}, "cannot read"},
      {{"--admin-token-file", empty.path.c_str()}, "holds no token"},
      {{"--admin-token-file", two.path.c_str()}, "holds 2 tokens"},
      {{"--admin-token-file", big.path.c_str()}, "over 64 KiB"},
      {{"--admin-token", "x", "--admin-token-file", two.path.c_str()}, "not both"},
      {{"--announce-token-file", slash.path.c_str()}, "without /"},
  };
  for (const auto& [args, why] : cases) {
    auto cl = Parse(args);
    ASSERT_FALSE(cl.ok()) << args[0];
    EXPECT_NE(cl.error().find(why), std::string::npos) << cl.error();
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

// --config FILE (config/config_file.h): the file's values are used, the
// command line wins, an unknown key names file and line.
TEST(CommandLine, ConfigFileSetsOptionsBelowTheCommandLine) {
  TokenFile conf(
      "# tracker.conf\nlisten = 127.0.0.1:7000\nlisten = [::1]:7000\ninterval = 60\n"
      "db = /var/lib/swarmcast/tracker.db\nno-udp = false\nrequire-registered = true\n");
  ::chmod(conf.path.c_str(), 0600);
  auto cl = Parse({"--config", conf.path.c_str()});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.listen, (std::vector<std::string>{"127.0.0.1:7000", "[::1]:7000"}));
  EXPECT_EQ(cl->config.state.interval, 60);
  EXPECT_EQ(cl->config.db, "/var/lib/swarmcast/tracker.db");
  EXPECT_TRUE(cl->config.udp);
  EXPECT_TRUE(cl->config.state.require_registered);

  cl = Parse({"--config", conf.path.c_str(), "--listen", "127.0.0.1:0", "--interval", "30"});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.listen, std::vector<std::string>{"127.0.0.1:0"});
  EXPECT_EQ(cl->config.state.interval, 30);
}

TEST(CommandLine, ConfigFileErrorsNameFileAndLine) {
  TokenFile typo("listen = 127.0.0.1:7000\nintervall = 60\n");
  ::chmod(typo.path.c_str(), 0600);
  auto cl = Parse({"--config", typo.path.c_str()});
  ASSERT_FALSE(cl.ok());
  EXPECT_NE(cl.error().find(typo.path + ":2: unknown option 'intervall'"), std::string::npos)
      << cl.error();

  TokenFile nested("config = /etc/other.conf\n");
  ::chmod(nested.path.c_str(), 0600);
  EXPECT_FALSE(Parse({"--config", nested.path.c_str()}).ok());

  TokenFile open_to_all("listen = 127.0.0.1:7000\n");
  ::chmod(open_to_all.path.c_str(), 0666);
  cl = Parse({"--config", open_to_all.path.c_str()});
  ASSERT_FALSE(cl.ok());
  EXPECT_NE(cl.error().find("writable by group or others"), std::string::npos) << cl.error();
}

TEST(CommandLine, VersionIsTheProjectVersion) {
  auto cl = Parse({"--version"});
  ASSERT_TRUE(cl.ok());
  EXPECT_TRUE(cl->exit_now);
  EXPECT_EQ(cl->text, "swarmcast-tracker " SWARMCAST_VERSION "\n");
}

TEST(CommandLine, TlsFilesAndHandshakeDeadlineReachTheConfig) {
  auto cl =
      Parse({"--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-handshake-timeout-ms", "750"});
  ASSERT_TRUE(cl.ok()) << cl.error();
  EXPECT_EQ(cl->config.tls_cert, "c.pem");
  EXPECT_EQ(cl->config.tls_key, "k.pem");
  EXPECT_EQ(cl->config.http.tls_handshake_timeout, std::chrono::milliseconds(750));
  EXPECT_TRUE(Parse({}).value().config.tls_cert.empty());
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
