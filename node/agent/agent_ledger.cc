#include "node/agent/agent_ledger.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "node/file_io.h"
#include "proto/metainfo.h"

namespace swarmcast::node {
namespace {

using Json = nlohmann::json;

bool ValidState(const std::string& s) {
  return s == "pending" || s == "fetching" || s == "done" || s == "failed";
}

// A file name as CheckMetainfo allows it: one path part.
bool ValidFileName(const std::string& n) {
  return n.empty() || (n != "." && n != ".." && n.find('/') == std::string::npos &&
                       n.find('\0') == std::string::npos && n.size() <= 255);
}

}  // namespace

Result<Ledger, std::string> LoadLedger(const std::filesystem::path& file, std::size_t* dropped) {
  Ledger ledger;
  if (dropped) *dropped = 0;
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(file, ec))) return ledger;
  auto text = ReadFileBounded(file, 4u << 20);
  if (!text) return Unexpected(text.error());
  Json j = Json::parse(*text, nullptr, false);
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_object()) {
    return Unexpected(file.string() + " is not an agent ledger (want {\"entries\": {...}})");
  }
  for (const auto& [hash, e] : j["entries"].items()) {
    LedgerEntry x;
    bool ok = proto::IsInfoHashHex(hash) && e.is_object() && ledger.size() < kMaxLedgerEntries;
    if (ok) {
      x.name = e.value("name", "");
      x.file_name = e.value("file_name", "");
      x.size = e.value("size", std::int64_t{-1});
      x.state = e.value("state", "");
      x.reason = e.value("reason", "").substr(0, 512);
      x.bytes = e.value("bytes", std::int64_t{0});
      x.last_used = e.value("last_used", std::int64_t{0});
      x.assigned = e.value("assigned", false);
      x.pieces_at_start = e.value("pieces_at_start", std::int64_t{0});
      x.downloaded_bytes = e.value("downloaded_bytes", std::int64_t{0});
      ok = proto::IsValidSwarmName(x.name) && ValidFileName(x.file_name) && x.size >= 0 &&
           ValidState(x.state) && x.bytes >= 0;
    }
    if (!ok) {
      if (dropped) ++*dropped;
      continue;
    }
    ledger[hash] = std::move(x);
  }
  return ledger;
}

std::error_code SaveLedger(const std::filesystem::path& file, const Ledger& ledger) {
  Json entries = Json::object();
  for (const auto& [hash, x] : ledger) {
    entries[hash] = {{"name", x.name},
                     {"file_name", x.file_name},
                     {"size", x.size},
                     {"state", x.state},
                     {"reason", x.reason},
                     {"bytes", x.bytes},
                     {"last_used", x.last_used},
                     {"assigned", x.assigned},
                     {"pieces_at_start", x.pieces_at_start},
                     {"downloaded_bytes", x.downloaded_bytes}};
  }
  Json j{{"schema", 1}, {"entries", std::move(entries)}};
  return WriteFileAtomically(file, j.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
}

std::int64_t LedgerBytes(const Ledger& ledger) {
  std::int64_t total = 0;
  for (const auto& [hash, x] : ledger) {
    if (x.state == "failed" && x.bytes == 0) continue;
    total += x.size;
  }
  return total;
}

std::optional<std::vector<std::string>> PlanEviction(const Ledger& ledger, const std::string& keep,
                                                     std::int64_t need, std::int64_t quota) {
  std::vector<std::string> out;
  if (quota <= 0) return out;
  std::int64_t used = 0;
  for (const auto& [hash, x] : ledger) {
    if (hash == keep || (x.state == "failed" && x.bytes == 0)) continue;
    used += x.size;
  }
  if (used + need <= quota) return out;
  std::vector<std::pair<std::int64_t, std::string>> candidates;
  for (const auto& [hash, x] : ledger) {
    if (hash != keep && !x.assigned) candidates.emplace_back(x.last_used, hash);
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& [when, hash] : candidates) {
    const LedgerEntry& x = ledger.at(hash);
    if (!(x.state == "failed" && x.bytes == 0)) used -= x.size;
    out.push_back(hash);
    if (used + need <= quota) return out;
  }
  return std::nullopt;
}

}  // namespace swarmcast::node
