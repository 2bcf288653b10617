#include "proto/metainfo.h"

#include <openssl/sha.h>

#include <cctype>

#include "proto/bencode.h"
#include "proto/hex.h"

namespace swarmcast::proto {
namespace {

using Check = Result<MetainfoSummary, std::string>;

Unexpected<std::string> Fail(std::string why) { return Unexpected(std::move(why)); }

const std::int64_t* FindInt(const BencodeValue& dict, std::string_view key) {
  const BencodeValue* v = dict.Find(key);
  return v ? v->if_int() : nullptr;
}

const std::string* FindString(const BencodeValue& dict, std::string_view key) {
  const BencodeValue* v = dict.Find(key);
  return v ? v->if_string() : nullptr;
}

bool IsSpecial(const BencodeValue& file) {
  if (file.Find("symlink path") != nullptr) return true;
  const std::string* attr = FindString(file, "attr");
  return attr != nullptr && attr->find('l') != std::string::npos;
}

bool IsPad(const BencodeValue& file) {
  const std::string* attr = FindString(file, "attr");
  return attr != nullptr && attr->find('p') != std::string::npos;
}

// Walks a v2 "file tree": every key except the leaf marker "" is a path
// element. Depth is bounded by the limits and by the decoder.
std::string CheckFileTree(const BencodeValue& node, std::size_t depth, const MetainfoLimits& limits,
                          std::size_t& files) {
  const BencodeDict* dict = node.if_dict();
  if (dict == nullptr) return "file tree entry is not a dictionary";
  if (depth > limits.max_path_depth) return "file tree nested too deeply";
  for (const auto& [key, child] : *dict) {
    if (key.empty()) {
      if (IsSpecial(child)) return "file tree holds a symlink or special file";
      if (++files > limits.max_files) return "too many files";
      continue;
    }
    if (!IsSafePathElement(key, limits.max_path_element)) {
      return "unsafe path element in file tree: '" + key + "'";
    }
    std::string why = CheckFileTree(child, depth + 1, limits, files);
    if (!why.empty()) return why;
  }
  return {};
}

}  // namespace

bool IsReservedName(std::string_view name) {
  constexpr std::string_view kStaging = ".swarmcast";
  if (name.size() != kStaging.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(name[i])) != kStaging[i]) return false;
  }
  return true;
}

bool IsSafePathElement(std::string_view element, std::size_t max_len) {
  if (element.empty() || element.size() > max_len) return false;
  if (element == "." || element == "..") return false;
  for (char c : element) {
    if (c == '/' || c == '\\' || c == '\0') return false;
  }
  return true;
}

Check CheckMetainfo(std::string_view bytes, const MetainfoLimits& limits) {
  if (bytes.size() > limits.max_bytes) {
    return Fail("larger than " + std::to_string(limits.max_bytes) + " bytes");
  }
  BencodeLimits blimits;
  blimits.max_depth = limits.max_path_depth + 8;
  blimits.max_total_size = limits.max_bytes;
  blimits.max_string_length = limits.max_bytes;
  blimits.strict = false;  // old clients wrote unsorted keys; duplicates still fail
  auto decoded = DecodeBencode(bytes, blimits);
  if (!decoded) return Fail("not bencode (" + decoded.error().ToString() + ")");
  if (!decoded->is_dict()) return Fail("the top level is not a dictionary");
  const BencodeValue* info = decoded->Find("info");
  if (info == nullptr || !info->is_dict()) return Fail("no info dictionary");

  MetainfoSummary out;
  const std::string* name = FindString(*info, "name");
  if (name == nullptr) return Fail("info has no name");
  if (!IsSafePathElement(*name, limits.max_path_element)) {
    return Fail("unsafe name '" + *name + "'");
  }
  if (IsReservedName(*name)) {
    return Fail("the name '" + *name + "' is reserved (a node's staging area)");
  }
  out.name = *name;

  const std::int64_t* plen = FindInt(*info, "piece length");
  if (plen == nullptr || *plen < limits.min_piece_length || *plen > limits.max_piece_length ||
      (*plen & (*plen - 1)) != 0) {
    return Fail("piece length missing, not a power of two, or outside [" +
                std::to_string(limits.min_piece_length) + ", " +
                std::to_string(limits.max_piece_length) + "]");
  }
  out.piece_length = *plen;

  const std::string* pieces = FindString(*info, "pieces");
  if (pieces == nullptr) return Fail("no v1 piece hashes (v2-only torrents are not supported)");
  if (pieces->size() % 20 != 0) return Fail("piece hashes not a multiple of 20 bytes");
  out.num_pieces = static_cast<std::int64_t>(pieces->size() / 20);

  if (IsSpecial(*info)) return Fail("the torrent is a symlink or special file");
  const BencodeValue* files = info->Find("files");
  const std::int64_t* length = FindInt(*info, "length");
  if ((files == nullptr) == (length == nullptr)) {
    return Fail("needs exactly one of 'length' and 'files'");
  }
  auto add_size = [&](std::int64_t n) {
    if (n < 0 || n > limits.max_total_size - out.total_size) return false;
    out.total_size += n;
    return true;
  };
  if (length != nullptr) {
    if (!add_size(*length)) return Fail("file length negative or too large");
    out.paths.push_back(out.name);
    out.file_count = 1;
  } else {
    const BencodeList* list = files->if_list();
    if (list == nullptr || list->empty()) return Fail("'files' is not a non-empty list");
    if (list->size() > limits.max_files) return Fail("too many files");
    for (const BencodeValue& f : *list) {
      if (!f.is_dict()) return Fail("file entry is not a dictionary");
      if (IsSpecial(f)) return Fail("holds a symlink or special file");
      const std::int64_t* flen = FindInt(f, "length");
      if (flen == nullptr || !add_size(*flen)) return Fail("file length missing or invalid");
      const BencodeValue* path = f.Find("path");
      const BencodeList* elems = path ? path->if_list() : nullptr;
      if (elems == nullptr || elems->empty() || elems->size() > limits.max_path_depth) {
        return Fail("file path missing, empty or too deep");
      }
      std::string joined = out.name;
      for (const BencodeValue& e : *elems) {
        const std::string* s = e.if_string();
        if (s == nullptr || !IsSafePathElement(*s, limits.max_path_element)) {
          return Fail("unsafe path element '" + (s ? *s : std::string("?")) + "'");
        }
        joined += '/';
        joined += *s;
      }
      if (!IsPad(f)) out.paths.push_back(std::move(joined));
    }
    out.file_count = static_cast<std::int64_t>(list->size());
  }

  const std::int64_t expected = (out.total_size + out.piece_length - 1) / out.piece_length;
  if (expected != out.num_pieces) {
    return Fail("piece count " + std::to_string(out.num_pieces) + " does not match size " +
                std::to_string(out.total_size));
  }

  if (const BencodeValue* tree = info->Find("file tree")) {
    std::size_t count = 0;
    std::string why = CheckFileTree(*tree, 0, limits, count);
    if (!why.empty()) return Fail(why);
    out.hybrid = true;
  }

  // The swarm's key: SHA-1 over the info value exactly as received.
  auto raw = FindRawDictValue(bytes, "info", blimits);
  if (!raw || raw->empty()) return Fail("info bytes not found");
  SHA1(reinterpret_cast<const unsigned char*>(raw->data()), raw->size(), out.info_hash.data());
  return out;
}

bool IsValidSwarmName(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto alnum = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  if (!alnum(name[0])) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return !((name.size() == 40 || name.size() == 64) && IsHexDigits(name));
}

bool IsInfoHashHex(std::string_view text) { return text.size() == 40 && IsHexDigits(text); }

}  // namespace swarmcast::proto
