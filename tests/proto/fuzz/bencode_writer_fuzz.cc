// Drives the streaming writer with arbitrary calls: no call sequence may
// crash, and whatever it reports ok must decode strictly (canonical form)
// and re-encode to the same bytes.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proto/bencode.h"
#include "proto/bencode_writer.h"

using namespace swarmcast::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string out;
  BencodeWriter w(out);
  std::size_t i = 0;
  auto next = [&]() -> std::uint8_t { return i < size ? data[i++] : 0; };
  auto bytes = [&] {
    std::size_t n = std::min<std::size_t>(next() % 8, size - std::min(i, size));
    std::string_view s(reinterpret_cast<const char*>(data) + i, n);
    i += n;
    return std::string(s);
  };
  while (i < size) {
    switch (next() % 6) {
      case 0:
        w.Int(static_cast<std::int8_t>(next()) * 1000003ll);
        break;
      case 1:
        w.String(bytes());
        break;
      case 2:
        w.BeginList();
        break;
      case 3:
        w.BeginDict();
        break;
      case 4:
        w.Key(bytes());
        break;
      default:
        w.End();
    }
  }
  if (!w.ok()) return 0;
  BencodeLimits limits;
  limits.max_depth = BencodeWriter::kMaxDepth;
  auto v = DecodeBencode(out, limits);
  if (!v.ok() || EncodeBencode(*v) != out) std::abort();
  return 0;
}
