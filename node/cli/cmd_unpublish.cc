// swarmcast unpublish NAME --tracker URL
#include <iostream>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "proto/metainfo.h"

namespace swarmcast::node::cli {

int RunUnpublish(int argc, char** argv) {
  CommonFlags common;
  TrackerFlags trk;
  std::string name;
  po::options_description d("Options");
  d.add_options()("name", po::value(&name)->required(), "registry name to remove");
  AddTrackerOptions(d, trk);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  if (auto code = ParseArgs(
          argc, argv, d, pos, "swarmcast unpublish NAME --tracker URL [--token-file FILE]",
          "Removes NAME and its metainfo from the tracker's registry. Only the name's\n"
          "publisher may (the admin token that published it: --token-file, --token or\n"
          "$SWARMCAST_TOKEN). Peers already in the swarm keep trading until they leave;\n"
          "new gets of NAME fail. The name is free again afterwards.",
          vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  if (!CheckSwarmName(name, log)) return kExitUsage;
  auto client = ToRegistryClient(trk, log);
  auto retry = ToRetryPolicy(trk, log);
  if (!client || !retry) return kExitUsage;
  // A retry after a reply lost on the way gets 404: the name is gone either way.
  auto removed = WithRetries(*retry, log, "tracker", [&] { return client->Unpublish(name); });
  if (!removed) {
    log.Error(ToString(removed.error()));
    // The --json contract adds {"error": {code, kind, message}}; the HTTP
    // status tells a 401 (no or wrong token) from a 403 (not the owner).
    Output().SetResult({{"name", name}, {"http_status", removed.error().http_status}});
    return ExitFor(removed.error());
  }
  if (common.json) {
    Output().SetResult({{"name", name}, {"info_hash", removed->info_hash}, {"deleted", true}});
  } else {
    std::cout << "unpublished " << name << " (" << removed->info_hash << ") at "
              << client->url().ToString() << "\n";
  }
  return kExitOk;
}

}  // namespace swarmcast::node::cli
