#include "tools/sim/flow_network.h"

#include <algorithm>

namespace swarmcast::sim {

namespace {
// Bytes below this count as delivered: float error of rate x time.
constexpr double kByteEpsilon = 1e-3;
}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity, double solve_interval)
    : capacity_(std::move(capacity)),
      allocated_(capacity_.size(), 0.0),
      solve_interval_(solve_interval) {}

FlowNetwork::Flow* FlowNetwork::Find(FlowId id) {
  const auto slot = static_cast<std::uint32_t>(id);
  if (slot >= flows_.size()) return nullptr;
  Flow& f = flows_[slot];
  return f.alive && f.generation == static_cast<std::uint32_t>(id >> 32) ? &f : nullptr;
}

const FlowNetwork::Flow* FlowNetwork::Find(FlowId id) const {
  return const_cast<FlowNetwork*>(this)->Find(id);
}

bool FlowNetwork::Alive(FlowId id) const { return Find(id) != nullptr; }

double FlowNetwork::rate(FlowId id) const {
  const Flow* f = Find(id);
  return f ? f->rate : 0.0;
}

void FlowNetwork::Drain(Flow& f, double now) {
  f.remaining = std::max(0.0, f.remaining - f.rate * (now - f.since));
  f.since = now;
}

void FlowNetwork::SetRate(std::uint32_t slot, double rate, double now) {
  Flow& f = flows_[slot];
  Drain(f, now);
  for (int k = 0; k < f.path.count; ++k) allocated_[f.path.links[k]] += rate - f.rate;
  f.rate = rate;
  ++f.version;
  if (f.remaining <= kByteEpsilon) {
    completions_.push({now, slot, f.version});
  } else if (rate > 0) {
    completions_.push({now + f.remaining / rate, slot, f.version});
  }
}

FlowId FlowNetwork::Start(const FlowPath& path, double bytes, FlowTag tag, double now) {
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[slot];
  f.path = path;
  f.tag = tag;
  f.total = bytes;
  f.remaining = bytes;
  f.rate = 0;
  f.since = now;
  f.alive = true;
  ++active_;
  dirty_ = true;
  double rate = 0;
  if (!exact()) {
    // Aggregated mode: take what the links have spare until the next solve.
    rate = kNever;
    for (int k = 0; k < path.count; ++k) {
      const LinkId l = path.links[k];
      rate = std::min(rate, std::max(0.0, capacity_[l] - allocated_[l]));
    }
  }
  SetRate(slot, rate, now);
  return (static_cast<FlowId>(f.generation) << 32) | slot;
}

void FlowNetwork::Release(std::uint32_t slot) {
  Flow& f = flows_[slot];
  for (int k = 0; k < f.path.count; ++k) allocated_[f.path.links[k]] -= f.rate;
  f.rate = 0;
  f.alive = false;
  ++f.generation;
  ++f.version;
  free_.push_back(slot);
  --active_;
  dirty_ = true;
}

double FlowNetwork::Cancel(FlowId id, double now) {
  Flow* f = Find(id);
  if (!f) return 0;
  Drain(*f, now);
  const double moved = f->total - f->remaining;
  Release(static_cast<std::uint32_t>(id));
  return moved;
}

double FlowNetwork::NextCompletion() {
  while (!completions_.empty()) {
    const Completion& c = completions_.top();
    const Flow& f = flows_[c.slot];
    if (f.alive && f.version == c.version) return c.time;
    completions_.pop();  // stale: the flow ended or its rate changed
  }
  return kNever;
}

std::optional<FinishedFlow> FlowNetwork::PopCompleted(double now) {
  if (NextCompletion() > now) return std::nullopt;
  const Completion c = completions_.top();
  completions_.pop();
  Flow& f = flows_[c.slot];
  FinishedFlow done{(static_cast<FlowId>(f.generation) << 32) | c.slot, f.tag, f.total};
  Release(c.slot);
  return done;
}

void FlowNetwork::Resolve(double now) {
  std::vector<FlowPath> paths;
  std::vector<std::uint32_t> slots;
  paths.reserve(active_);
  slots.reserve(active_);
  for (std::uint32_t s = 0; s < flows_.size(); ++s) {
    if (!flows_[s].alive) continue;
    paths.push_back(flows_[s].path);
    slots.push_back(s);
  }
  const std::vector<double> rates = SolveMaxMin(capacity_, paths);
  // Rebuilt from scratch in one heapify: every completion time changes,
  // and a fresh heap sheds the stale entries.
  std::fill(allocated_.begin(), allocated_.end(), 0.0);
  std::vector<Completion> due;
  due.reserve(slots.size());
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Flow& f = flows_[slots[i]];
    Drain(f, now);
    f.rate = rates[i];
    ++f.version;
    for (int k = 0; k < f.path.count; ++k) allocated_[f.path.links[k]] += f.rate;
    if (f.remaining <= kByteEpsilon) {
      due.push_back({now, slots[i], f.version});
    } else if (f.rate > 0) {
      due.push_back({now + f.remaining / f.rate, slots[i], f.version});
    }
  }
  completions_ = std::priority_queue<Completion>(std::less<Completion>{}, std::move(due));
  dirty_ = false;
  last_solve_ = now;
  ++solves_;
}

double FlowNetwork::NextSolveTime() const {
  if (!dirty_) return kNever;
  return exact() ? last_solve_ : last_solve_ + solve_interval_;
}

}  // namespace swarmcast::sim
