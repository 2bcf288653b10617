#include "node/cli/json_output.h"

#include <iostream>

#include "node/cli/common.h"

namespace swarmcast::node::cli {

JsonOutput& Output() {
  static JsonOutput output;
  return output;
}

std::string_view ExitKind(int exit_code) {
  switch (exit_code) {
    case kExitOk:
      return "ok";
    case kExitUsage:
      return "usage";
    case kExitTracker:
      return "tracker";
    case kExitMetainfo:
      return "metainfo";
    case kExitStorage:
      return "storage";
    case kExitInterrupted:
      return "interrupted";
    case kExitNetwork:
      return "network";
    case kExitStalled:
      return "stalled";
    case kExitVerification:
      return "verification";
    default:
      return "internal";
  }
}

int JsonOutput::Finish(int exit_code) {
  if (!enabled_ || (exit_code == kExitOk && !result_)) return exit_code;
  nlohmann::json out = result_.value_or(nlohmann::json::object());
  out["schema"] = kJsonSchema;
  if (exit_code != kExitOk) {
    out["error"] = {
        {"code", exit_code},
        {"kind", ExitKind(exit_code)},
        {"message", last_error_.empty() ? std::string(ExitKind(exit_code)) : last_error_}};
  }
  std::cout << out.dump() << std::endl;
  return exit_code;
}

}  // namespace swarmcast::node::cli
