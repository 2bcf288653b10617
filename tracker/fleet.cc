#include "tracker/fleet.h"

namespace swarmcast::tracker {
namespace {

// A last_seen that moved by less than this is not worth a database write:
// after a restart an agent counts as silent only until its next sync.
constexpr std::int64_t kSeenRefreshSeconds = 60;

}  // namespace

void Fleet::Restore(Deployment d) {
  MutexLock lock(mu_);
  std::string name = d.name;
  deployments_[name] = std::move(d);
}

void Fleet::Restore(AgentRecord a) {
  MutexLock lock(mu_);
  saved_seen_[a.id] = a.last_seen;
  std::string id = a.id;
  agents_[id] = std::move(a);
}

void Fleet::Restore(const std::string& deployment, const std::string& agent, AgentReport r) {
  MutexLock lock(mu_);
  reports_[{deployment, agent}] = std::move(r);
}

Result<bool, FleetError> Fleet::Deploy(Deployment d) {
  MutexLock lock(mu_);
  auto it = deployments_.find(d.name);
  const bool created = it == deployments_.end();
  if (!created && it->second.owner != d.owner) {
    return Unexpected(FleetError{403, "deployment '" + d.name + "' belongs to another publisher"});
  }
  if (created && deployments_.size() >= limits_.max_deployments) {
    return Unexpected(FleetError{503, "deployment limit reached"});
  }
  // Same content and target again: keep what agents reported.
  const bool reset = created || it->second.info_hash != d.info_hash ||
                     it->second.target.ToString() != d.target.ToString();
  if (!created) d.created = it->second.created;
  if (store_ && !store_->SaveDeployment(d, reset)) {
    return Unexpected(FleetError{500, "database write failed"});
  }
  if (reset) {
    auto first = reports_.lower_bound({d.name, std::string()});
    auto last = first;
    while (last != reports_.end() && last->first.first == d.name) ++last;
    reports_.erase(first, last);
  }
  deployments_[d.name] = std::move(d);
  return created;
}

Result<Deployment, FleetError> Fleet::Remove(const std::string& name, const std::string& owner) {
  MutexLock lock(mu_);
  auto it = deployments_.find(name);
  if (it == deployments_.end()) return Unexpected(FleetError{404, "unknown deployment"});
  if (it->second.owner != owner) {
    return Unexpected(FleetError{403, "deployment '" + name + "' belongs to another publisher"});
  }
  if (store_ && !store_->DeleteDeployment(name)) {
    return Unexpected(FleetError{500, "database write failed"});
  }
  Deployment gone = std::move(it->second);
  deployments_.erase(it);
  auto first = reports_.lower_bound({name, std::string()});
  auto last = first;
  while (last != reports_.end() && last->first.first == name) ++last;
  reports_.erase(first, last);
  return gone;
}

std::size_t Fleet::Chosen(const std::string& deployment) const {
  std::size_t n = 0;
  for (auto it = reports_.lower_bound({deployment, std::string()});
       it != reports_.end() && it->first.first == deployment; ++it) {
    ++n;
  }
  return n;
}

bool Fleet::Assigned(const Deployment& d, const AgentRecord& a) const {
  if (d.target.kind != proto::DeployTarget::Kind::kCount) return d.target.Matches(a.labels);
  return reports_.count({d.name, a.id}) > 0;
}

Result<std::vector<Assignment>, FleetError> Fleet::Sync(AgentSync sync, std::int64_t now) {
  MutexLock lock(mu_);
  const std::string id = sync.agent.id;
  auto it = agents_.find(id);
  if (it == agents_.end() && agents_.size() >= limits_.max_agents) {
    return Unexpected(FleetError{503, "agent limit reached"});
  }
  bool changed = it == agents_.end();
  if (changed) {
    sync.agent.first_seen = now;
  } else {
    const AgentRecord& old = it->second;
    sync.agent.first_seen = old.first_seen;
    changed = old.labels != sync.agent.labels || old.data_dir != sync.agent.data_dir ||
              old.poll_seconds != sync.agent.poll_seconds;
  }
  sync.agent.last_seen = now;
  if (changed || now - saved_seen_[id] >= kSeenRefreshSeconds) {
    if (store_ && !store_->SaveAgent(sync.agent)) {
      return Unexpected(FleetError{500, "database write failed"});
    }
    saved_seen_[id] = now;
  }
  const AgentRecord& agent = agents_[id] = std::move(sync.agent);

  std::vector<Assignment> out;
  for (const auto& [name, d] : deployments_) {
    bool assigned = Assigned(d, agent);
    if (!assigned && d.target.kind == proto::DeployTarget::Kind::kCount &&
        Chosen(name) < static_cast<std::size_t>(d.target.count)) {
      // Chosen now: recorded, so the same N agents keep it after a restart.
      AgentReport pending;
      pending.updated = now;
      if (store_ && !store_->SaveReport(name, id, pending)) continue;
      reports_[{name, id}] = pending;
      assigned = true;
    }
    if (assigned) out.push_back({name, d.info_hash, d.size});
  }
  for (AgentSync::Item& item : sync.reports) {
    auto dep = deployments_.find(item.name);
    if (dep == deployments_.end() || dep->second.info_hash != item.info_hash ||
        !Assigned(dep->second, agent)) {
      continue;  // about something no longer (or never) deployed to it
    }
    AgentReport& slot = reports_[{item.name, id}];
    if (slot.state == item.report.state && slot.reason == item.report.reason &&
        slot.bytes == item.report.bytes && slot.updated != 0) {
      continue;
    }
    item.report.updated = now;
    if (store_ && !store_->SaveReport(item.name, id, item.report)) continue;
    slot = std::move(item.report);
  }
  return out;
}

DeploymentView Fleet::ViewLocked(const Deployment& d) const {
  DeploymentView v;
  v.deployment = d;
  for (const auto& [id, a] : agents_) {
    if (!Assigned(d, a)) continue;
    auto r = reports_.find({d.name, id});
    v.agents.push_back({a, r == reports_.end() ? AgentReport{} : r->second});
  }
  return v;
}

std::optional<DeploymentView> Fleet::View(const std::string& name) const {
  MutexLock lock(mu_);
  auto it = deployments_.find(name);
  if (it == deployments_.end()) return std::nullopt;
  return ViewLocked(it->second);
}

std::vector<DeploymentView> Fleet::List() const {
  MutexLock lock(mu_);
  std::vector<DeploymentView> out;
  for (const auto& [name, d] : deployments_) out.push_back(ViewLocked(d));
  return out;
}

std::size_t Fleet::agents() const {
  MutexLock lock(mu_);
  return agents_.size();
}

std::vector<AgentRecord> Fleet::Agents() const {
  MutexLock lock(mu_);
  std::vector<AgentRecord> out;
  for (const auto& [id, a] : agents_) out.push_back(a);
  return out;
}

}  // namespace swarmcast::tracker
