"""The fixture of federation_test.py: kqd processes (one MultiKueue manager,
three workers) on loopback ports of their own, a userspace TCP proxy
between the manager and each worker that can black-hole the traffic, a
test agent per worker that runs the workloads the manager admitted there,
and the checker of the agents' log.

Runners attach on the manager in kq (logs/federation-contract.md, "State
on main"): agent W watches the manager for admitted workloads whose
status.clusterName is W, attaches with Heartbeat as runner "agent-W",
runs for D seconds and calls FinishWorkload on the manager, stopping at
once when Heartbeat says stop.
"""

import collections
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import grpc

import kq
from kq.v1 import (federation_service_pb2, federation_service_pb2_grpc,
                   queue_service_pb2)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

# Set by federation_test.py from its command line: the directory of kqd and
# kq.
BIN = ""

# Positive conditions are polled this long; the 2-core machine is shared.
DEADLINE = 30.0

NAMESPACE = "team-a"
DELETED = queue_service_pb2.WatchEvent.DELETED
WORKERS = ("w1", "w2", "w3")


def eventually(predicate, timeout=DEADLINE, interval=0.1):
    """Polls until predicate() is truthy; returns its value, or the last
    (falsy) value after `timeout` seconds."""
    give_up = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > give_up:
            return value
        time.sleep(interval)


def check_state(wl, name="mk"):
    """(state, message) of the workload's admission check `name`, or
    (None, None)."""
    for c in wl.status.admission_checks:
        if c.name == name:
            return c.state, c.message
    return None, None


def condition_of(wl, type_):
    return kq.condition(wl, type_)


# ---- kqd --------------------------------------------------------------------


class Kqd:
    """One kqd with its own data directory and port, kept across restarts
    (the proxies and contexts files name the port)."""

    def __init__(self, root, name, config_text=None, http=False,
                 eviction_grace="5s"):
        self.name = name
        self.dir = os.path.join(root, name)
        os.makedirs(self.dir, exist_ok=True)
        self.port = 0
        self.http_port = 0
        self.http = http
        self.eviction_grace = eviction_grace
        self.config_path = None
        if config_text is not None:
            self.set_config(config_text)
        self.proc = None
        self.paused = False
        self._log = None
        self._client = None

    def set_config(self, text):
        """The Kueue Configuration the next start reads (--config)."""
        self.config_path = os.path.join(self.dir, "config.yaml")
        with open(self.config_path, "w") as f:
            f.write(text)

    @property
    def target(self):
        return f"127.0.0.1:{self.port}"

    @property
    def log_path(self):
        return os.path.join(self.dir, "kqd.log")

    def start(self, env=None, wait=True):
        port_file = os.path.join(self.dir, "port")
        http_port_file = os.path.join(self.dir, "http-port")
        for f in (port_file, http_port_file):
            if os.path.exists(f):
                os.remove(f)
        argv = [os.path.join(BIN, "kqd"), f"--listen=127.0.0.1:{self.port}",
                f"--port-file={port_file}",
                f"--data-dir={os.path.join(self.dir, 'data')}",
                f"--eviction-grace={self.eviction_grace}", "--log-level=info"]
        if self.http:
            argv += [f"--http-listen=127.0.0.1:{self.http_port}",
                     f"--http-port-file={http_port_file}"]
        else:
            argv += ["--http-listen", ""]
        if self.config_path:
            argv.append(f"--config={self.config_path}")
        self._log = open(self.log_path, "ab")
        self._log.write(f"---- start {' '.join(argv)} env={env}\n".encode())
        self._log.flush()
        full_env = dict(os.environ)
        full_env.pop("KQ_FAILPOINT", None)
        full_env.update(env or {})
        self.proc = subprocess.Popen(die_with_parent(argv), env=full_env,
                                     stdout=self._log,
                                     stderr=subprocess.STDOUT)
        self.paused = False
        if not wait:
            # The port is known from an earlier start.
            return self

        def read_port(path):
            if self.proc.poll() is not None:
                raise RuntimeError(f"kqd {self.name} exited with "
                                   f"{self.proc.returncode}: "
                                   f"{self.log_tail()}")
            try:
                with open(path) as f:
                    return int(f.read().strip())
            except (OSError, ValueError):
                return 0

        self.port = eventually(lambda: read_port(port_file), interval=0.05)
        if not self.port:
            raise RuntimeError(f"kqd {self.name} did not serve: "
                               f"{self.log_tail()}")
        if self.http:
            self.http_port = eventually(lambda: read_port(http_port_file),
                                        interval=0.05)
        return self

    def client(self):
        """A kq.Client for this kqd (one, kept across restarts)."""
        if self._client is None:
            self._client = kq.Client(self.target, timeout=5.0,
                                     retry_budget=DEADLINE)
        return self._client

    def wait_exit(self, timeout=DEADLINE):
        """Waits for a kqd that kills itself (a crash point); returns its
        status."""
        code = self.proc.wait(timeout)
        self.proc = None
        self._log.close()
        return code

    def terminate(self):
        return self._stop(signal.SIGTERM)

    def kill(self):
        """kill -9."""
        return self._stop(signal.SIGKILL)

    def _stop(self, sig):
        if self.proc is None:
            return None
        if self.paused:
            self.proc.send_signal(signal.SIGCONT)
            self.paused = False
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

    def restart(self, env=None):
        self.terminate()
        return self.start(env=env)

    def pause(self):
        """SIGSTOP."""
        self.proc.send_signal(signal.SIGSTOP)
        self.paused = True

    def cont(self):
        """SIGCONT."""
        self.proc.send_signal(signal.SIGCONT)
        self.paused = False

    def log_text(self):
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, n=6000):
        return self.log_text()[-n:]

    def kq(self, *args, input_text=None, check=True):
        """The kq CLI against this kqd; returns stdout."""
        result = subprocess.run(
            [os.path.join(BIN, "kq"), "--server", self.target, *args],
            input=input_text, capture_output=True, text=True, timeout=60)
        if check and result.returncode != 0:
            raise RuntimeError(f"kq {' '.join(args)} on {self.name}: "
                               f"{result.stderr}{result.stdout}")
        return result.stdout

    def apply(self, yaml_text):
        """kq apply -f - (retried while kqd is not serving yet)."""
        give_up = time.monotonic() + DEADLINE
        while True:
            try:
                return self.kq("apply", "-f", "-", input_text=yaml_text)
            except RuntimeError as e:
                if ("UNAVAILABLE" not in str(e) and
                        "unavailable" not in str(e).lower()) or \
                        time.monotonic() > give_up:
                    raise
                time.sleep(0.2)

    def metrics(self):
        with urllib.request.urlopen(
                f"http://127.0.0.1:{self.http_port}/metrics",
                timeout=10) as response:
            return response.read().decode()

    def metric(self, name, **labels):
        """Sum of the samples of `name` whose labels include `labels`
        (0 when there is none)."""
        total = 0.0
        for line in self.metrics().splitlines():
            if line.startswith("#") or not line.startswith(name):
                continue
            head, _, value = line.rpartition(" ")
            metric, _, rest = head.partition("{")
            if metric != name:
                continue
            have = {}
            for part in rest.rstrip("}").split(","):
                if "=" in part:
                    k, _, v = part.partition("=")
                    have[k.strip()] = v.strip().strip('"')
            if all(have.get(k) == v for k, v in labels.items()):
                total += float(value)
        return total

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None
        self.terminate()


# ---- The proxy --------------------------------------------------------------


class Proxy:
    """A TCP proxy on a loopback port of its own in front of `upstream`
    (a port). black_hole() stops every byte both ways (they are read and
    dropped, and new connections are accepted and held), as a network
    partition looks to both ends; heal() forwards again, closing the
    connections that lost bytes (their streams cannot be trusted)."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self._lock = threading.Lock()
        self._holed = False
        self._conns = []  # [client, upstream or None, tainted]
        self._closed = False
        threading.Thread(target=self._accept, name=f"proxy-{self.port}",
                         daemon=True).start()

    def _accept(self):
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                holed = self._holed
            upstream = None
            if not holed:
                try:
                    upstream = socket.create_connection(
                        ("127.0.0.1", self.upstream_port), timeout=5)
                    upstream.settimeout(None)
                except OSError:
                    client.close()
                    continue
            conn = [client, upstream, holed]
            with self._lock:
                self._conns.append(conn)
            threading.Thread(target=self._pump, args=(conn,), daemon=True,
                             name=f"proxy-{self.port}-pump").start()

    def _pump(self, conn):
        client, upstream = conn[0], conn[1]
        socks = [s for s in (client, upstream) if s is not None]
        try:
            while True:
                readable, _, _ = select.select(socks, [], [], 0.5)
                if conn[2] and conn not in self._conns:
                    return
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        return
                    with self._lock:
                        holed = self._holed
                    if holed or conn[2]:
                        conn[2] = True
                        continue
                    other = upstream if s is client else client
                    other.sendall(data)
        except OSError:
            return
        finally:
            self._close(conn)

    def _close(self, conn):
        with self._lock:
            if conn in self._conns:
                self._conns.remove(conn)
        for s in conn[:2]:
            if s is None:
                continue
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def black_hole(self):
        with self._lock:
            self._holed = True
            for conn in self._conns:
                conn[2] = True

    def heal(self):
        with self._lock:
            self._holed = False
            tainted = [c for c in self._conns if c[2]]
        for conn in tainted:
            self._close(conn)

    def close(self):
        self._closed = True
        self.listener.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            self._close(conn)


# ---- Agents and their log ---------------------------------------------------


class RunLog:
    """The agents' shared log: `start <uid> <epoch> <worker> <t>` and
    `stop <uid> <epoch> <worker> <t> <how>` lines, in memory and in a file."""

    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()
        self.lines = []
        self.finished = collections.Counter()  # uid -> successful Finish calls

    def write(self, *fields):
        line = " ".join(str(f) for f in fields)
        with self._lock:
            self.lines.append(line)
            with open(self.path, "a") as f:
                f.write(line + "\n")

    def runs(self):
        """Per uid, [(start, stop or None, worker, epoch, how)] in start
        order."""
        out = collections.defaultdict(list)
        open_runs = {}
        with self._lock:
            lines = list(self.lines)
        for line in lines:
            parts = line.split()
            kind, uid, epoch, worker, t = parts[:5]
            if kind == "start":
                open_runs[(uid, worker, epoch)] = len(out[uid])
                out[uid].append([float(t), None, worker, epoch, None])
            else:
                i = open_runs.pop((uid, worker, epoch))
                out[uid][i][1] = float(t)
                out[uid][i][4] = parts[5] if len(parts) > 5 else ""
        return out

    def starts(self, uid):
        return [r for r in self.runs().get(uid, [])]

    def overlaps(self):
        """(uid, run a, run b) for every two runs of one workload whose
        start..stop intervals overlap (a run still going lasts until now)."""
        found = []
        now = time.time()
        for uid, runs in self.runs().items():
            spans = sorted((r[0], r[1] if r[1] is not None else now, r)
                           for r in runs)
            for (s1, e1, r1), (s2, e2, r2) in zip(spans, spans[1:]):
                if s2 < e1:
                    found.append((uid, r1, r2))
        return found


class Agent(threading.Thread):
    """The runner of worker `worker`'s workloads, attached on the manager.
    A run lasts `durations.pop(name)` seconds (shared by the agents: the
    first run of a workload may be long, its reruns short), else
    `duration`, unless the manager says stop. `unbound` lists the runs
    that started while the worker's copy was not bound."""

    def __init__(self, manager, worker_kqd, worker, log, durations,
                 duration=2.0):
        super().__init__(name=f"agent-{worker}", daemon=True)
        self.manager = manager
        self.worker_kqd = worker_kqd
        self.worker = worker
        self.runner_id = f"agent-{worker}"
        self.log = log
        self.duration = duration
        self.durations = durations
        self.unbound = []
        self.active = {}  # uid -> thread
        self.done = set()  # (uid, epoch) run already
        self.errors = []
        self._quit = threading.Event()
        self._lock = threading.Lock()
        self.client = None
        self.start()

    def close(self):
        self._quit.set()
        self.join(10)

    def _client(self):
        if self.client is None:
            self.client = kq.Client(self.manager.target, timeout=3.0,
                                    retry_budget=1.0)
        return self.client

    def run(self):
        while not self._quit.is_set():
            try:
                listed = self._client().list_workloads(
                    namespace=NAMESPACE).workloads
            except kq.KqError:
                time.sleep(0.3)
                continue
            for wl in listed:
                if (not kq.is_admitted(wl) or kq.is_finished(wl) or
                        wl.status.cluster_name != self.worker):
                    continue
                uid = wl.metadata.uid
                epoch = wl.status.multikueue.epoch
                with self._lock:
                    if uid in self.active or (uid, epoch) in self.done:
                        continue
                    self.done.add((uid, epoch))
                    t = threading.Thread(target=self._run_one,
                                         args=(wl.metadata.name, uid, epoch),
                                         daemon=True)
                    self.active[uid] = t
                t.start()
            time.sleep(0.2)

    def _heartbeat(self, name, stopped=False):
        return self._client().heartbeat(NAMESPACE, name, self.runner_id,
                                        lease=15.0, stopped=stopped,
                                        timeout=3.0, retry_budget=1.0)

    def _check_bound(self, name):
        """The worker's copy must be bound when a run starts (best effort:
        a frozen or killed worker is not asked)."""
        if self.worker_kqd.paused or self.worker_kqd.proc is None:
            return
        try:
            with kq.Client(self.worker_kqd.target, timeout=2.0,
                           retry_budget=0.5) as c:
                copy = c.get_workload(NAMESPACE, name).workload
        except kq.KqError:
            return
        if not copy.status.remote.bound:
            self.unbound.append(name)

    def _run_one(self, name, uid, epoch):
        try:
            try:
                self._heartbeat(name)
            except kq.KqError as e:
                # Not ours after all (evicted meanwhile, another runner).
                self.errors.append(f"attach {name}: {e}")
                return
            self.log.write("start", uid, epoch, self.worker, time.time(),
                           name)
            self._check_bound(name)
            run_for = self.durations.pop(name, self.duration)
            until = time.monotonic() + run_for
            while time.monotonic() < until and not self._quit.is_set():
                time.sleep(0.3)
                try:
                    response = self._heartbeat(name)
                except kq.KqError:
                    # The manager is down or restarting: keep running on
                    # the lease, as a runner would.
                    continue
                if response.stop:
                    self.log.write("stop", uid, epoch, self.worker,
                                   time.time(), "stopped")
                    give_up = time.monotonic() + DEADLINE
                    while time.monotonic() < give_up:
                        try:
                            self._heartbeat(name, stopped=True)
                            break
                        except kq.KqError as e:
                            if e.code in (grpc.StatusCode.NOT_FOUND,
                                          grpc.StatusCode.FAILED_PRECONDITION):
                                break
                            time.sleep(0.3)
                    return
            if self._quit.is_set():
                self.log.write("stop", uid, epoch, self.worker, time.time(),
                               "agent-closed")
                return
            self.log.write("stop", uid, epoch, self.worker, time.time(),
                           "finished")
            give_up = time.monotonic() + DEADLINE
            while time.monotonic() < give_up:
                try:
                    self._client().finish_workload(
                        NAMESPACE, name, succeeded=True,
                        message=f"done on {self.worker}")
                    self.log.finished[uid] += 1
                    return
                except kq.KqError as e:
                    if e.code != grpc.StatusCode.UNAVAILABLE:
                        self.errors.append(f"finish {name}: {e}")
                        return
                    time.sleep(0.3)
        finally:
            with self._lock:
                self.active.pop(uid, None)


# ---- Recording the manager's workloads --------------------------------------


class Recorder(threading.Thread):
    """Watches the manager's workloads (resuming across manager restarts)
    and keeps each one's distinct states of what the scenarios look at:
    (check state, check message, nominated, clusterName, epoch, Admitted,
    Evicted (reason, message), Finished), with the time each was seen."""

    def __init__(self, kqd, snapshot=None):
        super().__init__(name=f"recorder-{kqd.name}", daemon=True)
        self.kqd = kqd
        if snapshot is not None:
            self.snapshot = snapshot
        self.history = collections.defaultdict(list)
        self._lock = threading.Lock()
        self._quit = threading.Event()
        self.client = kq.Client(kqd.target, timeout=5.0, retry_budget=120.0)
        self.stream = None
        self.revision = self.client.list_workloads(
            namespace=NAMESPACE, include_finished=True).revision
        self.start()

    def close(self):
        self._quit.set()
        if self.stream is not None:
            self.stream.cancel()
        self.join(10)
        self.client.close()

    @staticmethod
    def snapshot(wl, deleted):
        state, message = check_state(wl)
        evicted = condition_of(wl, "Evicted")
        return (state, message, tuple(wl.status.nominated_cluster_names),
                wl.status.cluster_name if wl.status.HasField("cluster_name")
                else "", wl.status.multikueue.epoch, kq.is_admitted(wl),
                (evicted.reason, evicted.message)
                if evicted is not None and evicted.status == "True" else None,
                kq.is_finished(wl))

    def run(self):
        while not self._quit.is_set():
            try:
                self.stream = self.client.watch(
                    from_revision=self.revision, kinds=["Workload"],
                    namespace=NAMESPACE, resume=True)
                for event in self.stream:
                    if event.WhichOneof("object") != "workload":
                        continue
                    wl = event.workload
                    snap = self.snapshot(wl, event.type == DELETED)
                    with self._lock:
                        h = self.history[wl.metadata.name]
                        if not h or h[-1][1] != snap:
                            h.append((time.monotonic(), snap))
                        self.revision = max(self.revision, event.revision)
            except (kq.KqError, grpc.RpcError, ValueError):
                if self._quit.is_set():
                    return
                time.sleep(0.3)

    def states(self, name):
        with self._lock:
            return list(self.history.get(name, []))

    def saw(self, name, predicate):
        """The first recorded (t, snapshot) of `name` for which
        predicate(snapshot) holds, or None."""
        for t, snap in self.states(name):
            if predicate(snap):
                return t, snap
        return None


def copy_snapshot(wl, deleted):
    """What a worker recorder keeps of a copy: (deleted, bound, epoch,
    QuotaReserved, Admitted, Evicted reason or None, origin)."""
    evicted = condition_of(wl, "Evicted")
    reserved = condition_of(wl, "QuotaReserved")
    return (deleted, wl.status.remote.bound, wl.status.remote.epoch,
            reserved is not None and reserved.status == "True",
            kq.is_admitted(wl),
            evicted.reason if evicted is not None and
            evicted.status == "True" else None, wl.status.remote.origin)


C_DELETED, C_BOUND, C_EPOCH, C_RESERVED, C_ADMITTED, C_EVICTED, C_ORIGIN = \
    range(7)

# Indexes into Recorder snapshots.
STATE, MESSAGE, NOMINATED, CLUSTER, EPOCH, ADMITTED, EVICTED, FINISHED = \
    range(8)


# ---- Objects ----------------------------------------------------------------


def priority_classes_yaml():
    return """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: low}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
"""


def queues_yaml(cpu, checks=()):
    """ResourceFlavor default, ClusterQueue cq with `cpu` and the admission
    checks named, LocalQueue team-a/lq."""
    check_list = ""
    if checks:
        check_list = "  admissionChecksStrategy:\n    admissionChecks:\n" + \
            "".join(f"    - name: {c}\n" for c in checks)
    return f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {{name: default}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  namespaceSelector: {{}}
  preemption: {{withinClusterQueue: LowerPriority}}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{{name: cpu, nominalQuota: {cpu}}}]
{check_list}---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{namespace: {NAMESPACE}, name: lq}}
spec: {{clusterQueue: cq}}
"""


def multikueue_yaml(contexts):
    """The check mk, its MultiKueueConfig and one MultiKueueCluster per
    (name, contexts file path)."""
    text = f"""\
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {{name: mk}}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: MultiKueueConfig
    name: mkconf
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {{name: mkconf}}
spec:
  clusters: [{", ".join(name for name, _ in contexts)}]
"""
    for name, path in contexts:
        text += f"""\
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {{name: {name}}}
spec:
  clusterSource:
    kubeConfig: {{locationType: Path, location: {path}}}
"""
    return text


def manager_config(dispatcher=None, step_size=1, round_timeout="3s",
                   origin=None, fencing=None):
    """The manager's Kueue Configuration: the scenarios' short timings."""
    text = ("apiVersion: config.kueue.x-k8s.io/v1beta2\n"
            "kind: Configuration\nmultiKueue:\n"
            "  workerLostTimeout: 8s\n  gcInterval: 2s\n")
    if fencing:
        text += f"  fencing: {fencing}\n"
    if origin:
        text += f"  origin: {origin}\n"
    if dispatcher:
        text += f"  dispatcherName: {dispatcher}\n"
        if dispatcher.endswith("incremental"):
            text += ("  incrementalDispatcherConfig:\n"
                     f"    stepSize: {step_size}\n"
                     f"    roundTimeout: {round_timeout}\n")
    return text


def write_contexts(path, name, port):
    with open(path, "w") as f:
        f.write("apiVersion: kq/v1\nkind: Config\n"
                f"current-context: {name}\ncontexts:\n"
                f"- name: {name}\n  server: 127.0.0.1:{port}\n")


# ---- The federation ---------------------------------------------------------


class Federation:
    """A manager and three workers, each behind a proxy of its own, with
    their agents and the recorder."""

    def __init__(self, prefix="kq-fed-"):
        self.dir = tempfile.mkdtemp(prefix=prefix)
        self.log = RunLog(os.path.join(self.dir, "runs.log"))
        self.workers = {}
        self.proxies = {}
        self.agents = {}
        self.manager = None
        self.recorder = None
        self.copy_recorders = {}
        # Workload name -> seconds its next run lasts (default: 2 s).
        self.durations = {}

    def start(self, worker_cpu=None, manager_cpu=None):
        worker_cpu = worker_cpu or {w: 4 for w in WORKERS}
        try:
            contexts = []
            for w in WORKERS:
                k = Kqd(self.dir, w).start()
                self.workers[w] = k
                k.apply(priority_classes_yaml() + queues_yaml(worker_cpu[w]))
                proxy = Proxy(k.port)
                self.proxies[w] = proxy
                path = os.path.join(self.dir, f"ctx-{w}.yaml")
                write_contexts(path, w, proxy.port)
                contexts.append((w, path))
            self.contexts = contexts
            self.manager = Kqd(self.dir, "manager", manager_config(),
                               http=True).start()
            total = manager_cpu if manager_cpu is not None else sum(
                worker_cpu.values())
            self.manager.apply(priority_classes_yaml() +
                               queues_yaml(total, checks=["mk"]) + "---\n" +
                               multikueue_yaml(contexts))
            for w in WORKERS:
                self.agents[w] = Agent(self.manager, self.workers[w], w,
                                       self.log, self.durations)
                self.copy_recorders[w] = Recorder(self.workers[w],
                                                  copy_snapshot)
            self.recorder = Recorder(self.manager)
        except BaseException:
            self.close()
            raise
        return self

    def set_worker_cpu(self, worker, cpu, checks=()):
        self.workers[worker].apply(queues_yaml(cpu, checks))

    def set_manager_cpu(self, cpu):
        self.manager.apply(queues_yaml(cpu, checks=["mk"]))

    def submit(self, name, cpu=2, priority_class=None):
        wl = kq.workload(name, NAMESPACE, "lq", {"cpu": cpu},
                         priority_class=priority_class)
        return self.manager.client().submit_workload(wl).workload

    def get(self, name):
        return self.manager.client().get_workload(NAMESPACE, name).workload

    def copies(self, worker, name=None):
        """The copies on `worker` (of workload `name`), finished ones
        excluded."""
        listed = self.workers[worker].client().list_workloads(
            namespace=NAMESPACE).workloads
        return [wl for wl in listed if wl.status.HasField("remote") and
                (name is None or wl.metadata.name == name)]

    def where(self, name):
        """The workers holding a copy of `name`."""
        return [w for w in WORKERS if self.copies(w, name)]

    def cluster_active(self, worker):
        """(status, reason, message) of the MultiKueueCluster's Active
        condition on the manager."""
        obj = self.manager.client().get_object("MultiKueueCluster", worker)
        for c in obj.multi_kueue_cluster.status.conditions:
            if c.type == "Active":
                return c.status, c.reason, c.message
        return None, None, None

    def connected(self, workers=WORKERS):
        return all(self.cluster_active(w)[0] == "True" for w in workers)

    def finished(self, name):
        wl = self.get(name)
        return wl if kq.is_finished(wl) else None

    def _federation_call(self, worker, method, request):
        channel = grpc.insecure_channel(self.workers[worker].target)
        try:
            stub = federation_service_pb2_grpc.FederationServiceStub(channel)
            return getattr(stub, method)(request, timeout=10).results[0]
        finally:
            channel.close()

    @staticmethod
    def _key(key, name, origin, uid, epoch):
        key.namespace = NAMESPACE
        key.name = name
        key.origin = origin
        key.origin_uid = uid
        key.epoch = epoch

    def upsert_foreign(self, worker, name, origin="other", uid="foreign-uid",
                       epoch=1, workload=None):
        """UpsertRemote of one copy on `worker`, as the manager of `origin`
        would send it (by default another manager's small workload)."""
        item = federation_service_pb2.UpsertRemoteItem()
        self._key(item.key, name, origin, uid, epoch)
        wl = kq.workload(name, NAMESPACE, "lq", {"cpu": "100m"})
        if workload is not None:
            wl.metadata.labels.update(workload.metadata.labels)
            wl.spec.CopyFrom(workload.spec)
        item.workload.CopyFrom(wl)
        return self._federation_call(
            worker, "UpsertRemote",
            federation_service_pb2.UpsertRemoteRequest(items=[item]))

    def delete_foreign(self, worker, name, origin="other", uid="foreign-uid",
                       epoch=1):
        item = federation_service_pb2.RemoteItem()
        self._key(item.key, name, origin, uid, epoch)
        return self._federation_call(
            worker, "DeleteRemote",
            federation_service_pb2.RemoteRequest(items=[item]))

    def diagnostics(self):
        out = [f"runs: {self.log.lines}"]
        for name, k in [("manager", self.manager)] + list(
                self.workers.items()):
            if k is not None:
                out.append(f"---- {name} log tail:\n{k.log_tail(4000)}")
        return "\n".join(out)

    def close(self):
        if self.recorder is not None:
            self.recorder.close()
        for r in self.copy_recorders.values():
            r.close()
        for agent in self.agents.values():
            agent.close()
        if self.manager is not None:
            self.manager.close()
        for k in self.workers.values():
            k.close()
        for p in self.proxies.values():
            p.close()
        if not os.environ.get("KQ_E2E_KEEP"):
            shutil.rmtree(self.dir, ignore_errors=True)
