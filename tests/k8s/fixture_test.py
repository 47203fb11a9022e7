#!/usr/bin/python3
"""Tests of the Kubernetes API server fixture (fake_apiserver.py).

Each assertion is what the real API server does for the same request, so a
fixture that drifts from the protocol the shim and kubectl rely on fails
here. Stdlib only: http.client + ssl against a fixture started on port 0.
"""

import base64
import http.client
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "testing"))
from child_process import die_with_parent  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fake_apiserver.py")
TOKEN = "kq-test-token"


class Fixture:
    """A fake_apiserver.py process in a temporary directory."""

    def __init__(self, *extra):
        self.dir = tempfile.mkdtemp(prefix="kq-k8s-fixture-")
        self.proc = subprocess.Popen(die_with_parent([
            sys.executable, FIXTURE, "--dir", self.dir, "--port", "0", *extra
        ]),
                                     stdout=subprocess.PIPE,
                                     stderr=sys.stderr,
                                     text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("READY https://127.0.0.1:"):
            self.proc.kill()
            raise RuntimeError(f"fixture did not start: {line!r}")
        self.url = line.split()[1]
        self.port = int(self.url.rsplit(":", 1)[1])
        self.ctx = ssl.create_default_context(
            cafile=os.path.join(self.dir, "ca.crt"))

    def stop(self):
        self.proc.stdout.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def conn(self, timeout=10):
        return http.client.HTTPSConnection("127.0.0.1",
                                           self.port,
                                           context=self.ctx,
                                           timeout=timeout)

    def request(self,
                method,
                path,
                body=None,
                token=TOKEN,
                content_type="application/json",
                headers=None):
        c = self.conn()
        h = {"Accept": "application/json"}
        if token is not None:
            h["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h["Content-Type"] = content_type
        h.update(headers or {})
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        raw = r.read()
        c.close()
        try:
            return r.status, json.loads(raw) if raw else None
        except ValueError:
            return r.status, raw.decode()

    def watch(self, path, timeout=10):
        """Opens a watch: (response, Stream of its events)."""
        c = self.conn(timeout=timeout)
        c.request("GET",
                  path,
                  headers={
                      "Authorization": f"Bearer {TOKEN}",
                      "Accept": "application/json"
                  })
        r = c.getresponse()
        return r, Stream(c, r)


class Stream:

    def __init__(self, conn, resp):
        self.conn = conn
        self.resp = resp

    def next(self):
        line = self.resp.readline()
        if not line:
            return None
        return json.loads(line)

    def close(self):
        self.conn.close()


def job(name,
        labels=None,
        suspend=None,
        parallelism=None,
        completions=None,
        annotations=None,
        restart="Never",
        **spec_extra):
    spec = {
        "template": {
            "spec": {
                "containers": [{
                    "name": "main",
                    "image": "busybox:1.36",
                    "resources": {
                        "requests": {
                            "cpu": "1"
                        }
                    }
                }],
                "restartPolicy":
                restart
            }
        }
    }
    if suspend is not None:
        spec["suspend"] = suspend
    if parallelism is not None:
        spec["parallelism"] = parallelism
    if completions is not None:
        spec["completions"] = completions
    spec.update(spec_extra)
    md = {"name": name}
    if labels:
        md["labels"] = labels
    if annotations:
        md["annotations"] = annotations
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": md,
        "spec": spec
    }


def jobs_path(ns, name=""):
    return f"/apis/batch/v1/namespaces/{ns}/jobs" + (f"/{name}"
                                                     if name else "")


def wait_for(fn, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(interval)


def cond(obj, typ):
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c["type"] == typ:
            return c
    return None


class FixtureTestBase(unittest.TestCase):
    extra_args = ("--job-runtime", "1", "--pod-stop-seconds", "0.5")

    @classmethod
    def setUpClass(cls):
        cls.fx = Fixture(*cls.extra_args)

    @classmethod
    def tearDownClass(cls):
        cls.fx.stop()

    def create_job(self, ns, obj, expect=201):
        code, body = self.fx.request("POST", jobs_path(ns), obj)
        self.assertEqual(code, expect, body)
        return body

    def get_job(self, ns, name):
        code, body = self.fx.request("GET", jobs_path(ns, name))
        self.assertEqual(code, 200, body)
        return body

    def assertStatus(self, body, code, reason):
        self.assertEqual(body["kind"], "Status", body)
        self.assertEqual(body["apiVersion"], "v1")
        self.assertEqual(body["status"], "Failure")
        self.assertEqual(body["code"], code)
        self.assertEqual(body["reason"], reason)


class ProtocolTest(FixtureTestBase):

    def test_files_and_kubeconfig(self):
        for f in ("ca.crt", "server.crt", "server.key", "kubeconfig"):
            self.assertTrue(os.path.exists(os.path.join(self.fx.dir, f)), f)
        with open(os.path.join(self.fx.dir, "kubeconfig")) as f:
            kc = f.read()
        self.assertIn(f"server: https://127.0.0.1:{self.fx.port}", kc)
        self.assertIn(f"token: {TOKEN}", kc)
        self.assertIn("current-context: fixture", kc)
        with open(os.path.join(self.fx.dir, "ca.crt"), "rb") as f:
            self.assertIn(base64.b64encode(f.read()).decode(), kc)
        # The certificate is valid for "localhost" too.
        c = http.client.HTTPSConnection("localhost",
                                        self.fx.port,
                                        context=self.fx.ctx,
                                        timeout=5)
        c.request("GET",
                  "/version",
                  headers={"Authorization": f"Bearer {TOKEN}"})
        self.assertEqual(c.getresponse().status, 200)
        c.close()

    def test_unauthorized(self):
        for token in (None, "wrong"):
            code, body = self.fx.request("GET",
                                         "/api/v1/namespaces",
                                         token=token)
            self.assertEqual(code, 401)
            self.assertStatus(body, 401, "Unauthorized")
            self.assertEqual(body["message"], "Unauthorized")

    def test_discovery(self):
        code, v = self.fx.request("GET", "/version")
        self.assertEqual(code, 200)
        self.assertEqual((v["major"], v["minor"]), ("1", "32"))
        self.assertTrue(v["gitVersion"].startswith("v1.32."))
        code, api = self.fx.request("GET", "/api")
        self.assertEqual(api["kind"], "APIVersions")
        self.assertEqual(api["versions"], ["v1"])
        code, apis = self.fx.request("GET", "/apis")
        self.assertEqual(apis["kind"], "APIGroupList")
        groups = {g["name"]: g for g in apis["groups"]}
        for g in ("batch", "autoscaling.x-k8s.io",
                  "admissionregistration.k8s.io"):
            self.assertEqual(groups[g]["preferredVersion"]["groupVersion"],
                             f"{g}/v1")

        def resources(path):
            code, body = self.fx.request("GET", path)
            self.assertEqual(code, 200, path)
            self.assertEqual(body["kind"], "APIResourceList")
            return {r["name"]: r for r in body["resources"]}

        core = resources("/api/v1")
        for name, kind in (("events", "Event"),
                           ("podtemplates", "PodTemplate"), ("namespaces",
                                                             "Namespace")):
            self.assertEqual(core[name]["kind"], kind)
        self.assertFalse(core["namespaces"]["namespaced"])
        self.assertIn("ns", core["namespaces"]["shortNames"])
        batch = resources("/apis/batch/v1")
        self.assertEqual(batch["jobs"]["singularName"], "job")
        self.assertTrue(batch["jobs"]["namespaced"])
        self.assertEqual(sorted(batch["jobs"]["verbs"]), [
            "create", "delete", "deletecollection", "get", "list", "patch",
            "update", "watch"
        ])
        self.assertEqual(batch["jobs/status"]["verbs"],
                         ["get", "patch", "update"])
        pr = resources("/apis/autoscaling.x-k8s.io/v1")
        self.assertEqual(pr["provisioningrequests"]["kind"],
                         "ProvisioningRequest")
        self.assertIn("provisioningrequests/status", pr)
        mwc = resources("/apis/admissionregistration.k8s.io/v1")
        self.assertFalse(mwc["mutatingwebhookconfigurations"]["namespaced"])
        code, _ = self.fx.request("GET", "/apis/nosuch.group/v1")
        self.assertEqual(code, 404)

    def test_create_get_defaults(self):
        created = self.create_job("proto-create", job("one"))
        md = created["metadata"]
        self.assertEqual(created["kind"], "Job")
        self.assertEqual(created["apiVersion"], "batch/v1")
        self.assertEqual(md["namespace"], "proto-create")
        self.assertRegex(md["uid"], r"^[0-9a-f-]{36}$")
        self.assertRegex(md["resourceVersion"], r"^\d+$")
        self.assertRegex(md["creationTimestamp"],
                         r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(md["generation"], 1)
        spec = created["spec"]
        self.assertEqual(spec["completions"], 1)
        self.assertEqual(spec["parallelism"], 1)
        self.assertEqual(spec["backoffLimit"], 6)
        self.assertIs(spec["suspend"], False)
        self.assertEqual(spec["completionMode"], "NonIndexed")
        self.assertEqual(spec["selector"]["matchLabels"],
                         {"batch.kubernetes.io/controller-uid": md["uid"]})
        tl = spec["template"]["metadata"]["labels"]
        self.assertEqual(tl["batch.kubernetes.io/job-name"], "one")
        self.assertEqual(tl["batch.kubernetes.io/controller-uid"], md["uid"])
        # Parallelism alone leaves completions unset, as upstream defaulting.
        p = self.create_job("proto-create", job("par", parallelism=3))
        self.assertEqual(p["spec"]["parallelism"], 3)
        self.assertNotIn("completions", p["spec"])
        got = self.get_job("proto-create", "one")
        self.assertEqual(got["metadata"]["uid"], md["uid"])
        self.assertEqual(got["spec"]["template"], spec["template"])
        # The namespace was created on first use and is listed.
        code, ns = self.fx.request("GET", "/api/v1/namespaces/proto-create")
        self.assertEqual(code, 200)
        self.assertEqual(ns["status"]["phase"], "Active")
        code, body = self.fx.request("POST", jobs_path("proto-create"),
                                     job("one"))
        self.assertEqual(code, 409)
        self.assertStatus(body, 409, "AlreadyExists")
        self.assertEqual(body["message"], 'jobs.batch "one" already exists')
        self.assertEqual(body["details"], {
            "name": "one",
            "group": "batch",
            "kind": "jobs"
        })
        gen = job("")
        gen["metadata"] = {"generateName": "gen-"}
        g = self.create_job("proto-create", gen)
        self.assertRegex(g["metadata"]["name"], r"^gen-[a-z0-9]{5}$")
        self.assertGreater(int(g["metadata"]["resourceVersion"]),
                           int(md["resourceVersion"]))
        code, body = self.fx.request("GET", jobs_path("proto-create",
                                                      "nosuch"))
        self.assertEqual(code, 404)
        self.assertStatus(body, 404, "NotFound")
        self.assertEqual(body["message"], 'jobs.batch "nosuch" not found')

    def test_validation(self):
        code, body = self.fx.request("POST", jobs_path("proto-valid"),
                                     job("always", restart="Always"))
        self.assertEqual(code, 422)
        self.assertStatus(body, 422, "Invalid")
        self.assertEqual(body["details"]["kind"], "Job")
        self.assertEqual(body["details"]["group"], "batch")
        causes = body["details"]["causes"]
        self.assertEqual(causes[0]["field"],
                         "spec.template.spec.restartPolicy")
        self.assertEqual(causes[0]["reason"], "FieldValueNotSupported")
        self.assertIn('Job.batch "always" is invalid', body["message"])
        # A missing restartPolicy defaults to Always, so it is rejected too.
        j = job("missing")
        del j["spec"]["template"]["spec"]["restartPolicy"]
        code, body = self.fx.request("POST", jobs_path("proto-valid"), j)
        self.assertEqual(code, 422)
        j = job("Bad_Name")
        code, body = self.fx.request("POST", jobs_path("proto-valid"), j)
        self.assertEqual(code, 422)
        self.assertEqual(body["details"]["causes"][0]["field"],
                         "metadata.name")
        self.create_job("proto-valid", job("onfailure", restart="OnFailure"))
        # Namespace in the body must match the path.
        j = job("mismatch")
        j["metadata"]["namespace"] = "other"
        code, body = self.fx.request("POST", jobs_path("proto-valid"), j)
        self.assertEqual(code, 400)
        self.assertStatus(body, 400, "BadRequest")

    def test_list_selectors(self):
        ns = "proto-list"
        self.create_job(ns, job("a", labels={"queue": "q1", "tier": "gold"}))
        self.create_job(ns, job("b", labels={"queue": "q2"}))
        self.create_job(ns, job("c", labels={"tier": "silver"}))
        self.create_job(ns, job("d"))
        self.create_job("proto-list-other", job("e", labels={"queue": "q1"}))

        def names(sel=None, fsel=None, namespace=ns):
            q = {}
            if sel is not None:
                q["labelSelector"] = sel
            if fsel is not None:
                q["fieldSelector"] = fsel
            path = (jobs_path(namespace)
                    if namespace else "/apis/batch/v1/jobs")
            if q:
                path += "?" + urllib.parse.urlencode(q)
            code, body = self.fx.request("GET", path)
            self.assertEqual(code, 200, body)
            self.assertEqual(body["kind"], "JobList")
            self.assertEqual(body["apiVersion"], "batch/v1")
            self.assertRegex(body["metadata"]["resourceVersion"], r"^\d+$")
            # Built-in types: list items carry no apiVersion/kind.
            for it in body["items"]:
                self.assertNotIn("kind", it)
            return [it["metadata"]["name"] for it in body["items"]]

        self.assertEqual(names(), ["a", "b", "c", "d"])
        self.assertEqual(names("queue"), ["a", "b"])
        self.assertEqual(names("!queue"), ["c", "d"])
        self.assertEqual(names("queue=q1"), ["a"])
        self.assertEqual(names("queue==q1"), ["a"])
        self.assertEqual(names("queue!=q1"), ["b", "c", "d"])
        self.assertEqual(names("queue in (q1,q2)"), ["a", "b"])
        self.assertEqual(names("queue notin (q1)"), ["b", "c", "d"])
        self.assertEqual(names("queue,tier=gold"), ["a"])
        self.assertEqual(names("tier in (gold, silver),!queue"), ["c"])
        self.assertEqual(names(fsel="metadata.name=b"), ["b"])
        self.assertEqual(names(fsel="metadata.name!=b"), ["a", "c", "d"])
        self.assertEqual(
            names(fsel=f"metadata.namespace={ns}", namespace=None)[:4],
            ["a", "b", "c", "d"])
        all_q1 = names("queue=q1", namespace=None)
        self.assertEqual(all_q1, ["a", "e"])
        code, body = self.fx.request(
            "GET",
            jobs_path(ns) + "?labelSelector=" +
            urllib.parse.quote("queue in (q1"))
        self.assertEqual(code, 400)
        code, body = self.fx.request(
            "GET",
            jobs_path(ns) + "?fieldSelector=spec.foo%3Dbar")
        self.assertEqual(code, 400)
        self.assertIn("field label not supported", body["message"])

    def test_pagination(self):
        ns = "proto-page"
        for i in range(5):
            self.create_job(ns, job(f"p{i}"))
        seen, cont, pages = [], "", 0
        while True:
            q = {"limit": "2"}
            if cont:
                q["continue"] = cont
            code, body = self.fx.request(
                "GET",
                jobs_path(ns) + "?" + urllib.parse.urlencode(q))
            self.assertEqual(code, 200, body)
            pages += 1
            seen += [it["metadata"]["name"] for it in body["items"]]
            cont = body["metadata"].get("continue", "")
            if pages == 1:
                self.assertEqual(body["metadata"]["remainingItemCount"], 3)
            if not cont:
                self.assertNotIn("remainingItemCount", body["metadata"])
                break
        self.assertEqual(pages, 3)
        self.assertEqual(seen, [f"p{i}" for i in range(5)])
        code, body = self.fx.request("GET",
                                     jobs_path(ns) + "?continue=garbage")
        self.assertEqual(code, 400)

    def test_update_conflict(self):
        ns = "proto-update"
        created = self.create_job(ns, job("u", suspend=True))
        rv0 = created["metadata"]["resourceVersion"]
        # The controller writes the Suspended condition: take the latest.
        wait_for(lambda: cond(self.get_job(ns, "u"), "Suspended"))
        cur = self.get_job(ns, "u")
        cur["metadata"].setdefault("labels", {})["x"] = "1"
        code, upd = self.fx.request("PUT", jobs_path(ns, "u"), cur)
        self.assertEqual(code, 200, upd)
        self.assertEqual(upd["metadata"]["labels"]["x"], "1")
        self.assertGreater(int(upd["metadata"]["resourceVersion"]),
                           int(cur["metadata"]["resourceVersion"]))
        # Metadata changes leave the generation alone; spec changes bump it.
        self.assertEqual(upd["metadata"]["generation"], 1)
        stale = dict(cur)
        stale["metadata"] = dict(cur["metadata"], labels={"x": "2"})
        code, body = self.fx.request("PUT", jobs_path(ns, "u"), stale)
        self.assertEqual(code, 409)
        self.assertStatus(body, 409, "Conflict")
        self.assertEqual(
            body["message"],
            'Operation cannot be fulfilled on jobs.batch "u": the object has '
            'been modified; please apply your changes to the latest version '
            'and try again')
        code, body = self.fx.request("PUT", jobs_path(ns, "u"), {
            **upd, "metadata": {
                **upd["metadata"], "resourceVersion": rv0
            }
        })
        self.assertEqual(code, 409)
        # No resourceVersion: an unconditional update, allowed for Jobs.
        nov = self.get_job(ns, "u")
        del nov["metadata"]["resourceVersion"]
        nov["spec"]["backoffLimit"] = 2
        code, body = self.fx.request("PUT", jobs_path(ns, "u"), nov)
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"]["backoffLimit"], 2)
        self.assertEqual(body["metadata"]["generation"], 2)
        # A no-op update keeps the resourceVersion.
        code, same = self.fx.request("PUT", jobs_path(ns, "u"), body)
        self.assertEqual(code, 200)
        self.assertEqual(same["metadata"]["resourceVersion"],
                         body["metadata"]["resourceVersion"])
        # The main resource ignores status; /status changes only status.
        body["status"] = {"active": 7}
        body["spec"]["backoffLimit"] = 3
        code, r = self.fx.request("PUT", jobs_path(ns, "u"), body)
        self.assertEqual(code, 200)
        self.assertNotEqual((r.get("status") or {}).get("active"), 7)
        r["status"]["active"] = 7
        r["spec"]["backoffLimit"] = 4
        code, s = self.fx.request("PUT", jobs_path(ns, "u") + "/status", r)
        self.assertEqual(code, 200, s)
        self.assertEqual(s["status"]["active"], 7)
        self.assertEqual(s["spec"]["backoffLimit"], 3)
        code, body = self.fx.request("PUT", jobs_path(ns, "nosuch"),
                                     job("nosuch"))
        self.assertEqual(code, 404)
        code, body = self.fx.request("PUT", jobs_path(ns, "u"), job("other"))
        self.assertEqual(code, 400)

    def test_patches(self):
        ns = "proto-patch"
        j = job("p", suspend=True, labels={"keep": "1", "drop": "1"})
        self.create_job(ns, j)
        path = jobs_path(ns, "p")

        # JSON merge patch: maps merge, null deletes.
        code, m = self.fx.request("PATCH",
                                  path, {
                                      "metadata": {
                                          "labels": {
                                              "drop": None,
                                              "new": "2"
                                          }
                                      },
                                      "spec": {
                                          "backoffLimit": 1
                                      }
                                  },
                                  content_type="application/merge-patch+json")
        self.assertEqual(code, 200, m)
        self.assertEqual(m["metadata"]["labels"], {"keep": "1", "new": "2"})
        self.assertEqual(m["spec"]["backoffLimit"], 1)
        self.assertEqual(m["metadata"]["generation"], 2)

        # Strategic merge patch on a PodTemplate (its template is mutable):
        # containers and env merge by name, tolerations (no patch strategy
        # upstream) are replaced, maps merge.
        pt_path = f"/api/v1/namespaces/{ns}/podtemplates"
        code, pt = self.fx.request(
            "POST", pt_path, {
                "metadata": {
                    "name": "pt"
                },
                "template": {
                    "spec": {
                        "containers": [{
                            "name":
                            "main",
                            "image":
                            "busybox:1.36",
                            "env": [{
                                "name": "A",
                                "value": "1"
                            }, {
                                "name": "B",
                                "value": "2"
                            }]
                        }, {
                            "name": "side",
                            "image": "busybox:1.36"
                        }],
                        "tolerations": [{
                            "key": "old",
                            "operator": "Exists"
                        }],
                        "nodeSelector": {
                            "zone": "z1"
                        }
                    }
                }
            })
        self.assertEqual(code, 201, pt)
        smp = {
            "template": {
                "spec": {
                    "containers": [{
                        "name":
                        "main",
                        "env": [{
                            "name": "B",
                            "value": "20"
                        }, {
                            "name": "C",
                            "value": "3"
                        }]
                    }, {
                        "name": "new",
                        "image": "x:1"
                    }],
                    "tolerations": [{
                        "key": "new",
                        "operator": "Exists"
                    }],
                    "nodeSelector": {
                        "pool": "a100"
                    }
                }
            }
        }
        code, s = self.fx.request(
            "PATCH",
            f"{pt_path}/pt",
            smp,
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, s)
        tspec = s["template"]["spec"]
        self.assertEqual([x["name"] for x in tspec["containers"]],
                         ["main", "side", "new"])
        self.assertEqual(tspec["containers"][0]["image"], "busybox:1.36")
        self.assertEqual(tspec["containers"][0]["env"], [{
            "name": "A",
            "value": "1"
        }, {
            "name": "B",
            "value": "20"
        }, {
            "name": "C",
            "value": "3"
        }])
        self.assertEqual(tspec["tolerations"], [{
            "key": "new",
            "operator": "Exists"
        }])
        self.assertEqual(tspec["nodeSelector"], {"zone": "z1", "pool": "a100"})
        # $patch: delete removes a list element; null removes a map key.
        code, s = self.fx.request(
            "PATCH",
            f"{pt_path}/pt", {
                "template": {
                    "spec": {
                        "containers": [{
                            "name": "side",
                            "$patch": "delete"
                        }, {
                            "name":
                            "main",
                            "env": [{
                                "name": "A",
                                "$patch": "delete"
                            }]
                        }],
                        "nodeSelector": {
                            "zone": None
                        }
                    }
                }
            },
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, s)
        tspec = s["template"]["spec"]
        self.assertEqual([x["name"] for x in tspec["containers"]],
                         ["main", "new"])
        self.assertEqual([e["name"] for e in tspec["containers"][0]["env"]],
                         ["B", "C"])
        self.assertEqual(tspec["nodeSelector"], {"pool": "a100"})
        # The same containers as a merge patch replace the whole list.
        code, s = self.fx.request("PATCH",
                                  f"{pt_path}/pt", {
                                      "template": {
                                          "spec": {
                                              "containers": [{
                                                  "name": "only",
                                                  "image": "y:1"
                                              }]
                                          }
                                      }
                                  },
                                  content_type="application/merge-patch+json")
        self.assertEqual(code, 200, s)
        self.assertEqual(
            [x["name"] for x in s["template"]["spec"]["containers"]], ["only"])

        # On the suspended Job, SMP of scheduling directives is allowed.
        code, s = self.fx.request(
            "PATCH",
            path, {
                "spec": {
                    "template": {
                        "spec": {
                            "tolerations": [{
                                "key": "new",
                                "operator": "Exists"
                            }],
                            "nodeSelector": {
                                "pool": "a100"
                            }
                        }
                    }
                }
            },
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, s)
        self.assertEqual(s["spec"]["template"]["spec"]["nodeSelector"],
                         {"pool": "a100"})
        # Finalizers (patchStrategy merge on a list of strings) union.
        code, s = self.fx.request(
            "PATCH",
            path, {"metadata": {
                "finalizers": ["x/y"]
            }},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200)
        code, s = self.fx.request(
            "PATCH",
            path, {"metadata": {
                "finalizers": ["x/z"]
            }},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(s["metadata"]["finalizers"], ["x/y", "x/z"])

        # JSON patch.
        ops = [{
            "op": "add",
            "path": "/metadata/annotations",
            "value": {
                "a~b/c": "1"
            }
        }, {
            "op": "replace",
            "path": "/spec/suspend",
            "value": True
        }, {
            "op": "remove",
            "path": "/metadata/labels/new"
        }, {
            "op": "add",
            "path": "/spec/template/spec/tolerations/-",
            "value": {
                "key": "more",
                "operator": "Exists"
            }
        }]
        code, jp = self.fx.request("PATCH",
                                   path,
                                   ops,
                                   content_type="application/json-patch+json")
        self.assertEqual(code, 200, jp)
        self.assertEqual(jp["metadata"]["annotations"], {"a~b/c": "1"})
        self.assertEqual(jp["metadata"]["labels"], {"keep": "1"})
        self.assertEqual(
            [t["key"] for t in jp["spec"]["template"]["spec"]["tolerations"]],
            ["new", "more"])
        code, body = self.fx.request(
            "PATCH",
            path, [{
                "op": "remove",
                "path": "/metadata/annotations/a~0b~1c"
            }],
            content_type="application/json-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["metadata"]["annotations"], {})
        code, body = self.fx.request(
            "PATCH",
            path, [{
                "op": "test",
                "path": "/spec/suspend",
                "value": False
            }],
            content_type="application/json-patch+json")
        self.assertEqual(code, 422)
        # A resourceVersion in a patch is a precondition.
        code, body = self.fx.request(
            "PATCH",
            path, {"metadata": {
                "resourceVersion": "1",
                "labels": {
                    "z": "1"
                }
            }},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 409)
        self.assertStatus(body, 409, "Conflict")
        code, body = self.fx.request("PATCH",
                                     path, {"a": 1},
                                     content_type="application/yaml")
        self.assertEqual(code, 415)
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "nosuch"), {},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 404)

    def test_delete(self):
        ns = "proto-delete"
        created = self.create_job(ns, job("d", suspend=True))
        code, body = self.fx.request(
            "DELETE", jobs_path(ns, "d"), {
                "kind": "DeleteOptions",
                "apiVersion": "v1",
                "preconditions": {
                    "uid": "00000000-0000-0000-0000-000000000000"
                }
            })
        self.assertEqual(code, 409)
        self.assertStatus(body, 409, "Conflict")
        self.assertIn("Precondition failed: UID in precondition",
                      body["message"])
        code, body = self.fx.request(
            "DELETE",
            jobs_path(ns, "d") + "?propagationPolicy=Background",
            {"preconditions": {
                "uid": created["metadata"]["uid"]
            }})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["kind"], "Status")
        self.assertEqual(body["status"], "Success")
        self.assertEqual(body["details"]["uid"], created["metadata"]["uid"])
        code, body = self.fx.request("GET", jobs_path(ns, "d"))
        self.assertEqual(code, 404)
        code, body = self.fx.request("DELETE", jobs_path(ns, "d"))
        self.assertEqual(code, 404)
        self.assertStatus(body, 404, "NotFound")

    def test_other_resources(self):
        ns = "proto-other"
        code, ev = self.fx.request(
            "POST", f"/api/v1/namespaces/{ns}/events", {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {
                    "generateName": "job-x."
                },
                "involvedObject": {
                    "apiVersion": "batch/v1",
                    "kind": "Job",
                    "name": "x",
                    "namespace": ns
                },
                "type": "Normal",
                "reason": "Admitted",
                "message": "hi",
                "source": {
                    "component": "kq-k8s-shim"
                }
            })
        self.assertEqual(code, 201, ev)
        code, lst = self.fx.request(
            "GET", f"/api/v1/namespaces/{ns}/events?fieldSelector="
            "involvedObject.name%3Dx,involvedObject.kind%3DJob")
        self.assertEqual([e["reason"] for e in lst["items"]], ["Admitted"])
        code, pt = self.fx.request(
            "POST", f"/api/v1/namespaces/{ns}/podtemplates", {
                "metadata": {
                    "name": "pt"
                },
                "template": {
                    "spec": {
                        "containers": [{
                            "name": "c",
                            "image": "i"
                        }]
                    }
                }
            })
        self.assertEqual(code, 201, pt)
        prs = (f"/apis/autoscaling.x-k8s.io/v1/namespaces/{ns}/"
               "provisioningrequests")
        code, pr = self.fx.request(
            "POST", prs, {
                "apiVersion": "autoscaling.x-k8s.io/v1",
                "kind": "ProvisioningRequest",
                "metadata": {
                    "name": "pr"
                },
                "spec": {
                    "provisioningClassName":
                    "check-capacity.autoscaling.x-k8s.io",
                    "podSets": [{
                        "count": 2,
                        "podTemplateRef": {
                            "name": "pt"
                        }
                    }]
                },
                "status": {
                    "conditions": [{
                        "type": "Provisioned"
                    }]
                }
            })
        self.assertEqual(code, 201, pr)
        self.assertNotIn("status", pr)  # status only through /status
        self.assertEqual(pr["metadata"]["generation"], 1)
        # Custom resources: no strategic merge patch, updates need an rv,
        # list items keep apiVersion/kind.
        code, body = self.fx.request(
            "PATCH",
            f"{prs}/pr", {"metadata": {
                "labels": {
                    "a": "b"
                }
            }},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 415)
        self.assertStatus(body, 415, "UnsupportedMediaType")
        nov = dict(pr,
                   metadata={
                       k: v
                       for k, v in pr["metadata"].items()
                       if k != "resourceVersion"
                   })
        code, body = self.fx.request("PUT", f"{prs}/pr", nov)
        self.assertEqual(code, 422)
        code, body = self.fx.request(
            "PATCH",
            f"{prs}/pr/status", {
                "status": {
                    "conditions": [{
                        "type": "Provisioned",
                        "status": "True",
                        "reason": "Provisioned",
                        "message": "",
                        "lastTransitionTime": "2024-01-01T00:00:00Z"
                    }]
                }
            },
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["status"]["conditions"][0]["status"], "True")
        self.assertEqual(body["metadata"]["generation"], 1)
        code, lst = self.fx.request("GET", prs)
        self.assertEqual(lst["kind"], "ProvisioningRequestList")
        self.assertEqual(lst["items"][0]["kind"], "ProvisioningRequest")

    def test_request_log(self):
        self.fx.request("DELETE", "/fixture/requests")
        self.fx.request("PATCH",
                        jobs_path("proto-log", "nosuch") + "?a=b", {"x": 1},
                        content_type="application/merge-patch+json")
        code, log = self.fx.request("GET", "/fixture/requests")
        self.assertEqual(code, 200)
        self.assertEqual(len(log), 1, log)
        self.assertEqual(log[0]["method"], "PATCH")
        self.assertEqual(log[0]["path"], jobs_path("proto-log", "nosuch"))
        self.assertEqual(log[0]["query"], "a=b")
        self.assertEqual(log[0]["contentType"], "application/merge-patch+json")
        self.assertEqual(json.loads(log[0]["body"]), {"x": 1})
        code, _ = self.fx.request("GET", "/fixture/requests", token="bad")
        self.assertEqual(code, 401)

    def test_table(self):
        ns = "proto-table"
        self.create_job(ns, job("t",
                                suspend=True,
                                completions=2,
                                parallelism=2))
        code, t = self.fx.request(
            "GET",
            jobs_path(ns),
            headers={
                "Accept":
                "application/json;as=Table;v=v1;g=meta.k8s.io,"
                "application/json"
            })
        self.assertEqual(code, 200)
        self.assertEqual(t["kind"], "Table")
        self.assertEqual([c["name"] for c in t["columnDefinitions"]][:5],
                         ["Name", "Status", "Completions", "Duration", "Age"])
        self.assertEqual(t["rows"][0]["cells"][0], "t")
        self.assertEqual(t["rows"][0]["cells"][2], "0/2")
        self.assertEqual(t["rows"][0]["object"]["kind"],
                         "PartialObjectMetadata")


class WatchTest(FixtureTestBase):
    extra_args = ("--job-runtime", "30", "--bookmark-interval", "0.3")

    def test_watch_initial_and_replay(self):
        ns = "watch-replay"
        self.create_job(ns, job("pre", suspend=True))
        code, lst = self.fx.request("GET", jobs_path(ns))
        rv = lst["metadata"]["resourceVersion"]
        a = self.create_job(ns, job("a", suspend=True))
        code, mod = self.fx.request(
            "PATCH",
            jobs_path(ns, "a"), {"metadata": {
                "labels": {
                    "m": "1"
                }
            }},
            content_type="application/merge-patch+json")
        code, _ = self.fx.request("DELETE", jobs_path(ns, "a"))
        self.assertEqual(code, 200)
        r, s = self.fx.watch(
            jobs_path(ns) + f"?watch=1&resourceVersion={rv}"
            "&timeoutSeconds=2")
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Transfer-Encoding"), "chunked")
        events = []
        while True:
            e = s.next()
            if e is None:
                break
            events.append(e)
        s.close()
        # The controller's Suspended-condition writes interleave: keep "a".
        evs = [(e["type"], e["object"]["metadata"]["name"]) for e in events]
        self.assertNotIn(("ADDED", "pre"), evs)
        a_evs = [e for e in events if e["object"]["metadata"]["name"] == "a"]
        self.assertEqual(a_evs[0]["type"], "ADDED")
        self.assertEqual(a_evs[-1]["type"], "DELETED")
        self.assertTrue(all(e["type"] == "MODIFIED" for e in a_evs[1:-1]))
        self.assertEqual(a_evs[0]["object"]["metadata"]["uid"],
                         a["metadata"]["uid"])
        self.assertEqual(a_evs[0]["object"]["kind"], "Job")
        self.assertEqual(a_evs[0]["object"]["apiVersion"], "batch/v1")
        self.assertIn({"m": "1"}.items() and "m", [
            k for e in a_evs[1:-1]
            for k in (e["object"]["metadata"].get("labels") or {})
        ])
        rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
        self.assertEqual(rvs, sorted(rvs))
        self.assertTrue(all(x > int(rv) for x in rvs))

        # "0" and "": synthetic ADDED for the current objects, then live.
        for start in ("0", ""):
            r, s = self.fx.watch(
                jobs_path(ns) + f"?watch=true&resourceVersion={start}")
            e = s.next()
            self.assertEqual((e["type"], e["object"]["metadata"]["name"]),
                             ("ADDED", "pre"))
            s.close()
        # /watch/ paths are the older form of the same.
        r, s = self.fx.watch(f"/apis/batch/v1/watch/namespaces/{ns}/jobs")
        self.assertEqual(s.next()["object"]["metadata"]["name"], "pre")
        s.close()

    def test_live_events_and_selector_transitions(self):
        ns = "watch-live"
        r, s = self.fx.watch(
            jobs_path(ns) + "?watch=1&labelSelector=q%3D1&resourceVersion=0")
        self.assertEqual(r.status, 200)
        self.create_job(ns, job("x", suspend=True, labels={"q": "1"}))
        self.create_job(ns, job("y", suspend=True, labels={"q": "2"}))
        e = s.next()
        self.assertEqual((e["type"], e["object"]["metadata"]["name"]),
                         ("ADDED", "x"))
        # Relabelled out of the selector: DELETED for this watch.
        code, _ = self.fx.request("PATCH",
                                  jobs_path(ns, "x"),
                                  {"metadata": {
                                      "labels": {
                                          "q": "3"
                                      }
                                  }},
                                  content_type="application/merge-patch+json")
        while True:
            e = s.next()
            if e["type"] != "MODIFIED":
                break
        self.assertEqual((e["type"], e["object"]["metadata"]["name"]),
                         ("DELETED", "x"))
        code, _ = self.fx.request("PATCH",
                                  jobs_path(ns, "y"),
                                  {"metadata": {
                                      "labels": {
                                          "q": "1"
                                      }
                                  }},
                                  content_type="application/merge-patch+json")
        e = s.next()
        self.assertEqual((e["type"], e["object"]["metadata"]["name"]),
                         ("ADDED", "y"))
        s.close()

    def test_bookmarks_and_timeout(self):
        ns = "watch-bookmark"
        code, lst = self.fx.request("GET", jobs_path(ns))
        start = time.monotonic()
        r, s = self.fx.watch(
            jobs_path(ns) +
            "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1"
            f"&resourceVersion={lst['metadata']['resourceVersion']}")
        e = s.next()
        self.assertEqual(e["type"], "BOOKMARK")
        self.assertEqual(e["object"]["kind"], "Job")
        self.assertEqual(e["object"]["apiVersion"], "batch/v1")
        self.assertEqual(list(e["object"]["metadata"].keys()),
                         ["resourceVersion"])
        self.assertGreaterEqual(
            int(e["object"]["metadata"]["resourceVersion"]),
            int(lst["metadata"]["resourceVersion"]))
        while s.next() is not None:
            pass
        elapsed = time.monotonic() - start
        self.assertGreater(elapsed, 0.9)
        self.assertLess(elapsed, 6)
        s.close()
        # Without allowWatchBookmarks there are none.
        r, s = self.fx.watch(
            jobs_path(ns) + "?watch=1&timeoutSeconds=1"
            f"&resourceVersion={lst['metadata']['resourceVersion']}")
        self.assertIsNone(s.next())
        s.close()

    def test_closed_watch_goes_away(self):
        # A client closing an idle watch: the fixture notices (the watch
        # would otherwise linger until timeoutSeconds) and serves on.
        ns = "watch-close"
        for _ in range(3):
            r, s = self.fx.watch(
                jobs_path(ns) + "?watch=1&labelSelector=a%3Db")
            self.assertEqual(r.status, 200)
            code, watches = self.fx.request("GET", "/fixture/watches")
            self.assertIn(
                {
                    "resource": "jobs.batch",
                    "namespace": ns,
                    "labelSelector": "a=b"
                }, watches)
            s.close()
        wait_for(lambda: not [
            w for w in self.fx.request("GET", "/fixture/watches")[1]
            if w["namespace"] == ns
        ],
                 timeout=3)
        self.create_job(ns, job("after", suspend=True))
        r, s = self.fx.watch(jobs_path(ns) + "?watch=1&resourceVersion=0")
        self.assertEqual(s.next()["object"]["metadata"]["name"], "after")
        s.close()

    def test_gone_after_compact(self):
        ns = "watch-gone"
        code, lst = self.fx.request("GET", jobs_path(ns))
        old_rv = lst["metadata"]["resourceVersion"]
        self.create_job(ns, job("g", suspend=True))
        r, open_stream = self.fx.watch(
            jobs_path(ns) + "?watch=1&resourceVersion="
            f"{old_rv}")
        self.assertEqual(open_stream.next()["type"], "ADDED")
        code, body = self.fx.request("POST", "/fixture/compact")
        self.assertEqual(code, 200)
        r, s = self.fx.watch(
            jobs_path(ns) + f"?watch=1&resourceVersion={old_rv}")
        self.assertEqual(r.status, 410)
        status = json.loads(r.read())
        s.close()
        self.assertStatus(status, 410, "Expired")
        self.assertIn("too old resource version", status["message"])
        # A watch from the current list still works after compaction.
        code, lst = self.fx.request("GET", jobs_path(ns))
        r, s = self.fx.watch(
            jobs_path(ns) + "?watch=1&timeoutSeconds=1"
            f"&resourceVersion={lst['metadata']['resourceVersion']}")
        self.assertEqual(r.status, 200)
        s.close()
        # The open stream: closeWatches sends ERROR 410 and ends it.
        code, body = self.fx.request("POST", "/fixture/compact?closeWatches=1")
        e = open_stream.next()
        while e["type"] == "MODIFIED":
            e = open_stream.next()
        self.assertEqual(e["type"], "ERROR")
        self.assertStatus(e["object"], 410, "Expired")
        self.assertIsNone(open_stream.next())
        open_stream.close()

    def test_watch_window(self):
        fx = Fixture("--watch-window", "3")
        try:
            code, lst = fx.request("GET", jobs_path("w"))
            rv = lst["metadata"]["resourceVersion"]
            for i in range(5):
                fx.request(
                    "POST", "/api/v1/namespaces/w/podtemplates", {
                        "metadata": {
                            "name": f"t{i}"
                        },
                        "template": {
                            "spec": {
                                "containers": [{
                                    "name": "c",
                                    "image": "i"
                                }]
                            }
                        }
                    })
            r, s = fx.watch(f"/api/v1/namespaces/w/podtemplates?watch=1&"
                            f"resourceVersion={rv}")
            self.assertEqual(r.status, 410)
            s.close()
        finally:
            fx.stop()


class JobControllerTest(FixtureTestBase):
    extra_args = ("--job-runtime", "1", "--pod-stop-seconds", "1.5")

    def test_runs_to_completion(self):
        ns = "ctl-complete"
        t0 = time.monotonic()
        self.create_job(
            ns,
            job("c",
                parallelism=3,
                completions=2,
                annotations={"fake.kq.dev/runtime-seconds": "0.6"}))
        j = wait_for(lambda: (lambda j: j if (j.get("status") or {}).get(
            "active") else None)(self.get_job(ns, "c")))
        self.assertEqual(j["status"]["active"],
                         2)  # min(parallelism, completions)
        self.assertIn("startTime", j["status"])
        self.assertIsNone(cond(j, "Complete"))
        j = wait_for(lambda: (lambda j: j if cond(j, "Complete") else None)
                     (self.get_job(ns, "c")))
        self.assertGreater(time.monotonic() - t0, 0.5)
        self.assertEqual(cond(j, "Complete")["status"], "True")
        self.assertEqual(j["status"]["succeeded"], 2)
        self.assertNotIn("active", j["status"])
        self.assertIn("completionTime", j["status"])

    def test_fail_annotation(self):
        ns = "ctl-fail"
        self.create_job(
            ns,
            job("f",
                annotations={
                    "fake.kq.dev/runtime-seconds": "0.3",
                    "fake.kq.dev/fail": "true"
                }))
        j = wait_for(lambda: (lambda j: j if cond(j, "Failed") else None)
                     (self.get_job(ns, "f")))
        self.assertEqual(cond(j, "Failed")["status"], "True")
        self.assertIsNone(cond(j, "Complete"))
        self.assertNotIn("active", j["status"])

    def test_created_suspended(self):
        ns = "ctl-suspended"
        self.create_job(ns, job("s", suspend=True, parallelism=2))
        j = wait_for(lambda: (lambda j: j if cond(j, "Suspended") else None)
                     (self.get_job(ns, "s")))
        self.assertEqual(cond(j, "Suspended")["status"], "True")
        self.assertEqual(j["status"].get("active", 0), 0)
        self.assertNotIn("startTime", j["status"])

    def test_suspend_while_active(self):
        ns = "ctl-preempt"
        self.create_job(
            ns,
            job("p",
                parallelism=4,
                completions=4,
                annotations={"fake.kq.dev/runtime-seconds": "30"}))
        # Watch the transitions the shim waits for.
        code, lst = self.fx.request("GET", jobs_path(ns))
        j = wait_for(lambda: (lambda j: j if (j.get("status") or {}).get(
            "active") else None)(self.get_job(ns, "p")))
        self.assertEqual(j["status"]["active"], 4)
        r, s = self.fx.watch(
            jobs_path(ns) + "?watch=1&resourceVersion=" +
            j["metadata"]["resourceVersion"])
        t0 = time.monotonic()
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "p"), {"spec": {
                "suspend": True
            }},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 200, body)
        e = s.next()
        self.assertEqual(e["type"], "MODIFIED")
        self.assertTrue(e["object"]["spec"]["suspend"])
        self.assertEqual(e["object"]["status"]["active"],
                         4)  # pods terminating
        # While pods terminate the template stays immutable.
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "p"),
            {"spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {
                            "x": "y"
                        }
                    }
                }
            }},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 422, body)
        e = s.next()
        self.assertEqual(e["type"], "MODIFIED")
        self.assertGreaterEqual(time.monotonic() - t0, 1.2)
        st = e["object"]["status"]
        self.assertNotIn("active", st)
        self.assertNotIn("startTime", st)
        self.assertEqual(cond(e["object"], "Suspended")["status"], "True")
        s.close()
        # Now suspended and stopped: scheduling directives may change again.
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "p"),
            {"spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {
                            "x": "y"
                        }
                    }
                }
            }},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, body)
        # Resume: active again, Suspended=False.
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "p"), {"spec": {
                "suspend": False
            }},
            content_type="application/merge-patch+json")
        j = wait_for(lambda: (lambda j: j if (j.get("status") or {}).get(
            "active") else None)(self.get_job(ns, "p")))
        self.assertEqual(cond(j, "Suspended")["status"], "False")
        self.assertEqual(j["status"]["active"], 4)

    def test_template_immutability(self):
        ns = "ctl-immutable"
        self.create_job(
            ns, job("run", annotations={"fake.kq.dev/runtime-seconds": "30"}))
        wait_for(lambda:
                 (self.get_job(ns, "run").get("status") or {}).get("active"))
        for patch in ({
                "nodeSelector": {
                    "a": "b"
                }
        }, {
                "tolerations": [{
                    "key": "k",
                    "operator": "Exists"
                }]
        }):
            code, body = self.fx.request(
                "PATCH",
                jobs_path(ns, "run"), {"spec": {
                    "template": {
                        "spec": patch
                    }
                }},
                content_type="application/strategic-merge-patch+json")
            self.assertEqual(code, 422, body)
            self.assertStatus(body, 422, "Invalid")
            self.assertEqual(body["details"]["causes"][0]["field"],
                             "spec.template")
        # Suspended and never started: nodeSelector, tolerations, labels and
        # annotations may change (with suspend=false in the same write), the
        # containers may not.
        self.create_job(ns, job("sus", suspend=True))
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "sus"), {
                "spec": {
                    "suspend": False,
                    "template": {
                        "metadata": {
                            "labels": {
                                "l": "1"
                            },
                            "annotations": {
                                "a": "1"
                            }
                        },
                        "spec": {
                            "nodeSelector": {
                                "pool": "a100"
                            },
                            "tolerations": [{
                                "key": "gpu",
                                "operator": "Exists"
                            }]
                        }
                    }
                }
            },
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"]["template"]["spec"]["nodeSelector"],
                         {"pool": "a100"})
        self.create_job(ns, job("sus2", suspend=True))
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "sus2"), {
                "spec": {
                    "template": {
                        "spec": {
                            "containers": [{
                                "name": "main",
                                "image": "other:1"
                            }]
                        }
                    }
                }
            },
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 422, body)
        # Other immutable fields.
        code, body = self.fx.request(
            "PATCH",
            jobs_path(ns, "sus2"), {"spec": {
                "completions": 5
            }},
            content_type="application/merge-patch+json")
        self.assertEqual(code, 422, body)


class WebhookHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.reviews.append((self.path, body))
        req = body["request"]
        mode = self.server.mode
        if mode == "slow":
            time.sleep(5)
        if mode == "deny":
            resp = {
                "uid": req["uid"],
                "allowed": False,
                "status": {
                    "code": 403,
                    "message": "no way"
                }
            }
        else:
            ops = [{
                "op": "replace",
                "path": "/spec/suspend",
                "value": True
            }, {
                "op": "add",
                "path": "/metadata/annotations",
                "value": {
                    "mutated-by": "test-webhook"
                }
            }]
            resp = {
                "uid": req["uid"],
                "allowed": True,
                "patchType": "JSONPatch",
                "patch": base64.b64encode(json.dumps(ops).encode()).decode()
            }
            if mode == "baduid":
                resp["uid"] = "nope"
        data = json.dumps({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": resp
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class WebhookTest(FixtureTestBase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The webhook serves the fixture's own certificate (SAN 127.0.0.1), so
        # the fixture's CA is its caBundle.
        cls.hook = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                   WebhookHandler)
        cls.hook.reviews = []
        cls.hook.mode = "patch"
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(cls.fx.dir, "server.crt"),
                            os.path.join(cls.fx.dir, "server.key"))
        cls.hook.socket = ctx.wrap_socket(cls.hook.socket, server_side=True)
        threading.Thread(target=cls.hook.serve_forever, daemon=True).start()
        with open(os.path.join(cls.fx.dir, "ca.crt"), "rb") as f:
            cls.ca_bundle = base64.b64encode(f.read()).decode()

    @classmethod
    def tearDownClass(cls):
        cls.hook.shutdown()
        super().tearDownClass()

    def setUp(self):
        self.hook.reviews.clear()
        self.hook.mode = "patch"
        code, lst = self.fx.request(
            "GET", "/apis/admissionregistration.k8s.io/v1/"
            "mutatingwebhookconfigurations")
        for it in lst["items"]:
            self.fx.request(
                "DELETE", "/apis/admissionregistration.k8s.io/v1/"
                f"mutatingwebhookconfigurations/{it['metadata']['name']}")

    def register(self,
                 url=None,
                 failure_policy="Fail",
                 ca_bundle=None,
                 object_selector=None,
                 operations=("CREATE", ),
                 timeout=None):
        wh = {
            "name":
            "mjob.kq.dev",
            "clientConfig": {
                "url": url
                or f"https://127.0.0.1:{self.hook.server_address[1]}"
                "/mutate-batch-v1-job",
                "caBundle": ca_bundle or self.ca_bundle
            },
            "rules": [{
                "apiGroups": ["batch"],
                "apiVersions": ["v1"],
                "operations": list(operations),
                "resources": ["jobs"]
            }],
            "failurePolicy":
            failure_policy,
            "sideEffects":
            "None",
            "admissionReviewVersions": ["v1"]
        }
        if object_selector is not None:
            wh["objectSelector"] = object_selector
        if timeout is not None:
            wh["timeoutSeconds"] = timeout
        code, body = self.fx.request(
            "POST", "/apis/admissionregistration.k8s.io/v1/"
            "mutatingwebhookconfigurations", {
                "apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration",
                "metadata": {
                    "name": "kq"
                },
                "webhooks": [wh]
            })
        self.assertEqual(code, 201, body)
        self.assertNotIn("namespace", body["metadata"])

    def test_mutates_on_create(self):
        self.register(
            object_selector={
                "matchExpressions": [{
                    "key": "kueue.x-k8s.io/queue-name",
                    "operator": "Exists"
                }]
            })
        created = self.create_job(
            "hook-ns", job("w", labels={"kueue.x-k8s.io/queue-name": "q"}))
        self.assertIs(created["spec"]["suspend"], True)
        self.assertEqual(created["metadata"]["annotations"],
                         {"mutated-by": "test-webhook"})
        self.assertEqual(len(self.hook.reviews), 1)
        path, review = self.hook.reviews[0]
        self.assertTrue(path.startswith("/mutate-batch-v1-job?timeout="), path)
        self.assertEqual(review["apiVersion"], "admission.k8s.io/v1")
        self.assertEqual(review["kind"], "AdmissionReview")
        req = review["request"]
        self.assertRegex(req["uid"], r"^[0-9a-f-]{36}$")
        self.assertEqual(req["kind"], {
            "group": "batch",
            "version": "v1",
            "kind": "Job"
        })
        self.assertEqual(req["resource"], {
            "group": "batch",
            "version": "v1",
            "resource": "jobs"
        })
        self.assertEqual(req["namespace"], "hook-ns")
        self.assertEqual(req["name"], "w")
        self.assertEqual(req["operation"], "CREATE")
        self.assertIs(req["object"]["spec"]["suspend"], False)  # defaulted
        self.assertIsNone(req["oldObject"])
        # Not selected by the objectSelector: no call, no mutation.
        plain = self.create_job("hook-ns", job("plain"))
        self.assertIs(plain["spec"]["suspend"], False)
        self.assertEqual(len(self.hook.reviews), 1)
        # Not for UPDATE (the rule says CREATE).
        code, _ = self.fx.request("PATCH",
                                  jobs_path("hook-ns", "w"),
                                  {"metadata": {
                                      "labels": {
                                          "z": "1"
                                      }
                                  }},
                                  content_type="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.assertEqual(len(self.hook.reviews), 1)

    def test_object_selector_match_labels(self):
        self.register(object_selector={"matchLabels": {"team": "ml"}})
        self.create_job("hook-sel", job("no"))
        self.create_job("hook-sel", job("yes", labels={"team": "ml"}))
        self.assertEqual([r[1]["request"]["name"] for r in self.hook.reviews],
                         ["yes"])

    def test_failure_policy(self):
        # Nothing listens on this port.
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
        s.close()
        self.register(url=f"https://127.0.0.1:{dead}/mutate")
        code, body = self.fx.request("POST", jobs_path("hook-fail"), job("f"))
        self.assertEqual(code, 500, body)
        self.assertStatus(body, 500, "InternalError")
        self.assertIn('failed calling webhook "mjob.kq.dev"', body["message"])
        code, _ = self.fx.request("GET", jobs_path("hook-fail", "f"))
        self.assertEqual(code, 404)
        self.setUp()
        self.register(url=f"https://127.0.0.1:{dead}/mutate",
                      failure_policy="Ignore")
        created = self.create_job("hook-fail", job("f"))
        self.assertIs(created["spec"]["suspend"], False)

    def test_tls_verified_with_ca_bundle(self):
        # A CA that did not sign the webhook's certificate.
        other = tempfile.mkdtemp()
        try:
            subprocess.run([
                "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
                os.path.join(other, "k"), "-out",
                os.path.join(other, "c"), "-days", "1", "-subj", "/CN=other"
            ],
                           check=True,
                           capture_output=True)
            with open(os.path.join(other, "c"), "rb") as f:
                wrong = base64.b64encode(f.read()).decode()
        finally:
            shutil.rmtree(other)
        self.register(ca_bundle=wrong)
        code, body = self.fx.request("POST", jobs_path("hook-tls"), job("t"))
        self.assertEqual(code, 500, body)
        self.assertIn("failed calling webhook", body["message"])
        self.assertEqual(self.hook.reviews, [])

    def test_timeout(self):
        self.register(timeout=1)
        self.hook.mode = "slow"
        t0 = time.monotonic()
        code, body = self.fx.request("POST", jobs_path("hook-slow"), job("s"))
        self.assertLess(time.monotonic() - t0, 4)
        self.assertEqual(code, 500, body)
        self.assertIn('failed calling webhook "mjob.kq.dev"', body["message"])

    def test_namespace_selector(self):
        self.register()
        code, body = self.fx.request(
            "PATCH", "/apis/admissionregistration.k8s.io/v1/"
            "mutatingwebhookconfigurations/kq", [{
                "op": "add",
                "path": "/webhooks/0/namespaceSelector",
                "value": {
                    "matchLabels": {
                        "kubernetes.io/metadata.name": "hook-nsyes"
                    }
                }
            }],
            content_type="application/json-patch+json")
        self.assertEqual(code, 200, body)
        self.create_job("hook-nsno", job("a"))
        self.create_job("hook-nsyes", job("b"))
        self.assertEqual(
            [r[1]["request"]["namespace"] for r in self.hook.reviews],
            ["hook-nsyes"])

    def test_denied_and_bad_uid(self):
        self.register()
        self.hook.mode = "deny"
        code, body = self.fx.request("POST", jobs_path("hook-deny"), job("d"))
        self.assertEqual(code, 403, body)
        self.assertIn(
            'admission webhook "mjob.kq.dev" denied the request: no way',
            body["message"])
        self.hook.mode = "baduid"
        code, body = self.fx.request("POST", jobs_path("hook-deny"), job("d"))
        self.assertEqual(code, 500, body)


if __name__ == "__main__":
    unittest.main(verbosity=2)
