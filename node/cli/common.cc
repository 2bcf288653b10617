#include "node/cli/common.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "node/cli/json_output.h"
#include "node/cli/node_config.h"
#include "node/file_io.h"
#include "node/units.h"
#include "proto/metainfo.h"
#include "proto/token_text.h"

namespace swarmcast::node::cli {

const char kExitCodesHelp[] =
    "Exit codes:\n"
    "  0  success\n"
    "  1  unexpected internal failure\n"
    "  2  bad command line\n"
    "  3  tracker unreachable or refused (swarm not found, name taken or another\n"
    "     publisher's, missing or wrong token)\n"
    "  4  metainfo refused (unsafe file names, limits, info-hash mismatch)\n"
    "  5  storage error (target exists, disk full, read-only, I/O error)\n"
    "  6  interrupted (SIGINT/SIGTERM) before the download completed\n"
    "  7  network setup error (cannot listen, bad peer address)\n"
    "  8  stalled: no data arrived for --stall-timeout (the verified part is kept)\n"
    "  9  verification failed: the whole-file SHA-256 is not the pinned one (the\n"
    "     download is not moved into place)\n";

void AddCommonOptions(po::options_description& d, CommonFlags& f) {
  d.add_options()("help,h", "show this help")("json", po::bool_switch(&f.json),
                                              "print one JSON object on stdout when done")(
      "quiet,q", po::bool_switch(&f.quiet),
      "no progress and no notes on stderr, only warnings and errors")(
      "verbose,v", po::bool_switch(&f.verbose), "also log debug lines")(
      "progress-interval", po::value(&f.progress_interval)->default_value(f.progress_interval),
      "seconds between progress lines when stderr is not a terminal");
}

void AddNetworkOptions(po::options_description& d, NetworkFlags& f) {
  d.add_options()("listen", po::value(&f.listen)->default_value(f.listen),
                  "IP:PORT to accept peers on (PORT 0: any); outgoing connections use this IP")(
      "connect", po::value(&f.connect)->composing(),
      "IP:PORT of a peer to connect to directly, besides those the tracker gives (repeatable)")(
      "disk-io", po::value(&f.disk_io)->default_value(f.disk_io),
      "disk back-end: open-files (keeps each file open, hashes a piece as it is written in "
      "order), posix (libtorrent's: opens the file for each 16 KiB block) or mmap")(
      "max-download-rate", po::value(&f.max_download_rate)->default_value(f.max_download_rate),
      "bytes/s, e.g. 50MiB (0: unlimited)")(
      "max-upload-rate", po::value(&f.max_upload_rate)->default_value(f.max_upload_rate),
      "bytes/s (0: unlimited); a seed applies it to the BitTorrent wire and to its push "
      "channel each");
}

void AddTrackerOptions(po::options_description& d, TrackerFlags& f) {
  d.add_options()("tracker", po::value(&f.tracker),
                  "tracker base URL, e.g. http://10.0.0.1:6969 or https://tracker.lan:6969 "
                  "(default: $SWARMCAST_TRACKER, then the config file)")(
      "token", po::value(&f.token),
      "the tracker's token: an admin token to publish or unpublish, an announce or admin "
      "token for a private tracker (default: $SWARMCAST_TOKEN); visible in `ps`, prefer "
      "--token-file. A seed with a token pushes only to subscribers that present it, and a "
      "get presents it")(
      "token-file", po::value(&f.token_file),
      "read the token from this file (one token; blank lines and # comments skipped), e.g. "
      "the tracker's own DB.token on the tracker's host")(
      "timeout", po::value(&f.timeout)->default_value(f.timeout),
      "per-request tracker timeout (TLS handshake included); a get's retried requests start "
      "at 2s and double up to it")(
      "tracker-retry", po::value(&f.retry_for)->default_value(f.retry_for),
      "keep retrying a tracker that is unreachable, times out or is busy for this long, with "
      "growing randomized pauses (0: fail at the first error); refusals are not retried")(
      "ca-file", po::value(&f.ca_file),
      "https tracker: PEM file of the CAs to trust instead of the system's, for the registry "
      "and the BitTorrent announces alike");
}

std::optional<int> ParseArgs(int argc, char** argv, const po::options_description& d,
                             const po::positional_options_description& pos,
                             const std::string& usage, const std::string& about,
                             po::variables_map& vm) {
  try {
    po::store(po::command_line_parser(argc, argv).options(d).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "Usage: " << usage << "\n\n"
                << about << "\n\n"
                << d << "\n"
                << kConfigHelp << "\n"
                << kExitCodesHelp;
      return kExitOk;
    }
    // After --help, so that a broken config file does not hide the help.
    if (auto why = StoreEnvironmentAndConfig(argv[0], d, vm)) {
      Output().NoteError(*why);
      std::cerr << "swarmcast: " << *why << "\n";
      return kExitUsage;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    Output().NoteError(e.what());
    std::cerr << "swarmcast: " << e.what() << "\nUsage: " << usage << "\n(see --help)\n";
    return kExitUsage;
  }
  return std::nullopt;
}

std::optional<NetworkOptions> ToNetworkOptions(const NetworkFlags& f, const proto::Logger& log) {
  NetworkOptions n;
  auto listen = proto::ParseEndpoint(f.listen, {.allow_port_zero = true});
  if (!listen) {
    log.Error("--listen '" + f.listen + "': " + listen.error());
    return std::nullopt;
  }
  n.listen_ip = listen->host;
  n.listen_port = listen->port;
  if (f.disk_io == "open-files") {
    n.disk_io = DiskIo::kOpenFiles;
  } else if (f.disk_io == "posix") {
    n.disk_io = DiskIo::kPosix;
  } else if (f.disk_io == "mmap") {
    n.disk_io = DiskIo::kMmap;
  } else {
    log.Error("--disk-io must be open-files, posix or mmap");
    return std::nullopt;
  }
  auto down = ParseByteSize(f.max_download_rate);
  auto up = ParseByteSize(f.max_upload_rate);
  if (!down || !up) {
    log.Error(!down ? down.error() : up.error());
    return std::nullopt;
  }
  n.max_download_rate = *down;
  n.max_upload_rate = *up;
  return n;
}

std::optional<std::vector<proto::Endpoint>> ToPeerEndpoints(const NetworkFlags& f,
                                                            const proto::Logger& log) {
  std::vector<proto::Endpoint> peers;
  for (const std::string& c : f.connect) {
    auto e = proto::ParseEndpoint(c);
    if (!e) {
      log.Error("--connect '" + c + "': " + e.error());
      return std::nullopt;
    }
    peers.push_back(std::move(*e));
  }
  return peers;
}

std::optional<RegistryClient> ToRegistryClient(const TrackerFlags& f, const proto::Logger& log) {
  if (f.tracker.empty()) {
    log.Error("--tracker URL is required");
    return std::nullopt;
  }
  auto url = ParseTrackerUrl(f.tracker);
  if (!url) {
    log.Error(url.error());
    return std::nullopt;
  }
  auto timeout = ParseDuration(f.timeout);
  if (!timeout || timeout->count() == 0) {
    log.Error(timeout ? "--timeout must be above 0" : timeout.error());
    return std::nullopt;
  }
  if (!f.token.empty() && !f.token_file.empty()) {
    log.Error("give --token or --token-file, not both");
    return std::nullopt;
  }
  std::string token = f.token;
  if (!f.token_file.empty()) {
    auto text = ReadFileBounded(f.token_file, proto::kMaxTokenFileBytes);
    auto tokens = text ? proto::ParseTokenText(*text)
                       : Result<std::vector<std::string>, std::string>(Unexpected(text.error()));
    if (!tokens || tokens->size() != 1) {
      log.Error("--token-file " + f.token_file + ": " +
                (tokens ? "holds " + std::to_string(tokens->size()) + " tokens; want one"
                        : tokens.error()));
      return std::nullopt;
    }
    token = tokens->front();
  }
  if (!url->https) {
    if (!f.ca_file.empty()) {
      log.Error("--ca-file is for an https:// tracker; " + f.tracker + " is plain http");
      return std::nullopt;
    }
    return RegistryClient(*url, *timeout, token);
  }
  auto tls = MakeClientTlsContext(f.ca_file);
  if (!tls) {
    log.Error(tls.error());
    return std::nullopt;
  }
  UseCaFileForDefaultVerifyPaths(f.ca_file);
  return RegistryClient(*url, *timeout, token, std::move(*tls));
}

std::optional<RetryPolicy> ToRetryPolicy(const TrackerFlags& f, const proto::Logger& log) {
  auto retry_for = ParseDuration(f.retry_for);
  if (!retry_for) {
    log.Error("--tracker-retry: " + retry_for.error());
    return std::nullopt;
  }
  RetryPolicy p;
  p.retry_for = *retry_for;
  return p;
}

bool CheckSwarmName(const std::string& name, const proto::Logger& log, const std::string& hint) {
  if (proto::IsValidSwarmName(name)) return true;
  log.Error("'" + name + "' is not a valid swarm name (" + std::string(proto::kSwarmNameRule) +
            ")" + hint);
  return false;
}

std::string AnnounceToken(RegistryClient& client, const proto::Logger& log) {
  if (client.token().empty()) return {};
  auto priv = client.IsPrivate();
  if (!priv || !*priv) return {};
  // The tracker reads it from /announce/TOKEN, undecoded.
  if (client.token().find_first_of("/?&%# \t") != std::string::npos) {
    log.Warning(
        "the token cannot go in an announce URL (it holds / ? & % # or a blank): "
        "announces to this private tracker will be refused");
    return {};
  }
  return client.token();
}

ProgressMode ChooseProgressMode(const CommonFlags& f) {
  if (f.quiet) return ProgressMode::kNone;
  return ::isatty(STDERR_FILENO) ? ProgressMode::kBar : ProgressMode::kLines;
}

std::chrono::milliseconds ProgressInterval(const CommonFlags& f) {
  auto d = ParseDuration(f.progress_interval);
  if (!d || d->count() < 100) return std::chrono::milliseconds(5000);
  return *d;
}

std::filesystem::path StateDir() {
  if (const char* env = std::getenv("SWARMCAST_STATE_DIR"); env && *env) return env;
  if (const char* run = std::getenv("XDG_RUNTIME_DIR"); run && *run) {
    return std::filesystem::path(run) / "swarmcast";
  }
  return "/tmp/swarmcast-" + std::to_string(::getuid());
}

proto::Logger MakeLogger(const CommonFlags& f) {
  const auto level = f.verbose ? proto::LogLevel::kDebug
                     : f.quiet ? proto::LogLevel::kWarning
                               : proto::LogLevel::kInfo;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  if (f.json) Output().Enable();
  return proto::Logger(
      "swarmcast", level,
      [tty](std::string_view line) {
        // One write per line, so lines from two threads do not interleave.
        std::string out = tty ? "\r\033[K" : "";
        out += line;
        out += '\n';
        std::fwrite(out.data(), 1, out.size(), stderr);
      },
      [](proto::LogLevel level, std::string_view message) {
        if (level == proto::LogLevel::kError) Output().NoteError(message);
      });
}

int ExitFor(const RegistryError&) { return kExitTracker; }

int ExitFor(const TransferError& e) {
  switch (e.kind) {
    case TransferError::Kind::kMetainfo:
      return kExitMetainfo;
    case TransferError::Kind::kStorage:
      return kExitStorage;
    case TransferError::Kind::kNetwork:
      return kExitNetwork;
    case TransferError::Kind::kStalled:
      return kExitStalled;
    case TransferError::Kind::kVerification:
      return kExitVerification;
    case TransferError::Kind::kInternal:
      return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace swarmcast::node::cli

namespace swarmcast::node::cli {

HashProgress MakeHashProgress(const std::string& verb, const std::string& label,
                              std::int64_t bytes_total, const CommonFlags& f, StatusFile* status) {
  using Clock = std::chrono::steady_clock;
  const ProgressMode mode = ChooseProgressMode(f);
  const auto interval = ProgressInterval(f);
  const auto start = Clock::now();
  auto next = start;
  auto next_status = start;
  return [=](std::int64_t done, std::int64_t total) mutable {
    const auto now = Clock::now();
    if (status != nullptr && (now >= next_status || done == total)) {
      nlohmann::json j = status->last();
      j["state"] = verb;
      j["pieces_total"] = total;
      j["pieces_done"] = done;
      status->Update(std::move(j));
      next_status = now + std::chrono::seconds(2);
    }
    if (mode == ProgressMode::kNone || (now < next && done != total)) return;
    const double secs = std::chrono::duration<double>(now - start).count();
    const double frac = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    std::string rate;
    if (bytes_total > 0 && secs > 0) {
      rate = "  " + FormatBytes(frac * static_cast<double>(bytes_total) / secs) + "/s";
    }
    if (mode == ProgressMode::kBar) {
      std::fprintf(stderr, "\r%s %s: %5.1f%% (%lld/%lld pieces)%s\033[K%s", verb.c_str(),
                   label.c_str(), 100 * frac, static_cast<long long>(done),
                   static_cast<long long>(total), rate.c_str(), done == total ? "\n" : "");
      next = now + std::chrono::milliseconds(200);
    } else {
      std::fprintf(stderr, "%s %s: %5.1f%% (%lld/%lld pieces)%s\n", verb.c_str(), label.c_str(),
                   100 * frac, static_cast<long long>(done), static_cast<long long>(total),
                   rate.c_str());
      next = now + interval;
    }
  };
}

Result<BuiltMetainfo, std::string> HashWithProgress(BuildOptions options, const CommonFlags& f,
                                                    StatusFile* status) {
  const std::string label = options.path.filename().string();
  std::error_code ec;
  const auto bytes_total = std::filesystem::is_regular_file(options.path, ec)
                               ? std::filesystem::file_size(options.path, ec)
                               : 0;
  options.progress =
      MakeHashProgress("hashing", label, static_cast<std::int64_t>(bytes_total), f, status);
  auto built = BuildMetainfo(options);
  if (built) {
    const proto::Logger log = MakeLogger(f);
    if (built->hashes_from_cache) {
      log.Info("piece hashes of " + label + " reused from " + options.hash_cache_dir.string() +
               " (no file changed since they were computed; --rehash reads them again)");
    }
    if (!built->cache_warning.empty()) log.Warning(built->cache_warning);
  }
  return built;
}

}  // namespace swarmcast::node::cli

namespace swarmcast::node::cli {

// Fields that mean something for the role only: a seed downloads nothing
// and a get makes no copies, so neither reports a placeholder for them.
nlohmann::json ReportJson(const TransferReport& r) {
  nlohmann::json j = {{"name", r.name},
                      {"info_hash", r.info_hash},
                      {"path", r.path.string()},
                      {"end", ToString(r.end)},
                      {"size", r.total_bytes},
                      {"piece_length", r.piece_length},
                      {"pieces", r.pieces_total},
                      {"pieces_done", r.pieces_done},
                      {"uploaded_bytes", r.uploaded_bytes},
                      {"uploaded_wire_bytes", r.uploaded_wire_bytes},
                      {"uploaded_push_bytes", r.uploaded_push_bytes},
                      {"disk_errors", r.disk_errors},
                      {"total_seconds", r.total_seconds}};
  if (r.role == TransferOptions::Role::kSeed) {
    j["distributed_copies"] = r.distributed_copies;
    return j;
  }
  j["complete"] = r.complete;
  j["pieces_at_start"] = r.pieces_at_start;
  j["downloaded_bytes"] = r.downloaded_bytes;
  j["downloaded_wire_bytes"] = r.downloaded_wire_bytes;
  j["downloaded_push_bytes"] = r.downloaded_push_bytes;
  j["failed_bytes"] = r.failed_bytes;
  j["redundant_bytes"] = r.redundant_bytes;
  j["hash_failures"] = r.hash_failures;
  j["banned_peers"] = r.banned_peers;
  if (!r.sha256.empty()) {
    j["sha256"] = r.sha256;
    j["sha256_read_bytes"] = r.sha256_read_bytes;
    j["sha256_wait_seconds"] = r.sha256_wait_seconds;
  }
  if (r.complete) {  // how long the download took, once there is one
    j["download_seconds"] = r.download_seconds;
    j["download_rate"] =
        r.download_seconds > 0 ? static_cast<double>(r.total_bytes) / r.download_seconds : 0.0;
  }
  return j;
}

bool ApplyPieceSizeFlag(const std::string& flag, BuildOptions& b, const proto::Logger& log) {
  if (flag == "auto") return true;
  auto ps = ParseByteSize(flag);
  if (!ps) {
    log.Error(ps.error());
    return false;
  }
  b.piece_size = *ps;
  return true;
}

}  // namespace swarmcast::node::cli
