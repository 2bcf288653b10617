#include "node/payload_check.h"

#include <array>
#include <libtorrent/torrent_info.hpp>

#include "node/hash_cache.h"
#include "node/payload_files.h"
#include "node/piece_hasher.h"
#include "proto/hex.h"

namespace swarmcast::node {

Result<HashInputs, std::string> HashInputsFor(const lt::file_storage& layout,
                                              const FileLocator& locate) {
  HashInputs in;
  in.job.piece_length = layout.piece_length();
  for (const lt::file_index_t i : layout.file_range()) {
    if (layout.pad_file_at(i)) {
      in.job.segments.push_back({.path = {}, .size = layout.file_size(i)});
      continue;
    }
    auto file = locate(layout.file_path(i), layout.file_size(i));
    if (!file) return Unexpected(std::move(file.error()));
    in.job.segments.push_back({.path = file->disk_path, .size = layout.file_size(i)});
    in.identities.push_back(file->identity);
  }
  return in;
}

namespace {

// A whole-file SHA-256 sits in the hash cache beside the piece hashes,
// under their key plus this suffix, as a 40-byte entry (the digest and 8
// zero bytes: two "piece hashes", so the cache's own size check applies).
constexpr char kSha256Key[] = "\nwhole-file sha256";

std::optional<std::string> Sha256Entry(const std::string& hex) {
  std::array<std::uint8_t, 32> raw{};
  if (hex.size() != 64 || !proto::FromHex(hex, raw)) return std::nullopt;
  std::string entry(reinterpret_cast<const char*>(raw.data()), raw.size());
  entry.append(8, '\0');
  return entry;
}

// The hashing inputs for `ti`'s files as they are under `dir` now (a
// single file named `single_file_name` there, when given).
Result<HashInputs, std::string> InputsUnder(const lt::torrent_info& ti,
                                            const std::filesystem::path& dir,
                                            const std::string& single_file_name) {
  if (!single_file_name.empty() && ti.num_files() != 1) {
    return Unexpected(std::string("a folder cannot be checked under another name"));
  }
  return HashInputsFor(
      ti.files(),
      [&](const std::string& torrent_path, std::int64_t size) -> Result<PayloadFile, std::string> {
        const std::filesystem::path path =
            dir / (single_file_name.empty() ? torrent_path : single_file_name);
        auto id = IdentityOf(path);
        if (!id) return Unexpected(std::move(id.error()));
        if (id->size != size) {
          return Unexpected(path.string() + " is " + std::to_string(id->size) +
                            " bytes; the metainfo says " + std::to_string(size));
        }
        return PayloadFile{.torrent_path = torrent_path, .disk_path = path, .identity = *id};
      });
}

Result<lt::torrent_info, std::string> ParseV1(std::string_view torrent_bytes) {
  lt::error_code ec;
  lt::torrent_info ti(torrent_bytes, ec, lt::from_span);
  if (ec) return Unexpected("metainfo: " + ec.message());
  if (!ti.info_hashes().has_v1()) return Unexpected("metainfo has no v1 piece hashes to check");
  return ti;
}

}  // namespace

std::optional<std::string> RememberVerifiedPayload(std::string_view torrent_bytes,
                                                   const std::filesystem::path& dir,
                                                   const std::filesystem::path& hash_cache_dir,
                                                   const std::string& single_file_name,
                                                   const std::string& sha256) {
  auto ti = ParseV1(torrent_bytes);
  if (!ti) return ti.error();
  auto in = InputsUnder(*ti, dir, single_file_name);
  if (!in) return in.error();
  const HashCache cache(hash_cache_dir);
  const std::string key = HashCache::Key(in->job.segments, in->identities, in->job.piece_length);
  if (auto raw = Sha256Entry(sha256); raw && ti->num_files() == 1) {
    if (auto why = cache.Store(key + kSha256Key, *raw)) return why;
  }
  std::string hashes;
  for (const lt::piece_index_t p : ti->piece_range()) {
    const lt::sha1_hash h = ti->hash_for_piece(p);
    hashes.append(h.data(), h.size());
  }
  return cache.Store(key, hashes);
}

std::optional<std::string> WholeFileSha256FromCache(std::string_view torrent_bytes,
                                                    const std::filesystem::path& dir,
                                                    const std::filesystem::path& hash_cache_dir,
                                                    const std::string& single_file_name) {
  auto ti = ParseV1(torrent_bytes);
  if (!ti || ti->num_files() != 1) return std::nullopt;
  auto in = InputsUnder(*ti, dir, single_file_name);
  if (!in) return std::nullopt;
  const HashCache cache(hash_cache_dir);
  auto raw = cache.Lookup(
      HashCache::Key(in->job.segments, in->identities, in->job.piece_length) + kSha256Key, 2);
  if (!raw) return std::nullopt;
  return proto::ToHex(std::string_view(*raw).substr(0, 32));
}

Result<PayloadCheck, std::string> CheckPayload(std::string_view torrent_bytes,
                                               const PayloadCheckOptions& o) {
  auto parsed = ParseV1(torrent_bytes);
  if (!parsed) return Unexpected(std::move(parsed.error()));
  const lt::torrent_info& ti = *parsed;
  auto in = InputsUnder(ti, o.dir, o.single_file_name);
  if (!in) return Unexpected(std::move(in.error()));
  in->job.threads = o.threads;
  in->job.progress = o.progress;

  PayloadCheck out;
  out.pieces = ti.num_pieces();
  auto hashes = HashPiecesCached(in->job, in->identities,
                                 HashCache(o.hash_cache_dir, o.hash_cache_settle), o.rehash);
  if (!hashes) return Unexpected(std::move(hashes.error()));
  out.from_cache = hashes->from_cache;
  out.cache_warning = hashes->warning;
  for (const lt::piece_index_t p : ti.piece_range()) {
    const auto at = static_cast<std::size_t>(static_cast<int>(p)) * 20;
    if (lt::sha1_hash(hashes->hashes.data() + at) != ti.hash_for_piece(p)) {
      if (out.first_bad < 0) out.first_bad = static_cast<int>(p);
      ++out.bad_pieces;
    }
  }
  return out;
}

}  // namespace swarmcast::node
