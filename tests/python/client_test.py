"""kq.Client: kqd's errors as they are, which calls are retried, and a
resumable watch cut in the middle of a revision."""

import threading
import unittest
from concurrent import futures

import grpc

import kq
from kq.v1 import queue_service_pb2, queue_service_pb2_grpc
from kqtest import DEADLINE, Background, Kqd, event_key

NS = "team"


class ErrorMappingTest(unittest.TestCase):
    """Against a real kqd: the code and message kqd chose reach the caller
    unchanged."""

    @classmethod
    def setUpClass(cls):
        cls.kqd = Kqd()
        try:
            cls.kqd.start()
        except BaseException:
            cls.kqd.close()
            raise
        cls.client = kq.Client(cls.kqd.target)
        cls.client.apply([
            kq.resource_flavor("default"),
            kq.cluster_queue("cq", {"default": {"cpu": "4"}}),
            kq.local_queue(NS, "lq", "cq"),
        ])

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.kqd.close()

    def assertKqError(self, code, fn, *args, **kwargs):
        with self.assertRaises(kq.KqError) as caught:
            fn(*args, **kwargs)
        self.assertEqual(caught.exception.code, code, str(caught.exception))
        return caught.exception.message

    def test_templates_as_json_text(self):
        text = '{"spec": {"containers": [{"name": "c", "image": "i"}]}}'
        wl = kq.workload("text", NS, "lq", {"cpu": "100m"})
        wl.spec.pod_sets[0].template_json = text
        submitted = self.client.submit_workload(wl, templates_as_json=True)
        self.assertEqual(submitted.workload.spec.pod_sets[0].template_json,
                         text)
        # Unasked, answers carry the Struct.
        got = self.client.get_workload(NS, "text")
        self.assertEqual(got.workload.spec.pod_sets[0].template_json, "")
        self.assertEqual(
            got.workload.spec.pod_sets[0].template["spec"]["containers"][0]
            ["image"], "i")
        for answer in (
                self.client.get_workload(NS, "text", templates_as_json=True)
                .workload,
                self.client.admit(NS, "text", timeout=0.001,
                                  templates_as_json=True).workload,
                self.client.simulate(namespace=NS, name="text",
                                     templates_as_json=True).workload):
            self.assertEqual(answer.spec.pod_sets[0].template_json, text)
        listed = self.client.list_workloads(NS, templates_as_json=True)
        self.assertIn(text, [w.spec.pod_sets[0].template_json
                             for w in listed.workloads])
        bad = kq.workload("bad", NS, "lq", {"cpu": "100m"})
        bad.spec.pod_sets[0].template_json = "[1]"
        message = self.assertKqError(grpc.StatusCode.INVALID_ARGUMENT,
                                     self.client.submit_workload, bad)
        self.assertEqual(message, "spec.podSets[0].templateJson: must be a "
                         "JSON object (a PodTemplateSpec), not an array")

    def test_not_found(self):
        message = self.assertKqError(grpc.StatusCode.NOT_FOUND,
                                     self.client.get_workload, NS, "missing")
        self.assertEqual(message, 'Workload "team/missing" not found')
        self.assertKqError(grpc.StatusCode.NOT_FOUND, self.client.get_object,
                           "ClusterQueue", "missing")

    def test_invalid_argument_names_the_field(self):
        message = self.assertKqError(
            grpc.StatusCode.INVALID_ARGUMENT, self.client.apply,
            [kq.resource_flavor("other"),
             kq.cluster_queue("bad", {"other": {"cpu": "lots"}})])
        self.assertIn('objects[1] (ClusterQueue "bad"): '
                      "spec.resourceGroups[0].flavors[0].resources[0]"
                      ".nominalQuota:", message)
        # Nothing of a rejected Apply is stored.
        self.assertKqError(grpc.StatusCode.NOT_FOUND, self.client.get_object,
                           "ResourceFlavor", "other")

        message = self.assertKqError(
            grpc.StatusCode.INVALID_ARGUMENT, self.client.submit_workload,
            kq.workload("neg", NS, "lq", {"cpu": "1"}, count=-1))
        self.assertIn("spec.podSets[0].count:", message)

    def test_pending_workloads(self):
        # 5 cpu never fit in 4: both stay pending, in submission order.
        for name in ("wait-1", "wait-2"):
            self.client.submit_workload(
                kq.workload(name, NS, "lq", {"cpu": "5"}))
        page = self.client.pending_workloads(namespace=NS, local_queue="lq")
        names = [p.metadata.name for p in page.items]
        self.assertEqual(names[names.index("wait-1"):][:2],
                         ["wait-1", "wait-2"])
        second = page.items[names.index("wait-2")]
        self.assertEqual(second.local_queue_name, "lq")
        self.assertEqual(
            second.position_in_local_queue,
            page.items[names.index("wait-1")].position_in_local_queue + 1)
        message = self.assertKqError(
            grpc.StatusCode.INVALID_ARGUMENT, self.client.pending_workloads,
            cluster_queue="cq", limit=100001)
        self.assertEqual(message, "limit: must be at most 100000")
        message = self.assertKqError(
            grpc.StatusCode.NOT_FOUND, self.client.pending_workloads,
            cluster_queue="missing")
        self.assertEqual(message, 'ClusterQueue "missing" not found')

    def test_already_exists_and_failed_precondition(self):
        self.client.submit_workload(kq.workload("once", NS, "lq", {"cpu": "1"}))
        message = self.assertKqError(
            grpc.StatusCode.ALREADY_EXISTS, self.client.submit_workload,
            kq.workload("once", NS, "lq", {"cpu": "1"}))
        self.assertEqual(message, 'Workload "team/once" already exists')
        self.assertKqError(grpc.StatusCode.FAILED_PRECONDITION,
                           self.client.heartbeat, NS, "once", "r",
                           stopped=True)

    def test_submissions_in_flight_from_one_thread(self):
        futures = [self.client.submit_workload_async(
            kq.workload(f"async-{i}", NS, "lq", {"cpu": "10m"}))
            for i in range(200)]
        bad = self.client.submit_workload_async(
            kq.workload("async-neg", NS, "lq", {"cpu": "1"}, count=-1))
        names = [f.result(timeout=60).workload.metadata.name for f in futures]
        self.assertEqual(names, [f"async-{i}" for i in range(200)])
        again = self.client.submit_workload_async(
            kq.workload("async-0", NS, "lq", {"cpu": "10m"}))
        with self.assertRaises(kq.KqError) as caught:
            again.result(timeout=60)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.ALREADY_EXISTS)
        with self.assertRaises(kq.KqError) as caught:
            bad.result(timeout=60)
        self.assertEqual(caught.exception.code,
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("spec.podSets[0].count:", caught.exception.message)
        listed = {w.metadata.name
                  for w in self.client.list_workloads(NS).workloads}
        self.assertTrue(set(names) <= listed)

    def test_multikueue_objects(self):
        check = kq.objects_pb2.AdmissionCheck()
        check.metadata.name = "mk-check"
        check.spec.controller_name = "kueue.x-k8s.io/multikueue"
        check.spec.parameters.api_group = "kueue.x-k8s.io"
        check.spec.parameters.kind = "MultiKueueConfig"
        check.spec.parameters.name = "mk"
        self.client.apply([
            kq.multikueue_config("mk", ["worker1"]),
            kq.multikueue_cluster("worker1", "/etc/kq/workers/worker1.yaml"),
            check,
        ])
        stored = self.client.get_object("MultiKueueConfig", "mk")
        self.assertEqual(list(stored.multi_kueue_config.spec.clusters),
                         ["worker1"])
        self.assertEqual(stored.multi_kueue_config.spec.quota_management,
                         "Manual")
        cluster = self.client.get_object("MultiKueueCluster", "worker1")
        active = cluster.multi_kueue_cluster.status.conditions[0]
        # Not connected yet, or (once kqd's MultiKueue controller looked)
        # a contexts file that does not exist.
        self.assertEqual((active.type, active.status), ("Active", "False"))
        self.assertIn(active.reason,
                      ("ClientConnectionFailed", "BadKubeConfig"))
        # No worker has connected: the check has no usable cluster.
        ac = self.client.get_object("AdmissionCheck", "mk-check")
        self.assertEqual(ac.admission_check.status.conditions[0].reason,
                         "NoUsableClusters")
        with self.assertRaises(kq.KqError):
            self.client.apply(
                [kq.multikueue_cluster("worker2", "relative/worker2.yaml")])

    def test_provisioning_config_and_pod_set_updates(self):
        from kq.v1 import objects_pb2, workload_pb2
        config = objects_pb2.ProvisioningRequestConfig()
        config.metadata.name = "prov"
        config.spec.provisioning_class_name = (
            "check-capacity.autoscaling.x-k8s.io")
        check = objects_pb2.AdmissionCheck()
        check.metadata.name = "prov-check"
        check.spec.controller_name = "kueue.x-k8s.io/provisioning-request"
        check.spec.parameters.api_group = "kueue.x-k8s.io"
        check.spec.parameters.kind = "ProvisioningRequestConfig"
        check.spec.parameters.name = "prov"
        cq = kq.cluster_queue("checked", {"default": {"cpu": "4"}})
        cq.spec.admission_checks.add(name="prov-check")
        self.client.apply([config, check, cq,
                           kq.local_queue(NS, "checked-lq", "checked")])
        stored = self.client.get_object("ProvisioningRequestConfig", "prov")
        self.assertEqual(
            stored.provisioning_request_config.spec.provisioning_class_name,
            "check-capacity.autoscaling.x-k8s.io")
        # kqd fills in Kueue's retry defaults.
        self.assertEqual(stored.provisioning_request_config.spec
                         .retry_strategy.backoff_limit_count, 3)

        self.client.submit_workload(
            kq.workload("gated", NS, "checked-lq", {"cpu": "1"}))
        update = workload_pb2.PodSetUpdate(name="main")
        update.annotations[
            "autoscaling.x-k8s.io/consume-provisioning-request"] = "pr-1"
        wl = self.client.set_admission_check_state(
            NS, "gated", "prov-check", "Ready", pod_set_updates=[update])
        got = [c for c in wl.status.admission_checks if c.name == "prov-check"]
        self.assertEqual(got[0].state, "Ready")
        self.assertEqual(
            dict(got[0].pod_set_updates[0].annotations),
            {"autoscaling.x-k8s.io/consume-provisioning-request": "pr-1"})

    def test_error_text(self):
        error = kq.KqError(grpc.StatusCode.NOT_FOUND, "x not found")
        self.assertEqual(str(error), "NOT_FOUND: x not found")


class FakeQueue(queue_service_pb2_grpc.QueueServiceServicer):
    """Answers GetWorkload and CancelWorkload with UNAVAILABLE `failures`
    times, and serves Watch from EVENTS, cutting the first stream after
    `cut_after` events."""

    EVENTS = [(1, "a"), (2, "b"), (2, "c"), (2, "d"), (3, "e")]

    def __init__(self, failures=0, cut_after=None, cut_code=None):
        self.failures = failures
        self.calls = []
        self.watch_from = []
        self.cut_after = cut_after
        self.cut_code = cut_code or grpc.StatusCode.UNAVAILABLE
        self.lock = threading.Lock()

    def _maybe_fail(self, name, context):
        with self.lock:
            self.calls.append(name)
            if self.failures > 0:
                self.failures -= 1
                context.abort(grpc.StatusCode.UNAVAILABLE, "try later")

    def GetWorkload(self, request, context):
        self._maybe_fail("GetWorkload", context)
        response = queue_service_pb2.GetWorkloadResponse()
        response.workload.metadata.name = request.name
        return response

    def CancelWorkload(self, request, context):
        self._maybe_fail("CancelWorkload", context)
        return queue_service_pb2.CancelWorkloadResponse()

    def Watch(self, request, context):
        with self.lock:
            self.watch_from.append(request.from_revision)
            first = len(self.watch_from) == 1
        sent = 0
        for revision, name in self.EVENTS:
            if revision <= request.from_revision:
                continue
            if first and self.cut_after is not None and sent == self.cut_after:
                context.abort(self.cut_code, "stream cut")
            event = queue_service_pb2.WatchEvent(
                type=queue_service_pb2.WatchEvent.ADDED, revision=revision)
            event.workload.metadata.namespace = NS
            event.workload.metadata.name = name
            yield event
            sent += 1
        while context.is_active():
            threading.Event().wait(0.05)


class FakeServerTest(unittest.TestCase):

    def serve(self, servicer):
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        queue_service_pb2_grpc.add_QueueServiceServicer_to_server(
            servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        client = kq.Client(f"127.0.0.1:{port}", timeout=DEADLINE,
                           retry_initial_backoff=0.01, retry_max_backoff=0.05,
                           retry_budget=DEADLINE)
        self.addCleanup(client.close)
        return client

    def test_idempotent_calls_are_retried_while_unavailable(self):
        fake = FakeQueue(failures=2)
        client = self.serve(fake)
        self.assertEqual(client.get_workload(NS, "w").workload.metadata.name,
                         "w")
        self.assertEqual(fake.calls, ["GetWorkload"] * 3)

    def test_other_calls_are_not_retried(self):
        fake = FakeQueue(failures=1)
        client = self.serve(fake)
        with self.assertRaises(kq.KqError) as caught:
            client.cancel_workload(NS, "w")
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(caught.exception.message, "try later")
        self.assertEqual(fake.calls, ["CancelWorkload"])

    def collect(self, stream, count):
        def take():
            events = []
            for event in stream:
                events.append(event_key(event))
                if len(events) == count:
                    break
            return events
        try:
            return Background(take, name="watcher").join()
        finally:
            stream.cancel()

    def test_resume_cut_inside_a_revision(self):
        # Cut after a, b: revision 2 was half delivered.
        fake = FakeQueue(cut_after=2)
        client = self.serve(fake)
        stream = client.watch(from_revision=0, resume=True)
        events = self.collect(stream, 5)
        self.assertEqual([(e[0], e[4]) for e in events], FakeQueue.EVENTS)
        # Resumed from the revision before the one cut, skipping b.
        self.assertEqual(fake.watch_from, [0, 1])
        self.assertEqual(stream.progress.reconnects, 1)

    def test_resume_cut_between_revisions(self):
        fake = FakeQueue(cut_after=4, cut_code=grpc.StatusCode.CANCELLED)
        client = self.serve(fake)
        stream = client.watch(from_revision=0, resume=True)
        events = self.collect(stream, 5)
        self.assertEqual([(e[0], e[4]) for e in events], FakeQueue.EVENTS)
        self.assertEqual(fake.watch_from, [0, 1])

    def test_without_resume_the_cut_is_an_error(self):
        fake = FakeQueue(cut_after=2)
        client = self.serve(fake)
        stream = client.watch(from_revision=0)
        self.assertEqual(next(stream).workload.metadata.name, "a")
        self.assertEqual(next(stream).workload.metadata.name, "b")
        with self.assertRaises(kq.KqError) as caught:
            next(stream)
        self.assertEqual(caught.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(caught.exception.message, "stream cut")

    def test_out_of_range_is_not_resumed(self):
        fake = FakeQueue(cut_after=0, cut_code=grpc.StatusCode.OUT_OF_RANGE)
        client = self.serve(fake)
        stream = client.watch(from_revision=0, resume=True)
        with self.assertRaises(kq.KqError) as caught:
            next(stream)
        self.assertEqual(caught.exception.code, grpc.StatusCode.OUT_OF_RANGE)
        self.assertEqual(fake.watch_from, [0])


if __name__ == "__main__":
    unittest.main(verbosity=2)
