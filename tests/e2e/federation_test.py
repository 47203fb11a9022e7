#!/usr/bin/env python3
"""kq federation end to end: the twelve scenarios of federation.md section
5.6 with one MultiKueue manager and three worker kqds on loopback, each
its own process, port and data directory (federation_fixture.py).

The manager reaches every worker through a userspace TCP proxy of its own
(the MultiKueueClusters' contexts files name the proxy ports), so a
partition is a black-holed proxy. Timings are the scenarios' short ones:
workerLostTimeout 8s, gcInterval 2s, the Incremental round 3s; workers
send bookmarks every 1 s and a silent stream counts as lost after 4 s.

kq's design differs from the scenarios' text in one respect throughout:
runners attach on the manager (logs/federation-contract.md), so the fake
agent of worker W watches the manager for workloads admitted with
status.clusterName W, runs them there and finishes them there; an eviction
anywhere reaches it as Heartbeat's stop. Every scenario ends with the
shared checks: no two overlapping runs of one workload, every workload
finished exactly once, and no copy left on any worker.

Not covered: the `fencing: Lease` variants of scenarios 7 and 10 (not
implemented yet), scenario 5's writes of nominatedClusterNames (kq has no
API writing them yet), and scenario 10's second manager (a copy of another
origin is made with FederationService directly instead).

Usage: federation_test.py BIN_DIR   (PYTHONPATH holds the built kq package)
"""

import sys
import time
import unittest

import grpc

import kq
import federation_fixture as fx
from federation_fixture import (C_BOUND, C_DELETED, C_EVICTED, CLUSTER,
                                DEADLINE, EPOCH, EVICTED, MESSAGE, NAMESPACE,
                                NOMINATED, STATE, WORKERS, eventually)

ADMITTED_ON = 'The workload was admitted on "{}"'
EVICTED_ON_WORKER = ('Workload evicted on worker cluster: "{}", resetting '
                     'for re-admission. Previously: "Ready"')
REMOTE_LOST = 'Admitting remote lost, Previously: "Ready"'
RESET = "Reset to Pending after eviction. Previously: Retry"
INCREMENTAL = "kueue.x-k8s.io/multikueue-dispatcher-incremental"


class FederationTest(unittest.TestCase):
    """One federation for the whole file; each scenario sets the quotas it
    needs and uses workload names of its own."""

    @classmethod
    def setUpClass(cls):
        cls.fed = fx.Federation().start(
            worker_cpu={"w1": 0, "w2": 4, "w3": 0}, manager_cpu=4)
        if not eventually(cls.fed.connected):
            cls.fed.close()
            raise AssertionError("workers never connected")

    @classmethod
    def tearDownClass(cls):
        cls.fed.close()

    def setUp(self):
        self.names = []
        self.started = time.monotonic()

    def tearDown(self):
        print(f"{self.id()}: {time.monotonic() - self.started:.1f}s",
              file=sys.stderr)

    # ---- helpers ------------------------------------------------------------

    def layout(self, w1, w2, w3, manager=None):
        """Sets the workers' cpu quotas, and the manager's to their sum."""
        for worker, cpu in zip(WORKERS, (w1, w2, w3)):
            self.fed.set_worker_cpu(worker, cpu)
        self.fed.set_manager_cpu(w1 + w2 + w3 if manager is None else manager)

    def submit(self, name, cpu=2, duration=None, priority_class=None):
        if duration is not None:
            self.fed.durations[name] = duration
        self.names.append(name)
        return self.fed.submit(name, cpu, priority_class)

    def uid(self, name):
        return self.fed.get(name).metadata.uid

    def history(self, name):
        return [snap for _, snap in self.fed.recorder.states(name)]

    def saw(self, name, predicate, timeout=DEADLINE):
        found = eventually(lambda: self.fed.recorder.saw(name, predicate),
                           timeout)
        if not found:
            self.fail(f"{name} never reached the state; history:\n" +
                      "\n".join(map(str, self.history(name))) +
                      self.fed.diagnostics())
        return found

    def running_on(self, name, worker, timeout=DEADLINE):
        """Waits until an agent runs `name`; asserts it is `worker`'s."""
        found = eventually(lambda: self.runs(name), timeout)
        self.assertTrue(found, f"{name} never started\n"
                        f"{self.fed.diagnostics()}")
        self.assertEqual(found[0][2], worker, found)

    def states_after_ready(self, name):
        """The check states recorded from the first Ready on."""
        history = self.history(name)
        first = next(i for i, snap in enumerate(history)
                     if snap[STATE] == "Ready")
        return {snap[STATE] for snap in history[first:]}

    def saw_retry(self, name, message, timeout=DEADLINE):
        """The check went Retry with `message`, and the manager evicted the
        workload for it. kq commits the Retry and the eviction it causes in
        one batch, so a watcher may see only the eviction, whose message
        quotes the check's."""
        return self.saw(name, lambda s: s[EVICTED] == (
            "AdmissionCheck", 'Evicted due to AdmissionCheck in Retry state: '
            f'"mk" ({message})'), timeout)

    def runs(self, name):
        return self.fed.log.runs().get(self.uid(name), [])

    def wait_finished(self, name, timeout=DEADLINE):
        wl = eventually(lambda: self.fed.finished(name), timeout)
        self.assertTrue(wl, f"{name} not finished:\n" +
                        "\n".join(map(str, self.history(name))) +
                        self.fed.diagnostics())
        return wl

    def no_copies_left(self, names, timeout=DEADLINE):
        left = eventually(lambda: not any(
            self.fed.where(n) for n in names), timeout)
        self.assertTrue(left, {n: self.fed.where(n) for n in names})

    def check_runs(self, names=None, overlap_allowed=False):
        """The shared checks: each workload finished once (by an agent),
        no overlapping runs, no run of an unbound copy, no copy left."""
        names = names or self.names
        for name in names:
            self.wait_finished(name)
        uids = {self.uid(n): n for n in names}
        overlaps = [o for o in self.fed.log.overlaps() if o[0] in uids]
        if not overlap_allowed:
            self.assertEqual(overlaps, [], self.fed.log.lines)
        for uid, name in uids.items():
            self.assertEqual(self.fed.log.finished[uid], 1,
                             f"{name} finished {self.fed.log.finished[uid]} "
                             "times by agents")
        for agent in self.fed.agents.values():
            self.assertEqual([n for n in agent.unbound if n in names], [],
                             f"{agent.worker} ran unbound copies")
        self.no_copies_left(names)
        return overlaps

    def copy_history(self, worker, name):
        return [snap for _, snap in
                self.fed.copy_recorders[worker].states(name)]

    def first_copy_time(self, worker, name, predicate):
        found = self.fed.copy_recorders[worker].saw(name, predicate)
        return found[0] if found else None

    def admitted_total(self, cluster):
        return self.fed.manager.metric(
            "kueue_multikueue_workloads_admitted_total", cluster=cluster)

    def dispatched_total(self):
        return self.fed.manager.metric(
            "kueue_multikueue_workloads_dispatched_total")

    def wait_active(self, worker, status, timeout=DEADLINE):
        got = eventually(lambda: (self.fed.cluster_active(worker)
                                  if self.fed.cluster_active(worker)[0] ==
                                  status else None), timeout, interval=0.2)
        self.assertTrue(got, f"{worker} Active never {status}: "
                        f"{self.fed.cluster_active(worker)}")
        return got

    def restart_manager(self, config=None, env=None):
        if config is not None:
            self.fed.manager.set_config(config)
        self.fed.manager.restart(env=env)
        self.assertTrue(eventually(self.fed.connected),
                        self.fed.diagnostics())

    # ---- 1 ------------------------------------------------------------------

    def test_01_all_at_once_one_winner(self):
        """w1 and w3 have no quota, w2 4 cpu; one 2-cpu workload. kq: the
        runner finishes on the manager (so the reason and message are the
        agent's), and the manager then deletes w2's copy."""
        self.layout(0, 4, 0)
        dispatched = self.dispatched_total()
        admitted = self.admitted_total("w2")
        self.submit("s1")
        self.saw("s1", lambda s: s[NOMINATED] == ("w1", "w2", "w3"))
        self.saw("s1", lambda s: s[STATE] == "Ready" and
                 s[MESSAGE] == ADMITTED_ON.format("w2") and
                 s[CLUSTER] == "w2" and s[NOMINATED] == ())
        # clusterName and nominations are never both set.
        for snap in self.history("s1"):
            self.assertFalse(snap[CLUSTER] and snap[NOMINATED], snap)
        self.running_on("s1", "w2")
        wl = self.wait_finished("s1")
        finished = kq.condition(wl, "Finished")
        self.assertEqual(finished.message, "done on w2")
        self.assertEqual(self.dispatched_total() - dispatched, 3)
        self.assertEqual(self.admitted_total("w2") - admitted, 1)
        # The losers' copies were gone before w2's was bound.
        bound = self.first_copy_time("w2", "s1", lambda c: c[C_BOUND])
        self.assertIsNotNone(bound, self.copy_history("w2", "s1"))
        for loser in ("w1", "w3"):
            gone = self.first_copy_time(loser, "s1", lambda c: c[C_DELETED])
            self.assertIsNotNone(gone, self.copy_history(loser, "s1"))
            self.assertLess(gone, bound + 0.2, (loser, gone, bound))
        self.check_runs()

    # ---- 2 ------------------------------------------------------------------

    def test_02_double_admission(self):
        """Every worker 4 cpu; ten 2-cpu workloads at once. (The forced
        client retries of the dispatch calls are scenario 3's replayed
        Upsert.)"""
        self.layout(4, 4, 4)
        names = [f"s2-{i}" for i in range(10)]
        for name in names:
            self.submit(name, duration=1.5)
        self.check_runs(names)
        for name in names:
            clusters = {s[CLUSTER] for s in self.history(name) if s[CLUSTER]}
            self.assertEqual(len(clusters), 1, (name, self.history(name)))
            runs = self.runs(name)
            self.assertEqual(len(runs), 1, runs)
            self.assertEqual(runs[0][2], clusters.pop())
            # The winner's copy was admitted on its worker.
            worker = runs[0][2]
            self.assertTrue(any(c[C_BOUND] for c in
                                self.copy_history(worker, name)))
        # No worker held more than its quota: every copy admitted there at
        # the same time fitted in 4 cpu (the workers enforce it; this
        # asserts the copies' reservations were released for the next).
        for worker in WORKERS:
            self.assertEqual(self.fed.copies(worker), [])

    # ---- 3 ------------------------------------------------------------------

    def test_03_quota_reserved_is_not_a_win(self):
        """w1 4 cpu behind an extra check `ext` that stays Pending, w2 and w3
        no quota. kq: `ext` is set Ready with SetAdmissionCheckState on w1,
        as its controller would."""
        fed = self.fed
        fed.workers["w1"].apply(
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: AdmissionCheck\n"
            "metadata: {name: ext}\nspec: {controllerName: example.com/ext}\n")
        fed.set_worker_cpu("w1", 4, checks=["ext"])
        fed.set_worker_cpu("w2", 0)
        fed.set_worker_cpu("w3", 0)
        fed.set_manager_cpu(4)
        try:
            self.submit("s3")
            reserved = eventually(lambda: [
                c for c in fed.copies("w1", "s3")
                if kq.condition(c, "QuotaReserved") is not None and
                kq.condition(c, "QuotaReserved").status == "True"])
            self.assertTrue(reserved, fed.copies("w1", "s3"))
            self.assertFalse(kq.is_admitted(reserved[0]))
            time.sleep(2)
            self.assertEqual(fx.check_state(fed.get("s3"))[0], "Pending")
            self.assertEqual(fed.where("s3"), ["w1", "w2", "w3"])
            # A replayed dispatch (the manager's Upsert sent again) changes
            # nothing: still one copy, the same one.
            wl = fed.get("s3")
            before = fed.copies("w2", "s3")[0]
            replay = fed.upsert_foreign("w2", "s3", origin="multikueue",
                                        uid=wl.metadata.uid,
                                        epoch=wl.status.multikueue.epoch,
                                        workload=wl)
            self.assertEqual(replay.code, 0, replay)
            after = fed.copies("w2", "s3")
            self.assertEqual(len(after), 1)
            self.assertEqual(after[0].metadata.uid, before.metadata.uid)
            fed.workers["w1"].client().set_admission_check_state(
                NAMESPACE, "s3", "ext", "Ready")
            self.saw("s3", lambda s: s[MESSAGE] == ADMITTED_ON.format("w1"))
            bound = self.first_copy_time("w1", "s3", lambda c: c[C_BOUND])
            for loser in ("w2", "w3"):
                gone = self.first_copy_time(loser, "s3",
                                            lambda c: c[C_DELETED])
                self.assertIsNotNone(gone, self.copy_history(loser, "s3"))
                self.assertLess(gone, bound + 0.2)
            self.running_on("s3", "w1")
            self.check_runs()
        finally:
            fed.set_worker_cpu("w1", 0)

    # ---- 4 ------------------------------------------------------------------

    def test_04_incremental(self):
        """Incremental, stepSize 1, round 3s, w1 and w2 without quota, w3
        free. Then the same with the manager killed (-9) at t=4s: the
        persisted round start holds, w3 is nominated at about 6s."""
        fed = self.fed
        self.layout(0, 0, 4)
        self.restart_manager(fx.manager_config(INCREMENTAL))
        try:
            self.submit("s4")
            t0 = self.saw("s4", lambda s: s[NOMINATED] == ("w1",))[0]
            time.sleep(1)
            self.assertEqual(fed.where("s4"), ["w1"])
            t1 = self.saw("s4", lambda s: s[NOMINATED] == ("w1", "w2"))[0]
            t2 = self.saw("s4",
                          lambda s: s[NOMINATED] == ("w1", "w2", "w3"))[0]
            self.assertAlmostEqual(t1 - t0, 3, delta=1.2)
            self.assertAlmostEqual(t2 - t0, 6, delta=1.5)
            self.saw("s4", lambda s: s[CLUSTER] == "w3" and s[NOMINATED] == ()
                     and s[MESSAGE] == ADMITTED_ON.format("w3"))
            self.running_on("s4", "w3")
            self.check_runs(["s4"])

            self.submit("s4-kill")
            t0 = self.saw("s4-kill", lambda s: s[NOMINATED] == ("w1",))[0]
            self.saw("s4-kill", lambda s: s[NOMINATED] == ("w1", "w2"))
            time.sleep(max(0, t0 + 4 - time.monotonic()))
            fed.manager.kill()
            fed.manager.start()
            t2 = self.saw("s4-kill",
                          lambda s: s[NOMINATED] == ("w1", "w2", "w3"))[0]
            # A fresh round would nominate w3 3s after the restart, 7s or
            # later.
            self.assertLess(t2 - t0, 6.9, self.fed.recorder.states("s4-kill"))
            self.running_on("s4-kill", "w3")
            self.check_runs(["s4-kill"])
        finally:
            self.restart_manager(fx.manager_config())

    # ---- 5 ------------------------------------------------------------------

    def test_05_external_dispatcher(self):
        """dispatcherName example.com/pin: the manager waits for an external
        controller's nominatedClusterNames and copies to no worker before.
        The rest of the scenario (writing the nominations, the immutable
        clusterName) needs an API kq does not have yet."""
        fed = self.fed
        self.layout(4, 0, 0)
        self.restart_manager(fx.manager_config("example.com/pin"))
        try:
            fed.submit("s5")
            time.sleep(3)
            wl = fed.get("s5")
            self.assertEqual(fx.check_state(wl)[0], "Pending")
            self.assertEqual(list(wl.status.nominated_cluster_names), [])
            self.assertEqual(fed.where("s5"), [])
            fed.manager.client().cancel_workload(NAMESPACE, "s5")
        finally:
            self.restart_manager(fx.manager_config())
        self.no_copies_left(["s5"])

    def test_05b_external_dispatcher_nominations(self):
        """The external controller nominates [w3], then [w1], with w3 full
        and w1 free (AdminService.SetNominatedClusters): w3's copy, then
        w1's in its place; admitted on w1, any further nomination is
        refused with Kueue's message, and so is a repeated name."""
        fed = self.fed
        self.layout(4, 0, 0)
        self.restart_manager(fx.manager_config("example.com/pin"))
        client = fed.manager.client()
        try:
            fed.submit("s5b")
            self.saw("s5b", lambda s: s[STATE] == "Pending")
            with self.assertRaises(kq.KqError) as refused:
                client.set_nominated_clusters(NAMESPACE, "s5b", ["w1", "w1"])
            self.assertIn('Duplicate value: "w1"', str(refused.exception))
            client.set_nominated_clusters(NAMESPACE, "s5b", ["w3"])
            self.assertTrue(eventually(lambda: fed.where("s5b") == ["w3"]),
                            fed.where("s5b"))
            client.set_nominated_clusters(NAMESPACE, "s5b", ["w1"])
            self.saw("s5b", lambda s: s[CLUSTER] == "w1" and
                     s[STATE] == "Ready")
            self.assertTrue(eventually(lambda: fed.where("s5b") == ["w1"]),
                            fed.where("s5b"))
            with self.assertRaises(kq.KqError) as refused:
                client.set_nominated_clusters(NAMESPACE, "s5b", ["w3"])
            self.assertIn("clusterName and nominatedClusterNames are "
                          "mutually exclusive", str(refused.exception))
            client.cancel_workload(NAMESPACE, "s5b")
        finally:
            self.restart_manager(fx.manager_config())
        self.no_copies_left(["s5b"])

    # ---- 6 ------------------------------------------------------------------

    def test_06_worker_frozen_shorter_than_timeout(self):
        """w2 runs the workload; SIGSTOP w2 for 5s, then SIGCONT."""
        fed = self.fed
        self.layout(0, 4, 0)
        self.submit("s6", duration=14)
        self.running_on("s6", "w2")
        admitted = self.admitted_total("w2")
        fed.workers["w2"].pause()
        frozen = time.monotonic()
        try:
            status, reason, message = self.wait_active("w2", "False", 8)
        finally:
            time.sleep(max(0, 5 - (time.monotonic() - frozen)))
            fed.workers["w2"].cont()
        self.assertEqual(reason, "ClientConnectionFailed")
        self.assertIn("; connection attempts: ", message)
        self.assertIn(", next connection attempt: ", message)
        self.wait_active("w2", "True")
        self.assertEqual(fed.cluster_active("w2"), ("True", "Active",
                                                     "Connected"))
        self.check_runs()
        self.assertEqual(self.states_after_ready("s6"), {"Ready"},
                         self.history("s6"))
        self.assertEqual(len(self.runs("s6")), 1)
        self.assertEqual(self.admitted_total("w2"), admitted)

    # ---- 7 ------------------------------------------------------------------

    def test_07_worker_frozen_longer_than_timeout(self):
        """SIGSTOP w2 for 20s while it runs the workload. kq: the runner is
        on the manager, so the manager's eviction stops it (Heartbeat says
        stop) before the workload is dispatched again: no overlap even
        without lease fencing."""
        fed = self.fed
        self.layout(0, 4, 0)
        self.submit("s7", duration=60)
        self.running_on("s7", "w2")
        self.layout(4, 4, 4)
        epoch = fed.get("s7").status.multikueue.epoch
        fed.workers["w2"].pause()
        frozen = time.monotonic()
        try:
            lost = self.saw_retry("s7", REMOTE_LOST, timeout=25)
            self.assertGreater(lost[0] - frozen, 7.5)
            self.saw("s7", lambda s: s[STATE] == "Pending" and
                     s[MESSAGE] == RESET)
            again = self.saw("s7", lambda s: s[CLUSTER] in ("w1", "w3") and
                             s[STATE] == "Ready")[1]
            self.assertGreater(again[EPOCH], epoch, self.history("s12"))
            self.assertTrue(eventually(lambda: len(self.runs("s7")) == 2))
            runs = self.runs("s7")
            self.assertEqual(runs[0][4], "stopped")
            self.assertIn(runs[1][2], ("w1", "w3"))
        finally:
            time.sleep(max(0, 20 - (time.monotonic() - frozen)))
            fed.workers["w2"].cont()
        # The stale copy goes within gcInterval and a reconcile of the
        # reconnect, which Kueue's backoff (5s, 10s, 20s) may put up to 20s
        # after SIGCONT.
        self.wait_active("w2", "True", 45)
        self.no_copies_left_on("w2", "s7", 2 + 6)
        self.check_runs()
        self.layout(0, 4, 0)

    def no_copies_left_on(self, worker, name, timeout):
        self.assertTrue(eventually(lambda: not self.fed.copies(worker, name),
                                   timeout),
                        self.copy_history(worker, name))

    @unittest.skip("fencing: Lease is not implemented yet")
    def test_07b_worker_frozen_lease_fencing(self):
        pass

    # ---- 8 ------------------------------------------------------------------

    def test_08_worker_killed_and_restarted(self):
        """kill -9 w2 while it runs the workload; restart it within the
        timeout. kq: the runner on the manager keeps running; w2 reloads
        the bound copy and the manager resumes its watch, so no Retry."""
        fed = self.fed
        self.layout(0, 4, 0)
        self.submit("s8", duration=10)
        self.running_on("s8", "w2")
        fed.workers["w2"].kill()
        time.sleep(1)
        fed.workers["w2"].start()
        self.wait_active("w2", "True")
        copy = eventually(lambda: fed.copies("w2", "s8"))
        self.assertTrue(copy and copy[0].status.remote.bound, copy)
        self.check_runs()
        self.assertEqual(self.states_after_ready("s8"), {"Ready"},
                         self.history("s8"))
        self.assertEqual(len(self.runs("s8")), 1)

    # ---- 9 ------------------------------------------------------------------

    def test_09_manager_killed_mid_dispatch(self):
        """The manager kills itself (KQ_FAILPOINT) (a) after the copies'
        Upserts, (b) after committing w2 as the winner, before the losers'
        deletions are sent, (c) before Bind is sent; restarted without the
        variable each time."""
        fed = self.fed
        self.layout(0, 4, 0)
        for point in ("federation-after-upsert",
                      "federation-after-winner-commit",
                      "federation-before-bind"):
            with self.subTest(point=point):
                name = "s9-" + point.split("-", 1)[1]
                self.restart_manager(env={"KQ_FAILPOINT": point})
                try:
                    self.submit(name)
                except kq.KqError as e:
                    # The manager may die before answering.
                    self.assertEqual(e.code, grpc.StatusCode.UNAVAILABLE)
                code = fed.manager.wait_exit()
                self.assertEqual(code, -9, fed.manager.log_tail())
                fed.manager.start()
                self.assertTrue(eventually(fed.connected))
                self.running_on(name, "w2")
                self.check_runs([name])
                self.assertEqual(len(self.runs(name)), 1)

    # ---- 10 -----------------------------------------------------------------

    def test_10_partition_healed(self):
        """Black-hole the proxy to w2 for 4s, then (another workload) for
        15s. A copy of another origin on w2 is untouched throughout. kq:
        the runner finishes on the manager, so no status made during the
        outage has to cross the partition."""
        fed = self.fed
        self.layout(0, 4, 0)
        foreign = fed.upsert_foreign("w2", "s10-foreign")
        self.assertEqual(foreign.code, 0, foreign)
        try:
            self.submit("s10a", duration=12)
            self.running_on("s10a", "w2")
            fed.proxies["w2"].black_hole()
            holed = time.monotonic()
            try:
                self.wait_active("w2", "False", 10)
            finally:
                time.sleep(max(0, 4 - (time.monotonic() - holed)))
                fed.proxies["w2"].heal()
            self.wait_active("w2", "True")
            self.check_runs(["s10a"])
            self.assertEqual(self.states_after_ready("s10a"), {"Ready"},
                             self.history("s10a"))

            self.submit("s10b", duration=60)
            self.running_on("s10b", "w2")
            self.layout(4, 4, 4)
            fed.proxies["w2"].black_hole()
            holed = time.monotonic()
            try:
                self.saw_retry("s10b", REMOTE_LOST, timeout=15)
                self.saw("s10b", lambda s: s[CLUSTER] in ("w1", "w3") and
                         s[STATE] == "Ready")
            finally:
                time.sleep(max(0, 15 - (time.monotonic() - holed)))
                fed.proxies["w2"].heal()
            self.wait_active("w2", "True", 45)
            self.no_copies_left_on("w2", "s10b", 2 + 6)
            self.check_runs(["s10b"])
            self.assertEqual([c.status.remote.origin for c in
                              fed.copies("w2", "s10-foreign")], ["other"])
        finally:
            fed.delete_foreign("w2", "s10-foreign")
            self.layout(0, 4, 0)

    def test_10b_partition_lease_fencing(self):
        """fencing: Lease (a kq extension). Black-hole the proxy to w2, where
        the workload runs, for 15s: w2 hears no renewal and stops its copy
        itself (Evicted, reason ManagerLost, deactivated) before the
        manager gives up on w2 at workerLostTimeout (8s) and dispatches the
        workload elsewhere; after the heal the stale copy goes."""
        fed = self.fed
        self.layout(0, 4, 0)
        self.restart_manager(fx.manager_config(fencing="Lease"))
        try:
            self.submit("s10c", duration=60)
            self.running_on("s10c", "w2")
            copy = fed.copies("w2", "s10c")[0]
            self.assertTrue(copy.status.remote.fenced)
            self.layout(4, 4, 4)
            fed.proxies["w2"].black_hole()
            holed = time.monotonic()
            try:
                def fenced():
                    for c in fed.copies("w2", "s10c"):
                        for cond in c.status.conditions:
                            if (cond.type == "Evicted" and
                                    cond.reason == "ManagerLost"):
                                return True
                    return False
                # The lease is workerLostTimeout / 2 (4s) from the last
                # renewal; the worker is asked directly, not through the
                # proxy.
                self.assertTrue(eventually(fenced, 9),
                                self.copy_history("w2", "s10c"))
                fenced_at = time.monotonic() - holed
                lost = self.saw_retry("s10c", REMOTE_LOST, timeout=15)
                self.assertLess(fenced_at, lost[0] - holed)
                self.saw("s10c", lambda s: s[CLUSTER] in ("w1", "w3") and
                         s[STATE] == "Ready")
            finally:
                time.sleep(max(0, 15 - (time.monotonic() - holed)))
                fed.proxies["w2"].heal()
            self.wait_active("w2", "True", 45)
            self.no_copies_left_on("w2", "s10c", 2 + 6)
            self.check_runs(["s10c"])
        finally:
            self.restart_manager(fx.manager_config())
            self.layout(0, 4, 0)

    # ---- 11 -----------------------------------------------------------------

    def test_11_preempted_on_manager(self):
        """A low-priority workload runs on w2; a high-priority one submitted
        to the manager preempts it there. w2's copy is deactivated; the
        runner stops (Heartbeat stop, on the manager) before the high one
        starts; the low one is requeued and runs again later."""
        self.layout(0, 4, 0)
        self.submit("s11-low", cpu=4, duration=60, priority_class="low")
        self.running_on("s11-low", "w2")
        self.submit("s11-high", cpu=4, priority_class="high")
        evicted = self.saw("s11-low", lambda s: s[EVICTED] is not None)[1]
        self.assertEqual(evicted[EVICTED][0], "Preempted", evicted)
        deactivated = eventually(lambda: self.fed.copy_recorders["w2"].saw(
            "s11-low", lambda c: c[C_EVICTED] ==
            "DeactivatedDueToEvictedOnManagerCluster"))
        self.assertTrue(deactivated, self.copy_history("w2", "s11-low"))
        self.running_on("s11-high", "w2")
        low_stop = self.runs("s11-low")[0][1]
        high_start = self.runs("s11-high")[0][0]
        self.assertIsNotNone(low_stop)
        self.assertLessEqual(low_stop, high_start)
        self.check_runs()
        self.assertEqual(len(self.runs("s11-low")), 2)

    # ---- 12 -----------------------------------------------------------------

    def test_12_preempted_on_worker(self):
        """A workload runs on w2; a higher-priority workload submitted to
        w2 itself preempts its copy: Retry on the manager, dispatched again
        to w1 or w3."""
        fed = self.fed
        self.layout(0, 4, 0)
        self.submit("s12", cpu=2, duration=60, priority_class="low")
        self.running_on("s12", "w2")
        epoch = fed.get("s12").status.multikueue.epoch
        admitted = (self.admitted_total("w1") + self.admitted_total("w2") +
                    self.admitted_total("w3"))
        self.layout(4, 4, 4)
        local = kq.workload("s12-local", NAMESPACE, "lq", {"cpu": 4},
                            priority_class="high")
        w2 = fed.workers["w2"].client()
        w2.submit_workload(local)
        try:
            self.saw_retry("s12", EVICTED_ON_WORKER.format("w2"))
            again = self.saw("s12", lambda s: s[CLUSTER] in ("w1", "w3") and
                             s[STATE] == "Ready")[1]
            self.assertGreater(again[EPOCH], epoch, self.history("s12"))
            self.assertIn(EVICTED_ON_WORKER.format("w2"),
                          fed.manager.log_text())
            self.check_runs()
            runs = self.runs("s12")
            self.assertEqual([r[4] for r in runs], ["stopped", "finished"])
            self.assertEqual(
                self.admitted_total("w1") + self.admitted_total("w2") +
                self.admitted_total("w3") - admitted, 1)
        finally:
            try:
                w2.finish_workload(NAMESPACE, "s12-local")
            except kq.KqError:
                w2.cancel_workload(NAMESPACE, "s12-local")
            self.layout(0, 4, 0)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    fx.BIN = sys.argv.pop(1)
    unittest.main(verbosity=2)
