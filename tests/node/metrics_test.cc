// Integration: --metrics-listen (node/metrics_server.h, node/node_metrics.h).
// The server in-process against real sockets (only its two paths, bounded
// requests, a silent client stalls nothing), then a real seed and get
// scraped while they run: the values move, and once the transfer is quiet
// they are the numbers of the --json report each prints at its end.
#include <gtest/gtest.h>
#include <signal.h>

#include <regex>

#include "node/metrics_server.h"
#include "tests/node/plain_http.h"
#include "tests/node/swarm_harness.h"

namespace swarmcast::node::testing {
namespace {

using namespace std::chrono_literals;
using Json = nlohmann::json;

TEST(MetricsServer, ServesOnlyMetricsAndHealthzWithBoundedRequests) {
  std::atomic<int> renders{0};
  MetricsServerOptions o;
  o.max_connections = 4;
  o.request_timeout = 500ms;
  auto server = MetricsServer::Start(
      {"127.0.0.1", 0},
      [&] {
        ++renders;
        return std::string("x_total 1\n");
      },
      o);
  ASSERT_TRUE(server.ok()) << server.error();
  const int port = (*server)->port();
  EXPECT_EQ((*server)->address(), "127.0.0.1:" + std::to_string(port));

  auto m = PlainHttpGet("127.0.0.1", port, "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.body, "x_total 1\n");
  EXPECT_EQ(PlainHttpGet("127.0.0.1", port, "/healthz").body, "ok\n");
  EXPECT_EQ(PlainHttpGet("127.0.0.1", port, "/").status, 404);
  EXPECT_EQ(PlainHttpGet("127.0.0.1", port, "/metrics/../etc").status, 404);
  const std::string post =
      PlainHttpExchange("127.0.0.1", port, "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(post.rfind("HTTP/1.1 405", 0), 0u) << post;
  const std::string huge = PlainHttpExchange(
      "127.0.0.1", port,
      "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(16 * 1024, 'a') + "\r\n\r\n");
  EXPECT_EQ(huge.rfind("HTTP/1.1 400", 0), 0u) << huge.substr(0, 100);
  const std::string garbage = PlainHttpExchange("127.0.0.1", port, "\x01\x02 nonsense\r\n\r\n");
  EXPECT_EQ(garbage.rfind("HTTP/1.1 400", 0), 0u) << garbage.substr(0, 100);
  EXPECT_EQ(renders.load(), 1) << "only a GET /metrics renders";

  // A client that connects and sends nothing holds one slot until its
  // deadline; scrapes beside it are answered at once.
  const auto t0 = std::chrono::steady_clock::now();
  std::thread silent([port] {
    // Sends nothing; the server closes it at request_timeout (the exchange
    // returns when the peer closes, well before its own 5 s).
    EXPECT_EQ(PlainHttpExchange("127.0.0.1", port, ""), "");
  });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(PlainHttpGet("127.0.0.1", port, "/healthz").status, 200);
  silent.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 4s)
      << "the silent client was cut off at the request timeout";
}

// Where a process serves its metrics, from its "metrics on http://IP:PORT/metrics" line.
int MetricsPort(Child& c) {
  static const std::regex kLine(R"(metrics on http://[0-9.]+:([0-9]+)/metrics)");
  int port = 0;
  WaitUntil(30s, [&] {
    std::smatch m;
    const std::string err = c.Stderr();
    if (std::regex_search(err, m, kLine)) port = std::stoi(m[1]);
    return port > 0 || !c.Running();
  });
  return port;
}

std::string UrlEncodeHex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += "%" + hex.substr(i, 2);
  return out;
}

class NodeMetricsTest : public LocalSwarmTest {
 protected:
  // One announce of a peer that still downloads (nobody listens at its
  // port): while it is in the swarm, the get's linger does not end early.
  void AnnounceUnfinishedPeer(const std::string& info_hash) {
    PlainHttpGet("127.0.0.1", port_,
                 "/announce?info_hash=" + UrlEncodeHex(info_hash) +
                     "&peer_id=-XX0001-unfinished00&port=9&uploaded=0&downloaded=0&left=1000"
                     "&compact=1");
  }
};

TEST_F(NodeMetricsTest, ScrapesOfASeedAndAGetMoveAndEndAtTheirReports) {
  const fs::path payload = Dir("seed") / "disk.img";
  WriteRandomFile(payload, 24 << 20, 7);
  auto seed = Run("seed", {"seed", payload.string(), "--tracker", url_, "--listen", "127.0.0.2:0",
                           "--metrics-listen", "127.0.0.2:0", "--json"});
  const std::string info_hash = WaitSeedPublished(*seed);
  ASSERT_FALSE(info_hash.empty()) << seed->Stderr();
  const int seed_port = MetricsPort(*seed);
  ASSERT_GT(seed_port, 0) << seed->Stderr();
  AnnounceUnfinishedPeer(info_hash);

  auto get = Run("get", {"get", "disk.img", "--tracker", url_, "-o", Dir("out").string(),
                         "--listen", "127.0.0.3:0", "--metrics-listen", "127.0.0.3:0",
                         "--max-download-rate", "4MiB", "--linger", "5m", "--json"});
  const int get_port = MetricsPort(*get);
  ASSERT_GT(get_port, 0) << get->Stderr();

  auto scrape = [](int port, const char* ip) { return PlainHttpGet(ip, port, "/metrics").body; };
  const std::string in_wire = "swarmcast_node_payload_bytes_total{direction=\"in\",path=\"wire\"}";
  const std::string in_push = "swarmcast_node_payload_bytes_total{direction=\"in\",path=\"push\"}";
  const std::string out_wire =
      "swarmcast_node_payload_bytes_total{direction=\"out\",path=\"wire\"}";
  const std::string out_push =
      "swarmcast_node_payload_bytes_total{direction=\"out\",path=\"push\"}";
  // While it downloads: part of the pieces, and the bytes going up between
  // scrapes; the seed has its subscriber.
  double last_in = -1, seen_growth = 0, max_subscribers = 0;
  bool partial = false;
  std::string g, s;
  ASSERT_TRUE(WaitUntil(90s, [&] {
    AnnounceUnfinishedPeer(info_hash);
    g = scrape(get_port, "127.0.0.3");
    s = scrape(seed_port, "127.0.0.2");
    const double have = MetricSample(g, "swarmcast_node_pieces_have");
    const double total = MetricSample(g, "swarmcast_node_pieces");
    const double in = MetricSample(g, in_wire) + MetricSample(g, in_push);
    partial |= have > 0 && have < total;
    if (last_in >= 0 && in > last_in) ++seen_growth;
    last_in = in;
    max_subscribers = std::max(max_subscribers, MetricSample(s, "swarmcast_node_push_subscribers"));
    return MetricSample(g, "swarmcast_node_state{state=\"lingering\"}") == 1 || !get->Running();
  })) << g;
  ASSERT_TRUE(get->Running()) << get->Stderr();
  EXPECT_TRUE(partial) << "a scrape saw the download part-way";
  EXPECT_GE(seen_growth, 2) << "the byte counters moved between scrapes";
  EXPECT_GE(max_subscribers, 1) << s;
  EXPECT_EQ(MetricSample(g, "swarmcast_node_push_active"), 1) << g;

  // Quiet now (complete, lingering): scrape until two scrapes agree, then
  // stop it; its report must say the same.
  std::string settled;
  ASSERT_TRUE(WaitUntil(30s, [&] {
    AnnounceUnfinishedPeer(info_hash);
    std::string a = scrape(get_port, "127.0.0.3");
    std::this_thread::sleep_for(600ms);  // more than one 500 ms tick apart
    std::string b = scrape(get_port, "127.0.0.3");
    auto key = [&](const std::string& t) {
      return std::to_string(MetricSample(t, in_wire)) + "/" +
             std::to_string(MetricSample(t, in_push)) + "/" +
             std::to_string(MetricSample(t, out_wire)) + "/" +
             std::to_string(MetricSample(t, "swarmcast_node_pieces_have"));
    };
    settled = b;
    return key(a) == key(b);
  }));
  get->Signal(SIGTERM);
  ASSERT_TRUE(get->Wait(60s).has_value());
  const Json gj = get->JsonOut();
  ASSERT_TRUE(gj.value("complete", false)) << gj.dump();
  EXPECT_EQ(MetricSample(settled, in_wire), gj["downloaded_wire_bytes"].get<double>()) << settled;
  EXPECT_EQ(MetricSample(settled, in_push), gj["downloaded_push_bytes"].get<double>()) << settled;
  EXPECT_GT(gj["downloaded_push_bytes"].get<double>(), 0) << "the push channel carried data";
  EXPECT_EQ(MetricSample(settled, out_wire), gj["uploaded_wire_bytes"].get<double>());
  EXPECT_EQ(MetricSample(settled, "swarmcast_node_pieces_have"), gj["pieces_done"].get<double>());
  EXPECT_EQ(MetricSample(settled, "swarmcast_node_pieces"), gj["pieces"].get<double>());
  EXPECT_EQ(MetricSample(settled, "swarmcast_node_hash_failures_total"),
            gj["hash_failures"].get<double>());
  EXPECT_EQ(MetricSample(settled, "swarmcast_node_disk_errors_total"), 0);
  EXPECT_EQ(MetricSample(settled, "swarmcast_node_push_pieces_total"),
            gj["push"]["pieces_pushed"].get<double>());

  // The seed, once its subscriber left and nothing moves.
  std::string seed_settled;
  ASSERT_TRUE(WaitUntil(30s, [&] {
    std::string a = scrape(seed_port, "127.0.0.2");
    std::this_thread::sleep_for(600ms);
    std::string b = scrape(seed_port, "127.0.0.2");
    seed_settled = b;
    return MetricSample(b, "swarmcast_node_push_subscribers") == 0 &&
           MetricSample(a, out_push) == MetricSample(b, out_push) &&
           MetricSample(a, out_wire) == MetricSample(b, out_wire);
  })) << seed_settled;
  seed->Signal(SIGTERM);
  ASSERT_TRUE(seed->Wait(60s).has_value());
  const Json sj = seed->JsonOut();
  ASSERT_TRUE(sj.contains("push") && sj["push"].is_object()) << sj.dump();
  EXPECT_EQ(MetricSample(seed_settled, out_push), sj["uploaded_push_bytes"].get<double>());
  EXPECT_EQ(MetricSample(seed_settled, out_wire), sj["uploaded_wire_bytes"].get<double>());
  const std::string backend = sj["push"]["fanout"].get<std::string>();
  EXPECT_EQ(
      MetricSample(seed_settled, "swarmcast_node_fanout_calls_total{backend=\"" + backend + "\"}"),
      sj["push"]["fanout_calls"].get<double>())
      << seed_settled;
  EXPECT_EQ(MetricSample(seed_settled,
                         "swarmcast_node_fanout_sockets_total{backend=\"" + backend + "\"}"),
            sj["push"]["fanout_targets"].get<double>());
  EXPECT_GT(sj["push"]["fanout_calls"].get<double>(), 0);
  EXPECT_EQ(MetricSample(seed_settled, "swarmcast_node_push_pieces_total"),
            sj["push"]["pieces_sent"].get<double>());
  EXPECT_EQ(MetricSample(seed_settled, "swarmcast_node_state{state=\"seeding\"}"), 1);
}

// --max-peers caps a get's BitTorrent connections, those it makes and
// those it accepts. A wire-only seed and four gets, throttled so that they
// overlap for seconds: three with the default, which connect to the seed
// and to each other (more than two peers), and one with --max-peers 2,
// which every other node tries to connect to and which never holds more
// than two. Only one is capped, so it cannot end up among capped peers
// cut off from the data. Scraped through --metrics-listen.
TEST_F(NodeMetricsTest, AGetConnectsToAtMostMaxPeers) {
  const fs::path payload = Dir("seed") / "disk.img";
  WriteRandomFile(payload, 16 << 20, 11);
  auto seed = Run("seed", {"seed", payload.string(), "--tracker", url_, "--listen", "127.0.0.2:0",
                           "--no-push", "--json"});
  ASSERT_FALSE(WaitSeedPublished(*seed).empty()) << seed->Stderr();

  constexpr int kGets = 4;  // the last one capped
  std::vector<std::unique_ptr<Child>> gets;
  std::vector<int> ports;
  for (int i = 0; i < kGets; ++i) {
    const std::string ip = "127.0.0." + std::to_string(3 + i);
    std::vector<std::string> a = {"get",
                                  "disk.img",
                                  "--tracker",
                                  url_,
                                  "-o",
                                  Dir("out" + std::to_string(i)).string(),
                                  "--listen",
                                  ip + ":0",
                                  "--metrics-listen",
                                  ip + ":0",
                                  "--max-download-rate",
                                  "2MiB",
                                  "--linger",
                                  "60s",
                                  "--json"};
    if (i == kGets - 1) a.insert(a.end(), {"--max-peers", "2"});
    gets.push_back(Run("get" + std::to_string(i), a));
  }
  for (auto& g : gets) {
    ports.push_back(MetricsPort(*g));
    ASSERT_GT(ports.back(), 0) << g->Stderr();
  }
  std::vector<double> most(kGets, 0);
  ASSERT_TRUE(WaitUntil(90s, [&] {
    bool all_done = true;
    for (int i = 0; i < kGets; ++i) {
      // A get that is done lingers, or has left once the tracker saw
      // everyone done.
      if (!gets[i]->Running()) continue;
      const std::string m =
          PlainHttpGet("127.0.0." + std::to_string(3 + i), ports[i], "/metrics").body;
      most[i] = std::max(most[i], MetricSample(m, "swarmcast_node_peers"));
      all_done &= MetricSample(m, "swarmcast_node_state{state=\"lingering\"}") == 1;
    }
    return all_done;
  }));
  const std::string seen = std::to_string(most[0]) + " " + std::to_string(most[1]) + " " +
                           std::to_string(most[2]) + " " + std::to_string(most[3]);
  EXPECT_GE(most[kGets - 1], 1) << seen;
  EXPECT_LE(most[kGets - 1], 2) << "the capped get went past --max-peers 2: " << seen;
  EXPECT_GT(*std::max_element(most.begin(), most.end() - 1), 2)
      << "an uncapped get connected to the seed and to the other gets: " << seen;
  for (int i = 0; i < kGets; ++i) {
    gets[i]->Signal(SIGTERM);
    ASSERT_EQ(gets[i]->Wait(60s), 0) << gets[i]->Stderr();
    EXPECT_TRUE(SameContent(payload, Dir("out" + std::to_string(i)) / "disk.img")) << i;
  }
}

TEST_F(NodeMetricsTest, ABadOrTakenMetricsAddressIsAUsageError) {
  auto bad = Run("bad", {"get", "x", "--tracker", url_, "-o", Dir("o").string(), "--metrics-listen",
                         "nonsense", "--json"});
  EXPECT_EQ(bad->Wait(30s), 2);
  EXPECT_NE(bad->JsonOut()["error"]["message"].get<std::string>().find("--metrics-listen"),
            std::string::npos)
      << bad->Stdout();
  // The tracker's own port is taken.
  auto taken = Run("taken", {"get", "x", "--tracker", url_, "-o", Dir("o").string(),
                             "--metrics-listen", "127.0.0.1:" + std::to_string(port_), "--json"});
  EXPECT_EQ(taken->Wait(30s), 2);
  EXPECT_NE(taken->Stderr().find("cannot listen on"), std::string::npos) << taken->Stderr();
}

}  // namespace
}  // namespace swarmcast::node::testing
