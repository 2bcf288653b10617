"""Processes started inside the LAN's namespaces, watched and ended by PID.

Every process runs as `ip netns exec NS CMD` (which execs CMD, so the PID
is CMD's) in a session of its own. A reader thread stamps each stdout and
stderr line with time.monotonic() on arrival, so that a line such as
"DONE" gives the moment a receiver finished. ProcSet.stop_all() ends every
process it started, by PID: SIGTERM, then SIGKILL after a grace period.
"""

import os
import signal
import subprocess
import threading
import time


class Proc:
    def __init__(self, name, ns, argv, log_path, env=None, cwd=None):
        self.name = name
        self.lines = []  # (monotonic time, stream, text)
        self.lock = threading.Lock()
        self.exit_time = None
        self.exit_code = None
        self.cpu_seconds = None  # user + system, from wait4()
        self.exited = threading.Event()
        self.term_sent = False
        self.log = open(log_path, "w", buffering=1)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.start_time = time.monotonic()
        self.p = subprocess.Popen(["ip", "netns", "exec", ns] + list(argv), stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True, env=full_env, cwd=cwd)
        self.pid = self.p.pid
        self.log.write(f"# {ns}: {' '.join(argv)}\n")
        self.threads = [threading.Thread(target=self._read, args=(s, tag), daemon=True)
                        for s, tag in ((self.p.stdout, "out"), (self.p.stderr, "err"))]
        for t in self.threads:
            t.start()
        threading.Thread(target=self._wait, daemon=True).start()

    def _read(self, stream, tag):
        for raw in iter(stream.readline, b""):
            now = time.monotonic()
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            with self.lock:
                self.lines.append((now, tag, text))
            try:
                self.log.write(f"{now - self.start_time:9.3f} {tag} {text}\n")
            except ValueError:
                pass  # log closed during teardown

    def _wait(self):
        # Reaped here only (never through Popen), so that wait4() gives the
        # process's CPU time along with its exit status.
        _, status, usage = os.wait4(self.pid, 0)
        self.exit_time = time.monotonic()
        self.cpu_seconds = usage.ru_utime + usage.ru_stime
        self.exit_code = os.waitstatus_to_exitcode(status)
        self.p.returncode = self.exit_code
        try:  # a negative code is the signal that ended it (SIGKILL: -9)
            self.log.write(f"{self.exit_time - self.start_time:9.3f} exit {self.exit_code}\n")
        except ValueError:
            pass  # log closed during teardown
        self.exited.set()

    def returncode(self):
        return self.exit_code

    def find(self, predicate, stream=None):
        """Time of the first line for which predicate(text) holds, or None."""
        with self.lock:
            for t, tag, text in self.lines:
                if (stream is None or tag == stream) and predicate(text):
                    return t
        return None

    def snapshot(self):
        with self.lock:
            return list(self.lines)

    def terminate(self):
        """SIGTERM, once: our tools take a second one as "stop now", and a
        `swarmcast get` stopped that way prints no --json report."""
        if self.exited.is_set() or self.term_sent:
            return
        self.term_sent = True
        try:
            os.killpg(self.pid, signal.SIGTERM)  # our own child's session, by id
        except ProcessLookupError:
            pass

    def stop(self, grace=3.0):
        if not self.exited.is_set():
            self.terminate()
            if not self.exited.wait(timeout=grace):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.exited.wait(timeout=5.0)
        for t in self.threads:
            t.join(timeout=2)
        try:
            self.log.close()
        except Exception:
            pass


class ProcSet:
    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.procs = []

    def start(self, name, ns, argv, env=None, cwd=None):
        p = Proc(name, ns, argv, os.path.join(self.log_dir, name + ".log"), env=env, cwd=cwd)
        self.procs.append(p)
        return p

    def stop_all(self, grace=3.0):
        # SIGTERM to all first, so that they wind down in parallel.
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.stop(grace=grace)
        self.procs = []


def wait_until(predicate, timeout, interval=0.02):
    """Polls predicate() until it returns a true value or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while True:
        v = predicate()
        if v:
            return v
        if time.monotonic() >= deadline:
            return None
        time.sleep(interval)
