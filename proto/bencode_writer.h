// A streaming bencode (BEP 3) encoder: each value is appended to a string as
// it is written, with no BencodeValue tree in between, for replies built on a
// hot path (the tracker's announce and scrape). It writes canonical form when
// dictionary keys come in ascending byte order, and checks that they do.
//
// Misuse (a key outside a dictionary or where a value is due, keys not
// strictly ascending, End() with nothing open, a second top-level value,
// nesting past kMaxDepth) never fails at once: it clears ok() and the
// output is then unspecified, so a caller writes freely and checks once.
// Any sequence of calls is safe.
//
// Pure: no I/O, no allocation but `out`'s. Thread-compatible.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace swarmcast::proto {

class BencodeWriter {
 public:
  static constexpr std::size_t kMaxDepth = 32;

  // Appends to `out`, which must outlive the writer; `out` may already hold
  // bytes (they are not looked at). Arguments must not point into `out`.
  explicit BencodeWriter(std::string& out) : out_(out) {}

  BencodeWriter& Int(std::int64_t v);
  BencodeWriter& String(std::string_view s);
  BencodeWriter& BeginList();
  BencodeWriter& BeginDict();
  // A dictionary key; it must sort after the dictionary's previous key
  // (as unsigned bytes) and be followed by exactly one value.
  BencodeWriter& Key(std::string_view key);
  // Closes the innermost open list or dictionary.
  BencodeWriter& End();

  // True when every call was valid and exactly one complete top-level value
  // has been written: the bytes appended are then one canonical value.
  bool ok() const { return !error_ && depth_ == 0 && complete_; }

 private:
  // Left uninitialised until pushed: a writer per reply costs no clearing.
  struct Level {
    std::size_t key_at;  // dict: offset of the previous key's bytes in out_
    std::size_t key_len;
    bool dict;
    bool want_value;  // dict: a key was written, its value is due
    bool has_key;     // dict: key_at/key_len name the previous key
  };

  void BeforeValue();
  void AfterValue() { complete_ = complete_ || depth_ == 0; }
  void Begin(char c, bool dict);
  void AppendString(std::string_view s);

  std::string& out_;
  std::array<Level, kMaxDepth> open_;
  std::size_t depth_ = 0;
  bool complete_ = false;
  bool error_ = false;
};

}  // namespace swarmcast::proto
