#include "tests/node/swarm_harness.h"

#include <fcntl.h>
#include <openssl/sha.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "node/registry_client.h"
#include "proto/hex.h"

extern char** environ;

namespace swarmcast::node::testing {

Child::Child(std::vector<std::string> argv, const fs::path& log_prefix,
             std::vector<std::string> env)
    : out_(log_prefix.string() + ".out"), err_(log_prefix.string() + ".err") {
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  // `env` first: getenv() returns the first match, so these replace what
  // the test process inherited.
  std::vector<std::string> envs = std::move(env);
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The logs are emptied here, before the fork, not in the child: a test
  // that runs a second process under the same name would otherwise read
  // the first one's lines (its "published", its port) until the child got
  // round to truncating them.
  const int out = ::open(out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open(err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  pid_ = ::fork();
  if (pid_ == 0) {
    ::setpgid(0, 0);
    const int in = ::open("/dev/null", O_RDONLY);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::close(out);
  ::close(err);
}

Child::~Child() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGKILL);
    Wait(std::chrono::seconds(10));
  }
}

void Child::Signal(int sig) {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

std::optional<int> Child::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!status_) {
    int st = 0;
    rusage usage{};
    const pid_t r = ::wait4(pid_, &st, WNOHANG, &usage);
    if (r == pid_) {
      status_ = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
      peak_rss_ = std::int64_t{usage.ru_maxrss} * 1024;  // Linux gives KiB
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status_;
}

bool Child::Running() { return !Wait(std::chrono::milliseconds(0)).has_value(); }

std::string Child::Stdout() const { return ReadAll(out_); }
std::string Child::Stderr() const { return ReadAll(err_); }

nlohmann::json Child::JsonOut() const {
  std::istringstream in(Stdout());
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  auto j = nlohmann::json::parse(last, nullptr, false);
  return j.is_discarded() ? nlohmann::json::object() : j;
}

TempDir::TempDir(const std::string& tag) {
  std::string tmpl = (fs::temp_directory_path() / ("swarmcast-" + tag + "-XXXXXX")).string();
  path_ = ::mkdtemp(tmpl.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  if (std::getenv("SWARMCAST_KEEP_TEST_DIRS") != nullptr) return;  // for debugging
  for (auto it = fs::recursive_directory_iterator(path_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    // A test may have mounted a small file system here.
    if (it->is_directory()) ::umount2(it->path().c_str(), MNT_DETACH);
  }
  fs::remove_all(path_, ec);
}

void WriteRandomFile(const fs::path& path, std::size_t size, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::string data(size, '\0');
  for (std::size_t i = 0; i + 8 <= size; i += 8) {
    const auto v = rng();
    std::memcpy(&data[i], &v, 8);
  }
  std::ofstream(path, std::ios::binary).write(data.data(), static_cast<std::streamsize>(size));
}

std::string WaitSeedPublished(Child& seed) {
  static const std::regex kPublished(R"(published .* \(([0-9a-f]{40})\) at )");
  std::string info_hash;
  WaitUntil(std::chrono::seconds(60), [&] {
    std::smatch m;
    const std::string err = seed.Stderr();
    if (std::regex_search(err, m, kPublished)) info_hash = m[1];
    return !info_hash.empty() || !seed.Running();
  });
  return info_hash;
}

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Sha256Of(const fs::path& p) {
  const std::string bytes = ReadAll(p);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return proto::ToHex(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest));
}

bool SameContent(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (!fs::is_regular_file(a, ec) || !fs::is_regular_file(b, ec)) return false;
  if (fs::file_size(a) != fs::file_size(b)) return false;
  return ReadAll(a) == ReadAll(b);
}

std::string SwarmcastBin() { return SWARMCAST_BIN; }
std::string TrackerBin() { return SWARMCAST_TRACKER_BIN; }

std::string ReadToken(const fs::path& token_file) {
  std::string text = ReadAll(token_file);
  return text.substr(0, text.find('\n'));
}

RunningTracker StartTracker(const fs::path& dir, std::vector<std::string> extra,
                            ClientTlsContext tls) {
  RunningTracker t;
  std::vector<std::string> argv = {
      TrackerBin(), "--listen",   "127.0.0.1:0", "--db",      (dir / "tracker.db").string(),
      "--no-udp",   "--interval", "5",           "--threads", "1",
      "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  t.child = std::make_unique<Child>(std::move(argv), dir / "tracker");
  // Its first line says where it listens: {"event":"listening","addresses":["127.0.0.1:P"],...}
  const bool listening = WaitUntil(std::chrono::seconds(20), [&] {
    auto j = t.child->JsonOut();
    if (j.value("event", "") != "listening" || !j["addresses"].is_array() ||
        j["addresses"].empty()) {
      return !t.child->Running();
    }
    const std::string at = j["addresses"][0].get<std::string>();
    t.port = std::atoi(at.c_str() + at.rfind(':') + 1);
    return true;
  });
  if (!listening || t.port <= 0) return {};
  const std::string scheme = tls ? "https" : "http";
  RegistryClient client(*ParseTrackerUrl(scheme + "://127.0.0.1:" + std::to_string(t.port)),
                        std::chrono::seconds(2), {}, tls);
  // Up once it answers, or (a test of refused certificates) once its
  // TLS handshake got as far as presenting one.
  const bool up = WaitUntil(std::chrono::seconds(20), [&] {
    auto r = client.GetSwarm("probe");
    return r || r.error().kind != RegistryError::Kind::kUnreachable ||
           r.error().message.find("certificate refused") != std::string::npos;
  });
  if (!up) return {};
  return t;
}

void LocalSwarmTest::SetUp() {
  dir_ = std::make_unique<TempDir>(::testing::UnitTest::GetInstance()->current_test_info()->name());
  auto t = StartTracker(dir_->path());
  ASSERT_TRUE(t.child) << "swarmcast-tracker did not come up: "
                       << ReadAll(dir_->path() / "tracker.err");
  tracker_ = std::move(t.child);
  port_ = t.port;
  url_ = "http://127.0.0.1:" + std::to_string(port_);
  token_file_ = dir_->path() / "tracker.db.token";
}

fs::path LocalSwarmTest::Dir(const std::string& sub) {
  const fs::path p = dir_->path() / sub;
  fs::create_directories(p);
  return p;
}

std::vector<std::string> LocalSwarmTest::Env() {
  // No config file (not even this machine's /etc/swarmcast/swarmcast.conf)
  // and no tracker from the caller; the test tracker's made token.
  return {"SWARMCAST_STATE_DIR=" + Dir("state").string(),
          "SWARMCAST_CACHE_DIR=" + Dir("cache").string(),
          "SWARMCAST_CONFIG=", "SWARMCAST_TRACKER=", "SWARMCAST_TOKEN=" + ReadToken(token_file_)};
}

std::unique_ptr<Child> LocalSwarmTest::Run(const std::string& log, std::vector<std::string> args,
                                           std::vector<std::string> env) {
  args.insert(args.begin(), SwarmcastBin());
  for (std::string& e : Env()) env.push_back(std::move(e));
  return std::make_unique<Child>(std::move(args), dir_->path() / log, std::move(env));
}

}  // namespace swarmcast::node::testing
