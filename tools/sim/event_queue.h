// Timed events of the simulation, earliest first; events at the same time
// come out in the order they were scheduled, so a run is deterministic
// whatever the heap does with ties.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "tools/sim/sim_time.h"

namespace swarmcast::sim {

enum class EventKind : std::uint8_t {
  kNodeJoins,       // a receiver's start-up is over: it subscribes and joins the swarm
  kPieceVerified,   // a received piece passed its hash check
  kBitTorrentTick,  // periodic retry of idle BitTorrent upload slots
};

struct Event {
  double time = 0;
  EventKind kind = EventKind::kNodeJoins;
  std::uint32_t node = 0;
  std::uint32_t piece = 0;
};

class EventQueue {
 public:
  void Schedule(const Event& e) { heap_.push({e, next_seq_++}); }
  bool empty() const { return heap_.empty(); }
  double next_time() const { return heap_.empty() ? kNever : heap_.top().event.time; }
  Event Pop() {
    Event e = heap_.top().event;
    heap_.pop();
    return e;
  }
  std::size_t size() const { return heap_.size(); }

 private:
  struct Entry {
    Event event;
    std::uint64_t seq;
    // std::priority_queue is a max-heap: "less" means "later".
    bool operator<(const Entry& o) const {
      if (event.time != o.event.time) return event.time > o.event.time;
      return seq > o.seq;
    }
  };
  std::priority_queue<Entry> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace swarmcast::sim
