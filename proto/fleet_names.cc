#include "proto/fleet_names.h"

#include <charconv>

namespace swarmcast::proto {
namespace {

bool NameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

bool Alnum(char c) { return NameChar(c) && c != '.' && c != '_' && c != '-'; }

bool AllNameChars(std::string_view s) {
  for (char c : s) {
    if (!NameChar(c)) return false;
  }
  return true;
}

}  // namespace

bool IsValidAgentId(std::string_view id) {
  return !id.empty() && id.size() <= 64 && Alnum(id[0]) && AllNameChars(id);
}

bool IsValidLabelKey(std::string_view key) {
  return !key.empty() && key.size() <= 63 && Alnum(key[0]) && AllNameChars(key);
}

bool IsValidLabelValue(std::string_view value) { return value.size() <= 63 && AllNameChars(value); }

Result<Labels, std::string> ParseLabels(std::string_view text) {
  Labels labels;
  if (text.empty()) return labels;
  while (true) {
    const std::size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return Unexpected("label '" + std::string(item.substr(0, 64)) + "' is not " +
                        std::string(kLabelRule));
    }
    const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
    if (!IsValidLabelKey(key) || !IsValidLabelValue(value)) {
      return Unexpected("label '" + std::string(item.substr(0, 64)) + "' is not " +
                        std::string(kLabelRule));
    }
    if (!labels.emplace(key, value).second) {
      return Unexpected("label key '" + std::string(key) + "' given twice");
    }
    if (labels.size() > kMaxLabels) {
      return Unexpected("more than " + std::to_string(kMaxLabels) + " labels");
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return labels;
}

std::string FormatLabels(const Labels& labels) {
  std::string out;
  for (const auto& [k, v] : labels) out += (out.empty() ? "" : ",") + k + "=" + v;
  return out;
}

std::string DeployTarget::ToString() const {
  switch (kind) {
    case Kind::kAll:
      return "all";
    case Kind::kLabel:
      return "label=" + key + "=" + value;
    case Kind::kCount:
      return std::to_string(count);
  }
  return "all";
}

bool DeployTarget::Matches(const Labels& labels) const {
  if (kind != Kind::kLabel) return true;
  auto it = labels.find(key);
  return it != labels.end() && it->second == value;
}

Result<DeployTarget, std::string> ParseDeployTarget(std::string_view text) {
  DeployTarget t;
  if (text == "all") return t;
  if (text.substr(0, 6) == "label=") {
    std::string_view kv = text.substr(6);
    const std::size_t eq = kv.find('=');
    if (eq == std::string_view::npos || !IsValidLabelKey(kv.substr(0, eq)) ||
        !IsValidLabelValue(kv.substr(eq + 1))) {
      return Unexpected("target '" + std::string(text.substr(0, 140)) +
                        "': want label=" + std::string(kLabelRule));
    }
    t.kind = DeployTarget::Kind::kLabel;
    t.key = std::string(kv.substr(0, eq));
    t.value = std::string(kv.substr(eq + 1));
    return t;
  }
  std::int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > kMaxDeployCount) {
    return Unexpected("target '" + std::string(text.substr(0, 140)) +
                      "': want all, label=KEY=VALUE or a count 1.." +
                      std::to_string(kMaxDeployCount));
  }
  t.kind = DeployTarget::Kind::kCount;
  t.count = n;
  return t;
}

}  // namespace swarmcast::proto
