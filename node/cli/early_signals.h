// SIGINT/SIGTERM between the moment a seed publishes and the moment
// RunTransfer takes the signals over (its asio::signal_set): without a
// handler the default action killed the process (exit -15) although the
// swarm was already joinable. CatchStopSignals() installs a handler that
// only records the signal; RunTransfer asks StopSignalled() once its own
// handling is in place and stops as for any signal. A second signal before
// then exits at once. Both commands install it again once RunTransfer has
// returned (asio's signal_set puts back the default action when it goes),
// so that a signal cannot kill the process before its report is out.
#pragma once

namespace swarmcast::node::cli {

void CatchStopSignals();
bool StopSignalled();

}  // namespace swarmcast::node::cli
