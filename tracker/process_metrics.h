// The tracker's build and process metrics for GET /metrics, in the names
// Prometheus client libraries use for every process (so stock dashboards
// and alerts apply): swarmcast_build_info{version}, process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes,
// process_open_fds, process_max_fds, process_start_time_seconds.
//
// Reads /proc/self (stat, fd/, limits) and /proc/stat's btime at each call;
// a value that cannot be read is left out rather than reported as 0.
// Thread-safe (no state).
#pragma once

#include <string>

namespace swarmcast::tracker {

// Appends the families to `out`.
void RenderProcessMetrics(std::string& out);

}  // namespace swarmcast::tracker
