#include "proto/log.h"

namespace swarmcast::proto {

std::string_view LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "info";
}

Result<LogLevel, std::string> ParseLogLevel(std::string_view name) {
  for (LogLevel l : {LogLevel::kError, LogLevel::kWarning, LogLevel::kInfo, LogLevel::kDebug}) {
    if (name == LogLevelName(l)) return l;
  }
  return Unexpected("log level '" + std::string(name) + "' is not error, warning, info or debug");
}

Logger::Logger(std::string program, LogLevel level, Sink sink, Observer observer)
    : program_(std::move(program)),
      level_(level),
      sink_(std::move(sink)),
      observer_(std::move(observer)) {}

void Logger::Log(LogLevel level, std::string_view message) const {
  if (!Enabled(level)) return;
  if (observer_) observer_(level, message);
  std::string line;
  line.reserve(program_.size() + message.size() + 12);
  line += program_;
  line += ": ";
  // Info lines read as plain sentences; the others say what they are.
  if (level != LogLevel::kInfo) {
    line += LogLevelName(level);
    line += ": ";
  }
  line += message;
  sink_(line);
}

}  // namespace swarmcast::proto
