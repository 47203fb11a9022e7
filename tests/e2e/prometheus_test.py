#!/usr/bin/env python3
"""kqd scraped by Debian's real Prometheus (ops-security.md section 4.7).

One kqd and one Prometheus, each on a loopback port of its own; Prometheus
scrapes kqd's /metrics every second. After a known sequence (admissions, a
preemption, a cancel, a StrictFIFO and a BestEffortFIFO ClusterQueue), the
PromQL answers must equal what `kq get -o json` reports, and kqd's
exposition must pass `promtool check metrics`.

Usage: prometheus_test.py BIN_DIR
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

BIN = ""
DEADLINE = 30.0

OBJECTS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: strict}
spec:
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: besteffort}
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  preemption: {withinClusterQueue: LowerPriority}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: strict-lq}
spec: {clusterQueue: strict}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team, name: besteffort-lq}
spec: {clusterQueue: besteffort}
"""


def workload(name, queue, cpu, priority_class=None):
    spec = {
        "queueName": queue,
        "podSets": [{
            "name": "main",
            "count": 1,
            "template": {"spec": {"containers": [{
                "name": "c",
                "resources": {"requests": {"cpu": str(cpu)}}}]}},
        }],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
        spec["priorityClassSource"] = "kueue.x-k8s.io/workloadpriorityclass"
    return json.dumps({
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": {"namespace": "team", "name": name},
        "spec": spec,
    })


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_port(path, proc, what):
    give_up = time.monotonic() + DEADLINE
    while time.monotonic() < give_up:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode}")
        if os.path.exists(path):
            with open(path) as f:
                text = f.read().strip()
            if text:
                return int(text)
        time.sleep(0.05)
    raise RuntimeError(f"{what} wrote no port")


def get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.headers, response.read().decode()


class PrometheusTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kq-prometheus-")
        cls.procs = []
        cls.logs = [open(os.path.join(cls.dir, "kqd.log"), "w"),
                    open(os.path.join(cls.dir, "prometheus.log"), "w")]
        log = cls.logs[0]
        kqd = subprocess.Popen(die_with_parent([
            os.path.join(BIN, "kqd"), "--listen=127.0.0.1:0",
            "--http-listen=127.0.0.1:0", f"--data-dir={cls.dir}/data",
            f"--port-file={cls.dir}/port",
            f"--http-port-file={cls.dir}/http-port", "--log-level=warn"
        ]), stdout=log, stderr=subprocess.STDOUT)
        cls.procs.append(kqd)
        cls.kqd_port = read_port(f"{cls.dir}/port", kqd, "kqd")
        cls.http_port = read_port(f"{cls.dir}/http-port", kqd, "kqd")

        config = os.path.join(cls.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s}\n"
                    "scrape_configs:\n"
                    "- job_name: kqd\n"
                    "  static_configs:\n"
                    f"  - targets: ['127.0.0.1:{cls.http_port}']\n")
        subprocess.run(["promtool", "check", "config", config], check=True,
                       stdout=subprocess.DEVNULL)
        cls.prom_port = free_port()
        prom_log = cls.logs[1]
        prom = subprocess.Popen(die_with_parent([
            "prometheus", f"--config.file={config}",
            f"--storage.tsdb.path={cls.dir}/tsdb",
            f"--web.listen-address=127.0.0.1:{cls.prom_port}"
        ]), stdout=prom_log, stderr=subprocess.STDOUT)
        cls.procs.append(prom)
        cls.prom = f"http://127.0.0.1:{cls.prom_port}"
        cls.eventually(lambda: cls.ready(), "Prometheus ready")

    @classmethod
    def tearDownClass(cls):
        for proc in reversed(cls.procs):
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        for log in cls.logs:
            log.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def ready(cls):
        try:
            return get(cls.prom + "/-/ready")[0] == 200
        except OSError:
            return False

    @staticmethod
    def eventually(predicate, what):
        give_up = time.monotonic() + DEADLINE
        while time.monotonic() < give_up:
            value = predicate()
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}")

    def kq(self, *args, stdin=None):
        result = subprocess.run(
            [os.path.join(BIN, "kq"), f"--server=127.0.0.1:{self.kqd_port}",
             *args], input=stdin, capture_output=True, text=True, timeout=60)
        self.assertEqual(result.returncode, 0,
                         f"kq {' '.join(args)}: {result.stderr}")
        return result.stdout

    def query(self, expr):
        """The instant vector of `expr`: {frozenset(labels): value}."""
        url = self.prom + "/api/v1/query?" + urllib.parse.urlencode(
            {"query": expr})
        body = json.loads(get(url)[2])
        self.assertEqual(body["status"], "success", body)
        return {frozenset(r["metric"].items()): float(r["value"][1])
                for r in body["data"]["result"]}

    def scalar(self, expr):
        values = list(self.query(expr).values())
        return values[0] if len(values) == 1 else None

    def until_equal(self, expr, want):
        """Polls PromQL until `expr` is the one value `want`; up to 30
        scrapes."""
        last = []

        def check():
            last[:] = [self.scalar(expr)]
            return last[0] == want
        try:
            self.eventually(check, f"{expr} == {want}")
        except AssertionError:
            self.fail(f"{expr}: Prometheus says {last[0]}, want {want}")

    def cluster_queue_status(self, name):
        return json.loads(self.kq("get", "clusterqueue", name, "-o",
                                  "json"))["status"]

    def test_promql_answers_what_kq_reports(self):
        # The target is up.
        self.until_equal('up{job="kqd"}', 1)
        self.kq("apply", "-f", "-", stdin=OBJECTS)
        # strict: s1 takes 3 of 4 cpus; s2 (2) does not fit and, StrictFIFO,
        # blocks s3 (1) behind it: both stay active in the heap.
        # besteffort: b1 takes all 4; b2 (1) is parked inadmissible; then
        # hi (2, priority 1000) preempts b1, and b2 fits beside it.
        for wl in [workload("s1", "strict-lq", 3),
                   workload("s2", "strict-lq", 2),
                   workload("s3", "strict-lq", 1),
                   workload("b1", "besteffort-lq", 4),
                   workload("b2", "besteffort-lq", 1)]:
            self.kq("apply", "-f", "-", stdin=wl)
        self.until_equal('kueue_pending_workloads{cluster_queue="besteffort",'
                         'status="inadmissible"}', 1)
        self.kq("apply", "-f", "-",
                stdin=workload("hi", "besteffort-lq", 2, "high"))
        self.kq("cancel", "-n", "team", "s1")

        strict = self.cluster_queue_status("strict")
        besteffort = self.cluster_queue_status("besteffort")
        # After the cancel s2 and s3 both fit in strict; in besteffort hi and
        # b2 run and b1 waits.
        self.assertEqual(strict.get("admittedWorkloads", 0), 2)
        self.assertEqual(besteffort.get("admittedWorkloads", 0), 2)
        self.assertEqual(besteffort.get("pendingWorkloads", 0), 1)
        for cq, status in [("strict", strict), ("besteffort", besteffort)]:
            self.until_equal(
                f'kueue_admitted_active_workloads{{cluster_queue="{cq}"}}',
                status.get("admittedWorkloads", 0))
            self.until_equal(
                f'kueue_reserving_active_workloads{{cluster_queue="{cq}"}}',
                status.get("reservingWorkloads", 0))
            self.until_equal(
                f'sum(kueue_pending_workloads{{cluster_queue="{cq}"}})',
                status.get("pendingWorkloads", 0))
        # b1, preempted, waits for 4 free cpus: parked as inadmissible.
        self.until_equal('kueue_pending_workloads{cluster_queue="besteffort",'
                         'status="inadmissible"}', 1)
        self.until_equal('kueue_pending_workloads{cluster_queue="besteffort",'
                         'status="active"}', 0)
        # Every admission so far: s1, s2, s3, b1, b2, hi.
        self.until_equal('sum(kueue_admitted_workloads_total)', 6)
        self.until_equal('sum(kueue_admission_wait_time_seconds_count)', 6)
        self.until_equal('kueue_admitted_workloads_total{cluster_queue='
                         '"besteffort",priority_class="high"}', 1)
        self.until_equal('kueue_evicted_workloads_total{cluster_queue='
                         '"besteffort",reason="Preempted"}', 1)
        self.until_equal('kueue_preempted_workloads_total{'
                         'preempting_cluster_queue="besteffort",'
                         'reason="InClusterQueue"}', 1)
        self.until_equal('kueue_finished_workloads_total{cluster_queue='
                         '"strict"}', 1)
        self.until_equal('kueue_cluster_queue_status{cluster_queue="strict",'
                         'status="active"}', 1)
        # Kueue's Common Grafana Queries, pasted.
        self.until_equal(
            'sum by (cluster_queue)(kueue_cluster_queue_resource_usage'
            '{cluster_queue="besteffort",resource="cpu"}) / sum by '
            '(cluster_queue)(kueue_cluster_queue_nominal_quota{cluster_queue='
            '"besteffort",resource="cpu"}) * 100', 75)
        self.assertIsNotNone(self.scalar(
            'histogram_quantile(0.95, sum by (le, cluster_queue)(rate('
            'kueue_admission_wait_time_seconds_bucket{cluster_queue="strict"}'
            '[5m])))'))
        # Every series says which replica it came from.
        self.assertEqual(self.query('count(kueue_pending_workloads{'
                                    'replica_role!="standalone"})'), {})
        # kq's own metrics reach Prometheus too.
        self.assertGreater(self.scalar(
            'sum(kq_grpc_requests_total{code="OK"})') or 0, 0)

    def test_exposition_passes_promtool(self):
        status, headers, text = get(
            f"http://127.0.0.1:{self.http_port}/metrics")
        self.assertEqual(status, 200)
        self.assertEqual(headers["Content-Type"],
                         "text/plain; version=0.0.4; charset=utf-8")
        result = subprocess.run(["promtool", "check", "metrics"], input=text,
                                capture_output=True, text=True)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_probes(self):
        self.assertEqual(
            get(f"http://127.0.0.1:{self.http_port}/healthz")[0], 200)
        self.assertEqual(
            get(f"http://127.0.0.1:{self.http_port}/readyz")[0], 200)


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
