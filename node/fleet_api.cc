#include "node/fleet_api.h"

#include "proto/metainfo.h"

namespace swarmcast::node {
namespace {

using Json = nlohmann::json;

// At most this many agents are read from one deployment view.
constexpr std::size_t kMaxAgentsRead = 100000;

RegistryError Bad(const std::string& what) {
  return RegistryError{RegistryError::Kind::kBadResponse, 0, "tracker sent " + what};
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t Int(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<DeploymentStatus, RegistryError> ParseStatus(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (!j.is_object()) return Unexpected(Bad("a deployment that is not a JSON object"));
  DeploymentStatus s;
  s.name = Str(j, "name");
  s.info_hash = Str(j, "info_hash");
  s.to = Str(j, "to");
  s.size = Int(j, "size");
  s.created = Int(j, "created");
  s.total = Int(j, "total");
  s.done = Int(j, "done");
  s.failed = Int(j, "failed");
  if (!proto::IsValidSwarmName(s.name)) return Unexpected(Bad("a deployment without a valid name"));
  auto agents = j.find("agents");
  if (agents != j.end()) {
    if (!agents->is_array() || agents->size() > kMaxAgentsRead) {
      return Unexpected(Bad("a bad agent list"));
    }
    for (const Json& a : *agents) {
      if (!a.is_object()) return Unexpected(Bad("a bad agent entry"));
      AgentState st;
      st.agent = Str(a, "agent");
      if (!proto::IsValidAgentId(st.agent)) return Unexpected(Bad("an invalid agent id"));
      auto labels = a.find("labels");
      if (labels != a.end() && labels->is_object()) {
        proto::Labels l;
        for (const auto& [k, v] : labels->items()) {
          if (v.is_string() && proto::IsValidLabelKey(k) &&
              proto::IsValidLabelValue(v.get<std::string>()) && l.size() < proto::kMaxLabels) {
            l[k] = v.get<std::string>();
          }
        }
        st.labels = proto::FormatLabels(l);
      }
      st.state = Str(a, "state");
      st.reason = Str(a, "reason").substr(0, 512);
      st.bytes = Int(a, "bytes");
      st.updated = Int(a, "updated");
      st.last_seen = Int(a, "last_seen");
      auto silent = a.find("silent");
      st.silent = silent != a.end() && silent->is_boolean() && silent->get<bool>();
      s.agents.push_back(std::move(st));
    }
  }
  s.raw = std::move(j);
  return s;
}

}  // namespace

Result<std::vector<AgentAssignment>, RegistryError> SyncAgent(RegistryClient& client,
                                                              const AgentSyncRequest& request) {
  Json body;
  body["labels"] = Json::object();
  for (const auto& [k, v] : request.labels) body["labels"][k] = v;
  body["data_dir"] = request.data_dir;
  body["poll_seconds"] = request.poll_seconds;
  body["reports"] = Json::array();
  for (const AgentReportItem& r : request.reports) {
    body["reports"].push_back({{"name", r.name},
                               {"info_hash", r.info_hash},
                               {"state", r.state},
                               {"reason", r.reason.substr(0, 512)},
                               {"bytes", r.bytes}});
  }
  // Bytes that are not UTF-8 (a reason from a path) become U+FFFD.
  auto answer = client.CallJson("PUT", "/v1/agents/" + request.id,
                                body.dump(-1, ' ', false, Json::error_handler_t::replace));
  if (!answer) return Unexpected(answer.error());
  Json j = Json::parse(answer->body, nullptr, false);
  if (!j.is_object() || !j.contains("assignments") || !j["assignments"].is_array() ||
      j["assignments"].size() > kMaxAssignments) {
    return Unexpected(Bad("a sync reply without a bounded assignment list"));
  }
  std::vector<AgentAssignment> out;
  for (const Json& a : j["assignments"]) {
    if (!a.is_object()) return Unexpected(Bad("a bad assignment"));
    AgentAssignment x{Str(a, "name"), Str(a, "info_hash"), Int(a, "size")};
    if (!proto::IsValidSwarmName(x.name) || !proto::IsInfoHashHex(x.info_hash) || x.size < 0) {
      return Unexpected(Bad("an assignment with a bad name, info-hash or size"));
    }
    out.push_back(std::move(x));
  }
  return out;
}

Result<DeploymentStatus, RegistryError> Deploy(RegistryClient& client, const std::string& name,
                                               const proto::DeployTarget& target, bool* created) {
  Json body{{"to", target.ToString()}};
  auto answer = client.CallJson("PUT", "/v1/deployments/" + name, body.dump());
  if (!answer) return Unexpected(answer.error());
  if (created) *created = answer->status == 201;
  return ParseStatus(answer->body);
}

Result<DeploymentStatus, RegistryError> RemoveDeployment(RegistryClient& client,
                                                         const std::string& name) {
  auto answer = client.CallJson("DELETE", "/v1/deployments/" + name);
  if (!answer) return Unexpected(answer.error());
  return ParseStatus(answer->body);
}

Result<DeploymentStatus, RegistryError> GetDeployment(RegistryClient& client,
                                                      const std::string& name) {
  auto answer = client.CallJson("GET", "/v1/deployments/" + name);
  if (!answer) return Unexpected(answer.error());
  return ParseStatus(answer->body);
}

}  // namespace swarmcast::node
