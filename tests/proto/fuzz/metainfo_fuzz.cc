// CheckMetainfo (what the tracker and every node run on untrusted metainfo)
// on arbitrary bytes: must never crash, hang or read out of
// bounds, and anything it accepts must be self-consistent.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proto/metainfo.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  swarmcast::proto::MetainfoLimits limits;
  limits.max_bytes = 1 << 20;
  auto r = swarmcast::proto::CheckMetainfo(
      std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (r) {
    if (r->piece_length < 16384 || r->total_size < 0 || r->file_count < 1 ||
        r->num_pieces != (r->total_size + r->piece_length - 1) / r->piece_length) {
      std::abort();
    }
  }
  return 0;
}
