#include "node/agent/agent_service.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <random>

#include "node/file_io.h"
#include "node/registry_retry.h"
#include "node/units.h"

namespace swarmcast::node {
namespace {

using Json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// A failed fetch, or a seed that exited, is started again after this.
constexpr std::chrono::seconds kRetryAfter{30};
constexpr std::chrono::seconds kSeedRestartAfter{10};
// A child asked to stop (eviction, agent stopping) gets this long to save
// its resume data before SIGKILL.
constexpr std::chrono::seconds kStopGrace{15};

std::int64_t UnixNow() { return static_cast<std::int64_t>(std::time(nullptr)); }

// The last JSON object a child printed (its --json report), or null.
Json ChildReport(const std::filesystem::path& out) {
  auto text = ReadFileBounded(out, 1u << 20);
  if (!text) return Json();
  std::string_view t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
  const std::size_t nl = t.rfind('\n');
  Json j = Json::parse(t.substr(nl == std::string_view::npos ? 0 : nl + 1), nullptr, false);
  return j.is_object() ? j : Json();
}

std::string ErrorMessage(const Json& report, int code) {
  if (report.is_object() && report.contains("error") && report["error"].is_object()) {
    const Json& e = report["error"];
    if (e.contains("message") && e["message"].is_string()) {
      return e["message"].get<std::string>().substr(0, 480);
    }
  }
  return code < 0 ? "killed by signal " + std::to_string(-code)
                  : "exited with code " + std::to_string(code);
}

// The poll interval with +-20% jitter, so a fleet started at one instant
// does not keep syncing in step.
std::chrono::milliseconds Jittered(std::chrono::milliseconds poll) {
  static std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> f(0.8, 1.2);
  return std::chrono::milliseconds(
      static_cast<std::int64_t>(static_cast<double>(poll.count()) * f(rng)));
}

}  // namespace

AgentService::AgentService(AgentOptions options, RegistryClient client)
    : o_(std::move(options)), client_(std::move(client)) {}

AgentService::~AgentService() {
  if (lock_fd_ >= 0) close(lock_fd_);
}

std::filesystem::path AgentService::ContentDir(const std::string& hash) const {
  return o_.data_dir / "content" / hash;
}
std::filesystem::path AgentService::TorrentFile(const std::string& hash) const {
  return o_.data_dir / "content" / (hash + ".torrent");
}
std::filesystem::path AgentService::LogFile(const std::string& hash,
                                            const std::string& what) const {
  return o_.data_dir / "logs" / (hash + "." + what);
}

std::optional<std::string> AgentService::Open() {
  std::error_code ec;
  for (const char* sub : {"content", "logs", "state", "cache"}) {
    std::filesystem::create_directories(o_.data_dir / sub, ec);
    if (ec) return "cannot create " + (o_.data_dir / sub).string() + ": " + ec.message();
  }
  // The children's status files and hash cache: this user's only.
  std::filesystem::permissions(o_.data_dir / "state", std::filesystem::perms::owner_all, ec);
  std::filesystem::permissions(o_.data_dir / "cache", std::filesystem::perms::owner_all, ec);
  const std::filesystem::path lock = o_.data_dir / "agent.lock";
  lock_fd_ = open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (lock_fd_ < 0) return "cannot open " + lock.string() + ": " + std::strerror(errno);
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    return "another agent runs on " + o_.data_dir.string() + " (" + lock.string() + " is locked)";
  }
  std::size_t dropped = 0;
  auto ledger = LoadLedger(o_.data_dir / "agent-state.json", &dropped);
  if (!ledger) return ledger.error();
  if (dropped) {
    o_.log.Warning("dropped " + std::to_string(dropped) + " unreadable entries of the ledger");
  }
  ledger_ = std::move(*ledger);
  // A fetch that was running when the agent died resumes; what it had
  // verified is in its resume data under content/<hash>/.swarmcast.
  for (auto& [hash, e] : ledger_) {
    if (e.state == "fetching") o_.log.Info(e.name + " (" + hash + "): fetch resumes");
  }
  return std::nullopt;
}

void AgentService::Save() {
  if (auto ec = SaveLedger(o_.data_dir / "agent-state.json", ledger_)) {
    o_.log.Warning("cannot save the ledger: " + ec.message());
  }
}

bool AgentService::Sync() {
  AgentSyncRequest req;
  req.id = o_.id;
  req.labels = o_.labels;
  req.data_dir = o_.data_dir.string();
  req.poll_seconds = std::max<std::int64_t>(1, (o_.poll.count() + 999) / 1000);
  for (const auto& [hash, e] : ledger_) {
    if (!e.assigned) continue;
    req.reports.push_back({e.name, hash, e.state, e.reason, e.bytes});
  }
  auto assignments = SyncAgent(client_, req);
  if (!assignments) {
    o_.log.Warning("sync with the tracker: " + ToString(assignments.error()));
    ++counters_.sync_failures;
    return false;
  }
  ++counters_.syncs;
  ApplyAssignments(*assignments);
  return true;
}

void AgentService::ApplyAssignments(const std::vector<AgentAssignment>& assignments) {
  const std::int64_t now = UnixNow();
  std::map<std::string, const AgentAssignment*> wanted;
  for (const AgentAssignment& a : assignments) wanted[a.info_hash] = &a;
  bool changed = false;
  std::vector<std::string> dropped;
  for (auto& [hash, e] : ledger_) {
    const bool now_assigned = wanted.count(hash) > 0;
    if (e.assigned && !now_assigned) {
      o_.log.Info(e.name + " (" + hash + ") is no longer assigned" +
                  (e.state == "done" ? ": kept seeded until its room is needed" : ""));
      e.assigned = false;
      changed = true;
      // Unfinished content is not worth keeping: nothing can be seeded.
      if (e.state != "done") dropped.push_back(hash);
    }
  }
  for (const std::string& hash : dropped) Evict(hash, "unassigned before it was complete");
  if (changed) {
    // Room may have been freed: what waited for the quota tries again now.
    for (auto& [hash, e] : ledger_) {
      if (e.state == "failed" && e.reason.rfind("quota", 0) == 0) retry_at_.erase(hash);
    }
  }
  for (const auto& [hash, a] : wanted) {
    auto it = ledger_.find(hash);
    if (it == ledger_.end()) {
      if (ledger_.size() >= kMaxLedgerEntries) continue;
      LedgerEntry e;
      e.name = a->name;
      e.size = a->size;
      e.last_used = now;
      ledger_[hash] = e;
      o_.log.Info("assigned " + a->name + " (" + hash + ", " +
                  FormatBytes(static_cast<double>(a->size)) + ")");
      changed = true;
      continue;
    }
    LedgerEntry& e = it->second;
    if (!e.assigned || e.name != a->name) changed = true;
    e.assigned = true;
    e.name = a->name;
    // Written with the next change rather than on every sync.
    e.last_used = now;
  }
  if (changed) Save();
}

void AgentService::Evict(const std::string& hash, const std::string& why) {
  auto seed = seeds_.find(hash);
  if (seed != seeds_.end()) {
    seed->second->Stop(kStopGrace);
    seeds_.erase(seed);
  }
  if (fetching_ == hash && fetch_) {
    fetch_->Stop(kStopGrace);
    fetch_.reset();
    fetching_.clear();
  }
  std::error_code ec;
  std::filesystem::remove_all(ContentDir(hash), ec);
  if (ec) o_.log.Warning("cannot remove " + ContentDir(hash).string() + ": " + ec.message());
  std::filesystem::remove(TorrentFile(hash), ec);
  auto it = ledger_.find(hash);
  if (it != ledger_.end()) {
    o_.log.Info("evicted " + it->second.name + " (" + hash + "): " + why);
    ledger_.erase(it);
    ++counters_.evictions;
  }
  retry_at_.erase(hash);
  Save();
}

void AgentService::FinishFetch(int code) {
  const std::string hash = fetching_;
  const Json report = ChildReport(fetch_->out_file());
  fetch_.reset();
  fetching_.clear();
  auto it = ledger_.find(hash);
  if (it == ledger_.end()) return;
  LedgerEntry& e = it->second;
  if (code == 0 && report.value("complete", false)) {
    ++counters_.fetches_done;
    e.state = "done";
    e.reason.clear();
    e.bytes = e.size = report.value("total_bytes", e.size);
    e.file_name = report.value("name", e.file_name);
    e.pieces_at_start = report.value("pieces_at_start", std::int64_t{0});
    e.downloaded_bytes = report.value("downloaded_bytes", std::int64_t{0});
    o_.log.Info("fetched " + e.name + " (" + hash + ")" +
                (e.pieces_at_start > 0
                     ? ", resumed with " + std::to_string(e.pieces_at_start) + " pieces verified"
                     : std::string()));
  } else {
    ++counters_.fetches_failed;
    e.state = "failed";
    e.reason = "get: " + ErrorMessage(report, code);
    retry_at_[hash] = SteadyClock::now() + kRetryAfter;
    o_.log.Warning("fetching " + e.name + " (" + hash + ") failed: " + e.reason +
                   "; retried in 30 s");
  }
  Save();
}

void AgentService::StartFetch() {
  const auto now = SteadyClock::now();
  for (auto& [hash, e] : ledger_) {
    if (!e.assigned || e.state == "done") continue;
    auto retry = retry_at_.find(hash);
    if (retry != retry_at_.end() && retry->second > now) continue;
    auto plan = PlanEviction(ledger_, hash, e.size, o_.quota);
    if (!plan) {
      const std::string why = "quota: needs " + FormatBytes(static_cast<double>(e.size)) +
                              ", and the assigned content already holds " +
                              FormatBytes(static_cast<double>(LedgerBytes(ledger_) - e.size)) +
                              " of " + FormatBytes(static_cast<double>(o_.quota));
      if (e.state != "failed" || e.reason != why) {
        o_.log.Warning(e.name + " (" + hash + "): " + why);
        e.state = "failed";
        e.reason = why;
        Save();
      }
      retry_at_[hash] = now + kRetryAfter;
      continue;
    }
    const std::string name = e.name;  // Evict may rebalance the map, not erase `hash`
    for (const std::string& victim : *plan) {
      Evict(victim, "least recently used, to make room for " + name);
    }
    LedgerEntry& entry = ledger_.at(hash);
    std::vector<std::string> args = {"get",
                                     hash,
                                     "-o",
                                     ContentDir(hash).string(),
                                     "--save-torrent",
                                     TorrentFile(hash).string(),
                                     "--no-linger",
                                     "--json",
                                     "--progress-interval",
                                     "1s"};
    args.insert(args.end(), o_.child_args.begin(), o_.child_args.end());
    auto child =
        ChildProcess::Start(args, o_.child_env, LogFile(hash, "get.out"), LogFile(hash, "get.err"));
    if (!child) {
      entry.state = "failed";
      entry.reason = child.error();
      retry_at_[hash] = now + kRetryAfter;
      Save();
      return;
    }
    o_.log.Info("fetching " + name + " (" + hash + "), pid " + std::to_string((*child)->pid()));
    fetch_ = std::move(*child);
    fetching_ = hash;
    ++counters_.fetches_started;
    entry.state = "fetching";
    entry.reason.clear();
    Save();
    return;  // one fetch at a time: the disk and the link are shared
  }
}

void AgentService::KeepSeeded() {
  const auto now = SteadyClock::now();
  for (auto it = seeds_.begin(); it != seeds_.end();) {
    auto code = it->second->Poll();
    if (!code) {
      ++it;
      continue;
    }
    const std::string hash = it->first;
    const Json report = ChildReport(it->second->out_file());
    it = seeds_.erase(it);
    auto e = ledger_.find(hash);
    if (e == ledger_.end()) continue;
    if (*code == 5) {
      // The data on disk no longer matches (changed or removed under the
      // agent): fetch it again if it is still wanted.
      o_.log.Warning(e->second.name + " (" + hash + "): seed refused the data on disk (" +
                     ErrorMessage(report, *code) + ")");
      if (!e->second.assigned) {
        Evict(hash, "its data on disk is damaged");
        continue;
      }
      std::error_code ec;
      std::filesystem::remove_all(ContentDir(hash), ec);
      e->second.state = "pending";
      e->second.bytes = 0;
      Save();
      continue;
    }
    o_.log.Warning("seed of " + e->second.name + " (" + hash + ") " + ErrorMessage(report, *code) +
                   "; restarted in 10 s");
    retry_at_[hash] = now + kSeedRestartAfter;
  }
  for (auto& [hash, e] : ledger_) {
    if (e.state != "done" || e.file_name.empty() || seeds_.count(hash)) continue;
    auto retry = retry_at_.find(hash);
    if (retry != retry_at_.end() && retry->second > now) continue;
    std::vector<std::string> args = {"seed",
                                     (ContentDir(hash) / e.file_name).string(),
                                     "--torrent",
                                     TorrentFile(hash).string(),
                                     "--name",
                                     e.name,
                                     "--no-publish",
                                     "--json",
                                     "--progress-interval",
                                     "30s"};
    args.insert(args.end(), o_.child_args.begin(), o_.child_args.end());
    auto child = ChildProcess::Start(args, o_.child_env, LogFile(hash, "seed.out"),
                                     LogFile(hash, "seed.err"));
    if (!child) {
      o_.log.Warning("cannot start the seed of " + e.name + ": " + child.error());
      retry_at_[hash] = now + kSeedRestartAfter;
      continue;
    }
    o_.log.Info("seeding " + e.name + " (" + hash + "), pid " + std::to_string((*child)->pid()));
    seeds_[hash] = std::move(*child);
  }
}

void AgentService::Step() {
  if (fetch_) {
    if (auto code = fetch_->Poll()) {
      FinishFetch(*code);
    } else if (auto e = ledger_.find(fetching_); e != ledger_.end()) {
      // The get's own status file says how far it is.
      auto text = ReadFileBounded(o_.data_dir / "state" / (std::to_string(fetch_->pid()) + ".json"),
                                  64 * 1024);
      if (text) {
        Json j = Json::parse(*text, nullptr, false);
        if (j.is_object() && j.contains("done_bytes") && j["done_bytes"].is_number_integer()) {
          e->second.bytes = std::max<std::int64_t>(0, j["done_bytes"].get<std::int64_t>());
        }
      }
    }
  }
  if (!fetch_) StartFetch();
  KeepSeeded();
}

int AgentService::Run() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  sigprocmask(SIG_BLOCK, &stop, nullptr);
  const int sfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    o_.log.Error(std::string("signalfd: ") + std::strerror(errno));
    return 1;
  }
  o_.log.Info("agent " + o_.id + " on " + o_.data_dir.string() + " (labels " +
              (o_.labels.empty() ? std::string("none") : proto::FormatLabels(o_.labels)) +
              ", quota " +
              (o_.quota > 0 ? FormatBytes(static_cast<double>(o_.quota)) : std::string("none")) +
              ") syncing with " + client_.url().ToString() + " every " +
              std::to_string(o_.poll.count()) + " ms");
  // Retries of a failing tracker: capped, jittered, and never giving up
  // (a long-running service waits for its tracker).
  RetryPolicy policy;
  policy.retry_for = std::chrono::hours(24 * 365);
  policy.first_delay = std::chrono::milliseconds(500);
  policy.max_delay = std::max<std::chrono::milliseconds>(o_.poll, std::chrono::seconds(30));
  std::optional<Backoff> backoff;
  auto next_sync = SteadyClock::now();
  bool was_failing = false;
  for (;;) {
    auto now = SteadyClock::now();
    if (now >= next_sync) {
      if (Sync()) {
        if (was_failing) o_.log.Info("tracker reachable again");
        was_failing = false;
        backoff.reset();
        next_sync = SteadyClock::now() + Jittered(o_.poll);
      } else {
        was_failing = true;
        if (!backoff) backoff.emplace(policy);
        next_sync = SteadyClock::now() + backoff->Next().value_or(policy.max_delay);
      }
    }
    Step();
    if (metrics_) {
      metrics_->Publish(RenderAgentMetrics(
          {o_.id, o_.quota, fetch_ != nullptr, seeds_.size(), counters_}, ledger_));
    }
    now = SteadyClock::now();
    const auto wait = std::clamp<std::int64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(next_sync - now).count(), 0, 500);
    pollfd p{sfd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(wait)) > 0) {
      signalfd_siginfo si{};
      if (read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        o_.log.Info("signal " + std::to_string(si.ssi_signo) + ": stopping the transfers");
        break;
      }
    }
  }
  if (fetch_) {
    fetch_->Stop(kStopGrace);
    fetch_.reset();
  }
  for (auto& [hash, s] : seeds_) s->Stop(kStopGrace);
  seeds_.clear();
  Save();
  close(sfd);
  return 0;
}

Json AgentService::Summary() const {
  Json entries = Json::array();
  for (const auto& [hash, e] : ledger_) {
    entries.push_back({{"info_hash", hash},
                       {"name", e.name},
                       {"state", e.state},
                       {"reason", e.reason},
                       {"bytes", e.bytes},
                       {"size", e.size},
                       {"assigned", e.assigned},
                       {"last_used", e.last_used},
                       {"pieces_at_start", e.pieces_at_start},
                       {"downloaded_bytes", e.downloaded_bytes}});
  }
  Json labels = Json::object();
  for (const auto& [k, v] : o_.labels) labels[k] = v;
  return {{"agent", o_.id},    {"data_dir", o_.data_dir.string()}, {"labels", std::move(labels)},
          {"quota", o_.quota}, {"bytes", LedgerBytes(ledger_)},    {"entries", std::move(entries)}};
}

}  // namespace swarmcast::node
