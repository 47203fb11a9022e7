#!/usr/bin/env python3
"""Writes a large `kq simulate` scenario: C ClusterQueues in K cohorts, one
LocalQueue each, and W pending workloads spread over them.

Usage: gen_scenario.py [--cluster-queues 100] [--cohorts 10]
                       [--workloads 10000] > scenario.yaml
"""
import argparse


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cluster-queues", type=int, default=100)
    p.add_argument("--cohorts", type=int, default=10)
    p.add_argument("--workloads", type=int, default=10000)
    a = p.parse_args()
    out = []
    out.append("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
               "metadata: {name: default}\n")
    for c in range(a.cluster_queues):
        out.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
            f"metadata: {{name: cq-{c}}}\n"
            "spec:\n"
            f"  cohort: cohort-{c % a.cohorts}\n"
            "  namespaceSelector: {}\n"
            "  resourceGroups:\n"
            "  - coveredResources: [cpu]\n"
            "    flavors:\n"
            "    - name: default\n"
            "      resources: [{name: cpu, nominalQuota: 20, "
            "borrowingLimit: 100}]\n")
        out.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
            f"metadata: {{namespace: ns, name: lq-{c}}}\n"
            f"spec: {{clusterQueue: cq-{c}}}\n")
    for w in range(a.workloads):
        seconds = w % 60
        minutes = (w // 60) % 60
        hours = w // 3600
        out.append(
            "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
            f"metadata: {{namespace: ns, name: wl-{w}, "
            f"creationTimestamp: \"2026-01-01T{hours:02d}:{minutes:02d}:"
            f"{seconds:02d}Z\"}}\n"
            f"spec:\n  queueName: lq-{w % a.cluster_queues}\n"
            f"  priority: {w % 3}\n"
            "  podSets:\n"
            "  - name: main\n    count: 1\n"
            "    template: {spec: {containers: [{name: c, resources: "
            f"{{requests: {{cpu: \"{1 + w % 4}\"}}}}}}]}}}}\n")
    print("---\n".join(out), end="")


if __name__ == "__main__":
    main()
