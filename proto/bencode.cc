#include "proto/bencode.h"

#include <algorithm>
#include <limits>
#include <set>

namespace swarmcast::proto {
namespace {

// Recursion depth is bounded by the caller's limit; this cap keeps a careless
// limit from turning into a stack overflow.
constexpr std::size_t kMaxSupportedDepth = 512;

class BencodeCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "bencode"; }
  std::string message(int ev) const override {
    switch (static_cast<BencodeErrc>(ev)) {
      case BencodeErrc::kUnexpectedEnd:
        return "input ends inside a value";
      case BencodeErrc::kInvalidCharacter:
        return "unexpected character";
      case BencodeErrc::kLeadingZero:
        return "leading zero in a number";
      case BencodeErrc::kNegativeZero:
        return "negative zero";
      case BencodeErrc::kIntegerOverflow:
        return "integer does not fit in 64 bits";
      case BencodeErrc::kStringTooLong:
        return "string longer than the limit";
      case BencodeErrc::kTooDeep:
        return "nesting deeper than the limit";
      case BencodeErrc::kTooManyItems:
        return "more values than the limit";
      case BencodeErrc::kInputTooLarge:
        return "input larger than the limit";
      case BencodeErrc::kTrailingBytes:
        return "bytes after the end of the value";
      case BencodeErrc::kUnsortedKeys:
        return "dictionary keys not in sorted order";
      case BencodeErrc::kDuplicateKey:
        return "duplicate dictionary key";
    }
    return "unknown bencode error";
  }
};

// Parses one value starting at pos_. Each Parse* leaves pos_ just past what
// it consumed, or returns an error whose offset names the offending byte.
class Parser {
 public:
  Parser(std::string_view in, const BencodeLimits& limits)
      : in_(in), limits_(limits), max_depth_(std::min(limits.max_depth, kMaxSupportedDepth)) {}

  std::size_t pos() const { return pos_; }

  // Parses a value; the value is stored in *out unless out is null (a skip,
  // used to find raw byte ranges without building a tree).
  bool ParseValue(BencodeValue* out, std::size_t depth) {
    if (++items_ > limits_.max_items) return Fail(BencodeErrc::kTooManyItems);
    if (pos_ >= in_.size()) return Fail(BencodeErrc::kUnexpectedEnd);
    char c = in_[pos_];
    if (c == 'i') return ParseInt(out);
    if (c >= '0' && c <= '9') return ParseString(out);
    if (c == 'l' || c == 'd') {
      if (depth >= max_depth_) return Fail(BencodeErrc::kTooDeep);
      return c == 'l' ? ParseList(out, depth + 1) : ParseDict(out, depth + 1, nullptr);
    }
    return Fail(BencodeErrc::kInvalidCharacter);
  }

  // Parses a top-level dictionary and reports the raw bytes under `key`.
  bool ParseTopDict(std::string_view key, std::string_view* raw) {
    if (pos_ >= in_.size()) return Fail(BencodeErrc::kUnexpectedEnd);
    if (in_[pos_] != 'd') return Fail(BencodeErrc::kInvalidCharacter);
    ++items_;
    wanted_key_ = key;
    return ParseDict(nullptr, 1, raw);
  }

  BencodeError error() const { return error_; }

 private:
  bool Fail(BencodeErrc e) { return FailAt(e, pos_); }
  bool FailAt(BencodeErrc e, std::size_t at) {
    error_ = BencodeError{make_error_code(e), at};
    return false;
  }

  // Reads decimal digits up to `terminator`, enforcing BEP 3's form: no
  // leading zeros, no "-0", at least one digit.
  bool ParseNumber(char terminator, bool allow_negative, std::int64_t* value) {
    const std::size_t start = pos_;
    bool negative = false;
    if (allow_negative && pos_ < in_.size() && in_[pos_] == '-') {
      negative = true;
      ++pos_;
    }
    const std::size_t digits_start = pos_;
    // Accumulate as a negative number so INT64_MIN is representable.
    std::int64_t acc = 0;
    while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') {
      const int digit = in_[pos_] - '0';
      if (acc < (std::numeric_limits<std::int64_t>::min() + digit) / 10) {
        return FailAt(
            terminator == 'e' ? BencodeErrc::kIntegerOverflow : BencodeErrc::kStringTooLong, start);
      }
      acc = acc * 10 - digit;
      ++pos_;
    }
    if (pos_ >= in_.size()) return Fail(BencodeErrc::kUnexpectedEnd);
    if (in_[pos_] != terminator || pos_ == digits_start)
      return Fail(BencodeErrc::kInvalidCharacter);
    if (in_[digits_start] == '0' && pos_ - digits_start > 1) {
      return FailAt(BencodeErrc::kLeadingZero, digits_start);
    }
    if (negative && acc == 0) return FailAt(BencodeErrc::kNegativeZero, start);
    if (!negative && acc == std::numeric_limits<std::int64_t>::min()) {
      return FailAt(BencodeErrc::kIntegerOverflow, start);
    }
    ++pos_;  // the terminator
    *value = negative ? acc : -acc;
    return true;
  }

  bool ParseInt(BencodeValue* out) {
    ++pos_;  // 'i'
    std::int64_t v = 0;
    if (!ParseNumber('e', /*allow_negative=*/true, &v)) return false;
    if (out) *out = BencodeValue(v);
    return true;
  }

  bool ReadString(std::string_view* s) {
    const std::size_t start = pos_;
    std::int64_t len = 0;
    if (!ParseNumber(':', /*allow_negative=*/false, &len)) return false;
    if (static_cast<std::uint64_t>(len) > limits_.max_string_length) {
      return FailAt(BencodeErrc::kStringTooLong, start);
    }
    if (static_cast<std::uint64_t>(len) > in_.size() - pos_) {
      return FailAt(BencodeErrc::kUnexpectedEnd, in_.size());
    }
    *s = in_.substr(pos_, static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len);
    return true;
  }

  bool ParseString(BencodeValue* out) {
    std::string_view s;
    if (!ReadString(&s)) return false;
    if (out) *out = BencodeValue(s);
    return true;
  }

  bool ParseList(BencodeValue* out, std::size_t depth) {
    ++pos_;  // 'l'
    BencodeList list;
    while (true) {
      if (pos_ >= in_.size()) return Fail(BencodeErrc::kUnexpectedEnd);
      if (in_[pos_] == 'e') break;
      BencodeValue item;
      if (!ParseValue(out ? &item : nullptr, depth)) return false;
      if (out) list.push_back(std::move(item));
    }
    ++pos_;  // 'e'
    if (out) *out = BencodeValue(std::move(list));
    return true;
  }

  // `raw`, when set, receives the bytes of the value under wanted_key_.
  bool ParseDict(BencodeValue* out, std::size_t depth, std::string_view* raw) {
    ++pos_;  // 'd'
    BencodeDict dict;
    std::string_view previous;
    bool first = true;
    // Lenient mode may see keys out of order, so duplicates need a set then;
    // strict mode catches them by the ordering check alone.
    std::set<std::string_view> seen;
    while (true) {
      if (pos_ >= in_.size()) return Fail(BencodeErrc::kUnexpectedEnd);
      if (in_[pos_] == 'e') break;
      const std::size_t key_at = pos_;
      if (in_[pos_] < '0' || in_[pos_] > '9') return Fail(BencodeErrc::kInvalidCharacter);
      if (++items_ > limits_.max_items) return Fail(BencodeErrc::kTooManyItems);
      std::string_view key;
      if (!ReadString(&key)) return false;
      if (!first && key == previous) return FailAt(BencodeErrc::kDuplicateKey, key_at);
      if (!first && key < previous) {
        if (limits_.strict) return FailAt(BencodeErrc::kUnsortedKeys, key_at);
      }
      if (!limits_.strict) {
        if (!seen.insert(key).second) return FailAt(BencodeErrc::kDuplicateKey, key_at);
      }
      first = false;
      previous = key;
      const std::size_t value_at = pos_;
      BencodeValue item;
      if (!ParseValue(out ? &item : nullptr, depth)) return false;
      if (raw && key == wanted_key_) *raw = in_.substr(value_at, pos_ - value_at);
      if (out) dict.emplace(std::string(key), std::move(item));
    }
    ++pos_;  // 'e'
    if (out) *out = BencodeValue(std::move(dict));
    return true;
  }

  std::string_view in_;
  const BencodeLimits& limits_;
  const std::size_t max_depth_;
  std::size_t pos_ = 0;
  std::size_t items_ = 0;
  std::string_view wanted_key_;
  BencodeError error_;
};

void EncodeString(std::string_view s, std::string& out) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}

}  // namespace

const std::error_category& bencode_category() noexcept {
  static const BencodeCategory category;
  return category;
}

std::error_code make_error_code(BencodeErrc e) noexcept {
  return {static_cast<int>(e), bencode_category()};
}

std::string BencodeError::ToString() const {
  return "bencode: " + code.message() + " at byte " + std::to_string(offset);
}

const BencodeValue* BencodeValue::Find(std::string_view key) const {
  const BencodeDict* d = if_dict();
  if (!d) return nullptr;
  auto it = d->find(key);
  return it == d->end() ? nullptr : &it->second;
}

Result<BencodeValue, BencodeError> DecodeBencode(std::string_view input,
                                                 const BencodeLimits& limits) {
  if (input.size() > limits.max_total_size) {
    return Unexpected(BencodeError{make_error_code(BencodeErrc::kInputTooLarge), 0});
  }
  Parser parser(input, limits);
  BencodeValue value;
  if (!parser.ParseValue(&value, 0)) return Unexpected(parser.error());
  if (parser.pos() != input.size()) {
    return Unexpected(BencodeError{make_error_code(BencodeErrc::kTrailingBytes), parser.pos()});
  }
  return value;
}

Result<std::string_view, BencodeError> FindRawDictValue(std::string_view input,
                                                        std::string_view key,
                                                        const BencodeLimits& limits) {
  if (input.size() > limits.max_total_size) {
    return Unexpected(BencodeError{make_error_code(BencodeErrc::kInputTooLarge), 0});
  }
  Parser parser(input, limits);
  std::string_view raw;
  if (!parser.ParseTopDict(key, &raw)) return Unexpected(parser.error());
  if (parser.pos() != input.size()) {
    return Unexpected(BencodeError{make_error_code(BencodeErrc::kTrailingBytes), parser.pos()});
  }
  return raw;
}

void EncodeBencode(const BencodeValue& value, std::string& out) {
  if (const auto* i = value.if_int()) {
    out += 'i';
    out += std::to_string(*i);
    out += 'e';
  } else if (const auto* s = value.if_string()) {
    EncodeString(*s, out);
  } else if (const auto* l = value.if_list()) {
    out += 'l';
    for (const auto& item : *l) EncodeBencode(item, out);
    out += 'e';
  } else if (const auto* d = value.if_dict()) {
    out += 'd';
    for (const auto& [k, v] : *d) {  // std::map iterates in byte order
      EncodeString(k, out);
      EncodeBencode(v, out);
    }
    out += 'e';
  }
}

std::string EncodeBencode(const BencodeValue& value) {
  std::string out;
  EncodeBencode(value, out);
  return out;
}

}  // namespace swarmcast::proto
