// swarmcast-sim: predicts how long a swarmcast distribution takes, from a
// flow-level simulation (tools/sim/README.md). Prints text, or one JSON
// object with --json. Exit 0 on a finished simulation, 2 on bad options.
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <iostream>
#include <string>

#include "tools/sim/quantity.h"
#include "tools/sim/report.h"
#include "tools/sim/swarm.h"

namespace po = boost::program_options;
using swarmcast::sim::SimConfig;

namespace {

int Usage(const std::string& message) {
  std::cerr << "swarmcast-sim: " << message << " (try --help)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  SimConfig c;
  std::string file_size = "64MiB", piece_size = "0", chunk_size = "1MiB", link = "100Mbit",
              seed_link, slow_rate, socket_buffer = "256KiB", pick = "rarest-first", solve = "auto",
              verify_rate = "0";
  std::uint32_t racks = 0;
  bool json = false, per_node = false, no_push = false, no_end_game = false;
  po::options_description o("swarmcast-sim: a flow-level simulation of one swarmcast distribution");
  // clang-format off
  o.add_options()
    ("help,h", "this help")
    ("nodes,n", po::value(&c.receivers)->default_value(c.receivers), "receivers (the seed is one more node)")
    ("file-size", po::value(&file_size)->default_value(file_size), "file size: 64MiB, 10GB, ...")
    ("piece-size", po::value(&piece_size)->default_value(piece_size), "piece size; 0: the node's default (256-1024 pieces)")
    ("chunk-size", po::value(&chunk_size)->default_value(chunk_size), "push chunk size (one 18-byte header each)")
    ("link", po::value(&link)->default_value(link), "every receiver's link rate, each way: 100Mbit, 10Gbit, ...")
    ("seed-link", po::value(&seed_link), "the seed's link rate (default: --link)")
    ("slow-fraction", po::value(&c.slow_fraction)->default_value(c.slow_fraction), "fraction of receivers on a slow link (chosen at random)")
    ("slow-rate", po::value(&slow_rate), "the slow receivers' link rate (default: a tenth of --link)")
    ("seed-leaves-after-copies", po::value(&c.seed_leaves_after_copies)->default_value(0), "the seed leaves once the receivers hold this many copies or this many finished (0: stays)")
    ("racks", po::value(&racks)->default_value(0), "spread the nodes over this many racks (sets --rack-size)")
    ("rack-size", po::value(&c.rack_size)->default_value(0), "nodes per rack, seed included (0: one non-blocking LAN)")
    ("oversubscription", po::value(&c.oversubscription)->default_value(c.oversubscription), "a rack uplink carries rack-size x link / this, each way")
    ("no-push", po::bool_switch(&no_push), "BitTorrent only (swarmcast seed --no-push)")
    ("forward", po::bool_switch(&c.forward), "subscribers forward what the seed pushed them to each other (get --forward)")
    ("max-subscribers", po::value(&c.max_subscribers)->default_value(c.max_subscribers), "push subscribers the seed takes (PushSenderOptions)")
    ("push-socket-buffer", po::value(&socket_buffer)->default_value(socket_buffer), "pushed bytes a subscriber's socket holds beyond what arrived")
    ("push-window", po::value(&c.push_window)->default_value(0), "what-if: frames in flight to at most this many subscribers at once (0: all ready, as the sender does)")
    ("upload-slots", po::value(&c.upload_slots)->default_value(c.upload_slots), "BitTorrent uploads in flight per node (libtorrent's unchoke slots)")
    ("max-downloads", po::value(&c.max_downloads)->default_value(c.max_downloads), "BitTorrent fetches in flight per receiver (0: no cap)")
    ("piece-pick", po::value(&pick)->default_value(pick), "BitTorrent piece choice: rarest-first or random")
    ("rack-aware", po::bool_switch(&c.rack_aware), "BitTorrent peers in the same rack first (not what libtorrent does: a what-if)")
    ("no-end-game", po::bool_switch(&no_end_game), "BitTorrent without libtorrent's end game")
    ("unchoke-interval", po::value(&c.unchoke_interval)->default_value(c.unchoke_interval), "seconds an upload slot stays with one peer")
    ("tcp-efficiency", po::value(&c.tcp_efficiency)->default_value(c.tcp_efficiency), "TCP payload bytes per line byte")
    ("process-start", po::value(&c.process_start)->default_value(c.process_start), "seconds from launch to a running node")
    ("rtt", po::value(&c.rtt)->default_value(c.rtt), "LAN round trip, seconds")
    ("shared-host-start", po::value(&c.shared_host_start)->default_value(c.shared_host_start), "receivers share one host: start-up ends this many seconds x N after launch")
    ("verify-rate", po::value(&verify_rate)->default_value(verify_rate), "hash-check rate per node (bytes/s, e.g. 2GB; 0: instant)")
    ("solve-interval", po::value(&solve)->default_value(solve), "max-min re-solve interval in seconds: 0 exact, auto")
    ("rng-seed", po::value(&c.rng_seed)->default_value(c.rng_seed), "random seed (slow nodes, peer and piece choice)")
    ("json", po::bool_switch(&json), "print one JSON object")
    ("per-node", po::bool_switch(&per_node), "with --json: every receiver's time");
  // clang-format on
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, o), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    return Usage(e.what());
  }
  if (vm.count("help")) {
    std::cout << o
              << "\nExample: swarmcast-sim --nodes 1000 --file-size 10GB --link 10Gbit --json\n";
    return 0;
  }
  if (c.receivers < 1) return Usage("--nodes must be at least 1");
  auto size = swarmcast::sim::ParseSize(file_size);
  if (!size) return Usage(size.error());
  c.file_size = *size;
  if (piece_size != "0") {
    auto p = swarmcast::sim::ParseSize(piece_size);
    if (!p) return Usage(p.error());
    c.piece_size = *p;
  }
  auto chunk = swarmcast::sim::ParseSize(chunk_size);
  if (!chunk) return Usage(chunk.error());
  c.chunk_size = *chunk;
  auto rate = swarmcast::sim::ParseRate(link);
  if (!rate) return Usage(rate.error());
  c.link = *rate / 8;
  if (!seed_link.empty()) {
    auto r = swarmcast::sim::ParseRate(seed_link);
    if (!r) return Usage(r.error());
    c.seed_link = *r / 8;
  }
  auto buffer = swarmcast::sim::ParseSize(socket_buffer);
  if (!buffer) return Usage(buffer.error());
  c.push_socket_buffer = static_cast<double>(*buffer);
  if (!slow_rate.empty()) {
    auto r = swarmcast::sim::ParseRate(slow_rate);
    if (!r) return Usage(r.error());
    c.slow_link = *r / 8;
  }
  if (verify_rate != "0") {
    auto r = swarmcast::sim::ParseSize(verify_rate);
    if (!r) return Usage(r.error());
    c.verify_rate = static_cast<double>(*r);
  }
  if (c.slow_fraction < 0 || c.slow_fraction > 1) return Usage("--slow-fraction must be in [0, 1]");
  if (c.tcp_efficiency <= 0 || c.tcp_efficiency > 1)
    return Usage("--tcp-efficiency must be in (0, 1]");
  if (c.upload_slots < 1) return Usage("--upload-slots must be at least 1");
  if (racks > 0 && c.rack_size > 0) return Usage("give --racks or --rack-size, not both");
  if (racks > 0) c.rack_size = (c.receivers + racks) / racks;  // ceil((N + 1) / racks)
  if (c.rack_size > 0 && c.oversubscription < 1) return Usage("--oversubscription must be >= 1");
  if (pick == "rarest-first" || pick == "rarest") {
    c.pick = swarmcast::sim::PiecePick::kRarestFirst;
  } else if (pick == "random") {
    c.pick = swarmcast::sim::PiecePick::kRandom;
  } else {
    return Usage("--piece-pick is rarest-first or random");
  }
  if (solve != "auto") {
    try {
      c.solve_interval = std::stod(solve);
    } catch (const std::exception&) {
      return Usage("--solve-interval is a number of seconds or auto");
    }
    if (!(c.solve_interval >= 0)) return Usage("--solve-interval must be >= 0");
  }
  c.push = !no_push;
  c.end_game = !no_end_game;

  const auto start = std::chrono::steady_clock::now();
  const swarmcast::sim::SimResult result = swarmcast::sim::Swarm(c).Run();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (json) {
    std::cout << swarmcast::sim::ResultJson(c, result, wall, per_node).dump() << "\n";
  } else {
    std::cout << swarmcast::sim::ResultText(c, result, wall);
  }
  return 0;
}
