"""Shared by kq's Python tests: a real kqd process, deadlines, quantities.

ctest passes KQD (the kqd binary) and KQ_LAUNCHER_EXAMPLE in the
environment, and PYTHONPATH pointing at the built kq package.
"""

import fractions
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import kq

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

KQD = os.environ.get("KQD", "")
LAUNCHER_EXAMPLE = os.environ.get("KQ_LAUNCHER_EXAMPLE", "")

# Positive conditions are polled up to this long: generous, so that a
# loaded 2-core machine does not make the tests flaky.
DEADLINE = 20.0


MAKE_TEST_PKI = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "..", "testing", "make_test_pki.sh")


def make_pki(directory):
    """The test CA and certificates of tests/testing/make_test_pki.sh in
    `directory` (ca.crt, server.crt, alice.crt, ... with their keys);
    returns `directory`."""
    subprocess.run(["bash", MAKE_TEST_PKI, directory], check=True,
                   capture_output=True)
    return directory


def eventually(predicate, timeout=DEADLINE, interval=0.05):
    """Polls until predicate() returns something truthy; returns it, or
    None after `timeout` seconds."""
    give_up = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > give_up:
            return value
        time.sleep(interval)


class Kqd:
    """One kqd on 127.0.0.1 with its own data directory, which survives
    restarts."""

    def __init__(self, eviction_grace="5s", extra_args=(),
                 client_kwargs=None):
        """`extra_args` go on kqd's command line (--tls-cert=..., ...);
        `client_kwargs` are the kq.Client credentials the readiness check
        uses (with --authz-file, one that may list ClusterQueues)."""
        self.dir = tempfile.mkdtemp(prefix="kq-py-")
        self.eviction_grace = eviction_grace
        self.extra_args = list(extra_args)
        self.client_kwargs = dict(client_kwargs or {})
        self.proc = None
        self.port = 0
        self._log = None

    @property
    def target(self):
        return f"127.0.0.1:{self.port}"

    def start(self, port=0):
        """Starts kqd on `port` (0: any free one) and waits until it
        serves."""
        port_file = os.path.join(self.dir, "port")
        if os.path.exists(port_file):
            os.remove(port_file)
        self._log = open(os.path.join(self.dir, "kqd.log"), "ab")
        self.proc = subprocess.Popen(
            die_with_parent(
                [KQD, f"--listen=127.0.0.1:{port}", f"--port-file={port_file}",
                 f"--data-dir={self.dir}", "--http-listen=127.0.0.1:0",
                 f"--eviction-grace={self.eviction_grace}",
                 "--log-level=warn", *self.extra_args]),
            stdout=self._log, stderr=subprocess.STDOUT)

        def chosen_port():
            if self.proc.poll() is not None:
                raise RuntimeError(f"kqd exited with {self.proc.returncode}: "
                                   f"{self.log_text()}")
            try:
                with open(port_file) as f:
                    return int(f.read().strip())
            except (OSError, ValueError):
                return 0

        try:
            self.port = eventually(chosen_port)
            if not self.port:
                raise RuntimeError(f"kqd did not serve: {self.log_text()}")
            with kq.Client(self.target, timeout=5.0,
                           retry_budget=DEADLINE, **self.client_kwargs) as c:
                c.list_objects("ClusterQueue")
        except BaseException:
            self.kill()
            raise
        return self

    def terminate(self):
        """SIGTERM and wait: kqd shuts down cleanly. Returns its status."""
        return self._stop(signal.SIGTERM)

    def kill(self):
        """SIGKILL: nothing beyond what was committed survives."""
        return self._stop(signal.SIGKILL)

    def _stop(self, sig):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.proc = None
        self._log.close()
        return code

    def log_text(self):
        try:
            with open(os.path.join(self.dir, "kqd.log"), "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""

    def close(self):
        self.terminate()
        shutil.rmtree(self.dir, ignore_errors=True)


class Background:
    """Runs fn() on a thread and hands its result or exception to join()."""

    def __init__(self, fn, name="background"):
        self._fn = fn
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, name=name,
                                       daemon=True)
        self.thread.start()

    def _run(self):
        try:
            self.result = self._fn()
        except BaseException as e:  # re-raised by join()
            self.error = e

    def join(self, timeout=DEADLINE):
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise AssertionError(f"{self.thread.name} still running after "
                                 f"{timeout}s")
        if self.error is not None:
            raise self.error
        return self.result


_SUFFIXES = {
    "n": fractions.Fraction(1, 10**9), "u": fractions.Fraction(1, 10**6),
    "m": fractions.Fraction(1, 1000), "": 1, "k": 10**3, "M": 10**6,
    "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Ki": 2**10,
    "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


def quantity(text):
    """A Kubernetes quantity string as an exact Fraction."""
    m = re.fullmatch(r"([+-]?[0-9.]+)([a-zA-Z]*)", text.strip())
    if not m or m.group(2) not in _SUFFIXES:
        raise ValueError(f"not a quantity: {text!r}")
    return fractions.Fraction(m.group(1)) * _SUFFIXES[m.group(2)]


def event_key(event):
    """(revision, type, kind, namespace, name) of a WatchEvent."""
    if event.WhichOneof("object") == "workload":
        kind, meta = "Workload", event.workload.metadata
    else:
        kind = event.config_object.WhichOneof("kind")
        meta = getattr(event.config_object, kind).metadata
    return (event.revision, event.type, kind, meta.namespace, meta.name)
