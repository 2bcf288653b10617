// Real processes on loopback for the node's integration tests: a child
// process with its output in files, a tracker, random payloads, and the
// checks the tests share. Every child is killed and reaped when its
// Child object goes away, so a failing test leaves nothing running.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/tls_client.h"
#include "tests/common/wait_until.h"

namespace swarmcast::node::testing {

namespace fs = std::filesystem;

class Child {
 public:
  // Starts argv[0] (a path) with stdout and stderr sent to
  // `log_prefix`.out / .err, and `env` ("K=V") added to the environment.
  Child(std::vector<std::string> argv, const fs::path& log_prefix,
        std::vector<std::string> env = {});
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int sig);
  // The exit code, -signal if killed by one, nullopt on timeout.
  std::optional<int> Wait(std::chrono::milliseconds timeout);
  bool Running();
  std::string Stdout() const;
  std::string Stderr() const;
  // Stdout's last line parsed as JSON (empty object if none).
  nlohmann::json JsonOut() const;
  // Once it has exited (Wait): its peak resident set, in bytes.
  std::optional<std::int64_t> peak_rss() const { return peak_rss_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::optional<std::int64_t> peak_rss_;
  fs::path out_, err_;
};

// A scratch directory under $TMPDIR, removed (and unmounted) at the end.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Writes `size` pseudo-random bytes (deterministic per seed).
void WriteRandomFile(const fs::path& path, std::size_t size, unsigned seed);
bool SameContent(const fs::path& a, const fs::path& b);
// The SHA-256 of a file's bytes, in hex.
std::string Sha256Of(const fs::path& p);
std::string ReadAll(const fs::path& p);

// swarmcast-tracker on 127.0.0.1 at a port the kernel picks (no window in
// which another process can take it), with its database in `dir` and
// `extra` arguments; returns once the registry answers (over https with
// `tls`, for a tracker given --tls-cert; there a certificate the client
// refuses counts as an answer), or a null child.
struct RunningTracker {
  std::unique_ptr<Child> child;
  int port = 0;
};
RunningTracker StartTracker(const fs::path& dir, std::vector<std::string> extra = {},
                            ClientTlsContext tls = nullptr);
// The first line of a token file (the tracker's made token).
std::string ReadToken(const fs::path& token_file);

using swarmcast::testing::WaitUntil;

// The info-hash a running `swarmcast seed` published, from its stderr line
// "published NAME as 'REG' (INFOHASH) at ..." ("re-published" too); empty
// if it exited or did not publish within a minute.
std::string WaitSeedPublished(Child& seed);

// The swarmcast binary, and common argument lists for it.
std::string SwarmcastBin();
std::string TrackerBin();

// The fixture the node's integration tests share: a scratch directory
// named after the test and a real swarmcast-tracker on 127.0.0.1.
class LocalSwarmTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // A subdirectory of the scratch directory, created.
  fs::path Dir(const std::string& sub);
  // Every swarmcast process keeps its state files and hash cache here, and
  // has the tracker's admin token (as $SWARMCAST_TOKEN), which publishing
  // needs: the tracker made it at start in token_file_.
  std::vector<std::string> Env();
  // Starts `swarmcast args...`, logging to <scratch>/<log>.out and .err;
  // `env` ("K=V") comes before (and so wins over) Env().
  std::unique_ptr<Child> Run(const std::string& log, std::vector<std::string> args,
                             std::vector<std::string> env = {});

  std::unique_ptr<TempDir> dir_;
  int port_ = 0;
  std::unique_ptr<Child> tracker_;
  std::string url_;
  fs::path token_file_;  // <scratch>/tracker.db.token
};

}  // namespace swarmcast::node::testing
