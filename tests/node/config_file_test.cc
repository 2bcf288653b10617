// Integration: where the real swarmcast takes its options from besides the
// command line (node/cli/node_config.h): the config file, SWARMCAST_TRACKER,
// and their order, command line > environment > file. Which tracker a
// command used shows in its result: the test tracker answers an unknown
// name with 404, a closed port refuses the connection.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

// Nothing listens there: port 1 on loopback refuses at once.
constexpr char kDeadTracker[] = "http://127.0.0.1:1";

class NodeConfigTest : public LocalSwarmTest {
 protected:
  // Writes the config file (0600) and returns its path.
  std::string WriteConfig(const std::string& text) {
    const fs::path p = Dir("etc") / ("swarmcast-" + std::to_string(++files_) + ".conf");
    std::ofstream(p) << text;
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
    return p.string();
  }
  // `status NAME --json` under `env`, to its end: exit code and result.
  std::pair<int, Json> Status(std::vector<std::string> args, std::vector<std::string> env) {
    std::vector<std::string> argv = {"status", "no-such-swarm", "--json", "--tracker-retry", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto c = Run("status-" + std::to_string(++runs_), argv, std::move(env));
    const auto rc = c->Wait(60s);
    EXPECT_TRUE(rc.has_value());
    last_stderr_ = c->Stderr();
    return {rc.value_or(-1), c->JsonOut()};
  }
  static std::string Message(const Json& j) {
    return j.contains("error") ? j["error"].value("message", "") : "";
  }
  // The test tracker answered: it does not know the name.
  static bool AskedTestTracker(const Json& j) {
    return Message(j).find("404") != std::string::npos;
  }

  int files_ = 0, runs_ = 0;
  std::string last_stderr_;
};

TEST_F(NodeConfigTest, TheFileNamesTheTracker) {
  auto [none_rc, none] = Status({}, {});
  EXPECT_EQ(none_rc, 2) << none.dump();
  EXPECT_NE(Message(none).find("needs --tracker"), std::string::npos) << none.dump();

  const std::string conf = WriteConfig("# the cluster's tracker\ntracker = " + url_ + "\n");
  auto [rc, j] = Status({}, {"SWARMCAST_CONFIG=" + conf});
  EXPECT_EQ(rc, 3) << j.dump();
  EXPECT_TRUE(AskedTestTracker(j)) << j.dump();
}

TEST_F(NodeConfigTest, CommandLineBeatsEnvironmentBeatsFile) {
  const std::string good = WriteConfig("tracker = " + url_ + "\n");
  const std::string dead = WriteConfig("tracker = " + std::string(kDeadTracker) + "\n");

  auto [flag_rc, flag] = Status({"--tracker", kDeadTracker}, {"SWARMCAST_CONFIG=" + good});
  EXPECT_EQ(flag_rc, 3);
  EXPECT_FALSE(AskedTestTracker(flag)) << "the file's tracker was used: " << flag.dump();

  auto [env_rc, env] = Status({}, {"SWARMCAST_CONFIG=" + dead, "SWARMCAST_TRACKER=" + url_});
  EXPECT_EQ(env_rc, 3);
  EXPECT_TRUE(AskedTestTracker(env)) << "SWARMCAST_TRACKER was not used: " << env.dump();

  auto [both_rc, both] =
      Status({"--tracker", url_}, {"SWARMCAST_TRACKER=" + std::string(kDeadTracker)});
  EXPECT_EQ(both_rc, 3);
  EXPECT_TRUE(AskedTestTracker(both)) << "--tracker lost to the environment: " << both.dump();
}

// --token and --token-file are one setting: the source that gives either
// hides both in weaker ones (no "not both" error across sources). An
// unpublish of an unknown name shows which token went: the right one gets
// 404, a wrong one is refused first.
TEST_F(NodeConfigTest, TheStrongestSourceOfATokenWins) {
  const std::string right = token_file_.string();
  const fs::path wrong = Dir("etc") / "wrong.token";
  std::ofstream(wrong) << "not-the-token\n";
  auto unpublish = [&](std::vector<std::string> args, std::vector<std::string> env) {
    std::vector<std::string> argv = {"unpublish", "no-such-name",    "--tracker", url_,
                                     "--json",    "--tracker-retry", "0"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto c = Run("unpublish-" + std::to_string(++runs_), argv, std::move(env));
    EXPECT_TRUE(c->Wait(60s).has_value());
    return c->JsonOut().value("http_status", 0);
  };
  const std::string wrong_in_file = WriteConfig("token-file = " + wrong.string() + "\n");
  const std::string right_in_file = WriteConfig("token-file = " + right + "\n");
  // Env() carries the right token in SWARMCAST_TOKEN.
  EXPECT_EQ(unpublish({}, {"SWARMCAST_CONFIG=" + wrong_in_file}), 404);
  EXPECT_EQ(unpublish({}, {"SWARMCAST_CONFIG=" + right_in_file, "SWARMCAST_TOKEN="}), 404);
  EXPECT_NE(unpublish({}, {"SWARMCAST_CONFIG=" + wrong_in_file, "SWARMCAST_TOKEN="}), 404);
  EXPECT_NE(unpublish({"--token-file", wrong.string()}, {"SWARMCAST_CONFIG=" + right_in_file}),
            404);
}

TEST_F(NodeConfigTest, AConfiguredNodeGetsWithoutFlags) {
  const fs::path file = Dir("seed") / "image.raw";
  WriteRandomFile(file, 1 << 20, 7);
  auto seed = Run("seed", {"seed", file.string(), "--tracker", url_, "--listen", "127.0.0.2:0",
                           "--no-push", "--json"});
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();

  // Everything the get needs but the name: the tracker at the top, its
  // own options in [get], and [seed] (another command's) left to seed.
  const fs::path out = Dir("images");
  const std::string conf = WriteConfig("tracker = " + url_ +
                                       "\nlisten = 127.0.0.3:0\n\n[get]\noutput = " + out.string() +
                                       "\nno-linger = true\n\n[seed]\nname = x\n");
  auto get = Run("get", {"get", "image.raw", "--json"}, {"SWARMCAST_CONFIG=" + conf});
  const auto rc = get->Wait(120s);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(*rc, 0) << get->Stderr();
  EXPECT_EQ(get->JsonOut().value("end", ""), "completed") << get->Stdout();
  EXPECT_TRUE(SameContent(file, out / "image.raw"));
}

TEST_F(NodeConfigTest, AnUnknownKeyIsAnErrorNamingFileAndLine) {
  const std::string conf = WriteConfig("tracker = " + url_ + "\n\ntrakcer = x\n");
  auto [rc, j] = Status({}, {"SWARMCAST_CONFIG=" + conf});
  EXPECT_EQ(rc, 2) << j.dump();
  EXPECT_EQ(j["error"].value("kind", ""), "usage") << j.dump();
  EXPECT_NE(Message(j).find(conf + ":3: unknown option 'trakcer'"), std::string::npos) << j.dump();
  EXPECT_NE(last_stderr_.find(conf + ":3:"), std::string::npos) << last_stderr_;

  const std::string section = WriteConfig("[get]\nfrobnicate = 1\n");
  auto [get_rc, get] = [&] {
    auto c = Run("get-bad-key", {"get", "x", "-o", Dir("o").string(), "--json"},
                 {"SWARMCAST_CONFIG=" + section});
    const auto code = c->Wait(60s);
    return std::pair{code.value_or(-1), c->JsonOut()};
  }();
  EXPECT_EQ(get_rc, 2);
  EXPECT_NE(Message(get).find(section + ":2: unknown option 'frobnicate' in [get]"),
            std::string::npos)
      << get.dump();
}

TEST_F(NodeConfigTest, AFileOthersCanWriteIsRefused) {
  const std::string conf = WriteConfig("tracker = " + url_ + "\n");
  ::chmod(conf.c_str(), 0666);
  auto [rc, j] = Status({}, {"SWARMCAST_CONFIG=" + conf});
  EXPECT_EQ(rc, 2) << j.dump();
  EXPECT_NE(Message(j).find("writable by group or others"), std::string::npos) << j.dump();

  auto [missing_rc, missing] = Status({}, {"SWARMCAST_CONFIG=" + conf + ".nope"});
  EXPECT_EQ(missing_rc, 2) << missing.dump();
  EXPECT_NE(Message(missing).find("No such file"), std::string::npos) << missing.dump();
}

}  // namespace
}  // namespace swarmcast::node::testing
