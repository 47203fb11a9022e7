"""The runner side of kq: wait for admission, hold the lease, stop on
eviction, report the end.

    launch = kq.Launch(client, wl, lease=30, on_pending=print)
    with launch as run:                 # returns once admitted
        job = start(run.admission, run.placements)
        while not job.done():
            if run.wait_stop(1.0):      # kqd evicted the workload
                job.stop()
                break

Leaving the block reports what happened:
  - the block ended normally: FinishWorkload(succeeded=True);
  - it raised: FinishWorkload(succeeded=False) with the exception as the
    message, and the exception propagates;
  - kqd asked to stop (should_stop): the stop is confirmed with
    Heartbeat(stopped=True), which releases the quota -- a preemptor
    waits for exactly this -- and the workload goes back to its queue
    (`launch.evicted`). Entering the block again waits for the next
    admission; `launch.loop(body)` does that until the workload finishes.

While admitted, a background thread renews the runner's lease every
lease/3 seconds. It sets `should_stop` (plus the `stop_event` given and a
call of `on_stop(launch)`) when a Heartbeat says stop, or when kqd answers
that the workload holds no quota any more (its lease lapsed, it was
cancelled, another runner took it): then `lost` holds that error.
"""

import logging
import os
import socket
import threading

import grpc

from kq.client import KqError
from kq.v1 import queue_service_pb2

__all__ = ["Launch", "NotAdmitted", "Stopped"]

_log = logging.getLogger("kq.launcher")

_Outcome = queue_service_pb2.AdmitResponse.Outcome
# kqd's answers that mean this runner no longer holds the workload.
_GONE = (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND)


class Stopped(Exception):
    """Raised by Launch.check_stop() once kqd asked the workload to stop.
    Leaving the with block with it confirms the stop; Launch swallows it."""


class NotAdmitted(Exception):
    """The wait for admission ended without one: the workload finished
    (e.g. it was cancelled) or was deactivated. `response` is kqd's
    AdmitResponse; `outcome` is "FINISHED" or "DEACTIVATED"."""

    def __init__(self, response):
        self.response = response
        self.outcome = _Outcome.Name(response.outcome)
        self.reason = response.reason
        self.message = response.message
        meta = response.workload.metadata
        super().__init__(f"workload {meta.namespace}/{meta.name} "
                         f"{self.outcome}: {response.reason}: "
                         f"{response.message}")


class Launch:
    """One workload run by this process, across evictions.

    `wl` is submitted with the first wait (a workload of that name that
    exists already is waited for instead). `runner_id` identifies this
    runner to kqd (default host:pid); `lease` is in seconds.
    `on_pending(response)` sees every PENDING answer (reason, position)
    while waiting, `poll` seconds apart at most; `timeout` bounds each wait
    (None: forever; then KqError DEADLINE_EXCEEDED). Not thread-safe
    except for the stop signals, which the heartbeat thread raises.
    """

    def __init__(self, client, wl, runner_id=None, lease=30.0,
                 on_pending=None, on_stop=None, stop_event=None, poll=30.0,
                 timeout=None):
        self.client = client
        self.namespace = wl.metadata.namespace
        self.name = wl.metadata.name
        self.runner_id = runner_id or f"{socket.gethostname()}:{os.getpid()}"
        self.lease = float(lease)
        self.on_pending = on_pending
        self.on_stop = on_stop
        self.stop_event = stop_event
        self.poll = poll
        self.timeout = timeout
        # The latest Workload kqd returned.
        self.workload = wl
        # The AdmitResponse of the current (or last) admission.
        self.response = None
        # The Heartbeat that said stop, and the one that confirmed it.
        self.stop_response = None
        self.confirmation = None
        # KqError: kqd said this runner no longer holds the workload.
        self.lost = None
        # The Workload as finished by finish() or cancel().
        self.result = None
        self.admissions = 0
        self.evicted = False
        self.finished = False
        self._submit = wl
        self._admitted = False
        self._stop = threading.Event()
        self._quit = None
        self._beater = None

    # ---- What the job needs -------------------------------------------------

    @property
    def admission(self):
        """Admission of the current run: cluster_queue and, per pod set, the
        flavor of each resource (pod_set_assignments)."""
        if self.response is None:
            return None
        status = self.response.workload.status
        # On a MultiKueue manager the job runs with the winning worker's
        # flavors.
        if status.HasField("cluster_name") and \
                status.multikueue.HasField("worker_admission"):
            return status.multikueue.worker_admission
        return status.admission

    @property
    def cluster(self):
        """The MultiKueue worker the current run was admitted on ("" without
        federation)."""
        if self.response is None:
            return ""
        return self.response.workload.status.cluster_name

    @property
    def placements(self):
        """Per pod set, the flavors with the node labels and tolerations to
        give the pods (PodSetPlacement messages)."""
        return list(self.response.placements) if self.response else []

    @property
    def admitted(self):
        return self._admitted

    @property
    def should_stop(self):
        """kqd evicted the workload (or it holds no quota any more): stop
        the job, then leave the with block (or call confirm_stopped())."""
        return self._stop.is_set()

    def wait_stop(self, timeout=None):
        """Waits up to `timeout` seconds for a stop request; returns
        should_stop."""
        return self._stop.wait(timeout)

    def check_stop(self):
        """Raises Stopped when kqd asked to stop."""
        if self._stop.is_set():
            raise Stopped(f"workload {self.namespace}/{self.name} must stop")

    # ---- Life cycle ----------------------------------------------------------

    def wait_admitted(self):
        """Waits for the (next) admission and starts the heartbeats; a no-op
        while admitted. Raises NotAdmitted when the workload finished or was
        deactivated meanwhile."""
        if self.finished:
            raise RuntimeError(
                f"workload {self.namespace}/{self.name} finished already")
        if self._admitted:
            return self
        response = self.client.wait_admitted(
            self.namespace, self.name, wl=self._submit, timeout=self.timeout,
            on_pending=self.on_pending, poll=self.poll,
            runner_id=self.runner_id, lease=self.lease)
        self._submit = None
        self.namespace = response.workload.metadata.namespace
        self.name = response.workload.metadata.name
        self.workload = response.workload
        if response.outcome != _Outcome.ADMITTED:
            if response.outcome == _Outcome.FINISHED:
                self.finished = True
                self.result = response.workload
            raise NotAdmitted(response)
        self.response = response
        self.stop_response = self.confirmation = self.lost = None
        self.evicted = False
        self._stop.clear()
        if self.stop_event is not None:
            self.stop_event.clear()
        self.admissions += 1
        self._admitted = True
        self._quit = threading.Event()
        self._beater = threading.Thread(
            target=self._beat_loop, args=(self._quit,),
            name=f"kq-heartbeat-{self.name}", daemon=True)
        self._beater.start()
        return self

    # The name a launcher going round again reads best with.
    wait_readmitted = wait_admitted

    def finish(self, succeeded=True, message=""):
        """Reports the end of the run (FinishWorkload) and stops the
        heartbeats; the quota is released. Returns the finished Workload.
        Call it instead of confirm_stopped() when the job completed even
        though a stop was asked meanwhile."""
        if self.finished:
            return self.result
        if not self._admitted:
            raise RuntimeError(
                f"workload {self.namespace}/{self.name} is not admitted")
        self._end_heartbeats()
        self._admitted = False
        try:
            wl = self.client.finish_workload(self.namespace, self.name,
                                             succeeded, message)
        except KqError as e:
            if e.code in _GONE:
                # Released without us (lease lapsed, cancelled): the end
                # was not recorded and the workload may run again.
                self.evicted = True
            raise
        self.workload = self.result = wl
        self.finished = True
        return wl

    def confirm_stopped(self):
        """Tells kqd the job stopped after a stop request: the quota is
        released and the workload goes back to its queue (or stays
        deactivated). Failing to reach kqd is logged, not raised: kqd
        releases the quota at the stop deadline anyway."""
        if not self._admitted:
            return self.confirmation
        if not self._stop.is_set():
            raise RuntimeError(
                f"kqd did not ask to stop {self.namespace}/{self.name}; "
                "report its end with finish()")
        self._end_heartbeats()
        self._admitted = False
        self.evicted = True
        try:
            self.confirmation = self.client.heartbeat(
                self.namespace, self.name, self.runner_id, self.lease,
                stopped=True)
            self.workload = self.confirmation.workload
        except KqError as e:
            if e.code not in _GONE:
                _log.warning("could not confirm the stop of %s/%s (%s); kqd "
                             "releases its quota at the stop deadline",
                             self.namespace, self.name, e)
        return self.confirmation

    def cancel(self):
        """Cancels the workload (Finished, reason Cancelled). Stop the job
        first: its quota is released at once."""
        self._end_heartbeats()
        self._admitted = False
        wl = self.client.cancel_workload(self.namespace, self.name)
        self.workload = self.result = wl
        self.finished = True
        return wl

    def loop(self, body):
        """Runs body(self) once per admission until the workload finishes:
        after an eviction the stop is confirmed, the workload waits in its
        queue and body runs again once re-admitted. Returns the finished
        Workload."""
        while True:
            with self:
                body(self)
            if self.finished:
                return self.result

    def __enter__(self):
        return self.wait_admitted()

    def __exit__(self, exc_type, exc, tb):
        if self._admitted:
            if self._stop.is_set():
                self.confirm_stopped()
            elif exc_type is None or (exc_type is SystemExit and
                                      exc.code in (None, 0)):
                self.finish(True)
            else:
                self.finish(False, f"{exc_type.__name__}: {exc}")
        return exc_type is not None and issubclass(exc_type, Stopped)

    # ---- Heartbeats ----------------------------------------------------------

    def _beat_loop(self, quit_event):
        interval = self.lease / 3
        while not quit_event.is_set():
            if not self._beat(interval):
                return
            if quit_event.wait(interval):
                return

    def _beat(self, interval):
        """One lease renewal; False once there is nothing left to renew."""
        try:
            r = self.client.heartbeat(
                self.namespace, self.name, self.runner_id, self.lease,
                timeout=max(self.lease / 2, 1.0), retry_budget=interval)
        except KqError as e:
            if e.code in _GONE:
                self.lost = e
                self._signal_stop()
                return False
            # kqd unreachable: keep trying until the lease lapses; kqd then
            # releases the quota and the next answer says so.
            _log.warning("heartbeat of %s/%s failed: %s", self.namespace,
                         self.name, e)
            return True
        self.workload = r.workload
        if r.stop:
            if self.stop_response is None:
                self.stop_response = r
            self._signal_stop()
        return True

    def _signal_stop(self):
        if self._stop.is_set():
            return
        self._stop.set()
        if self.stop_event is not None:
            self.stop_event.set()
        if self.on_stop is not None:
            try:
                self.on_stop(self)
            except Exception:  # a callback must not kill the heartbeats
                _log.exception("on_stop callback failed")

    def _end_heartbeats(self):
        if self._quit is not None:
            self._quit.set()
        beater = self._beater
        if beater is not None and beater is not threading.current_thread():
            beater.join()
        self._quit = self._beater = None
