#include "proto/bencode_writer.h"

#include <charconv>

namespace swarmcast::proto {

void BencodeWriter::BeforeValue() {
  if (depth_ == 0) {
    if (complete_) error_ = true;  // trailing bytes after the top-level value
    return;
  }
  Level& top = open_[depth_ - 1];
  if (!top.dict) return;
  if (!top.want_value) error_ = true;  // a value where a key is due
  top.want_value = false;
}

void BencodeWriter::AppendString(std::string_view s) {
  // The length prefix is formatted on the stack and appended in one go
  // (append(pointer, size): one capacity check, no temporary string).
  char buf[24];
  char* end = std::to_chars(buf, buf + sizeof buf - 1, s.size()).ptr;
  *end++ = ':';
  out_.append(buf, static_cast<std::size_t>(end - buf));
  out_.append(s);
}

BencodeWriter& BencodeWriter::Int(std::int64_t v) {
  BeforeValue();
  char buf[24];
  buf[0] = 'i';
  char* end = std::to_chars(buf + 1, buf + sizeof buf - 1, v).ptr;
  *end++ = 'e';
  out_.append(buf, static_cast<std::size_t>(end - buf));
  AfterValue();
  return *this;
}

BencodeWriter& BencodeWriter::String(std::string_view s) {
  BeforeValue();
  AppendString(s);
  AfterValue();
  return *this;
}

void BencodeWriter::Begin(char c, bool dict) {
  BeforeValue();
  out_ += c;
  if (depth_ == kMaxDepth) {
    error_ = true;
    return;
  }
  open_[depth_++] =
      Level{.key_at = 0, .key_len = 0, .dict = dict, .want_value = false, .has_key = false};
}

BencodeWriter& BencodeWriter::BeginList() {
  Begin('l', false);
  return *this;
}

BencodeWriter& BencodeWriter::BeginDict() {
  Begin('d', true);
  return *this;
}

BencodeWriter& BencodeWriter::Key(std::string_view key) {
  if (depth_ == 0 || !open_[depth_ - 1].dict || open_[depth_ - 1].want_value) {
    error_ = true;
    AppendString(key);
    return *this;
  }
  Level& top = open_[depth_ - 1];
  // The previous key is still in out_, so the order check needs no copy.
  // string_view compares as unsigned char, which is BEP 3's key order.
  if (top.has_key && !(std::string_view(out_).substr(top.key_at, top.key_len) < key)) {
    error_ = true;
  }
  AppendString(key);
  top.key_at = out_.size() - key.size();
  top.key_len = key.size();
  top.has_key = true;
  top.want_value = true;
  return *this;
}

BencodeWriter& BencodeWriter::End() {
  if (depth_ == 0) {
    error_ = true;
    return *this;
  }
  if (open_[depth_ - 1].want_value) error_ = true;  // a key without a value
  --depth_;
  out_ += 'e';
  AfterValue();
  return *this;
}

}  // namespace swarmcast::proto
