#!/usr/bin/python3
"""kq.Client's credentials against a fake kqd in this process.

The fake (AdminService and QueueService answering from memory) serves
plaintext, TLS, or TLS that asks for and verifies client certificates, with
certificates from tests/testing/make_test_pki.sh, and records what each call
brought: the bearer token, the impersonation metadata and the verified
client certificate's common name. Every path of the client (retried reads,
calls sent once, futures, watches with and without resume, Admit) must
carry them; wrong CAs, names, options and files must fail, the last ones
before anything is sent.
"""

import concurrent.futures
import os
import tempfile
import threading
import time
import unittest

import grpc

import kq
import kqtest
from kq.v1 import admin_service_pb2
from kq.v1 import admin_service_pb2_grpc
from kq.v1 import queue_service_pb2
from kq.v1 import queue_service_pb2_grpc



class Recorder:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = []

    def record(self, method, context):
        metadata = context.invocation_metadata()
        auth = context.auth_context() or {}
        cn = auth.get("x509_common_name", [b""])
        call = {
            "method": method,
            "authorization": [v for k, v in metadata if k == "authorization"],
            "user": [v for k, v in metadata if k == "impersonate-user"],
            "groups": [v for k, v in metadata if k == "impersonate-group"],
            "cn": cn[0].decode() if cn else "",
        }
        with self.lock:
            self.calls.append(call)

    def methods(self):
        with self.lock:
            return [c["method"] for c in self.calls]


def test_workload():
    return kq.workload("w", "team-a", "lq", requests={"cpu": "1"})


class FakeAdmin(admin_service_pb2_grpc.AdminServiceServicer):
    def __init__(self, recorder):
        self.recorder = recorder

    def Apply(self, request, context):
        self.recorder.record("Apply", context)
        return admin_service_pb2.ApplyResponse()

    def ListObjects(self, request, context):
        self.recorder.record("ListObjects", context)
        return admin_service_pb2.ListObjectsResponse(revision=7)


class FakeQueue(queue_service_pb2_grpc.QueueServiceServicer):
    def __init__(self, recorder):
        self.recorder = recorder

    def SubmitWorkload(self, request, context):
        self.recorder.record("SubmitWorkload", context)
        return queue_service_pb2.SubmitWorkloadResponse(
            workload=request.workload)

    def GetWorkload(self, request, context):
        self.recorder.record("GetWorkload", context)
        return queue_service_pb2.GetWorkloadResponse(workload=test_workload())

    def Admit(self, request, context):
        self.recorder.record("Admit", context)
        return queue_service_pb2.AdmitResponse(
            outcome=queue_service_pb2.AdmitResponse.ADMITTED,
            workload=test_workload())

    def Watch(self, request, context):
        self.recorder.record("Watch", context)
        yield queue_service_pb2.WatchEvent(revision=request.from_revision + 1,
                                           workload=test_workload())
        while context.is_active():
            time.sleep(0.01)


PLAINTEXT, TLS, MUTUAL_TLS = "plaintext", "tls", "mtls"


class CredentialsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="kq-py-pki-")
        cls.pki = kqtest.make_pki(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.recorder = Recorder()
        self.server = None

    def tearDown(self):
        if self.server is not None:
            self.server.stop(None)

    def file(self, name):
        return os.path.join(self.pki, name)

    def read(self, name):
        with open(self.file(name), "rb") as f:
            return f.read()

    def start(self, transport, cert="server"):
        self.server = grpc.server(
            concurrent.futures.ThreadPoolExecutor(max_workers=8))
        admin_service_pb2_grpc.add_AdminServiceServicer_to_server(
            FakeAdmin(self.recorder), self.server)
        queue_service_pb2_grpc.add_QueueServiceServicer_to_server(
            FakeQueue(self.recorder), self.server)
        if transport == PLAINTEXT:
            self.port = self.server.add_insecure_port("127.0.0.1:0")
        else:
            # Python's server either asks for no client certificate or
            # requires one (kqd asks and verifies one that is sent).
            credentials = grpc.ssl_server_credentials(
                [(self.read(cert + ".key"), self.read(cert + ".crt"))],
                root_certificates=self.read("ca.crt"),
                require_client_auth=transport == MUTUAL_TLS)
            self.port = self.server.add_secure_port("127.0.0.1:0",
                                                    credentials)
        self.server.start()

    def client(self, host="127.0.0.1", **kwargs):
        return kq.Client(f"{host}:{self.port}", timeout=5.0,
                         retry_initial_backoff=0.01, retry_max_backoff=0.05,
                         retry_budget=1.0, **kwargs)

    def call_every_path(self, client):
        client.list_objects("ClusterQueue")
        client.apply([kq.resource_flavor("default")])
        client.submit_workload(test_workload())
        client.submit_workload_async(test_workload()).result(timeout=10)
        client.get_workload("team-a", "w")
        client.wait_admitted("team-a", "w", timeout=5)
        with client.watch(from_revision=1) as stream:
            next(iter(stream))
        with client.watch(resume=True) as stream:
            next(iter(stream))

    EVERY_PATH = ["ListObjects", "Apply", "SubmitWorkload", "SubmitWorkload",
                  "GetWorkload", "Admit", "Watch", "ListObjects", "Watch"]

    def test_token_over_tls_on_every_path(self):
        self.start(TLS)
        with self.client(ca=self.file("ca.crt"), token="alice-token") as c:
            self.call_every_path(c)
        self.assertEqual(self.recorder.methods(), self.EVERY_PATH)
        for call in self.recorder.calls:
            self.assertEqual(call["authorization"], ["Bearer alice-token"],
                             call)
            self.assertEqual(call["user"], [], call)

    def test_client_certificate_on_every_path(self):
        self.start(MUTUAL_TLS)
        with self.client(ca=self.file("ca.crt"), cert=self.file("alice.crt"),
                         key=self.file("alice.key")) as c:
            self.call_every_path(c)
        self.assertEqual(self.recorder.methods(), self.EVERY_PATH)
        for call in self.recorder.calls:
            self.assertEqual(call["cn"], "alice", call)
            self.assertEqual(call["authorization"], [], call)

    def test_pem_bytes_token_file_and_impersonation(self):
        self.start(MUTUAL_TLS)
        token_file = self.file("shim-token")
        with open(token_file, "w") as f:
            f.write("shim-token\n")
        with self.client(host="localhost", ca=self.read("ca.crt"),
                         cert=self.read("admin.crt"),
                         key=self.read("admin.key"), token_file=token_file,
                         impersonate_user="alice",
                         impersonate_groups=["team-a",
                                             "system:authenticated"]) as c:
            self.call_every_path(c)
        self.assertEqual(self.recorder.methods(), self.EVERY_PATH)
        for call in self.recorder.calls:
            self.assertEqual(call["authorization"], ["Bearer shim-token"])
            self.assertEqual(call["user"], ["alice"])
            self.assertEqual(call["groups"],
                             ["team-a", "system:authenticated"])
            self.assertEqual(call["cn"], "admin")

    def test_token_over_plaintext_to_loopback(self):
        self.start(PLAINTEXT)
        with self.client(token="local-token") as c:
            self.call_every_path(c)
        for call in self.recorder.calls:
            self.assertEqual(call["authorization"], ["Bearer local-token"])

    def test_no_credentials_send_no_metadata(self):
        self.start(PLAINTEXT)
        with self.client() as c:
            self.call_every_path(c)
        for call in self.recorder.calls:
            self.assertEqual(call["authorization"], [])
            self.assertEqual(call["user"], [])

    def test_token_to_another_host_in_plaintext_is_refused(self):
        for kwargs in ({"token": "s3cret"}, {"token_file": "/dev/null"}):
            with self.assertRaises(kq.KqError) as e:
                kq.Client("kqd.invalid:7070", **kwargs)
            self.assertEqual(e.exception.code,
                             grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("kqd.invalid:7070", e.exception.message)
            self.assertIn("--tls-ca", e.exception.message)

    def test_options_that_do_not_fit_together(self):
        ca = self.file("ca.crt")
        cases = [
            ({"ca": ca, "cert": self.file("alice.crt")}, "needs its key"),
            ({"ca": ca, "key": self.file("alice.key")},
             "needs its certificate"),
            ({"cert": self.file("alice.crt"), "key": self.file("alice.key")},
             "only over TLS"),
            ({"server_name": "kqd.test"}, "needs TLS"),
            ({"token": "a", "token_file": "/t"}, "not both"),
            ({"token": "two words"}, "has spaces"),
            ({"impersonate_groups": ["g"]}, "needs a user"),
        ]
        for kwargs, want in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(kq.KqError) as e:
                    kq.Client("127.0.0.1:1", **kwargs)
                self.assertEqual(e.exception.code,
                                 grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(want, e.exception.message)

    def test_unreadable_files_are_named(self):
        missing = self.file("missing")
        cases = [
            ({"ca": missing}, f'cannot read the TLS CA file "{missing}": '
                              "No such file or directory"),
            ({"ca": self.file("ca.crt"), "cert": missing,
              "key": self.file("alice.key")},
             f'cannot read the client certificate file "{missing}"'),
            ({"ca": self.file("ca.crt"), "cert": self.file("alice.crt"),
              "key": missing}, f'cannot read the client key file "{missing}"'),
            ({"ca": self.file("ca.crt"), "cert": self.file("alice.crt"),
              "key": self.file("alice.crt")},
             f'the client key file "{self.file("alice.crt")}" holds no PEM '
             "private key"),
            ({"ca": self.file("alice.key")},
             f'the TLS CA file "{self.file("alice.key")}" holds no PEM '
             "certificate"),
            ({"token_file": missing},
             f'cannot read the token file "{missing}"'),
        ]
        for kwargs, want in cases:
            with self.subTest(kwargs=kwargs):
                with self.assertRaises(kq.KqError) as e:
                    kq.Client("127.0.0.1:1", **kwargs)
                self.assertEqual(e.exception.code,
                                 grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(want, e.exception.message)

    def test_server_of_another_ca_is_refused(self):
        self.start(TLS)
        with self.client(ca=self.file("rogue-ca.crt"), token="s3cret") as c:
            with self.assertRaises(kq.KqError) as e:
                c.list_objects("ClusterQueue")
        self.assertEqual(e.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.recorder.calls, [])

    def test_server_name_must_match_or_be_overridden(self):
        self.start(TLS, cert="other-name")
        with self.client(ca=self.file("ca.crt")) as c:
            with self.assertRaises(kq.KqError) as e:
                c.list_objects("ClusterQueue")
        self.assertEqual(e.exception.code, grpc.StatusCode.UNAVAILABLE)
        with self.client(ca=self.file("ca.crt"), server_name="kqd.test") as c:
            self.assertEqual(c.list_objects("ClusterQueue").revision, 7)
        self.assertEqual(self.recorder.methods(), ["ListObjects"])

    def test_untrusted_client_certificate_fails_the_handshake(self):
        self.start(MUTUAL_TLS)
        with self.client(ca=self.file("ca.crt"), cert=self.file("rogue.crt"),
                         key=self.file("rogue.key")) as c:
            with self.assertRaises(kq.KqError) as e:
                c.list_objects("ClusterQueue")
        self.assertEqual(e.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(self.recorder.calls, [])

    def test_token_file_is_reread_and_kept_while_broken(self):
        from kq.client import _TokenFile
        path = self.file("rotating")
        with open(path, "w") as f:
            f.write("first\n")
        tokens = _TokenFile(path, refresh=0)
        self.assertEqual(tokens.get(), "first")
        with open(path, "w") as f:
            f.write("second")
        self.assertEqual(tokens.get(), "second")
        os.remove(path)
        self.assertEqual(tokens.get(), "second")
        with open(path, "w") as f:
            f.write("third")
        kept = _TokenFile(path, refresh=3600)
        self.assertEqual(kept.get(), "third")
        with open(path, "w") as f:
            f.write("fourth")
        self.assertEqual(kept.get(), "third")


class LoopbackTest(unittest.TestCase):
    def test_loopback_targets(self):
        for target in ["127.0.0.1:7070", "127.1.2.3:1", "localhost:1",
                       "LOCALHOST", "[::1]:1", "::1", "dns:///localhost:1",
                       "dns://8.8.8.8/127.0.0.1:1",
                       "ipv4:127.0.0.1:1,127.0.0.2:2", "ipv6:[::1]:1",
                       "unix:/run/kq.sock", "unix-abstract:kq",
                       "[::ffff:127.0.0.1]:1"]:
            self.assertTrue(kq.is_loopback_target(target), target)

    def test_other_targets(self):
        for target in ["10.0.0.1:7070", "kqd.example.com:1", "kqd:1",
                       "[::2]:1", "128.0.0.1:1", "dns:///kqd:1",
                       "ipv4:127.0.0.1:1,10.0.0.1:1", "xds:///kqd",
                       "localhost.example.com:1", "ipv4:", ""]:
            self.assertFalse(kq.is_loopback_target(target), target)


if __name__ == "__main__":
    unittest.main(verbosity=2)
