#include "node/cli/early_signals.h"

#include <unistd.h>

#include <csignal>

namespace swarmcast::node::cli {
namespace {

volatile std::sig_atomic_t g_signalled = 0;

extern "C" void RecordStopSignal(int sig) {
  if (g_signalled != 0) ::_exit(128 + sig);  // async-signal-safe
  g_signalled = 1;
}

}  // namespace

void CatchStopSignals() {
  struct sigaction sa {};
  sa.sa_handler = RecordStopSignal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

bool StopSignalled() { return g_signalled != 0; }

}  // namespace swarmcast::node::cli
