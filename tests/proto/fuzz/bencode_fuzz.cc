// Decodes arbitrary bytes under tight limits; whatever decodes must
// re-encode canonically and decode back to the same value.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/bencode.h"

using namespace swarmcast::proto;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  BencodeLimits limits;
  limits.max_depth = 32;
  limits.max_items = 4096;
  limits.max_string_length = 1 << 16;
  limits.max_total_size = 1 << 20;
  for (bool strict : {true, false}) {
    limits.strict = strict;
    auto v = DecodeBencode(in, limits);
    if (!v.ok()) {
      if (v.error().offset > size) std::abort();
      (void)v.error().ToString();
      continue;
    }
    std::string encoded = EncodeBencode(*v);
    // Strict input is canonical already: encoding gives the input back.
    if (strict && encoded != in) std::abort();
    auto again = DecodeBencode(encoded, limits);
    if (!again.ok() || !(*again == *v)) std::abort();
  }
  auto raw = FindRawDictValue(in, "info", limits);
  if (raw.ok() && !raw->empty() && raw->data() < in.data()) std::abort();
  return 0;
}
