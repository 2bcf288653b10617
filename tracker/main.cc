// swarmcast-tracker: see tracker/README.md and --help.
#include <exception>
#include <iostream>

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
    return swarmcast::tracker::RunTracker(cl->config);
  } catch (const std::exception& e) {
    std::cerr << "swarmcast-tracker: fatal: " << e.what() << "\n";
    return 1;
  }
}
