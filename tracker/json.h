// The tracker's JSON values: nlohmann's ordered_json, so the keys of every
// reply and status line keep the order in which they are set (the order
// tracker/README.md documents). Only the tracker writes JSON; the node's
// registry client parses it with nlohmann too.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace swarmcast::tracker {

using Json = nlohmann::ordered_json;

// Compact text (no spaces, non-ASCII kept as UTF-8). Bytes that are not
// valid UTF-8 become U+FFFD instead of throwing, so any string the tracker
// is handed (a --db path, say) still gives valid JSON.
std::string JsonText(const Json& j);

}  // namespace swarmcast::tracker
