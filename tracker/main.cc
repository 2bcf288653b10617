// swarmcast-tracker: see tracker/README.md and --help.
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "proto/log.h"
#include "tracker/config.h"
#include "tracker/tracker_app.h"

int main(int argc, char** argv) {
  try {
    auto cl = swarmcast::tracker::ParseCommandLine(argc, argv);
    if (!cl) {
      std::cerr << "swarmcast-tracker: " << cl.error() << "\n";
      return 2;
    }
    if (cl->exit_now) {
      std::cout << cl->text;
      return 0;
    }
    // One fwrite per line: stderr is unbuffered, so a line leaves in one
    // write(2) and lines from different threads do not interleave.
    swarmcast::proto::Logger log("swarmcast-tracker", cl->config.log_level,
                                 [](std::string_view line) {
                                   std::string s;
                                   s.reserve(line.size() + 1);
                                   s.append(line);
                                   s.push_back('\n');
                                   std::fwrite(s.data(), 1, s.size(), stderr);
                                 });
    return swarmcast::tracker::RunTracker(cl->config, log);
  } catch (const std::exception& e) {
    std::cerr << "swarmcast-tracker: fatal: " << e.what() << "\n";
    return 1;
  }
}
