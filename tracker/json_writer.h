// A small streaming JSON writer for the registry's replies. (Debian 12's
// Boost 1.74 ships without Boost.JSON, and the tracker only ever writes
// JSON.) Strings are escaped per RFC 8259; bytes that are not valid UTF-8
// are replaced with U+FFFD so the output is always valid JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace swarmcast::tracker {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view s);
  JsonWriter& Int(std::int64_t v);
  JsonWriter& Bool(bool v);
  JsonWriter& Null();
  // String, or null when s is empty.
  JsonWriter& StringOrNull(std::string_view s) { return s.empty() ? Null() : String(s); }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  void Escape(std::string_view s);

  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace swarmcast::tracker
