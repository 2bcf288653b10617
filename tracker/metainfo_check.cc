#include "tracker/metainfo_check.h"

#include <openssl/sha.h>

#include <algorithm>

#include "proto/bencode.h"

namespace swarmcast::tracker {
namespace {

using proto::BencodeValue;

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// One path component (or a single-file name): non-empty, not "." or "..",
// no separators or NUL, bounded length.
std::string CheckComponent(const BencodeValue* v, const MetainfoLimits& limits,
                           std::string_view what) {
  const std::string* s = v ? v->if_string() : nullptr;
  if (!s) return std::string(what) + " is missing or not a string";
  if (s->empty()) return std::string(what) + " has an empty path component";
  if (*s == "." || *s == "..") return std::string(what) + " contains '" + *s + "'";
  if (s->size() > limits.max_component_length) return std::string(what) + " component too long";
  if (s->find_first_of(std::string_view("/\\\0", 3)) != std::string::npos) {
    return std::string(what) + " contains a path separator or NUL (absolute or escaping path)";
  }
  return {};
}

}  // namespace

bool ValidSwarmName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  if (!alnum(name[0])) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  if ((name.size() == 40 || name.size() == 64) && IsHex(name)) return false;
  return true;
}

Result<MetainfoSummary, std::string> CheckMetainfo(std::string_view torrent,
                                                   const MetainfoLimits& limits) {
  auto fail = [](std::string reason) { return Unexpected("invalid torrent: " + reason); };
  if (torrent.size() > limits.max_bytes) return fail("larger than the size limit");
  proto::BencodeLimits blimits;
  blimits.max_total_size = limits.max_bytes;
  blimits.max_string_length = limits.max_bytes;
  blimits.max_depth = 32;
  blimits.strict = false;  // some tools write unsorted keys; the hash is over the bytes anyway
  auto doc = proto::DecodeBencode(torrent, blimits);
  if (!doc) return fail("not bencode (" + doc.error().ToString() + ")");
  if (!doc->is_dict()) return fail("top level is not a dictionary");
  const BencodeValue* info = doc->Find("info");
  if (!info || !info->is_dict()) return fail("no info dictionary");

  MetainfoSummary out;
  const BencodeValue* meta_version = info->Find("meta version");
  const BencodeValue* pieces = info->Find("pieces");
  if (!pieces && meta_version && meta_version->if_int() && *meta_version->if_int() == 2) {
    return fail("v2-only torrents are not supported; publish a v1 or hybrid torrent");
  }
  if (std::string e = CheckComponent(info->Find("name"), limits, "name"); !e.empty()) {
    return fail(e);
  }
  out.name = *info->Find("name")->if_string();

  const BencodeValue* pl = info->Find("piece length");
  if (!pl || !pl->if_int()) return fail("piece length missing");
  std::int64_t plen = *pl->if_int();
  if (plen < 16384 || (plen & (plen - 1)) != 0 || plen > (std::int64_t{1} << 30)) {
    return fail("piece length must be a power of two between 16 KiB and 1 GiB");
  }
  out.piece_length = plen;
  if (!pieces || !pieces->if_string()) return fail("pieces missing");
  if (pieces->if_string()->size() % 20 != 0) return fail("pieces length not a multiple of 20");
  out.pieces = static_cast<std::int64_t>(pieces->if_string()->size() / 20);

  constexpr std::int64_t kMaxSize = std::int64_t{1} << 50;  // 1 PiB: far beyond any real image
  const BencodeValue* length = info->Find("length");
  const BencodeValue* files = info->Find("files");
  if (length && files) return fail("both length and files");
  if (length) {
    if (!length->if_int() || *length->if_int() < 0 || *length->if_int() > kMaxSize) {
      return fail("length out of range");
    }
    out.size = *length->if_int();
    out.files = 1;
  } else if (files) {
    const proto::BencodeList* list = files->if_list();
    if (!list) return fail("files is not a list");
    if (list->empty()) return fail("empty file list");
    if (list->size() > limits.max_files) return fail("too many files");
    for (const BencodeValue& f : *list) {
      const BencodeValue* flen = f.Find("length");
      if (!flen || !flen->if_int() || *flen->if_int() < 0 || *flen->if_int() > kMaxSize) {
        return fail("a file length is missing or out of range");
      }
      out.size += *flen->if_int();
      if (out.size > kMaxSize) return fail("total size out of range");
      const BencodeValue* path = f.Find("path");
      const proto::BencodeList* parts = path ? path->if_list() : nullptr;
      if (!parts || parts->empty()) return fail("a file path is missing or empty");
      if (parts->size() > limits.max_path_components) return fail("a file path is too deep");
      for (const BencodeValue& part : *parts) {
        if (std::string e = CheckComponent(&part, limits, "file path"); !e.empty()) {
          return fail(e);
        }
      }
    }
    out.files = static_cast<std::int64_t>(list->size());
  } else {
    return fail("neither length nor files");
  }
  std::int64_t want = (out.size + plen - 1) / plen;
  if (want != out.pieces) {
    return fail("pieces holds " + std::to_string(out.pieces) + " hashes but the size needs " +
                std::to_string(want));
  }
  auto raw = proto::FindRawDictValue(torrent, "info", blimits);
  if (!raw || raw->empty()) return fail("info bytes not found");
  SHA1(reinterpret_cast<const unsigned char*>(raw->data()), raw->size(), out.info_hash.data());
  return out;
}

}  // namespace swarmcast::tracker
