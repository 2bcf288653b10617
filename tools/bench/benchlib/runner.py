"""One run of one system on a ready LAN: prepare, start the clock, launch
the receivers, wait (bounded) for all of them, end every process, check
every copy's sha256, and return what happened."""

import concurrent.futures
import hashlib
import os
import shutil
import time

from . import lan as lanmod
from .procs import ProcSet
from .systems import Context, SetupError, make


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(4 << 20)
            if not b:
                return h.hexdigest()
            h.update(b)


def machine_busy_seconds():
    """CPU seconds every core of the machine has spent busy since boot
    (/proc/stat: user, nice, system, irq, softirq, steal). A process's own
    CPU time misses the packet work the kernel does for it in ksoftirqd or
    in another process's context; this counts everything."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def run_one(lan, system_name, src, src_sha, n, build, work, logs, timeout, build_old=None,
            fault=None):
    """`system_name` ending in "@old" runs that system from `build_old`.
    `fault` (benchlib/faults.py), if given, kills a process during the run;
    a receiver it killed is neither waited for, timed nor checked."""
    os.makedirs(work)
    os.makedirs(logs)
    procs = ProcSet(logs)
    base, _, which = system_name.partition("@")
    if which:
        build = build_old
    system = make(base, build)
    ctx = Context(lan, procs, work, src, n, build)
    res = {"system": system_name, "n": n, "status": "ok", "seconds": None, "receivers": [],
           "progress": {}, "seed_upload_bytes": None, "seed_cpu_s": None,
           "receivers_cpu_s": None, "note": "", "copies_ok": None, "copies": None,
           "fault_s": None, "machine_cpu_s": None}
    done = {}
    try:
        system.prepare(ctx)
        busy0 = machine_busy_seconds()
        t0 = time.monotonic()
        system.launch(ctx)
        deadline = t0 + timeout
        while True:
            out = fault.excluded() if fault else set()
            for i in range(1, n + 1):
                if i not in done and i not in out:
                    t = system.done_time(ctx, i)
                    if t is not None:
                        done[i] = t
            if fault:
                fault.step(system, done, t0)
                out = fault.excluded()
            if len(set(done) - out) == n - len(out):
                break
            why = system.failure(ctx)
            if why:
                res["status"], res["note"] = "failed", why
                break
            if time.monotonic() > deadline:
                res["status"] = "timeout"
                res["note"] = f"{len(done)} of {n} receivers done after {timeout:.0f}s"
                break
            time.sleep(0.02)
        # From launch until the last receiver is done (or the run failed):
        # the whole machine, whatever else ran on it.
        res["machine_cpu_s"] = machine_busy_seconds() - busy0
        out = fault.excluded() if fault else set()
        res["receivers"] = [done[i] - t0 if i in done and i not in out else None
                            for i in range(1, n + 1)]
        if res["status"] == "ok":
            res["seconds"] = max(t for i, t in done.items() if i not in out) - t0
        if fault:
            res["fault_s"] = fault.fired_at - t0 if fault.fired_at is not None else None
            why = fault.note or f"the {fault.kind} fault did not fire"
            res["note"] = f"{why}; {res['note']}" if res["note"] else why
            if (fault.fired_at is None or fault.missed) and res["status"] == "ok":
                # The run did not test what its cell says.
                res["status"], res["seconds"] = "fault-missed", None
        if system.progress:
            res["progress"] = {i: [(t - t0, f) for t, f in system.progress_of(ctx, i)]
                               for i in range(1, n + 1)}
    except SetupError as e:
        res["status"], res["note"] = "setup-failed", str(e)
    finally:
        procs.stop_all()
        # Anything a tool forked off and left behind: end it by PID.
        for name in lan.created:
            lanmod.kill_namespace_pids(name)
    # After the stop: a seed reports its final upload counter when it ends.
    if system.seed is not None and res["status"] == "ok":
        res["seed_upload_bytes"] = system.seed_upload_bytes()
    if res["status"] == "ok":
        missing = system.missing_reports(
            [i for i in range(1, n + 1) if not (fault and i in fault.excluded())])
        if missing:
            res["status"] = "no-report"
            res["note"] = f"receivers {missing} printed no report when stopped; {res['note']}"
            res["seconds"] = None
    # CPU time (user + system) of the whole life of each process, from
    # wait4(): the seed's includes its preparation (hashing, checking).
    if system.seed is not None:
        res["seed_cpu_s"] = system.seed.cpu_seconds
    if system.receivers and all(p.cpu_seconds is not None for p in system.receivers):
        res["receivers_cpu_s"] = sum(p.cpu_seconds for p in system.receivers)
    # A fault cell checks the copies of a failed run too: the table says
    # how many of the counted receivers hold a correct one.
    if res["status"] == "ok" or fault:
        counted = [i for i in range(1, n + 1) if not (fault and i in fault.excluded())]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            sums = list(pool.map(
                lambda i: sha256_file(ctx.recv_path(i)) if os.path.exists(ctx.recv_path(i)) else "",
                counted))
        bad = [i for i, s in zip(counted, sums) if s != src_sha]
        res["copies"], res["copies_ok"] = len(counted), len(counted) - len(bad)
        if bad and res["status"] == "ok":
            res["status"] = "sha256-mismatch"
            res["note"] = f"receivers {bad} hold a wrong or no copy; {res['note']}"
            res["seconds"] = None
    shutil.rmtree(work, ignore_errors=True)
    return res
