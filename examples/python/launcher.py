#!/usr/bin/python3
"""A torchrun-style launcher over kq: queue a command, run it once kqd
admits it, stop it when it is evicted and run it again once re-admitted.

    PYTHONPATH=build/client-lib/python /usr/bin/python3 \\
        examples/python/launcher.py --queue ml-jobs --namespace team-ml \\
        --request cpu=4 --request nvidia.com/gpu=8 \\
        --priority-class production-training \\
        -- torchrun --nproc-per-node=8 train.py

While pending it prints why (kqd's reason) and its position in the
ClusterQueue. Once admitted the command runs, in its own process group,
with in its environment:
  KQ_WORKLOAD       namespace/name
  KQ_CLUSTER_QUEUE  the ClusterQueue that admitted it
  KQ_CLUSTER        the MultiKueue worker it runs on (empty without one)
  KQ_FLAVORS        per pod set, the flavor of each resource:
                    "main:cpu=default,nvidia.com/gpu=a100" (";" between
                    pod sets)
  KQ_NODE_LABELS    the node labels of those flavors: "key=value,..."
  KQ_PLACEMENTS     the placements as JSON (flavors, node labels,
                    tolerations per pod set)
When kqd evicts the workload (a higher-priority workload preempts it, an
operator preempts it, ...) the process group gets SIGTERM, SIGKILL after
--grace seconds; the launcher confirms the stop, which releases the quota,
and waits to be admitted again. When the command exits by itself the
workload is finished (Succeeded for status 0, Failed otherwise) and the
launcher exits with the command's status (128+N when killed by signal N).
It exits 1 when the workload ends without running (cancelled,
deactivated) and 130 when interrupted (the workload is then cancelled
while pending, or finished as Failed while running).
"""

import argparse
import json
import os
import re
import secrets
import signal
import subprocess
import sys

from google.protobuf import json_format

import kq


def log(message):
    print(f"kq-launcher: {message}", file=sys.stderr, flush=True)


def parse_args(argv):
    split = argv.index("--") if "--" in argv else len(argv)
    options, command = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(
        prog="launcher.py", usage="%(prog)s [options] -- COMMAND [ARGS...]",
        description="Run COMMAND when kqd admits it.")
    parser.add_argument("--server",
                        default=os.environ.get("KQ_SERVER", "127.0.0.1:7070"),
                        help="kqd's host:port (default $KQ_SERVER or "
                        "127.0.0.1:7070)")
    parser.add_argument("--tls-ca", default=None,
                        help="CA file that signed kqd's certificate (TLS)")
    parser.add_argument("--cert", default=None,
                        help="client certificate file (mutual TLS)")
    parser.add_argument("--key", default=None, help="key file of --cert")
    parser.add_argument("--token-file", default=None,
                        help="bearer token file (default: $KQ_TOKEN)")
    parser.add_argument("--queue", required=True, help="LocalQueue name")
    parser.add_argument("--namespace", default="default")
    parser.add_argument("--name", default="",
                        help="workload name (default: from the command)")
    parser.add_argument("--request", action="append", default=[],
                        metavar="RESOURCE=QUANTITY",
                        help="per-pod request, e.g. cpu=4, nvidia.com/gpu=8")
    parser.add_argument("--count", type=int, default=1, help="pods")
    parser.add_argument("--priority-class", default=None)
    parser.add_argument("--lease", type=float, default=30.0,
                        help="runner lease in seconds (renewed every third)")
    parser.add_argument("--grace", type=float, default=30.0,
                        help="seconds between SIGTERM and SIGKILL on eviction")
    parser.add_argument("--poll", type=float, default=30.0,
                        help="seconds between reports while pending")
    parser.add_argument("--runner-id", default=None)
    args = parser.parse_args(options)
    if not command:
        parser.error("no command: give it after --")
    requests = {}
    for item in args.request:
        resource, sep, quantity = item.partition("=")
        if not sep or not resource or not quantity:
            parser.error(f"--request {item!r}: expected RESOURCE=QUANTITY")
        requests[resource] = quantity
    args.requests = requests
    if not args.name:
        base = re.sub(r"[^a-z0-9]+", "-",
                      os.path.basename(command[0]).lower()).strip("-")
        args.name = f"{base[:40] or 'job'}-{secrets.token_hex(3)}"
    return args, command


def job_env(run):
    admission = run.admission
    flavors = ";".join(
        f"{psa.name}:" + ",".join(
            f"{resource}={flavor}"
            for resource, flavor in sorted(psa.flavors.items()))
        for psa in admission.pod_set_assignments)
    labels = {}
    for placement in run.placements:
        for flavor in placement.flavors:
            labels.update(flavor.node_labels)
    return {
        "KQ_WORKLOAD": f"{run.namespace}/{run.name}",
        "KQ_CLUSTER_QUEUE": admission.cluster_queue,
        "KQ_CLUSTER": run.cluster,
        "KQ_FLAVORS": flavors,
        "KQ_NODE_LABELS": ",".join(
            f"{k}={v}" for k, v in sorted(labels.items())),
        "KQ_PLACEMENTS": json.dumps([
            json_format.MessageToDict(p, preserving_proto_field_name=True)
            for p in run.placements]),
    }


def stop_child(proc, grace):
    """SIGTERM to the command's process group, SIGKILL after `grace`."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            log(f"command still running {grace:g}s after SIGTERM: SIGKILL")


def exit_status(returncode):
    return 128 - returncode if returncode < 0 else returncode


def run_command(run, command, grace):
    """Runs the command until it exits or kqd says stop. Returns its exit
    status and why it ended: None (by itself), "evicted" or
    "interrupted"."""
    env = dict(os.environ)
    env.update(job_env(run))
    proc = subprocess.Popen(command, env=env, start_new_session=True)
    why = None
    try:
        while proc.poll() is None:
            if run.wait_stop(0.25) and proc.poll() is None:
                why = "evicted"
                reason = (run.lost.message if run.lost else
                          "the workload was evicted")
                log(f"{reason}: stopping the command")
                stop_child(proc, grace)
    except KeyboardInterrupt:
        why = "interrupted"
        stop_child(proc, grace)
    return exit_status(proc.returncode), why


def report_pending(response):
    position = (f", position {response.position} in its ClusterQueue"
                if response.HasField("position") else "")
    log(f"pending: {response.reason}: {response.message}{position}")


def raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    args, command = parse_args(argv)
    signal.signal(signal.SIGTERM, raise_interrupt)
    token = os.environ.get("KQ_TOKEN") or None
    client = kq.Client(args.server, ca=args.tls_ca, cert=args.cert,
                       key=args.key, token_file=args.token_file,
                       token=None if args.token_file else token)
    wl = kq.workload(args.name, args.namespace, args.queue, args.requests,
                     count=args.count, priority_class=args.priority_class)
    launch = kq.Launch(client, wl, runner_id=args.runner_id, lease=args.lease,
                       on_pending=report_pending, poll=args.poll)
    log(f"submitting {args.namespace}/{args.name} to queue {args.queue}")
    while True:
        try:
            launch.wait_admitted()
        except kq.NotAdmitted as e:
            log(str(e))
            return 1
        except KeyboardInterrupt:
            log("interrupted while pending: cancelling the workload")
            launch.cancel()
            return 130
        with launch as run:
            log(f"admitted to {run.admission.cluster_queue} "
                f"({job_env(run)['KQ_FLAVORS']}): running {command[0]}")
            status, why = run_command(run, command, args.grace)
            if why == "evicted":
                # Leaving the block confirms the stop; the workload is back
                # in its queue.
                log("stopped; waiting to be admitted again")
                continue
            if why == "interrupted":
                run.finish(False, "the launcher was interrupted")
                return 130
            run.finish(status == 0, f"command exited with status {status}")
            log(f"command exited with status {status}")
            return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except kq.KqError as e:
        log(f"kqd: {e}")
        sys.exit(1)
