#!/usr/bin/python3
"""The Python client against a real kqd that serves TLS and authorizes
(issue 30): a test CA (tests/testing/make_test_pki.sh), kqd with
--tls-cert, --tls-key, --client-ca, --token-file and --authz-file, and
kq.Client over mutual TLS and with a bearer token: submit, get, watch (with
resume) and the launcher's Admit and Heartbeat as alice in her namespace;
refusals without a certificate, with another CA's, outside her namespace,
and in plaintext."""

import hashlib
import os
import subprocess
import sys
import tempfile
import unittest

import grpc

import kq
import kqtest

BINDINGS = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: admins}
subjects: [{kind: Group, name: admins}]
roleRef: {kind: ClusterRole, name: kueue-batch-admin-role}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: team-a-users, namespace: team-a}
subjects: [{kind: Group, name: team-a}]
roleRef: {kind: ClusterRole, name: kueue-batch-user-role}
"""

TOKEN = "py-e2e-token-3f9a1c"


class TlsKqdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kq-py-tls-")
        cls.pki = os.path.join(cls.tmp.name, "pki")
        kqtest.make_pki(cls.pki)
        bindings = os.path.join(cls.tmp.name, "bindings.yaml")
        with open(bindings, "w") as f:
            f.write(BINDINGS)
        tokens = os.path.join(cls.tmp.name, "tokens")
        with open(tokens, "w") as f:
            digest = hashlib.sha256(TOKEN.encode()).hexdigest()
            f.write(f"sha256:{digest} robot team-a\n")
        cls.kqd = kqtest.Kqd(
            extra_args=[f"--tls-cert={cls.file('server.crt')}",
                        f"--tls-key={cls.file('server.key')}",
                        f"--client-ca={cls.file('ca.crt')}",
                        f"--token-file={tokens}",
                        f"--authz-file={bindings}"],
            client_kwargs=cls.as_person("admin")).start()
        with kq.Client(cls.kqd.target, **cls.as_person("admin")) as admin:
            admin.apply([
                kq.resource_flavor("default"),
                kq.cluster_queue("cq", {"default": {"cpu": "8"}}),
                kq.local_queue("team-a", "q", "cq"),
                kq.local_queue("team-b", "q", "cq"),
            ])

    @classmethod
    def tearDownClass(cls):
        cls.kqd.close()
        cls.tmp.cleanup()

    @classmethod
    def file(cls, name):
        return os.path.join(cls.pki, name)

    @classmethod
    def as_person(cls, person):
        return {"ca": cls.file("ca.crt"), "cert": cls.file(f"{person}.crt"),
                "key": cls.file(f"{person}.key")}

    def alice(self, **kwargs):
        return kq.Client(self.kqd.target, timeout=10.0,
                         **self.as_person("alice"), **kwargs)

    def test_submit_get_and_watch_as_alice(self):
        with self.alice() as alice:
            with alice.watch(namespace="team-a", resume=True) as stream:
                events = iter(stream)
                response = alice.submit_workload(
                    kq.workload("py-1", "team-a", "q", requests={"cpu": "1"}))
                self.assertEqual(response.workload.metadata.name, "py-1")
                got = alice.get_workload("team-a", "py-1").workload
                self.assertTrue(kq.is_admitted(got))
                seen = next(e for e in events
                            if e.WhichOneof("object") == "workload"
                            and e.workload.metadata.name == "py-1")
                self.assertEqual(seen.workload.metadata.namespace, "team-a")
            listed = alice.list_workloads(namespace="team-a")
            self.assertIn("py-1",
                          [w.metadata.name for w in listed.workloads])
            future = alice.submit_workload_async(
                kq.workload("py-async", "team-a", "q", requests={"cpu": "1"}))
            self.assertEqual(future.result(timeout=kqtest.DEADLINE)
                             .workload.metadata.name, "py-async")

    def test_launch_as_alice(self):
        with self.alice() as alice:
            wl = kq.workload("py-launch", "team-a", "q", requests={"cpu": "1"})
            with kq.Launch(alice, wl, lease=10) as run:
                self.assertEqual(run.admission.cluster_queue, "cq")
            done = alice.get_workload("team-a", "py-launch").workload
            self.assertTrue(kq.is_finished(done))

    @unittest.skipUnless(kqtest.LAUNCHER_EXAMPLE, "no KQ_LAUNCHER_EXAMPLE")
    def test_example_launcher_over_mutual_tls(self):
        done = subprocess.run(
            kqtest.die_with_parent(
                [sys.executable, kqtest.LAUNCHER_EXAMPLE, "--server",
                 self.kqd.target, "--tls-ca", self.file("ca.crt"), "--cert",
                 self.file("alice.crt"), "--key", self.file("alice.key"),
                 "--queue", "q", "--namespace", "team-a", "--name",
                 "py-example", "--request", "cpu=1", "--", "true"]),
            capture_output=True, text=True, timeout=60)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        with self.alice() as alice:
            self.assertTrue(kq.is_finished(
                alice.get_workload("team-a", "py-example").workload))

    def test_token_over_tls(self):
        with kq.Client(f"localhost:{self.kqd.port}", ca=self.file("ca.crt"),
                       token=TOKEN) as robot:
            robot.submit_workload(
                kq.workload("py-token", "team-a", "q", requests={"cpu": "1"}))
            self.assertTrue(kq.is_admitted(
                robot.get_workload("team-a", "py-token").workload))

    def test_alice_is_refused_outside_her_namespace(self):
        with self.alice() as alice:
            with self.assertRaises(kq.KqError) as e:
                alice.submit_workload(
                    kq.workload("py-b", "team-b", "q", requests={"cpu": "1"}))
        self.assertEqual(e.exception.code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn('user "alice" cannot create resource "workloads" in the '
                      'namespace "team-b"', e.exception.message)
        self.assertIn("groups: team-a, system:authenticated",
                      e.exception.message)

    def test_refused_without_a_certificate(self):
        with kq.Client(self.kqd.target, ca=self.file("ca.crt"),
                       retry_budget=0) as nobody:
            with self.assertRaises(kq.KqError) as e:
                nobody.list_workloads(namespace="team-a")
            self.assertEqual(e.exception.code,
                             grpc.StatusCode.UNAUTHENTICATED)
            with self.assertRaises(kq.KqError) as e:
                next(iter(nobody.watch(namespace="team-a")))
            self.assertEqual(e.exception.code,
                             grpc.StatusCode.UNAUTHENTICATED)

    def test_refused_handshakes(self):
        cases = {
            "another CA's certificate": {
                "ca": self.file("ca.crt"), "cert": self.file("rogue.crt"),
                "key": self.file("rogue.key")},
            "a CA that did not sign kqd's": {"ca": self.file("rogue-ca.crt")},
            "plaintext": {},
        }
        for name, kwargs in cases.items():
            with self.subTest(name):
                with kq.Client(self.kqd.target, timeout=5.0, retry_budget=0,
                               **kwargs) as c:
                    with self.assertRaises(kq.KqError) as e:
                        c.list_workloads(namespace="team-a")
                self.assertEqual(e.exception.code,
                                 grpc.StatusCode.UNAVAILABLE)


if __name__ == "__main__":
    unittest.main(verbosity=2)
