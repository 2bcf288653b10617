// Integration: the live fleet view (issue 15 item 4) with a real tracker
// and real nodes. A tracker told a long --interval still hears from a
// downloading get every --progress-interval, so `swarmcast status NAME`
// shows its progress, rate and why it is not done within seconds; a get
// killed and started again on the same address replaces its old entry
// instead of lingering as a stale straggler.
#include <gtest/gtest.h>
#include <signal.h>

#include <sstream>

#include "node/registry_client.h"
#include "tests/node/plain_http.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

class FleetViewTest : public LocalSwarmTest {
 protected:
  // A second tracker with the production --interval (the fixture's is 5 s,
  // which would hide what --progress-interval does).
  void StartLongIntervalTracker() {
    const fs::path dir = Dir("tracker2");
    tracker2_ = std::make_unique<Child>(
        std::vector<std::string>{TrackerBin(), "--listen", "127.0.0.1:0", "--db",
                                 (dir / "t.db").string(), "--no-udp", "--interval", "120",
                                 "--progress-interval", "5", "--json"},
        dir / "tracker");
    int port = 0;
    ASSERT_TRUE(WaitUntil(20s, [&] {
      auto j = tracker2_->JsonOut();
      if (j.value("event", "") == "listening" && j["addresses"].is_array() &&
          !j["addresses"].empty()) {
        const std::string at = j["addresses"][0].get<std::string>();
        port = std::atoi(at.c_str() + at.rfind(':') + 1);
        return true;
      }
      return !tracker2_->Running();
    }));
    ASSERT_GT(port, 0) << tracker2_->Stderr();
    url2_ = "http://127.0.0.1:" + std::to_string(port);
    token2_ = ReadToken(dir / "t.db.token");
  }

  std::unique_ptr<Child> Node(const std::string& log, std::vector<std::string> args) {
    return Run(log, std::move(args), {"SWARMCAST_TOKEN=" + token2_});
  }

  // The straggler entry of the one unfinished peer at `ip` (empty when none).
  static std::optional<Straggler> At(const CompletionView& v, const std::string& ip) {
    for (const Straggler& s : v.stragglers) {
      if (s.ip == ip) return s;
    }
    return std::nullopt;
  }

  std::unique_ptr<Child> tracker2_;
  std::string url2_, token2_;
};

TEST_F(FleetViewTest, StatusFollowsADownloadWithinSecondsAndARestartReplacesItsEntry) {
  StartLongIntervalTracker();
  ASSERT_FALSE(url2_.empty());
  const fs::path payload = Dir("seed") / "disk.img";
  constexpr std::int64_t kSize = 12 << 20;
  WriteRandomFile(payload, kSize, 11);
  auto seed = Node("seed", {"seed", payload.string(), "--tracker", url2_, "--listen", "127.0.0.2:0",
                            "--no-push", "--json"});
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();

  // 12 MiB at 512 KiB/s: about 24 s; the long interval alone would leave
  // the tracker at "12 MiB left" until the end.
  const fs::path out = Dir("out");
  auto get =
      Node("get-1", {"get", "disk.img", "--tracker", url2_, "-o", out.string(), "--listen",
                     "127.0.0.5:0", "--max-download-rate", "512KiB", "--no-linger", "--json"});
  RegistryClient client(*ParseTrackerUrl(url2_), 2s);
  std::optional<Straggler> seen;
  std::int64_t first_left = -1;
  ASSERT_TRUE(WaitUntil(60s, [&] {
    auto view = client.GetCompletion("disk.img");
    if (!view) return false;
    auto s = At(*view, "127.0.0.5");
    if (!s) return !get->Running();
    if (first_left < 0) first_left = s->left;
    // Two progress announces after the first: left went down and there is
    // a rate.
    if (s->left > 0 && s->left < first_left && s->rate > 0) seen = s;
    return seen.has_value() || !get->Running();
  })) << get->Stderr();
  ASSERT_TRUE(seen.has_value()) << "the tracker never heard of progress: " << get->Stderr();
  EXPECT_TRUE(get->Running()) << "seen part-way, not at the end";
  EXPECT_EQ(seen->why, "downloading") << seen->reason;
  EXPECT_NE(seen->reason.find("/s"), std::string::npos) << seen->reason;
  // The rate is about what the limit allows (wide bounds: a busy machine).
  EXPECT_GT(seen->rate, 64 * 1024);
  EXPECT_LT(seen->rate, 2 * 1024 * 1024);

  // The operator's view of the same: `swarmcast status NAME --json`.
  auto status = Node("status", {"status", "disk.img", "--tracker", url2_, "--json"});
  ASSERT_EQ(status->Wait(30s), 0) << status->Stderr();
  const Json sj = status->JsonOut();
  ASSERT_EQ(sj["stragglers"].size(), 1u) << sj.dump();
  EXPECT_EQ(sj["stragglers"][0]["why"], "downloading") << sj.dump();
  EXPECT_GT(sj["stragglers"][0]["rate"].get<std::int64_t>(), 0);
  EXPECT_LT(sj["stragglers"][0]["left"].get<std::int64_t>(), kSize);

  // Killed mid-way; started again on the same IP and port, it resumes and
  // finishes, and the tracker keeps one entry for it, not two.
  const std::int64_t port = seen->port;
  get->Signal(SIGKILL);
  ASSERT_TRUE(get->Wait(30s).has_value());
  // The port is free once the killed process is gone, but a socket of
  // its connections may hold it a moment longer: a get refuses a busy
  // --listen port (exit 7) rather than take another, so start it again
  // until it binds (bounded).
  std::unique_ptr<Child> again;
  int tries = 0;
  ASSERT_TRUE(WaitUntil(60s, [&] {
    again = Node("get-2-" + std::to_string(++tries),
                 {"get", "disk.img", "--tracker", url2_, "-o", out.string(), "--listen",
                  "127.0.0.5:" + std::to_string(port), "--no-linger", "--json"});
    const auto rc = again->Wait(120s);
    return rc != 7;
  }));
  ASSERT_EQ(again->Wait(1s), 0) << again->Stderr();
  EXPECT_TRUE(SameContent(payload, out / "disk.img"));
  CompletionView last;
  ASSERT_TRUE(WaitUntil(30s,
                        [&] {
                          auto view = client.GetCompletion("disk.img");
                          if (!view) return false;
                          last = *view;
                          return view->AllDone();
                        }))
      << "total " << last.total << ", done " << last.done << ", running " << last.running
      << ", stale " << last.stale << ", stragglers " << last.stragglers.size() << " (first "
      << (last.stragglers.empty()
              ? std::string("-")
              : last.stragglers[0].ip + ":" + std::to_string(last.stragglers[0].port))
      << "; the restarted get listened on port " << port << ")\npeers: "
      << PlainHttpGet("127.0.0.1", std::atoi(url2_.c_str() + url2_.rfind(':') + 1),
                      "/v1/swarms/disk.img/peers")
             .body
      << "\n"
      << again->Stderr();
  EXPECT_EQ(last.total, 2) << "the seed and one entry for the restarted get";
  EXPECT_TRUE(last.stragglers.empty());
}

}  // namespace
}  // namespace swarmcast::node::testing
