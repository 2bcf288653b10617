"""The swarm benchmark (tools/bench/run-bench): LAN emulator, systems, runner, report."""
