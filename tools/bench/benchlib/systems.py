"""The systems the swarm benchmark runs side by side.

Each system has two phases. prepare(): everything a user would have done
before asking N nodes for the file (trackers up, metainfo made, the seed
checked, listening and known to its tracker); the clock does not run.
launch(): start the N receivers; the clock starts just before. done_time(i)
gives the moment receiver i reported that it holds the whole file (a DONE
line, its process exiting with success, or the file appearing under its
final name); the runner checks every copy's sha256 afterwards.

Hosts: h0 is the seed (and tracker), h1..hN are the receivers.
"""

import json
import os
import re
import shutil
import subprocess
import time

from .procs import wait_until

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEBIAN_PYTHON = "/usr/bin/python3"  # the interpreter python3-libtorrent is built for
TRACKER_PORT = 6969
PEER_PORT = 6881
SENDFILE_PORT = 7000
PUSH_PORT = 7001
RELAY_PORT = 7002
BT_OFF = ["--enable-dht=false", "--enable-dht6=false", "--bt-enable-lpd=false"]


class SetupError(Exception):
    pass


class Context:
    """One run: LAN, processes, the file, its receivers' directories."""

    def __init__(self, lan, procs, work, src_file, n, build):
        self.lan, self.procs, self.work, self.src, self.n, self.build = (
            lan, procs, work, src_file, n, build)
        self.name = os.path.basename(src_file)
        self.src_dir = os.path.dirname(src_file)
        self.seed_ip = lan.ip(0)
        self.tracker_url = f"http://{self.seed_ip}:{TRACKER_PORT}"
        self.rdirs = []
        for i in range(1, n + 1):
            d = os.path.join(work, f"r{i}")
            os.makedirs(d)
            self.rdirs.append(d)

    def recv_path(self, i):
        return os.path.join(self.rdirs[i - 1], self.name)


def scrape_complete(ctx, info_hash_hex):
    """Seeds the tracker in h0 counts for the info-hash (None: no answer)."""
    q = "".join(f"%{b:02x}" for b in bytes.fromhex(info_hash_hex))
    r = subprocess.run(["ip", "netns", "exec", ctx.lan.ns(0), "curl", "-s", "-m", "2",
                        f"{ctx.tracker_url}/scrape?info_hash={q}"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=10)
    m = re.search(rb"8:completei(\d+)e", r.stdout)
    if m:
        return int(m.group(1))
    return 0 if r.stdout.startswith(b"d") else None


def wait_line(proc, pattern, timeout, what):
    rx = re.compile(pattern)
    t = wait_until(lambda: proc.find(lambda s: rx.search(s) is not None) or
                   (proc.returncode() is not None and -1), timeout)
    if t is None or t == -1:
        raise SetupError(f"{what}: no '{pattern}' within {timeout}s "
                         f"(exit code {proc.returncode()})")
    return t


def wait_seeded(ctx, info_hash, timeout, what):
    if not wait_until(lambda: (scrape_complete(ctx, info_hash) or 0) >= 1, timeout, 0.1):
        raise SetupError(f"{what}: the tracker does not list the seed after {timeout}s")


class System:
    name = "?"
    progress = False  # receivers report progress lines (see progress_of)

    def __init__(self):
        self.receivers = []
        self.seed = None
        self.killed = set()  # processes a fault cell killed (benchlib/faults.py)

    def prepare(self, ctx):
        raise NotImplementedError

    def launch(self, ctx):
        raise NotImplementedError

    def done_time(self, ctx, i):
        raise NotImplementedError

    def missing_reports(self, receivers):
        """Which of these receivers (1-based) printed no end-of-run report
        after they were stopped; empty for a system whose receivers print
        none."""
        return []

    def failure(self, ctx):
        """A reason when a receiver or the seed died before the end."""
        for i, p in enumerate(self.receivers, 1):
            rc = p.returncode()
            if rc not in (None, 0) and p not in self.killed:
                return f"receiver {i} exited with {rc}"
        if (self.seed is not None and self.seed not in self.killed and
                self.seed.returncode() not in (None, 0)):
            return f"seed exited with {self.seed.returncode()}"
        return None

    def progress_of(self, ctx, i):
        return []

    def seed_upload_bytes(self):
        return None


class Sendfile(System):
    """The plain server: all N receivers served concurrently with sendfile(2)."""

    name = "sendfile"

    def prepare(self, ctx):
        exe = os.path.join(ctx.build, "tools", "bench", "swarmcast-bench-sendfile")
        self.exe = exe
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), [
            exe, "serve", ctx.src, "--listen", f"{ctx.seed_ip}:{SENDFILE_PORT}",
            "--clients", str(ctx.n)])
        wait_line(self.seed, r"^READY$", 10, "sendfile seed")

    def launch(self, ctx):
        for i in range(1, ctx.n + 1):
            self.receivers.append(ctx.procs.start(f"r{i}", ctx.lan.ns(i), [
                self.exe, "recv", f"{ctx.seed_ip}:{SENDFILE_PORT}", ctx.recv_path(i)]))

    def done_time(self, ctx, i):
        p = self.receivers[i - 1]
        return p.exit_time if p.returncode() == 0 else None

    def failure(self, ctx):
        # The server exits once every transfer ended, nonzero if one failed
        # (a receiver killed by a fault cell): that receiver's own status
        # already tells. Before its last receiver's exit is seen, its exit
        # says nothing new; a server that dies early fails its receivers.
        for i, p in enumerate(self.receivers, 1):
            rc = p.returncode()
            if rc not in (None, 0) and p not in self.killed:
                return f"receiver {i} exited with {rc}"
        return None


def make_torrent(ctx, path):
    """A v1 .torrent for ctx.src announcing to the tracker in h0; its info-hash."""
    lt_peer = os.path.join(HERE, "lt_peer.py")
    subprocess.run([DEBIAN_PYTHON, lt_peer, "make-torrent", ctx.src, path,
                    f"{ctx.tracker_url}/announce"], check=True, timeout=600)
    r = subprocess.run([DEBIAN_PYTHON, "-c",
                        "import libtorrent as lt, sys; "
                        "print(lt.torrent_info(sys.argv[1]).info_hashes().v1)", path],
                       stdout=subprocess.PIPE, text=True, check=True, timeout=60)
    return r.stdout.strip()


def start_opentracker(ctx, info_hash):
    """opentracker in h0, whitelisting only our info-hash (see anchor-tools.md)."""
    root = os.path.join(ctx.work, "ot")
    os.makedirs(root)
    with open(os.path.join(root, "whitelist"), "w") as f:
        f.write(info_hash + "\n")
    conf = os.path.join(ctx.work, "opentracker.conf")
    with open(conf, "w") as f:
        f.write(f"listen.tcp_udp {ctx.seed_ip}:{TRACKER_PORT}\naccess.whitelist /whitelist\n"
                f"tracker.rootdir {root}\ntracker.user nobody\n")
    p = ctx.procs.start("opentracker", ctx.lan.ns(0), ["opentracker", "-f", conf])
    if not wait_until(lambda: scrape_complete(ctx, info_hash) is not None, 10, 0.05):
        raise SetupError(f"opentracker does not answer (exit code {p.returncode()})")
    return p


class Libtorrent(System):
    """Stock libtorrent 2.0 (python3-libtorrent), TCP only, with opentracker."""

    name = "libtorrent"
    progress = True

    def prepare(self, ctx):
        self.torrent = os.path.join(ctx.work, "file.torrent")
        self.info_hash = make_torrent(ctx, self.torrent)
        start_opentracker(ctx, self.info_hash)
        self.peer = os.path.join(HERE, "lt_peer.py")
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), [
            DEBIAN_PYTHON, self.peer, "run", "seed", self.torrent, ctx.src_dir,
            "--listen", f"{ctx.seed_ip}:{PEER_PORT}"])
        wait_line(self.seed, r"^READY$", 120, "libtorrent seed")
        wait_seeded(ctx, self.info_hash, 20, "libtorrent seed")

    def launch(self, ctx):
        for i in range(1, ctx.n + 1):
            self.receivers.append(ctx.procs.start(f"r{i}", ctx.lan.ns(i), [
                DEBIAN_PYTHON, self.peer, "run", "get", self.torrent, ctx.rdirs[i - 1],
                "--listen", f"{ctx.lan.ip(i)}:{PEER_PORT}"]))

    def done_time(self, ctx, i):
        return self.receivers[i - 1].find(lambda s: s == "DONE", "out")

    def progress_of(self, ctx, i):
        out = []
        for t, tag, text in self.receivers[i - 1].snapshot():
            if tag == "out" and text.startswith("STAT "):
                out.append((t, float(text.split()[1])))
        return out

    def seed_upload_bytes(self):
        last = None
        for _, tag, text in self.seed.snapshot():
            if tag == "out" and text.startswith("STAT "):
                last = int(text.split()[2])
        return last


class Aria2(System):
    """aria2c as seed and leechers, with opentracker; DHT and LPD off."""

    name = "aria2"

    def _argv(self, directory):
        return ["aria2c", *BT_OFF, "--seed-ratio=0.0", "--disable-ipv6=true",
                f"--listen-port={PEER_PORT}", "--console-log-level=warn",
                "--summary-interval=0", "--enable-color=false", "--show-console-readout=false",
                "-d", directory]

    def prepare(self, ctx):
        self.torrent = os.path.join(ctx.work, "file.torrent")
        self.info_hash = make_torrent(ctx, self.torrent)
        start_opentracker(ctx, self.info_hash)
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), self._argv(ctx.src_dir) + [
            "--bt-seed-unverified=true", "--check-integrity=false", self.torrent])
        wait_seeded(ctx, self.info_hash, 30, "aria2 seed")

    def launch(self, ctx):
        hook = os.path.join(HERE, "aria2-done")
        self.wall_offset = time.time() - time.monotonic()
        for i in range(1, ctx.n + 1):
            self.receivers.append(ctx.procs.start(
                f"r{i}", ctx.lan.ns(i),
                self._argv(ctx.rdirs[i - 1]) + [f"--on-bt-download-complete={hook}", self.torrent],
                env={"BENCH_DONE_FILE": os.path.join(ctx.work, f"done.{i}")}))

    def done_time(self, ctx, i):
        try:
            with open(os.path.join(ctx.work, f"done.{i}")) as f:
                return float(f.read().strip()) - self.wall_offset
        except (OSError, ValueError):
            return None


class Udpcast(System):
    """udp-sender / udp-receiver, multicast over the bridge."""

    name = "udpcast"
    MCAST = ["--mcast-rdv-address", "224.0.0.1", "--interface", "eth0", "--nokbd"]

    def prepare(self, ctx):
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), [
            "udp-sender", "--file", ctx.src, "--min-receivers", str(ctx.n), *self.MCAST])
        time.sleep(0.3)
        if self.seed.returncode() is not None:
            raise SetupError(f"udp-sender exited with {self.seed.returncode()}")

    def launch(self, ctx):
        for i in range(1, ctx.n + 1):
            self.receivers.append(ctx.procs.start(f"r{i}", ctx.lan.ns(i), [
                "udp-receiver", "--file", ctx.recv_path(i), *self.MCAST]))

    def done_time(self, ctx, i):
        p = self.receivers[i - 1]
        return p.exit_time if p.returncode() == 0 else None


PROGRESS_RX = re.compile(r"^get .*?: \S+\s+([\d.]+)%")


class Swarmcast(System):
    """Our tracker, `swarmcast seed` and `swarmcast get` from the build tree."""

    progress = True

    def __init__(self, push, fanout=None, forward=False, chain=False, topology=None):
        super().__init__()
        self.push = push
        self.fanout = fanout  # None: the seed's default (auto)
        self.forward = forward  # gets run with --forward (Mutualcast forwarding)
        self.chain = chain  # seed --push-chain, gets --chain
        # "fan-out": the seed pushes to every subscriber (the default until
        # session 17; forward and the forced backends too); None: the
        # seed's default topology.
        self.topology = "fan-out" if forward or fanout else topology
        self.gets_forward = forward or chain  # fault=forwarder-kill waits for it
        if push is None:
            self.name = "swarmcast"
        elif chain:
            self.name = "swarmcast-push-chain"
        elif forward:
            self.name = "swarmcast-push-forward"
        elif topology == "fan-out":
            self.name = "swarmcast-push-fanout"
        else:
            self.name = f"swarmcast-push-{fanout or ('on' if push else 'off')}"

    def prepare(self, ctx):
        exe = os.path.join(ctx.build, "node", "swarmcast")
        tracker = os.path.join(ctx.build, "tracker", "swarmcast-tracker")
        self.exe = exe
        ctx.procs.start("tracker", ctx.lan.ns(0), [
            tracker, "--listen", f"{ctx.seed_ip}:{TRACKER_PORT}",
            "--db", os.path.join(ctx.work, "tracker.db")])
        if not wait_until(lambda: scrape_complete(ctx, "00" * 20) is not None, 10, 0.05):
            raise SetupError("swarmcast-tracker does not answer")
        # Publishing needs the admin token the tracker made beside its
        # database at start; the seed shares its file system.
        token_file = os.path.join(ctx.work, "tracker.db.token")
        argv = [exe, "seed", ctx.src, "--tracker", ctx.tracker_url, "--name", "bench",
                "--token-file", token_file,
                "--listen", f"{ctx.seed_ip}:{PEER_PORT}", "--progress-interval", "1s", "--json"]
        if self.push is not None:
            argv += push_flags(self.push, ctx)
        if self.fanout:
            argv += ["--fanout", self.fanout]
        # A build before --push-topology has no chain by default: its
        # seed fans out.
        help_text = seed_help(ctx.build)
        topology_flag = "--push-topology" in help_text
        if self.chain:
            argv += ["--push-chain"]
        elif self.push and self.topology and topology_flag:
            argv += ["--push-topology", self.topology]
        # Whether the gets forward (fault=forwarder-kill waits for it): a
        # chain's links do, and the build's default topology says which
        # (`--push-topology arg (=chain)` in its help).
        default_chain = re.search(r"--push-topology arg \(=chain\)", help_text) is not None
        self.gets_forward = self.forward or self.chain or (
            self.push is not False and self.topology is None and default_chain)
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), argv,
                                    env={"SWARMCAST_STATE_DIR": os.path.join(ctx.work, "s0")})
        t = wait_line(self.seed, r"published .*\(([0-9a-f]{40})\)", 120, "swarmcast seed")
        line = next(s for tt, _, s in self.seed.snapshot() if re.search(r"\([0-9a-f]{40}\)", s))
        self.info_hash = re.search(r"\(([0-9a-f]{40})\)", line).group(1)
        del t
        wait_seeded(ctx, self.info_hash, 30, "swarmcast seed")

    def seed_upload_bytes(self):
        # `swarmcast seed --json` prints its report when it is stopped (after
        # the "published" event line): uploaded_bytes counts the wire and the
        # push channel (uploaded_wire_bytes + uploaded_push_bytes).
        for _, tag, text in reversed(self.seed.snapshot()):
            if tag == "out" and text.startswith("{"):
                try:
                    report = json.loads(text)
                    return int(report["uploaded_bytes"])
                except (ValueError, KeyError, TypeError):
                    continue
        return None

    def launch(self, ctx):
        for i in range(1, ctx.n + 1):
            argv = [self.exe, "get", "bench", "--tracker", ctx.tracker_url, "-o", ctx.rdirs[i - 1],
                    "--listen", f"{ctx.lan.ip(i)}:{PEER_PORT}", "--progress-interval", "200ms",
                    "--json"] + (["--forward"] if self.forward else []) + (
                        ["--chain"] if self.chain else [])
            self.receivers.append(ctx.procs.start(
                f"r{i}", ctx.lan.ns(i), argv,
                env={"SWARMCAST_STATE_DIR": os.path.join(ctx.work, f"s{i}")}))

    def done_time(self, ctx, i):
        # The download is renamed into place only once every piece passed.
        if os.path.exists(ctx.recv_path(i)):
            return time.monotonic()
        return None

    def missing_reports(self, receivers):
        # `swarmcast get --json` prints its report on stdout when it ends,
        # SIGTERM included: the run's push and duplicate figures come from it.
        def reported(i):
            return any(tag == "out" and text.startswith("{")
                       for _, tag, text in self.receivers[i - 1].snapshot())
        return [i for i in receivers if not reported(i)]

    def progress_of(self, ctx, i):
        out = []
        for t, tag, text in self.receivers[i - 1].snapshot():
            m = PROGRESS_RX.search(text)
            if tag == "err" and m:
                out.append((t, float(m.group(1)) / 100))
        return out


def push_flags(push, ctx):
    """Seed flags that turn the push channel on or off: on = a push port on
    the seed's own LAN address (published in the registry); off =
    `--no-push`, so peers fetch over the BitTorrent wire only."""
    if push:
        return ["--push-listen", f"{ctx.seed_ip}:{PUSH_PORT}"]
    return ["--no-push"]


def seed_help(build):
    try:
        r = subprocess.run([os.path.join(build, "node", "swarmcast"), "seed", "--help"],
                           stdout=subprocess.PIPE, text=True, timeout=10)
    except OSError:
        return ""
    return r.stdout


def get_forward_supported(build):
    """Whether `swarmcast get --help` of that build offers --forward."""
    try:
        r = subprocess.run([os.path.join(build, "node", "swarmcast"), "get", "--help"],
                           stdout=subprocess.PIPE, text=True, timeout=10)
    except OSError:
        return False
    return "--forward" in r.stdout


class Relay(System):
    """The relay reference (tools/bench/relay_bench.cc): static Mutualcast,
    each receiver forwarding the seed's 1/N of the blocks to the others, no
    hashing and no adaptation. Not a competitor: a TCP swarm with none of a
    real system's costs, though not a bound (it loses at N = 32-64).
    relay-chain is its pipeline: seed -> receiver 1 -> receiver 2 -> ...,
    one flow per link at that link's full rate."""

    def __init__(self, chain=False):
        super().__init__()
        self.chain = chain
        self.name = "relay-chain" if chain else "relay"

    def prepare(self, ctx):
        self.exe = os.path.join(ctx.build, "tools", "bench", "swarmcast-bench-relay")
        self.seed = ctx.procs.start("seed", ctx.lan.ns(0), [
            self.exe, "seed", ctx.src, "--listen", f"{ctx.seed_ip}:{RELAY_PORT}",
            "--clients", str(ctx.n)] + (["--chain"] if self.chain else []))
        wait_line(self.seed, r"^READY$", 10, "relay seed")

    def launch(self, ctx):
        for i in range(1, ctx.n + 1):
            self.receivers.append(ctx.procs.start(f"r{i}", ctx.lan.ns(i), [
                self.exe, "recv", f"{ctx.seed_ip}:{RELAY_PORT}", "--listen",
                f"{ctx.lan.ip(i)}:{RELAY_PORT}", ctx.recv_path(i)]))

    def done_time(self, ctx, i):
        return self.receivers[i - 1].find(lambda s: s.startswith("DONE "))


# Systems with a static schedule: a lost process stalls the rest, so a
# fault cell would only measure the run timeout.
NO_FAULT_CELLS = {"relay", "relay-chain"}


def swarmcast_push_supported(build):
    """Whether `swarmcast seed --help` offers a push switch that does something."""
    text = seed_help(build)
    return "--no-push" in text or "--fanout" in text


# The chain is the seed's default since session 17 (swarmcast-push-on;
# swarmcast-push-chain is the same with its flags spelt out, for builds
# before it); swarmcast-push-fanout is the default it replaced.
ALL = ["sendfile", "libtorrent", "aria2", "udpcast", "relay", "relay-chain", "swarmcast",
       "swarmcast-push-fanout"]


def make(name, build):
    if name == "sendfile":
        return Sendfile()
    if name == "libtorrent":
        return Libtorrent()
    if name == "aria2":
        return Aria2()
    if name == "udpcast":
        return Udpcast()
    if name in ("relay", "relay-chain"):
        return Relay(chain=name == "relay-chain")
    if name == "swarmcast":
        return Swarmcast(None)
    if name in ("swarmcast-push-on", "swarmcast-push-off"):
        return Swarmcast(name.endswith("on"))
    if name == "swarmcast-push-forward":
        return Swarmcast(True, forward=True)
    if name == "swarmcast-push-chain":
        return Swarmcast(True, chain=True)
    if name == "swarmcast-push-fanout":
        return Swarmcast(True, topology="fan-out")
    # One fan-out backend forced (kmod needs the module, absent here).
    if name in ("swarmcast-push-splice", "swarmcast-push-sendfile", "swarmcast-push-copy"):
        return Swarmcast(True, name.rsplit("-", 1)[1])
    raise ValueError(f"unknown system {name!r}")


def tools_missing(names, build):
    """What each requested system lacks on this machine ({} when all is there)."""
    missing = {}
    need = {"libtorrent": [DEBIAN_PYTHON, "opentracker", "curl"],
            "aria2": ["aria2c", "opentracker", "curl", DEBIAN_PYTHON],
            "udpcast": ["udp-sender", "udp-receiver"]}
    for n in names:
        lacks = [t for t in need.get(n, []) if not shutil.which(t)]
        if n in ("sendfile", "relay", "relay-chain"):
            p = os.path.join(build, "tools", "bench", f"swarmcast-bench-{n.split('-')[0]}")
            lacks += [] if os.access(p, os.X_OK) else [p]
        if n.startswith("swarmcast"):
            for p in (os.path.join(build, "node", "swarmcast"),
                      os.path.join(build, "tracker", "swarmcast-tracker")):
                lacks += [] if os.access(p, os.X_OK) else [p]
            lacks += [] if shutil.which("curl") else ["curl"]
        if lacks:
            missing[n] = lacks
    return missing
