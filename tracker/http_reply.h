// What a handler answers, before the HTTP layer frames it.
#pragma once

#include <string>

namespace swarmcast::tracker {

struct HttpReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// {"error":"reason"} with the given 4xx/5xx status.
HttpReply JsonError(unsigned status, std::string_view reason);

}  // namespace swarmcast::tracker
