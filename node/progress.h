// What a running transfer shows: a one-line bar on a terminal, a plain line
// every few seconds otherwise, and the JSON the status file and `--json`
// carry. Pure formatting; the control thread owns every snapshot.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace swarmcast::node {

struct ProgressSnapshot {
  std::string role;  // "seed" or "get"
  std::string name;  // torrent name
  std::string info_hash;
  std::string state;  // "checking", "downloading", "seeding", "lingering", ...
  std::int64_t total_bytes = 0;
  std::int64_t done_bytes = 0;
  std::int64_t pieces_total = 0;
  std::int64_t pieces_done = 0;
  std::int64_t downloaded_bytes = 0;  // payload received by this process
  std::int64_t uploaded_bytes = 0;    // payload sent by this process
  double down_rate = 0;               // bytes/s, payload
  double up_rate = 0;
  int peers = 0;
  int seeds = 0;
  double elapsed_seconds = 0;
};

// Seconds left at the current rate; negative when unknown.
double EtaSeconds(const ProgressSnapshot& s);

// "[#####.....]  45.0%  115.2 MiB/256.0 MiB  down 98.1 MiB/s  ETA 2s
//  up 12.0 MiB/s  peers 4  downloading", at most `width` columns: on a
// narrow terminal the last items go first, then the bar narrows or goes.
// No line ending.
std::string RenderBar(const ProgressSnapshot& s, int width);

// The width of the terminal on `fd` (80 when it is not one or will not say).
int TerminalColumns(int fd);

// "get disk.img: 45.0% 115.2 MiB/256.0 MiB down 98.1 MiB/s up 0 B/s peers 4
//  ETA 2s (t=3s)": the line logged every few seconds when not on a TTY.
std::string RenderLine(const ProgressSnapshot& s);

// The snapshot as a JSON object, as the status file carries it (see
// node/status_file.h). `extra`: an object whose members are added (e.g.
// the push channel's state); anything else is ignored.
nlohmann::json SnapshotJson(const ProgressSnapshot& s, const std::string& path,
                            const nlohmann::json& extra = nullptr);

}  // namespace swarmcast::node
