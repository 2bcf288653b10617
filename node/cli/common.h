// What every `swarmcast` subcommand shares: exit codes, option groups,
// output helpers. Commands run on the main thread; RunTransfer makes it the
// control thread.
#pragma once

#include <boost/program_options.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "node/metainfo_builder.h"
#include "node/registry_client.h"
#include "node/registry_retry.h"
#include "node/status_file.h"
#include "node/transfer.h"
#include "proto/log.h"

namespace swarmcast::node::cli {

namespace po = boost::program_options;

// Documented in `swarmcast --help` and node/README.md.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       // unexpected internal failure
  kExitUsage = 2,         // bad command line
  kExitTracker = 3,       // tracker unreachable, swarm not found, name taken
  kExitMetainfo = 4,      // metainfo refused (unsafe paths, limits, hash mismatch)
  kExitStorage = 5,       // target exists, disk full, read-only, I/O error
  kExitInterrupted = 6,   // SIGINT/SIGTERM before the download completed
  kExitNetwork = 7,       // cannot listen, bad peer address
  kExitStalled = 8,       // no progress for --stall-timeout
  kExitVerification = 9,  // whole-file SHA-256 is not the pinned one
};

extern const char kExitCodesHelp[];

// Options every command takes.
struct CommonFlags {
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  std::string progress_interval = "5s";
};
void AddCommonOptions(po::options_description& d, CommonFlags& f);

// --listen, --connect, --disk-io, rate limits.
struct NetworkFlags {
  std::string listen = "0.0.0.0:0";
  std::vector<std::string> connect;
  std::string disk_io = "open-files";
  std::string max_download_rate = "0";
  std::string max_upload_rate = "0";
};
void AddNetworkOptions(po::options_description& d, NetworkFlags& f);

// --tracker, --token, --token-file, --timeout, --tracker-retry, --ca-file.
// The token goes to the registry with every call; on the push channel it
// is the HELLO token a seed requires and a get presents
// (node/push_wiring.h).
struct TrackerFlags {
  std::string tracker;
  std::string token;
  std::string token_file;
  std::string timeout = "10s";
  std::string retry_for = "5m";
  std::string ca_file;  // https: trust only these CAs (default: the system's)
};
void AddTrackerOptions(po::options_description& d, TrackerFlags& f);

// Parses argv (after the subcommand) into `d`; prints help and returns
// kExitOk when --help was given, or an error and kExitUsage. nullopt: go on.
std::optional<int> ParseArgs(int argc, char** argv, const po::options_description& d,
                             const po::positional_options_description& pos,
                             const std::string& usage, const std::string& about,
                             po::variables_map& vm);

// Each returns nullopt after printing why (exit with kExitUsage).
std::optional<NetworkOptions> ToNetworkOptions(const NetworkFlags& f, const proto::Logger& log);
std::optional<std::vector<proto::Endpoint>> ToPeerEndpoints(const NetworkFlags& f,
                                                            const proto::Logger& log);
// The client carries the token of --token, else of --token-file (the
// tracker's token file format, exactly one token), else $SWARMCAST_TOKEN.
// For an https:// tracker also makes the TLS context, and with --ca-file
// points OpenSSL's default verify paths at it for libtorrent's announces
// (UseCaFileForDefaultVerifyPaths): call it before any thread starts.
std::optional<RegistryClient> ToRegistryClient(const TrackerFlags& f, const proto::Logger& log);
// --tracker-retry as a policy; nullopt after printing why.
std::optional<RetryPolicy> ToRetryPolicy(const TrackerFlags& f, const proto::Logger& log);

// False, with the rule logged (and `hint` after it), when `name` is not a
// valid registry name (proto::IsValidSwarmName).
bool CheckSwarmName(const std::string& name, const proto::Logger& log,
                    const std::string& hint = "");
// What a seed's or get's announces carry: the client's token when the
// tracker is private (it asks /healthz), else nothing, so a token is not
// put in URLs that do not need it.
std::string AnnounceToken(RegistryClient& client, const proto::Logger& log);
ProgressMode ChooseProgressMode(const CommonFlags& f);
std::chrono::milliseconds ProgressInterval(const CommonFlags& f);

// Where running transfers publish their status files (node/status_file.h).
std::filesystem::path StateDir();

// The command's logger: "swarmcast: ..." lines on stderr, at info level
// (-v: debug, -q: warnings and errors only). On a terminal each line first
// clears the progress bar's line; the bar redraws at its next tick.
proto::Logger MakeLogger(const CommonFlags& f);
int ExitFor(const RegistryError& e);
int ExitFor(const TransferError& e);

// Progress of hashing `label` (`verb`: "hashing", "checking") as a bar or
// lines on stderr (per CommonFlags) and in `status` (may be null).
using HashProgress = std::function<void(std::int64_t done, std::int64_t total)>;
HashProgress MakeHashProgress(const std::string& verb, const std::string& label,
                              std::int64_t bytes_total, const CommonFlags& f, StatusFile* status);

// BuildMetainfo with a progress bar / lines on stderr (per CommonFlags),
// and the hashing progress in `status` (may be null).
Result<BuiltMetainfo, std::string> HashWithProgress(BuildOptions options, const CommonFlags& f,
                                                    StatusFile* status = nullptr);

// --rehash on create and seed.
inline constexpr const char* kRehashHelp =
    "hash every piece again instead of reusing the hashes kept from an earlier run on the same, "
    "unchanged files (same path, size, inode, mtime and ctime; kept in "
    "$SWARMCAST_CACHE_DIR, $XDG_CACHE_HOME/swarmcast or ~/.cache/swarmcast)";

// Applies a --piece-size flag ("auto" or a size such as 1MiB) to `b`;
// false after printing why.
bool ApplyPieceSizeFlag(const std::string& flag, BuildOptions& b, const proto::Logger& log);

// The fields of a TransferReport, as `--json` prints them.
nlohmann::json ReportJson(const TransferReport& r);

}  // namespace swarmcast::node::cli
