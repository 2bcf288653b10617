// The log convention of every swarmcast program: one line per event on
// the injected sink, "PROGRAM: [LEVEL: ]message", journal-friendly (no
// timestamps: journald and docker add their own). Below the logger's level
// nothing is formatted.
//
// The logger only formats and filters; where lines go is the sink the
// program's main() passes in (stderr, in both programs), so proto/ stays
// free of I/O and tests can capture lines. A Logger is immutable once made
// and its sink must be safe to call from any thread: the node logs from its
// control thread and its push thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace swarmcast::proto {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// "error", "warning", "info", "debug".
std::string_view LogLevelName(LogLevel level);
Result<LogLevel, std::string> ParseLogLevel(std::string_view name);

class Logger {
 public:
  using Sink = std::function<void(std::string_view line)>;  // no trailing newline
  // Sees every message at or above the level, unformatted, before the sink
  // (the node's --json output keeps the last error this way).
  using Observer = std::function<void(LogLevel level, std::string_view message)>;

  Logger() = default;  // logs nothing
  Logger(std::string program, LogLevel level, Sink sink, Observer observer = {});

  bool Enabled(LogLevel level) const { return sink_ && level <= level_; }
  void Log(LogLevel level, std::string_view message) const;
  void Error(std::string_view m) const { Log(LogLevel::kError, m); }
  void Warning(std::string_view m) const { Log(LogLevel::kWarning, m); }
  void Info(std::string_view m) const { Log(LogLevel::kInfo, m); }
  void Debug(std::string_view m) const { Log(LogLevel::kDebug, m); }

 private:
  std::string program_;
  LogLevel level_ = LogLevel::kInfo;
  Sink sink_;
  Observer observer_;
};

}  // namespace swarmcast::proto
