#!/usr/bin/env python3
"""kq's security acceptance tests against a real kqd (ops-security.md
section 6, tests 1-15, 18 and 19; the contract is logs/security-contract.md).

Every class starts a kqd of its own with TLS on both ports, optional
verified client certificates, a token file, an RBAC file and an audit log
(security_fixture.py), so that tests which rotate certificates, reload
the policy, count audit lines or kill kqd do not disturb the others. The
callers use the generated gRPC stubs directly.

Usage: security_test.py BIN_DIR   (PYTHONPATH holds the built kq package)
"""

import collections
import hashlib
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

import grpc

import security_fixture as fx
from security_fixture import (DEADLINE, UNAUTHENTICATED_MISSING,
                              UNAUTHENTICATED_UNKNOWN_TOKEN, Background,
                              SecurityFixture, cluster_queue, condition_reason,
                              condition_true, eventually)

# The contract's reload deadline: a changed certificate, CA bundle, token
# or policy file applies within 5 s (kqd runs with --tls-reload-interval=1s).
RELOAD_DEADLINE = 5.0

GROUPS = {
    "alice": ["team-a", "system:authenticated"],
    "bob": ["team-b", "system:authenticated"],
    "root": ["admins", "system:authenticated"],
    "vic": ["system:authenticated"],
    "runner-a": ["system:authenticated"],
    "carol": ["team-a@example.com", "system:authenticated"],
}


def forbidden(user, verb, resource, namespace=None):
    """kqd's PERMISSION_DENIED message, kube-apiserver's wording with the
    caller's groups appended (contract, "Refusals")."""
    where = (f'in the namespace "{namespace}"' if namespace
             else "at the cluster scope")
    return (f'user "{user}" cannot {verb} resource "{resource}" {where}; '
            f'groups: {", ".join(GROUPS[user])}')


def code_number(code):
    return code.value[0]


def auth_method(event):
    """How the caller authenticated. ops-security.md 3.7 puts it in
    user.authMethod; kqd writes annotations["authentication.kq.dev/method"]
    so that `user` stays Kubernetes' UserInfo. Either says it."""
    user = event.get("user", {})
    if "authMethod" in user:
        return user["authMethod"]
    return dig(event, "annotations").get("authentication.kq.dev/method")


def allowed_by(binding, role, subject):
    """kube-apiserver's RBAC reason: `binding` is ("RoleBinding", name,
    namespace) or ("ClusterRoleBinding", name); a RoleBinding is named
    "name/namespace" inside the quotes, as Kubernetes prints it."""
    kind, name = binding[0], "/".join(binding[1:])
    return (f'RBAC: allowed by {kind} "{name}" of ClusterRole "{role}" to '
            f'{subject[0]} "{subject[1]}"')


def dig(event, dotted):
    """event["a"]["b"] for "a.b"; KeyError names the missing path."""
    value = event
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"{dotted} missing from audit event {event}")
        value = value[part]
    return value


class KqdTestCase(unittest.TestCase):
    """One SecurityFixture (PKI, policy files, kqd, setup objects) per
    class."""

    PREFIX = "kqd"
    EXTRA_FLAGS = ()
    LOG_LEVEL = "info"
    BINDINGS = None
    TEAM_QUOTA = "1000"

    @classmethod
    def setUpClass(cls):
        cls.fixture = SecurityFixture(cls.PREFIX, bindings=cls.BINDINGS,
                                      extra_flags=cls.EXTRA_FLAGS,
                                      log_level=cls.LOG_LEVEL,
                                      team_quota=cls.TEAM_QUOTA).start()
        cls.kqd = cls.fixture.kqd
        cls.audit = cls.fixture.audit

    @classmethod
    def tearDownClass(cls):
        cls.fixture.close()

    def caller(self, who=None, token=None, metadata=()):
        return self.fixture.caller(who, token=token, metadata=metadata)

    def assertOutcome(self, outcome, code, details=None):
        self.assertEqual(outcome.code, code, repr(outcome))
        if details is not None:
            self.assertEqual(outcome.details, details)
        return outcome

    def assertOk(self, outcome):
        return self.assertOutcome(outcome, grpc.StatusCode.OK).response

    def assertDenied(self, outcome, user, verb, resource, namespace=None):
        self.assertOutcome(outcome, grpc.StatusCode.PERMISSION_DENIED,
                           forbidden(user, verb, resource, namespace))

    def submitted(self, who, namespace, name, cpu="100m", admitted=False):
        """`who` submits namespace/name; with `admitted`, waits until it is
        admitted."""
        self.assertOk(self.caller(who).submit(namespace, name, cpu))
        if admitted:
            self.assertTrue(self.fixture.wait_admitted(namespace, name),
                            f"{namespace}/{name} was never admitted")

    def audit_event(self, outcome):
        """The one audit line of the call that produced `outcome`, found by
        the kq-audit-id trailing metadata kqd returned."""
        self.assertIsNotNone(outcome.audit_id,
                             f"no kq-audit-id in {outcome.trailing}")
        found = eventually(lambda: self.audit.by_id(outcome.audit_id))
        self.assertEqual(len(found), 1,
                         f"audit lines with auditID {outcome.audit_id}: "
                         f"{found}")
        return found[0]

    def assertKqdUp(self, pid):
        self.assertTrue(self.kqd.alive(), self.kqd.log_tail())
        self.assertEqual(self.kqd.pid, pid)


# ---- Tests 1-5: authentication ---------------------------------------------------


class AuthenticationTest(KqdTestCase):
    PREFIX = "authn"
    LOG_LEVEL = "debug"

    def test_unauthenticated_submit_is_refused_audited_and_counted(self):
        before = self.kqd.metric("kq_authn_failures_total",
                                 reason="missing") or 0
        anonymous = self.caller()
        outcome = anonymous.submit("team-a", "anon-w1")
        self.assertOutcome(outcome, grpc.StatusCode.UNAUTHENTICATED,
                           UNAUTHENTICATED_MISSING)
        root = self.caller("root")
        self.assertOutcome(root.get("team-a", "anon-w1"),
                           grpc.StatusCode.NOT_FOUND)
        names = [w.metadata.name
                 for w in self.assertOk(root.list("", True)).workloads]
        self.assertNotIn("anon-w1", names)

        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "annotations")
                         ["authorization.k8s.io/decision"], "forbid")
        self.assertEqual(dig(event, "responseStatus.code"), 16)
        self.assertEqual(dig(event, "method"),
                         "/kq.v1.QueueService/SubmitWorkload")
        self.assertEqual(
            eventually(lambda: self.kqd.metric(
                "kq_authn_failures_total", reason="missing") == before + 1,
                timeout=RELOAD_DEADLINE), True,
            f"kq_authn_failures_total{{reason=\"missing\"}}: was {before}, "
            f"now {self.kqd.metric('kq_authn_failures_total', reason='missing')}")

    def test_unknown_bearer_token_is_refused_and_never_logged(self):
        outcome = self.caller(token="nope").submit("team-a", "token-w")
        self.assertOutcome(outcome, grpc.StatusCode.UNAUTHENTICATED,
                           UNAUTHENTICATED_UNKNOWN_TOKEN)
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "responseStatus.code"), 16)
        self.audit.settle()
        with open(self.audit.path) as f:
            self.assertEqual(f.read().count("nope"), 0)
        self.assertEqual(self.kqd.log_text().count("nope"), 0)

    def test_bearer_token_authenticates_like_a_certificate(self):
        outcome = self.caller(token="tok-alice").submit("team-a", "token-w1")
        self.assertOk(outcome)
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "user.username"), "alice")
        self.assertEqual(auth_method(event), "token")
        self.assertTrue({"team-a", "system:authenticated"}
                        <= set(dig(event, "user.groups")), event)
        self.assertEqual(dig(event, "annotations")
                         ["authorization.k8s.io/decision"], "allow")
        # The same user by certificate.
        outcome = self.caller("alice").submit("team-a", "cert-w1")
        self.assertOk(outcome)
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "user.username"), "alice")
        self.assertEqual(auth_method(event), "x509")
        self.assertTrue({"team-a", "system:authenticated"}
                        <= set(dig(event, "user.groups")), event)
        # Neither the token nor its hash reaches the audit log.
        self.audit.settle()
        with open(self.audit.path) as f:
            text = f.read()
        self.assertNotIn("tok-alice", text)
        self.assertNotIn(hashlib.sha256(b"tok-alice").hexdigest(), text)

    def assertHandshakeRefused(self, cert_name, workload_name):
        pid = self.kqd.pid
        lines = self.audit.settle()
        outcome = self.caller(cert_name).submit("team-a", workload_name)
        self.assertOutcome(outcome, grpc.StatusCode.UNAVAILABLE)
        self.assertIsNone(outcome.audit_id)
        # No RPC ran: nothing audited, nothing stored.
        self.assertEqual(self.audit.settle(), lines)
        self.assertOutcome(self.caller("root").get("team-a", workload_name),
                           grpc.StatusCode.NOT_FOUND)
        # kqd is up and serves the next good client.
        self.assertKqdUp(pid)
        self.assertOk(self.caller("alice").submit("team-a",
                                                  workload_name + "-ok"))

    def test_client_cert_from_untrusted_ca_fails_the_handshake(self):
        self.assertHandshakeRefused("evil-alice", "evil-w")

    def test_expired_client_cert_fails_the_handshake(self):
        self.assertHandshakeRefused("expired-alice", "expired-w")


# ---- Tests 6-11: authorization -----------------------------------------------------


class AuthorizationTest(KqdTestCase):
    PREFIX = "authz"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # bob's wb asks for more than the ClusterQueue has: it stays
        # pending for good.
        bob = cls.fixture.caller("bob")
        outcome = bob.submit("team-b", "wb", cpu="100000")
        if not outcome.ok:
            cls.tearDownClass()
            raise RuntimeError(f"bob's Submit of team-b/wb: {outcome}")

    def test_cross_namespace_cancel_is_denied_and_the_workload_stays_pending(
            self):
        outcome = self.caller("alice").cancel("team-b", "wb")
        self.assertDenied(outcome, "alice", "cancel", "workloads", "team-b")
        wl = self.assertOk(self.caller("bob").get("team-b", "wb")).workload
        self.assertFalse(condition_true(wl, "Finished"), wl)
        self.assertFalse(condition_true(wl, "Admitted"), wl)
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "annotations")
                         ["authorization.k8s.io/decision"], "forbid")
        self.assertEqual(dig(event, "responseStatus.code"), 7)
        self.assertEqual(dig(event, "user.username"), "alice")
        self.assertEqual(dig(event, "objectRef.namespace"), "team-b")

    def test_get_in_another_namespace_reveals_nothing_about_existence(self):
        alice = self.caller("alice")
        missing = alice.get("team-b", "does-not-exist")
        present = alice.get("team-b", "wb")
        self.assertDenied(missing, "alice", "get", "workloads", "team-b")
        self.assertDenied(present, "alice", "get", "workloads", "team-b")
        self.assertEqual(missing.details, present.details)
        # NOT_FOUND only for those who may get in team-b.
        self.assertOutcome(self.caller("bob").get("team-b", "does-not-exist"),
                           grpc.StatusCode.NOT_FOUND)

    def test_cluster_scope_list_needs_a_cluster_binding(self):
        self.submitted("alice", "team-a", "list-a")
        alice = self.caller("alice")
        self.assertDenied(alice.list(""), "alice", "list", "workloads")
        listed = self.assertOk(alice.list("team-a")).workloads
        self.assertIn("list-a", [w.metadata.name for w in listed])
        self.assertEqual({w.metadata.namespace for w in listed}, {"team-a"})
        everything = self.assertOk(self.caller("root").list("")).workloads
        self.assertTrue({"team-a", "team-b"}
                        <= {w.metadata.namespace for w in everything})

    def test_cluster_queue_apply_needs_batch_admin(self):
        cq = cluster_queue("cq-x", "1")
        self.assertDenied(self.caller("alice").apply([cq]), "alice", "create",
                          "clusterqueues")
        root = self.caller("root")
        self.assertOutcome(root.get_object("ClusterQueue", "cq-x"),
                           grpc.StatusCode.NOT_FOUND)
        self.assertOk(root.apply([cq]))
        got = self.assertOk(root.get_object("ClusterQueue", "cq-x"))
        self.assertEqual(got.object.cluster_queue.metadata.name, "cq-x")

    def test_workload_viewer_reads_and_watches_but_cannot_write(self):
        self.submitted("alice", "team-a", "viewed")
        vic = self.caller("vic")
        got = self.assertOk(vic.get("team-a", "viewed"))
        self.assertEqual(got.workload.metadata.name, "viewed")
        revision = self.assertOk(vic.list("team-a")).revision
        stream = vic.watch("team-a", ["Workload"], from_revision=revision)
        self.submitted("alice", "team-a", "watched")
        names = []
        try:
            for event in stream:
                names.append(event.workload.metadata.name)
                if "watched" in names:
                    break
        except grpc.RpcError as e:
            self.fail(f"vic's Watch of team-a: {e.code()}: {e.details()}")
        finally:
            stream.cancel()
        self.assertIn("watched", names)
        self.assertDenied(vic.submit("team-a", "by-vic"), "vic", "create",
                          "workloads", "team-a")
        self.assertDenied(vic.cancel("team-a", "viewed"), "vic", "cancel",
                          "workloads", "team-a")
        wl = self.assertOk(vic.get("team-a", "viewed")).workload
        self.assertFalse(condition_true(wl, "Finished"), wl)

    def test_watch_of_every_kind_shows_only_what_the_caller_may_watch(self):
        # ops-security.md 3.4 proposes refusing an empty `kinds` to callers
        # who may not watch every kind; kqd may instead filter. Either way
        # vic (workloads in team-a) sees no LocalQueue, ClusterQueue or
        # other namespace, and bob nothing of team-a.
        root = self.caller("root")
        self.assertOk(root.apply([cluster_queue("cq-watched", "1"),
                                  fx.local_queue("team-a", "lq-watched",
                                                 "cq-watched"),
                                  fx.local_queue("team-b", "lq-watched",
                                                 "cq-watched")]))
        self.submitted("root", "team-a", "watched-a")
        self.submitted("root", "team-b", "watched-b")
        for who, allowed in [("vic", {("Workload", "team-a")}),
                             ("alice", {("Workload", "team-a"),
                                        ("local_queue", "team-a")})]:
            events = []
            stream = self.caller(who).watch("team-a", [], from_revision=0,
                                            timeout=2)
            try:
                for event in stream:
                    if event.WhichOneof("object") == "workload":
                        events.append(("Workload",
                                       event.workload.metadata.namespace))
                    else:
                        kind = event.config_object.WhichOneof("kind")
                        meta = getattr(event.config_object, kind).metadata
                        events.append((kind, meta.namespace))
            except grpc.RpcError as e:
                self.assertIn(e.code(), (grpc.StatusCode.DEADLINE_EXCEEDED,
                                         grpc.StatusCode.PERMISSION_DENIED),
                              e.details())
            with self.subTest(who=who):
                self.assertLessEqual(set(events), allowed)
        stream = self.caller("bob").watch("team-a", [], from_revision=0,
                                          timeout=2)
        with self.assertRaises(grpc.RpcError) as caught:
            next(stream)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.PERMISSION_DENIED)

    def test_runner_role_may_heartbeat_and_finish(self):
        self.submitted("alice", "team-a", "run-w1", admitted=True)
        runner = self.caller("runner-a")
        self.assertOk(runner.heartbeat("team-a", "run-w1", "runner-a"))
        self.assertOk(runner.finish("team-a", "run-w1"))
        wl = self.assertOk(self.caller("alice").get("team-a",
                                                    "run-w1")).workload
        self.assertTrue(condition_true(wl, "Finished"), wl)

    def test_other_team_may_not_heartbeat(self):
        self.submitted("alice", "team-a", "run-w3", admitted=True)
        self.assertDenied(
            self.caller("bob").heartbeat("team-a", "run-w3", "bob-runner"),
            "bob", "run", "workloads", "team-a")
        self.assertDenied(self.caller("bob").finish("team-a", "run-w3"),
                          "bob", "run", "workloads", "team-a")
        # alice's peers with the same role but not the submitter: vic has
        # no run right and is not the owner.
        self.assertDenied(
            self.caller("vic").heartbeat("team-a", "run-w3", "vic-runner"),
            "vic", "run", "workloads", "team-a")

    def admit(self, who, namespace, name, runner_id):
        c = self.caller(who)
        return c.call(c.queue, "Admit", fx.queue_service_pb2.AdmitRequest(
            namespace=namespace, name=name, timeout=fx.duration(1),
            runner_id=runner_id, lease=fx.duration(3600)))

    def test_admit_with_a_runner_id_needs_the_run_right(self):
        # Admit with runner_id attaches a runner and takes its lease, as the
        # first Heartbeat does: a viewer must not be able to, or it locks the
        # real runner out for the lease ("is run by runner ...").
        self.submitted("alice", "team-a", "leased", admitted=True)
        self.assertDenied(self.admit("vic", "team-a", "leased", "vic-runner"),
                          "vic", "run", "workloads", "team-a")
        runner = self.caller("runner-a")
        self.assertOk(runner.heartbeat("team-a", "leased", "runner-a"))
        self.assertOk(runner.finish("team-a", "leased"))
        # The runner role and the owner may.
        self.submitted("alice", "team-a", "leased-2", admitted=True)
        self.assertOk(self.admit("runner-a", "team-a", "leased-2",
                                 "runner-a"))
        self.submitted("alice", "team-a", "leased-3", admitted=True)
        self.assertOk(self.admit("alice", "team-a", "leased-3",
                                 "alice-launcher"))

    def test_submitter_may_heartbeat_its_own_workload(self):
        self.submitted("alice", "team-a", "own-w2", admitted=True)
        self.assertOk(self.caller("alice").heartbeat("team-a", "own-w2",
                                                     "alice-launcher"))
        # The owner is the user, whichever way alice authenticates.
        self.assertOk(self.caller(token="tok-alice").heartbeat(
            "team-a", "own-w2", "alice-launcher"))
        self.assertOk(self.caller("alice").finish("team-a", "own-w2"))


class OwnerMayRunOffTest(KqdTestCase):
    PREFIX = "owner-off"
    EXTRA_FLAGS = ("--owner-may-run=false",)

    def test_submitter_may_not_heartbeat_with_owner_may_run_false(self):
        self.submitted("alice", "team-a", "own-w2", admitted=True)
        self.assertDenied(
            self.caller("alice").heartbeat("team-a", "own-w2",
                                           "alice-launcher"),
            "alice", "run", "workloads", "team-a")
        self.assertDenied(self.caller("alice").finish("team-a", "own-w2"),
                          "alice", "run", "workloads", "team-a")
        # The runner role is unaffected.
        runner = self.caller("runner-a")
        self.assertOk(runner.heartbeat("team-a", "own-w2", "runner-a"))
        self.assertOk(runner.finish("team-a", "own-w2"))


class ImpersonationTest(KqdTestCase):
    """The contract's impersonation metadata: honoured only for a caller
    that may impersonate (the shim's kq-shim-role)."""

    PREFIX = "impersonation"

    def test_shim_acts_with_the_impersonated_users_rights(self):
        shim = self.caller("kq-shim", metadata=[
            ("impersonate-user", "alice"), ("impersonate-group", "team-a")])
        outcome = shim.submit("team-a", "by-shim")
        self.assertOk(outcome)
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "user.username"), "kq-shim")
        self.assertEqual(dig(event, "impersonatedUser.username"), "alice")
        # Not the shim's own rights (submit everywhere): alice's.
        self.assertDenied(shim.submit("team-b", "by-shim-b"), "alice",
                          "create", "workloads", "team-b")
        self.assertOutcome(self.caller("root").get("team-b", "by-shim-b"),
                           grpc.StatusCode.NOT_FOUND)

    def test_impersonation_without_the_right_is_denied(self):
        alice_as_root = self.caller("alice", metadata=[
            ("impersonate-user", "root"), ("impersonate-group", "admins")])
        outcome = alice_as_root.apply([cluster_queue("cq-by-imp", "1")])
        self.assertOutcome(outcome, grpc.StatusCode.PERMISSION_DENIED)
        self.assertTrue(outcome.details.startswith(
            'user "alice" cannot impersonate'), outcome.details)
        self.assertOutcome(
            self.caller("root").get_object("ClusterQueue", "cq-by-imp"),
            grpc.StatusCode.NOT_FOUND)

    def test_impersonation_without_a_principal_is_unauthenticated(self):
        outcome = self.caller(metadata=[("impersonate-user", "root")]).list(
            "team-a")
        self.assertOutcome(outcome, grpc.StatusCode.UNAUTHENTICATED)
        # ops-security.md 3.6 has a message of its own for this case; the
        # contract lists only the general one.
        self.assertIn(outcome.details, [
            UNAUTHENTICATED_MISSING,
            "kq: request could not be authenticated: impersonation requires "
            "an authenticated principal"])


class StartupTest(unittest.TestCase):
    """kqd refuses configurations the contract rules out, before it
    serves."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kq-security-startup-")
        self.pki = fx.Pki(os.path.join(self.dir, "pki"))
        self.pki.root = self.pki.ca("ca", "kq-test-ca")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def assertRefusesToStart(self, *flags):
        port_file = os.path.join(self.dir, "port")
        proc = subprocess.Popen(fx.die_with_parent([
            os.path.join(fx.BIN, "kqd"), f"--data-dir={self.dir}/data",
            f"--port-file={port_file}", "--http-listen=", *flags]),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            output, _ = proc.communicate(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            self.fail(f"kqd {' '.join(flags)} kept running: "
                      f"{output.decode(errors='replace')}")
        self.assertNotEqual(proc.returncode, 0, output)
        self.assertFalse(os.path.exists(port_file))

    def test_non_loopback_listen_without_tls_and_authz_is_refused(self):
        self.assertRefusesToStart("--listen=0.0.0.0:0")

    def test_non_loopback_listen_with_tls_but_no_authz_is_refused(self):
        cert = self.pki.leaf("server", "/CN=localhost", self.pki.root,
                             server=True)
        self.assertRefusesToStart("--listen=0.0.0.0:0",
                                  f"--tls-cert={cert.crt}",
                                  f"--tls-key={cert.key}")

    def test_tls_cert_without_key_is_refused(self):
        cert = self.pki.leaf("server", "/CN=localhost", self.pki.root,
                             server=True)
        self.assertRefusesToStart("--listen=127.0.0.1:0",
                                  f"--tls-cert={cert.crt}")


# ---- Test 12 and the other reloads: policy files without restart --------------------


class PolicyReloadTest(KqdTestCase):
    PREFIX = "reload"
    BINDINGS = fx.STANDARD_BINDINGS + [fx.KUEUE_BATCH_ADMIN_ROLE_BINDING,
                                       fx.KUEUE_TEAM_A_BATCH_USER_ROLE_BINDING]

    def test_kueue_rbac_page_bindings_apply_and_sighup_revokes_them(self):
        pid = self.kqd.pid
        carol = self.caller("carol")
        outcome = carol.submit("team-a", "carol-1")
        self.assertOk(outcome)
        reason = dig(self.audit_event(outcome),
                     "annotations")["authorization.k8s.io/reason"]
        self.assertEqual(reason, allowed_by(
            ("RoleBinding", "read-pods", "team-a"), "kueue-batch-user-role",
            ("Group", "team-a@example.com")))
        self.assertDenied(carol.submit("team-b", "carol-b"), "carol",
                          "create", "workloads", "team-b")
        # Kueue's admin ClusterRoleBinding, verbatim too.
        self.assertOk(self.caller("admin@example.com").apply(
            [cluster_queue("cq-kueue-admin", "1")]))

        self.kqd.write_authz(fx.STANDARD_BINDINGS)
        self.kqd.signal(signal.SIGHUP)
        attempts = iter(range(10**6))

        def refused():
            outcome = carol.submit("team-a", f"carol-r{next(attempts)}")
            if outcome.code == grpc.StatusCode.PERMISSION_DENIED:
                return outcome
            self.assertOk(outcome)
            return None
        outcome = eventually(refused, timeout=RELOAD_DEADLINE, interval=0.2)
        self.assertIsNotNone(outcome, "carol still allowed after SIGHUP")
        self.assertDenied(outcome, "carol", "create", "workloads", "team-a")
        self.assertKqdUp(pid)
        # The rest of the policy is intact.
        self.assertOk(self.caller("alice").submit("team-a", "after-reload"))

    def test_new_token_line_is_honoured_without_restart(self):
        pid = self.kqd.pid
        dave = self.caller(token="tok-dave")
        self.assertOutcome(dave.list("team-a"),
                           grpc.StatusCode.UNAUTHENTICATED,
                           UNAUTHENTICATED_UNKNOWN_TOKEN)
        tokens = dict(fx.TOKENS)
        tokens["tok-dave"] = ("dave", ["team-a"])
        self.kqd.write_tokens(tokens)
        ok = eventually(lambda: dave.list("team-a").ok,
                        timeout=RELOAD_DEADLINE, interval=0.2)
        self.assertTrue(ok, "tok-dave not honoured within 5 s")
        outcome = dave.submit("team-a", "by-dave")
        self.assertOk(outcome)
        self.assertEqual(dig(self.audit_event(outcome), "user.username"),
                         "dave")
        self.assertKqdUp(pid)

    def test_unparsable_policy_file_keeps_the_old_policy(self):
        pid = self.kqd.pid
        self.kqd.write_authz(["kind: [this is not\n  RBAC: {{\n"])
        self.kqd.signal(signal.SIGHUP)
        time.sleep(2.5)  # two reload intervals and the SIGHUP
        self.assertKqdUp(pid)
        self.assertOk(self.caller("alice").submit("team-a", "kept-policy"))
        self.assertDenied(self.caller("bob").submit("team-a", "kept-policy-b"),
                          "bob", "create", "workloads", "team-a")
        self.kqd.write_authz(fx.STANDARD_BINDINGS)


# ---- Tests 13-14: certificate rotation ------------------------------------------------


class RotationTest(KqdTestCase):
    PREFIX = "rotation"

    def test_server_certificate_rotation_without_restart(self):
        pid = self.kqd.pid
        old = self.caller("alice")
        self.assertOk(old.list("team-a"))
        first = self.kqd.server_cert
        # An earlier test's rotation may still be on its way to the gRPC
        # port (kqd's poll, then gRPC's own, a second each).
        self.assertTrue(
            eventually(lambda: self.kqd.served_serial() == first.serial(),
                       timeout=RELOAD_DEADLINE, interval=0.2),
            f"kqd serves serial {self.kqd.served_serial():x} before the "
            f"rotation, not {first.serial():x}")

        new = self.kqd.rotate_server_cert(days=2)
        self.assertNotEqual(new.serial(), first.serial())
        self.assertNotEqual(new.not_after(), first.not_after())
        seen = eventually(lambda: self.kqd.served_serial() == new.serial(),
                          timeout=RELOAD_DEADLINE, interval=0.2)
        self.assertTrue(seen, f"kqd still serves serial "
                        f"{self.kqd.served_serial():x}, not {new.serial():x}")
        self.assertOk(self.caller("alice").list("team-a"))
        # The connection made before the rotation keeps working.
        self.assertOk(old.list("team-a"))
        self.assertKqdUp(pid)
        self.assertEqual(
            eventually(lambda: self.kqd.metric(
                "kq_tls_certificate_expiry_timestamp_seconds",
                cert="server") == new.not_after(), timeout=RELOAD_DEADLINE),
            True,
            "kq_tls_certificate_expiry_timestamp_seconds{cert=\"server\"} = "
            f"{self.kqd.metric('kq_tls_certificate_expiry_timestamp_seconds', cert='server')}"
            f", want {new.not_after()}")

    def test_http_port_serves_the_rotated_certificate(self):
        pid = self.kqd.pid
        new = self.kqd.rotate_server_cert()
        seen = eventually(
            lambda: self.kqd.served_serial(self.kqd.http_port,
                                           "http/1.1") == new.serial(),
            timeout=RELOAD_DEADLINE, interval=0.2)
        self.assertTrue(seen, "the HTTP port still serves the old cert")
        self.assertEqual(self.kqd.https_get("/healthz")[0], 200)
        self.assertKqdUp(pid)

    def test_client_ca_rotation_without_restart(self):
        pid = self.kqd.pid
        self.assertOutcome(self.caller("ca2-alice").list("team-a"),
                           grpc.StatusCode.UNAVAILABLE)
        self.kqd.write_client_ca(self.fixture.pki.root, self.fixture.pki.ca2)

        def authenticated():
            with self.kqd.caller(self.fixture.certs["ca2-alice"]) as c:
                return c.list("team-a").ok
        self.assertTrue(eventually(authenticated, timeout=RELOAD_DEADLINE,
                                   interval=0.2),
                        "a CA2 client certificate is still refused")
        outcome = self.caller("ca2-alice").submit("team-a", "by-ca2-alice")
        self.assertOk(outcome)
        self.assertEqual(auth_method(self.audit_event(outcome)), "x509")
        self.assertOk(self.caller("alice").list("team-a"))
        self.assertKqdUp(pid)


class BadRotationTest(KqdTestCase):
    """Material that does not load (a key that does not match its
    certificate, a CA bundle without a certificate) must leave kqd serving
    what it had: its log says "TLS keeps the certificates loaded before"."""

    PREFIX = "bad-rotation"
    # Three --tls-reload-interval periods: the bad files have been read.
    SETTLE = 3.0

    def assertStillServing(self, serial):
        self.assertTrue(self.kqd.alive(), self.kqd.log_tail())
        with self.kqd.caller(self.fixture.certs["alice"]) as fresh:
            outcome = fresh.list("team-a")
        self.assertTrue(
            outcome.ok, f"a new gRPC connection after the bad files: "
            f"{outcome}; kqd's log: "
            f"{[l for l in self.kqd.log_text().splitlines() if 'keeps' in l][-1:]}")
        self.assertEqual(self.kqd.served_serial(), serial)
        self.assertEqual(self.kqd.served_serial(self.kqd.http_port,
                                                "http/1.1"), serial)

    def test_mismatched_key_keeps_the_old_certificate(self):
        pid = self.kqd.pid
        good = self.kqd.server_cert
        old = self.caller("alice")
        self.assertOk(old.list("team-a"))
        pki = self.fixture.pki
        one = pki.leaf("mismatch-crt", "/CN=localhost", pki.root, server=True)
        other = pki.leaf("mismatch-key", "/CN=localhost", pki.root,
                         server=True)
        fresh = os.path.join(self.kqd.tls, "mismatched")
        os.makedirs(fresh)
        shutil.copy(one.crt, os.path.join(fresh, "tls.crt"))
        shutil.copy(other.key, os.path.join(fresh, "tls.key"))
        link = os.path.join(self.kqd.tls, "current.tmp-mismatch")
        os.symlink("mismatched", link)
        os.replace(link, os.path.join(self.kqd.tls, "current"))
        try:
            time.sleep(self.SETTLE)
            self.assertStillServing(good.serial())
            self.assertOk(old.list("team-a"))
            self.assertKqdUp(pid)
        finally:
            self.kqd.rotate_server_cert()

    def test_unparsable_client_ca_bundle_keeps_the_old_bundle(self):
        pid = self.kqd.pid
        fx.write_atomically(self.kqd.client_ca_path, "not a certificate\n")
        try:
            time.sleep(self.SETTLE)
            self.assertStillServing(self.kqd.server_cert.serial())
            self.assertKqdUp(pid)
        finally:
            self.kqd.write_client_ca(self.fixture.pki.root)


# ---- Test 15: the audit log ----------------------------------------------------------


TEAM_A_USERS = ("RoleBinding", "team-a-users", "team-a")


class AuditTest(KqdTestCase):
    PREFIX = "audit"

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        root = cls.fixture.caller("root")
        for ns, name in [("team-a", "audited"), ("team-b", "audited")]:
            outcome = root.submit(ns, name)
            if not outcome.ok:
                cls.tearDownClass()
                raise RuntimeError(f"root's Submit of {ns}/{name}: {outcome}")

    def mixed_calls(self):
        """Ten kinds of call, allowed and refused: (outcome, method,
        namespace, decision, the reason of an allowed one)."""
        alice = self.caller("alice")
        bob = self.caller("bob")
        vic = self.caller("vic")
        root = self.caller("root")
        runner = self.caller("runner-a")
        token = self.caller(token="tok-alice")
        anonymous = self.caller()
        wrong = self.caller(token="wrong-token")
        calls = []
        for i in range(5):
            calls += [
                (alice.submit("team-a", f"mixed-{i}"), "SubmitWorkload",
                 "team-a", "allow",
                 allowed_by(TEAM_A_USERS, "kueue-batch-user-role",
                            ("Group", "team-a"))),
                (alice.get("team-b", "audited"), "GetWorkload", "team-b",
                 "forbid", None),
                (bob.list("team-b"), "ListWorkloads", "team-b", "allow",
                 allowed_by(("RoleBinding", "team-b-users", "team-b"),
                            "kueue-batch-user-role", ("Group", "team-b"))),
                (vic.get("team-a", "audited"), "GetWorkload", "team-a",
                 "allow", allowed_by(("RoleBinding", "viewers", "team-a"),
                                     "kueue-workload-viewer-role",
                                     ("User", "vic"))),
                (vic.cancel("team-a", "audited"), "CancelWorkload", "team-a",
                 "forbid", None),
                (anonymous.list("team-a"), "ListWorkloads", "team-a",
                 "forbid", None),
                (token.list("team-a"), "ListWorkloads", "team-a", "allow",
                 allowed_by(TEAM_A_USERS, "kueue-batch-user-role",
                            ("Group", "team-a"))),
                (root.get("team-b", "audited"), "GetWorkload", "team-b",
                 "allow", allowed_by(("ClusterRoleBinding", "admins"),
                                     "kueue-batch-admin-role",
                                     ("Group", "admins"))),
                (runner.get("team-a", "audited"), "GetWorkload", "team-a",
                 "allow", allowed_by(("RoleBinding", "runners", "team-a"),
                                     "kq-runner-role", ("User", "runner-a"))),
                (wrong.get("team-a", "audited"), "GetWorkload", "team-a",
                 "forbid", None),
            ]
        return calls

    def test_fifty_calls_write_exactly_fifty_audit_lines(self):
        before = self.audit.settle()
        calls = self.mixed_calls()
        self.assertEqual(len(calls), 50)
        denied = [c for c in calls if c[3] == "forbid"]
        self.assertTrue(all(not c[0].ok for c in denied), denied)
        self.assertTrue(all(c[0].code != grpc.StatusCode.UNAVAILABLE
                            for c in calls), calls)
        ids = [c[0].audit_id for c in calls]
        self.assertNotIn(None, ids, "a call without kq-audit-id")
        self.assertEqual(len(set(ids)), 50)

        total = self.audit.settle(at_least=before + 50)
        self.assertEqual(total, before + 50,
                         f"{total - before} audit lines for 50 calls")
        events = {e.get("auditID"): e for e in self.audit.events()[before:]}
        self.assertEqual(set(events), set(ids))
        for outcome, method, namespace, decision, reason in calls:
            event = events[outcome.audit_id]
            with self.subTest(method=method, outcome=outcome):
                self.assertIsInstance(dig(event, "user.username"), str)
                self.assertEqual(dig(event, "method"),
                                 f"/kq.v1.QueueService/{method}")
                self.assertEqual(dig(event, "objectRef.namespace"), namespace)
                self.assertEqual(dig(event, "responseStatus.code"),
                                 code_number(outcome.code))
                annotations = dig(event, "annotations")
                self.assertEqual(
                    annotations["authorization.k8s.io/decision"], decision)
                if reason:
                    self.assertEqual(
                        annotations["authorization.k8s.io/reason"], reason)
        self.assertEqual(self.kqd.metric("kq_audit_events_dropped_total"), 0)

    def test_audit_events_carry_the_kubernetes_event_fields(self):
        outcome = self.caller("alice").cancel("team-b", "audited")
        event = self.audit_event(outcome)
        self.assertEqual(dig(event, "stage"), "ResponseComplete")
        self.assertTrue(dig(event, "requestReceivedTimestamp"))
        self.assertTrue(dig(event, "stageTimestamp"))
        self.assertEqual(dig(event, "verb"), "cancel")
        self.assertEqual(dig(event, "objectRef.resource"), "workloads")
        self.assertEqual(dig(event, "objectRef.name"), "audited")
        self.assertEqual(dig(event, "responseStatus.message"),
                         forbidden("alice", "cancel", "workloads", "team-b"))
        self.assertIn("127.0.0.1", " ".join(dig(event, "sourceIPs")))

    def test_health_checks_are_open_and_not_audited(self):
        # grpc.health.v1.Health/Check, called without stubs (Debian's
        # python3-grpcio has no grpc_health): open to anyone, and not
        # written to the audit log.
        before = self.audit.settle()
        anonymous = self.caller()
        check = anonymous.channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=lambda _: b"",
            response_deserializer=lambda raw: raw)
        # An empty HealthCheckRequest asks for the server's overall status;
        # the reply is SERVING (field 1 = 1).
        self.assertEqual(check(None, timeout=fx.CALL_TIMEOUT), b"\x08\x01")
        self.assertEqual(self.audit.settle(), before)


class AuditRotationTest(KqdTestCase):
    """--audit-log-maxsize and --audit-log-maxbackup: the log is rotated by
    size, and no event is lost at a rotation."""

    PREFIX = "audit-rotation"
    EXTRA_FLAGS = ("--audit-log-maxsize=1", "--audit-log-maxbackup=10")

    def test_audit_log_rotates_by_size_without_losing_lines(self):
        before = self.audit.settle()
        alice = self.caller("alice")
        # Refused Gets with long names: about 1 KB of audit each, so 3,000
        # of them fill three files of 1 MiB. 64 in flight at a time.
        long_name = "x" * 240
        ids = set()
        for start in range(0, 3000, 64):
            futures = [alice.queue.GetWorkload.future(
                fx.queue_service_pb2.GetWorkloadRequest(
                    namespace="team-b", name=f"{long_name}-{i}"),
                metadata=alice.metadata or None, timeout=fx.CALL_TIMEOUT)
                for i in range(start, min(start + 64, 3000))]
            for future in futures:
                self.assertEqual(future.code(),
                                 grpc.StatusCode.PERMISSION_DENIED)
                ids.add(dict(future.trailing_metadata())["kq-audit-id"])
        directory = os.path.dirname(self.audit.path)

        def files():
            return sorted(os.path.join(directory, n)
                          for n in os.listdir(directory)
                          if n.startswith("audit") and n.endswith(".log"))

        def lines():
            total = 0
            for path in files():
                with open(path) as f:
                    total += sum(1 for _ in f)
            return total
        self.assertEqual(eventually(lambda: lines() >= before + 3000), True,
                         f"{lines() - before} audit lines for 3000 calls")
        time.sleep(1)
        self.assertEqual(lines(), before + 3000)
        self.assertGreaterEqual(len(files()), 3, files())
        seen = set()
        for path in files():
            self.assertLessEqual(os.path.getsize(path), (1 << 20) + 4096,
                                 path)
            with open(path) as f:
                for line in f:
                    seen.add(json.loads(line)["auditID"])
        self.assertLessEqual(ids, seen)
        self.assertEqual(self.kqd.metric("kq_audit_events_dropped_total"), 0)


# ---- Test 18: the metrics endpoint ---------------------------------------------------


class MetricsAuthTest(KqdTestCase):
    PREFIX = "metrics"

    def test_metrics_without_token_is_401(self):
        self.assertEqual(self.kqd.https_get("/metrics")[0], 401)

    def test_metrics_with_wrong_token_is_401(self):
        self.assertEqual(self.kqd.https_get("/metrics", token="wrong")[0],
                         401)

    def test_metrics_with_the_prom_token_is_200(self):
        status, headers, body = self.kqd.https_get("/metrics",
                                                   token="tok-prom")
        self.assertEqual(status, 200, body[:300])
        self.assertTrue(headers["Content-Type"].startswith("text/plain"))
        self.assertIn("kueue_build_info", body)

    def test_probes_stay_open_without_token(self):
        for path in ("/healthz", "/readyz"):
            self.assertEqual(self.kqd.https_get(path)[0], 200, path)

    def test_visibility_api_needs_the_pending_workloads_roles(self):
        prefix = "/apis/visibility.kueue.x-k8s.io/v1beta2"
        team_a = f"{prefix}/namespaces/team-a/localqueues/lq/pendingworkloads"
        team_b = f"{prefix}/namespaces/team-b/localqueues/lq/pendingworkloads"
        cq = f"{prefix}/clusterqueues/cq/pendingworkloads"
        self.assertEqual(self.kqd.https_get(team_a)[0], 401)
        # alice's batch-user role has the LocalQueue view in team-a only.
        status, _, body = self.kqd.https_get(team_a, token="tok-alice")
        self.assertEqual(status, 200, body)
        self.assertEqual(self.kqd.https_get(team_b, token="tok-alice")[0],
                         403)
        self.assertEqual(self.kqd.https_get(cq, token="tok-alice")[0], 403)
        # Client certificates authenticate on the HTTP port too.
        status, _, body = self.kqd.https_get(cq,
                                             cert=self.fixture.certs["root"])
        self.assertEqual(status, 200, body)
        status, _, body = self.kqd.https_get(
            team_b, cert=self.fixture.certs["bob"])
        self.assertEqual(status, 200, body)

    def test_http_port_speaks_only_tls(self):
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.kqd.http_port}/healthz",
                    timeout=fx.CALL_TIMEOUT) as response:
                status = response.status
        except Exception as e:  # reset, bad status line, ...
            status = repr(e)
        self.assertNotEqual(status, 200)

    def test_prometheus_with_credentials_file_is_up_and_without_is_down(self):
        directory = self.fixture.dir
        credentials = os.path.join(directory, "prom-token")
        with open(credentials, "w") as f:
            f.write("tok-prom\n")
        config = os.path.join(directory, "prometheus.yml")
        target = f"127.0.0.1:{self.kqd.http_port}"
        tls = f"  tls_config: {{ca_file: {self.fixture.pki.root.crt}}}\n"
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                    "scrape_configs:\n"
                    "- job_name: kqd\n  scheme: https\n" + tls +
                    f"  authorization: {{credentials_file: {credentials}}}\n"
                    f"  static_configs: [{{targets: ['{target}']}}]\n"
                    "- job_name: kqd-anonymous\n  scheme: https\n" + tls +
                    f"  static_configs: [{{targets: ['{target}']}}]\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with open(os.path.join(directory, "prometheus.log"), "w") as log:
            prom = subprocess.Popen(fx.die_with_parent([
                "prometheus", f"--config.file={config}",
                f"--storage.tsdb.path={directory}/tsdb",
                f"--web.listen-address=127.0.0.1:{port}"]),
                stdout=log, stderr=subprocess.STDOUT)
        try:
            def targets():
                try:
                    with urllib.request.urlopen(
                            f"http://127.0.0.1:{port}/api/v1/targets",
                            timeout=5) as r:
                        active = json.loads(r.read())["data"]["activeTargets"]
                except OSError:
                    return None
                health = {t["labels"]["job"]: (t["health"], t["lastError"])
                          for t in active}
                if (health.get("kqd", ("unknown",))[0] != "unknown"
                        and health.get("kqd-anonymous",
                                       ("unknown",))[0] != "unknown"):
                    return health
                return None
            health = eventually(targets, timeout=30, interval=0.5)
            self.assertIsNotNone(health, "Prometheus scraped nothing")
            self.assertEqual(health["kqd"][0], "up", health)
            self.assertEqual(health["kqd-anonymous"][0], "down", health)
            self.assertIn("401", health["kqd-anonymous"][1])
        finally:
            prom.terminate()
            try:
                prom.wait(timeout=10)
            except subprocess.TimeoutExpired:
                prom.kill()
                prom.wait()


# ---- Test 19: kill -9 with auth on ---------------------------------------------------


class CrashSafetyTest(KqdTestCase):
    """20 rounds: alice submits, bob submits and cancels, runner-a
    heartbeats and finishes alice's even-numbered workloads, and kqd is
    killed with SIGKILL at a random moment. After each restart on the same
    data directory every acknowledged Submit, Cancel and Finish is there
    exactly once, the ClusterQueue is within quota, the owner rule and the
    policy hold, and SQLite's integrity check passes."""

    PREFIX = "crash"
    TEAM_QUOTA = "8"
    ROUNDS = 20

    def test_acknowledged_calls_survive_kill_9_with_auth_on(self):
        seed = int(os.environ.get("KQ_CRASH_SEED", time.time_ns() % 10**6))
        rng = random.Random(seed)
        lock = threading.Lock()
        acked = {"submit": set(), "cancel": set(), "finish": set()}
        to_run = collections.deque()
        owner_finishes = 0
        started = time.monotonic()

        def ack(kind, key):
            with lock:
                acked[kind].add(key)

        for round_ in range(self.ROUNDS):
            if round_ > 0:
                self.kqd.start()
            with self.subTest(round=round_, seed=seed):
                owner_finishes += self.check_after_restart(acked)
            stop = threading.Event()

            def alice_traffic(round_=round_):
                with self.kqd.caller(self.fixture.certs["alice"]) as alice:
                    i = 0
                    while not stop.is_set():
                        name = f"a-{round_}-{i}"
                        if alice.submit("team-a", name, cpu="1").ok:
                            ack("submit", ("team-a", name))
                            if i % 2 == 0:
                                with lock:
                                    to_run.append(name)
                        i += 1

            def bob_traffic(round_=round_):
                with self.kqd.caller(self.fixture.certs["bob"]) as bob:
                    i = 0
                    while not stop.is_set():
                        name = f"b-{round_}-{i}"
                        if bob.submit("team-b", name, cpu="1").ok:
                            ack("submit", ("team-b", name))
                            if bob.cancel("team-b", name).ok:
                                ack("cancel", ("team-b", name))
                        i += 1

            def runner_traffic():
                with self.kqd.caller(
                        self.fixture.certs["runner-a"]) as runner:
                    while not stop.is_set():
                        with lock:
                            name = to_run.popleft() if to_run else None
                        if name is None:
                            time.sleep(0.01)
                            continue
                        got = runner.get("team-a", name)
                        if (got.ok and condition_true(got.response.workload,
                                                      "Admitted")
                                and runner.heartbeat("team-a", name,
                                                     "runner-a").ok
                                and runner.finish("team-a", name).ok):
                            ack("finish", ("team-a", name))
                        elif not (got.ok and condition_true(
                                got.response.workload, "Finished")):
                            with lock:
                                to_run.append(name)
                            time.sleep(0.01)

            threads = [Background(alice_traffic, "alice"),
                       Background(bob_traffic, "bob"),
                       Background(runner_traffic, "runner-a")]
            time.sleep(rng.uniform(0.2, 0.9))
            self.kqd.kill()
            stop.set()
            for t in threads:
                t.join()
        self.kqd.start()
        owner_finishes += self.check_after_restart(acked)
        elapsed = time.monotonic() - started
        # The loop did what it claims.
        self.assertGreater(len(acked["submit"]), self.ROUNDS)
        self.assertGreater(len(acked["cancel"]), 0)
        self.assertGreater(len(acked["finish"]), 0)
        self.assertGreater(owner_finishes, 0, "the owner rule never ran")
        print(f"\ncrash loop (seed {seed}): {len(acked['submit'])} submits, "
              f"{len(acked['cancel'])} cancels, {len(acked['finish'])} "
              f"finishes acknowledged in {elapsed:.1f} s", file=sys.stderr)

    def check_after_restart(self, acked):
        """The checks after a restart; returns how many of alice's own
        workloads she heartbeat and finished herself (the owner rule)."""
        root = self.fixture.caller("root", keep=False)
        listed = self.assertOk(root.list("", include_finished=True)).workloads
        counts = collections.Counter((w.metadata.namespace, w.metadata.name)
                                     for w in listed)
        duplicates = [k for k, n in counts.items() if n != 1]
        self.assertEqual(duplicates, [])
        by_key = {(w.metadata.namespace, w.metadata.name): w for w in listed}
        lost = sorted(acked["submit"] - set(by_key))
        self.assertEqual(lost, [], "acknowledged submits lost")
        for key in acked["cancel"]:
            self.assertEqual(condition_reason(by_key[key], "Finished"),
                             "Cancelled", key)
        for key in acked["finish"]:
            self.assertTrue(condition_true(by_key[key], "Finished"), key)
        # No more quota reserved than the ClusterQueue has (8 cpu, no
        # cohort: nothing to borrow); every workload asks for 1 cpu.
        reserving = [k for k, w in by_key.items()
                     if condition_true(w, "QuotaReserved")
                     and not condition_true(w, "Finished")]
        self.assertLessEqual(len(reserving), 8, reserving)
        cq = self.assertOk(root.get_object("ClusterQueue", "cq")).object
        for flavor in cq.cluster_queue.status.flavors_reservation:
            for resource in flavor.resources:
                self.assertLessEqual(quantity(resource.total), 8, resource)

        # The recorded submitter survived: alice may run her odd-numbered
        # workloads (runner-a takes the even ones), bob may not.
        alice = self.fixture.caller("alice", keep=False)
        bob = self.fixture.caller("bob", keep=False)
        owned = 0
        for ns, name in reserving:
            if ns != "team-a" or int(name.rsplit("-", 1)[1]) % 2 == 0:
                continue
            self.assertDenied(bob.heartbeat(ns, name, "bob-runner"), "bob",
                              "run", "workloads", "team-a")
            if not condition_true(by_key[(ns, name)], "Admitted"):
                continue
            self.assertOk(alice.heartbeat(ns, name, "alice-launcher"))
            self.assertOk(alice.finish(ns, name))
            acked["finish"].add((ns, name))
            owned += 1
        # The policy came back with kqd.
        self.assertDenied(bob.list("team-a"), "bob", "list", "workloads",
                          "team-a")
        self.assertDenied(alice.list(""), "alice", "list", "workloads")

        db = os.path.join(self.kqd.data, "kq.db")
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True,
                             timeout=10) as conn:
            self.assertEqual(conn.execute("PRAGMA integrity_check").fetchall(),
                             [("ok",)])
        conn.close()
        for c in (root, alice, bob):
            c.close()
        return owned


def quantity(text):
    if text.endswith("m"):
        return int(text[:-1]) / 1000
    return float(text or 0)


if __name__ == "__main__":
    fx.BIN = sys.argv.pop(1)
    unittest.main()
