#include "config/config_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace swarmcast::config {
namespace {

namespace fs = std::filesystem;

// A config file in a scratch directory, mode 0600, removed at the end.
class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("swarmcast-config-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    desc_.add_options()("tracker", po::value<std::string>(), "")(
        "listen", po::value<std::vector<std::string>>()->composing(), "")(
        "threads", po::value<int>()->default_value(1), "")("quiet", po::bool_switch(), "");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& text, mode_t mode = 0600) {
    const fs::path p = dir_ / ("c" + std::to_string(++n_) + ".conf");
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p.string();
  }
  // Top-level keys are the options themselves; "a.KEY" (section [a]) too;
  // [b] is another program's section.
  static Result<std::string, std::string> Resolve(const std::string& key) {
    if (key.rfind("b.", 0) == 0) return std::string();
    const std::string name = key.rfind("a.", 0) == 0 ? key.substr(2) : key;
    if (name == "tracker" || name == "listen" || name == "threads" || name == "quiet") return name;
    return Unexpected("unknown option '" + key + "'");
  }
  // The command line `args`, then the file.
  std::optional<std::string> Load(const std::string& path, std::vector<const char*> args = {}) {
    args.insert(args.begin(), "prog");
    po::store(
        po::command_line_parser(static_cast<int>(args.size()), args.data()).options(desc_).run(),
        vm_);
    auto why = StoreConfigFile(path, desc_, Resolve, vm_);
    if (!why) po::notify(vm_);
    return why;
  }

  fs::path dir_;
  int n_ = 0;
  po::options_description desc_;
  po::variables_map vm_;
};

TEST_F(ConfigFileTest, FileValuesFillWhatTheCommandLineLeft) {
  const auto path = Write(
      "# comment\n  tracker = http://t:6969   # trailing\nthreads=4\nlisten = a:1\nlisten = b:2\n"
      "quiet = true\n\n[b]\nanything = goes\n");
  ASSERT_EQ(Load(path, {"--listen", "c:3"}), std::nullopt);
  EXPECT_EQ(vm_["tracker"].as<std::string>(), "http://t:6969");
  EXPECT_EQ(vm_["threads"].as<int>(), 4);
  EXPECT_TRUE(vm_["quiet"].as<bool>());
  // A flag replaces the file's list; it does not add to it.
  EXPECT_EQ(vm_["listen"].as<std::vector<std::string>>(), std::vector<std::string>{"c:3"});
}

TEST_F(ConfigFileTest, RepeatedListsAddUpAndASectionWinsOverTheTop) {
  const auto path = Write("listen = a:1\nlisten = b:2\nthreads = 2\n[a]\nthreads = 3\n");
  ASSERT_EQ(Load(path), std::nullopt);
  EXPECT_EQ(vm_["listen"].as<std::vector<std::string>>(), (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(vm_["threads"].as<int>(), 3);
}

TEST_F(ConfigFileTest, ErrorsNameTheFileAndLine) {
  const auto unknown = Write("tracker = x\n\n# c\ntrakcer = y\n");
  EXPECT_EQ(Load(unknown), unknown + ":4: unknown option 'trakcer'");

  const auto syntax = Write("tracker = x\nthreads 4\n");
  auto why = StoreConfigFile(syntax, desc_, Resolve, vm_);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind(syntax + ":2: ", 0), 0u) << *why;

  const auto value = Write("threads = many\n");
  why = StoreConfigFile(value, desc_, Resolve, vm_);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(why->rfind(value + ":1: ", 0), 0u) << *why;
  EXPECT_NE(why->find("many"), std::string::npos) << *why;

  po::variables_map fresh;
  const auto twice = Write("tracker = x\ntracker = y\n");
  EXPECT_EQ(StoreConfigFile(twice, desc_, Resolve, fresh),
            twice + ":2: 'tracker' is already set on line 1");
}

TEST_F(ConfigFileTest, OnlyAFileNobodyElseCanWriteIsRead) {
  for (mode_t mode : {0620, 0602, 0666}) {
    const auto path = Write("tracker = x\n", mode);
    auto r = ReadOwnedFile(path);
    ASSERT_FALSE(r.ok()) << std::oct << mode;
    EXPECT_NE(r.error().find("writable by group or others"), std::string::npos) << r.error();
  }
  EXPECT_TRUE(ReadOwnedFile(Write("tracker = x\n", 0644)).ok());

  EXPECT_FALSE(ReadOwnedFile((dir_ / "missing").string()).ok());
  EXPECT_NE(ReadOwnedFile(dir_.string()).error().find("not a regular file"), std::string::npos);
  const auto big = Write(std::string(kMaxConfigBytes + 1, '#'));
  EXPECT_NE(ReadOwnedFile(big).error().find("larger than"), std::string::npos);

  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  const auto theirs = Write("tracker = x\n", 0644);
  ASSERT_EQ(::chown(theirs.c_str(), 12345, 12345), 0);
  auto r = ReadOwnedFile(theirs);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("owned by uid 12345"), std::string::npos) << r.error();
}

}  // namespace
}  // namespace swarmcast::config
