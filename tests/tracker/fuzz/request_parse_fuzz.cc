// Fuzzes what a client controls before any state is touched: the request
// target (path split, percent-decoding, announce and scrape queries) and a
// published metainfo. The first byte picks the parser.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tracker/query_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace swarmcast::tracker;
  if (size == 0) return 0;
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  QueryLimits limits;
  switch (data[0] % 3) {
    case 0: {
      auto [path, query] = SplitTarget(in);
      (void)path;
      auto r = ParseAnnounceQuery(query, limits);
      if (r.ok() && r->port == 0) __builtin_trap();  // the parser promises a port in 1..65535
      break;
    }
    case 1: {
      auto r = ParseScrapeQuery(in, limits);
      if (r.ok() && r->info_hashes.size() > limits.max_scrape_hashes) __builtin_trap();
      break;
    }
  }
  return 0;
}
