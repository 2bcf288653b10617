// Unit: the Prometheus text the node serves (node/metrics_text.h,
// node/node_metrics.h): escaping, exact integers, every family present.
#include "node/node_metrics.h"

#include <gtest/gtest.h>

#include "node/metrics_text.h"

namespace swarmcast::node {
namespace {

TEST(MetricsText, FamiliesLabelsAndEscaping) {
  MetricsText m;
  m.Family("x_total", MetricsText::Type::kCounter, "Help with \\ and\nnewline.");
  m.Sample({{"a", "q\"uote"}, {"b", "back\\slash\nnl"}}, 3);
  m.Family("y", MetricsText::Type::kGauge, "Y.");
  m.Sample(0.5);
  EXPECT_EQ(m.text(),
            "# HELP x_total Help with \\\\ and\\nnewline.\n"
            "# TYPE x_total counter\n"
            "x_total{a=\"q\\\"uote\",b=\"back\\\\slash\\nnl\"} 3\n"
            "# HELP y Y.\n"
            "# TYPE y gauge\n"
            "y 0.5\n");
}

TEST(MetricsText, LargeCountersPrintExactly) {
  MetricsText m;
  m.Family("b_total", MetricsText::Type::kCounter, "B.");
  m.Sample(static_cast<double>(std::int64_t{8} << 40));  // 8 TiB
  EXPECT_NE(m.text().find("b_total 8796093022208\n"), std::string::npos) << m.text();
}

TEST(NodeMetrics, RendersTheSnapshot) {
  NodeMetrics metrics;
  NodeSample s;
  s.role = "seed";
  s.state = "seeding";
  s.name = "disk.img";
  s.info_hash = std::string(40, 'a');
  s.pieces_total = 10;
  s.pieces_have = 10;
  s.out_wire_bytes = 123;
  s.out_push_bytes = 4567;
  s.push = true;
  s.fanout_backend = "splice";
  s.fanout_calls = 7;
  s.fanout_sockets = 21;
  s.push_subscribers = 3;
  metrics.Publish(s);
  const std::string t = metrics.Render();
  for (const char* want : {
           "swarmcast_node_info{role=\"seed\",name=\"disk.img\",info_hash=\"aaaa",
           "swarmcast_node_state{state=\"seeding\"} 1\n",
           "swarmcast_node_state{state=\"downloading\"} 0\n",
           "swarmcast_node_payload_bytes_total{direction=\"out\",path=\"wire\"} 123\n",
           "swarmcast_node_payload_bytes_total{direction=\"out\",path=\"push\"} 4567\n",
           "swarmcast_node_pieces 10\n",
           "swarmcast_node_pieces_have 10\n",
           "swarmcast_node_push_subscribers 3\n",
           "swarmcast_node_fanout_calls_total{backend=\"splice\"} 7\n",
           "swarmcast_node_fanout_sockets_total{backend=\"splice\"} 21\n",
           "swarmcast_node_disk_errors_total 0\n",
           "swarmcast_node_hash_failures_total 0\n",
           "# TYPE swarmcast_node_peers gauge\n",
       }) {
    EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
  }
  // A get has no fan-out of its own.
  s.role = "get";
  metrics.Publish(s);
  EXPECT_EQ(metrics.Render().find("swarmcast_node_fanout_calls_total"), std::string::npos);
}

}  // namespace
}  // namespace swarmcast::node
