#!/usr/bin/python3
"""Checks deploy/ against the binaries it runs and against itself.

The manifests and units are only ever applied on real clusters and machines,
never here, so every mistake that can be caught without one is caught here:
a flag kqd does not accept, a port or path that does not line up between
the objects that must agree on it, a file kustomize would not apply, RBAC
that grew by accident, a unit systemd would half-ignore, a rule Prometheus
would reject or an alert that does not fire when it should.

Environment (set by tests/deploy/CMakeLists.txt):
  DEPLOY_DIR    the repository's deploy/ directory
  KQD           the built kqd
  KQ_K8S_SHIM   the built kq-k8s-shim (unset until it exists: its checks skip)
  KQ_VERSION    the project version (the image tag the manifests use)
  KQ_DEBIAN_KUBECTL  Debian 12's kubectl (kustomize v2), when kubectl on
                the PATH is another one: deploy/ is built with both
promtool (Debian's prometheus package) checks deploy/prometheus; openssl
checks the certificates deploy/kubernetes/kq-certs.sh and README.md make.

kqd's security flags and the shim's TLS flags (the contract of issue 30)
are checked against the manifests and units and against the binaries'
--help: a flag the manifests use that a binary lacks fails the test.

Run one group with e.g. `deploy_test.py KubernetesTest`.
"""

import base64
import functools
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

DEPLOY = os.environ["DEPLOY_DIR"]
KQD = os.environ["KQD"]
SHIM = os.environ.get("KQ_K8S_SHIM", "")
VERSION = os.environ.get("KQ_VERSION", "")

KUBE_DIRS = [os.path.join(DEPLOY, "kubernetes"),
             os.path.join(DEPLOY, "kubernetes-cert-manager")]
NAMESPACE = "kq-system"

# (apiVersion, kind) -> namespaced. Anything else in deploy/ is a mistake or
# a new kind that should be added here on purpose.
KNOWN_KINDS = {
    ("v1", "Namespace"): False,
    ("v1", "ServiceAccount"): True,
    ("v1", "Service"): True,
    ("v1", "ConfigMap"): True,
    ("apps/v1", "StatefulSet"): True,
    ("apps/v1", "Deployment"): True,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): False,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): False,
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"):
        False,
    ("cert-manager.io/v1", "Issuer"): True,
    ("cert-manager.io/v1", "Certificate"): True,
}
KUSTOMIZATION = ("kustomize.config.k8s.io/v1beta1", "Kustomization")
# Files a configMapGenerator turns into ConfigMap data, not objects: Kueue's
# Configuration (kqd --config) and kqd's bindings (kqd --authz-file), which
# are in Kubernetes RBAC's format but never applied to the API server.
CONFIG_KINDS = {("config.kueue.x-k8s.io/v1beta1", "Configuration"),
                ("config.kueue.x-k8s.io/v1beta2", "Configuration")}
RBAC = "rbac.authorization.k8s.io/v1"
AUTHZ_KINDS = {(RBAC, "ClusterRoleBinding"), (RBAC, "RoleBinding")}
GENERATOR_KINDS = {"kqd-config": CONFIG_KINDS, "kqd-authz": AUTHZ_KINDS}

# The contract's kqd flags (issue 30), and the shim's for a kqd with TLS.
KQD_SECURITY_FLAGS = {
    "--tls-cert", "--tls-key", "--client-ca", "--token-file", "--authz-file",
    "--audit-log", "--audit-log-maxsize", "--audit-log-maxbackup",
    "--owner-may-run", "--insecure-allow-unauthenticated",
    "--tls-reload-interval"}
SHIM_SECURITY_FLAGS = {"--kq-tls-ca", "--kq-cert", "--kq-key"}
# kqd's built-in ClusterRoles, the only roles a binding may name.
BUILTIN_CLUSTER_ROLES = (
    {"cluster-admin", "kueue-batch-admin-role", "kueue-batch-user-role",
     "kueue-pending-workloads-cq-viewer-role",
     "kueue-pending-workloads-lq-viewer-role", "kueue-metrics-reader",
     "kq-runner-role", "kq-controller-role", "kq-shim-role"} |
    {f"kueue-{kind}-{role}-role"
     for kind in ("clusterqueue", "cohort", "localqueue", "resourceflavor",
                  "workload", "topology")
     for role in ("editor", "viewer")})

# The shim's ClusterRole, exactly. Growing it is a decision: change this
# table and the comment justifying the verb in shim-clusterrole.yaml.
EXPECTED_RBAC = {
    ("batch", "jobs"): {"get", "list", "watch", "update", "patch"},
    ("batch", "jobs/status"): {"get"},
    ("apps", "replicasets"): {"get"},
    ("", "events"): {"create", "patch"},
    ("", "podtemplates"): {"create", "get", "list", "watch", "patch",
                           "delete"},
    ("autoscaling.x-k8s.io", "provisioningrequests"):
        {"create", "get", "list", "watch", "patch", "delete"},
    ("autoscaling.x-k8s.io", "provisioningrequests/status"): {"get"},
}

WEBHOOK_PATH = "/mutate-batch-v1-job"
QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"


PROMETHEUS = os.path.join(DEPLOY, "prometheus")
# The names kqd exports (Kueue's, and kq's own), the shim's, and the
# series Prometheus makes itself: deploy/prometheus's rules may use no other.
KQD_METRICS = {
    "kueue_pending_workloads", "kueue_admitted_workloads_total",
    "kueue_evicted_workloads_total", "kueue_cluster_queue_status",
    "kueue_cluster_queue_resource_usage", "kueue_cluster_queue_nominal_quota",
    "kueue_admission_attempts_total", "kq_grpc_requests_total",
}
KQD_HISTOGRAMS = {
    "kueue_admission_wait_time_seconds",
    "kueue_quota_reserved_wait_time_seconds",
    "kq_engine_batch_duration_seconds", "kq_store_commit_duration_seconds",
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
PROMETHEUS_SERIES = {"up"}
ALERT_SEVERITIES = {"critical", "warning", "info"}


def help_flags(binary):
    """The long flags `binary --help` lists."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    flags = set(re.findall(r"(?m)^\s+(?:-\w,)?(--[a-z0-9][a-z0-9-]*)", out))
    if "--help" not in flags:
        raise AssertionError(f"{binary} --help: no flags found in:\n{out}")
    return flags


def flag_values(args):
    """{--flag: value} of --flag=value and --flag value arguments."""
    values = {}
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("--"):
            if "=" in arg:
                name, value = arg.split("=", 1)
            elif i + 1 < len(args) and not args[i + 1].startswith("--"):
                name, value = arg, args[i + 1]
                i += 1
            else:
                name, value = arg, ""
            values[name] = value
        i += 1
    return values


def load_documents(directory):
    """[(file name, document)] of every YAML file in directory."""
    docs = []
    for name in sorted(os.listdir(directory)):
        if name.endswith((".yaml", ".yml")):
            with open(os.path.join(directory, name)) as f:
                for doc in yaml.safe_load_all(f):
                    if doc is not None:
                        docs.append((name, doc))
    return docs


def kind_key(doc):
    return (doc.get("apiVersion"), doc.get("kind"))


class Kustomization:
    """A directory's kustomization.yaml: its resources and the files its
    generators read ({ConfigMap or Secret name: {key: file name}})."""

    def __init__(self, directory):
        with open(os.path.join(directory, "kustomization.yaml")) as f:
            self.doc = yaml.safe_load(f)
        # kustomize v2 takes a directory only under `bases`.
        self.resources = (self.doc.get("bases", []) +
                          self.doc.get("resources", []))
        self.patch_files = {p["path"]
                            for p in self.doc.get("patchesJson6902", [])}
        self.generated = self.generators("configMapGenerator")
        self.generated_secrets = self.generators("secretGenerator")

    def generators(self, field):
        generated = {}
        for gen in self.doc.get(field, []):
            files = {}
            for entry in gen.get("files", []):
                key, _, name = entry.rpartition("=")
                files[key or os.path.basename(name)] = name
            generated[gen["name"]] = files
        return generated

    def generator_files(self):
        return {name for files in self.generated.values()
                for name in files.values()}

    def generator_of(self, file_name):
        """The ConfigMap generated from file_name."""
        for gen, files in self.generated.items():
            if file_name in files.values():
                return gen
        raise AssertionError(f"no generator reads {file_name}")

    def listed_files(self):
        """Files the kustomization reads that are not resources."""
        return self.generator_files() | self.patch_files


class Manifests:
    """deploy/kubernetes's objects, looked up by kind and name."""

    def __init__(self, directory):
        self.directory = directory
        self.kustomization = Kustomization(directory)
        listed = self.kustomization.listed_files()
        self.docs = [doc for name, doc in load_documents(directory)
                     if name not in listed and
                     kind_key(doc) != KUSTOMIZATION]

    def all(self, kind):
        return [d for d in self.docs if d["kind"] == kind]

    def one(self, kind, name=None):
        found = [d for d in self.all(kind)
                 if name is None or d["metadata"]["name"] == name]
        if len(found) != 1:
            raise AssertionError(f"want exactly one {kind} {name or ''}, "
                                 f"found {len(found)}")
        return found[0]


def container(workload, name):
    for c in workload["spec"]["template"]["spec"]["containers"]:
        if c["name"] == name:
            return c
    raise AssertionError(
        f"no container {name} in {workload['metadata']['name']}")


def service_port(service, name):
    """The port of `service` named `name`."""
    for p in service["spec"]["ports"]:
        if p.get("name") == name:
            return p
    raise AssertionError(
        f"Service {service['metadata']['name']} has no port named {name}")


def container_port(c, port):
    """A Service targetPort or probe port (number or name) -> number."""
    if isinstance(port, int):
        return port
    for p in c.get("ports", []):
        if p.get("name") == port:
            return p["containerPort"]
    raise AssertionError(f"container {c['name']} has no port named {port}")


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


def file_source(workload, c, path):
    """Where the file at `path` in container c comes from: (kind, name,
    key) of the ConfigMap or Secret behind a configMap, secret or projected
    volume (a source without items holds each key as a file of its name),
    or None when no such volume holds it."""
    volumes = {v["name"]: v for v in
               workload["spec"]["template"]["spec"].get("volumes", [])}
    for m in c.get("volumeMounts", []):
        rel = os.path.relpath(path, m["mountPath"])
        if rel.startswith("..") or m["name"] not in volumes:
            continue
        v = volumes[m["name"]]
        sources = v["projected"]["sources"] if "projected" in v else [v]
        for src in sources:
            for kind, field in (("ConfigMap", "configMap"),
                                ("Secret", "secret")):
                if field not in src:
                    continue
                ref = src[field]
                name = ref.get("name") or ref.get("secretName")
                items = ref.get("items")
                if items is None and "/" not in rel:
                    return (kind, name, rel)
                for item in items or []:
                    if item["path"] == rel:
                        return (kind, name, item["key"])
    return None


def mount_of(c, path):
    """The volumeMount of container c under which `path` lies."""
    for m in c.get("volumeMounts", []):
        if not os.path.relpath(path, m["mountPath"]).startswith(".."):
            return m
    raise AssertionError(f"nothing in {c['name']} is mounted at {path}")


def missing_flags(binary, flags):
    """The flags of `flags` that `binary --help` does not list."""
    return set(flags) - help_flags(binary)


def check_flags_accepted(case, binary, args, pending):
    """Every --flag of args is one `binary --help` lists, but those of
    `pending` (the contract's, not implemented yet): those skip the test,
    named, once the others are checked."""
    known = help_flags(binary)
    waiting = set()
    for arg in args:
        if not arg.startswith("--"):
            continue
        name = arg.split("=", 1)[0]
        if name in known:
            continue
        if name in pending:
            waiting.add(name)
            continue
        with case.subTest(arg=arg):
            case.fail(f"{os.path.basename(binary)} --help lists no {name}")
    if waiting:
        case.fail(f"{os.path.basename(binary)} has no "
                  f"{', '.join(sorted(waiting))}")


def bindings(docs):
    """[(binding kind, namespace or None, roleRef name, {(kind, name)})]."""
    out = []
    for doc in docs:
        subjects = {(s["kind"], s["name"]) for s in doc["subjects"]}
        out.append((doc["kind"], doc["metadata"].get("namespace"),
                    doc["roleRef"]["name"], subjects))
    return out


def check_bindings(case, docs):
    """docs is a bindings file kqd can read: RBAC bindings of its built-in
    ClusterRoles to Users and Groups, RoleBindings in a namespace."""
    case.assertTrue(docs)
    names = set()
    for doc in docs:
        with case.subTest(binding=doc.get("metadata", {}).get("name")):
            case.assertIn(kind_key(doc), AUTHZ_KINDS)
            meta = doc["metadata"]
            key = (doc["kind"], meta.get("namespace"), meta["name"])
            case.assertNotIn(key, names, "duplicate binding")
            names.add(key)
            if doc["kind"] == "RoleBinding":
                case.assertTrue(meta.get("namespace"))
            else:
                case.assertNotIn("namespace", meta)
            case.assertEqual(doc["roleRef"]["apiGroup"],
                             "rbac.authorization.k8s.io")
            case.assertEqual(doc["roleRef"]["kind"], "ClusterRole")
            case.assertIn(doc["roleRef"]["name"], BUILTIN_CLUSTER_ROLES)
            case.assertTrue(doc["subjects"])
            for subject in doc["subjects"]:
                case.assertIn(subject["kind"], ("User", "Group"))
                case.assertEqual(subject.get("apiGroup"),
                                 "rbac.authorization.k8s.io")
                case.assertTrue(subject["name"])


def cert_fields(path):
    """{"subject": {attribute: [values]}, "san": set, "eku": set} of a PEM
    certificate, as openssl prints them."""
    def x509(*args):
        return subprocess.run(["openssl", "x509", "-in", path, "-noout",
                               *args], capture_output=True, text=True,
                              check=True).stdout
    subject = {}
    line = x509("-subject", "-nameopt", "RFC2253,sep_multiline,-esc_msb")
    for part in line.splitlines()[1:]:
        attr, _, value = part.strip().partition("=")
        subject.setdefault(attr, []).append(value)
    san = set()
    out = x509("-ext", "subjectAltName")
    for entry in ",".join(out.splitlines()[1:]).split(","):
        entry = entry.strip()
        if entry:
            kind, _, value = entry.partition(":")
            san.add(("IP" if kind == "IP Address" else kind) + ":" + value)
    eku = {e.strip() for e in ",".join(
        x509("-ext", "extendedKeyUsage").splitlines()[1:]).split(",")
        if e.strip()}
    return {"subject": subject, "san": san, "eku": eku}


SERVER_AUTH = "TLS Web Server Authentication"
CLIENT_AUTH = "TLS Web Client Authentication"


def openssl_verify(ca, cert):
    out = subprocess.run(["openssl", "verify", "-CAfile", ca, cert],
                         capture_output=True, text=True)
    return out.returncode == 0, out.stdout + out.stderr


def kubectls():
    """Every kubectl deploy/ must build with: the one on the PATH (a current
    one where the machine has it) and Debian 12's kubernetes-client (kubectl
    1.20 with kustomize v2), without repeats."""
    found = []
    for path in (shutil.which("kubectl"), os.environ.get("KQ_DEBIAN_KUBECTL")):
        if path and os.access(path, os.X_OK):
            real = os.path.realpath(path)
            if real not in [os.path.realpath(p) for p in found]:
                found.append(path)
    return found


def kustomize(directory, kubectl):
    out = subprocess.run([kubectl, "kustomize", directory],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(
            f"{kubectl} kustomize {directory}:\n{out.stderr}")
    return [d for d in yaml.safe_load_all(out.stdout) if d is not None]


def with_each_kubectl(case, check):
    """Calls check(kubectl) in a subtest of `case` for every kubectl; with
    none the test fails (scripts/install-deps.sh installs one)."""
    found = kubectls()
    case.assertTrue(found, "no kubectl: run scripts/install-deps.sh")
    for path in found:
        with case.subTest(kubectl=path):
            check(path)


def each_kubectl(test):
    """A test method test(self, kubectl) run with_each_kubectl."""

    def run(self):
        with_each_kubectl(self, lambda kubectl: test(self, kubectl))

    run.__name__ = test.__name__
    run.__doc__ = test.__doc__
    return run


class KqdProcess:
    """kqd started with a manifest's or unit's arguments, bound to loopback.
    paths maps directories the arguments name (/etc/kq, /var/log/kq) to
    local ones; the flags in drop are left out."""

    def __init__(self, args, data_dir, config=None, paths=None, drop=()):
        self.work = tempfile.mkdtemp(prefix="kq-deploy-test-")
        self.port_file = os.path.join(self.work, "port")
        self.http_port_file = os.path.join(self.work, "http-port")
        self.log = open(os.path.join(self.work, "kqd.log"), "w+")
        os.makedirs(data_dir, exist_ok=True)
        argv = [KQD]
        for arg in args:
            name, _, value = arg.partition("=")
            if name in drop:
                continue
            if name == "--listen":
                arg = "--listen=127.0.0.1:0"
            elif name == "--http-listen":
                arg = "--http-listen=127.0.0.1:0"
            elif name == "--data-dir":
                paths = dict(paths or {}, **{value: data_dir})
                arg = f"--data-dir={data_dir}"
            elif name == "--config" and config is not None:
                arg = f"--config={config}"
            argv.append(arg)
        for prefix, local in (paths or {}).items():
            argv = [re.sub(r"^(--[a-z-]+=)" + re.escape(prefix) + "(/|$)",
                           lambda m, local=local: m.group(1) + local +
                           m.group(2), a) for a in argv]
        argv.append(f"--port-file={self.port_file}")
        # Never kqd's default HTTP port (127.0.0.1:8080), which a unit that
        # keeps the default would take from whatever else runs here.
        if not any(a.startswith("--http-listen") for a in argv):
            argv.append("--http-listen=127.0.0.1:0")
        argv.append(f"--http-port-file={self.http_port_file}")
        self.argv = argv
        self.proc = subprocess.Popen(die_with_parent(argv), stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def wait_port(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"{self.argv} exited {self.proc.returncode}:\n"
                    f"{self.output()}")
            if os.path.exists(self.port_file):
                with open(self.port_file) as f:
                    return int(f.read().strip())
            time.sleep(0.05)
        raise AssertionError(f"kqd did not listen within {timeout} s:\n"
                             f"{self.output()}")

    def http_port(self):
        self.wait_port()
        with open(self.http_port_file) as f:
            return int(f.read().strip())

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.work, ignore_errors=True)
        return self.proc.returncode


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def grpc_health_check(port, tls=None):
    """grpc.health.v1.Health/Check for the server ("") -> raw response bytes,
    or None when the grpc module is missing. tls: (CA file, client
    certificate file, key file) for a kqd with TLS."""
    try:
        import grpc  # pylint: disable=import-outside-toplevel
    except ImportError:
        return None
    if tls is None:
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    else:
        ca, cert, key = (read_bytes(f) for f in tls)
        channel = grpc.secure_channel(
            f"127.0.0.1:{port}",
            grpc.ssl_channel_credentials(ca, key, cert),
            # The certificates name localhost as well as 127.0.0.1.
            options=[("grpc.ssl_target_name_override", "localhost")])
    with channel:
        check = channel.unary_unary("/grpc.health.v1.Health/Check",
                                    request_serializer=lambda b: b,
                                    response_deserializer=lambda b: b)
        return check(b"", timeout=10)


# HealthCheckResponse{status: SERVING}: field 1, varint 1.
HEALTH_SERVING = b"\x08\x01"


def https_get(port, path, ca, token=None):
    """(status, body) of GET https://localhost:port/path, verified against
    the CA file, with a bearer token if given."""
    import ssl  # pylint: disable=import-outside-toplevel
    import urllib.error  # pylint: disable=import-outside-toplevel
    import urllib.request  # pylint: disable=import-outside-toplevel
    request = urllib.request.Request(f"https://localhost:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=ca)
    try:
        with urllib.request.urlopen(request, context=context,
                                    timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def make_certs(out, renew=False):
    """Runs kq-certs.sh [--renew] OUT and returns what it printed."""
    script = os.path.join(DEPLOY, "kubernetes", "kq-certs.sh")
    done = subprocess.run([script] + (["--renew"] if renew else []) + [out],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"kq-certs.sh: {done.stderr}")
    return done.stdout


class KubernetesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.m = Manifests(KUBE_DIRS[0])
        cls.kqd_flags = help_flags(KQD)
        cls.kqd = cls.m.one("StatefulSet", "kqd")
        cls.kqd_container = container(cls.kqd, "kqd")
        cls.kqd_args = flag_values(cls.kqd_container["args"])
        cls.shim = cls.m.one("Deployment", "kq-k8s-shim")
        cls.shim_container = container(cls.shim, "kq-k8s-shim")
        cls.shim_args = flag_values(cls.shim_container["args"])
        with open(cls.generated_file(cls.kqd_args["--authz-file"])) as f:
            cls.authz = [d for d in yaml.safe_load_all(f) if d is not None]

    @classmethod
    def generated_file(cls, path):
        """The file in deploy/kubernetes behind kqd's file at `path`, which
        a generated ConfigMap holds."""
        kind, name, key = file_source(cls.kqd, cls.kqd_container, path)
        assert kind == "ConfigMap", (path, kind)
        return os.path.join(cls.m.directory,
                            cls.m.kustomization.generated[name][key])

    def bound(self, role):
        """The subjects bound to `role` in kqd-authz.yaml, cluster-wide."""
        subjects = set()
        for kind, namespace, ref, who in bindings(self.authz):
            if ref == role and kind == "ClusterRoleBinding":
                subjects |= who
        return subjects

    def test_every_document_is_a_known_kind(self):
        for directory in KUBE_DIRS:
            k = Kustomization(directory)
            generator_files = k.generator_files()
            for name, doc in load_documents(directory):
                with self.subTest(file=os.path.relpath(
                    os.path.join(directory, name), DEPLOY)):
                    self.assertTrue(name.endswith(".yaml"), "use .yaml")
                    if name in k.patch_files:
                        # A JSON patch: a list of operations.
                        self.assertIsInstance(doc, list)
                        for op in doc:
                            self.assertIn(op["op"],
                                          ("add", "remove", "replace"))
                            self.assertTrue(op["path"].startswith("/"))
                        continue
                    self.assertIn("apiVersion", doc)
                    self.assertIn("kind", doc)
                    key = kind_key(doc)
                    if key == KUSTOMIZATION:
                        self.assertEqual(name, "kustomization.yaml")
                        continue
                    if name in generator_files:
                        self.assertIn(key,
                                      GENERATOR_KINDS[k.generator_of(name)])
                        continue
                    self.assertIn(key, KNOWN_KINDS)
                    meta = doc.get("metadata", {})
                    self.assertTrue(meta.get("name"))
                    if KNOWN_KINDS[key]:
                        self.assertEqual(meta.get("namespace"), NAMESPACE)
                    else:
                        self.assertNotIn("namespace", meta)
                    labels = meta.get("labels", {})
                    self.assertEqual(labels.get("app.kubernetes.io/part-of"),
                                     "kq")

    def test_kustomization_lists_every_file(self):
        for directory in KUBE_DIRS:
            with self.subTest(directory=os.path.relpath(directory, DEPLOY)):
                k = Kustomization(directory)
                self.assertEqual(kind_key(k.doc), KUSTOMIZATION)
                resources = k.resources
                self.assertEqual(len(resources), len(set(resources)),
                                 "duplicates")
                listed = k.listed_files()
                self.assertFalse(listed & set(resources))
                for name in listed:
                    self.assertTrue(
                        os.path.isfile(os.path.join(directory, name)), name)
                for r in resources:
                    path = os.path.normpath(os.path.join(directory, r))
                    self.assertTrue(os.path.exists(path),
                                    f"{r} does not exist")
                    if os.path.isfile(path):
                        listed.add(r)
                on_disk = {n for n in os.listdir(directory)
                           if n.endswith((".yaml", ".yml")) and
                           n != "kustomization.yaml"}
                self.assertEqual(on_disk, listed)

    @each_kubectl
    def test_kustomize_builds_exactly_the_files(self, kubectl):
        built = kustomize(KUBE_DIRS[0], kubectl)
        generated = self.m.kustomization.generated
        want = [(d["kind"], d["metadata"]["name"]) for d in self.m.docs]
        want += [("ConfigMap", name) for name in generated]

        def unhashed(d):
            # Generated ConfigMaps get "-<content hash>" appended.
            name = d["metadata"]["name"]
            if d["kind"] == "ConfigMap":
                base = name.rsplit("-", 1)[0]
                if base in generated:
                    self.assertEqual(set(d["data"]), set(generated[base]))
                    return (d["kind"], base)
            return (d["kind"], name)

        self.assertEqual(sorted(unhashed(d) for d in built), sorted(want))
        (sts,) = [d for d in built if d["kind"] == "StatefulSet"]
        # kustomize renamed the references to the generated ConfigMaps.
        (kqd,) = sts["spec"]["template"]["spec"]["containers"]
        mounted = set()
        for arg in kqd["args"]:
            source = file_source(sts, kqd, arg.partition("=")[2])
            if source and source[0] == "ConfigMap":
                mounted.add(source[1])
        self.assertEqual(
            mounted, {d["metadata"]["name"] for d in built
                      if d["kind"] == "ConfigMap"})
        for d in built:
            for c in d.get("spec", {}).get("template", {}).get("spec", {}).get(
                "containers", []):
                with self.subTest(image_of=d["metadata"]["name"]):
                    self.assertEqual(c["image"], f"kq:{VERSION}")

    @each_kubectl
    def test_cert_manager_overlay_wires_certificate_to_webhook(self, kubectl):
        built = kustomize(KUBE_DIRS[1], kubectl)
        by_kind = {}
        for d in built:
            by_kind.setdefault(d["kind"], []).append(d)
        (cert,) = [c for c in by_kind["Certificate"]
                   if c["spec"]["secretName"] == self.shim_cert_secret()]
        issuer_name = cert["spec"]["issuerRef"]["name"]
        (issuer,) = [i for i in by_kind["Issuer"]
                     if i["metadata"]["name"] == issuer_name]
        (hook,) = by_kind["MutatingWebhookConfiguration"]
        self.assertEqual(cert["spec"]["issuerRef"], {
            "kind": "Issuer", "name": issuer["metadata"]["name"]})
        self.assertEqual(
            hook["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            f"{cert['metadata']['namespace']}/{cert['metadata']['name']}")
        for webhook in hook["webhooks"]:
            self.assertNotIn("caBundle", webhook["clientConfig"])
            service = webhook["clientConfig"]["service"]
            self.assertIn(f"{service['name']}.{service['namespace']}.svc",
                          cert["spec"]["dnsNames"])
        self.assertEqual(cert["spec"]["secretName"], self.shim_cert_secret())

    @each_kubectl
    def test_cert_manager_issues_what_kqd_and_the_shim_mount(self, kubectl):
        built = kustomize(KUBE_DIRS[1], kubectl)
        certs = {d["spec"]["secretName"]: d for d in built
                 if d["kind"] == "Certificate"}
        issuers = {d["metadata"]["name"]: d for d in built
                   if d["kind"] == "Issuer"}
        # kq's CA: a self-signed CA certificate, and an Issuer signing with
        # its Secret.
        (ca_issuer,) = [i for i in issuers.values() if "ca" in i["spec"]]
        ca = certs[ca_issuer["spec"]["ca"]["secretName"]]
        self.assertIs(ca["spec"]["isCA"], True)
        self.assertIn("selfSigned",
                      issuers[ca["spec"]["issuerRef"]["name"]]["spec"])
        by_ca = {"kind": "Issuer", "name": ca_issuer["metadata"]["name"]}
        # Every Secret kqd and the shim read their TLS files from is a
        # Certificate of that CA (cert-manager writes tls.crt, tls.key and
        # the CA's ca.crt).
        uses = {}
        for workload, c, flags in (
                (self.kqd, self.kqd_container,
                 ("--tls-cert", "--tls-key", "--client-ca")),
                (self.shim, self.shim_container,
                 ("--kq-cert", "--kq-key", "--kq-tls-ca"))):
            args = flag_values(c["args"])
            for flag in flags:
                kind, name, key = file_source(workload, c, args[flag])
                self.assertEqual(kind, "Secret")
                self.assertIn(key, ("tls.crt", "tls.key", "ca.crt"))
                uses.setdefault(name, set()).add(flag)
        for name in uses:
            with self.subTest(secret=name):
                self.assertIn(name, certs)
                self.assertEqual(certs[name]["spec"]["issuerRef"], by_ca)
        kqd_secret = file_source(self.kqd, self.kqd_container,
                                 self.kqd_args["--tls-cert"])[1]
        shim_secret = file_source(self.shim, self.shim_container,
                                  self.shim_args["--kq-cert"])[1]
        serving = certs[kqd_secret]["spec"]
        self.assertIn("server auth", serving["usages"])
        self.assertLessEqual(self.kqd_names(), set(serving["dnsNames"]))
        self.assertIn("127.0.0.1", serving["ipAddresses"])
        # The shim's user is the one bound to kq-shim-role.
        client = certs[shim_secret]["spec"]
        self.assertIn("client auth", client["usages"])
        self.assertIn(("User", client["commonName"]),
                      self.bound("kq-shim-role"))
        self.assertEqual(client["subject"]["organizations"], ["kq:shims"])
        # An operator's, whose group is bound to the admin role.
        (admin,) = [c["spec"] for c in certs.values()
                    if c["spec"].get("commonName") == "kq-admin"]
        self.assertIn("client auth", admin["usages"])
        self.assertEqual(admin["issuerRef"], by_ca)
        self.assertTrue(
            {("Group", o) for o in admin["subject"]["organizations"]} &
            self.bound("kueue-batch-admin-role"))

    def kqd_names(self):
        """The DNS names kqd's serving certificate must hold: the host the
        shim dials, the Service's names, the pod's through the headless
        Service, localhost."""
        svc = self.m.one("Service", "kqd")["metadata"]
        headless = self.kqd["spec"]["serviceName"]
        ns = svc["namespace"]
        names = {svc["name"], f"{svc['name']}.{ns}",
                 f"{svc['name']}.{ns}.svc",
                 f"{svc['name']}.{ns}.svc.cluster.local",
                 f"{self.kqd['metadata']['name']}-0.{headless}.{ns}.svc",
                 "localhost"}
        names.add(self.shim_args["--kqd"].rsplit(":", 1)[0])
        return names

    def shim_cert_secret(self):
        mount = self.shim_cert_mount()
        for v in self.shim["spec"]["template"]["spec"]["volumes"]:
            if v["name"] == mount["name"]:
                return v["secret"]["secretName"]
        raise AssertionError(f"no volume {mount['name']}")

    def shim_cert_mount(self):
        cert_dir = os.path.dirname(self.shim_args["--webhook-cert"])
        for m in self.shim_container["volumeMounts"]:
            if m["mountPath"] == cert_dir:
                return m
        raise AssertionError(f"nothing mounted at {cert_dir}")

    def test_clusterrole_grants_exactly_what_the_shim_needs(self):
        role = self.m.one("ClusterRole", "kq-k8s-shim")
        granted = {}
        for rule in role["rules"]:
            self.assertFalse(set(rule) - {"apiGroups", "resources", "verbs"},
                             f"unexpected rule fields in {rule}")
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    granted.setdefault((group, resource), set()).update(
                        rule["verbs"])
        self.assertEqual(granted, EXPECTED_RBAC)
        self.assertEqual(self.m.all("Role"), [])

    def test_clusterrolebinding_binds_the_shims_serviceaccount(self):
        binding = self.m.one("ClusterRoleBinding", "kq-k8s-shim")
        sa = self.m.one("ServiceAccount")
        self.assertEqual(binding["roleRef"], {
            "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
            "name": self.m.one("ClusterRole")["metadata"]["name"]})
        self.assertEqual(binding["subjects"], [{
            "kind": "ServiceAccount", "name": sa["metadata"]["name"],
            "namespace": sa["metadata"]["namespace"]}])
        pod = self.shim["spec"]["template"]["spec"]
        self.assertEqual(pod["serviceAccountName"], sa["metadata"]["name"])

    def test_kqd_args_are_flags_kqd_accepts(self):
        self.assertEqual(self.kqd_container["command"], ["/usr/local/bin/kqd"])
        check_flags_accepted(self, KQD, self.kqd_container["args"],
                             KQD_SECURITY_FLAGS)

    def test_shim_args_are_flags_the_shim_accepts(self):
        self.assertEqual(self.shim_container["command"],
                         ["/usr/local/bin/kq-k8s-shim"])
        if not SHIM:
            self.skipTest("kq-k8s-shim is not built yet (shim/main.cc)")
        check_flags_accepted(self, SHIM, self.shim_container["args"],
                             SHIM_SECURITY_FLAGS)

    def test_kqd_runs_with_tls_bindings_and_an_audit_log(self):
        args = self.kqd_args
        # kqd listens beyond loopback only with both --tls-cert and
        # --authz-file, and the manifests never turn that off.
        self.assertFalse(args["--listen"].startswith("127."))
        self.assertNotIn("--insecure-allow-unauthenticated", args)
        # Each file is the key of the ConfigMap or Secret kq-certs.sh and
        # cert-manager make (kubernetes.io/tls keys for the certificates).
        want = {"--tls-cert": ("Secret", "kqd-tls", "tls.crt"),
                "--tls-key": ("Secret", "kqd-tls", "tls.key"),
                "--client-ca": ("Secret", "kqd-tls", "ca.crt"),
                "--token-file": ("Secret", "kqd-tokens", "tokens"),
                "--authz-file": ("ConfigMap", "kqd-authz", "authz.yaml"),
                "--config": ("ConfigMap", "kqd-config", "config.yaml")}
        for flag, source in want.items():
            with self.subTest(flag=flag):
                self.assertEqual(
                    file_source(self.kqd, self.kqd_container, args[flag]),
                    source)
        # The same layout as on a systemd machine (deploy/systemd).
        self.assertEqual(args["--tls-cert"], "/etc/kq/tls/tls.crt")
        self.assertEqual(args["--authz-file"], "/etc/kq/authz.yaml")
        self.assertEqual(args["--token-file"], "/etc/kq/tokens")
        # The key is readable by kqd's group (fsGroup) only.
        mount = mount_of(self.kqd_container, args["--tls-key"])
        (volume,) = [v for v in self.kqd["spec"]["template"]["spec"]["volumes"]
                     if v["name"] == mount["name"]]
        self.assertEqual(volume["projected"]["defaultMode"] & 0o007, 0)
        self.assertIn("fsGroup",
                      self.kqd["spec"]["template"]["spec"]["securityContext"])
        # The audit log is on the database's volume: writable (the root
        # file system is not), and kept across restarts.
        audit = mount_of(self.kqd_container, args["--audit-log"])
        (claim,) = self.kqd["spec"]["volumeClaimTemplates"]
        self.assertEqual(audit["name"], claim["metadata"]["name"])
        self.assertFalse(audit.get("readOnly", False))

    def test_shim_dials_kqd_with_tls_and_its_client_certificate(self):
        want = {"--kq-tls-ca": "ca.crt", "--kq-cert": "tls.crt",
                "--kq-key": "tls.key"}
        sources = set()
        for flag, key in want.items():
            with self.subTest(flag=flag):
                kind, name, got = file_source(self.shim, self.shim_container,
                                              self.shim_args[flag])
                self.assertEqual((kind, got), ("Secret", key))
                sources.add(name)
        self.assertEqual(sources, {"kq-k8s-shim-kq-client"})
        # Not the webhook's Secret: that one the API server trusts.
        self.assertNotEqual(sources, {self.shim_cert_secret()})

    def test_kqd_bindings_name_the_shim_admins_and_prometheus(self):
        check_bindings(self, self.authz)
        self.assertEqual(
            self.bound("kq-shim-role"),
            {("User", "system:serviceaccount:kq-system:kq-k8s-shim")})
        self.assertEqual(self.bound("kueue-batch-admin-role"),
                         {("Group", "kq:admins")})
        self.assertEqual(self.bound("kueue-metrics-reader"),
                         {("User", "prometheus")})
        # Named apart from the cluster's own RBAC objects, so that neither
        # is mistaken for the other.
        for doc in self.authz:
            self.assertTrue(doc["metadata"]["name"].startswith("kqd:"))

    def test_pods_meet_the_restricted_pod_security_standard(self):
        ns = self.m.one("Namespace", NAMESPACE)
        self.assertEqual(
            ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
            "restricted")
        allowed_volumes = {"configMap", "secret", "emptyDir",
                           "persistentVolumeClaim", "projected",
                           "downwardAPI", "csi", "ephemeral"}
        for workload in (self.kqd, self.shim):
            pod = workload["spec"]["template"]["spec"]
            with self.subTest(workload=workload["metadata"]["name"]):
                self.assertTrue(pod["securityContext"]["runAsNonRoot"])
                self.assertNotEqual(pod["securityContext"]["runAsUser"], 0)
                self.assertEqual(
                    pod["securityContext"]["seccompProfile"]["type"],
                    "RuntimeDefault")
                for v in pod.get("volumes", []):
                    self.assertTrue(set(v) - {"name"} <= allowed_volumes, v)
                for c in pod["containers"]:
                    ctx = c["securityContext"]
                    self.assertIs(ctx["allowPrivilegeEscalation"], False)
                    self.assertEqual(ctx["capabilities"], {"drop": ["ALL"]})
                    self.assertTrue(ctx["readOnlyRootFilesystem"])
                    self.assertNotIn("hostPort", str(c.get("ports")))

    def test_kqd_is_one_replica_with_its_database_on_the_claim(self):
        spec = self.kqd["spec"]
        self.assertEqual(spec["replicas"], 1)
        (claim,) = spec["volumeClaimTemplates"]
        self.assertEqual(claim["spec"]["accessModes"], ["ReadWriteOnce"])
        mounts = {m["name"]: m for m in self.kqd_container["volumeMounts"]}
        self.assertEqual(mounts[claim["metadata"]["name"]]["mountPath"],
                         self.kqd_args["--data-dir"])
        self.assertEqual(self.kqd_container["image"],
                         self.shim_container["image"])
        self.assertEqual(self.kqd_container["image"], f"kq:{VERSION}")

    def test_kqd_config_file_is_the_configmap(self):
        with open(self.generated_file(self.kqd_args["--config"])) as f:
            configuration = yaml.safe_load(f)
        self.assertIn(kind_key(configuration), CONFIG_KINDS)

    def test_kqd_port_service_and_probes_agree(self):
        port = int(self.kqd_args["--listen"].rsplit(":", 1)[1])
        self.assertEqual(container_port(self.kqd_container, "grpc"), port)
        labels = self.kqd["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(selects(self.kqd["spec"]["selector"]["matchLabels"],
                                labels))
        for svc_name in ("kqd", self.kqd["spec"]["serviceName"]):
            with self.subTest(service=svc_name):
                svc = self.m.one("Service", svc_name)
                self.assertTrue(selects(svc["spec"]["selector"], labels))
                self.assertEqual(
                    container_port(self.kqd_container,
                                   service_port(svc, "grpc")["targetPort"]),
                    port)
        headless = self.m.one("Service", self.kqd["spec"]["serviceName"])
        self.assertEqual(headless["spec"]["clusterIP"], "None")

    def test_kqd_http_port_probes_service_and_scrape_annotations_agree(self):
        host, port = self.kqd_args["--http-listen"].rsplit(":", 1)
        port = int(port)
        # The kubelet and the scraper reach the pod IP.
        self.assertEqual(host, "0.0.0.0")
        self.assertEqual(container_port(self.kqd_container, "http-metrics"),
                         port)
        # The kubelet's grpc probe has no TLS: every probe asks the HTTP
        # port, in HTTPS, where /readyz and /healthz need no credentials.
        for probe, path in (("startupProbe", "/readyz"),
                            ("readinessProbe", "/readyz"),
                            ("livenessProbe", "/healthz")):
            with self.subTest(probe=probe):
                self.assertEqual(set(self.kqd_container[probe]) &
                                 {"grpc", "tcpSocket", "exec"}, set())
                get = self.kqd_container[probe]["httpGet"]
                self.assertEqual(get["path"], path)
                self.assertEqual(get["scheme"], "HTTPS")
                self.assertEqual(container_port(self.kqd_container,
                                                get["port"]), port)
        svc = self.m.one("Service", "kqd")
        metrics = service_port(svc, "http-metrics")
        self.assertEqual(metrics["port"], port)
        self.assertEqual(
            container_port(self.kqd_container, metrics["targetPort"]), port)
        annotations = self.kqd["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(annotations, {"prometheus.io/scrape": "true",
                                       "prometheus.io/scheme": "https",
                                       "prometheus.io/port": str(port),
                                       "prometheus.io/path": "/metrics"})
        # On the pod only: a Prometheus with both the pod and the
        # service-endpoints jobs would scrape kqd twice.
        for service in self.m.all("Service"):
            self.assertFalse(
                any(k.startswith("prometheus.io/") for k in
                    service["metadata"].get("annotations", {})),
                service["metadata"]["name"])

    def test_shim_scrape_annotations_name_its_health_port(self):
        annotations = self.shim["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(annotations, {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": self.shim_args["--health-port"],
            "prometheus.io/path": "/metrics"})

    def test_shim_reaches_kqd_through_its_service(self):
        svc = self.m.one("Service", "kqd")
        self.assertEqual(
            self.shim_args["--kqd"],
            f"{svc['metadata']['name']}.{svc['metadata']['namespace']}.svc:"
            f"{service_port(svc, 'grpc')['port']}")

    def test_webhook_path_and_port_match_the_shim_service(self):
        hook = self.m.one("MutatingWebhookConfiguration")
        (webhook,) = hook["webhooks"]
        ref = webhook["clientConfig"]["service"]
        self.assertEqual(ref["path"], WEBHOOK_PATH)
        svc = self.m.one("Service", ref["name"])
        self.assertEqual(svc["metadata"]["namespace"], ref["namespace"])
        labels = self.shim["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(selects(svc["spec"]["selector"], labels))
        self.assertTrue(selects(self.shim["spec"]["selector"]["matchLabels"],
                                labels))
        ports = {p["port"]: p for p in svc["spec"]["ports"]}
        self.assertIn(ref.get("port", 443), ports)
        target = container_port(self.shim_container,
                                ports[ref.get("port", 443)]["targetPort"])
        self.assertEqual(target, int(self.shim_args["--webhook-port"]))
        # The certificate and key the flags name are in the mounted Secret.
        mount = self.shim_cert_mount()
        for flag, key in (("--webhook-cert", "tls.crt"),
                          ("--webhook-key", "tls.key")):
            self.assertEqual(self.shim_args[flag],
                             os.path.join(mount["mountPath"], key))

    def test_shim_health_port_and_runner_id(self):
        health = int(self.shim_args["--health-port"])
        for probe in ("livenessProbe", "readinessProbe"):
            with self.subTest(probe=probe):
                port = self.shim_container[probe]["httpGet"]["port"]
                self.assertEqual(container_port(self.shim_container, port),
                                 health)
        # Kubernetes expands $(VAR) in args only for variables the container
        # defines; otherwise the shim would get the literal text.
        env = {e["name"] for e in self.shim_container.get("env", [])}
        for var in re.findall(r"\$\(([A-Z_]+)\)",
                              " ".join(self.shim_container["args"])):
            self.assertIn(var, env)

    def test_webhook_configuration(self):
        hook = self.m.one("MutatingWebhookConfiguration")
        (webhook,) = hook["webhooks"]
        self.assertEqual(webhook["rules"], [{
            "apiGroups": ["batch"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["jobs"],
            "scope": "Namespaced"}])
        self.assertEqual(webhook["objectSelector"], {"matchExpressions": [
            {"key": QUEUE_NAME_LABEL, "operator": "Exists"}]})
        self.assertEqual(webhook["sideEffects"], "None")
        self.assertEqual(webhook["admissionReviewVersions"], ["v1"])
        self.assertEqual(webhook["failurePolicy"], "Fail")
        self.assertEqual(webhook["timeoutSeconds"], 10)
        # The shim's own namespace is exempt, so a broken webhook never blocks
        # repairing it.
        (excluded,) = webhook["namespaceSelector"]["matchExpressions"]
        self.assertEqual(excluded["key"], "kubernetes.io/metadata.name")
        self.assertEqual(excluded["operator"], "NotIn")
        self.assertIn(NAMESPACE, excluded["values"])
        # A placeholder, but valid base64 so the object applies.
        ca_bundle = webhook["clientConfig"]["caBundle"]
        self.assertEqual(base64.b64decode(ca_bundle, validate=True),
                         b"REPLACE-ME")

    def pod_files(self, tmp, certs):
        """kqd's /etc/kq as the pod's volumes lay it out, in tmp/etc-kq:
        the generated ConfigMaps' files from deploy/kubernetes, the
        Secrets' from kq-certs.sh's directory `certs`."""
        etc = os.path.join(tmp, "etc-kq")
        secrets = Kustomization(certs).generated_secrets
        for arg in self.kqd_container["args"]:
            path = arg.partition("=")[2]
            if not path.startswith("/etc/kq/"):
                continue
            kind, name, key = file_source(self.kqd, self.kqd_container, path)
            if kind == "ConfigMap":
                source = self.generated_file(path)
            else:
                source = os.path.join(certs, secrets[name][key])
            local = os.path.join(etc, os.path.relpath(path, "/etc/kq"))
            os.makedirs(os.path.dirname(local), exist_ok=True)
            shutil.copy(source, local)
        return etc

    def test_kqd_serves_health_with_the_manifest_args(self):
        """kqd started with the StatefulSet's arguments, its files laid out
        as the pod's volumes lay them out (the certificates and tokens from
        kq-certs.sh), loads the Configuration, answers the probes'
        endpoints and the health service, and lets Prometheus's token read
        /metrics. Until kqd has the contract's flags it runs without them,
        and the checks of TLS skip once the rest have passed."""
        config = self.generated_file(self.kqd_args["--config"])
        pending = missing_flags(KQD, KQD_SECURITY_FLAGS & set(self.kqd_args))
        with tempfile.TemporaryDirectory() as tmp:
            certs = os.path.join(tmp, "certs")
            make_certs(certs)
            ca = os.path.join(certs, "ca.crt")
            kqd = KqdProcess(self.kqd_container["args"],
                             os.path.join(tmp, "data"), config=config,
                             paths={"/etc/kq": self.pod_files(tmp, certs)},
                             drop=pending)
            tls = None if pending else (ca, os.path.join(certs, "admin.crt"),
                                        os.path.join(certs, "admin.key"))
            http = {}
            try:
                port = kqd.wait_port()
                response = grpc_health_check(port, tls)
                if not pending:
                    with open(os.path.join(certs, "prometheus.token")) as f:
                        token = f.read()
                    http_port = kqd.http_port()
                    deadline = time.monotonic() + 30
                    while (https_get(http_port, "/readyz", ca)[0] != 200 and
                           time.monotonic() < deadline):
                        time.sleep(0.1)
                    for name, path, credential in (
                            ("healthz", "/healthz", None),
                            ("readyz", "/readyz", None),
                            ("metrics", "/metrics", token),
                            ("anonymous", "/metrics", None),
                            ("wrong", "/metrics", "x" + token)):
                        http[name] = https_get(http_port, path, ca,
                                               credential)
                output = kqd.output()
            finally:
                code = kqd.stop()
            self.assertIn(f"configuration from {config}", output)
            self.assertNotRegex(output, r"Z (warn|warning|error|critical) ")
            self.assertTrue(os.path.exists(os.path.join(tmp, "data", "kq.db")))
            self.assertEqual(code, 0, output)
            self.assertIsNotNone(
                response, "python3-grpcio missing (scripts/install-deps.sh): "
                "health service not called")
            self.assertEqual(response, HEALTH_SERVING)
        if pending:
            self.fail(f"kqd has no {', '.join(sorted(pending))}")
        # The probes need no credentials; /metrics needs
        # kueue-metrics-reader, which the token's user has.
        self.assertEqual(http["healthz"][0], 200, http["healthz"])
        self.assertEqual(http["readyz"][0], 200, http["readyz"])
        self.assertEqual(http["metrics"][0], 200, http["metrics"])
        self.assertIn("kueue_", http["metrics"][1])
        self.assertIn(http["anonymous"][0], (401, 403), http["anonymous"])
        self.assertEqual(http["wrong"][0], 401, http["wrong"])

    def test_cert_script_makes_certificates_for_the_manifests(self):
        hook = self.m.one("MutatingWebhookConfiguration")
        ref = hook["webhooks"][0]["clientConfig"]["service"]
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "overlay")
            make_certs(out)
            ca = os.path.join(out, "ca.crt")
            certs = {}
            for name in ("kqd", "webhook", "shim", "admin"):
                with self.subTest(cert=name):
                    ok, why = openssl_verify(ca, os.path.join(out,
                                                              name + ".crt"))
                    self.assertTrue(ok, why)
                    certs[name] = cert_fields(os.path.join(out,
                                                           name + ".crt"))
            ca_subject = cert_fields(ca)["subject"]
            self.assertEqual(ca_subject, {"CN": ["kq-ca"]})
            modes = {n: os.stat(os.path.join(out, n)).st_mode
                     for n in os.listdir(out)}
            with open(os.path.join(out, "prometheus.token")) as f:
                token = f.read()
            with open(os.path.join(out, "tokens")) as f:
                token_lines = [line.split() for line in f
                               if line.strip() and not line.startswith("#")]
        # kqd's serving certificate: every name the shim and clients dial.
        kqd = certs["kqd"]
        self.assertEqual(kqd["eku"], {SERVER_AUTH})
        self.assertLessEqual({f"DNS:{n}" for n in self.kqd_names()},
                             kqd["san"])
        self.assertIn("IP:127.0.0.1", kqd["san"])
        self.assertIn(f"DNS:{ref['name']}.{ref['namespace']}.svc",
                      certs["webhook"]["san"])
        self.assertEqual(certs["webhook"]["eku"], {SERVER_AUTH})
        # Client certificates: the CN is the user, each O a group, as
        # kqd-authz.yaml binds them.
        shim, admin = certs["shim"], certs["admin"]
        self.assertEqual(shim["eku"], {CLIENT_AUTH})
        self.assertEqual(admin["eku"], {CLIENT_AUTH})
        self.assertEqual(shim["subject"]["O"], ["kq:shims"])
        self.assertEqual({("User", cn) for cn in shim["subject"]["CN"]},
                         self.bound("kq-shim-role"))
        self.assertEqual({("Group", o) for o in admin["subject"]["O"]},
                         self.bound("kueue-batch-admin-role"))
        self.assertEqual(shim["san"] | admin["san"], set())
        # Prometheus's token: kqd keeps its SHA-256, for the user that
        # kueue-metrics-reader is bound to.
        self.assertRegex(token, r"^[0-9a-f]{64}$")
        digest = hashlib.sha256(token.encode()).hexdigest()
        self.assertEqual(token_lines, [[f"sha256:{digest}", "prometheus"]])
        self.assertEqual(self.bound("kueue-metrics-reader"),
                         {("User", "prometheus")})
        # Keys and the token are the owner's only.
        for name, mode in modes.items():
            if name.endswith(".key") or name in ("tokens",
                                                 "prometheus.token"):
                with self.subTest(file=name):
                    self.assertEqual(mode & 0o077, 0, "readable by others")

    def test_cert_script_makes_a_working_overlay(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "overlay")
            make_certs(out)
            files = {}
            for name in os.listdir(out):
                with open(os.path.join(out, name), "rb") as f:
                    files[name] = f.read()
            with_each_kubectl(
                self, lambda kubectl: self.check_overlay(
                    kustomize(out, kubectl), files))
            # OUT_DIR/authz.yaml replaces deploy/kubernetes's bindings.
            shutil.copy(os.path.join(DEPLOY, "examples",
                                     "two-teams-authz.yaml"),
                        os.path.join(out, "authz.yaml"))
            make_certs(out)
            with open(os.path.join(out, "authz.yaml"), "rb") as f:
                files["authz.yaml"] = f.read()
            with_each_kubectl(
                self, lambda kubectl: self.check_overlay(
                    kustomize(out, kubectl), files))

    def check_overlay(self, built, files):
        """The overlay kq-certs.sh wrote, as built: the webhook's caBundle
        is the CA, each Secret holds the files kq-certs.sh made, and the
        pods mount those Secrets where their flags look."""
        (hook,) = [d for d in built
                   if d["kind"] == "MutatingWebhookConfiguration"]
        ca_bundle = hook["webhooks"][0]["clientConfig"]["caBundle"]
        self.assertEqual(base64.b64decode(ca_bundle), files["ca.crt"])
        secrets = {}
        for d in built:
            if d["kind"] == "Secret":
                self.assertEqual(d["metadata"]["namespace"], NAMESPACE)
                base = d["metadata"]["name"].rsplit("-", 1)[0]
                secrets[base] = d
        want = {
            "kqd-tls": {"tls.crt": "kqd.crt", "tls.key": "kqd.key",
                        "ca.crt": "ca.crt"},
            "kqd-tokens": {"tokens": "tokens"},
            "kq-k8s-shim-kq-client": {"tls.crt": "shim.crt",
                                      "tls.key": "shim.key",
                                      "ca.crt": "ca.crt"},
            "kq-k8s-shim-webhook-cert": {"tls.crt": "webhook.crt",
                                         "tls.key": "webhook.key"}}
        self.assertEqual(set(secrets), set(want))
        for name, keys in want.items():
            with self.subTest(secret=name):
                data = {k: base64.b64decode(v)
                        for k, v in secrets[name]["data"].items()}
                self.assertEqual(data, {k: files[f] for k, f in keys.items()})
                if "tls.crt" in keys:
                    self.assertEqual(secrets[name]["type"],
                                     "kubernetes.io/tls")
        # The pods read these Secrets, under their hashed names, and the
        # bindings from OUT_DIR/authz.yaml when there is one.
        (sts,) = [d for d in built if d["kind"] == "StatefulSet"]
        (shim,) = [d for d in built if d["kind"] == "Deployment"]
        for workload, flags in ((sts, ("--tls-cert", "--tls-key",
                                       "--client-ca", "--token-file",
                                       "--authz-file")),
                                (shim, ("--kq-tls-ca", "--kq-cert",
                                        "--kq-key", "--webhook-cert",
                                        "--webhook-key"))):
            (c,) = workload["spec"]["template"]["spec"]["containers"]
            args = flag_values(c["args"])
            for flag in flags:
                with self.subTest(flag=flag):
                    kind, name, key = file_source(workload, c, args[flag])
                    if kind == "Secret":
                        self.assertEqual(
                            name, secrets[name.rsplit("-", 1)[0]]["metadata"][
                                "name"])
                        continue
                    (cm,) = [d for d in built if d["kind"] == "ConfigMap" and
                             d["metadata"]["name"] == name]
                    with open(os.path.join(
                            self.m.directory,
                            self.m.kustomization.generated["kqd-authz"][key]),
                            "rb") as f:
                        default = f.read()
                    self.assertEqual(cm["data"][key].encode(),
                                     files.get("authz.yaml", default))

    def test_cert_script_run_again_keeps_what_is_good(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "overlay")
            make_certs(out)

            def contents():
                found = {}
                for name in sorted(os.listdir(out)):
                    with open(os.path.join(out, name), "rb") as f:
                        found[name] = f.read()
                return found

            first = contents()
            # A second run changes nothing, so applying it rolls nothing.
            self.assertNotIn("made", make_certs(out))
            self.assertEqual(contents(), first)
            # A token line added by hand stays.
            with open(os.path.join(out, "tokens"), "a") as f:
                f.write("sha256:" + "0" * 64 + " ci-a team-a\n")
            make_certs(out)
            self.assertIn(b" ci-a team-a\n", contents()["tokens"])
            # --renew: new certificates and keys, the same CA.
            make_certs(out, renew=True)
            renewed = contents()
            for name in ("kqd", "webhook", "shim", "admin"):
                with self.subTest(cert=name):
                    self.assertNotEqual(renewed[name + ".crt"],
                                        first[name + ".crt"])
                    self.assertNotEqual(renewed[name + ".key"],
                                        first[name + ".key"])
                    ok, why = openssl_verify(os.path.join(out, "ca.crt"),
                                             os.path.join(out, name + ".crt"))
                    self.assertTrue(ok, why)
            self.assertEqual(renewed["ca.crt"], first["ca.crt"])
            self.assertEqual(renewed["prometheus.token"],
                             first["prometheus.token"])
            # A certificate about to expire is made anew.
            subprocess.run(
                ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-days", "10", "-subj", "/CN=kq-admin/O=kq:admins",
                 "-addext", "basicConstraints=critical,CA:FALSE",
                 "-addext", "extendedKeyUsage=clientAuth",
                 "-CA", os.path.join(out, "ca.crt"),
                 "-CAkey", os.path.join(out, "ca.key"),
                 "-keyout", os.path.join(out, "admin.key"),
                 "-out", os.path.join(out, "admin.crt")],
                check=True, capture_output=True)
            self.assertIn("admin.crt", make_certs(out))
            # Deleting the token rotates it: one line for prometheus, the
            # new one, and the hand-made line kept.
            os.remove(os.path.join(out, "prometheus.token"))
            make_certs(out)
            rotated = contents()
            self.assertNotEqual(rotated["prometheus.token"],
                                first["prometheus.token"])
            digest = hashlib.sha256(rotated["prometheus.token"]).hexdigest()
            lines = [line for line in rotated["tokens"].decode().splitlines()
                     if line and not line.startswith("#")]
            self.assertEqual(lines, ["sha256:" + "0" * 64 + " ci-a team-a",
                                     f"sha256:{digest} prometheus"])

    def test_cert_script_reuses_a_webhook_cert_directory(self):
        """A directory the former webhook-cert.sh made (ca.*, tls.* for the
        webhook): its CA signs everything and the webhook's pair is kept,
        so the caBundle in the cluster stays valid."""
        hook = self.m.one("MutatingWebhookConfiguration")
        ref = hook["webhooks"][0]["clientConfig"]["service"]
        dns = f"{ref['name']}.{ref['namespace']}.svc"
        with tempfile.TemporaryDirectory() as out:
            ca, ca_key = (os.path.join(out, n) for n in ("ca.crt", "ca.key"))
            run = functools.partial(subprocess.run, check=True,
                                    capture_output=True)
            run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-days", "3650", "-subj", f"/CN={ref['name']}-ca",
                 "-keyout", ca_key, "-out", ca])
            run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                 "-days", "365", "-subj", f"/CN={dns}",
                 "-addext", "basicConstraints=critical,CA:FALSE",
                 "-addext", "extendedKeyUsage=serverAuth",
                 "-addext",
                 f"subjectAltName=DNS:{dns},DNS:{dns}.cluster.local",
                 "-CA", ca, "-CAkey", ca_key,
                 "-keyout", os.path.join(out, "tls.key"),
                 "-out", os.path.join(out, "tls.crt")])
            with open(ca, "rb") as f:
                old_ca = f.read()
            with open(os.path.join(out, "tls.crt"), "rb") as f:
                old_webhook = f.read()
            make_certs(out)
            with open(ca, "rb") as f:
                self.assertEqual(f.read(), old_ca)
            with open(os.path.join(out, "webhook.crt"), "rb") as f:
                self.assertEqual(f.read(), old_webhook)
            self.assertFalse(os.path.exists(os.path.join(out, "tls.crt")))
            for name in ("kqd", "shim", "admin"):
                ok, why = openssl_verify(ca, os.path.join(out, name + ".crt"))
                self.assertTrue(ok, why)

    def test_every_kubectl_builds_the_same_objects(self):
        """Debian 12's kustomize v2 and a current one make the same objects,
        but for the generated names' content hashes, which their versions
        compute differently."""
        debian = os.environ.get("KQ_DEBIAN_KUBECTL", "")
        self.assertTrue(os.access(debian, os.X_OK),
                        f"Debian's kubectl not found ('{debian}'): run "
                        "scripts/install-deps.sh")
        found = kubectls()
        generated = "|".join(re.escape(n) for n in
                             self.m.kustomization.generated)

        def normalized(built):
            text = [json.dumps(d, sort_keys=True) for d in built]
            return sorted(re.sub(rf'"({generated})-[a-z0-9]{{10}}"',
                                 r'"\1-HASH"', t) for t in text)

        for directory in KUBE_DIRS:
            with self.subTest(directory=os.path.relpath(directory, DEPLOY)):
                builds = [normalized(kustomize(directory, k)) for k in found]
                for other in builds[1:]:
                    self.assertEqual(other, builds[0])


def read_unit(path, *drop_ins):
    """{section: [(key, value)]}, continuation lines joined; the drop-ins'
    settings follow the unit's, as systemd reads them."""
    sections = {}
    for name in (path, *drop_ins):
        read_unit_file(name, sections)
    return sections


def read_unit_file(path, sections):
    current = None
    pending = ""
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not pending and (not line.strip() or line.lstrip()[0] in "#;"):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            line = pending + line
            pending = ""
            if line.startswith("["):
                current = sections.setdefault(line.strip("[]"), [])
                continue
            key, value = line.split("=", 1)
            current.append((key.strip(), value.strip()))


def unit_value(unit, section, key):
    values = [v for k, v in unit[section] if k == key]
    if len(values) != 1:
        raise AssertionError(f"want one {key} in [{section}], got {values}")
    return values[0]


def unit_environment(unit):
    """The Environment= assignments of [Service], the later winning; each
    line may hold several, quoted as systemd quotes them."""
    env = {}
    for key, value in unit["Service"]:
        if key == "Environment":
            for assignment in shlex.split(value):
                name, val = assignment.split("=", 1)
                env[name] = val
    return env


def exec_start_argv(unit):
    """ExecStart as argv, with the Environment= defaults expanded the way
    systemd does: ${VAR} one word, $VAR split on whitespace, unset empty."""
    env = unit_environment(unit)
    argv = []
    for word in shlex.split(unit_value(unit, "Service", "ExecStart")):
        whole = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", word)
        if whole:
            argv.extend(env.get(whole.group(1), "").split())
            continue
        argv.append(re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}",
                           lambda m: env.get(m.group(1), ""), word))
    return argv


SECURITY_DROP_IN = "security.conf"


class SystemdTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.units = os.path.join(DEPLOY, "systemd")
        kqd = os.path.join(cls.units, "kqd.service")
        shim = os.path.join(cls.units, "kq-k8s-shim.service")
        cls.kqd_unit = read_unit(kqd)
        cls.shim_unit = read_unit(shim)
        # With the drop-ins that turn on TLS and authorization.
        cls.secure_kqd_unit = read_unit(
            kqd, os.path.join(kqd + ".d", SECURITY_DROP_IN))
        cls.secure_shim_unit = read_unit(
            shim, os.path.join(shim + ".d", SECURITY_DROP_IN))

    def test_only_the_security_drop_ins_exist(self):
        for unit in ("kqd.service", "kq-k8s-shim.service"):
            with self.subTest(unit=unit):
                self.assertEqual(
                    os.listdir(os.path.join(self.units, unit + ".d")),
                    [SECURITY_DROP_IN])

    def test_security_drop_in_turns_on_tls_bindings_and_audit(self):
        argv = exec_start_argv(self.secure_kqd_unit)
        self.assertEqual(argv[0], "/usr/local/bin/kqd")
        values = flag_values(argv[1:])
        # The layout of deploy/README.md and README.md: /etc/kq, and the
        # audit log in the LogsDirectory systemd makes writable.
        want = {"--tls-cert": "/etc/kq/tls/tls.crt",
                "--tls-key": "/etc/kq/tls/tls.key",
                "--client-ca": "/etc/kq/tls/ca.crt",
                "--token-file": "/etc/kq/tokens",
                "--authz-file": "/etc/kq/authz.yaml"}
        for flag, path in want.items():
            with self.subTest(flag=flag):
                self.assertEqual(values.get(flag), path)
        logs = unit_value(self.secure_kqd_unit, "Service", "LogsDirectory")
        self.assertEqual(values["--audit-log"], f"/var/log/{logs}/audit.log")
        # Every interface, which kqd allows with TLS and the bindings.
        self.assertEqual(values["--listen"], "0.0.0.0:7070")
        self.assertNotIn("--insecure-allow-unauthenticated", values)
        # A missing file fails the start, naming the file.
        asserted = {v for k, v in self.secure_kqd_unit["Unit"]
                    if k == "AssertPathExists"}
        self.assertEqual(asserted, set(want.values()))
        # Without the drop-in, the unit has none of it and needs no file.
        plain = flag_values(exec_start_argv(self.kqd_unit)[1:])
        self.assertEqual(set(plain) & KQD_SECURITY_FLAGS, set())
        self.assertEqual([k for k, v in self.kqd_unit["Unit"]
                          if k.startswith(("Assert", "Condition"))], [])
        # The hardening stays: no path made writable but the log directory.
        self.assertNotIn("ReadWritePaths", dict(self.secure_kqd_unit[
            "Service"]))
        self.assertEqual(unit_value(self.secure_kqd_unit, "Service",
                                    "ProtectSystem"), "strict")
        check_flags_accepted(self, KQD, argv[1:], KQD_SECURITY_FLAGS)

    def test_shim_security_drop_in_dials_kqd_with_tls(self):
        argv = exec_start_argv(self.secure_shim_unit)
        values = flag_values(argv[1:])
        kqd = flag_values(exec_start_argv(self.secure_kqd_unit)[1:])
        # kqd's CA signs kqd's certificate and the clients'.
        self.assertEqual(values["--kq-tls-ca"], kqd["--client-ca"])
        self.assertEqual(values["--kq-cert"], "/etc/kq/shim/tls.crt")
        self.assertEqual(values["--kq-key"], "/etc/kq/shim/tls.key")
        asserted = {v for k, v in self.secure_shim_unit["Unit"]
                    if k == "AssertPathExists"}
        self.assertEqual(asserted, {values[f] for f in SHIM_SECURITY_FLAGS})
        plain = flag_values(exec_start_argv(self.shim_unit)[1:])
        self.assertEqual(set(plain) & SHIM_SECURITY_FLAGS, set())
        if not SHIM:
            self.skipTest("kq-k8s-shim is not built yet (shim/main.cc)")
        check_flags_accepted(self, SHIM, argv[1:], SHIM_SECURITY_FLAGS)

    def test_kqd_unit_runs_kqd_with_flags_it_accepts(self):
        argv = exec_start_argv(self.kqd_unit)
        self.assertEqual(argv[0], "/usr/local/bin/kqd")
        flags = help_flags(KQD)
        for arg in argv[1:]:
            with self.subTest(arg=arg):
                self.assertTrue(arg.startswith("--"))
                self.assertIn(arg.split("=", 1)[0], flags)
        values = flag_values(argv[1:])
        state = unit_value(self.kqd_unit, "Service", "StateDirectory")
        self.assertEqual(values["--data-dir"], f"/var/lib/{state}")
        # kqd has no authentication: loopback unless the operator opens it.
        self.assertTrue(values["--listen"].startswith("127.0.0.1:"))

    def test_kqd_unit_is_type_simple_because_kqd_never_notifies(self):
        self.assertEqual(unit_value(self.kqd_unit, "Service", "Type"),
                         "simple")
        server = os.path.join(DEPLOY, "..", "server")
        self.assertTrue(os.path.isdir(server), server)
        found = subprocess.run(["grep", "-rl", "sd_notify", server],
                               capture_output=True, text=True).stdout
        self.assertEqual(found, "", "kqd calls sd_notify now: use Type=notify")

    def test_kqd_unit_hardening(self):
        service = dict(self.kqd_unit["Service"])
        want = {"User": "kq", "NoNewPrivileges": "yes",
                "ProtectSystem": "strict", "ProtectHome": "yes",
                "PrivateTmp": "yes", "Restart": "on-failure"}
        for key, value in want.items():
            with self.subTest(key=key):
                self.assertEqual(service.get(key), value)
        self.assertIn("LimitNOFILE", service)
        # ProtectSystem=strict leaves only the StateDirectory writable; no
        # ReadWritePaths widening it.
        self.assertNotIn("ReadWritePaths", service)

    def test_kqd_starts_with_the_units_command_line(self):
        argv = exec_start_argv(self.kqd_unit)
        with tempfile.TemporaryDirectory() as tmp:
            kqd = KqdProcess(argv[1:], os.path.join(tmp, "data"))
            try:
                port = kqd.wait_port()
                response = grpc_health_check(port)
            finally:
                code = kqd.stop()
            self.assertEqual(code, 0)
            if response is not None:
                self.assertEqual(response, HEALTH_SERVING)

    def test_kqd_starts_with_the_security_drop_in(self):
        """kqd with the drop-in's command line and /etc/kq laid out as
        deploy/README.md says: a serving certificate and its CA (here
        kq-certs.sh's), the example bindings and tokens."""
        argv = exec_start_argv(self.secure_kqd_unit)
        pending = missing_flags(KQD, KQD_SECURITY_FLAGS &
                                set(flag_values(argv[1:])))
        if pending:
            self.fail(f"kqd has no {', '.join(sorted(pending))}")
        examples = os.path.join(DEPLOY, "examples")
        with tempfile.TemporaryDirectory() as tmp:
            certs = os.path.join(tmp, "certs")
            make_certs(certs)
            etc = os.path.join(tmp, "etc")
            os.makedirs(os.path.join(etc, "tls"))
            for name, source in (
                    ("tls/tls.crt", os.path.join(certs, "kqd.crt")),
                    ("tls/tls.key", os.path.join(certs, "kqd.key")),
                    ("tls/ca.crt", os.path.join(certs, "ca.crt")),
                    ("tokens", os.path.join(examples, "two-teams-tokens")),
                    ("authz.yaml", os.path.join(examples,
                                                "two-teams-authz.yaml"))):
                shutil.copy(source, os.path.join(etc, name))
            logs = os.path.join(tmp, "log")
            os.makedirs(logs)
            kqd = KqdProcess(argv[1:], os.path.join(tmp, "data"),
                             paths={"/etc/kq": etc, "/var/log/kq": logs})
            try:
                port = kqd.wait_port()
                response = grpc_health_check(port, (
                    os.path.join(certs, "ca.crt"),
                    os.path.join(certs, "admin.crt"),
                    os.path.join(certs, "admin.key")))
                output = kqd.output()
            finally:
                code = kqd.stop()
            self.assertEqual(code, 0, output)
            self.assertNotRegex(output, r"Z (warn|warning|error|critical) ")
            self.assertIsNotNone(response, "python3-grpcio missing")
            self.assertEqual(response, HEALTH_SERVING)

    def test_shim_unit_flags(self):
        argv = exec_start_argv(self.shim_unit)
        self.assertEqual(argv[0], "/usr/local/bin/kq-k8s-shim")
        if not SHIM:
            self.skipTest("kq-k8s-shim is not built yet (shim/main.cc)")
        check_flags_accepted(self, SHIM, argv[1:], SHIM_SECURITY_FLAGS)

    def test_systemd_analyze_verify_is_silent(self):
        self.assertTrue(shutil.which("systemd-analyze"),
                        "systemd-analyze not installed: run "
                        "scripts/install-deps.sh (package systemd)")
        # verify also checks that ExecStart is executable: point it at the
        # built binaries (kq stands in for a shim not built yet). It exits 0 on
        # unknown keys and bad values, so any output is a failure.
        binaries = {"/usr/local/bin/kqd": KQD,
                    "/usr/local/bin/kq-k8s-shim":
                        SHIM or os.path.join(os.path.dirname(KQD), "kq")}
        # With its drop-in too: systemd-analyze reads the unit's .d
        # directory beside it.
        for name in ("kqd.service", "kq-k8s-shim.service"):
            for drop_in in (False, True):
                with self.subTest(unit=name, drop_in=drop_in), \
                        tempfile.TemporaryDirectory() as tmp:
                    with open(os.path.join(self.units, name)) as f:
                        text = f.read()
                    for installed, built in binaries.items():
                        text = text.replace(installed, built)
                    path = os.path.join(tmp, name)
                    with open(path, "w") as f:
                        f.write(text)
                    if drop_in:
                        shutil.copytree(os.path.join(self.units, name + ".d"),
                                        path + ".d")
                    out = subprocess.run(["systemd-analyze", "verify", path],
                                         capture_output=True, text=True,
                                         timeout=60)
                    self.assertEqual(out.returncode, 0, out.stderr)
                    self.assertEqual(out.stdout + out.stderr, "")


class ImageTest(unittest.TestCase):

    def dockerfile(self):
        with open(os.path.join(DEPLOY, "Dockerfile")) as f:
            return f.read()

    def test_runtime_packages_cover_every_library_kqd_loads(self):
        script = os.path.join(DEPLOY, "runtime-packages.sh")
        kq = os.path.join(os.path.dirname(KQD), "kq")
        packages = subprocess.run([script, KQD, kq], capture_output=True,
                                  text=True, check=True,
                                  timeout=120).stdout.split()
        self.assertEqual(packages, sorted(set(packages)))
        ldd = subprocess.run(["ldd", KQD], capture_output=True, text=True,
                             check=True).stdout
        for lib in ("libsqlite3", "libgrpc++", "libprotobuf"):
            with self.subTest(lib=lib):
                path = re.search(rf"=> (\S*/{re.escape(lib)}[^ ]*)",
                                 ldd).group(1)
                owner = subprocess.run(
                    ["dpkg-query", "-S", os.path.basename(path)],
                    capture_output=True, text=True,
                    check=True).stdout.split(":", 1)[0]
                self.assertIn(owner, packages)
        for p in packages:
            status = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                                    capture_output=True, text=True).stdout
            self.assertEqual(status, "install ok installed", p)

    def test_runtime_packages_fails_on_a_non_binary(self):
        script = os.path.join(DEPLOY, "runtime-packages.sh")
        out = subprocess.run([script, script], capture_output=True)
        self.assertNotEqual(out.returncode, 0)

    def test_runtime_packages_fails_on_a_library_from_no_package(self):
        # The image would lack a library that no Debian package installs.
        script = os.path.join(DEPLOY, "runtime-packages.sh")
        ldd = subprocess.run(["ldd", KQD], capture_output=True, text=True,
                             check=True).stdout
        sqlite = re.search(r"=> (\S*/libsqlite3\.so\S*)", ldd).group(1)
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(sqlite, tmp)
            out = subprocess.run(
                [script, KQD], capture_output=True, text=True,
                env=dict(os.environ, LD_LIBRARY_PATH=tmp))
        self.assertNotEqual(out.returncode, 0)
        self.assertIn("no Debian package provides it", out.stderr)

    def test_image_matches_the_manifests(self):
        text = self.dockerfile()
        self.assertEqual(re.findall(r"(?m)^FROM (\S+)", text),
                         ["debian:12", "debian:12-slim"])
        (user,) = re.findall(r"(?m)^USER (\d+):(\d+)$", text)
        m = Manifests(KUBE_DIRS[0])
        for workload in (m.one("StatefulSet"), m.one("Deployment")):
            with self.subTest(workload=workload["metadata"]["name"]):
                ctx = workload["spec"]["template"]["spec"]["securityContext"]
                self.assertEqual(
                    (str(ctx["runAsUser"]), str(ctx["runAsGroup"])), user)
                for c in workload["spec"]["template"]["spec"]["containers"]:
                    binary = os.path.basename(c["command"][0])
                    self.assertIn(binary, re.search(r"--target ([^\\\n]+)",
                                                    text).group(1).split())
        argv = self.cmd()
        self.assertEqual(argv[0], "kqd")
        check_flags_accepted(self, KQD, argv[1:], KQD_SECURITY_FLAGS)

    def cmd(self):
        """The Dockerfile's CMD (JSON form, continuation lines joined)."""
        text = re.sub(r"\\\n\s*", " ", self.dockerfile())
        return yaml.safe_load(re.search(r"(?m)^CMD (\[.*\])$", text).group(1))

    def test_image_serves_with_tls_and_bindings_from_etc_kq(self):
        """The CMD listens on the container's interfaces, which kqd allows
        only with TLS and bindings: it reads them from /etc/kq as the
        systemd drop-in and the StatefulSet lay it out, and kqd started
        with it (kq-certs.sh's certificates, the manifests' bindings)
        answers the health service over TLS."""
        values = flag_values(self.cmd()[1:])
        self.assertFalse(values["--listen"].startswith("127."))
        self.assertNotIn("--insecure-allow-unauthenticated", values)
        drop_in = flag_values(exec_start_argv(read_unit(
            os.path.join(DEPLOY, "systemd", "kqd.service"),
            os.path.join(DEPLOY, "systemd", "kqd.service.d",
                         SECURITY_DROP_IN)))[1:])
        for flag in ("--tls-cert", "--tls-key", "--client-ca",
                     "--authz-file"):
            with self.subTest(flag=flag):
                self.assertEqual(values[flag], drop_in[flag])
        pending = missing_flags(KQD, KQD_SECURITY_FLAGS & set(values))
        if pending:
            self.fail(f"kqd has no {', '.join(sorted(pending))}")
        with tempfile.TemporaryDirectory() as tmp:
            certs = os.path.join(tmp, "certs")
            make_certs(certs)
            etc = os.path.join(tmp, "etc")
            os.makedirs(os.path.join(etc, "tls"))
            for name, source in (
                    ("tls/tls.crt", os.path.join(certs, "kqd.crt")),
                    ("tls/tls.key", os.path.join(certs, "kqd.key")),
                    ("tls/ca.crt", os.path.join(certs, "ca.crt")),
                    ("authz.yaml", os.path.join(DEPLOY, "kubernetes",
                                                "kqd-authz.yaml"))):
                shutil.copy(source, os.path.join(etc, name))
            kqd = KqdProcess(self.cmd()[1:], os.path.join(tmp, "data"),
                             paths={"/etc/kq": etc})
            try:
                response = grpc_health_check(kqd.wait_port(), (
                    os.path.join(certs, "ca.crt"),
                    os.path.join(certs, "admin.crt"),
                    os.path.join(certs, "admin.key")))
                output = kqd.output()
            finally:
                code = kqd.stop()
        self.assertEqual(code, 0, output)
        self.assertIsNotNone(response, "python3-grpcio missing")
        self.assertEqual(response, HEALTH_SERVING)


def promtool(*args, cwd=PROMETHEUS):
    """`promtool ARGS` in deploy/prometheus (rule_files are relative)."""
    path = shutil.which("promtool")
    if path is None:
        raise AssertionError("promtool not installed: run "
                             "scripts/install-deps.sh (package prometheus)")
    return subprocess.run([path, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def prometheus_files(config):
    """The files a scrape configuration reads: {(job, field): path} of
    tls_config.ca_file and authorization.credentials_file."""
    files = {}
    for job in config["scrape_configs"]:
        if "ca_file" in job.get("tls_config", {}):
            files[(job["job_name"], "ca_file")] = job["tls_config"]["ca_file"]
        if "credentials_file" in job.get("authorization", {}):
            files[(job["job_name"], "credentials_file")] = (
                job["authorization"]["credentials_file"])
    return files


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def load_yaml_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def sanitized(name):
    """A Kubernetes label or annotation name as Prometheus's meta label
    suffix: every character outside [a-zA-Z0-9_] becomes _."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def relabel(labels, configs):
    """Prometheus's relabelling of one target (the keep and replace actions
    deploy/prometheus uses): the labels after it, or None when dropped."""
    labels = dict(labels)
    for c in configs:
        action = c.get("action", "replace")
        value = c.get("separator", ";").join(
            labels.get(name, "") for name in c.get("source_labels", []))
        match = re.fullmatch(c.get("regex", "(.*)"), value)
        if action == "keep":
            if match is None:
                return None
        elif action == "replace":
            if match is not None:
                labels[c["target_label"]] = re.sub(
                    r"\$(\d+)", lambda g: match.group(int(g.group(1))) or "",
                    c.get("replacement", "$1"))
        else:
            raise AssertionError(f"relabel action {action} not simulated")
    return labels


def pod_targets(workload, pod_ip):
    """The targets Kubernetes pod discovery makes for one pod of
    `workload`: one per declared container port, with its meta labels."""
    template = workload["spec"]["template"]
    meta = {"__meta_kubernetes_namespace": workload["metadata"]["namespace"],
            "__meta_kubernetes_pod_name": workload["metadata"]["name"] + "-0"}
    for key, value in template["metadata"].get("labels", {}).items():
        meta["__meta_kubernetes_pod_label_" + sanitized(key)] = value
    for key, value in template["metadata"].get("annotations", {}).items():
        meta["__meta_kubernetes_pod_annotation_" + sanitized(key)] = value
    targets = []
    for c in template["spec"]["containers"]:
        for p in c.get("ports", []):
            targets.append(dict(meta, __address__=f"{pod_ip}:"
                                f"{p['containerPort']}"))
    return targets


def scraped(targets, configs, job_name):
    """The distinct targets left after relabelling, as Prometheus keeps
    them: job (the job_name unless relabelled), address, path."""
    out = set()
    for target in targets:
        labels = relabel(dict({"job": job_name, "__metrics_path__":
                               "/metrics"}, **target), configs)
        if labels is not None:
            out.add((labels["job"], labels["__address__"],
                     labels["__metrics_path__"]))
    return out


def rule_metric_names(expr):
    """The metric names an expression selects (recorded names, which have
    a colon, excepted)."""
    # Label matchers, grouping labels, strings and durations are not names.
    text = re.sub(r"\{[^}]*\}", "", expr)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*"
                  r"\([^)]*\)", "", text)
    text = re.sub(r'"[^"]*"', "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    words = set(re.findall(r"[a-zA-Z_:][a-zA-Z0-9_:]*", text))
    keywords = {"sum", "by", "rate", "increase", "histogram_quantile",
                "absent", "and", "unless", "on", "or", "ignoring"}
    return {w for w in words - keywords if ":" not in w}


class PrometheusTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.rules = load_yaml(os.path.join(PROMETHEUS, "kq-rules.yml"))
        cls.alerts = [r for g in cls.rules["groups"] for r in g["rules"]
                      if "alert" in r]

    def test_promtool_checks_the_config_and_its_rules(self):
        # promtool also reads the CA and the token: a copy of the config
        # names a CA and a token that exist here.
        with open(os.path.join(PROMETHEUS, "prometheus.yml")) as f:
            text = f.read()
        config = yaml.safe_load(text)
        with tempfile.TemporaryDirectory() as tmp:
            certs = os.path.join(tmp, "certs")
            make_certs(certs)
            local = {"ca_file": os.path.join(certs, "ca.crt"),
                     "credentials_file": os.path.join(certs,
                                                      "prometheus.token")}
            for (_, field), path in prometheus_files(config).items():
                text = text.replace(path, local[field])
            with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
                f.write(text)
            for rules in config["rule_files"]:
                shutil.copy(os.path.join(PROMETHEUS, rules), tmp)
            out = promtool("check", "config", "prometheus.yml", cwd=tmp)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("kq-rules.yml", out.stdout + out.stderr)

    def test_kqd_is_scraped_in_https_with_a_metrics_readers_token(self):
        """kqd's jobs check its certificate against kq's CA and send a
        bearer token, in both configs; the shim's health port is plain
        HTTP, and gets no token."""
        authz = load_yaml_all(os.path.join(DEPLOY, "kubernetes",
                                           "kqd-authz.yaml"))
        readers = {who for _, _, role, subjects in bindings(authz)
                   if role == "kueue-metrics-reader" for who in subjects}
        kqd_names = set()
        for name in ("prometheus.yml", "prometheus-kubernetes.yml"):
            with self.subTest(config=name):
                config = load_yaml(os.path.join(PROMETHEUS, name))
                jobs = {j["job_name"]: j for j in config["scrape_configs"]}
                kqd = jobs["kqd"]
                self.assertEqual(kqd["scheme"], "https")
                self.assertNotIn("insecure_skip_verify", kqd["tls_config"])
                self.assertTrue(kqd["tls_config"]["ca_file"])
                self.assertTrue(kqd["authorization"]["credentials_file"])
                self.assertNotIn("type", kqd["authorization"])  # Bearer
                # The CA and the token come from one place (a directory, or
                # one Secret mounted in Prometheus's pod).
                self.assertEqual(
                    os.path.dirname(kqd["tls_config"]["ca_file"]),
                    os.path.dirname(kqd["authorization"]["credentials_file"]))
                if "server_name" in kqd["tls_config"]:
                    kqd_names.add(kqd["tls_config"]["server_name"])
                shim = jobs["kq-k8s-shim"]
                self.assertEqual(shim.get("scheme", "http"), "http")
                self.assertEqual(set(shim) & {"tls_config", "authorization",
                                              "basic_auth"}, set())
        # The token kq-certs.sh makes is for the user bound to
        # kueue-metrics-reader.
        self.assertEqual(readers, {("User", "prometheus")})
        # The pods are scraped at their IP: the certificate is checked for
        # the Service's name, which kq-certs.sh's certificate holds.
        self.assertEqual(kqd_names, {"kqd.kq-system.svc"})
        with tempfile.TemporaryDirectory() as tmp:
            make_certs(tmp)
            san = cert_fields(os.path.join(tmp, "kqd.crt"))["san"]
        self.assertIn("DNS:kqd.kq-system.svc", san)

    def test_promtool_checks_the_kubernetes_config(self):
        out = promtool("check", "config", "prometheus-kubernetes.yml")
        if "field kubernetes_sd_configs not found" in out.stdout + out.stderr:
            # Debian's prometheus package leaves Kubernetes discovery out;
            # test_kubernetes_scrape_config_finds_kqd_and_the_shim still
            # checks the file against the manifests.
            self.skipTest("this promtool has no Kubernetes service discovery")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_promtool_checks_the_rules(self):
        out = promtool("check", "rules", "kq-rules.yml")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_rule_unit_tests_pass(self):
        out = promtool("test", "rules", "kq-rules.test.yml")
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)

    def test_unit_tests_cover_firing_and_silence(self):
        tests = load_yaml(os.path.join(PROMETHEUS, "kq-rules.test.yml"))
        firing, silent = set(), set()
        for group in tests["tests"]:
            for case in group.get("alert_rule_test", []):
                (firing if case["exp_alerts"] else silent).add(
                    case["alertname"])
        self.assertGreaterEqual(len(firing), 2, firing)
        self.assertTrue(silent, "no test shows an alert staying silent")
        self.assertLessEqual(firing | silent,
                             {a["alert"] for a in self.alerts})

    def test_every_alert_has_severity_summary_and_description(self):
        for alert in self.alerts:
            with self.subTest(alert=alert["alert"]):
                self.assertIn(alert["labels"]["severity"], ALERT_SEVERITIES)
                self.assertTrue(alert["annotations"]["summary"].strip())
                self.assertTrue(alert["annotations"]["description"].strip())
                self.assertIn("for", alert)

    def test_the_core_alerts_exist(self):
        names = {a["alert"] for a in self.alerts}
        self.assertLessEqual(
            {"KqdDown", "KqAdmissionWaitTooLong", "KqClusterQueueNotAdmitting",
             "KqClusterQueueInactive", "KqGrpcErrorRatioHigh"}, names)

    def test_rules_use_only_metrics_kqd_exports(self):
        known = PROMETHEUS_SERIES | KQD_METRICS
        for name in KQD_HISTOGRAMS:
            known |= {name + suffix for suffix in HISTOGRAM_SUFFIXES}
        recorded = {r["record"] for g in self.rules["groups"]
                    for r in g["rules"] if "record" in r}
        for group in self.rules["groups"]:
            for rule in group["rules"]:
                name = rule.get("record") or rule.get("alert")
                with self.subTest(rule=name):
                    self.assertEqual(rule_metric_names(rule["expr"]) - known,
                                     set())
                    for used in re.findall(r"[a-z_]+:[a-z_:0-9]+",
                                           rule["expr"]):
                        self.assertIn(used, recorded)

    def test_kubernetes_scrape_config_finds_kqd_and_the_shim(self):
        m = Manifests(KUBE_DIRS[0])
        kqd = m.one("StatefulSet", "kqd")
        shim = m.one("Deployment", "kq-k8s-shim")
        http_port = flag_values(container(kqd, "kqd")["args"])[
            "--http-listen"].rsplit(":", 1)[1]
        health_port = flag_values(container(shim, "kq-k8s-shim")["args"])[
            "--health-port"]
        config = load_yaml(os.path.join(PROMETHEUS,
                                        "prometheus-kubernetes.yml"))
        jobs = config["scrape_configs"]
        self.assertEqual({j["job_name"] for j in jobs},
                         {"kqd", "kq-k8s-shim"})
        for job in jobs:
            self.assertEqual(
                job["kubernetes_sd_configs"],
                [{"role": "pod", "namespaces": {"names": [NAMESPACE]}}])

        def all_scraped(workload, pod_ip):
            found = set()
            for job in jobs:
                found |= scraped(pod_targets(workload, pod_ip),
                                 job["relabel_configs"], job["job_name"])
            return found

        # Each pod is scraped once, by its own job.
        self.assertEqual(all_scraped(kqd, "10.1.2.3"),
                         {("kqd", f"10.1.2.3:{http_port}", "/metrics")})
        self.assertEqual(all_scraped(shim, "10.1.2.4"),
                         {("kq-k8s-shim", f"10.1.2.4:{health_port}",
                           "/metrics")})
        # The kqd job's scheme is the one kqd's annotation names.
        (kqd_job,) = [j for j in jobs if j["job_name"] == "kqd"]
        self.assertEqual(kqd_job["scheme"], kqd["spec"]["template"][
            "metadata"]["annotations"]["prometheus.io/scheme"])
        # A pod that does not ask is left alone.
        quiet = json.loads(json.dumps(kqd))
        del quiet["spec"]["template"]["metadata"]["annotations"]
        self.assertEqual(all_scraped(quiet, "10.1.2.5"), set())

    def test_static_config_scrapes_the_default_ports_under_the_alerts_jobs(self):
        config = load_yaml(os.path.join(PROMETHEUS, "prometheus.yml"))
        jobs = {j["job_name"]: j for j in config["scrape_configs"]}
        self.assertEqual(set(jobs), {"kqd", "kq-k8s-shim"})
        for name, job in jobs.items():
            self.assertEqual(job.get("metrics_path", "/metrics"), "/metrics")
        (kqd_target,) = jobs["kqd"]["static_configs"][0]["targets"]
        (shim_target,) = jobs["kq-k8s-shim"]["static_configs"][0]["targets"]
        shim_unit = exec_start_argv(read_unit(
            os.path.join(DEPLOY, "systemd", "kq-k8s-shim.service")))
        self.assertEqual(shim_target, "127.0.0.1:" + flag_values(
            shim_unit[1:])["--health-port"])
        # Every job an alert names is scraped.
        for alert in self.alerts:
            for job_name in re.findall(r'job="([^"]+)"', alert["expr"]):
                self.assertIn(job_name, jobs)
        # kqd.service leaves --http-listen at kqd's default, which the
        # static target must be.
        kqd_unit = exec_start_argv(read_unit(
            os.path.join(DEPLOY, "systemd", "kqd.service")))
        self.assertNotIn("--http-listen", flag_values(kqd_unit[1:]))
        out = subprocess.run([KQD, "--help"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
        self.assertRegex(out, r"--http-listen[^\n]*" + re.escape(kqd_target))


README = os.path.join(DEPLOY, "..", "README.md")
TEAMS_SECTION = "Running kqd for several teams"
EXAMPLES = os.path.join(DEPLOY, "examples")


def readme_section(title):
    """The text of README.md's section `## title`."""
    with open(README) as f:
        text = f.read()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def code_blocks(text, language):
    return re.findall(rf"(?ms)^```{language}\n(.*?)^```", text)


def commands_and_outputs(block):
    """[(argv, [expected output lines])] of a README shell block: a command
    (continuations joined, a trailing comment dropped) and the "# " lines
    under it, which show what it prints ("..." where lines are left out)."""
    steps = []
    pending = ""
    for line in block.splitlines():
        if pending or not line.startswith("#"):
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            steps.append((shlex.split(pending + line, comments=True), []))
            pending = ""
        elif steps:
            steps[-1][1].append(line[2:])
    return steps


def check_output(case, got, want):
    """Every shown line is printed, in order; "..." stands for others."""
    lines = got.splitlines()
    if "..." not in want:
        case.assertEqual(lines, want)
        return
    at = 0
    for line in want:
        if line == "...":
            continue
        case.assertIn(line, lines[at:], f"not printed: {line}\n{got}")
        at = lines.index(line, at) + 1


def run_openssl_block(home):
    """Runs the section's first sh block, the certificates, in a shell with
    HOME=home. Returns the directory it made them in."""
    (block,) = [b for b in code_blocks(readme_section(TEAMS_SECTION), "sh")
                if "openssl req" in b]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block],
                          cwd=home, env=dict(os.environ, HOME=home),
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"README's openssl commands:\n{done.stderr}")
    return os.path.join(home, "kq-pki")


class TeamsTest(unittest.TestCase):
    """README.md's "Running kqd for several teams" and deploy/examples."""

    @classmethod
    def setUpClass(cls):
        cls.section = readme_section(TEAMS_SECTION)
        cls.authz = load_yaml_all(os.path.join(EXAMPLES,
                                               "two-teams-authz.yaml"))
        cls.kq = os.path.join(os.path.dirname(KQD), "kq")

    def test_set_up_is_still_two_commands(self):
        (block,) = code_blocks(readme_section("Quick start (Debian 12, as "
                                              "root)"), "sh")
        commands = [argv for argv, _ in commands_and_outputs(block)]
        self.assertEqual(commands, [["make", "run"], ["make", "test"]])
        with open(README) as f:
            headings = re.findall(r"(?m)^## (.*)$", f.read())
        self.assertGreater(headings.index(TEAMS_SECTION),
                           headings.index("Deploying"))

    def test_readme_openssl_commands_make_the_certificates(self):
        with tempfile.TemporaryDirectory() as home:
            pki = run_openssl_block(home)
            ca = os.path.join(pki, "ca.crt")
            fields = {}
            for name in ("kqd", "alice", "bob", "admin"):
                with self.subTest(cert=name):
                    ok, why = openssl_verify(ca, os.path.join(pki,
                                                              name + ".crt"))
                    self.assertTrue(ok, why)
                    fields[name] = cert_fields(os.path.join(pki,
                                                            name + ".crt"))
                    text = subprocess.run(
                        ["openssl", "x509", "-in",
                         os.path.join(pki, name + ".crt"), "-noout", "-ext",
                         "basicConstraints"], capture_output=True,
                        text=True, check=True).stdout
                    self.assertIn("CA:FALSE", text)
        kqd = fields["kqd"]
        self.assertEqual(kqd["eku"], {SERVER_AUTH})
        self.assertEqual(kqd["san"], {"DNS:kq.example.com", "DNS:localhost",
                                      "IP:127.0.0.1"})
        # The people: CN the user, O the group the bindings name.
        groups = {who for _, _, _, subjects in bindings(self.authz)
                  for who in subjects}
        for name, group in (("alice", "team-a"), ("bob", "team-b"),
                            ("admin", "admins")):
            with self.subTest(person=name):
                self.assertEqual(fields[name]["subject"],
                                 {"CN": [name], "O": [group]})
                self.assertEqual(fields[name]["eku"], {CLIENT_AUTH})
                self.assertIn(("Group", group), groups)

    def test_example_bindings_give_each_team_its_namespace(self):
        check_bindings(self, self.authz)
        got = sorted(bindings(self.authz), key=lambda b: (b[0], b[1] or "",
                                                          b[2]))
        self.assertEqual(got, sorted([
            ("ClusterRoleBinding", None, "kueue-batch-admin-role",
             {("Group", "admins")}),
            ("ClusterRoleBinding", None, "kueue-metrics-reader",
             {("User", "prometheus")}),
            ("ClusterRoleBinding", None, "kq-shim-role",
             {("User", "kq-k8s-shim")}),
            ("RoleBinding", "team-a", "kueue-batch-user-role",
             {("Group", "team-a")}),
            ("RoleBinding", "team-b", "kueue-batch-user-role",
             {("Group", "team-b")}),
            ("RoleBinding", "team-a", "kq-runner-role",
             {("User", "runner-a")}),
        ], key=lambda b: (b[0], b[1] or "", b[2])))
        # The README shows team a's binding as it is in the file.
        (shown,) = [yaml.safe_load(b)
                    for b in code_blocks(self.section, "yaml")]
        self.assertIn(shown, self.authz)

    def test_example_tokens_are_hashes_for_bound_users(self):
        with open(os.path.join(EXAMPLES, "two-teams-tokens")) as f:
            lines = [line.rstrip("\n") for line in f]
        entries = [line for line in lines if line and not line.startswith("#")]
        self.assertTrue(entries)
        subjects = {who for _, _, _, who_set in bindings(self.authz)
                    for who in who_set}
        for line in entries:
            with self.subTest(line=line):
                m = re.fullmatch(r"sha256:([0-9a-f]{64}) (\S+)(?: (\S+))?",
                                 line)
                self.assertIsNotNone(m)
                user, groups = m.group(2), (m.group(3) or "").split(",")
                self.assertTrue(
                    ("User", user) in subjects or
                    any(("Group", g) in subjects for g in groups if g),
                    f"{user} is bound to nothing")
        # The command the file and the README give makes such a line.
        (block,) = [b for b in code_blocks(self.section, "sh")
                    if "sha256sum" in b]
        with tempfile.TemporaryDirectory() as tmp:
            script = "\n".join(line for line in block.splitlines()
                               if not line.startswith("curl"))
            subprocess.run(["bash", "-euo", "pipefail", "-c",
                            script + '\nprintf %s "$TOKEN" > token'],
                           cwd=tmp, check=True)
            with open(os.path.join(tmp, "tokens")) as f:
                (line,) = f.read().splitlines()
            with open(os.path.join(tmp, "token")) as f:
                token = f.read()
        self.assertEqual(
            line, f"sha256:{hashlib.sha256(token.encode()).hexdigest()} "
            "prometheus")

    def test_readme_names_files_that_exist(self):
        root = os.path.join(DEPLOY, "..")
        for path in set(re.findall(r"`(deploy/[^`\s]+)`", self.section)):
            with self.subTest(path=path):
                self.assertTrue(os.path.exists(os.path.join(root, path)))

    def queue_steps(self):
        """The README's commands of the admin's apply and alice's submit."""
        (block,) = [b for b in code_blocks(self.section, "sh")
                    if "kq apply" in b]
        steps = commands_and_outputs(block)
        self.assertEqual([argv[:2] for argv, _ in steps],
                         [["kq", "apply"], ["kq", "submit"]])
        return steps

    def test_queues_apply_and_alice_submits_as_shown(self):
        """The README's apply and submit, and what it shows them print,
        against a kqd without authorization (the commands are the same)."""
        with tempfile.TemporaryDirectory() as tmp:
            kqd = KqdProcess(["--data-dir=data"], os.path.join(tmp, "data"))
            try:
                env = dict(os.environ, KQ_SERVER=f"127.0.0.1:"
                           f"{kqd.wait_port()}")
                for argv, want in self.queue_steps():
                    with self.subTest(command=argv[:2]):
                        done = subprocess.run(
                            [self.kq, *argv[1:]], cwd=os.path.join(DEPLOY,
                                                                   ".."),
                            env=env, capture_output=True, text=True,
                            timeout=60)
                        self.assertEqual(done.returncode, 0, done.stderr)
                        self.assertEqual(done.stderr, "")
                        check_output(self, done.stdout, want)
            finally:
                kqd.stop()

    def test_kqd_refuses_bob_alices_workload_as_shown(self):
        """The section's kqd, bindings and certificates against the real
        kqd, through the generated stubs (kq.v1, the Python client's), so
        that kq's own TLS is not needed: the queues and alice's workload
        are made by the README's commands on a kqd without authorization,
        then kqd restarts on the same database with the README's flags.
        Bob's cancel is refused with the README's message, alice's goes
        through, a caller with no certificate is UNAUTHENTICATED, and the
        audit log records the refusal."""
        pending = missing_flags(KQD, {"--tls-cert", "--tls-key",
                                      "--client-ca", "--authz-file",
                                      "--token-file", "--audit-log"})
        if pending:
            self.fail(f"kqd has no {', '.join(sorted(pending))}")
        try:
            import grpc  # pylint: disable=import-outside-toplevel
            from kq.v1 import (  # pylint: disable=import-outside-toplevel
                queue_service_pb2, queue_service_pb2_grpc)
        except ImportError as e:
            self.skipTest(f"no generated kq.v1 Python modules: {e}")
        (start,) = [b for b in code_blocks(self.section, "sh")
                    if "build/bin/kqd" in b]
        ((kqd_argv, _),) = commands_and_outputs(start)
        (cancel,) = [b for b in code_blocks(self.section, "sh")
                     if "kq cancel" in b]
        ((cancel_argv, (cancel_out,)),) = commands_and_outputs(cancel)
        self.assertEqual(cancel_argv[:2], ["kq", "cancel"])
        name, namespace = cancel_argv[2], cancel_argv[4]
        with tempfile.TemporaryDirectory() as home:
            pki = run_openssl_block(home)
            data = os.path.join(home, "data")
            plain = KqdProcess(["--data-dir=data"], data)
            try:
                env = dict(os.environ,
                           KQ_SERVER=f"127.0.0.1:{plain.wait_port()}")
                for argv, _ in self.queue_steps():
                    subprocess.run([self.kq, *argv[1:]], env=env,
                                   cwd=os.path.join(DEPLOY, ".."),
                                   check=True, capture_output=True,
                                   timeout=60)
            finally:
                plain.stop()
            args = [a.replace("$HOME", home)
                    .replace("deploy/examples/", EXAMPLES + "/")
                    for a in kqd_argv[1:]]
            args.append("--token-file=" + os.path.join(EXAMPLES,
                                                       "two-teams-tokens"))
            audit = os.path.join(home, "audit.log")
            kqd = KqdProcess(args, data, paths={"./audit.log": audit})

            def read(name):
                with open(os.path.join(pki, name), "rb") as f:
                    return f.read()

            def cancel_as(person):
                if person is None:
                    credentials = grpc.ssl_channel_credentials(
                        read("ca.crt"))
                else:
                    credentials = grpc.ssl_channel_credentials(
                        read("ca.crt"), read(person + ".key"),
                        read(person + ".crt"))
                with grpc.secure_channel(f"127.0.0.1:{port}",
                                         credentials) as channel:
                    stub = queue_service_pb2_grpc.QueueServiceStub(channel)
                    try:
                        stub.CancelWorkload(
                            queue_service_pb2.CancelWorkloadRequest(
                                namespace=namespace, name=name), timeout=30)
                        return grpc.StatusCode.OK, ""
                    except grpc.RpcError as e:
                        return e.code(), e.details()

            try:
                port = kqd.wait_port()
                nobody = cancel_as(None)
                bob = cancel_as("bob")
                alice = cancel_as("alice")
                output = kqd.output()
            finally:
                kqd.stop()
            with open(audit) as f:
                events = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(nobody[0], grpc.StatusCode.UNAUTHENTICATED, nobody)
        self.assertEqual(f"kq: {bob[0].name}: {bob[1]}", cancel_out)
        self.assertEqual(alice, (grpc.StatusCode.OK, ""), output)
        refused = [e for e in events if e.get("annotations", {}).get(
            "authorization.k8s.io/decision") == "forbid"]
        self.assertIn(("bob", bob[1]),
                      [(e["user"].get("username"),
                        e["responseStatus"].get("message"))
                       for e in refused])

    def test_two_teams_end_to_end(self):
        """The whole section against a kqd with TLS and the example
        bindings: the README's certificates, a context per person, the
        admin's apply, alice's submit and bob's refusal, word for word."""
        pending = missing_flags(KQD, {"--tls-cert", "--tls-key",
                                      "--client-ca", "--authz-file",
                                      "--token-file", "--audit-log"})
        if pending:
            self.fail(f"kqd has no {', '.join(sorted(pending))}")
        usage = subprocess.run([self.kq, "--help"], capture_output=True,
                               text=True, timeout=30).stdout
        if not re.search(r"(?m)^\s+config\s", usage):
            self.fail("kq has no `config set-context`")
        (start,) = [b for b in code_blocks(self.section, "sh")
                    if "build/bin/kqd" in b]
        ((kqd_argv, _),) = commands_and_outputs(start)
        (contexts,) = [b for b in code_blocks(self.section, "sh")
                       if "set-context" in b]
        (cancel,) = [b for b in code_blocks(self.section, "sh")
                     if "kq cancel" in b]
        ((cancel_argv, cancel_out),) = commands_and_outputs(cancel)
        with tempfile.TemporaryDirectory() as home:
            run_openssl_block(home)
            args = [a.replace("$HOME", home) for a in kqd_argv[1:]]
            args = [a.replace("deploy/examples/", EXAMPLES + "/")
                    for a in args]
            args.append("--token-file=" + os.path.join(EXAMPLES,
                                                       "two-teams-tokens"))
            kqd = KqdProcess(args, os.path.join(home, "data"),
                             paths={"./audit.log": os.path.join(
                                 home, "audit.log")})
            env = {k: v for k, v in os.environ.items()
                   if k not in ("KQ_SERVER", "XDG_CONFIG_HOME")}
            env["HOME"] = home

            def kq(*argv):
                return subprocess.run([self.kq, *argv],
                                      cwd=os.path.join(DEPLOY, ".."),
                                      env=env, capture_output=True,
                                      text=True, timeout=60)

            try:
                server = f"127.0.0.1:{kqd.wait_port()}"
                # The README's set-context, for each person, at this kqd.
                ((set_argv, _), (use_argv, _)) = commands_and_outputs(
                    contexts)
                for person in ("admin", "alice", "bob"):
                    argv = [a.replace("alice", person)
                            .replace("kq.example.com:7070", server)
                            .replace("$HOME", home) for a in set_argv]
                    done = kq(*argv[1:])
                    self.assertEqual(done.returncode, 0, done.stderr)

                def as_person(person, argv):
                    done = kq("config", "use-context", person)
                    self.assertEqual(done.returncode, 0, done.stderr)
                    return kq(*argv[1:])

                (apply_step, submit_step) = self.queue_steps()
                done = as_person("admin", apply_step[0])
                self.assertEqual(done.returncode, 0, done.stderr)
                check_output(self, done.stdout, apply_step[1])
                done = as_person("alice", submit_step[0])
                self.assertEqual(done.returncode, 0, done.stderr)
                check_output(self, done.stdout, submit_step[1])
                done = as_person("bob", cancel_argv)
                self.assertEqual(done.returncode, 1)
                self.assertEqual(done.stderr.splitlines(), cancel_out)
                # Bob's own namespace is his.
                done = as_person("bob", ["kq", "get", "workloads", "-n",
                                         "team-b"])
                self.assertEqual(done.returncode, 0, done.stderr)
                output = kqd.output()
            finally:
                kqd.stop()
            with open(os.path.join(home, "audit.log")) as f:
                audit = [json.loads(line) for line in f if line.strip()]
            self.assertGreaterEqual(len(audit), 4, output)


if __name__ == "__main__":
    unittest.main(verbosity=2)
