// swarmcast get NAME|INFOHASH --tracker URL -o DIR
#include <iostream>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/push_wiring.h"
#include "node/units.h"
#include "proto/metainfo.h"

namespace swarmcast::node::cli {

int RunGet(int argc, char** argv) {
  CommonFlags common;
  NetworkFlags net;
  TrackerFlags trk;
  std::string key, out, linger = "5m", stall = "10m";
  bool no_linger = false, torrent_urls = false;
  PushGetFlags push_flags;
  po::options_description d("Options");
  d.add_options()("swarm", po::value(&key)->required(), "registry name or 40-hex info-hash")(
      "output,o", po::value(&out)->required(), "directory to put the download in")(
      "linger", po::value(&linger)->default_value(linger),
      "after completing, keep serving others for at most this long (e.g. 90s, 5m); "
      "stops earlier once the tracker reports every peer done")(
      "no-linger", po::bool_switch(&no_linger), "exit as soon as the download is complete")(
      "allow-torrent-urls", po::bool_switch(&torrent_urls),
      "also use the trackers and web seeds the metainfo lists (default: only --tracker)")(
      "stall-timeout", po::value(&stall)->default_value(stall),
      "give up (exit 8) when no data arrived for this long; 0: wait forever");
  AddPushGetOptions(d, push_flags);
  AddTrackerOptions(d, trk);
  AddNetworkOptions(d, net);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("swarm", 1);
  po::variables_map vm;
  if (auto code = ParseArgs(
          argc, argv, d, pos, "swarmcast get NAME|INFOHASH --tracker URL -o DIR [OPTIONS]",
          "Fetches the swarm's metainfo from the tracker's registry, checks it\n"
          "(unsafe file names and sizes are refused; an info-hash given on the\n"
          "command line must match), and downloads into DIR. Data is written under\n"
          "DIR/.swarmcast/ and moved to DIR/NAME only when every piece has passed\n"
          "its hash check; run the same command again after a crash or kill and it\n"
          "resumes from the verified pieces. Then it lingers, serving others.",
          vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  if (no_linger && !vm["linger"].defaulted()) {
    log.Error("--linger and --no-linger exclude each other");
    return kExitUsage;
  }
  std::optional<std::chrono::milliseconds> linger_for;
  if (!no_linger) {
    auto l = ParseDuration(linger);
    if (!l) {
      log.Error(l.error());
      return kExitUsage;
    }
    linger_for = *l;
  }
  auto stall_for = ParseDuration(stall);
  if (!stall_for) {
    log.Error(stall_for.error());
    return kExitUsage;
  }
  if (!proto::IsValidSwarmName(key) && !proto::IsInfoHashHex(key)) {
    log.Error("'" + key + "' is neither a swarm name nor a 40-hex info-hash");
    return kExitUsage;
  }
  auto client = ToRegistryClient(trk, log);
  auto netopts = ToNetworkOptions(net, log);
  auto peers = ToPeerEndpoints(net, log);
  if (!client || !netopts || !peers) return kExitUsage;

  // Listed by `swarmcast status` from here until this command exits.
  StatusFile status(StateDir(),
                    {{"role", "get"},
                     {"name", key},
                     {"state", "fetching metainfo"},
                     {"path", std::filesystem::absolute(out).lexically_normal().string()}});
  // The info-hash comes from the command line, or from the registry's
  // record for the name; the metainfo is then fetched by that hash and
  // must hash to it.
  std::string info_hash = proto::IsInfoHashHex(key) ? key : std::string();
  std::string registry_push;  // the seed's push endpoint, if it has one
  if (!info_hash.empty() && !push_flags.no_push) {
    if (auto swarm = client->GetSwarm(info_hash)) registry_push = swarm->push;
  }
  if (info_hash.empty()) {
    auto swarm = client->GetSwarm(key);
    if (!swarm) {
      log.Error(ToString(swarm.error()));
      return ExitFor(swarm.error());
    }
    if (!proto::IsInfoHashHex(swarm->info_hash)) {
      log.Error("tracker: the registry record for '" + key + "' has no valid info-hash");
      return kExitTracker;
    }
    info_hash = swarm->info_hash;
    registry_push = swarm->push;
  }
  auto torrent = client->GetTorrent(info_hash);
  if (!torrent) {
    log.Error(ToString(torrent.error()));
    return ExitFor(torrent.error());
  }
  auto summary = proto::CheckMetainfo(*torrent);
  if (!summary) {
    log.Error("metainfo refused: " + summary.error());
    return kExitMetainfo;
  }

  TransferOptions t;
  t.role = TransferOptions::Role::kGet;
  t.torrent_bytes = std::move(*torrent);
  t.expected_info_hash = info_hash;
  t.dir = std::filesystem::absolute(out).lexically_normal();
  t.announce_url = client->url().AnnounceUrl();
  t.torrent_urls = torrent_urls;
  t.net = *netopts;
  t.peers = std::move(*peers);
  t.linger = linger_for;
  t.stall_timeout = *stall_for;
  // The poll runs on the control thread: keep its timeout short.
  RegistryClient poller(client->url(), std::chrono::seconds(2));
  t.swarm_complete = [&poller, info_hash] {
    auto view = poller.GetCompletion(info_hash);
    return view && view->AllDone();
  };
  t.log = log;
  t.progress = ChooseProgressMode(common);
  t.progress_interval = ProgressInterval(common);
  t.status = &status;
  GetPush push;
  WireGetPush(push_flags, registry_push, info_hash, TokenOf(trk), t, push, log);
  t.status_extra = [&push] { return nlohmann::json{{"push", GetPushJson(push)}}; };
  auto report = RunTransfer(t);
  if (!report) {
    log.Error(report.error().message);
    if (common.json) {
      std::cout << nlohmann::json({{"error", report.error().message}}).dump() << "\n";
    }
    return ExitFor(report.error());
  }
  if (common.json) {
    nlohmann::json j = ReportJson(*report);
    j["push"] = GetPushJson(push);
    std::cout << j.dump() << "\n";
  } else if (report->complete) {
    std::cout << report->path.string() << ": complete ("
              << FormatBytes(static_cast<double>(report->total_bytes)) << " in "
              << FormatSeconds(report->download_seconds) << ", "
              << FormatBytes(report->download_seconds > 0
                                 ? static_cast<double>(report->total_bytes) /
                                       report->download_seconds
                                 : 0)
              << "/s)\n";
  }
  return report->complete ? kExitOk : kExitInterrupted;
}

}  // namespace swarmcast::node::cli
