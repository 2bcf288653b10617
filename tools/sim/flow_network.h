// The TCP flows in flight and their max-min fair rates over time.
//
// A flow moves a fixed number of bytes along a path of links. Rates are
// piecewise constant: Resolve() gives every flow its max-min fair rate
// (max_min.h), and between two solves each flow's bytes drain linearly, so
// the next completion is known exactly.
//
// Two modes, chosen by `solve_interval`:
// - 0 (exact): the caller resolves after every change, before time moves
//   on. Every flow event sees the exact max-min allocation.
// - > 0 (aggregated, for thousands of nodes): a change does not resolve. A
//   new flow starts at the spare capacity its links have left (so no link
//   is ever overfilled, and a flow replacing one that just ended on the same
//   links gets its rate back), and the whole allocation is resolved at most
//   once per `solve_interval` of simulated time.
//
// Not thread-safe; owned by the simulation loop.
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
#include <vector>

#include "tools/sim/max_min.h"
#include "tools/sim/sim_time.h"

namespace swarmcast::sim {

enum class FlowKind : std::uint8_t { kPush, kBitTorrent };

// What a flow carries, for the caller's bookkeeping.
struct FlowTag {
  FlowKind kind = FlowKind::kPush;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint32_t piece = 0;
};

// Slot index in the low 32 bits, the slot's generation in the high 32, so
// an id of a finished flow never names a later one.
using FlowId = std::uint64_t;

struct FinishedFlow {
  FlowId id = 0;
  FlowTag tag;
  double bytes = 0;
};

class FlowNetwork {
 public:
  FlowNetwork(std::vector<double> capacity, double solve_interval);

  FlowId Start(const FlowPath& path, double bytes, FlowTag tag, double now);
  // Ends a flow before it completes; returns the bytes it had moved.
  double Cancel(FlowId id, double now);
  bool Alive(FlowId id) const;

  // Time of the earliest completion at the current rates (kNever if none).
  double NextCompletion();
  // The earliest flow if it completes at or before `now`.
  std::optional<FinishedFlow> PopCompleted(double now);

  // Max-min rates for every flow, from `now` on.
  void Resolve(double now);
  // Whether flows changed since the last solve, and when the next solve is
  // due (exact mode: at once; aggregated: one interval after the last).
  bool dirty() const { return dirty_; }
  double NextSolveTime() const;
  bool exact() const { return solve_interval_ <= 0; }

  std::size_t active() const { return active_; }
  std::uint64_t solves() const { return solves_; }
  double rate(FlowId id) const;

 private:
  struct Flow {
    FlowPath path;
    FlowTag tag;
    double total = 0;
    double remaining = 0;  // as of `since`
    double rate = 0;
    double since = 0;
    std::uint32_t generation = 0;
    std::uint32_t version = 0;  // bumps when the completion time changes
    bool alive = false;
  };
  struct Completion {
    double time;
    std::uint32_t slot;
    std::uint32_t version;
    bool operator<(const Completion& o) const { return time > o.time; }  // min-heap
  };

  Flow* Find(FlowId id);
  const Flow* Find(FlowId id) const;
  void Drain(Flow& f, double now);
  void SetRate(std::uint32_t slot, double rate, double now);
  void Release(std::uint32_t slot);

  std::vector<double> capacity_;
  std::vector<double> allocated_;  // sum of the rates of the flows on each link
  double solve_interval_;
  double last_solve_ = 0;
  bool dirty_ = false;
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_;
  std::priority_queue<Completion> completions_;
  std::size_t active_ = 0;
  std::uint64_t solves_ = 0;
};

}  // namespace swarmcast::sim
