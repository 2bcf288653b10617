// Wall-clock time in unix seconds, behind an interface so tests can move it.
#pragma once

#include <cstdint>
#include <ctime>

namespace swarmcast::tracker {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::int64_t Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::int64_t Now() const override { return static_cast<std::int64_t>(std::time(nullptr)); }
};

}  // namespace swarmcast::tracker
