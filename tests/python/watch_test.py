"""A resumable watch across kqd restarts (SIGTERM and SIGKILL) on the same
port: every event once, in order, none lost."""

import unittest

import kq
from kqtest import DEADLINE, Background, Kqd, event_key

NS = "team"
CONFIG = [
    kq.resource_flavor("default"),
    kq.cluster_queue("cq", {"default": {"cpu": "2"}}),
    kq.local_queue(NS, "lq", "cq"),
]
MARKER = "watch-end"


def until_marker(stream):
    """Event keys up to and including the MARKER priority class."""
    keys = []
    for event in stream:
        keys.append(event_key(event))
        if keys[-1][2:] == ("workload_priority_class", "", MARKER):
            stream.cancel()
            break
    return keys


class WatchResumeTest(unittest.TestCase):

    def setUp(self):
        self.kqd = Kqd()
        self.addCleanup(self.kqd.close)
        self.kqd.start()
        self.client = kq.Client(self.kqd.target)
        self.addCleanup(self.client.close)

    def submit(self, name, cpu="1"):
        self.client.submit_workload(kq.workload(name, NS, "lq", {"cpu": cpu}))

    def restart(self, kill):
        port = self.kqd.port
        if kill:
            self.kqd.kill()
        else:
            self.assertEqual(self.kqd.terminate(), 0)
        self.kqd.start(port=port)
        self.assertEqual(self.kqd.port, port)

    def test_resumes_across_restarts_without_gap_or_duplicate(self):
        start = self.client.list_objects("ClusterQueue").revision
        stream = self.client.watch(from_revision=start, resume=True)
        watcher = Background(lambda: until_marker(stream), name="watcher")

        self.client.apply(CONFIG)
        self.submit("a")
        self.submit("b")
        self.submit("c")  # pending: the queue holds 2 cpu
        self.restart(kill=False)
        self.submit("d")
        self.client.cancel_workload(NS, "a")  # c is admitted in its place
        self.restart(kill=True)
        self.client.finish_workload(NS, "b")
        self.submit("e", cpu="2")
        self.client.apply([kq.priority_class(MARKER, 1)])

        got = watcher.join(DEADLINE * 2)
        self.assertGreaterEqual(stream.progress.reconnects, 2)
        # What kqd's event log holds for the same range, in one stream.
        want = until_marker(self.client.watch(from_revision=start))
        self.assertEqual(got, want)
        self.assertEqual(len(set(got)), len(got))
        names = {key[4] for key in got if key[2] == "Workload"}
        self.assertEqual(names, {"a", "b", "c", "d", "e"})
        self.assertEqual(stream.progress.revision, got[-1][0])

    def test_watch_from_now_resumes_from_the_pinned_revision(self):
        # Nothing arrives before the restart; what follows it must.
        stream = self.client.watch(resume=True, kinds=["Workload"])
        self.client.apply(CONFIG)
        self.restart(kill=True)
        self.submit("after")
        first = Background(lambda: next(stream), name="watcher")
        try:
            event = first.join()
        finally:
            stream.cancel()
        self.assertEqual(event.workload.metadata.name, "after")
        self.assertEqual(event.type, kq.queue_service_pb2.WatchEvent.ADDED)


if __name__ == "__main__":
    unittest.main(verbosity=2)
