// swarmcast create PATH -o FILE.torrent
#include <iostream>
#include <nlohmann/json.hpp>

#include "node/cli/commands.h"
#include "node/cli/common.h"
#include "node/cli/json_output.h"
#include "node/file_io.h"
#include "node/hash_cache.h"
#include "node/units.h"

namespace swarmcast::node::cli {

int RunCreate(int argc, char** argv) {
  CommonFlags common;
  std::string path, out, piece_size = "auto", tracker, comment;
  bool hybrid = false, rehash = false;
  po::options_description d("Options");
  d.add_options()("path", po::value(&path)->required(), "file or directory to hash")(
      "output,o", po::value(&out)->required(), "where to write the .torrent")(
      "piece-size", po::value(&piece_size)->default_value(piece_size),
      "piece size, a power of two from 16KiB to 64MiB (auto: 256-1024 pieces of 64KiB-16MiB)")(
      "hybrid", po::bool_switch(&hybrid), "BitTorrent v1+v2 hybrid (default: v1 only)")(
      "tracker", po::value(&tracker), "tracker base URL to put in the announce list")(
      "comment", po::value(&comment), "free-text comment")("rehash", po::bool_switch(&rehash),
                                                           kRehashHelp);
  AddCommonOptions(d, common);
  po::positional_options_description pos;
  pos.add("path", 1);
  po::variables_map vm;
  if (auto code = ParseArgs(argc, argv, d, pos, "swarmcast create PATH -o FILE.torrent [OPTIONS]",
                            "Hashes PATH (using every core) into a metainfo file that stock\n"
                            "BitTorrent clients can read. Nothing is published or seeded.",
                            vm)) {
    return *code;
  }
  const proto::Logger log = MakeLogger(common);
  BuildOptions b;
  b.path = path;
  b.hybrid = hybrid;
  b.comment = comment;
  b.hash_cache_dir = DefaultHashCacheDir();
  b.rehash = rehash;
  if (!ApplyPieceSizeFlag(piece_size, b, log)) return kExitUsage;
  if (!tracker.empty()) {
    auto url = ParseTrackerUrl(tracker);
    if (!url) {
      log.Error(url.error());
      return kExitUsage;
    }
    b.announce_url = url->AnnounceUrl();
  }
  auto built = HashWithProgress(b, common);
  if (!built) {
    log.Error(built.error());
    return kExitStorage;
  }
  if (auto ec = WriteFileAtomically(out, built->bytes)) {
    log.Error("cannot write " + out + ": " + ec.message());
    return kExitStorage;
  }
  if (common.json) {
    nlohmann::json j = {{"path", out},
                        {"name", built->name},
                        {"info_hash", built->info_hash},
                        {"size", built->total_size},
                        {"piece_length", built->piece_length},
                        {"pieces", built->num_pieces},
                        {"files", built->num_files},
                        {"hybrid", hybrid},
                        {"hashes_from_cache", built->hashes_from_cache}};
    Output().SetResult(std::move(j));
  } else {
    std::cout << out << ": " << built->name << " " << built->info_hash << " ("
              << FormatBytes(static_cast<double>(built->total_size)) << ", " << built->num_pieces
              << " pieces of " << FormatBytes(static_cast<double>(built->piece_length)) << ")\n";
  }
  return kExitOk;
}

}  // namespace swarmcast::node::cli
