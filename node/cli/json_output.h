// The --json contract of every swarmcast command: exactly one JSON object
// on stdout when the command ends, whatever the outcome.
//
//   success:  the command's object, with "schema": 1
//   failure:  {"schema": 1, "error": {"code": 5, "kind": "storage",
//              "message": "..."}}, or the command's object (an interrupted
//              get's report) with that "error" member added
//
// The message is the last error the command logged, so every failure that
// is explained on stderr is explained here too. One per process: main()
// prints it as the command returns.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace swarmcast::node::cli {

inline constexpr int kJsonSchema = 1;

class JsonOutput {
 public:
  void Enable() { enabled_ = true; }
  bool enabled() const { return enabled_; }
  // The command's object; printed by Finish.
  void SetResult(nlohmann::json result) { result_ = std::move(result); }
  // Called for every error logged: the last one explains a failure.
  void NoteError(std::string_view message) { last_error_ = message; }
  // Prints the object for `exit_code` when enabled (nothing for a
  // successful command with no result, such as --help); returns exit_code.
  int Finish(int exit_code);

 private:
  bool enabled_ = false;
  std::optional<nlohmann::json> result_;
  std::string last_error_;
};

// The process's output (a command runs once per process).
JsonOutput& Output();

// "usage", "tracker", "metainfo", "storage", "interrupted", "network",
// "stalled", "verification" or "internal", for an exit code.
std::string_view ExitKind(int exit_code);

}  // namespace swarmcast::node::cli
