#include "tracker/http_reply.h"

#include <nlohmann/json.hpp>

namespace swarmcast::tracker {

HttpReply JsonReply(unsigned status, const Json& body) {
  return {status, "application/json", JsonText(body)};
}

HttpReply JsonError(unsigned status, std::string_view reason) {
  Json j;
  j["error"] = reason;
  return JsonReply(status, j);
}

}  // namespace swarmcast::tracker
