// The push channel's process tests share this: a real tracker, `swarmcast
// seed` with its push channel on 127.0.0.2, and `swarmcast get`s on their
// own 127.0.0.x, each subscribing as an operator's would.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "node/registry_client.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {

class PushSwarmFixture : public LocalSwarmTest {
 protected:
  // Seeds `path` as `name` and returns once the registry lists it with its
  // push endpoint (or without, given --no-push).
  std::unique_ptr<Child> StartSeed(const fs::path& path, const std::string& name,
                                   std::vector<std::string> extra = {}) {
    using namespace std::chrono_literals;
    const bool no_push = std::find(extra.begin(), extra.end(), "--no-push") != extra.end();
    std::vector<std::string> a = {"seed", path.string(), "--tracker",   url_,    "--name",
                                  name,   "--listen",    "127.0.0.2:0", "--json"};
    if (!no_push) a.insert(a.end(), {"--push-listen", "127.0.0.2:0"});
    a.insert(a.end(), extra.begin(), extra.end());
    auto seed = Run("seed-" + name, a);
    RegistryClient c(*ParseTrackerUrl(url_), 2s);
    EXPECT_TRUE(WaitUntil(120s, [&] {
      auto s = c.GetSwarm(name);
      return seed->Running() && s.ok() && (!s->push.empty() || no_push);
    })) << seed->Stderr();
    return seed;
  }

  // `swarmcast get NAME -o <scratch>/OUT --listen IP:0 --no-linger --json`
  // (without --no-linger when `extra` has --linger).
  std::unique_ptr<Child> Get(const std::string& name, const std::string& ip, const std::string& out,
                             std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"get",      name,      "--tracker", url_, "-o", Dir(out).string(),
                                  "--listen", ip + ":0", "--json"};
    if (std::find(extra.begin(), extra.end(), "--linger") == extra.end()) {
      a.push_back("--no-linger");
    }
    a.insert(a.end(), extra.begin(), extra.end());
    return Run("get-" + out, a);
  }
};

}  // namespace swarmcast::node::testing
