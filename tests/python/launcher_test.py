"""A launcher's life against a real kqd: admitted, preempted by a
higher-priority workload, stopped, requeued, re-admitted, finished -- while
a resumable watch checks from the event stream that the ClusterQueue never
holds more than its nominal quota. Then the example launcher."""

import collections
import os
import subprocess
import sys
import threading
import unittest

import grpc

import kq
from kqtest import (DEADLINE, LAUNCHER_EXAMPLE, Background, Kqd,
                    die_with_parent, eventually, quantity)

NS = "team"
# Quota for exactly one workload of 4 cpu; a higher priority preempts.
CONFIG = [
    kq.resource_flavor("default", node_labels={"pool": "a"}),
    kq.cluster_queue("cq", {"default": {"cpu": "4"}},
                     preemption={"within_cluster_queue": "LowerPriority"}),
    kq.local_queue(NS, "lq", "cq"),
    kq.priority_class("low", 100),
    kq.priority_class("high", 1000),
]
MARKER = "audit-end"


def holds_quota(wl):
    # A finished workload keeps status.admission, as in Kueue, but no
    # quota.
    return wl.status.HasField("admission") and not kq.is_finished(wl)


class QuotaAuditor:
    """Follows every event from revision 0 with a resumable watch and, at
    the end of each revision, sums what the workloads holding quota in
    ClusterQueue "cq" use, per flavor and resource, against the nominal
    quota the ClusterQueue's own events give. Stops at the
    WorkloadPriorityClass MARKER, which the test applies last."""

    def __init__(self, client):
        self.stream = client.watch(from_revision=0, resume=True)
        self.nominal = {}
        self.usage_by_workload = {}
        self.violations = []
        self.peak = collections.Counter()
        self.revisions = 0
        # Workload name -> revisions at which it started / stopped holding
        # quota.
        self.took = collections.defaultdict(list)
        self.released = collections.defaultdict(list)
        self._worker = Background(self._run, name="quota-auditor")

    def _run(self):
        current = None
        for event in self.stream:
            if current is not None and event.revision != current:
                self._check(current)
            current = event.revision
            which = event.WhichOneof("object")
            if which == "config_object":
                kind = event.config_object.WhichOneof("kind")
                obj = getattr(event.config_object, kind)
                if kind == "cluster_queue" and obj.metadata.name == "cq":
                    self._set_nominal(obj)
                if (kind == "workload_priority_class" and
                        obj.metadata.name == MARKER):
                    self._check(current)
                    self.stream.cancel()
                    return
            elif which == "workload":
                self._apply(event)

    def _set_nominal(self, cq):
        self.nominal = {}
        for group in cq.spec.resource_groups:
            for flavor in group.flavors:
                for r in flavor.resources:
                    self.nominal[(flavor.name, r.name)] = quantity(
                        r.nominal_quota)

    def _apply(self, event):
        wl = event.workload
        name = wl.metadata.name
        had = name in self.usage_by_workload
        admission = wl.status.admission
        if (event.type != kq.queue_service_pb2.WatchEvent.DELETED and
                holds_quota(wl) and admission.cluster_queue == "cq"):
            usage = collections.Counter()
            for psa in admission.pod_set_assignments:
                for resource, amount in psa.resource_usage.items():
                    usage[(psa.flavors[resource], resource)] += quantity(amount)
            self.usage_by_workload[name] = usage
            if not had:
                self.took[name].append(event.revision)
        elif had:
            del self.usage_by_workload[name]
            self.released[name].append(event.revision)

    def _check(self, revision):
        self.revisions += 1
        total = collections.Counter()
        for usage in self.usage_by_workload.values():
            total.update(usage)
        for key, amount in total.items():
            self.peak[key] = max(self.peak[key], amount)
            if amount > self.nominal.get(key, 0):
                self.violations.append(
                    (revision, key, amount, sorted(self.usage_by_workload)))

    def finish(self, client):
        client.apply([kq.priority_class(MARKER, 1)])
        self._worker.join()
        return self


class LauncherTest(unittest.TestCase):

    def setUp(self):
        self.kqd = Kqd(eviction_grace="5s")
        self.addCleanup(self.kqd.close)
        self.kqd.start()
        self.client = kq.Client(self.kqd.target)
        self.addCleanup(self.client.close)
        self.client.apply(CONFIG)

    def workload(self, name):
        return self.client.get_workload(NS, name).workload

    def test_preempted_launcher_stops_requeues_and_finishes(self):
        auditor = QuotaAuditor(self.client)
        self.addCleanup(auditor.stream.cancel)
        admitted = threading.Event()
        may_confirm = threading.Event()
        confirmed = threading.Event()
        seen = {}
        pending = []

        def launcher():
            launch = kq.Launch(
                self.client,
                kq.workload("low", NS, "lq", {"cpu": "4"},
                            priority_class="low"),
                runner_id="runner-low", lease=3, poll=1,
                on_pending=pending.append)
            with launch as run:
                seen["cluster_queue"] = run.admission.cluster_queue
                seen["flavors"] = dict(
                    run.admission.pod_set_assignments[0].flavors)
                seen["node_labels"] = [dict(f.node_labels)
                                       for p in run.placements
                                       for f in p.flavors]
                admitted.set()
                seen["told_to_stop"] = run.wait_stop(DEADLINE)
                # The job takes a moment to stop (while the test looks at
                # the victim); until it confirms, the preemptor must not
                # get the quota.
                may_confirm.wait(DEADLINE)
                seen["preemptor_before_confirm"] = self.workload("high")
            seen["evicted"] = launch.evicted
            seen["confirmation"] = launch.confirmation
            seen["stop_response"] = launch.stop_response
            confirmed.set()
            # Back in the queue: re-admitted once the preemptor finishes.
            with launch as run:
                seen["admissions"] = run.admissions
            return launch.result

        runner = Background(launcher, name="launcher")
        self.assertTrue(admitted.wait(DEADLINE))
        self.assertEqual(seen["cluster_queue"], "cq")
        self.assertEqual(seen["flavors"], {"cpu": "default"})
        self.assertEqual(seen["node_labels"], [{"pool": "a"}])

        high = self.client.submit_workload(
            kq.workload("high", NS, "lq", {"cpu": "4"}, priority_class="high"))
        # The victim keeps its quota until its runner confirms the stop.
        self.assertFalse(holds_quota(high.workload))
        low = self.workload("low")
        evicted = kq.condition(low, "Evicted")
        self.assertEqual((evicted.status, evicted.reason),
                         ("True", "Preempted"))
        self.assertTrue(holds_quota(low))
        self.assertTrue(low.status.HasField("stop_deadline"))
        may_confirm.set()

        self.assertTrue(confirmed.wait(DEADLINE + 10))
        self.assertTrue(seen["told_to_stop"])
        self.assertTrue(seen["stop_response"].stop)
        self.assertFalse(holds_quota(seen["preemptor_before_confirm"]),
                         seen["preemptor_before_confirm"])
        self.assertTrue(seen["evicted"])
        self.assertFalse(holds_quota(seen["confirmation"].workload))

        self.assertTrue(
            eventually(lambda: kq.is_admitted(self.workload("high"))))
        low = self.workload("low")
        self.assertFalse(holds_quota(low))
        self.assertEqual(kq.condition(low, "Requeued").status, "True")
        self.assertEqual(kq.condition(low, "Preempted").reason,
                         "InClusterQueue")
        # The waiting launcher hears why it waits and where it stands.
        self.assertTrue(eventually(lambda: pending))
        self.assertTrue(pending[0].reason)
        self.assertEqual(pending[0].position, 0)

        self.client.finish_workload(NS, "high", succeeded=True)
        result = runner.join(DEADLINE + 10)
        self.assertEqual(seen["admissions"], 2)
        self.assertTrue(kq.is_finished(result))
        self.assertEqual(kq.condition(result, "Finished").reason, "Succeeded")
        self.assertEqual(kq.condition(self.workload("low"), "Finished").reason,
                         "Succeeded")

        auditor.finish(self.client)
        self.assertEqual(auditor.violations, [])
        # The audit saw the queue full, and who held it when.
        self.assertEqual(auditor.peak[("default", "cpu")], 4)
        # The preemptor got the quota in the commit that released the
        # victim's, after the victim was told to stop.
        self.assertEqual(len(auditor.took["high"]), 1)
        self.assertEqual(auditor.took["high"][0], auditor.released["low"][0])
        self.assertGreater(auditor.released["low"][0],
                           seen["stop_response"].workload.metadata.revision)
        self.assertEqual(len(auditor.took["low"]), 2)
        self.assertGreaterEqual(auditor.took["low"][1],
                                auditor.released["high"][0])

    def test_wait_ends_when_the_workload_is_cancelled(self):
        self.client.submit_workload(
            kq.workload("blocker", NS, "lq", {"cpu": "4"}))
        launch = kq.Launch(self.client,
                           kq.workload("waiter", NS, "lq", {"cpu": "1"}),
                           lease=3, poll=1)
        waiting = Background(launch.wait_admitted, name="waiter")
        eventually(lambda: self._exists("waiter"))
        self.client.cancel_workload(NS, "waiter")
        with self.assertRaises(kq.NotAdmitted) as caught:
            waiting.join()
        self.assertEqual(caught.exception.outcome, "FINISHED")
        self.assertTrue(launch.finished)

    def test_failing_block_finishes_failed(self):
        launch = kq.Launch(self.client,
                           kq.workload("broken", NS, "lq", {"cpu": "1"}),
                           lease=3)
        with self.assertRaises(ZeroDivisionError):
            with launch:
                1 / 0
        wl = self.workload("broken")
        finished = kq.condition(wl, "Finished")
        self.assertEqual(finished.reason, "Failed")
        self.assertIn("ZeroDivisionError", finished.message)

    def test_lost_quota_stops_the_run(self):
        launch = kq.Launch(self.client,
                           kq.workload("lost", NS, "lq", {"cpu": "1"}),
                           lease=3)
        with launch as run:
            self.client.cancel_workload(NS, "lost")
            self.assertTrue(run.wait_stop(DEADLINE))
            self.assertIsNotNone(run.lost)
            self.assertIn(run.lost.code, (grpc.StatusCode.FAILED_PRECONDITION,
                                          grpc.StatusCode.NOT_FOUND))
        self.assertEqual(kq.condition(self.workload("lost"), "Finished").reason,
                         "Cancelled")

    def test_loop_runs_the_body_again_after_an_operator_preemption(self):
        rounds = []

        def body(run):
            rounds.append(run.admissions)
            if run.admissions == 1:
                self.client.preempt(NS, "looped", message="maintenance")
                self.assertTrue(run.wait_stop(DEADLINE))
                run.check_stop()  # raises Stopped; the loop confirms

        launch = kq.Launch(self.client,
                           kq.workload("looped", NS, "lq", {"cpu": "1"}),
                           lease=3)
        result = Background(lambda: launch.loop(body), name="loop").join()
        self.assertEqual(rounds, [1, 2])
        self.assertEqual(kq.condition(result, "Finished").reason, "Succeeded")
        requeued = kq.condition(result, "Requeued")
        self.assertEqual((requeued.status, requeued.reason),
                         ("True", "Preempted"))
        self.assertEqual(requeued.message, "Preempted by operator: maintenance")

    def _exists(self, name):
        try:
            self.workload(name)
            return True
        except kq.KqError:
            return False


class ExampleLauncherTest(unittest.TestCase):

    def setUp(self):
        self.kqd = Kqd(eviction_grace="5s")
        self.addCleanup(self.kqd.close)
        self.kqd.start()
        self.client = kq.Client(self.kqd.target)
        self.addCleanup(self.client.close)
        self.client.apply(CONFIG)

    def launcher(self, name, *command, extra=()):
        return subprocess.Popen(
            die_with_parent(
                [sys.executable, LAUNCHER_EXAMPLE, "--server",
                 self.kqd.target, "--queue", "lq", "--namespace", NS,
                 "--name", name, "--request", "cpu=1", "--lease", "3",
                 "--grace", "10", *extra, "--", *command]),
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run_launcher(self, name, *command):
        proc = self.launcher(name, *command)
        output, _ = proc.communicate(timeout=60)
        return proc.returncode, output

    def finished_reason(self, name):
        wl = self.client.get_workload(NS, name).workload
        return kq.condition(wl, "Finished").reason

    def test_exit_status_and_finish_reason(self):
        status, output = self.run_launcher("fails", "/bin/sh", "-c", "exit 3")
        self.assertEqual(status, 3, output)
        self.assertEqual(self.finished_reason("fails"), "Failed")

        status, output = self.run_launcher("succeeds", "true")
        self.assertEqual(status, 0, output)
        self.assertEqual(self.finished_reason("succeeds"), "Succeeded")

    def test_environment_describes_the_admission(self):
        status, output = self.run_launcher(
            "env", "/bin/sh", "-c",
            'test "$KQ_WORKLOAD" = team/env && test "$KQ_CLUSTER_QUEUE" = cq '
            '&& test "$KQ_FLAVORS" = main:cpu=default '
            '&& test "$KQ_NODE_LABELS" = pool=a')
        self.assertEqual(status, 0, output)

    def test_evicted_command_is_stopped_and_run_again(self):
        marker = os.path.join(self.kqd.dir, "first-run")
        proc = self.launcher(
            "evicted", "/bin/sh", "-c",
            f'if [ -e {marker} ]; then exit 0; fi; touch {marker}; '
            'exec sleep 120')
        try:
            self.assertTrue(eventually(lambda: os.path.exists(marker)))
            self.client.preempt(NS, "evicted", message="maintenance")
            output, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self.assertEqual(proc.returncode, 0, output)
        self.assertIn("stopped; waiting to be admitted again", output)
        self.assertEqual(self.finished_reason("evicted"), "Succeeded")


if __name__ == "__main__":
    unittest.main(verbosity=2)
