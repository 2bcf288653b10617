// Bencode (BEP 3): the encoding of BitTorrent metainfo files and tracker
// responses. A whole-buffer decoder with caller-set limits and an encoder
// that always writes canonical form (dictionary keys sorted as raw bytes), so
// decoding and re-encoding a canonical info dictionary gives back the same
// bytes and therefore the same info-hash.
//
// Pure: no I/O, no logging, no global state. Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "proto/result.h"

namespace swarmcast::proto {

enum class BencodeErrc {
  kUnexpectedEnd = 1,  // input ended inside a value: for a stream, "need more"
  kInvalidCharacter,   // a byte that cannot start or continue a value here
  kLeadingZero,        // "i03e" or "03:abc"
  kNegativeZero,       // "i-0e"
  kIntegerOverflow,    // integer outside int64
  kStringTooLong,      // string length above BencodeLimits::max_string_length
  kTooDeep,            // nesting above BencodeLimits::max_depth
  kTooManyItems,       // more values than BencodeLimits::max_items
  kInputTooLarge,      // input above BencodeLimits::max_total_size
  kTrailingBytes,      // bytes after the top-level value
  kUnsortedKeys,       // strict mode: keys not in ascending byte order
  kDuplicateKey,       // strict mode: the same key twice
};

const std::error_category& bencode_category() noexcept;
std::error_code make_error_code(BencodeErrc e) noexcept;

// What went wrong and where: `offset` is the byte offset in the input at
// which the decoder found the problem.
struct BencodeError {
  std::error_code code;
  std::size_t offset = 0;

  // e.g. "bencode: leading zero in a number at byte 3"
  std::string ToString() const;
};

struct BencodeLimits {
  std::size_t max_depth = 64;  // lists/dicts inside one another; capped at 512
  std::size_t max_string_length = 64u << 20;
  std::size_t max_items = 1u << 20;  // values of any kind in the document
  std::size_t max_total_size = 64u << 20;
  // Strict mode rejects unsorted and duplicate dictionary keys, which BEP 3
  // forbids. Lenient mode accepts unsorted keys (some old clients wrote
  // them) but still rejects duplicates, which have no meaning.
  bool strict = true;
};

class BencodeValue;
using BencodeList = std::vector<BencodeValue>;
// std::string's ordering compares bytes as unsigned char, which is exactly
// the key order BEP 3 requires.
using BencodeDict = std::map<std::string, BencodeValue, std::less<>>;

class BencodeValue {
 public:
  BencodeValue() : v_(std::int64_t{0}) {}
  BencodeValue(std::int64_t i) : v_(i) {}                   // NOLINT: implicit by design
  BencodeValue(int i) : v_(std::int64_t{i}) {}              // NOLINT
  BencodeValue(std::string s) : v_(std::move(s)) {}         // NOLINT
  BencodeValue(std::string_view s) : v_(std::string(s)) {}  // NOLINT
  BencodeValue(const char* s) : v_(std::string(s)) {}       // NOLINT
  BencodeValue(BencodeList l) : v_(std::move(l)) {}         // NOLINT
  BencodeValue(BencodeDict d) : v_(std::move(d)) {}         // NOLINT

  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<BencodeList>(v_); }
  bool is_dict() const { return std::holds_alternative<BencodeDict>(v_); }

  // Checked access: nullptr when the value is of another kind.
  const std::int64_t* if_int() const { return std::get_if<std::int64_t>(&v_); }
  const std::string* if_string() const { return std::get_if<std::string>(&v_); }
  const BencodeList* if_list() const { return std::get_if<BencodeList>(&v_); }
  const BencodeDict* if_dict() const { return std::get_if<BencodeDict>(&v_); }
  BencodeList* if_list() { return std::get_if<BencodeList>(&v_); }
  BencodeDict* if_dict() { return std::get_if<BencodeDict>(&v_); }

  // Dictionary lookup; nullptr when this is not a dict or has no such key.
  const BencodeValue* Find(std::string_view key) const;

  friend bool operator==(const BencodeValue&, const BencodeValue&) = default;

 private:
  std::variant<std::int64_t, std::string, BencodeList, BencodeDict> v_;
};

// Decodes exactly one value that spans the whole input.
Result<BencodeValue, BencodeError> DecodeBencode(std::string_view input,
                                                 const BencodeLimits& limits = {});

// The exact bytes of the value stored under `key` in the top-level
// dictionary of `input` (which is validated in full with `limits`). This is
// how an info-hash is taken over the bytes as received, canonical or not.
// Fails with kInvalidCharacter at offset 0 if the top level is not a
// dictionary; returns an empty view if the key is absent.
Result<std::string_view, BencodeError> FindRawDictValue(std::string_view input,
                                                        std::string_view key,
                                                        const BencodeLimits& limits = {});

// Canonical encoding, appended to `out`.
void EncodeBencode(const BencodeValue& value, std::string& out);
std::string EncodeBencode(const BencodeValue& value);

}  // namespace swarmcast::proto

template <>
struct std::is_error_code_enum<swarmcast::proto::BencodeErrc> : std::true_type {};
