#include "node/hash_cache.h"

#include <openssl/sha.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <sstream>

#include "node/file_io.h"
#include "node/status_file.h"
#include "proto/hex.h"

namespace swarmcast::node {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "swarmcast-piece-hashes 1\n";
constexpr std::size_t kHashBytes = 20;
// Entries are ~20 KiB (1024 pieces); a few hundred images' worth is plenty.
constexpr std::size_t kMaxEntries = 256;

std::string Sha1Hex(std::string_view text) {
  std::array<std::uint8_t, SHA_DIGEST_LENGTH> digest{};
  SHA1(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest.data());
  return proto::ToHex(digest);
}

void EvictOldest(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".hashes") {
      entries.emplace_back(it->last_write_time(ec), it->path());
    }
  }
  if (entries.size() <= kMaxEntries) return;
  std::sort(entries.begin(), entries.end());
  for (std::size_t i = 0; i + kMaxEntries < entries.size(); ++i) fs::remove(entries[i].second, ec);
}

}  // namespace

fs::path DefaultHashCacheDir() {
  if (const char* env = std::getenv("SWARMCAST_CACHE_DIR"); env && *env) {
    return fs::path(env) / "hashes";
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    return fs::path(xdg) / "swarmcast" / "hashes";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return fs::path(home) / ".cache" / "swarmcast" / "hashes";
  }
  return {};
}

std::string HashCache::Key(const std::vector<HashSegment>& segments,
                           const std::vector<FileIdentity>& identities, std::int64_t piece_length) {
  std::ostringstream d;
  d << "piece_length " << piece_length << "\n";
  std::size_t next_identity = 0;
  for (const auto& s : segments) {
    if (s.path.empty()) {
      d << "pad " << s.size << "\n";
      continue;
    }
    const FileIdentity& id = identities.at(next_identity++);
    // The length prefix keeps a path holding a newline from forging a
    // second entry.
    d << "file " << s.path.native().size() << ":" << s.path.native() << " " << s.size << " "
      << id.device << " " << id.inode << " " << id.size << " " << id.mtime_ns << " " << id.ctime_ns
      << "\n";
  }
  return Sha1Hex(d.str());
}

std::optional<std::string> HashCache::Lookup(const std::string& key, std::int64_t pieces) const {
  if (dir_.empty() || pieces <= 0 || UnsafeStateDir(dir_)) return std::nullopt;
  const std::size_t want = kMagic.size() + static_cast<std::size_t>(pieces) * kHashBytes;
  auto bytes = ReadFileBounded(dir_ / (key + ".hashes"), want);
  if (!bytes || bytes->size() != want || !bytes->starts_with(kMagic)) return std::nullopt;
  // Touched on use, so eviction drops what no seed asked for longest.
  std::error_code ec;
  fs::last_write_time(dir_ / (key + ".hashes"), fs::file_time_type::clock::now(), ec);
  return bytes->substr(kMagic.size());
}

std::optional<std::string> HashCache::Store(const std::string& key,
                                            const std::string& hashes) const {
  if (dir_.empty()) return std::nullopt;
  if (auto unsafe = UnsafeStateDir(dir_)) return "hash cache not kept: " + *unsafe;
  std::string bytes(kMagic);
  bytes += hashes;
  if (auto ec = WriteFileAtomically(dir_ / (key + ".hashes"), bytes)) {
    return "hash cache not kept: " + (dir_ / key).string() + ": " + ec.message();
  }
  EvictOldest(dir_);
  return std::nullopt;
}

Result<CachedHashes, std::string> HashPiecesCached(const HashJob& job,
                                                   const std::vector<FileIdentity>& identities,
                                                   const HashCache& cache, bool rehash) {
  const std::string key = HashCache::Key(job.segments, identities, job.piece_length);
  std::int64_t total = 0;
  for (const auto& s : job.segments) total += s.size;
  const std::int64_t pieces = (total + job.piece_length - 1) / job.piece_length;
  CachedHashes out;
  if (!rehash) {
    if (auto cached = cache.Lookup(key, pieces)) {
      out.hashes = std::move(*cached);
      out.from_cache = true;
      return out;
    }
  }
  const std::int64_t began_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  auto hashes = HashPieces(job);
  if (!hashes) return Unexpected(std::move(hashes.error()));
  bool settled = true;
  std::size_t next_identity = 0;
  for (const auto& s : job.segments) {
    if (s.path.empty()) continue;
    const FileIdentity& listed = identities.at(next_identity++);
    const auto now = IdentityOf(s.path);
    if (!now || !(*now == listed)) {
      return Unexpected(s.path.string() + " changed while it was hashed; try again");
    }
    const std::int64_t settle_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(cache.settle()).count();
    if (std::max(listed.mtime_ns, listed.ctime_ns) > began_ns - settle_ns) settled = false;
  }
  if (settled) {
    if (auto why = cache.Store(key, *hashes)) out.warning = *why;
  }
  out.hashes = std::move(*hashes);
  return out;
}

}  // namespace swarmcast::node
