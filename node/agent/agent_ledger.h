// What an agent keeps on its disk, and which of it may go: the ledger in
// DATA_DIR/agent-state.json (one entry per info-hash: its registry name,
// file name, size, state and when it was last used), rewritten atomically
// on every change, so a restarted agent knows what it fetched, what it was
// fetching (the get resumes from its verified pieces) and what it seeds.
//
// "Used" is the last time the tracker assigned the entry: content that
// stays assigned is never evicted; of the content no longer assigned, the
// one unassigned longest ago goes first.
//
// Plain data and pure functions, except Load and Save; one owner thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "proto/result.h"

namespace swarmcast::node {

struct LedgerEntry {
  std::string name;       // the registry (deployment) name
  std::string file_name;  // the torrent's name under content/<hash>/, once known
  std::int64_t size = 0;
  std::string state = "pending";  // pending, fetching, done, failed
  std::string reason;             // why it failed
  std::int64_t bytes = 0;         // verified bytes, as last seen
  std::int64_t last_used = 0;     // unix s
  bool assigned = true;
  // From the last finished fetch's report: pieces it found verified on
  // disk when it started (a resumed fetch) and bytes it downloaded.
  std::int64_t pieces_at_start = 0;
  std::int64_t downloaded_bytes = 0;
};

using Ledger = std::map<std::string, LedgerEntry>;  // by 40-hex info-hash

// At most this many entries, and 4 MiB of file.
inline constexpr std::size_t kMaxLedgerEntries = 4096;

// A missing file is an empty ledger; entries that do not check (bad hash,
// name, state, negative sizes) are dropped with a note in `dropped`.
Result<Ledger, std::string> LoadLedger(const std::filesystem::path& file, std::size_t* dropped);
std::error_code SaveLedger(const std::filesystem::path& file, const Ledger& ledger);

// Bytes the ledger's content takes (or will take) on disk: every entry
// that is not failed-and-empty.
std::int64_t LedgerBytes(const Ledger& ledger);

// To make room for `need` more bytes under `quota` (0: no quota): the
// unassigned entries to evict, least recently used first (never `keep`);
// nullopt when even evicting all of them would not make room.
std::optional<std::vector<std::string>> PlanEviction(const Ledger& ledger, const std::string& keep,
                                                     std::int64_t need, std::int64_t quota);

}  // namespace swarmcast::node
