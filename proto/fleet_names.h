// The names of the fleet API (tracker/README.md, "Fleet API"), checked the
// same way by the tracker on every request and by the node before it sends
// one: agent ids, labels and deployment targets. Pure: no I/O.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "proto/result.h"

namespace swarmcast::proto {

// Agent ids: [A-Za-z0-9][A-Za-z0-9._-]{0,63}.
inline constexpr std::string_view kAgentIdRule = "[A-Za-z0-9][A-Za-z0-9._-]{0,63}";
bool IsValidAgentId(std::string_view id);

// Label keys [A-Za-z0-9][A-Za-z0-9._-]{0,62}; values [A-Za-z0-9._-]{0,63};
// at most kMaxLabels per agent.
inline constexpr std::size_t kMaxLabels = 16;
inline constexpr std::string_view kLabelRule =
    "KEY=VALUE, KEY [A-Za-z0-9][A-Za-z0-9._-]{0,62}, VALUE [A-Za-z0-9._-]{0,63}";
bool IsValidLabelKey(std::string_view key);
bool IsValidLabelValue(std::string_view value);
using Labels = std::map<std::string, std::string>;
// "rack=r12,role=gpu" (empty: no labels); a key given twice, a bad key or
// value or more than kMaxLabels is an error saying which.
Result<Labels, std::string> ParseLabels(std::string_view text);
std::string FormatLabels(const Labels& labels);  // "rack=r12,role=gpu"

// Which agents a deployment goes to.
struct DeployTarget {
  enum class Kind { kAll, kLabel, kCount } kind = Kind::kAll;
  std::string key, value;                    // kLabel
  std::int64_t count = 0;                    // kCount: 1..kMaxDeployCount
  std::string ToString() const;              // "all", "label=K=V", "N"
  bool Matches(const Labels& labels) const;  // kAll, kLabel (kCount: true)
};
inline constexpr std::int64_t kMaxDeployCount = 100000;
// "all", "label=K=V" or a count N (1..kMaxDeployCount).
Result<DeployTarget, std::string> ParseDeployTarget(std::string_view text);

}  // namespace swarmcast::proto
