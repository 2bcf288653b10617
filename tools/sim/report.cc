#include "tools/sim/report.h"

#include <cstdio>

namespace swarmcast::sim {

namespace {
// The time the file takes through one receiver's link at TCP's payload
// rate: the bound no receiver can beat.
double LimitSeconds(const SimConfig& c) {
  return static_cast<double>(c.file_size) / (c.link * c.tcp_efficiency);
}
}  // namespace

nlohmann::json ResultJson(const SimConfig& c, const SimResult& r, double wall_seconds,
                          bool per_node) {
  const double limit = LimitSeconds(c);
  nlohmann::json j = {
      {"schema", 1},
      {"config",
       {{"receivers", c.receivers},
        {"file_size", c.file_size},
        {"piece_size", r.piece_size},
        {"pieces", r.pieces},
        {"chunk_size", c.chunk_size},
        {"link_bps", c.link * 8},
        {"seed_link_bps", (c.seed_link > 0 ? c.seed_link : c.link) * 8},
        {"slow_fraction", c.slow_fraction},
        {"slow_link_bps", (c.slow_link > 0 ? c.slow_link : c.link / 10) * 8},
        {"tcp_efficiency", c.tcp_efficiency},
        {"rack_size", c.rack_size},
        {"oversubscription", c.oversubscription},
        {"rack_aware", c.rack_aware},
        {"push", c.push},
        {"forward", c.forward},
        {"max_subscribers", c.max_subscribers},
        {"push_socket_buffer", c.push_socket_buffer},
        {"push_window", c.push_window},
        {"upload_slots", c.upload_slots},
        {"max_downloads", c.max_downloads},
        {"piece_pick", c.pick == PiecePick::kRarestFirst ? "rarest-first" : "random"},
        {"seed_leaves_after_copies", c.seed_leaves_after_copies},
        {"verify_rate", c.verify_rate},
        {"solve_interval_s", r.solve_interval},
        {"rng_seed", c.rng_seed}}},
      {"startup_s", r.startup},
      {"first_piece_s", r.first_piece},
      {"limit_s", limit},
      {"time_s",
       {{"first", r.first},
        {"p50", r.p50},
        {"p99", r.p99},
        {"last", r.last},
        {"last_over_limit", limit > 0 ? r.last / limit : 0}}},
      {"unfinished", r.unfinished},
      {"bytes",
       {{"push", r.bytes.push},
        {"push_forwarded", r.bytes.push_forwarded},
        {"bittorrent_from_seed", r.bytes.bt_from_seed},
        {"bittorrent_from_peers", r.bytes.bt_from_peers},
        {"duplicate", r.bytes.duplicate},
        {"cut", r.bytes.cut},
        {"framing", r.bytes.framing},
        {"seed_upload", r.seed_upload},
        {"seed_upload_copies", r.seed_upload / static_cast<double>(c.file_size)},
        {"push_written", r.bytes.push_written},
        {"seed_written_copies", r.seed_written / static_cast<double>(c.file_size)}}},
      {"seed_left_at_s", r.seed_left_at >= 0 ? nlohmann::json(r.seed_left_at) : nlohmann::json()},
      {"push",
       {{"subscribers", r.subscribers},
        {"forwarders", r.forwarders},
        {"batches", r.push_batches},
        {"batch_targets", r.push_batch_targets}}},
      {"sim",
       {{"flow_events", r.flow_events},
        {"timed_events", r.timed_events},
        {"solves", r.solves},
        {"wall_s", wall_seconds}}},
  };
  if (per_node) j["done_s"] = r.done;
  return j;
}

std::string ResultText(const SimConfig& c, const SimResult& r, double wall_seconds) {
  const double limit = LimitSeconds(c);
  char buf[1024];
  std::snprintf(
      buf, sizeof buf,
      "%u receivers, %u pieces of %lld bytes; limit %.3f s (size / TCP payload rate)\n"
      "time to all: %.3f s (%.2fx limit); first %.3f, p50 %.3f, p99 %.3f%s; first piece at %.3f\n"
      "bytes: push %.4g, forwarded %.4g, BitTorrent from seed %.4g, peer to peer %.4g, duplicate "
      "%.4g, cut %.4g; seed sent %.2f copies%s\n"
      "simulated in %.2f s wall (%llu flow events, %llu solves, interval %.3g s)\n",
      r.receivers, r.pieces, static_cast<long long>(r.piece_size), limit, r.last,
      limit > 0 ? r.last / limit : 0, r.first, r.p50, r.p99,
      r.unfinished ? (", " + std::to_string(r.unfinished) + " never finished").c_str() : "",
      r.first_piece, r.bytes.push, r.bytes.push_forwarded, r.bytes.bt_from_seed,
      r.bytes.bt_from_peers, r.bytes.duplicate, r.bytes.cut,
      r.seed_upload / static_cast<double>(c.file_size),
      r.seed_left_at >= 0 ? (", left at " + std::to_string(r.seed_left_at) + " s").c_str() : "",
      wall_seconds, static_cast<unsigned long long>(r.flow_events),
      static_cast<unsigned long long>(r.solves), r.solve_interval);
  return buf;
}

}  // namespace swarmcast::sim
