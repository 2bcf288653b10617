"""Fault cells: a process of the run is killed (SIGKILL) while it runs.

- seed-kill: the seed is killed as soon as one receiver holds a whole
  verified copy (the system's own done signal). Every receiver must still
  finish, from the copies the others hold.
- forwarder-kill: receiver 1 is killed once it has received about half of
  the file's bytes (its namespace's eth0 rx counter, so the same rule holds
  for every system), and, with swarmcast-push-forward, only once its log
  says it forwards. It is not restarted and not counted: the fault under
  test is the loss of a forwarder's uplink and of the pieces assigned to
  it, and the run measures whether the other N-1 still finish, correct and
  on time. (A restart would mix in resume and the restart delay; a machine
  that dies rarely returns within seconds.) Its partial file is no copy,
  so it is neither timed nor sha256-checked; the other N-1 are.

A Fault is driven by the runner's wait loop: step() each turn. It knows
nothing of the systems beyond System.seed, System.receivers and
System.killed (processes whose death is the fault, not a failure).
"""

import os
import signal
import time

KINDS = ("seed-kill", "forwarder-kill")
VICTIM = 1  # forwarder-kill's receiver
FORWARDING_LINE = "push: forwarding on port"


def rx_bytes(pid):
    """Bytes received on eth0 of the network namespace process `pid` is in
    (/proc/PID/net/dev shows that process's namespace), or None."""
    try:
        with open(f"/proc/{pid}/net/dev") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name.strip() == "eth0":
                    return int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return None


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # our own child's session, by id
    except ProcessLookupError:
        pass


class Fault:
    def __init__(self, kind, size, n):
        if kind not in KINDS:
            raise ValueError(f"fault must be one of {', '.join(KINDS)}, got {kind!r}")
        if kind == "forwarder-kill" and n < 2:
            raise ValueError("fault=forwarder-kill needs N >= 2 (one receiver dies)")
        self.kind, self.size, self.n = kind, size, n
        self.fired_at = None  # monotonic time of the kill
        self.note = ""
        self.rx_at_start = None

    def excluded(self):
        """Receivers (1..N) that are not timed nor checked."""
        return {VICTIM} if self.kind == "forwarder-kill" and self.fired_at is not None else set()

    def step(self, system, done, t0):
        """Called every turn of the wait loop, `done` = {receiver: time}."""
        if self.fired_at is not None:
            return
        if self.kind == "seed-kill":
            if done and system.seed is not None:
                first = min(done, key=done.get)
                kill(system.seed)
                system.killed.add(system.seed)
                self.fired_at = time.monotonic()
                self.note = (f"seed killed at {self.fired_at - t0:.2f}s, after r{first}'s copy "
                             f"({done[first] - t0:.2f}s)")
            return
        victim = system.receivers[VICTIM - 1] if len(system.receivers) >= VICTIM else None
        if victim is None or victim.returncode() is not None or VICTIM in done:
            return  # not started, or gone or done by itself: the fault did not fire
        rx = rx_bytes(victim.pid)
        if rx is None:
            return
        if self.rx_at_start is None:
            self.rx_at_start = rx
        got = rx - self.rx_at_start
        if got < self.size // 2:
            return
        forwarding = victim.find(lambda s: FORWARDING_LINE in s) is not None
        if system.name == "swarmcast-push-forward" and not forwarding:
            if got < self.size:  # wait for it to forward, up to a whole file's bytes
                return
        kill(victim)
        system.killed.add(victim)
        self.fired_at = time.monotonic()
        self.note = (f"r{VICTIM} killed at {self.fired_at - t0:.2f}s after {got / (1 << 20):.1f} "
                     f"MiB received{' (forwarding)' if forwarding else ''}; not counted")
