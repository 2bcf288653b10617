"""Fault cells: a process of the run is killed (SIGKILL) while it runs.

- seed-kill: the seed is killed as soon as one receiver holds a whole
  verified copy (the system's own done signal). Every receiver must still
  finish, from the copies the others hold. The note gives how much of the
  file's size the others had received on eth0 at that moment (headers
  and duplicates included, so 100% does not mean a receiver needed
  nothing more: one took 4.6 s more after the kill); if every receiver
  was done by then (udpcast's receivers finish together), the kill tested
  nothing and the run is "fault-missed", not ok.
- forwarder-kill: receiver 1 is killed once it has received about half of
  the file's bytes (its namespace's eth0 rx counter, so the same rule holds
  for every system), and, where swarmcast's gets forward (a chain's links,
  the default since session 18, or --forward), only once its log says it
  forwards. It is not restarted and not counted: the fault under
  test is the loss of a forwarder's uplink and of the pieces assigned to
  it, and the run measures whether the other N-1 still finish, correct and
  on time. (A restart would mix in resume and the restart delay; a machine
  that dies rarely returns within seconds.) Its partial file is no copy,
  so it is neither timed nor sha256-checked; the other N-1 are.

A Fault is driven by the runner's wait loop: step() each turn. It knows
nothing of the systems beyond System.seed, System.receivers and
System.killed (processes whose death is the fault, not a failure).
"""

import json
import os
import signal
import subprocess
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


def rx_by_host(lan):
    """{host index: bytes it received} for every host, from the tx counters
    of the bridge's ports (p<i>): one `ip` call, and it works whether or not
    the host's processes still run. {} when `ip` fails."""
    try:
        r = subprocess.run(["ip", "-n", lan.bridge_ns, "-j", "-s", "link", "show"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=10)
        out = {}
        for link in json.loads(r.stdout or "[]"):
            name = link.get("ifname", "")
            if name.startswith("p") and name[1:].isdigit():
                out[int(name[1:])] = int(link["stats64"]["tx"]["bytes"])
        return out
    except (OSError, ValueError, KeyError, TypeError, subprocess.TimeoutExpired):
        return {}


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # our own child's session, by id
    except ProcessLookupError:
        pass


class Fault:
    def __init__(self, kind, size, n, lan):
        if kind not in KINDS:
            raise ValueError(f"fault must be one of {', '.join(KINDS)}, got {kind!r}")
        if kind == "forwarder-kill" and n < 2:
            raise ValueError("fault=forwarder-kill needs N >= 2 (one receiver dies)")
        self.kind, self.size, self.n, self.lan = kind, size, n, lan
        self.fired_at = None  # monotonic time of the kill
        self.missed = False  # it fired, but when no receiver needed the seed any more
        self.note = ""
        self.rx_at_start = None  # forwarder-kill: the victim's eth0 rx at the first step
        self.rx_base = {}  # seed-kill: each receiver's eth0 rx at the first step

    def excluded(self):
        """Receivers (1..N) that are not timed nor checked."""
        return {VICTIM} if self.kind == "forwarder-kill" and self.fired_at is not None else set()

    def step(self, system, done, t0):
        """Called every turn of the wait loop, `done` = {receiver: time}."""
        if self.fired_at is not None:
            return
        if self.kind == "seed-kill":
            if not self.rx_base:
                self.rx_base = rx_by_host(self.lan) or {"failed": 0}
            if done and system.seed is not None:
                first = min(done, key=done.get)
                kill(system.seed)
                system.killed.add(system.seed)
                self.fired_at = time.monotonic()
                # How much the others still needed: a kill that lands when
                # they all hold (nearly) everything tests nothing.
                left = [i for i in range(1, len(system.receivers) + 1) if i not in done]
                now = rx_by_host(self.lan)
                got = [min(1.0, (now[i] - self.rx_base[i]) / self.size)
                       for i in left if i in now and i in self.rx_base]
                self.note = (f"seed killed at {self.fired_at - t0:.2f}s, after r{first}'s copy "
                             f"({done[first] - t0:.2f}s); ")
                if not left:
                    self.missed = True  # it tested nothing
                    self.note += "every receiver was done by then"
                elif got:
                    self.note += (f"the other {len(left)} had received {min(got):.0%}-"
                                  f"{max(got):.0%} of the size on eth0")
                else:
                    self.note += f"{len(left)} not done yet"
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
        if getattr(system, "gets_forward", False) and not forwarding:
            if got < self.size:  # wait for it to forward, up to a whole file's bytes
                return
        kill(victim)
        system.killed.add(victim)
        self.fired_at = time.monotonic()
        self.note = (f"r{VICTIM} killed at {self.fired_at - t0:.2f}s after {got / (1 << 20):.1f} "
                     f"MiB received{' (forwarding)' if forwarding else ''}; not counted")
