// What a handler answers, before the HTTP layer frames it.
#pragma once

#include <string>
#include <string_view>

#include "tracker/json.h"

namespace swarmcast::tracker {

struct HttpReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// `body` as JSON text with the given status.
HttpReply JsonReply(unsigned status, const Json& body);

// {"error":"reason"} with the given 4xx/5xx status.
HttpReply JsonError(unsigned status, std::string_view reason);

}  // namespace swarmcast::tracker
