"""The fixture of security_test.py: a test PKI made with openssl, kqd's
token and RBAC files, kqd itself as a child process, and callers that
reach it over TLS with a client certificate, a bearer token or neither.

Nothing here uses the kq Python client: calls go through the generated
stubs (kq.v1.*_pb2_grpc) on channels built with grpc.ssl_channel_credentials,
so the suite tests kqd's wire contract (logs/security-contract.md), not a
client's rendering of it.
"""

import hashlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import grpc

from kq.v1 import (admin_service_pb2, admin_service_pb2_grpc, objects_pb2,
                   queue_service_pb2, queue_service_pb2_grpc, workload_pb2)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

# Set by security_test.py from its command line: the directory holding kqd.
BIN = ""

# Positive conditions are polled this long; the 2-core CI machine is
# shared, so it is generous. Contractual deadlines (a reload within 5 s)
# are asserted with their own, shorter, numbers.
DEADLINE = 20.0

CALL_TIMEOUT = 10.0

UNAUTHENTICATED_MISSING = ("kq: request could not be authenticated: no "
                           "verified client certificate and no bearer token")
UNAUTHENTICATED_UNKNOWN_TOKEN = ("kq: request could not be authenticated: "
                                 "bearer token not recognized")

TOKENS = {
    "tok-alice": ("alice", ["team-a"]),
    "tok-prom": ("prom", []),
}


def eventually(predicate, timeout=DEADLINE, interval=0.05):
    """Polls until predicate() is truthy; returns its value, or the last
    (falsy) value after `timeout` seconds."""
    give_up = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > give_up:
            return value
        time.sleep(interval)


def write_atomically(path, text):
    """Writes `text` to a sibling temporary file and renames it over
    `path`: a reader sees the old file or the new one, never half."""
    tmp = f"{path}.tmp-{secrets.token_hex(4)}"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run(argv, cwd=None):
    result = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {result.stderr}")
    return result.stdout


# ---- PKI ---------------------------------------------------------------------


class Cert:
    """A PEM certificate and its key on disk."""

    def __init__(self, crt, key):
        self.crt = crt
        self.key = key

    def pem(self):
        with open(self.crt, "rb") as f:
            chain = f.read()
        with open(self.key, "rb") as f:
            key = f.read()
        return key, chain

    def serial(self):
        """The serial number as an int."""
        text = run(["openssl", "x509", "-in", self.crt, "-noout", "-serial"])
        return int(text.strip().split("=", 1)[1], 16)

    def not_after(self):
        """notAfter as seconds since the epoch."""
        text = run(["openssl", "x509", "-in", self.crt, "-noout", "-enddate"])
        return int(ssl.cert_time_to_seconds(text.strip().split("=", 1)[1]))


class Pki:
    """Certificate authorities and leaves in one directory, made with the
    system's openssl (3.0 on Debian 12)."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)

    def _path(self, name, suffix):
        return os.path.join(self.dir, f"{name}.{suffix}")

    def ca(self, name, cn):
        """A self-signed EC P-256 CA (basicConstraints CA:TRUE)."""
        cert = Cert(self._path(name, "crt"), self._path(name, "key"))
        run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
             "-subj", f"/CN={cn}", "-keyout", cert.key, "-out", cert.crt])
        return cert

    def leaf(self, name, subject, ca, server=False, days=1, out_dir=None):
        """A certificate for `subject` ("/CN=alice/O=team-a") signed by
        `ca`, with a fresh key and a random serial: a client certificate
        (extendedKeyUsage clientAuth), or with `server` a serving one for
        localhost and 127.0.0.1."""
        out_dir = out_dir or self.dir
        cert = Cert(os.path.join(out_dir, f"{name}.crt"),
                    os.path.join(out_dir, f"{name}.key"))
        csr = os.path.join(self.dir, f"{name}-{secrets.token_hex(4)}.csr")
        ext = csr + ".ext"
        with open(ext, "w") as f:
            f.write("basicConstraints = critical, CA:FALSE\n"
                    "keyUsage = critical, digitalSignature\n")
            if server:
                f.write("extendedKeyUsage = serverAuth\n"
                        "subjectAltName = DNS:localhost, IP:127.0.0.1\n")
            else:
                f.write("extendedKeyUsage = clientAuth\n")
        run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:P-256", "-nodes", "-subj", subject,
             "-keyout", cert.key, "-out", csr])
        run(["openssl", "x509", "-req", "-in", csr, "-CA", ca.crt,
             "-CAkey", ca.key, "-days", str(days), "-set_serial",
             "0x" + secrets.token_hex(8), "-extfile", ext, "-out", cert.crt])
        return cert

    def expired_leaf(self, name, subject, ca):
        """A client certificate that was valid on 2020-01-01 only: `openssl
        ca` is the one OpenSSL 3.0 command that takes explicit dates."""
        db = os.path.join(self.dir, f"ca-db-{name}")
        os.makedirs(db)
        open(os.path.join(db, "index.txt"), "w").close()
        with open(os.path.join(db, "serial"), "w") as f:
            f.write(secrets.token_hex(8) + "\n")
        config = os.path.join(db, "ca.cnf")
        with open(config, "w") as f:
            f.write(f"""[ca]
default_ca = test
[test]
database = {db}/index.txt
new_certs_dir = {db}
serial = {db}/serial
default_md = sha256
policy = any
unique_subject = no
x509_extensions = client
[any]
commonName = supplied
organizationName = optional
[client]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth
""")
        cert = Cert(self._path(name, "crt"), self._path(name, "key"))
        csr = os.path.join(db, "req.csr")
        run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:P-256", "-nodes", "-subj", subject,
             "-keyout", cert.key, "-out", csr])
        run(["openssl", "ca", "-batch", "-config", config, "-cert", ca.crt,
             "-keyfile", ca.key, "-in", csr, "-out", cert.crt, "-notext",
             "-startdate", "20200101000000Z", "-enddate", "20200102000000Z"])
        return cert


# ---- kqd's policy files -------------------------------------------------------


def token_line(token, user, groups):
    digest = hashlib.sha256(token.encode()).hexdigest()
    return f"sha256:{digest} {user} {','.join(groups)}".rstrip() + "\n"


def token_file_text(tokens=None):
    lines = ["# kq test tokens: sha256 of the token, user, groups\n", "\n"]
    for token, (user, groups) in (tokens or TOKENS).items():
        lines.append(token_line(token, user, groups))
    return "".join(lines)


def binding(kind, name, role, subjects, namespace=None):
    """One RoleBinding or ClusterRoleBinding document; `subjects` are
    (kind, name) pairs."""
    meta = f"  name: {name}\n"
    if namespace:
        meta += f"  namespace: {namespace}\n"
    subs = "".join(f"- kind: {k}\n  name: {n}\n"
                   "  apiGroup: rbac.authorization.k8s.io\n"
                   for k, n in subjects)
    return ("apiVersion: rbac.authorization.k8s.io/v1\n"
            f"kind: {kind}\nmetadata:\n{meta}subjects:\n{subs}"
            "roleRef:\n  kind: ClusterRole\n"
            f"  name: {role}\n  apiGroup: rbac.authorization.k8s.io\n")


# ops-security.md section 6, plus Prometheus' ClusterRoleBinding.
STANDARD_BINDINGS = [
    binding("ClusterRoleBinding", "admins", "kueue-batch-admin-role",
            [("Group", "admins")]),
    binding("RoleBinding", "team-a-users", "kueue-batch-user-role",
            [("Group", "team-a")], namespace="team-a"),
    binding("RoleBinding", "team-b-users", "kueue-batch-user-role",
            [("Group", "team-b")], namespace="team-b"),
    binding("RoleBinding", "viewers", "kueue-workload-viewer-role",
            [("User", "vic")], namespace="team-a"),
    binding("RoleBinding", "runners", "kq-runner-role",
            [("User", "runner-a")], namespace="team-a"),
    binding("ClusterRoleBinding", "prometheus", "kueue-metrics-reader",
            [("User", "prom")]),
    binding("ClusterRoleBinding", "shim", "kq-shim-role",
            [("User", "kq-shim")]),
]

# The two manifests of Kueue's RBAC page (site/content/en/docs/tasks/manage/
# rbac.md), verbatim: both are named read-pods there.
KUEUE_BATCH_ADMIN_ROLE_BINDING = """\
# batch-admin-role-binding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: read-pods
subjects:
- kind: User
  name: admin@example.com
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: kueue-batch-admin-role
  apiGroup: rbac.authorization.k8s.io
"""

KUEUE_TEAM_A_BATCH_USER_ROLE_BINDING = """\
# team-a-batch-user-role-binding.yaml
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read-pods
  namespace: team-a
subjects:
- kind: Group
  name: team-a@example.com
  apiGroup: rbac.authorization.k8s.io
roleRef:
  kind: ClusterRole
  name: kueue-batch-user-role
  apiGroup: rbac.authorization.k8s.io
"""


def authz_file_text(documents):
    return "---\n".join(documents)


# ---- Protos --------------------------------------------------------------------


def workload(namespace, name, cpu="100m", queue="lq"):
    wl = workload_pb2.Workload()
    wl.metadata.namespace = namespace
    wl.metadata.name = name
    wl.spec.queue_name = queue
    ps = wl.spec.pod_sets.add()
    ps.name = "main"
    ps.count = 1
    ps.requests["cpu"] = str(cpu)
    return wl


def resource_flavor(name):
    obj = objects_pb2.ConfigObject()
    obj.resource_flavor.metadata.name = name
    return obj


def cluster_queue(name, cpu, flavor="default"):
    obj = objects_pb2.ConfigObject()
    cq = obj.cluster_queue
    cq.metadata.name = name
    group = cq.spec.resource_groups.add()
    group.covered_resources.append("cpu")
    fq = group.flavors.add()
    fq.name = flavor
    fq.resources.add(name="cpu", nominal_quota=str(cpu))
    cq.spec.namespace_selector.SetInParent()
    return obj


def local_queue(namespace, name, cq):
    obj = objects_pb2.ConfigObject()
    obj.local_queue.metadata.namespace = namespace
    obj.local_queue.metadata.name = name
    obj.local_queue.spec.cluster_queue = cq
    return obj


def condition_true(wl, type_):
    return any(c.type == type_ and c.status == "True"
               for c in wl.status.conditions)


def condition_reason(wl, type_):
    for c in wl.status.conditions:
        if c.type == type_ and c.status == "True":
            return c.reason
    return None


def duration(seconds):
    from google.protobuf import duration_pb2
    d = duration_pb2.Duration()
    d.FromSeconds(seconds)
    return d


# ---- Callers -------------------------------------------------------------------


class Outcome:
    """What one call returned: the status code, its message, the response
    (on OK) and the kq-audit-id trailing metadata."""

    def __init__(self, code, details, response, trailing):
        self.code = code
        self.details = details
        self.response = response
        self.trailing = dict(trailing or ())
        self.audit_id = self.trailing.get("kq-audit-id")

    @property
    def ok(self):
        return self.code == grpc.StatusCode.OK

    def __repr__(self):
        return f"Outcome({self.code.name}: {self.details!r})"


class Caller:
    """One identity on one channel of its own: a client certificate, a
    bearer token, both or neither, always over TLS verified against `ca`.
    `grpc.use_local_subchannel_pool` keeps channels from sharing
    connections, so each Caller makes its own TLS handshake."""

    def __init__(self, port, ca, cert=None, token=None, metadata=(),
                 host="127.0.0.1"):
        with open(ca.crt if isinstance(ca, Cert) else ca, "rb") as f:
            roots = f.read()
        key, chain = cert.pem() if cert else (None, None)
        creds = grpc.ssl_channel_credentials(
            root_certificates=roots, private_key=key, certificate_chain=chain)
        self.channel = grpc.secure_channel(
            f"{host}:{port}", creds,
            options=[("grpc.use_local_subchannel_pool", 1)])
        self.queue = queue_service_pb2_grpc.QueueServiceStub(self.channel)
        self.admin = admin_service_pb2_grpc.AdminServiceStub(self.channel)
        self.metadata = list(metadata)
        if token is not None:
            self.metadata.append(("authorization", f"Bearer {token}"))

    def close(self):
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, stub, method, request, timeout=CALL_TIMEOUT):
        try:
            response, call = getattr(stub, method).with_call(
                request, metadata=self.metadata or None, timeout=timeout)
            return Outcome(grpc.StatusCode.OK, "", response,
                           call.trailing_metadata())
        except grpc.RpcError as e:
            return Outcome(e.code(), e.details(), None, e.trailing_metadata())

    # QueueService
    def submit(self, namespace, name, cpu="100m", queue="lq"):
        return self.call(self.queue, "SubmitWorkload",
                         queue_service_pb2.SubmitWorkloadRequest(
                             workload=workload(namespace, name, cpu, queue)))

    def get(self, namespace, name):
        return self.call(self.queue, "GetWorkload",
                         queue_service_pb2.GetWorkloadRequest(
                             namespace=namespace, name=name))

    def list(self, namespace, include_finished=False):
        return self.call(self.queue, "ListWorkloads",
                         queue_service_pb2.ListWorkloadsRequest(
                             namespace=namespace,
                             include_finished=include_finished))

    def cancel(self, namespace, name):
        return self.call(self.queue, "CancelWorkload",
                         queue_service_pb2.CancelWorkloadRequest(
                             namespace=namespace, name=name))

    def heartbeat(self, namespace, name, runner_id, lease=60):
        return self.call(self.queue, "Heartbeat",
                         queue_service_pb2.HeartbeatRequest(
                             namespace=namespace, name=name,
                             runner_id=runner_id, lease=duration(lease)))

    def finish(self, namespace, name, succeeded=True):
        return self.call(self.queue, "FinishWorkload",
                         queue_service_pb2.FinishWorkloadRequest(
                             namespace=namespace, name=name,
                             succeeded=succeeded, message="done"))

    def watch(self, namespace, kinds, from_revision=None, timeout=DEADLINE):
        """The Watch stream (an iterator of WatchEvent; errors surface as
        grpc.RpcError from next())."""
        request = queue_service_pb2.WatchRequest(namespace=namespace,
                                                 kinds=kinds)
        if from_revision is not None:
            request.from_revision = from_revision
        return self.queue.Watch(request, metadata=self.metadata or None,
                                timeout=timeout)

    # AdminService
    def apply(self, objects=(), workloads=()):
        return self.call(self.admin, "Apply", admin_service_pb2.ApplyRequest(
            objects=list(objects), workloads=list(workloads)))

    def get_object(self, kind, name, namespace=""):
        return self.call(self.admin, "GetObject",
                         admin_service_pb2.GetObjectRequest(
                             kind=kind, namespace=namespace, name=name))


# ---- kqd ------------------------------------------------------------------------


class Kqd:
    """One kqd with TLS, mTLS, tokens, RBAC and an audit log, on 127.0.0.1
    ports of its own; its data directory survives restarts.

    The serving certificate sits in tls/current/, `current` being a
    symlink that rotate_server_cert() flips atomically (the Kubernetes
    Secret-volume layout); the client CA bundle is tls/client-ca.crt,
    replaced by rename."""

    def __init__(self, directory, pki, server_cert_name="server",
                 extra_flags=(), log_level="info"):
        self.dir = directory
        self.pki = pki
        self.data = os.path.join(directory, "data")
        self.tls = os.path.join(directory, "tls")
        self.audit_path = os.path.join(directory, "audit.log")
        self.log_path = os.path.join(directory, "kqd.log")
        self.token_path = os.path.join(directory, "tokens")
        self.authz_path = os.path.join(directory, "rbac.yaml")
        self.client_ca_path = os.path.join(self.tls, "client-ca.crt")
        self.extra_flags = list(extra_flags)
        self.log_level = log_level
        self.proc = None
        self.port = 0
        self.http_port = 0
        self._log = None
        os.makedirs(self.tls, exist_ok=True)
        self.server_cert = None
        self._generation = 0
        self.rotate_server_cert(server_cert_name)

    # The files kqd watches.
    def rotate_server_cert(self, name="server", days=1):
        """Writes a new key and certificate into a fresh directory and
        points tls/current at it with one rename(2). Returns the Cert."""
        self._generation += 1
        fresh = os.path.join(self.tls, f"gen-{self._generation}")
        os.makedirs(fresh)
        made = self.pki.leaf(f"{name}-{self._generation}",
                             "/CN=localhost", self.pki.root, server=True,
                             days=days, out_dir=fresh)
        os.rename(made.crt, os.path.join(fresh, "tls.crt"))
        os.rename(made.key, os.path.join(fresh, "tls.key"))
        link = os.path.join(self.tls, f"current.tmp-{self._generation}")
        os.symlink(os.path.basename(fresh), link)
        os.replace(link, os.path.join(self.tls, "current"))
        self.server_cert = Cert(os.path.join(fresh, "tls.crt"),
                                os.path.join(fresh, "tls.key"))
        return self.server_cert

    def write_client_ca(self, *cas):
        bundle = ""
        for ca in cas:
            with open(ca.crt) as f:
                bundle += f.read()
        write_atomically(self.client_ca_path, bundle)

    def write_tokens(self, tokens=None):
        write_atomically(self.token_path, token_file_text(tokens))

    def write_authz(self, documents):
        write_atomically(self.authz_path, authz_file_text(documents))

    # The process.
    def argv(self):
        current = os.path.join(self.tls, "current")
        return [os.path.join(BIN, "kqd"), "--listen=127.0.0.1:0",
                f"--port-file={self.dir}/port", "--http-listen=127.0.0.1:0",
                f"--http-port-file={self.dir}/http-port",
                f"--data-dir={self.data}",
                f"--tls-cert={current}/tls.crt",
                f"--tls-key={current}/tls.key",
                f"--client-ca={self.client_ca_path}",
                f"--token-file={self.token_path}",
                f"--authz-file={self.authz_path}",
                f"--audit-log={self.audit_path}",
                "--tls-reload-interval=1s",
                f"--log-level={self.log_level}", *self.extra_flags]

    def start(self):
        """Starts kqd and waits until it has written both port files and
        answers a call."""
        for name in ("port", "http-port"):
            path = os.path.join(self.dir, name)
            if os.path.exists(path):
                os.remove(path)
        self._log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(die_with_parent(self.argv()),
                                     stdout=self._log,
                                     stderr=subprocess.STDOUT)
        try:
            self.port = self._read_port("port")
            self.http_port = self._read_port("http-port")
        except BaseException:
            self.kill()
            raise
        return self

    def _read_port(self, name):
        path = os.path.join(self.dir, name)

        def chosen():
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"kqd exited with {self.proc.returncode}:\n"
                    f"{self.log_tail()}")
            try:
                with open(path) as f:
                    return int(f.read().strip())
            except (OSError, ValueError):
                return 0
        port = eventually(chosen)
        if not port:
            raise RuntimeError(f"kqd wrote no {name} file:\n{self.log_tail()}")
        return port

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def terminate(self):
        """SIGTERM, then SIGKILL if kqd has not ended within DEADLINE."""
        return self._stop(signal.SIGTERM)

    def kill(self):
        """SIGKILL: nothing survives but what kqd committed."""
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
            with open(self.log_path, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self):
        return self.log_text()[-4000:]

    # Talking to it.
    def caller(self, cert=None, token=None, metadata=(), ca=None):
        return Caller(self.port, ca or self.pki.root, cert=cert, token=token,
                      metadata=metadata)

    def https_get(self, path, token=None, cert=None):
        """GET over TLS (verified against the test CA) on the HTTP port,
        with a bearer token and/or a client certificate: (status, headers,
        body)."""
        context = ssl.create_default_context(cafile=self.pki.root.crt)
        if cert is not None:
            context.load_cert_chain(cert.crt, cert.key)
        request = urllib.request.Request(
            f"https://127.0.0.1:{self.http_port}{path}")
        if token is not None:
            request.add_header("Authorization", f"Bearer {token}")
        opener = urllib.request.build_opener(
            urllib.request.HTTPSHandler(context=context))
        try:
            with opener.open(request, timeout=CALL_TIMEOUT) as response:
                return (response.status, response.headers,
                        response.read().decode())
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode(errors="replace")

    def metrics(self):
        status, _, body = self.https_get("/metrics", token="tok-prom")
        if status != 200:
            raise AssertionError(f"/metrics with the prom token: {status} "
                                 f"{body[:200]}")
        return body

    def metric(self, name, **labels):
        """The value of the sample `name{labels...}` (labels matched as a
        subset), or None when kqd exposes no such series."""
        return metric_value(self.metrics(), name, labels)

    def served_serial(self, port=None, alpn="h2"):
        """The serial of the certificate kqd serves on a new TLS connection
        to `port` (the gRPC port by default)."""
        context = ssl.create_default_context(cafile=self.pki.root.crt)
        context.set_alpn_protocols([alpn])
        with socket.create_connection(("127.0.0.1", port or self.port),
                                      timeout=CALL_TIMEOUT) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                return int(tls.getpeercert()["serialNumber"], 16)


# ---- Audit log and metrics --------------------------------------------------------


class AuditLog:
    """kqd's --audit-log, one JSON object a line."""

    def __init__(self, path):
        self.path = path

    def raw_lines(self):
        try:
            with open(self.path) as f:
                text = f.read()
        except FileNotFoundError:
            return []
        return text.splitlines()

    def events(self):
        """Every line parsed; a line that is not JSON raises."""
        out = []
        for i, line in enumerate(self.raw_lines()):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise AssertionError(
                    f"{self.path} line {i + 1} is not JSON ({e}): {line!r}")
        return out

    def settle(self, at_least=0, quiet=1.0, timeout=DEADLINE):
        """Waits until the file has at least `at_least` lines and has not
        grown for `quiet` seconds; returns its line count."""
        give_up = time.monotonic() + timeout
        last = len(self.raw_lines())
        since = time.monotonic()
        while time.monotonic() < give_up:
            time.sleep(0.1)
            now = len(self.raw_lines())
            if now != last:
                last, since = now, time.monotonic()
            elif now >= at_least and time.monotonic() - since >= quiet:
                return now
        return last

    def by_id(self, audit_id):
        return [e for e in self.events() if e.get("auditID") == audit_id]


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def metric_value(text, name, labels):
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m or m.group(1) != name:
            continue
        have = dict(_LABEL.findall(m.group(3) or ""))
        if all(have.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


# ---- The fixture of one test class --------------------------------------------------


class SecurityFixture:
    """Everything a test class needs: the PKI (CA, server and client
    certificates, an evil CA, an expired certificate, a second CA), the
    token and RBAC files, kqd started and the setup objects applied by
    root."""

    CLIENTS = {
        "alice": "/CN=alice/O=team-a",
        "bob": "/CN=bob/O=team-b",
        "root": "/CN=root/O=admins",
        "vic": "/CN=vic",
        "runner-a": "/CN=runner-a",
        "carol": "/CN=carol/O=team-a@example.com",
        "admin@example.com": "/CN=admin@example.com",
        "kq-shim": "/CN=kq-shim",
    }

    def __init__(self, prefix, bindings=None, extra_flags=(),
                 log_level="info", team_quota="1000"):
        self.dir = tempfile.mkdtemp(prefix=f"kq-security-{prefix}-")
        pki = Pki(os.path.join(self.dir, "pki"))
        pki.root = pki.ca("ca", "kq-test-ca")
        pki.evil = pki.ca("evil-ca", "kq-evil-ca")
        pki.ca2 = pki.ca("ca2", "kq-test-ca-2")
        self.pki = pki
        self.certs = {name: pki.leaf(name, subject, pki.root)
                      for name, subject in self.CLIENTS.items()}
        self.certs["evil-alice"] = pki.leaf("evil-alice", "/CN=alice/O=team-a",
                                            pki.evil)
        self.certs["expired-alice"] = pki.expired_leaf(
            "expired-alice", "/CN=alice/O=team-a", pki.root)
        self.certs["ca2-alice"] = pki.leaf("ca2-alice", "/CN=alice/O=team-a",
                                           pki.ca2)
        self.kqd = Kqd(self.dir, pki, extra_flags=extra_flags,
                       log_level=log_level)
        self.kqd.write_client_ca(pki.root)
        self.kqd.write_tokens()
        self.bindings = list(bindings if bindings is not None
                             else STANDARD_BINDINGS)
        self.kqd.write_authz(self.bindings)
        self.audit = AuditLog(self.kqd.audit_path)
        self.team_quota = team_quota
        self._callers = []

    def start(self):
        try:
            self.kqd.start()
            self.apply_setup()
        except BaseException:
            self.close()
            raise
        return self

    def apply_setup(self):
        """ResourceFlavor default, ClusterQueue cq, LocalQueue lq in team-a
        and team-b, applied by root; waits for kqd to answer first."""
        root = self.caller("root")
        give_up = time.monotonic() + DEADLINE
        while True:
            outcome = root.apply([
                resource_flavor("default"),
                cluster_queue("cq", self.team_quota),
                local_queue("team-a", "lq", "cq"),
                local_queue("team-b", "lq", "cq")])
            if outcome.ok:
                return
            if (outcome.code != grpc.StatusCode.UNAVAILABLE
                    or time.monotonic() > give_up):
                raise RuntimeError(f"root's setup Apply: {outcome}\n"
                                   f"{self.kqd.log_tail()}")
            time.sleep(0.1)

    def caller(self, who=None, token=None, metadata=(), keep=True):
        """A Caller with `who`'s client certificate (None: no certificate)
        and/or a bearer token. Closed by close() unless keep is False."""
        c = self.kqd.caller(self.certs[who] if who else None, token=token,
                            metadata=metadata)
        if keep:
            self._callers.append(c)
        return c

    def wait_admitted(self, namespace, name, timeout=DEADLINE):
        root = self.caller("root")

        def admitted():
            got = root.get(namespace, name)
            return got.ok and condition_true(got.response.workload,
                                             "Admitted")
        return eventually(admitted, timeout)

    def close(self):
        for c in self._callers:
            c.close()
        self._callers = []
        self.kqd.terminate()
        shutil.rmtree(self.dir, ignore_errors=True)


class Background(threading.Thread):
    """fn() on a daemon thread; join() re-raises what it raised."""

    def __init__(self, fn, name):
        super().__init__(name=name, daemon=True)
        self._fn = fn
        self.error = None
        self.start()

    def run(self):
        try:
            self._fn()
        except BaseException as e:
            self.error = e

    def join(self, timeout=DEADLINE):
        super().join(timeout)
        if self.is_alive():
            raise AssertionError(f"{self.name} still running after {timeout}s")
        if self.error is not None:
            raise self.error
