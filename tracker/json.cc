#include "tracker/json.h"

#include <nlohmann/json.hpp>

namespace swarmcast::tracker {

std::string JsonText(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace swarmcast::tracker
