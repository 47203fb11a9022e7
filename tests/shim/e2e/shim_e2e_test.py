#!/usr/bin/python3
"""End-to-end tests of kq-k8s-shim (issue 7) with the real binaries.

Every scenario starts its own processes on free loopback ports in a temp
dir: the Kubernetes API server fixture (tests/k8s/fake_apiserver.py), kqd,
kq-k8s-shim with a serving certificate signed by a CA made here, and drives
them with the real kubectl and the kq CLI, as a user would. Every process
is killed at the end, also on failure (then the logs' tails are printed).

Usage:
  shim_e2e_test.py SCENARIO --bin DIR [--kubectl PATH] [--fixture PATH]
                   [--seed DIR] [--examples DIR]
SCENARIO: seed, preemption, webhook, provisioning, restarts,
deletion_failure, or all. Exit 0: passed, 1: failed, 77: skipped (no
kubectl).

KQ_E2E_KEEP=1 keeps the temp dir.
"""

import argparse
import base64
import json
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
import traceback
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "testing"))
from child_process import die_with_parent  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
RUNTIME_ANNOTATION = "fake.kq.dev/runtime-seconds"
FAIL_ANNOTATION = "fake.kq.dev/fail"
CONSUME_ANNOTATION = "autoscaling.x-k8s.io/consume-provisioning-request"
CLASS_ANNOTATION = "autoscaling.x-k8s.io/provisioning-class-name"
A100_LABELS = {"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}
WEBHOOK_CONFIG = "kq-k8s-shim"

ARGS = None


class Failure(Exception):
    """A hard failure: the scenario cannot go on."""


class CommandError(Failure):
    """A client command (kubectl, kq) failed: hard, except while polling."""


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def short(value, limit=3000):
    text = value if isinstance(value, str) else json.dumps(value, indent=1)
    return text if len(text) <= limit else text[:limit] + "...(cut)"


# --------------------------------------------------------------- objects


def condition(obj, ctype):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c
    return None


def condition_true(obj, ctype):
    c = condition(obj, ctype)
    return c is not None and c.get("status") == "True"


def template_spec(job):
    return job["spec"]["template"].get("spec") or {}


def template_annotations(job):
    return (job["spec"]["template"].get("metadata") or
            {}).get("annotations") or {}


def suspended(job):
    return job["spec"].get("suspend") is True


def active(job):
    return (job.get("status") or {}).get("active") or 0


def workload_job(wl):
    return ((wl.get("metadata") or {}).get("annotations") or
            {}).get("kq.dev/job-name")


def workload_job_uid(wl):
    return ((wl.get("metadata") or {}).get("annotations") or
            {}).get("kq.dev/job-uid")


def admitted(wl):
    return condition_true(wl, "Admitted")


def finished(wl):
    return condition_true(wl, "Finished")


def reserved(wl):
    return condition_true(wl, "QuotaReserved")


def job_manifest(name,
                 namespace,
                 queue,
                 count=1,
                 requests=None,
                 suspend=True,
                 priority_class=None,
                 runtime=None,
                 fail=False,
                 node_selector=None,
                 tolerations=None,
                 annotations=None):
    labels = {QUEUE_LABEL: queue} if queue else {}
    if priority_class:
        labels[PRIORITY_LABEL] = priority_class
    ann = dict(annotations or {})
    if runtime is not None:
        ann[RUNTIME_ANNOTATION] = str(runtime)
    if fail:
        ann[FAIL_ANNOTATION] = "true"
    pod_spec = {
        "restartPolicy":
            "Never",
        "containers": [{
            "name": "main",
            "image": "busybox",
            "command": ["sleep", "3600"],
            "resources": {
                "requests": requests or {
                    "cpu": "1"
                }
            },
        }],
    }
    if node_selector:
        pod_spec["nodeSelector"] = dict(node_selector)
    if tolerations:
        pod_spec["tolerations"] = list(tolerations)
    spec = {
        "parallelism": count,
        "completions": count,
        "template": {
            "spec": pod_spec
        },
    }
    if suspend is not None:
        spec["suspend"] = suspend
    md = {"name": name, "namespace": namespace, "labels": labels}
    if ann:
        md["annotations"] = ann
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": md,
        "spec": spec
    }


# --------------------------------------------------------------- processes


class Proc:

    def __init__(self, name, argv, log_path, stdout=None):
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.log_file = open(log_path, "ab")
        self.popen = subprocess.Popen(
            die_with_parent(argv),
            stdout=stdout if stdout is not None else self.log_file,
            stderr=self.log_file,
            stdin=subprocess.DEVNULL,
            start_new_session=True)

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def kill9(self):
        if self.alive():
            os.kill(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)

    def stop(self, grace=5.0):
        if self.alive():
            try:
                os.kill(self.popen.pid, signal.SIGTERM)
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.kill(self.popen.pid, signal.SIGKILL)
                self.popen.wait(timeout=10)
            except ProcessLookupError:
                pass
        self.log_file.close()


class Env:
    """One scenario's processes, files and clients."""

    def __init__(self, name):
        self.name = name
        self.dir = tempfile.mkdtemp(prefix=f"kq-shim-e2e-{name}-")
        self.procs = []
        self.failures = []
        self.checks = 0
        self.fixture = None
        self.kqd = None
        self.shim = None
        self.kqd_port = free_port()
        self.kubeconfig = os.path.join(self.dir, "fx", "kubeconfig")
        self.webhook_port = None
        self.health_port = None
        self.shim_starts = 0

    # ---- checks

    def expect(self, ok, what, detail=""):
        self.checks += 1
        if ok:
            log(f"ok: {what}")
        else:
            msg = f"{what}" + (f"\n    {short(detail)}" if detail else "")
            log(f"FAIL: {msg}")
            self.failures.append(msg)
        return ok

    def require(self, ok, what, detail=""):
        if not self.expect(ok, what, detail):
            raise Failure(what)

    def wait_for(self, fn, what, timeout=20.0, interval=0.2, hard=True):
        """Polls fn() until it returns a truthy value; returns it. On
        timeout the check fails with the last value fn() saw (fn may return
        (False, detail) to say what it saw)."""
        deadline = time.monotonic() + timeout
        last = None
        while True:
            try:
                got = fn()
            except CommandError as e:  # keep polling
                got = (False, f"error: {e}")
            detail = None
            if isinstance(got, tuple):
                got, detail = got
            if got:
                self.expect(True, what)
                return got
            last = detail
            if time.monotonic() > deadline:
                if hard:
                    self.require(False, f"{what} (timed out after {timeout}s)",
                                 last)
                self.expect(False, f"{what} (timed out after {timeout}s)", last)
                return None
            time.sleep(interval)

    def hold(self, fn, what, seconds):
        """fn() must stay truthy for `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got = fn()
            detail = None
            if isinstance(got, tuple):
                got, detail = got
            if not got:
                return self.expect(False, what, detail)
            time.sleep(0.2)
        return self.expect(True, what)

    # ---- processes

    def start_fixture(self, job_runtime=2.0, pod_stop_seconds=0.5):
        proc = Proc("fixture", [
            "/usr/bin/python3", ARGS.fixture, "--dir",
            os.path.join(self.dir, "fx"), "--port", "0", "--job-runtime",
            str(job_runtime), "--pod-stop-seconds",
            str(pod_stop_seconds)
        ],
                    os.path.join(self.dir, "fixture.log"),
                    stdout=subprocess.PIPE)
        self.procs.append(proc)
        deadline = time.monotonic() + 30
        line = b""
        while time.monotonic() < deadline and b"\n" not in line:
            r, _, _ = select.select([proc.popen.stdout], [], [], 0.5)
            if r:
                chunk = os.read(proc.popen.stdout.fileno(), 4096)
                if not chunk:
                    break
                line += chunk
        if not line.startswith(b"READY "):
            raise Failure(f"fixture did not start: {line!r}")
        self.api_url = line.split()[1].decode()

        def drain():
            try:
                while os.read(proc.popen.stdout.fileno(), 4096):
                    pass
            except OSError:
                pass

        threading.Thread(target=drain, daemon=True).start()
        self.fixture = proc
        log(f"fixture at {self.api_url}")

    def start_kqd(self):
        port_file = os.path.join(self.dir, "kqd.port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        proc = Proc("kqd", [
            ARGS.kqd, f"--listen=127.0.0.1:{self.kqd_port}",
            f"--data-dir={os.path.join(self.dir, 'kqd-data')}",
            f"--port-file={port_file}", "--log-level=info",
            "--http-listen=127.0.0.1:0",
            "--eviction-grace=30s"
        ], os.path.join(self.dir, "kqd.log"))
        self.procs.append(proc)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(port_file) and open(port_file).read().strip():
                break
            if not proc.alive():
                raise Failure("kqd exited at start")
            time.sleep(0.05)
        else:
            raise Failure("kqd did not write its port file")
        self.kqd = proc
        log(f"kqd at 127.0.0.1:{self.kqd_port} (pid {proc.pid})")

    def make_certs(self):
        """A CA and a serving certificate for 127.0.0.1 signed by it."""
        d = os.path.join(self.dir, "certs")
        os.makedirs(d, exist_ok=True)

        def openssl(*argv):
            subprocess.run(["openssl", *argv],
                           check=True,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)

        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256",
                "-days", "1", "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt",
                "-subj", "/CN=kq-shim-e2e-ca", "-addext",
                "basicConstraints=critical,CA:TRUE", "-addext",
                "keyUsage=critical,keyCertSign,cRLSign")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-sha256", "-keyout",
                f"{d}/tls.key", "-out", f"{d}/tls.csr", "-subj",
                "/CN=kq-k8s-shim-webhook")
        with open(f"{d}/tls.ext", "w") as f:
            f.write("subjectAltName=IP:127.0.0.1\n"
                    "basicConstraints=critical,CA:FALSE\n"
                    "keyUsage=critical,digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth\n"
                    "subjectKeyIdentifier=hash\n"
                    "authorityKeyIdentifier=keyid,issuer\n")
        openssl("x509", "-req", "-sha256", "-days", "1", "-in", f"{d}/tls.csr",
                "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
                "-CAcreateserial", "-extfile", f"{d}/tls.ext", "-out",
                f"{d}/tls.crt")
        self.certs = d

    def start_shim(self, lease="30s", wait_ready=True):
        if self.webhook_port is None:
            self.make_certs()
            self.webhook_port = free_port()
            self.health_port = free_port()
        self.shim_starts += 1
        proc = Proc("shim", [
            ARGS.shim, f"--kqd=127.0.0.1:{self.kqd_port}",
            f"--kubeconfig={self.kubeconfig}", "--runner-id=shim-e2e",
            f"--lease={lease}", "--resync=1m", "--webhook-address=127.0.0.1",
            f"--webhook-port={self.webhook_port}",
            f"--webhook-cert={self.certs}/tls.crt",
            f"--webhook-key={self.certs}/tls.key",
            f"--health-port={self.health_port}", "--log-level=debug"
        ], os.path.join(self.dir, f"shim-{self.shim_starts}.log"))
        self.procs.append(proc)
        self.shim = proc
        log(f"shim started (pid {proc.pid})")
        if wait_ready:
            self.wait_for(self.shim_ready,
                          "shim /readyz answers 200",
                          timeout=30)

    def health(self, path):
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.health_port}{path}",
                    timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except (urllib.error.URLError, OSError) as e:
            return 0, str(e)

    def shim_ready(self):
        if self.shim is not None and not self.shim.alive():
            raise Failure(f"the shim exited (rc {self.shim.popen.poll()})")
        code, body = self.health("/readyz")
        return code == 200, f"{code} {body}"

    def close(self):
        for p in reversed(self.procs):
            try:
                p.stop()
            except Exception as e:  # keep stopping the others
                log(f"stopping {p.name}: {e}")
        if self.failures or os.environ.get("KQ_E2E_KEEP"):
            self.dump_logs()
        if os.environ.get("KQ_E2E_KEEP"):
            log(f"kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)

    def dump_logs(self):
        for name in sorted(os.listdir(self.dir)):
            if not name.endswith(".log"):
                continue
            with open(os.path.join(self.dir, name), errors="replace") as f:
                lines = f.readlines()
            print(f"----- {name} (last 60 of {len(lines)} lines)")
            sys.stdout.writelines(lines[-60:])
        print("-----", flush=True)

    # ---- clients

    def run(self, argv, input=None, check=True, env=None, timeout=40):
        try:
            res = subprocess.run(argv,
                                 input=input,
                                 capture_output=True,
                                 text=True,
                                 env=env,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CommandError(f"{' '.join(argv)}: no answer in {timeout}s")
        if check and res.returncode != 0:
            raise CommandError(f"{' '.join(argv)}: exit {res.returncode}: "
                               f"{res.stdout}{res.stderr}")
        return res

    def kubectl(self, *args, input=None, check=True):
        env = dict(os.environ, KUBECONFIG=self.kubeconfig)
        return self.run([ARGS.kubectl, "--request-timeout=20s", *args],
                        input=input,
                        check=check,
                        env=env)

    def kubectl_json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def kq(self, *args, input=None, check=True):
        return self.run([ARGS.kq, f"--server=127.0.0.1:{self.kqd_port}", *args],
                        input=input,
                        check=check)

    def create(self, obj):
        """kubectl create -f - ; returns the object the server stored."""
        return json.loads(
            self.kubectl("create",
                         "-f",
                         "-",
                         "-o",
                         "json",
                         input=json.dumps(obj)).stdout)

    def job(self, ns, name):
        return self.kubectl_json("get", "job", name, "-n", ns)

    def jobs(self, ns):
        return {
            j["metadata"]["name"]: j
            for j in self.kubectl_json("get", "jobs", "-n", ns)["items"]
        }

    def events(self, ns):
        return self.kubectl_json("get", "events", "-n", ns)["items"]

    def job_events(self, ns, name, reason=None, uid=None):
        out = []
        for e in self.events(ns):
            io = e.get("involvedObject") or {}
            if io.get("kind") != "Job" or io.get("name") != name:
                continue
            if uid is not None and io.get("uid") != uid:
                continue
            if reason is not None and e.get("reason") != reason:
                continue
            out.append(e)
        return out

    def workloads(self, ns):
        return json.loads(
            self.kq("get", "workloads", "-n", ns, "-o", "json").stdout)["items"]

    def workloads_of(self, ns, job_name, uid=None):
        return [
            w for w in self.workloads(ns) if workload_job(w) == job_name and
            (uid is None or workload_job_uid(w) == uid)
        ]

    def the_workload(self, ns, job_name, uid=None):
        """The one workload of the Job (a hard failure if there are more)."""
        wls = self.workloads_of(ns, job_name, uid)
        if len(wls) > 1:
            self.require(False, f"one workload for job {ns}/{job_name}",
                         [w["metadata"]["name"] for w in wls])
        return wls[0] if wls else None

    def requests_log(self):
        return json.loads(
            self.kubectl("get", "--raw", "/fixture/requests").stdout)

    def suspend_writes(self, ns, name):
        """The fixture's record of writes (update or patch) that set
        spec.suspend=true on the Job."""
        path = f"/apis/batch/v1/namespaces/{ns}/jobs/{name}"
        out = []
        for r in self.requests_log():
            if r["method"] not in ("PUT", "PATCH") or r["path"] != path:
                continue
            try:
                body = json.loads(r.get("body") or "{}")
            except ValueError:
                continue
            if isinstance(
                    body,
                    dict) and (body.get("spec") or {}).get("suspend") is True:
                out.append(r)
        return out

    def register_webhook(self):
        with open(os.path.join(self.certs, "ca.crt"), "rb") as f:
            ca = base64.b64encode(f.read()).decode()
        mwc = {
            "apiVersion":
                "admissionregistration.k8s.io/v1",
            "kind":
                "MutatingWebhookConfiguration",
            "metadata": {
                "name": WEBHOOK_CONFIG
            },
            "webhooks": [{
                "name": "mjob.kq-k8s-shim.kq.dev",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": f"https://127.0.0.1:{self.webhook_port}"
                           "/mutate-batch-v1-job",
                    "caBundle": ca,
                },
                "rules": [{
                    "apiGroups": ["batch"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE"],
                    "resources": ["jobs"],
                    "scope": "Namespaced",
                }],
                "objectSelector": {
                    "matchExpressions": [{
                        "key": QUEUE_LABEL,
                        "operator": "Exists"
                    }]
                },
                "namespaceSelector": {
                    "matchExpressions": [{
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": ["kube-system"]
                    }]
                },
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "timeoutSeconds": 10,
            }],
        }
        out = self.kubectl("create", "-f", "-", input=json.dumps(mwc)).stdout
        self.expect(
            out.strip() == "mutatingwebhookconfiguration.admissionregistration"
            f".k8s.io/{WEBHOOK_CONFIG} created",
            "webhook configuration registered", out)

    # ---- kq configuration

    def apply_seed(self):
        """The seed's Kueue manifests, as `kq apply -f`. The seed's
        ClusterQueue has no namespaceSelector, which under Kueue's rule
        matches no namespace (the walkthrough shows that); it is applied with
        namespaceSelector: {} so that its Jobs can be admitted."""
        seed = ARGS.seed
        files = [
            "resource-flavors.yaml", "local-queue.yaml",
            "workload-priority.yaml", "admission-check.yaml"
        ]
        argv = ["apply"]
        for f in files:
            argv += ["-f", os.path.join(seed, f)]
        out = self.kq(*argv).stdout
        with open(os.path.join(seed, "cluster-queue.yaml")) as f:
            cq = f.read().replace("\nspec:\n",
                                  "\nspec:\n  namespaceSelector: {}\n", 1)
        out += self.kq("apply", "-f", "-", input=cq).stdout
        for want in ("resourceflavor.kueue.x-k8s.io/gpu-a100 created",
                     "clusterqueue.kueue.x-k8s.io/ai-training-queue created",
                     "localqueue.kueue.x-k8s.io/ml-jobs created",
                     "workloadpriorityclass.kueue.x-k8s.io/production-training "
                     "created",
                     "workloadpriorityclass.kueue.x-k8s.io/experiment created"):
            self.require(want in out, f"kq apply: {want}", out)

    def seed_job(self):
        path = os.path.join(ARGS.seed, "training-job.yaml")
        with open(path) as f:
            text = f.read()
        name = ns = None
        in_md = False
        for line in text.splitlines():
            if line.startswith("metadata:"):
                in_md = True
                continue
            if in_md and line.startswith("  name:"):
                name = line.split(":", 1)[1].strip()
            if in_md and line.startswith("  namespace:"):
                ns = line.split(":", 1)[1].strip()
            if in_md and line and not line.startswith(" "):
                in_md = False
        return path, ns or "default", name

    def cq_usage(self, cq):
        """{flavor: {resource: total}} of the ClusterQueue's reservations."""
        obj = json.loads(self.kq("get", "cq", cq, "-o", "json").stdout)
        out = {}
        for fu in (obj.get("status") or {}).get("flavorsReservation") or []:
            out[fu["name"]] = {
                r["name"]: r.get("total", "0")
                for r in fu.get("resources") or []
            }
        return out

    def gpu_usage(self,
                  cq="ai-training-queue",
                  flavor="gpu-a100",
                  resource="nvidia.com/gpu"):
        return self.cq_usage(cq).get(flavor, {}).get(resource, "0")

    # ---- polling

    def until_job(self, ns, name, pred, what, timeout=20.0, interval=0.2):
        """Polls the Job until pred(job); returns the Job."""

        def probe():
            j = self.job(ns, name)
            return (j if pred(j) else None, {
                "spec.suspend": j["spec"].get("suspend"),
                "annotations": j["metadata"].get("annotations"),
                "status": j.get("status")
            })

        return self.wait_for(probe, what, timeout, interval)

    def until_workload(self, ns, job_name, uid, pred, what, timeout=20.0):
        """Polls the Job's one workload until pred(workload); returns it."""

        def probe():
            w = self.the_workload(ns, job_name, uid)
            return (w if w is not None and pred(w) else None, w and
                    w.get("status"))

        return self.wait_for(probe, what, timeout)

    def until_cancelled(self, ns, job_name, uid, what, timeout=20.0):
        """The Job's workload finished as kq's cancel finishes it."""
        wl = self.until_workload(ns, job_name, uid, finished,
                                 f"{what}: workload finished", timeout)
        fin = condition(wl, "Finished")
        self.expect(
            fin.get("reason") == "Cancelled", f"{what}: workload cancelled",
            fin)
        return wl

    def until_gpu_usage(self, want, what, timeout=20.0):
        return self.wait_for(
            lambda: (lambda u: (u == want, u))(self.gpu_usage()), what, timeout)

    def metric_lines(self, word):
        _, body = self.health("/metrics")
        return [l for l in body.splitlines() if word in l]


def standard_env(name, job_runtime=2.0, pod_stop_seconds=0.5, lease="30s"):
    env = Env(name)
    env.start_fixture(job_runtime=job_runtime,
                      pod_stop_seconds=pod_stop_seconds)
    env.start_kqd()
    env.start_shim(lease=lease)
    return env


def running(job):
    return not suspended(job)


def stopping(job):
    """Suspended with pods still active (the stop is in progress)."""
    return suspended(job) and active(job) > 0


GPU_POD = {"nvidia.com/gpu": "1", "cpu": "1", "memory": "1Gi"}

# =============================================================== scenarios


def scenario_seed(env):
    """The seed manifests through kq, the seed Job through the fixture with
    the webhook registered: admitted on gpu-a100, unsuspended with its
    nodeSelector, Events recorded, then Finished when the Job completes."""
    env.apply_seed()
    env.register_webhook()
    path, ns, name = env.seed_job()
    out = env.kubectl("create", "-f", path).stdout.strip()
    env.expect(out == f"job.batch/{name} created", "kubectl create -f seed job",
               out)
    uid = env.job(ns, name)["metadata"]["uid"]

    job = env.until_job(ns, name, running, "seed job unsuspended")
    spec = template_spec(job)
    env.expect(
        spec.get("nodeSelector") == A100_LABELS,
        "nodeSelector is gpu-a100's nodeLabels", spec.get("nodeSelector"))
    env.expect("tolerations" not in spec,
               "no tolerations added (gpu-a100 has none)", spec)
    labels = (job["spec"]["template"].get("metadata") or {}).get("labels")
    env.expect(
        labels.get("kueue.x-k8s.io/podset") == "main" and
        labels.get("kueue.x-k8s.io/cluster-queue-name") == "ai-training-queue",
        "pod template labelled with pod set and ClusterQueue", labels)
    env.expect(job["spec"].get("parallelism") == 4, "parallelism kept",
               job["spec"])

    started = env.wait_for(lambda: env.job_events(ns, name, "Started", uid=uid),
                           "Event Started on the job")
    env.expect(
        len(started) == 1 and started[0]["type"] == "Normal" and
        started[0]["message"] == "Admitted by clusterQueue ai-training-queue",
        "one Normal Started 'Admitted by clusterQueue ai-training-queue'",
        started)
    created = env.job_events(ns, name, "CreatedWorkload", uid=uid)
    env.expect(len(created) == 1, "one CreatedWorkload event", created)
    # As `kubectl get events --field-selector` finds it.
    selected = env.kubectl_json(
        "get", "events", "-n", ns, "--field-selector",
        f"involvedObject.kind=Job,involvedObject.name={name},reason=Started"
    )["items"]
    env.expect(
        len(selected) == 1 and selected[0]["involvedObject"]["uid"] == uid,
        "kubectl get events --field-selector ...reason=Started: one", selected)

    wl = env.until_workload(ns, name, uid, admitted, "workload admitted in kq")
    wl_name = wl["metadata"]["name"]
    env.expect(wl_name.startswith(f"job-{name}-"),
               f"workload named job-{name}-<hash>", wl_name)
    ps = wl["spec"]["podSets"]
    env.expect(
        len(ps) == 1 and ps[0]["name"] == "main" and ps[0]["count"] == 4,
        "pod set main, count 4", ps)
    requests = ps[0]["template"]["spec"]["containers"][0]["resources"][
        "requests"] if ps else None
    env.expect(
        requests == {
            "nvidia.com/gpu": "1",
            "cpu": "8",
            "memory": "32Gi"
        }, "pod set requests are the pod template's", requests)
    flavors = wl["status"]["admission"]["podSetAssignments"][0]["flavors"]
    env.expect(
        flavors.get("nvidia.com/gpu") == "gpu-a100", "gpu assigned gpu-a100",
        flavors)
    table = env.kq("get", "workloads", "-n", ns).stdout
    row = [l for l in table.splitlines() if l.startswith(wl_name)]
    env.expect(
        len(row) == 1 and
        row[0].split()[1:4] == ["ml-jobs", "ai-training-queue", "True"],
        "kq get workloads: admitted in ai-training-queue", table)
    env.expect(env.gpu_usage() == "4", "ClusterQueue reserves 4 GPUs",
               env.cq_usage("ai-training-queue"))

    env.until_job(ns,
                  name,
                  lambda j: condition_true(j, "Complete"),
                  "fixture completes the job",
                  timeout=30)
    wl = env.until_workload(ns, name, uid, finished, "workload Finished")
    fin = condition(wl, "Finished")
    env.expect(
        fin.get("reason") == "Succeeded", "Finished reason Succeeded", fin)
    env.until_gpu_usage("0", "quota released after the job finished")
    env.expect(
        len(env.job_events(ns, name, "FinishedWorkload", uid=uid)) == 1,
        "one FinishedWorkload event")
    env.expect(
        len(env.job_events(ns, name, "Started", uid=uid)) == 1,
        "still one Started event")


def scenario_preemption(env):
    """An experiment Job filling gpu-a100 is preempted by a
    production-training Job: suspended, pods gone, template restored, quota
    released, then the production Job unsuspended; the experiment Job is
    requeued and runs again once the production Job completed."""
    env.apply_seed()
    # gpu-a100 with a toleration, to see one injected and restored.
    a100_tolerations = [{
        "key": "nvidia.com/gpu",
        "operator": "Exists",
        "effect": "NoSchedule"
    }]
    env.kq("apply",
           "-f",
           "-",
           input=json.dumps({
               "apiVersion": "kueue.x-k8s.io/v1beta1",
               "kind": "ResourceFlavor",
               "metadata": {
                   "name": "gpu-a100"
               },
               "spec": {
                   "nodeLabels": A100_LABELS,
                   "tolerations": a100_tolerations
               },
           }))
    ns = "team-ml"
    own_selector = {"team": "research"}
    own_tolerations = [{
        "key": "dedicated",
        "operator": "Equal",
        "value": "research",
        "effect": "NoSchedule"
    }]
    stored = env.create(
        job_manifest("experiment-sweep",
                     ns,
                     "ml-jobs",
                     count=16,
                     requests=GPU_POD,
                     priority_class="experiment",
                     runtime=600,
                     node_selector=own_selector,
                     tolerations=own_tolerations))
    exp_uid = stored["metadata"]["uid"]
    original_spec = template_spec(stored)

    job = env.until_job(ns, "experiment-sweep",
                        lambda j: running(j) and active(j) == 16,
                        "experiment job unsuspended and 16 pods active")
    spec = template_spec(job)
    env.expect(
        spec.get("nodeSelector") == {
            **own_selector,
            **A100_LABELS
        }, "experiment nodeSelector: its own + gpu-a100's",
        spec.get("nodeSelector"))
    env.expect(
        spec.get("tolerations") == own_tolerations + a100_tolerations,
        "experiment tolerations: its own + gpu-a100's", spec.get("tolerations"))
    exp_wl = env.the_workload(ns, "experiment-sweep", exp_uid)
    env.require(exp_wl is not None and admitted(exp_wl),
                "experiment workload admitted")
    env.expect(
        exp_wl["spec"].get("priority") == 100 and
        exp_wl["spec"].get("priorityClassName") == "experiment",
        "experiment workload priority 100 from WorkloadPriorityClass "
        "experiment", exp_wl["spec"])
    env.expect(env.gpu_usage() == "16", "gpu-a100 quota full (16/16)")

    prod_uid = env.create(
        job_manifest("prod-train",
                     ns,
                     "ml-jobs",
                     count=4,
                     requests={
                         "nvidia.com/gpu": "1",
                         "cpu": "2",
                         "memory": "4Gi"
                     },
                     priority_class="production-training",
                     runtime=3))["metadata"]["uid"]

    # Every snapshot of both Jobs until the production Job runs: it must
    # never run while an experiment pod is still active.
    seen = {"suspended": False, "drained": False}
    overlap = []

    def handover():
        js = env.jobs(ns)
        e, p = js["experiment-sweep"], js["prod-train"]
        seen["suspended"] |= suspended(e)
        seen["drained"] |= suspended(e) and active(e) == 0
        if running(p) and (active(e) > 0 or running(e)):
            overlap.append({
                "suspend": e["spec"]["suspend"],
                "active": active(e)
            })
        return (running(p), {
            "experiment": [e["spec"].get("suspend"),
                           e.get("status")],
            "prod": p["spec"].get("suspend")
        })

    env.wait_for(handover,
                 "production job unsuspended",
                 timeout=45,
                 interval=0.1)
    env.expect(seen["suspended"], "experiment job was suspended")
    env.expect(seen["drained"], "experiment job's active pods went to 0")
    env.expect(not overlap,
               "production never ran while experiment pods were active",
               overlap)

    e = env.job(ns, "experiment-sweep")
    env.expect(
        suspended(e) and active(e) == 0,
        "experiment job suspended, status.active 0", e.get("status"))
    spec = template_spec(e)
    env.expect(
        spec.get("nodeSelector") == original_spec.get("nodeSelector"),
        "experiment nodeSelector restored to the original",
        spec.get("nodeSelector"))
    env.expect(
        spec.get("tolerations") == original_spec.get("tolerations"),
        "experiment tolerations restored to the original",
        spec.get("tolerations"))
    env.expect(
        len(env.suspend_writes(ns, "experiment-sweep")) >= 1,
        "the shim wrote suspend=true on the experiment job")
    env.expect(
        "kueue.x-k8s.io/stopping" not in (e["metadata"].get("annotations") or
                                          {}),
        "experiment stop completed (no stopping annotation)",
        e["metadata"].get("annotations"))
    stopped = env.job_events(ns, "experiment-sweep", "Stopped", uid=exp_uid)
    env.expect(
        len(stopped) == 1 and stopped[0]["type"] == "Normal" and
        "preempt" in stopped[0]["message"].lower(),
        "one Normal Event Stopped on the experiment job naming the preemption",
        stopped)

    exp_wl = env.the_workload(ns, "experiment-sweep", exp_uid)
    env.expect(
        not admitted(exp_wl) and not reserved(exp_wl) and not finished(exp_wl),
        "experiment workload evicted: not admitted, no quota, not finished",
        exp_wl.get("status"))
    evicted = condition(exp_wl, "Evicted") or {}
    env.expect(
        evicted.get("status") == "True" and
        evicted.get("reason") == "Preempted",
        "experiment workload Evicted=True, reason Preempted",
        exp_wl["status"].get("conditions"))
    env.expect(exp_wl["spec"].get("active", True),
               "experiment workload requeued (still active)", exp_wl["spec"])

    p = env.job(ns, "prod-train")
    env.expect(
        template_spec(p).get("nodeSelector") == A100_LABELS,
        "production job nodeSelector gpu-a100", template_spec(p))
    prod_wl = env.the_workload(ns, "prod-train", prod_uid)
    env.expect(prod_wl is not None and admitted(prod_wl),
               "production workload admitted")
    env.expect(prod_wl is not None and prod_wl["spec"].get("priority") == 1000,
               "production workload priority 1000", prod_wl and prod_wl["spec"])
    env.expect(
        len(env.job_events(ns, "prod-train", "Started", uid=prod_uid)) == 1,
        "one Started event on the production job")

    # The production job completes; the requeued experiment is admitted
    # again and resumes with the admission injected again.
    env.until_job(ns,
                  "prod-train",
                  lambda j: condition_true(j, "Complete"),
                  "production job completes",
                  timeout=30)
    again = env.until_job(ns,
                          "experiment-sweep",
                          running,
                          "experiment job readmitted and resumed",
                          timeout=30)
    env.expect(
        template_spec(again).get("nodeSelector") == {
            **own_selector,
            **A100_LABELS
        }, "experiment nodeSelector injected again",
        template_spec(again).get("nodeSelector"))
    env.expect(
        len(env.workloads_of(ns, "experiment-sweep")) == 1,
        "still one workload for the experiment job")
    env.expect(
        len(env.job_events(ns, "experiment-sweep", "Started",
                           uid=exp_uid)) == 2,
        "two Started events on the experiment job (two admissions)")


def spot_config(env, ns):
    """A small ClusterQueue whose flavor has nodeLabels and tolerations."""
    docs = [{
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ResourceFlavor",
        "metadata": {
            "name": "spot"
        },
        "spec": {
            "nodeLabels": {
                "instance-type": "spot"
            },
            "tolerations": [{
                "key": "spot",
                "operator": "Exists",
                "effect": "NoSchedule"
            }],
        },
    }, {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {
            "name": "spot-cq"
        },
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [{
                "coveredResources": ["cpu"],
                "flavors": [{
                    "name": "spot",
                    "resources": [{
                        "name": "cpu",
                        "nominalQuota": 8
                    }]
                }]
            }],
        },
    }, {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "LocalQueue",
        "metadata": {
            "name": "spot",
            "namespace": ns
        },
        "spec": {
            "clusterQueue": "spot-cq"
        },
    }]
    env.kq("apply",
           "-f",
           "-",
           input="\n---\n".join(json.dumps(d) for d in docs))


def spot_usage(env):
    return env.cq_usage("spot-cq").get("spot", {}).get("cpu", "0")


def scenario_webhook(env):
    """Pitfall 1: a labelled Job created without suspend is stored
    suspended by the webhook; with the webhook gone, the shim stops such a
    Job at once (Warning event), then admits it properly."""
    ns = "team-web"
    spot_config(env, ns)
    env.register_webhook()
    spot_selector = {"instance-type": "spot"}
    spot_tolerations = [{
        "key": "spot",
        "operator": "Exists",
        "effect": "NoSchedule"
    }]

    # 1. Through the webhook.
    stored = env.create(
        job_manifest("no-suspend",
                     ns,
                     "spot",
                     count=2,
                     suspend=None,
                     runtime=30))
    env.expect(
        stored["spec"].get("suspend") is True,
        "created without suspend: stored suspended (the webhook's mutation)",
        stored["spec"])
    uid = stored["metadata"]["uid"]
    creates = [
        r for r in env.requests_log() if r["method"] == "POST" and
        r["path"] == f"/apis/batch/v1/namespaces/{ns}/jobs"
    ]
    env.expect(
        len(creates) == 1 and
        "suspend" not in json.loads(creates[0]["body"] or "{}").get("spec", {}),
        "the create request itself had no suspend", creates)
    job = env.until_job(ns, "no-suspend", running,
                        "then admitted and unsuspended")
    spec = template_spec(job)
    env.expect(
        spec.get("nodeSelector") == spot_selector, "spot nodeSelector injected",
        spec)
    env.expect(
        spec.get("tolerations") == spot_tolerations, "spot toleration injected",
        spec)
    env.wait_for(lambda: env.job_events(ns, "no-suspend", "Started", uid=uid),
                 "Started event")
    env.expect(
        not [
            e for e in env.job_events(ns, "no-suspend", uid=uid)
            if e["type"] == "Warning"
        ], "no Warning event for the webhook-suspended job")
    wl = env.the_workload(ns, "no-suspend", uid)
    env.expect(wl is not None and admitted(wl), "its workload admitted")

    # An explicit suspend: false is overridden too (Kueue's defaulter).
    explicit = env.create(
        job_manifest("explicit-false", ns, "spot", suspend=False, runtime=30))
    env.expect(explicit["spec"].get("suspend") is True,
               "created with suspend: false: stored suspended",
               explicit["spec"])

    # Jobs without the queue label are none of the webhook's business.
    plain = env.create(job_manifest("unlabelled", ns, None, suspend=None))
    env.expect(plain["spec"].get("suspend") is False,
               "an unlabelled job is left unsuspended", plain["spec"])

    # 2. Without the webhook: the second line.
    out = env.kubectl("delete", "mutatingwebhookconfiguration",
                      WEBHOOK_CONFIG).stdout.strip()
    env.expect(
        out == "mutatingwebhookconfiguration.admissionregistration.k8s.io "
        f"\"{WEBHOOK_CONFIG}\" deleted", "webhook configuration deleted", out)
    stored = env.create(
        job_manifest("bypass", ns, "spot", count=2, suspend=None, runtime=30))
    env.expect(stored["spec"].get("suspend") is False,
               "without the webhook the job is stored unsuspended",
               stored["spec"])
    uid2 = stored["metadata"]["uid"]
    # The fixture's controller starts it at once; the shim must stop it.
    warning = env.wait_for(lambda: [
        e for e in env.job_events(ns, "bypass", "Stopped", uid=uid2)
        if e["type"] == "Warning"
    ],
                           "Warning event Stopped on the bypassing job",
                           timeout=5)
    log(f"warning: {warning[0]['message']}")
    env.expect(bool(env.suspend_writes(ns, "bypass")),
               "the shim wrote suspend=true on the job")
    job = env.until_job(
        ns,
        "bypass",
        lambda j: running(j) and template_spec(j).get("nodeSelector"),
        "then admitted and unsuspended again",
        timeout=30)
    env.expect(
        template_spec(job).get("nodeSelector") == spot_selector,
        "bypassing job resumed with the admission's nodeSelector",
        template_spec(job))
    env.wait_for(lambda: env.job_events(ns, "bypass", "Started", uid=uid2),
                 "Started event on the bypassing job")
    wls = env.workloads_of(ns, "bypass")
    env.expect(
        len(wls) == 1 and admitted(wls[0]),
        "one admitted workload for the bypassing job",
        [w.get("status") for w in wls])
    env.expect(not env.workloads_of(ns, "unlabelled"),
               "no workload for the unlabelled job")


def provisioning_requests(env, ns):
    return {
        r["metadata"]["name"]: r for r in env.kubectl_json(
            "get", "provisioningrequests", "-n", ns)["items"]
    }


def set_request_condition(env, ns, name, ctype, message):
    """What the cluster autoscaler does: Accepted, then `ctype`=True."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conditions = [{
        "type": "Accepted",
        "status": "True",
        "reason": "Accepted",
        "message": "accepted",
        "lastTransitionTime": now
    }, {
        "type": ctype,
        "status": "True",
        "reason": ctype,
        "message": message,
        "lastTransitionTime": now
    }]
    # A PUT of the status subresource: `kubectl patch --subresource` needs
    # kubectl 1.24, and Debian 12's is 1.20. As the merge patch did, only the
    # conditions change; the rest of the status stays.
    request = env.kubectl_json("get", "provisioningrequest", name, "-n", ns)
    request.setdefault("status", {})["conditions"] = conditions
    out = env.kubectl(
        "replace", "--raw",
        f"/apis/autoscaling.x-k8s.io/v1/namespaces/{ns}/provisioningrequests/"
        f"{name}/status", "-f", "-",
        input=json.dumps(request)).stdout
    stored = json.loads(out).get("status", {}).get("conditions", [])
    env.expect(
        any(c["type"] == ctype and c["status"] == "True" for c in stored),
        f"ProvisioningRequest {name}: {ctype}=True", out)


def scenario_provisioning(env):
    """Pitfall 3: a ProvisioningRequest check gates admission until the
    request is Provisioned; a Failed request is retried."""
    setup = os.path.join(ARGS.examples, "kueue", "provisioning",
                         "provisioning-setup.yaml")
    out = env.kq("apply", "-f", setup).stdout
    env.require("admissioncheck.kueue.x-k8s.io/sample-prov created" in out,
                "provisioning-setup.yaml applied", out)
    ns = "default"
    sample = os.path.join(ARGS.examples, "kueue", "provisioning",
                          "sample-job.yaml")
    name = env.kubectl("create", "-f", sample, "-o",
                       "name").stdout.strip().split("/")[-1]
    env.require(name.startswith("sample-job-"), "sample job created", name)
    uid = env.job(ns, name)["metadata"]["uid"]

    prs = env.wait_for(
        lambda: (lambda r: (r if len(r) == 1 else None, list(r)))
        (provisioning_requests(env, ns)), "one ProvisioningRequest created")
    pr_name, pr = next(iter(prs.items()))
    wl = env.the_workload(ns, name, uid)
    env.require(wl is not None, "the job's workload exists")
    wl_name = wl["metadata"]["name"]
    env.expect(pr_name == f"{wl_name}-sample-prov-1",
               "request named <workload>-<check>-1", pr_name)
    env.expect(
        pr["spec"].get(
            "provisioningClassName") == "check-capacity.autoscaling.x-k8s.io",
        "provisioningClassName", pr["spec"])
    env.expect((pr["spec"].get("parameters") or
                {}).get("maxRunDurationSeconds") == "600",
               "provreq annotation passed as parameter", pr["spec"])
    pod_sets = pr["spec"].get("podSets") or []
    env.expect(
        len(pod_sets) == 1 and pod_sets[0].get("count") == 3,
        "request pod set of count 3", pod_sets)
    tmpl_name = (pod_sets[0].get("podTemplateRef") or
                 {}).get("name") if pod_sets else None
    env.expect(tmpl_name == f"ppt-{pr_name}-main", "PodTemplate named ppt-...",
               tmpl_name)
    if tmpl_name:
        tmpl = env.kubectl_json("get", "podtemplate", tmpl_name, "-n", ns)
        requests = tmpl["template"]["spec"]["containers"][0]["resources"][
            "requests"]
        env.expect(
            requests.get("nvidia.com/gpu") == "1",
            "PodTemplate requests the GPU", requests)

    env.hold(lambda: suspended(env.job(ns, name)),
             "job stays suspended while the request is not provisioned", 2.0)
    wl = env.the_workload(ns, name, uid)
    env.expect(
        reserved(wl) and not admitted(wl),
        "workload holds quota but is not admitted", wl.get("status"))

    set_request_condition(env, ns, pr_name, "Provisioned",
                          "capacity is available")
    job = env.until_job(ns, name, running, "job unsuspended once provisioned")
    ann = template_annotations(job)
    env.expect(
        ann.get(CONSUME_ANNOTATION) == pr_name,
        "pod template consumes the request", ann)
    env.expect(
        ann.get(CLASS_ANNOTATION) == "check-capacity.autoscaling.x-k8s.io",
        "pod template names the provisioning class", ann)
    wl = env.the_workload(ns, name, uid)
    env.expect(admitted(wl), "workload admitted", wl.get("status"))
    checks = (wl.get("status") or {}).get("admissionChecks") or []
    env.expect(
        any(
            c.get("name") == "sample-prov" and c.get("state") == "Ready"
            for c in checks), "check sample-prov Ready", checks)

    # A request that fails is retried (retryStrategy.backoffLimitCount 2,
    # backoffBaseSeconds 0): check Retry, the workload requeued, and a second
    # attempt, <workload>-sample-prov-2; the Job stays suspended until that
    # one is provisioned.
    name2 = env.kubectl("create", "-f", sample, "-o",
                        "name").stdout.strip().split("/")[-1]
    uid2 = env.job(ns, name2)["metadata"]["uid"]
    wl2 = env.wait_for(lambda: env.the_workload(ns, name2, uid2),
                       "second job's workload")
    first = f"{wl2['metadata']['name']}-sample-prov-1"
    second = f"{wl2['metadata']['name']}-sample-prov-2"
    env.wait_for(
        lambda: (lambda r: (first in r, list(r)))
        (provisioning_requests(env, ns)), f"attempt 1 request {first}")
    set_request_condition(env, ns, first, "Failed", "no capacity in zone")
    env.wait_for(
        lambda: (lambda r:
                 (second in r, list(r)))(provisioning_requests(env, ns)),
        f"attempt 2 request {second} after the failure")
    env.expect(suspended(env.job(ns, name2)),
               "second job still suspended after the failure")
    env.expect(
        len(env.workloads_of(ns, name2)) == 1,
        "one workload for the second job")
    set_request_condition(env, ns, second, "Provisioned", "capacity found")
    job = env.until_job(ns, name2, running,
                        "second job unsuspended once attempt 2 is provisioned")
    env.expect(
        template_annotations(job).get(CONSUME_ANNOTATION) == second,
        "second job consumes attempt 2", template_annotations(job))

    # The shim killed while a request waits; the autoscaler provisions it
    # meanwhile. The restarted shim finds the request (no second one) and
    # starts the Job.
    name3 = env.kubectl("create", "-f", sample, "-o",
                        "name").stdout.strip().split("/")[-1]
    uid3 = env.job(ns, name3)["metadata"]["uid"]
    wl3 = env.wait_for(lambda: env.the_workload(ns, name3, uid3),
                       "third job's workload")
    prefix = f"{wl3['metadata']['name']}-sample-prov-"
    env.wait_for(
        lambda: (lambda r: (f"{prefix}1" in r, list(r)))
        (provisioning_requests(env, ns)), f"request {prefix}1")
    env.shim.kill9()
    log("shim killed")
    set_request_condition(env, ns, f"{prefix}1", "Provisioned",
                          "capacity found while the shim was down")
    env.start_shim()
    job = env.until_job(ns, name3, running,
                        "third job unsuspended after the shim restart")
    env.expect(
        template_annotations(job).get(CONSUME_ANNOTATION) == f"{prefix}1",
        "third job consumes its one request", template_annotations(job))
    mine = [n for n in provisioning_requests(env, ns) if n.startswith(prefix)]
    env.expect(mine == [f"{prefix}1"], "no request duplicated by the restart",
               mine)
    templates = [
        t["metadata"]["name"]
        for t in env.kubectl_json("get", "podtemplates", "-n", ns)["items"]
        if t["metadata"]["name"].startswith(f"ppt-{prefix}")
    ]
    env.expect(templates == [f"ppt-{prefix}1-main"],
               "no PodTemplate duplicated by the restart", templates)
    env.expect(
        len(env.workloads_of(ns, name3)) == 1, "one workload for the third job")


def scenario_restarts(env):
    """kill -9 of the shim with Jobs pending and running, Jobs created and
    deleted while it is down; kill -9 of kqd likewise; kill -9 of the shim
    in the middle of a preemption; a compacted watch history: nothing
    duplicated, nothing lost."""
    env.apply_seed()
    ns = "team-ml"
    uids = {}

    def make(name, count, priority_class=None):
        uids[name] = env.create(
            job_manifest(name,
                         ns,
                         "ml-jobs",
                         count=count,
                         requests=GPU_POD,
                         runtime=600,
                         priority_class=priority_class))["metadata"]["uid"]

    def no_duplicates(names, admissions=1):
        for n in names:
            wls = env.workloads_of(ns, n)
            env.expect(
                len(wls) == 1, f"one workload for {n}",
                [w["metadata"]["name"] for w in wls])
            started = env.job_events(ns, n, "Started", uid=uids[n])
            env.expect(
                len(started) == admissions,
                f"{admissions} Started event(s) for {n}",
                [e["message"] for e in started])
            created = env.job_events(ns, n, "CreatedWorkload", uid=uids[n])
            env.expect(
                len(created) == 1, f"one CreatedWorkload event for {n}",
                len(created))

    make("run-a", 8)
    make("run-b", 8)
    for n in ("run-a", "run-b"):
        env.until_job(ns, n, lambda j: running(j) and active(j) == 8,
                      f"{n} running")
    make("wait-c", 4)
    env.wait_for(lambda: env.the_workload(ns, "wait-c"),
                 "wait-c has a pending workload")
    start_a = env.job(ns, "run-a")["status"]["startTime"]

    # ---- 1. kill -9 the shim; change the world while it is down.
    env.shim.kill9()
    log("shim killed")
    make("late-d", 4)
    env.kubectl("delete", "job", "run-b", "-n", ns)
    env.start_shim()

    env.until_cancelled(ns, "run-b", uids["run-b"],
                        "run-b (deleted while the shim was down)")
    for n in ("wait-c", "late-d"):
        env.until_job(ns, n, running,
                      f"{n} admitted and unsuspended after the shim restart")
    a = env.job(ns, "run-a")
    env.expect(
        running(a) and a["status"].get("startTime") == start_a,
        "run-a kept running across the shim restart", a.get("status"))
    no_duplicates(("run-a", "wait-c", "late-d"))
    env.expect(
        len(env.workloads_of(ns, "run-b")) == 1, "one workload for run-b")
    env.expect(env.gpu_usage() == "16",
               "gpu-a100: 16 GPUs reserved (run-a 8, wait-c 4, late-d 4)",
               env.cq_usage("ai-training-queue"))

    # ---- 2. kill -9 kqd with a Job pending; delete a running Job while it
    # is down; restart it on the same data dir. The webhook is registered
    # from here on (while the shim was down it would have refused every
    # labelled Job: failurePolicy Fail).
    env.register_webhook()
    make("wait-e", 4)
    env.wait_for(lambda: env.the_workload(ns, "wait-e"),
                 "wait-e has a pending workload")
    env.kqd.kill9()
    log("kqd killed")
    env.kubectl("delete", "job", "late-d", "-n", ns)
    # A labelled Job created without suspend while kqd is down: the webhook
    # needs nothing from kqd to suspend it (Kueue's webhook reads only its
    # informer caches), so it is created suspended, and admitted once kqd
    # is back.
    began = time.monotonic()
    res = env.kubectl("create",
                      "-f",
                      "-",
                      "-o",
                      "json",
                      input=json.dumps(
                          job_manifest("kqd-down",
                                       ns,
                                       "ml-jobs",
                                       requests={"cpu": "1"},
                                       suspend=None,
                                       runtime=600)),
                      check=False)
    kqd_down_created = res.returncode == 0
    env.expect(
        kqd_down_created and
        json.loads(res.stdout)["spec"].get("suspend") is True,
        "labelled job created while kqd is down: stored suspended by the "
        "webhook", f"exit {res.returncode} after "
        f"{time.monotonic() - began:.1f}s: {res.stderr.strip()}")
    env.wait_for(lambda: (lambda m: ("kq_shim_kqd_reachable 0" in m, m))
                 (env.metric_lines("kq_shim_kqd_reachable")),
                 "metrics: the shim notices kqd is down",
                 timeout=40)
    env.start_kqd()
    env.wait_for(env.shim_ready,
                 "shim ready again (reconnected to kqd)",
                 timeout=30)
    env.until_cancelled(ns,
                        "late-d",
                        uids["late-d"],
                        "late-d (deleted while kqd was down)",
                        timeout=30)
    env.until_job(ns,
                  "wait-e",
                  running,
                  "wait-e admitted once late-d's quota is free",
                  timeout=30)
    if kqd_down_created:
        env.until_job(ns,
                      "kqd-down",
                      running,
                      "kqd-down admitted once kqd is back",
                      timeout=30)
    for n in ("run-a", "wait-c"):
        j = env.job(ns, n)
        env.expect(
            running(j) and active(j) > 0,
            f"{n} kept running across the kqd restart", j.get("status"))
        env.expect(not env.job_events(ns, n, "Stopped", uid=uids[n]),
                   f"{n} never stopped")
        env.expect(not env.suspend_writes(ns, n),
                   f"no write ever suspended {n}")
        wl = env.the_workload(ns, n, uids[n])
        env.expect(wl is not None and admitted(wl),
                   f"{n}'s workload still admitted")
    no_duplicates(("run-a", "wait-c", "wait-e"))
    env.expect(
        "kq_shim_kqd_reachable 1" in env.metric_lines("kq_shim_kqd_reachable"),
        "metrics: kqd reachable again",
        env.metric_lines("kq_shim_kqd_reachable"))

    # ---- 3. kill -9 the shim in the middle of a preemption: the victims
    # are suspended but their pods still stop (--pod-stop-seconds). The
    # restarted shim must finish the stop (restore, confirm) so that the
    # preemptor runs well before kqd's 30 s eviction grace would free the
    # quota on its own.
    candidates = ("run-a", "wait-c", "wait-e")
    make("urgent", 8, priority_class="production-training")
    env.wait_for(lambda: (lambda js: ([
        n for n in candidates if stopping(js[n])
    ], {n: [js[n]["spec"].get("suspend"),
            active(js[n])] for n in candidates}))(env.jobs(ns)),
                 "a preempted job is stopping (suspended, pods still active)",
                 interval=0.05)
    env.shim.kill9()
    killed_at = time.monotonic()
    log("shim killed mid-stop")
    js = env.jobs(ns)
    victims = [n for n in candidates if suspended(js[n])]
    env.wait_for(
        lambda:
        (lambda js:
         (all(active(js[n]) == 0
              for n in victims), {n: js[n].get("status") for n in victims}))
        (env.jobs(ns)), "victims' pods gone while the shim is down")
    env.start_shim()
    env.until_job(ns, "urgent", running,
                  "urgent admitted and unsuspended after the restart")
    env.expect(
        time.monotonic() - killed_at < 25,
        "urgent started by the shim's stop confirmation, not by kqd's "
        "eviction grace",
        time.monotonic() - killed_at)
    js = env.jobs(ns)
    # A victim the shim had not suspended yet when it was killed was
    # stopped by the restarted one.
    victims = [n for n in candidates if suspended(js[n])]
    log(f"victims: {victims}")
    for n in victims:
        j = js[n]
        env.expect(
            suspended(j) and active(j) == 0, f"victim {n} stays stopped",
            j.get("status"))
        env.expect("nodeSelector" not in template_spec(j),
                   f"victim {n}'s template restored", template_spec(j))
        env.expect(
            "kueue.x-k8s.io/stopping"
            not in (j["metadata"].get("annotations") or {}),
            f"victim {n}'s stop completed", j["metadata"].get("annotations"))
        stopped = env.job_events(ns, n, "Stopped", uid=uids[n])
        env.expect(
            len(stopped) == 1, f"one Stopped event for {n}",
            [e["message"] for e in stopped])
        wl = env.the_workload(ns, n, uids[n])
        env.expect(wl is not None and not reserved(wl) and not finished(wl),
                   f"{n}'s workload requeued", wl and wl.get("status"))
    for n in candidates:
        if n not in victims:
            env.expect(running(js[n]), f"{n} not preempted: running")

    # ---- 4. The Job watch's history compacted (410 Gone on resume): the
    # shim lists again and still sees the preemptor's deletion, so the
    # victims run again.
    env.kubectl("delete", "--raw", "/fixture/requests")
    env.kubectl("create", "--raw", "/fixture/compact?closeWatches=1", "-f",
                os.devnull)
    env.kubectl("delete", "job", "urgent", "-n", ns)
    for n in victims:
        env.until_job(ns, n, running,
                      f"victim {n} readmitted after urgent's deletion")
    no_duplicates(victims, admissions=2)
    relists = [
        r for r in env.requests_log() if r["method"] == "GET" and
        r["path"] == "/apis/batch/v1/jobs" and "watch" not in r["query"]
    ]
    env.expect(bool(relists), "the shim listed Jobs again after the 410")
    env.until_cancelled(ns, "urgent", uids["urgent"], "urgent (deleted)")


def scenario_deletion_failure(env):
    """Deleting a Job cancels its workload (running, pending, or being
    preempted); a failed Job finishes its workload as Failed."""
    ns = "team-del"
    spot_config(env, ns)
    # Running, then deleted.
    uid = env.create(job_manifest("doomed", ns, "spot", count=4,
                                  runtime=600))["metadata"]["uid"]
    env.until_job(ns, "doomed", lambda j: running(j) and active(j) == 4,
                  "doomed running")
    # Pending behind it (needs 6 of 8 cpu while 4 are used), then deleted.
    puid = env.create(job_manifest("never", ns, "spot", count=6,
                                   runtime=600))["metadata"]["uid"]
    env.wait_for(lambda: env.the_workload(ns, "never", puid),
                 "pending job's workload")
    env.hold(lambda: suspended(env.job(ns, "never")),
             "never stays suspended (no quota)", 1.0)
    env.kubectl("delete", "job", "never", "-n", ns)
    wl = env.until_cancelled(ns, "never", puid, "pending job deleted")
    env.expect(not admitted(wl), "it was never admitted", wl.get("status"))
    out = env.kubectl("delete", "job", "doomed", "-n", ns).stdout.strip()
    env.expect(out == 'job.batch "doomed" deleted', "kubectl delete job", out)
    env.until_cancelled(ns, "doomed", uid, "running job deleted")
    env.wait_for(lambda: (lambda u: (u == "0", u))(spot_usage(env)),
                 "spot-cq quota released")

    # Deleted and created again under the same name at once: the new
    # incarnation (another UID) gets a workload of its own and runs; the
    # old one's is cancelled.
    old = env.create(job_manifest("reborn", ns, "spot", count=2,
                                  runtime=600))["metadata"]["uid"]
    env.until_job(ns, "reborn", running, "reborn running")
    env.kubectl("delete", "job", "reborn", "-n", ns)
    new = env.create(job_manifest("reborn", ns, "spot", count=2,
                                  runtime=600))["metadata"]["uid"]
    env.until_job(ns, "reborn",
                  lambda j: running(j) and j["metadata"]["uid"] == new,
                  "the new reborn admitted and running")
    wl_old = env.until_cancelled(ns, "reborn", old, "the old reborn")
    wl_new = env.the_workload(ns, "reborn", new)
    env.expect(
        wl_new is not None and admitted(wl_new) and
        wl_new["metadata"]["name"] != wl_old["metadata"]["name"],
        "the new reborn has its own admitted workload", wl_new and
        [wl_new["metadata"]["name"],
         wl_new.get("status")])
    env.expect(
        len(env.job_events(ns, "reborn", "Started", uid=new)) == 1,
        "one Started event on the new reborn")
    env.kubectl("delete", "job", "reborn", "-n", ns)
    env.wait_for(lambda: (lambda u: (u == "0", u))(spot_usage(env)),
                 "spot-cq quota released again")

    # Failed.
    fuid = env.create(
        job_manifest("crashes", ns, "spot", count=2, runtime=1,
                     fail=True))["metadata"]["uid"]
    env.until_job(ns, "crashes", lambda j: condition_true(j, "Failed"),
                  "fixture fails the job")
    wl = env.until_workload(ns, "crashes", fuid, finished,
                            "failed job's workload finished")
    fin = condition(wl, "Finished")
    env.expect(fin.get("reason") == "Failed", "Finished reason Failed", fin)
    env.expect(admitted(wl), "it had been admitted")
    env.expect(
        len(env.job_events(ns, "crashes", "FinishedWorkload", uid=fuid)) == 1,
        "one FinishedWorkload event")
    env.wait_for(lambda: (lambda u: (u == "0", u))(spot_usage(env)),
                 "spot-cq quota released after the failure")

    # A preempted Job deleted while its pods are still stopping: its
    # workload is cancelled, which frees the quota the preemptor waits for,
    # so the preemptor starts at once (a finished workload has no eviction
    # grace left to wait for).
    env.apply_seed()
    ns = "team-ml"
    vuid = env.create(
        job_manifest("preempted-then-deleted",
                     ns,
                     "ml-jobs",
                     count=16,
                     requests=GPU_POD,
                     priority_class="experiment",
                     runtime=600))["metadata"]["uid"]
    env.until_job(ns, "preempted-then-deleted",
                  lambda j: running(j) and active(j) == 16,
                  "low-priority job running on all 16 GPUs")
    puid = env.create(
        job_manifest("preemptor",
                     ns,
                     "ml-jobs",
                     count=4,
                     requests=GPU_POD,
                     priority_class="production-training",
                     runtime=600))["metadata"]["uid"]
    env.until_job(ns,
                  "preempted-then-deleted",
                  stopping,
                  "low-priority job stopping (suspended, pods still active)",
                  interval=0.05)
    deleted_at = time.monotonic()
    env.kubectl("delete", "job", "preempted-then-deleted", "-n", ns)
    env.until_cancelled(ns, "preempted-then-deleted", vuid,
                        "the stopping job (deleted)")
    # Its 16 GPUs are released; the preemptor may already hold its 4.
    env.wait_for(lambda: (lambda u: (u in ("0", "4"), u))(env.gpu_usage()),
                 "its quota released", timeout=20.0)

    def preemptor():
        j = env.job(ns, "preemptor")
        w = env.the_workload(ns, "preemptor", puid)
        return (running(j), {
            "spec.suspend": j["spec"].get("suspend"),
            "workload": w and w.get("status")
        })

    env.wait_for(preemptor,
                 "the preemptor starts once the deleted job's quota is free",
                 timeout=15)
    env.expect(time.monotonic() - deleted_at < 20,
               "the preemptor did not wait for kqd's eviction grace",
               time.monotonic() - deleted_at)


SCENARIOS = {
    "seed": scenario_seed,
    "preemption": scenario_preemption,
    "webhook": scenario_webhook,
    "provisioning": scenario_provisioning,
    "restarts": scenario_restarts,
    "deletion_failure": scenario_deletion_failure,
}

# The fixture's --job-runtime and --pod-stop-seconds: a window in which a
# stop is in progress where a scenario needs one.
FIXTURE_SETTINGS = {
    "preemption": (2.0, 1.5),
    "restarts": (2.0, 3.0),
    "deletion_failure": (2.0, 1.5),
}


def run_scenario(name):
    log(f"===== {name}")
    runtime, pod_stop = FIXTURE_SETTINGS.get(name, (2.0, 0.5))
    env = None
    started = time.monotonic()
    try:
        env = standard_env(name, job_runtime=runtime, pod_stop_seconds=pod_stop)
        SCENARIOS[name](env)
    except Failure as e:
        if env is None:
            log(f"FAIL: {e}")
            return False
        if not env.failures:
            env.failures.append(str(e))
    except Exception:
        traceback.print_exc()
        if env is None:
            return False
        env.failures.append("exception")
    finally:
        if env is not None:
            env.close()
    took = time.monotonic() - started
    if env.failures:
        log(f"===== {name}: FAILED ({len(env.failures)} of {env.checks} "
            f"checks, {took:.1f}s)")
        for f in env.failures:
            print(f"  - {f.splitlines()[0]}")
        return False
    log(f"===== {name}: PASSED ({env.checks} checks, {took:.1f}s)")
    return True


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("scenario", choices=sorted(SCENARIOS) + ["all"])
    p.add_argument("--bin", required=True)
    p.add_argument("--kubectl", default=shutil.which("kubectl") or "")
    p.add_argument("--fixture",
                   default=os.path.join(SOURCE_DIR, "tests", "k8s",
                                        "fake_apiserver.py"))
    p.add_argument("--seed", default="")
    p.add_argument("--examples", default="")
    ARGS = p.parse_args()
    if not ARGS.kubectl or not os.access(ARGS.kubectl, os.X_OK):
        print("FAIL: kubectl not found (scripts/install-deps.sh installs it)")
        return 1
    if not ARGS.examples:
        ARGS.examples = os.path.join(SOURCE_DIR, "examples")
    if not ARGS.seed:
        ARGS.seed = os.path.join(ARGS.examples, "seed")
    ARGS.kqd = os.path.join(ARGS.bin, "kqd")
    ARGS.kq = os.path.join(ARGS.bin, "kq")
    ARGS.shim = os.path.join(ARGS.bin, "kq-k8s-shim")
    for b in (ARGS.kqd, ARGS.kq, ARGS.shim):
        if not os.access(b, os.X_OK):
            print(f"FAIL: {b} is not built")
            return 1
    names = sorted(SCENARIOS) if ARGS.scenario == "all" else [ARGS.scenario]
    results = {n: run_scenario(n) for n in names}
    if len(names) > 1:
        for n, ok in results.items():
            print(f"{n}: {'PASSED' if ok else 'FAILED'}")
    return 0 if all(results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
