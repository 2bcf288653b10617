"""The emulated LAN: N+1 hosts in network namespaces on one bridge.

Each host h<i> is a network namespace with one interface eth0 at
10.77.0.<i+1>/24; the bridge br0 lives in a namespace of its own and holds
the other end of every veth pair (p<i>). Nothing is created in the root
namespace, so no address, route or packet of the LAN can reach anything
outside it. With a rate, every link is shaped in both directions with tbf:
on the host's eth0 (its upload) and on the bridge's p<i> (its download).
`host_rates` gives some hosts a link of another rate (a seed on a faster
NIC, one receiver on a slow one); 0 there leaves that link unshaped.

Namespace names start with PREFIX (default "swb-<pid>-"), so that parallel
runs do not collide and leftovers of a killed run can be found and removed
(`down_stale`).
"""

import os
import re
import signal
import subprocess
import time

NAME_PREFIX = "swb-"
SUBNET = "10.77.0"

# tbf's bucket, in bytes, at the least. tbf splits every packet longer than
# its bucket into single segments (tbf_segment), and a qdisc counts a GSO
# packet as its payload plus the headers of every segment: a full 64 KiB GSO
# packet is about 68 KB there. With a 64 KiB bucket, every full-sized packet
# of a fast TCP sender became 45 one-segment packets, each of which crossed
# veth, the bridge and the receiver's stack alone (no GRO on veth), where a
# real NIC segments in hardware and a real receiver coalesces again; that
# alone doubled swarmcast's CPU per byte at N = 8-16 (docs/benchmarks.md,
# "tbf split every full GSO packet"). 128 KiB holds any GSO packet of a
# 64 KiB gso_max_size, and adds at most 128 KiB of burst after an idle link.
DEFAULT_TBF_BURST = 128 * 1024
MIN_TBF_BURST = 4 * 1024
MAX_TBF_BURST = 16 * 1024 * 1024
# A bucket below this does not hold a full GSO packet (64 KiB of payload and
# the headers of its 45 segments): the hosts' GSO packets are then capped
# to fit (Lan._cap_gso), so that tbf still never splits one.
FULL_GSO_PACKET = 68 * 1024


def _run(args, check=True):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {r.stderr.strip()}")
    return r


def parse_rate(rate):
    """'100mbit' -> bits/s; '0', '' or 'none' -> 0 (unshaped)."""
    if rate in (None, "", "0", "none", "unshaped"):
        return 0
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(k|m|g)?bit", rate.lower())
    if not m:
        raise ValueError(f"rate must look like 100mbit, got {rate!r}")
    return int(float(m.group(1)) * {None: 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2)])


class Lan:
    def __init__(self, hosts, rate_bps, prefix=None, host_rates=None, tcp_congestion=None,
                 tbf_burst=DEFAULT_TBF_BURST):
        if not 2 <= hosts <= 200:
            raise ValueError("hosts must be 2..200")
        self.hosts = hosts
        self.rate_bps = rate_bps
        self.host_rates = dict(host_rates or {})
        # None: what a new namespace gets (the machine's default).
        self.tcp_congestion = tcp_congestion
        self.tbf_burst = tbf_burst
        self.prefix = prefix or f"{NAME_PREFIX}{os.getpid()}-"
        self.bridge_ns = self.prefix + "br"
        self.created = []

    def ns(self, i):
        return f"{self.prefix}h{i}"

    def ip(self, i):
        return f"{SUBNET}.{i + 1}"

    def mac(self, i):
        # Fixed, locally administered: the static neighbour entries need it.
        return f"02:77:00:00:{(i >> 8) & 0xff:02x}:{i & 0xff:02x}"

    def rate_of(self, i):
        return self.host_rates.get(i, self.rate_bps)

    def _shape(self, ns, dev, rate_bps, host_queue):
        """Limit dev's egress to rate_bps.

        burst: at least tbf_burst (DEFAULT_TBF_BURST: a whole GSO packet) and
        ~2 ms of traffic.
        host_queue=False is a switch port toward a host: a tail-drop buffer
        of ~20 ms (plus 64 KiB). host_queue=True is the host's own
        uplink: a real host queues in its qdisc (pfifo_fast's 1000 packets
        here; this kernel has no fq_codel) in front of the NIC, and TCP's
        small-queue limit keeps its sockets from filling it, so it delays a
        packet rather than drops it. With the switch port's buffer on the
        uplink too, a sender that kept that queue full (the seed's push)
        lost the small replies of a tracker on the same host for seconds,
        and udpcast lost multicast packets a host would only have delayed."""
        if not rate_bps:
            return
        burst = max(self.tbf_burst, rate_bps // 8 // 500)
        # The switch port's buffer stays what `latency 20ms` made of the old
        # 64 KiB bucket (20 ms of traffic plus the bucket): a larger bucket
        # changes which packets tbf splits, not how much a port holds.
        limit = rate_bps // 8 * 20 // 1000 + max(64 * 1024, rate_bps // 8 // 500)
        _run(["tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "handle", "1:", "tbf",
              "rate", str(rate_bps), "burst", str(burst), "limit", str(limit)])
        if host_queue:
            _run(["tc", "-n", ns, "qdisc", "add", "dev", dev, "parent", "1:1", "pfifo_fast"])

    def _cap_gso(self, ns):
        """With a bucket smaller than a full GSO packet, caps the host's GSO
        packets to half the bucket (room for every segment's headers), so
        that tbf never splits one into single segments (see
        DEFAULT_TBF_BURST) and the bucket alone sets the burst.

        Why a small bucket: tbf sends up to a bucket at once after the link
        was idle, so a 128 KiB bucket lets a 64 KiB piece cross a 10 Mbit/s
        hop in one go (0 ms) where a real link takes 52 ms to serialize it,
        and a chain that forwards whole pieces pays that once a hop
        (docs/benchmarks.md, "What the bucket hid: a chain's depth")."""
        if not self.rate_bps or self.tbf_burst >= FULL_GSO_PACKET:
            return
        _run(["ip", "-n", ns, "link", "set", "dev", "eth0", "gso_max_size",
              str(self.tbf_burst // 2)])

    def _add_ns(self, name):
        _run(["ip", "netns", "add", name])
        self.created.append(name)
        _run(["ip", "-n", name, "link", "set", "lo", "up"])
        for key in ("all", "default"):
            _run(["ip", "netns", "exec", name, "sysctl", "-qw",
                  f"net.ipv6.conf.{key}.disable_ipv6=1"], check=False)
        if self.tcp_congestion:
            _run(["ip", "netns", "exec", name, "sysctl", "-qw",
                  f"net.ipv4.tcp_congestion_control={self.tcp_congestion}"])

    def up(self):
        br = self.bridge_ns
        self._add_ns(br)
        _run(["ip", "-n", br, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"])
        _run(["ip", "-n", br, "link", "set", "br0", "up"])
        for i in range(self.hosts):
            h = self.ns(i)
            self._add_ns(h)
            _run(["ip", "-n", br, "link", "add", f"p{i}", "type", "veth", "peer", "name", "eth0",
                  "address", self.mac(i), "netns", h])
            _run(["ip", "-n", br, "link", "set", f"p{i}", "master", "br0", "up"])
            _run(["ip", "-n", h, "addr", "add", f"{self.ip(i)}/24", "dev", "eth0"])
            _run(["ip", "-n", h, "link", "set", "eth0", "up"])
            # udpcast: multicast leaves through eth0 (there is no default route).
            _run(["ip", "-n", h, "route", "add", "224.0.0.0/4", "dev", "eth0"])
            self._cap_gso(h)
            self._shape(h, "eth0", self.rate_of(i), host_queue=True)
            self._shape(br, f"p{i}", self.rate_of(i), host_queue=False)
        self._static_neighbours()
        return self

    def _static_neighbours(self):
        """Every host knows every other's MAC up front (permanent entries).

        The kernel's ARP table is one for all namespaces, and its dynamic
        entries stop at net.ipv4.neigh.default.gc_thresh3 (1024 by default)
        across all of them: N+1 hosts that all talk to each other need
        N(N+1) entries, so from about N = 32 new ones failed ("neighbor
        table overflow" in dmesg), ARP for a new peer never went out, and
        connections hung in SYN-SENT for a minute and more, whatever the
        system under test. Permanent entries are exempt from that limit,
        and this changes nothing outside the namespaces."""
        for i in range(self.hosts):
            lines = "".join(
                f"neigh replace {self.ip(j)} lladdr {self.mac(j)} dev eth0 nud permanent\n"
                for j in range(self.hosts) if j != i)
            r = subprocess.run(["ip", "-n", self.ns(i), "-batch", "-"], input=lines,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               timeout=30)
            if r.returncode != 0:
                raise RuntimeError(f"static neighbours in {self.ns(i)}: {r.stderr.strip()}")

    def down(self):
        for name in reversed(self.created):
            kill_namespace_pids(name)
            _run(["ip", "netns", "del", name], check=False)
        self.created = []

    def leftover_pids(self):
        pids = []
        for name in self.created:
            pids += namespace_pids(name)
        return pids


def namespace_pids(name):
    r = _run(["ip", "netns", "pids", name], check=False)
    return [int(p) for p in r.stdout.split()] if r.returncode == 0 else []


def kill_namespace_pids(name):
    """Ends every process still inside namespace `name`, by PID."""
    pids = namespace_pids(name)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            pids = namespace_pids(name)
            if not pids:
                return
            time.sleep(0.05)


def down_stale():
    """Removes namespaces left by benchmark runs whose process is gone."""
    r = _run(["ip", "netns", "list"], check=False)
    removed = []
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.match(rf"{NAME_PREFIX}(\d+)-", name)
        if not m:
            continue
        pid = int(m.group(1))
        if pid != os.getpid() and os.path.exists(f"/proc/{pid}"):
            continue  # a run in progress
        kill_namespace_pids(name)
        _run(["ip", "netns", "del", name], check=False)
        removed.append(name)
    return removed


def default_tcp_congestion():
    """The TCP congestion control a new namespace starts with: the root
    namespace's (Linux copies it since 4.15). Not every machine's is
    cubic; this one's may be bbr. Every TCP system in a run uses it."""
    try:
        with open("/proc/sys/net/ipv4/tcp_congestion_control") as f:
            return f.read().strip() or "?"
    except OSError:
        return "?"


def allowed_tcp_congestion():
    """What a namespace other than the root one may choose
    (net.ipv4.tcp_allowed_congestion_control, set in the root namespace)."""
    try:
        with open("/proc/sys/net/ipv4/tcp_allowed_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []
