"""The Python client of kqd.

    import kq

    client = kq.Client("127.0.0.1:7070")
    client.apply([kq.resource_flavor("default"),
                  kq.cluster_queue("cq", {"default": {"cpu": "8"}}),
                  kq.local_queue("team", "lq", "cq")])
    r = client.submit_workload(
        kq.workload("train", "team", "lq", requests={"cpu": "4"}))

Every method is one kqd call (or, for the waits and watches, a loop of
them) and returns the response message of kq/v1/*.proto, or raises
`KqError` with kqd's status code and message unchanged. Calls that can
safely be repeated (reads, Heartbeat, Admit of a named workload, Apply,
SetWorkloadActive, SetStopPolicy) are retried with exponential backoff
while kqd is UNAVAILABLE, within `retry_budget` seconds; the others fail
at once, since kqd may have applied them before the connection broke.

A Client is thread-safe: a launcher's heartbeat thread and its main thread
share one.

Security (kq's issue 30): `ca` turns TLS on and verifies kqd's certificate,
`cert` and `key` add a client certificate (mutual TLS), `token` or
`token_file` send `authorization: Bearer <token>` with every call, and
`impersonate_user` / `impersonate_groups` act for another identity:

    client = kq.Client("kqd.example.com:7070", ca="ca.crt",
                       cert="alice.crt", key="alice.key")
"""

import collections
import concurrent.futures
import ipaddress
import os
import random
import threading
import time

import grpc
from google.protobuf import duration_pb2

from kq.v1 import admin_service_pb2
from kq.v1 import admin_service_pb2_grpc
from kq.v1 import objects_pb2
from kq.v1 import queue_service_pb2
from kq.v1 import queue_service_pb2_grpc
from kq.v1 import workload_pb2

__all__ = [
    "Client",
    "KqError",
    "WatchProgress",
    "WatchStream",
    "cluster_queue",
    "condition",
    "config_object",
    "is_admitted",
    "is_finished",
    "is_loopback_target",
    "local_queue",
    "multikueue_cluster",
    "multikueue_config",
    "priority_class",
    "resource_flavor",
    "workload",
]


class KqError(Exception):
    """A failed kqd call.

    `code` is the grpc.StatusCode kqd answered (NOT_FOUND, INVALID_ARGUMENT,
    FAILED_PRECONDITION, ...), or UNAVAILABLE / DEADLINE_EXCEEDED when kqd
    could not be reached in time; `message` is kqd's message as it sent it
    (for INVALID_ARGUMENT it names the object and the field path).
    """

    def __init__(self, code, message):
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self):
        name = getattr(self.code, "name", str(self.code))
        return f"{name}: {self.message}"


def _error(rpc_error):
    code = rpc_error.code() if hasattr(rpc_error, "code") else None
    details = rpc_error.details() if hasattr(rpc_error, "details") else None
    return KqError(code or grpc.StatusCode.UNKNOWN, details or str(rpc_error))


def _duration(seconds):
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(round(seconds * 1e9)))
    return d


def _template_form(as_json):
    return (workload_pb2.TEMPLATE_FORM_JSON if as_json
            else workload_pb2.TEMPLATE_FORM_STRUCT)


# ---- Credentials ------------------------------------------------------------


def _invalid(message):
    return KqError(grpc.StatusCode.INVALID_ARGUMENT, message)


def _loopback_host(host):
    name = host.lower().rstrip(".")
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_loopback


def _host_of(address):
    if address.startswith("["):
        return address[1:].split("]", 1)[0]
    if address.count(":") > 1:  # a bare IPv6 address, no port
        return address
    return address.split(":", 1)[0]


def is_loopback_target(target):
    """Whether every address the gRPC `target` names is on this machine:
    127.0.0.0/8, ::1, localhost or a Unix socket (the only places a bearer
    token may go without TLS). "host:port", "[::1]:port", "dns:///host:port",
    "ipv4:a:p,b:p", "ipv6:[::1]:p" and "unix:PATH" are understood; any other
    host name is not loopback, whatever it resolves to."""
    if target.startswith(("unix:", "unix-abstract:")):
        return True
    for scheme in ("ipv4:", "ipv6:"):
        if target.startswith(scheme):
            addresses = target[len(scheme):].split(",")
            return bool(target[len(scheme):]) and all(
                _loopback_host(_host_of(a)) for a in addresses)
    if target.startswith("dns:"):
        target = target[len("dns:"):]
        if target.startswith("//"):
            slash = target.find("/", 2)
            if slash < 0:
                return False
            target = target[slash + 1:]
    elif "://" in target:
        return False
    return _loopback_host(_host_of(target))


def _read_file(what, path):
    """The bytes of a credential file; KqError INVALID_ARGUMENT naming it
    when it cannot be read or is empty."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise _invalid(f'cannot read the {what} file "{os.fsdecode(path)}": '
                       f"{e.strerror}") from None
    if not data.strip():
        raise _invalid(f'the {what} file "{os.fsdecode(path)}" is empty')
    return data


def _read_pem(what, source, private_key=False):
    # bytes are the PEM itself; anything else is a path.
    if isinstance(source, bytes):
        data, name = source, f"{what} given as bytes"
    else:
        data, name = _read_file(what, source), (
            f'{what} file "{os.fsdecode(source)}"')
    if private_key:
        ok = b"-----BEGIN " in data and b"PRIVATE KEY-----" in data
    else:
        ok = b"-----BEGIN CERTIFICATE-----" in data
    if not ok:
        kind = "private key" if private_key else "certificate"
        raise _invalid(f"the {name} holds no PEM {kind}")
    return data


def _check_token(token, source):
    if not token:
        raise _invalid(f"{source} is empty")
    if any(ord(c) <= 0x20 or ord(c) > 0x7e for c in token):
        raise _invalid(f"{source} has spaces or control characters: a "
                       "bearer token is one word of printable ASCII")
    return token


class _TokenFile:
    """A bearer token file, read at the first call and again once `refresh`
    seconds have passed (a rotated Kubernetes service-account token is
    picked up). A failed re-read keeps the token read before."""

    def __init__(self, path, refresh=60.0):
        self._path = path
        self._refresh = refresh
        self._lock = threading.Lock()
        self._token = None
        self._read_at = 0.0

    def get(self):
        with self._lock:
            now = time.monotonic()
            if self._token and now - self._read_at < self._refresh:
                return self._token
            try:
                token = _check_token(
                    _read_file("token", self._path).decode(
                        "ascii", errors="replace").strip(),
                    f'the token in "{os.fsdecode(self._path)}"')
            except KqError:
                if self._token:
                    return self._token
                raise
            self._token, self._read_at = token, now
            return token


class _CallDetails(
        collections.namedtuple(
            "_CallDetails", ("method", "timeout", "metadata", "credentials",
                             "wait_for_ready", "compression")),
        grpc.ClientCallDetails):
    pass


class _Authenticate(grpc.UnaryUnaryClientInterceptor,
                    grpc.UnaryStreamClientInterceptor):
    """Adds the bearer token and the impersonation metadata to every call
    of the channel, unary (blocking or future) and streaming alike."""

    def __init__(self, token, token_file, impersonate_user,
                 impersonate_groups):
        self._token = token
        self._token_file = token_file
        self._fixed = []
        if impersonate_user:
            self._fixed.append(("impersonate-user", impersonate_user))
            self._fixed.extend(
                ("impersonate-group", g) for g in impersonate_groups)

    def metadata(self):
        token = self._token
        if self._token_file is not None:
            token = self._token_file.get()
        metadata = list(self._fixed)
        if token:
            metadata.insert(0, ("authorization", f"Bearer {token}"))
        return metadata

    def _details(self, details):
        return _CallDetails(
            details.method, details.timeout,
            list(details.metadata or ()) + self.metadata(),
            details.credentials, getattr(details, "wait_for_ready", None),
            getattr(details, "compression", None))

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._details(details), request)


# ---- Builders ---------------------------------------------------------------


def workload(name, namespace, queue, requests=None, count=1,
             priority_class=None, pod_set="main", min_count=None,
             labels=None, annotations=None, node_selector=None,
             generate_name=None, maximum_execution_time_seconds=None):
    """A Workload of one pod set: `count` pods each asking for `requests`
    (resource name -> quantity string or number, e.g. {"cpu": "4",
    "nvidia.com/gpu": 8}), submitted to LocalQueue `queue` of `namespace`.
    With an empty `name`, kqd names it from `generate_name`."""
    wl = workload_pb2.Workload()
    wl.metadata.name = name or ""
    wl.metadata.namespace = namespace
    if generate_name:
        wl.metadata.generate_name = generate_name
    wl.metadata.labels.update(labels or {})
    wl.metadata.annotations.update(annotations or {})
    wl.spec.queue_name = queue
    if priority_class:
        wl.spec.priority_class_name = priority_class
    if maximum_execution_time_seconds is not None:
        wl.spec.maximum_execution_time_seconds = maximum_execution_time_seconds
    ps = wl.spec.pod_sets.add()
    ps.name = pod_set
    ps.count = count
    if min_count is not None:
        ps.min_count = min_count
    for resource, quantity in (requests or {}).items():
        ps.requests[resource] = str(quantity)
    ps.node_selector.update(node_selector or {})
    return wl


def resource_flavor(name, node_labels=None, tolerations=None):
    """A ResourceFlavor; `tolerations` are Toleration messages or dicts of
    its fields."""
    rf = objects_pb2.ResourceFlavor()
    rf.metadata.name = name
    rf.spec.node_labels.update(node_labels or {})
    for t in tolerations or ():
        rf.spec.tolerations.append(
            t if isinstance(t, objects_pb2.Toleration)
            else objects_pb2.Toleration(**t))
    return rf


def cluster_queue(name, quotas, cohort="", preemption=None,
                  namespace_selector=None, queueing_strategy=""):
    """A ClusterQueue with one resource group.

    `quotas` maps flavor name -> {resource: nominal quota}, flavors in order
    of preference; the group covers every resource named. `preemption` is a
    ClusterQueuePreemption or a dict of its fields (e.g.
    {"within_cluster_queue": "LowerPriority"}). `namespace_selector` is a
    dict of match labels; unlike Kueue's API, where an absent selector
    selects no namespace, the builder's default {} selects every
    namespace.
    """
    cq = objects_pb2.ClusterQueue()
    cq.metadata.name = name
    group = cq.spec.resource_groups.add()
    covered = []
    for flavor, resources in quotas.items():
        fq = group.flavors.add()
        fq.name = flavor
        for resource, quantity in resources.items():
            fq.resources.add(name=resource, nominal_quota=str(quantity))
            if resource not in covered:
                covered.append(resource)
    group.covered_resources.extend(covered)
    cq.spec.cohort_name = cohort
    cq.spec.queueing_strategy = queueing_strategy
    cq.spec.namespace_selector.match_labels.update(namespace_selector or {})
    cq.spec.namespace_selector.SetInParent()
    if isinstance(preemption, objects_pb2.ClusterQueuePreemption):
        cq.spec.preemption.CopyFrom(preemption)
    elif preemption:
        cq.spec.preemption.CopyFrom(
            objects_pb2.ClusterQueuePreemption(**preemption))
    return cq


def local_queue(namespace, name, cluster_queue_name):
    """A LocalQueue of `namespace` pointing at a ClusterQueue."""
    lq = objects_pb2.LocalQueue()
    lq.metadata.namespace = namespace
    lq.metadata.name = name
    lq.spec.cluster_queue = cluster_queue_name
    return lq


def multikueue_config(name, clusters):
    """A MultiKueueConfig dispatching to `clusters` (MultiKueueCluster
    names, in the order the Incremental dispatcher nominates them)."""
    config = objects_pb2.MultiKueueConfig()
    config.metadata.name = name
    config.spec.clusters.extend(clusters)
    return config


def multikueue_cluster(name, path):
    """A MultiKueueCluster reached through the kq contexts file at `path`
    (absolute, on kqd's machine: kubeConfig locationType Path)."""
    cluster = objects_pb2.MultiKueueCluster()
    cluster.metadata.name = name
    kube_config = cluster.spec.cluster_source.kube_config
    kube_config.location = path
    kube_config.location_type = "Path"
    return cluster


def priority_class(name, value, description=""):
    """A WorkloadPriorityClass."""
    pc = objects_pb2.WorkloadPriorityClass(value=value, description=description)
    pc.metadata.name = name
    return pc


_CONFIG_FIELDS = {
    objects_pb2.Namespace: "namespace",
    objects_pb2.ResourceFlavor: "resource_flavor",
    objects_pb2.ClusterQueue: "cluster_queue",
    objects_pb2.Cohort: "cohort",
    objects_pb2.LocalQueue: "local_queue",
    objects_pb2.WorkloadPriorityClass: "workload_priority_class",
    objects_pb2.AdmissionCheck: "admission_check",
    objects_pb2.ProvisioningRequestConfig: "provisioning_request_config",
    objects_pb2.MultiKueueConfig: "multi_kueue_config",
    objects_pb2.MultiKueueCluster: "multi_kueue_cluster",
}


def config_object(obj):
    """Wraps a ResourceFlavor, ClusterQueue, ... in a ConfigObject (a
    ConfigObject is returned as it is)."""
    if isinstance(obj, objects_pb2.ConfigObject):
        return obj
    field = _CONFIG_FIELDS.get(type(obj))
    if field is None:
        raise TypeError(f"not a kq configuration object: {type(obj).__name__}")
    wrapped = objects_pb2.ConfigObject()
    getattr(wrapped, field).CopyFrom(obj)
    return wrapped


def condition(wl, type_):
    """The workload's condition of this type, or None."""
    for c in wl.status.conditions:
        if c.type == type_:
            return c
    return None


def is_admitted(wl):
    c = condition(wl, "Admitted")
    return c is not None and c.status == "True"


def is_finished(wl):
    c = condition(wl, "Finished")
    return c is not None and c.status == "True"


# ---- Watch ------------------------------------------------------------------


class WatchProgress:
    """Where a watch stands: `revision` of the last event delivered (0
    before any) and `reconnects` so far (kqd restarted or the stream
    broke)."""

    def __init__(self):
        self.revision = 0
        self.reconnects = 0

    def __repr__(self):
        return (f"WatchProgress(revision={self.revision}, "
                f"reconnects={self.reconnects})")


def _event_key(event):
    if event.WhichOneof("object") == "workload":
        kind, meta = "Workload", event.workload.metadata
    else:
        kind = event.config_object.WhichOneof("kind") or ""
        meta = getattr(event.config_object, kind).metadata if kind else None
    if meta is None:
        return (kind, "", "", event.type)
    return (kind, meta.namespace, meta.name, event.type)


# Stream ends after which a resumable watch reconnects: kqd went away
# (UNAVAILABLE), shut down its event log (CANCELLED) or the transport broke.
_RECONNECT_CODES = frozenset({
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.ABORTED,
})


class WatchStream:
    """The events of one watch, in revision order: iterate over it.

    cancel() may be called from any thread and ends the iteration;
    `progress` is a WatchProgress. Also a context manager that cancels on
    exit.
    """

    def __init__(self, client, request, resume, progress):
        self._client = client
        self._request = request
        self.progress = progress if progress is not None else WatchProgress()
        self._lock = threading.Lock()
        self._call = None
        self._cancelled = False
        if resume:
            if not request.HasField("from_revision"):
                # "From now" is pinned to a revision, or a reconnection
                # before the first event would lose what happened meanwhile.
                request.from_revision = client._pin_revision(
                    request.namespace)
            self._events = self._resumable()
        else:
            # Opened here so that "from now" means when watch() was called.
            self._events = self._once(self._open(request))

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._events)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cancel()
        return False

    def cancel(self):
        with self._lock:
            self._cancelled = True
            call = self._call
        if call is not None:
            call.cancel()

    def _open(self, request):
        with self._lock:
            if self._cancelled:
                return None
            self._call = self._client._queue.Watch(request)
            return self._call

    def _once(self, call):
        try:
            for event in call:
                self.progress.revision = event.revision
                yield event
        except grpc.RpcError as e:
            if self._cancelled:
                return
            raise _error(e) from None
        finally:
            call.cancel()

    def _resumable(self):
        # Events of one revision (one kqd commit) may be cut in the middle.
        # `last` is the revision of the last event delivered and `seen`
        # counts the events delivered at it; a reconnection resumes after
        # last - 1 and skips those, so nothing is lost or repeated.
        client = self._client
        request = queue_service_pb2.WatchRequest()
        request.CopyFrom(self._request)
        last = request.from_revision
        seen = collections.Counter()
        backoff = client._initial_backoff
        failing_since = None
        while True:
            request.from_revision = last - 1 if seen else last
            skip = collections.Counter(seen)
            call = self._open(request)
            if call is None:
                return
            started = time.monotonic()
            failure = None
            try:
                for event in call:
                    failing_since = None
                    backoff = client._initial_backoff
                    key = _event_key(event)
                    if event.revision < last:
                        continue
                    if event.revision == last and skip[key] > 0:
                        skip[key] -= 1
                        continue
                    if event.revision != last:
                        last = event.revision
                        seen.clear()
                    seen[key] += 1
                    self.progress.revision = last
                    yield event
            except grpc.RpcError as e:
                if self._cancelled:
                    return
                if e.code() not in _RECONNECT_CODES:
                    raise _error(e) from None
                failure = _error(e)
            finally:
                call.cancel()
            if self._cancelled:
                return
            now = time.monotonic()
            # A stream that stayed up a while was connected: the outage
            # starts now, not at an earlier failure.
            if failing_since is None or now - started >= 1.0:
                failing_since = now
                backoff = client._initial_backoff
            if now - failing_since > client._retry_budget:
                raise failure or KqError(
                    grpc.StatusCode.UNAVAILABLE,
                    f"watch: kqd at {client.target} unreachable")
            time.sleep(random.uniform(backoff / 2, backoff))
            backoff = min(backoff * 2, client._max_backoff)
            self.progress.reconnects += 1


# ---- Client -----------------------------------------------------------------


class Client:
    """A connection to one kqd.

    `timeout` is the deadline of each unary call in seconds. UNAVAILABLE
    answers to idempotent calls are retried, sleeping from
    `retry_initial_backoff` doubling up to `retry_max_backoff`, until
    `retry_budget` seconds have passed.

    Credentials (each a path, or for `ca`, `cert` and `key` the PEM bytes
    themselves):
      ca: the CA that signed kqd's certificate; turns TLS on. kqd's
        certificate must name the host of `target`, or `server_name`.
      cert, key: a client certificate and its key (mutual TLS): kqd takes
        the user from its CN and the groups from its O values. Both or
        neither, and only with `ca`.
      token, token_file: a bearer token, or a file holding one (re-read
        every minute, so a rotated service-account token is picked up),
        sent as `authorization: Bearer <token>` with every call. Only over
        TLS, or to a loopback target (127.0.0.0/8, ::1, localhost, unix:).
      impersonate_user, impersonate_groups: `impersonate-user` and
        `impersonate-group` metadata on every call, honoured by kqd only
        when the caller may impersonate.
    Options that do not fit together, or files that cannot be read, raise
    KqError INVALID_ARGUMENT naming them here, before any connection; a
    token for a plaintext non-loopback target is refused the same way.
    A failed TLS handshake (wrong CA, a client certificate kqd does not
    trust) makes calls fail with UNAVAILABLE.
    """

    def __init__(self, target="127.0.0.1:7070", timeout=30.0,
                 retry_initial_backoff=0.1, retry_max_backoff=5.0,
                 retry_budget=60.0, ca=None, cert=None, key=None,
                 token=None, token_file=None, server_name=None,
                 impersonate_user=None, impersonate_groups=()):
        self.target = target
        self.timeout = timeout
        self._initial_backoff = retry_initial_backoff
        self._max_backoff = retry_max_backoff
        self._retry_budget = retry_budget
        # gRPC's default reconnection backoff grows to two minutes; a
        # restarted kqd should be found again within seconds.
        options = [
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 2000),
        ]
        authenticate = self._authenticator(
            target, ca, cert, key, token, token_file, server_name,
            impersonate_user, tuple(impersonate_groups or ()))
        if ca is not None:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_pem("TLS CA", ca),
                private_key=(_read_pem("client key", key, private_key=True)
                             if cert is not None else None),
                certificate_chain=(_read_pem("client certificate", cert)
                                   if cert is not None else None))
            if server_name:
                options.append(("grpc.ssl_target_name_override",
                                server_name))
            channel = grpc.secure_channel(target, credentials, options)
        else:
            channel = grpc.insecure_channel(target, options=options)
        if authenticate is not None:
            # The first call's token (a token file is read now, so that a
            # missing one is named here, not at some later call).
            authenticate.metadata()
            channel = grpc.intercept_channel(channel, authenticate)
        self._channel = channel
        self._queue = queue_service_pb2_grpc.QueueServiceStub(self._channel)
        self._admin = admin_service_pb2_grpc.AdminServiceStub(self._channel)

    @staticmethod
    def _authenticator(target, ca, cert, key, token, token_file, server_name,
                       impersonate_user, impersonate_groups):
        """Checks that the credential options fit together; returns the
        interceptor that adds their metadata, or None when no call needs
        any."""
        if (cert is None) != (key is None):
            raise _invalid("a client certificate needs its key: give key "
                           "too" if key is None else
                           "a client key needs its certificate: give cert "
                           "too")
        if cert is not None and ca is None:
            raise _invalid("a client certificate is sent only over TLS: "
                           "give ca, the CA that signed kqd's certificate "
                           "(kq --tls-ca)")
        if server_name and ca is None:
            raise _invalid("server_name needs TLS: give ca, the CA that "
                           "signed kqd's certificate (kq --tls-ca)")
        if token and token_file:
            raise _invalid("give token or token_file, not both")
        if token is not None:
            _check_token(token, "the bearer token")
        if (token or token_file) and ca is None and not is_loopback_target(
                target):
            raise _invalid(
                f"refusing to send a bearer token in plaintext to {target}, "
                "which is not a loopback address: use TLS by giving ca, the "
                "CA that signed kqd's certificate (kq --tls-ca)")
        if impersonate_groups and not impersonate_user:
            raise _invalid("impersonating groups needs a user to "
                           "impersonate too")
        for value in (impersonate_user or "",) + impersonate_groups:
            if any(ord(c) < 0x20 or ord(c) > 0x7e for c in value):
                raise _invalid(f"cannot impersonate {value!r}: metadata "
                               "carries printable ASCII only")
        if not (token or token_file or impersonate_user):
            return None
        return _Authenticate(token, _TokenFile(token_file)
                             if token_file else None, impersonate_user,
                             impersonate_groups)

    def _pin_revision(self, namespace):
        """The current revision, from a read the watcher is likely allowed
        to make: WorkloadPriorityClasses (the cheapest), else, for a caller
        kqd's RBAC confines to a namespace (kueue-batch-user-role), the
        workloads of `namespace` in a LocalQueue that cannot exist (a dot is
        not allowed in its name: an empty answer), else its LocalQueues."""
        denied = grpc.StatusCode.PERMISSION_DENIED
        try:
            return self.list_objects("WorkloadPriorityClass").revision
        except KqError as e:
            if e.code != denied:
                raise
        try:
            return self._call(self._queue.ListWorkloads,
                              queue_service_pb2.ListWorkloadsRequest(
                                  namespace=namespace,
                                  queue_name="kq.revision-pin"),
                              True).revision
        except KqError as e:
            if e.code != denied or not namespace:
                raise
        return self.list_objects("LocalQueue", namespace).revision

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def _call(self, rpc, request, idempotent, timeout=None, budget=None,
              retry_codes=(grpc.StatusCode.UNAVAILABLE,)):
        give_up = time.monotonic() + (
            self._retry_budget if budget is None else budget)
        backoff = self._initial_backoff
        while True:
            try:
                return rpc(request,
                           timeout=self.timeout if timeout is None else timeout)
            except grpc.RpcError as e:
                if not idempotent or e.code() not in retry_codes:
                    raise _error(e) from None
                pause = random.uniform(backoff / 2, backoff)
                if time.monotonic() + pause > give_up:
                    raise _error(e) from None
                time.sleep(pause)
                backoff = min(backoff * 2, self._max_backoff)

    # ---- AdminService -------------------------------------------------------

    def apply(self, objects=(), workloads=(), templates_as_json=False):
        """Creates or replaces configuration objects (ConfigObject, or
        ResourceFlavor, ClusterQueue, ... as they are) and submits
        workloads, in one transaction. Returns ApplyResponse: one result
        per object, then per workload.

        Every call answering with workloads takes `templates_as_json`: True
        answers with each pod template as JSON text (PodSet.template_json)
        instead of a Struct, which costs both sides far less. A workload may
        likewise be sent with template_json set instead of template."""
        request = admin_service_pb2.ApplyRequest(
            template_form=_template_form(templates_as_json))
        for obj in objects:
            if isinstance(obj, workload_pb2.Workload):
                request.workloads.append(obj)
            else:
                request.objects.append(config_object(obj))
        request.workloads.extend(workloads)
        # Declarative, unless kqd names a workload (a retry would submit
        # another).
        idempotent = all(w.metadata.name for w in request.workloads)
        return self._call(self._admin.Apply, request, idempotent)

    def delete(self, kind, name, namespace=""):
        """Deletes one configuration object (kind as Kueue names it:
        "ClusterQueue", "LocalQueue", ...)."""
        self._call(self._admin.Delete,
                   admin_service_pb2.DeleteRequest(
                       kind=kind, namespace=namespace, name=name), False)

    def get_object(self, kind, name, namespace=""):
        """One configuration object with its computed status (ConfigObject)."""
        return self._call(self._admin.GetObject,
                          admin_service_pb2.GetObjectRequest(
                              kind=kind, namespace=namespace, name=name),
                          True).object

    def list_objects(self, kind, namespace=""):
        """ListObjectsResponse: objects of one kind and the revision the list
        is consistent with."""
        return self._call(self._admin.ListObjects,
                          admin_service_pb2.ListObjectsRequest(
                              kind=kind, namespace=namespace), True)

    def set_admission_check_state(self, namespace, workload_name, check, state,
                                  message="", requeue_after_seconds=None,
                                  pod_set_updates=()):
        """Sets one admission check of a workload (Pending, Ready, Retry,
        Rejected) as its controller would; `pod_set_updates` (kq.v1.PodSetUpdate
        messages) are Kueue's podSetUpdates for the admitted pods. Returns the
        Workload."""
        request = admin_service_pb2.SetAdmissionCheckStateRequest(
            namespace=namespace, workload=workload_name, check=check,
            state=state, message=message, pod_set_updates=list(pod_set_updates))
        if requeue_after_seconds is not None:
            request.requeue_after_seconds = requeue_after_seconds
        return self._call(self._admin.SetAdmissionCheckState, request,
                          False).workload

    def preempt(self, namespace, name, message="", actor="", deactivate=False):
        """Operator eviction; the runner, if any, is told to stop first.
        Returns the Workload."""
        return self._call(self._admin.Preempt,
                          admin_service_pb2.PreemptRequest(
                              namespace=namespace, name=name, message=message,
                              actor=actor, deactivate=deactivate),
                          False).workload

    def set_workload_active(self, namespace, name, active):
        """Kueue's spec.active: False stops a workload, True resumes it.
        Returns the Workload."""
        return self._call(self._admin.SetWorkloadActive,
                          admin_service_pb2.SetWorkloadActiveRequest(
                              namespace=namespace, name=name, active=active),
                          True).workload

    def set_nominated_clusters(self, namespace, name, cluster_names):
        """An external MultiKueue dispatcher's status.nominatedClusterNames
        for a manager's workload. Returns the Workload."""
        return self._call(self._admin.SetNominatedClusters,
                          admin_service_pb2.SetNominatedClustersRequest(
                              namespace=namespace, name=name,
                              cluster_names=list(cluster_names)),
                          True).workload

    def set_stop_policy(self, kind, name, stop_policy, namespace=""):
        """spec.stopPolicy (None, Hold, HoldAndDrain) of a ClusterQueue or
        LocalQueue. Returns the ConfigObject."""
        return self._call(self._admin.SetStopPolicy,
                          admin_service_pb2.SetStopPolicyRequest(
                              kind=kind, namespace=namespace, name=name,
                              stop_policy=stop_policy),
                          True).object

    # ---- QueueService -------------------------------------------------------

    def submit_workload(self, wl, templates_as_json=False):
        """SubmitWorkloadResponse: the stored workload (admitted already if
        the scheduling pass of its batch admitted it) and its placements."""
        return self._call(self._queue.SubmitWorkload,
                          queue_service_pb2.SubmitWorkloadRequest(
                              workload=wl,
                              template_form=_template_form(templates_as_json)),
                          False)

    def submit_workload_async(self, wl, templates_as_json=False):
        """submit_workload without waiting: returns a
        concurrent.futures.Future whose result() is the
        SubmitWorkloadResponse, or raises KqError with kqd's code. A
        launcher keeps many submissions in flight from one thread this way
        (kqd acknowledges them in the same commits). Sent once, like
        submit_workload."""
        answer = concurrent.futures.Future()
        # Running from the start: the call is sent, so cancel() is refused.
        answer.set_running_or_notify_cancel()
        call = self._queue.SubmitWorkload.future(
            queue_service_pb2.SubmitWorkloadRequest(
                workload=wl, template_form=_template_form(templates_as_json)),
            timeout=self.timeout)

        def settle(done):
            try:
                answer.set_result(done.result())
            except grpc.RpcError as e:
                answer.set_exception(_error(e))
            except Exception as e:  # cancelled, or the channel closed
                answer.set_exception(e)

        call.add_done_callback(settle)
        return answer

    def get_workload(self, namespace, name, templates_as_json=False):
        """GetWorkloadResponse: the workload (finished ones too) and, when
        admitted, its placements."""
        return self._call(self._queue.GetWorkload,
                          queue_service_pb2.GetWorkloadRequest(
                              namespace=namespace, name=name,
                              template_form=_template_form(templates_as_json)),
                          True)

    def list_workloads(self, namespace="", queue_name="", cluster_queue="",
                       include_finished=False, templates_as_json=False):
        """ListWorkloadsResponse: workloads and the revision to watch from."""
        return self._call(self._queue.ListWorkloads,
                          queue_service_pb2.ListWorkloadsRequest(
                              namespace=namespace, queue_name=queue_name,
                              cluster_queue=cluster_queue,
                              include_finished=include_finished,
                              template_form=_template_form(templates_as_json)),
                          True)

    def cancel_workload(self, namespace, name):
        """Cancels a workload (Finished, reason Cancelled). Returns it."""
        return self._call(self._queue.CancelWorkload,
                          queue_service_pb2.CancelWorkloadRequest(
                              namespace=namespace, name=name), False).workload

    def finish_workload(self, namespace, name, succeeded=True, message=""):
        """Reports that an admitted workload ended; its quota is released.
        Returns the Workload."""
        return self._call(self._queue.FinishWorkload,
                          queue_service_pb2.FinishWorkloadRequest(
                              namespace=namespace, name=name,
                              succeeded=succeeded, message=message),
                          False).workload

    def admit(self, namespace="", name="", wl=None, timeout=None,
              runner_id="", lease=None, templates_as_json=False):
        """One Admit call: waits up to `timeout` seconds (None: until the
        call's deadline, `self.timeout`) for the workload's admission.
        With `wl`, submits it first (or waits for it if its name exists).
        With `runner_id`, attaches as its runner with `lease` seconds once
        admitted. Returns AdmitResponse (outcome ADMITTED, PENDING with
        reason and position, FINISHED or DEACTIVATED)."""
        request = queue_service_pb2.AdmitRequest(
            namespace=namespace, name=name, runner_id=runner_id,
            template_form=_template_form(templates_as_json))
        if wl is not None:
            request.workload.CopyFrom(wl)
        if timeout:
            request.timeout.CopyFrom(_duration(timeout))
        if lease:
            request.lease.CopyFrom(_duration(lease))
        idempotent = wl is None or bool(wl.metadata.name)
        # A kqd shutting down may cancel a waiting Admit (this client never
        # cancels its own): as good as unreachable.
        return self._call(self._queue.Admit, request, idempotent,
                          timeout=(timeout or 0) + self.timeout,
                          retry_codes=(grpc.StatusCode.UNAVAILABLE,
                                       grpc.StatusCode.CANCELLED))

    def wait_admitted(self, namespace="", name="", wl=None, timeout=None,
                      on_pending=None, poll=30.0, runner_id="", lease=None,
                      templates_as_json=False):
        """Waits until the workload is admitted, finished or deactivated,
        with Admit calls of `poll` seconds each, calling
        `on_pending(response)` with every PENDING answer (reason,
        position). With `wl`, only the first call submits it. Returns the
        final AdmitResponse; KqError DEADLINE_EXCEEDED after `timeout`
        seconds (None: never)."""
        give_up = None if timeout is None else time.monotonic() + timeout
        while True:
            wait = poll
            if give_up is not None:
                wait = min(poll, give_up - time.monotonic())
                if wait <= 0:
                    raise KqError(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"workload {namespace}/{name} not admitted within "
                        f"{timeout}s")
            response = self.admit(namespace, name, wl, timeout=wait,
                                  runner_id=runner_id, lease=lease,
                                  templates_as_json=templates_as_json)
            if wl is not None:
                namespace = response.workload.metadata.namespace
                name = response.workload.metadata.name
                wl = None
            if response.outcome != queue_service_pb2.AdmitResponse.PENDING:
                return response
            if on_pending is not None:
                on_pending(response)

    def heartbeat(self, namespace, name, runner_id, lease=30.0, stopped=False,
                  timeout=None, retry_budget=None):
        """The runner handshake: attaches `runner_id` or renews its lease;
        HeartbeatResponse.stop says the workload was evicted. After
        stopping it, call again with stopped=True to release the quota."""
        return self._call(self._queue.Heartbeat,
                          queue_service_pb2.HeartbeatRequest(
                              namespace=namespace, name=name,
                              runner_id=runner_id, lease=_duration(lease),
                              stopped=stopped),
                          True, timeout=timeout, budget=retry_budget)

    def explain(self, namespace, name):
        """ExplainResponse: why the workload is where it is."""
        return self._call(self._queue.Explain,
                          queue_service_pb2.ExplainRequest(
                              namespace=namespace, name=name), True)

    def pending_workloads(self, cluster_queue="", namespace="",
                          local_queue="", offset=0, limit=0):
        """PendingWorkloadsResponse: Kueue's visibility API, a page of the
        pending workloads of `cluster_queue`, or of the LocalQueue
        `namespace`/`local_queue`, in the order the ClusterQueue tries them,
        each with its position in both queues. limit=0 lists 1000."""
        return self._call(self._queue.PendingWorkloads,
                          queue_service_pb2.PendingWorkloadsRequest(
                              cluster_queue=cluster_queue,
                              namespace=namespace, local_queue=local_queue,
                              offset=offset, limit=limit), True)

    def simulate(self, wl=None, namespace="", name="",
                 templates_as_json=False):
        """SimulateResponse: would this workload (or the stored pending one
        named) be admitted now, and preempting whom? Writes nothing."""
        request = queue_service_pb2.SimulateRequest(
            namespace=namespace, name=name,
            template_form=_template_form(templates_as_json))
        if wl is not None:
            request.workload.CopyFrom(wl)
        return self._call(self._queue.Simulate, request, True)

    def watch(self, from_revision=None, kinds=(), namespace="", queue_name="",
              workload_name="", cluster_queue="", resume=False,
              progress=None, templates_as_json=False):
        """Streams WatchEvents committed after `from_revision` (None: from
        now) matching the filters; returns a WatchStream to iterate.

        With resume=True the stream survives kqd restarts and broken
        connections: it reconnects with backoff and continues right after
        the last event delivered, with no gap and no duplicate, giving up
        after `retry_budget` seconds without a connection. OUT_OF_RANGE (the
        revision left kqd's event log: list again) and other errors raise
        KqError either way.
        """
        request = queue_service_pb2.WatchRequest(
            kinds=list(kinds), namespace=namespace, queue_name=queue_name,
            workload_name=workload_name, cluster_queue=cluster_queue,
            template_form=_template_form(templates_as_json))
        if from_revision is not None:
            request.from_revision = from_revision
        return WatchStream(self, request, resume, progress)
