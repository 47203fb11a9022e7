"""kq: the Python client of kqd, Kueue's admission as a gRPC service.

    import kq
    client = kq.Client("127.0.0.1:7070")
    with kq.Launch(client, kq.workload("train", "team", "lq",
                                       requests={"nvidia.com/gpu": 8})) as run:
        ...  # admitted: run the job where run.placements say

kq.Client wraps every QueueService and AdminService call; kq.Launch is the
runner side (wait for admission, heartbeat, stop when evicted, finish);
the messages are those of kq/v1/*.proto, importable as kq.v1.<file>_pb2
(generated at build time next to this package).
"""

from kq.client import (Client, KqError, WatchProgress, WatchStream,
                       cluster_queue, condition, config_object, is_admitted,
                       is_finished, is_loopback_target, local_queue,
                       multikueue_cluster, multikueue_config,
                       priority_class, resource_flavor, workload)
from kq.launcher import Launch, NotAdmitted, Stopped
from kq.v1 import admin_service_pb2, objects_pb2, queue_service_pb2
from kq.v1 import workload_pb2

__all__ = [
    "Client",
    "KqError",
    "Launch",
    "NotAdmitted",
    "Stopped",
    "WatchProgress",
    "WatchStream",
    "admin_service_pb2",
    "cluster_queue",
    "condition",
    "config_object",
    "is_admitted",
    "is_finished",
    "is_loopback_target",
    "local_queue",
    "multikueue_cluster",
    "multikueue_config",
    "objects_pb2",
    "priority_class",
    "queue_service_pb2",
    "resource_flavor",
    "workload",
    "workload_pb2",
]
