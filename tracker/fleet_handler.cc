#include "tracker/fleet_handler.h"

#include <nlohmann/json.hpp>

#include "proto/hex.h"
#include "proto/metainfo.h"

namespace swarmcast::tracker {
namespace {

constexpr std::string_view kAgents = "/v1/agents";
constexpr std::string_view kDeployments = "/v1/deployments";

bool Under(std::string_view path, std::string_view prefix) {
  return path.substr(0, prefix.size()) == prefix &&
         (path.size() == prefix.size() || path[prefix.size()] == '/');
}

// The one path segment after `prefix` ("" for the prefix itself), or
// nullopt for anything deeper.
std::optional<std::string_view> Segment(std::string_view path, std::string_view prefix) {
  std::string_view rest = path.substr(prefix.size());
  if (rest.empty() || rest == "/") return std::string_view{};
  rest.remove_prefix(1);
  if (rest.find('/') != std::string_view::npos) return std::nullopt;
  return rest;
}

// Text an agent sent that the tracker shows back: bounded, no control
// characters (a reason is one log line), valid as JSON text.
bool PlainText(std::string_view s, std::size_t max) {
  if (s.size() > max) return false;
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool IsAdminWrite(std::string_view method, std::string_view path) {
  return (method == "PUT" || method == "DELETE") && Under(path, kDeployments);
}

// Seconds after which an agent that syncs every `poll` seconds counts as
// silent: three missed syncs and some slack for a busy tracker.
std::int64_t SilentAfter(std::int64_t poll) { return 3 * poll + 10; }

Json ViewJson(const DeploymentView& v, std::int64_t now, bool with_agents) {
  Json j;
  j["name"] = v.deployment.name;
  j["info_hash"] = ToHex(v.deployment.info_hash);
  j["size"] = v.deployment.size;
  j["to"] = v.deployment.target.ToString();
  j["created"] = v.deployment.created;
  std::int64_t done = 0, failed = 0;
  Json agents = Json::array();
  for (const DeploymentView::Row& r : v.agents) {
    if (r.report.state == "done") ++done;
    if (r.report.state == "failed") ++failed;
    if (!with_agents) continue;
    Json a;
    a["agent"] = r.agent.id;
    a["labels"] = Json::object();
    for (const auto& [k, val] : r.agent.labels) a["labels"][k] = val;
    a["state"] = r.report.state;
    a["reason"] = r.report.reason;
    a["bytes"] = r.report.bytes;
    a["updated"] = r.report.updated;
    a["last_seen"] = r.agent.last_seen;
    a["silent"] = now - r.agent.last_seen > SilentAfter(r.agent.poll_seconds);
    agents.push_back(std::move(a));
  }
  j["total"] = static_cast<std::int64_t>(v.agents.size());
  j["done"] = done;
  j["failed"] = failed;
  if (with_agents) j["agents"] = std::move(agents);
  return j;
}

}  // namespace

bool FleetHandler::IsFleetPath(std::string_view path) {
  return Under(path, kAgents) || Under(path, kDeployments);
}

std::optional<HttpReply> FleetHandler::CheckBeforeBody(std::string_view method,
                                                       std::string_view path,
                                                       std::string_view authorization,
                                                       std::string_view client) const {
  if (method != "PUT" && method != "DELETE") return std::nullopt;
  std::string reason;
  if (IsAdminWrite(method, path)) {
    auto w = access_.Writer(authorization, client);
    if (!w) reason = w.error();
  } else if (Under(path, kAgents)) {
    auto a = access_.MayAgent(authorization);
    if (!a) reason = a.error();
  }
  if (reason.empty()) return std::nullopt;
  log_.Info("refused fleet " + std::string(method) + " from " + std::string(client) + ": 401 " +
            reason + " (body not read)");
  return JsonError(401, reason);
}

HttpReply FleetHandler::Handle(std::string_view method, std::string_view path,
                               std::string_view body, std::string_view authorization,
                               std::string_view client) {
  const bool read = method == "GET" || method == "HEAD";
  if (Under(path, kAgents)) {
    auto id = Segment(path, kAgents);
    if (!id) return JsonError(404, "not found");
    if (id->empty()) {
      if (!read) return JsonError(405, "method not allowed");
      if (!access_.MayRead(authorization)) {
        return JsonError(401, "token missing or wrong: this tracker is private");
      }
      return ListAgents();
    }
    if (method != "PUT") return JsonError(405, "method not allowed");
    auto may = access_.MayAgent(authorization);
    if (!may) return JsonError(401, may.error());
    return Sync(*id, body, client);
  }
  auto name = Segment(path, kDeployments);
  if (!name) return JsonError(404, "not found");
  if (read) {
    if (!access_.MayRead(authorization)) {
      return JsonError(401, "token missing or wrong: this tracker is private");
    }
    return Get(*name);
  }
  if ((method != "PUT" && method != "DELETE") || name->empty()) {
    return JsonError(405, "method not allowed");
  }
  auto owner = access_.Writer(authorization, client);
  if (!owner) return JsonError(401, owner.error());
  if (!proto::IsValidSwarmName(*name)) {
    return JsonError(400, "invalid name: use " + std::string(proto::kSwarmNameRule));
  }
  if (method == "DELETE") return Remove(*name, *owner, client);
  return Deploy(*name, body, *owner, client);
}

HttpReply FleetHandler::Sync(std::string_view id, std::string_view body, std::string_view client) {
  if (!proto::IsValidAgentId(id)) {
    return JsonError(400, "invalid agent id: use " + std::string(proto::kAgentIdRule));
  }
  if (body.size() > kMaxBody) return JsonError(413, "body too large");
  const Json j = Json::parse(body, nullptr, false);
  if (!j.is_object()) return JsonError(400, "body must be a JSON object");
  AgentSync sync;
  sync.agent.id = std::string(id);
  if (j.contains("labels")) {
    const Json& l = j["labels"];
    if (!l.is_object() || l.size() > proto::kMaxLabels) {
      return JsonError(400, "labels: an object of at most " + std::to_string(proto::kMaxLabels) +
                                " KEY: VALUE strings");
    }
    for (const auto& [k, v] : l.items()) {
      if (!v.is_string() || !proto::IsValidLabelKey(k) ||
          !proto::IsValidLabelValue(v.get<std::string>())) {
        return JsonError(400, "labels: want " + std::string(proto::kLabelRule));
      }
      sync.agent.labels[k] = v.get<std::string>();
    }
  }
  if (j.contains("data_dir")) {
    if (!j["data_dir"].is_string() || !PlainText(j["data_dir"].get<std::string>(), kMaxDataDir)) {
      return JsonError(400, "data_dir: a string of at most 1024 printable bytes");
    }
    sync.agent.data_dir = j["data_dir"].get<std::string>();
  }
  if (j.contains("poll_seconds")) {
    const Json& p = j["poll_seconds"];
    if (!p.is_number_integer() || p.get<std::int64_t>() < 1 || p.get<std::int64_t>() > 3600) {
      return JsonError(400, "poll_seconds: an integer 1..3600");
    }
    sync.agent.poll_seconds = p.get<std::int64_t>();
  }
  if (j.contains("reports")) {
    const Json& rs = j["reports"];
    if (!rs.is_array() || rs.size() > kMaxReports) {
      return JsonError(400, "reports: an array of at most " + std::to_string(kMaxReports));
    }
    for (const Json& r : rs) {
      AgentSync::Item item;
      if (!r.is_object() || !r.contains("name") || !r["name"].is_string() ||
          !proto::IsValidSwarmName(r["name"].get<std::string>()) || !r.contains("info_hash") ||
          !r["info_hash"].is_string() ||
          !FromHex(r["info_hash"].get<std::string>(), item.info_hash) || !r.contains("state") ||
          !r["state"].is_string() || !IsValidReportState(r["state"].get<std::string>())) {
        return JsonError(400,
                         "reports: each {\"name\", \"info_hash\" (40 hex), \"state\" (pending, "
                         "fetching, done, failed), \"reason\", \"bytes\"}");
      }
      item.name = r["name"].get<std::string>();
      item.report.state = r["state"].get<std::string>();
      if (r.contains("reason")) {
        if (!r["reason"].is_string() || !PlainText(r["reason"].get<std::string>(), kMaxReason)) {
          return JsonError(400, "reports: reason is a string of at most 512 printable bytes");
        }
        item.report.reason = r["reason"].get<std::string>();
      }
      if (r.contains("bytes")) {
        if (!r["bytes"].is_number_integer() || r["bytes"].get<std::int64_t>() < 0) {
          return JsonError(400, "reports: bytes is an integer >= 0");
        }
        item.report.bytes = r["bytes"].get<std::int64_t>();
      }
      sync.reports.push_back(std::move(item));
    }
  }
  auto assignments = fleet_.Sync(std::move(sync), clock_.Now());
  if (!assignments) {
    if (assignments.error().status >= 500) {
      log_.Warning("agent " + std::string(id) + " from " + std::string(client) + ": " +
                   assignments.error().reason);
    }
    return JsonError(assignments.error().status, assignments.error().reason);
  }
  Json out;
  out["agent"] = std::string(id);
  out["assignments"] = Json::array();
  for (const Assignment& a : *assignments) {
    out["assignments"].push_back(
        Json{{"name", a.name}, {"info_hash", ToHex(a.info_hash)}, {"size", a.size}});
  }
  return JsonReply(200, out);
}

HttpReply FleetHandler::Deploy(std::string_view name, std::string_view body,
                               const std::string& owner, std::string_view client) {
  if (body.size() > kMaxBody) return JsonError(413, "body too large");
  const Json j = Json::parse(body, nullptr, false);
  if (!j.is_object() || !j.contains("to") || !j["to"].is_string()) {
    return JsonError(400, "body must be {\"to\": \"all\" | \"label=KEY=VALUE\" | \"N\"}");
  }
  auto target = proto::ParseDeployTarget(j["to"].get<std::string>());
  if (!target) return JsonError(400, target.error());
  auto ih = table_.Resolve(name);
  auto entry = ih ? table_.Entry(*ih) : std::nullopt;
  if (!ih || !entry || entry->name != name) {
    return JsonError(404, "unknown name: publish it (swarmcast seed) before deploying it");
  }
  Deployment d;
  d.name = std::string(name);
  d.info_hash = *ih;
  d.size = entry->size;
  d.target = *target;
  d.owner = owner;
  d.created = clock_.Now();
  auto created = fleet_.Deploy(d);
  if (!created) return JsonError(created.error().status, created.error().reason);
  log_.Info(std::string(*created ? "deployed " : "re-deployed ") + d.name + " " +
            ToHex(d.info_hash) + " to " + d.target.ToString() + " from " + std::string(client));
  auto view = fleet_.View(d.name);
  return JsonReply(*created ? 201 : 200,
                   view ? ViewJson(*view, clock_.Now(), false) : Json::object());
}

HttpReply FleetHandler::Remove(std::string_view name, const std::string& owner,
                               std::string_view client) {
  auto gone = fleet_.Remove(std::string(name), owner);
  if (!gone) return JsonError(gone.error().status, gone.error().reason);
  log_.Info("removed deployment " + gone->name + " from " + std::string(client));
  return JsonReply(
      200, Json{{"name", gone->name}, {"info_hash", ToHex(gone->info_hash)}, {"deleted", true}});
}

HttpReply FleetHandler::ListAgents() const {
  const std::int64_t now = clock_.Now();
  Json list = Json::array();
  for (const AgentRecord& a : fleet_.Agents()) {
    Json j;
    j["agent"] = a.id;
    j["labels"] = Json::object();
    for (const auto& [k, v] : a.labels) j["labels"][k] = v;
    j["data_dir"] = a.data_dir;
    j["poll_seconds"] = a.poll_seconds;
    j["first_seen"] = a.first_seen;
    j["last_seen"] = a.last_seen;
    j["silent"] = now - a.last_seen > SilentAfter(a.poll_seconds);
    list.push_back(std::move(j));
  }
  return JsonReply(200, Json{{"agents", std::move(list)}});
}

HttpReply FleetHandler::Get(std::string_view name) const {
  const std::int64_t now = clock_.Now();
  if (name.empty()) {
    Json list = Json::array();
    for (const DeploymentView& v : fleet_.List()) list.push_back(ViewJson(v, now, false));
    return JsonReply(200, Json{{"deployments", std::move(list)}});
  }
  auto view = fleet_.View(std::string(name));
  if (!view) return JsonError(404, "unknown deployment");
  return JsonReply(200, ViewJson(*view, now, true));
}

}  // namespace swarmcast::tracker
