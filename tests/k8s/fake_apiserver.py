#!/usr/bin/python3
"""A Kubernetes API server fixture for kq's shim tests (Python 3 stdlib only).

It speaks the real REST protocol (JSON) for the resources the shim uses, so
the real kubectl and a real client work against it: discovery, list (label
and field selectors, limit/continue), watch (chunked JSON event stream,
bookmarks, resourceVersion replay, 410 Gone), get, create, update, patch
(merge, strategic merge, JSON patch), delete; Job defaulting and the
validation kubectl output shows; a tiny Job controller; mutating admission
webhooks. See README.md for the deviations from a real API server.

Usage:
  fake_apiserver.py --dir DIR [--port 0] [--token T] [--job-runtime SECONDS]
                    [--pod-stop-seconds S] [--watch-window N]
Prints `READY https://127.0.0.1:PORT` once serving.
"""

import argparse
import base64
import collections
import copy
import datetime
import hashlib
import heapq
import http.server
import json
import os
import queue
import re
import select
import signal
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.4",
    "gitCommit": "59526cd4867447956156ae3a602fcbac5b2b2e3a",
    "gitTreeState": "clean",
    "buildDate": "2025-04-22T16:02:27Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}

RUNTIME_ANNOTATION = "fake.kq.dev/runtime-seconds"
FAIL_ANNOTATION = "fake.kq.dev/fail"

ALL_VERBS = [
    "create", "delete", "deletecollection", "get", "list", "patch", "update",
    "watch"
]


class ResourceType:
    """One resource of the API (group/version/plural), as discovery has it."""

    def __init__(self,
                 group,
                 version,
                 plural,
                 kind,
                 namespaced,
                 singular,
                 short_names=(),
                 categories=(),
                 subresources=(),
                 custom=False,
                 generation=True,
                 unconditional_update=True):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.singular = singular
        self.short_names = list(short_names)
        self.categories = list(categories)
        self.subresources = list(subresources)
        # Custom resources (CRDs) differ: no strategic merge patch, list items
        # keep apiVersion/kind, updates need metadata.resourceVersion.
        self.custom = custom
        self.generation = generation
        self.unconditional_update = unconditional_update

    @property
    def group_version(self):
        if not self.group:
            return self.version
        return f"{self.group}/{self.version}"

    @property
    def qualified(self):
        # "jobs.batch", "events" (core), as API server messages name resources.
        return self.plural if not self.group else f"{self.plural}.{self.group}"

    @property
    def key(self):
        return (self.group, self.version, self.plural)


RESOURCES = [
    ResourceType("",
                 "v1",
                 "namespaces",
                 "Namespace",
                 False,
                 "namespace", ["ns"],
                 subresources=["status"],
                 generation=False),
    ResourceType("",
                 "v1",
                 "events",
                 "Event",
                 True,
                 "event", ["ev"],
                 generation=False),
    ResourceType("",
                 "v1",
                 "podtemplates",
                 "PodTemplate",
                 True,
                 "podtemplate",
                 generation=False),
    ResourceType("",
                 "v1",
                 "pods",
                 "Pod",
                 True,
                 "pod", ["po"], ["all"],
                 subresources=["status"],
                 generation=False),
    ResourceType("batch",
                 "v1",
                 "jobs",
                 "Job",
                 True,
                 "job", [], ["all"],
                 subresources=["status"]),
    ResourceType("autoscaling.x-k8s.io",
                 "v1",
                 "provisioningrequests",
                 "ProvisioningRequest",
                 True,
                 "provisioningrequest", ["provreq", "provreqs"],
                 subresources=["status"],
                 custom=True,
                 unconditional_update=False),
    ResourceType("admissionregistration.k8s.io", "v1",
                 "mutatingwebhookconfigurations",
                 "MutatingWebhookConfiguration", False,
                 "mutatingwebhookconfiguration", [], ["api-extensions"]),
]
RESOURCE_BY_KEY = {r.key: r for r in RESOURCES}
GROUP_VERSIONS = collections.OrderedDict()
for _r in RESOURCES:
    GROUP_VERSIONS.setdefault((_r.group, _r.version), []).append(_r)

NAMESPACE_RT = RESOURCE_BY_KEY[("", "v1", "namespaces")]
JOB_RT = RESOURCE_BY_KEY[("batch", "v1", "jobs")]
MWC_RT = RESOURCE_BY_KEY[("admissionregistration.k8s.io", "v1",
                          "mutatingwebhookconfigurations")]


def now_rfc3339(t=None):
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(
        int(t), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(s):
    try:
        return datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None


# ---------------------------------------------------------------- errors


class ApiError(Exception):
    """An error the API server returns as a metav1.Status."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self):
        s = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        }
        if self.details is not None:
            s["details"] = self.details
        s["code"] = self.code
        return s


def err_details(rt, name):
    d = {}
    if name:
        d["name"] = name
    if rt.group:
        d["group"] = rt.group
    d["kind"] = rt.plural
    return d


def not_found(rt, name):
    return ApiError(404, "NotFound", f'{rt.qualified} "{name}" not found',
                    err_details(rt, name))


def already_exists(rt, name):
    return ApiError(409, "AlreadyExists",
                    f'{rt.qualified} "{name}" already exists',
                    err_details(rt, name))


def conflict(rt, name, why=None):
    why = why or ("the object has been modified; please apply your changes to "
                  "the latest version and try again")
    return ApiError(
        409, "Conflict",
        f'Operation cannot be fulfilled on {rt.qualified} "{name}": {why}',
        err_details(rt, name))


def bad_request(message):
    return ApiError(400, "BadRequest", message)


def gone(message):
    return ApiError(410, "Expired", message)


class FieldError:
    """A field.Error as apimachinery formats it."""

    def __init__(self, kind, field, detail="", value=None, supported=None):
        self.kind = kind  # Required, Invalid, NotSupported, Forbidden
        self.field = field
        self.detail = detail
        self.value = value
        self.supported = supported

    def reason(self):
        return {
            "Required": "FieldValueRequired",
            "Invalid": "FieldValueInvalid",
            "NotSupported": "FieldValueNotSupported",
            "Forbidden": "FieldValueForbidden",
            "Duplicate": "FieldValueDuplicate",
        }[self.kind]

    def body(self):
        if self.kind == "Required":
            return "Required value" + (": " +
                                       self.detail if self.detail else "")
        if self.kind == "Forbidden":
            return "Forbidden" + (": " + self.detail if self.detail else "")
        if self.kind == "NotSupported":
            sup = ", ".join(json.dumps(s) for s in self.supported)
            return (f"Unsupported value: {json.dumps(self.value)}: "
                    f"supported values: {sup}")
        if self.kind == "Duplicate":
            return f"Duplicate value: {json.dumps(self.value)}"
        v = self.value
        vs = json.dumps(v) if isinstance(
            v, str) else ("null" if v is None else json.dumps(v))
        return f"Invalid value: {vs}" + (": " +
                                         self.detail if self.detail else "")

    def message(self):
        return f"{self.field}: {self.body()}"


def invalid(rt, name, errors):
    msgs = [e.message() for e in errors]
    if len(msgs) == 1:
        agg = msgs[0]
    else:
        agg = "[" + ", ".join(msgs) + "]"
    details = {"name": name}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.kind
    details["causes"] = [{
        "reason": e.reason(),
        "message": e.body(),
        "field": e.field
    } for e in errors]
    kind = rt.kind if not rt.group else f"{rt.kind}.{rt.group}"
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {agg}',
                    details)


# ---------------------------------------------------------------- selectors

_LABEL_KEY = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _split_top_level(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def parse_label_selector(s):
    """Parses a label selector string into (key, op, values) requirements."""
    reqs = []
    if not s or not s.strip():
        return reqs
    for term in _split_top_level(s):
        t = term.strip()
        if not t:
            raise bad_request(
                "unable to parse requirement: found '', expected: "
                "identifier")
        m = re.match(r"^([^\s!=<>()]+)\s+(in|notin)\s*\((.*)\)$", t)
        if m:
            vals = [v.strip() for v in m.group(3).split(",") if v.strip()]
            reqs.append((m.group(1), m.group(2), vals))
            continue
        m = re.match(r"^!\s*([^\s!=<>()]+)$", t)
        if m:
            reqs.append((m.group(1), "!", []))
            continue
        m = re.match(r"^([^\s!=<>()]+)\s*(==|!=|=|<|>)\s*([^\s!=<>(),]*)$", t)
        if m:
            op = {"==": "=", "=": "="}.get(m.group(2), m.group(2))
            reqs.append((m.group(1), op, [m.group(3)]))
            continue
        m = re.match(r"^([^\s!=<>()]+)$", t)
        if m:
            reqs.append((m.group(1), "exists", []))
            continue
        raise bad_request(f"unable to parse requirement: {t}")
    for key, op, vals in reqs:
        if not _LABEL_KEY.match(key):
            raise bad_request(
                f"unable to parse requirement: invalid label key "
                f"\"{key}\"")
        for v in vals:
            if not _LABEL_VALUE.match(v) or len(v) > 63:
                raise bad_request(
                    f"unable to parse requirement: invalid label value: "
                    f"\"{v}\"")
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has = key in labels
        v = labels.get(key)
        if op == "exists" and not has:
            return False
        if op == "!" and has:
            return False
        if op == "=" and (not has or v != vals[0]):
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and (not has or v not in vals):
            return False
        if op == "notin" and has and v in vals:
            return False
        if op in ("<", ">"):
            try:
                lv, rv = int(v), int(vals[0])
            except (TypeError, ValueError):
                return False
            if (op == "<" and not lv < rv) or (op == ">" and not lv > rv):
                return False
    return True


def label_selector_object_matches(selector, labels):
    """A metav1.LabelSelector (matchLabels/matchExpressions) against labels."""
    if selector is None:
        return True
    labels = labels or {}
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in selector.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


FIELD_LABELS = {
    "": {"metadata.name", "metadata.namespace"},
    "events": {
        "metadata.name", "metadata.namespace", "involvedObject.kind",
        "involvedObject.namespace", "involvedObject.name",
        "involvedObject.uid", "involvedObject.apiVersion",
        "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
        "reportingComponent", "source", "type"
    },
    "jobs": {"metadata.name", "metadata.namespace", "status.successful"},
    "namespaces": {"metadata.name", "status.phase"},
    "pods":
    {"metadata.name", "metadata.namespace", "spec.nodeName", "status.phase"},
}


def parse_field_selector(s, rt):
    reqs = []
    if not s:
        return reqs
    allowed = FIELD_LABELS.get(rt.plural, FIELD_LABELS[""])
    for term in s.split(","):
        term = term.strip()
        if not term:
            continue
        m = re.match(r"^([^!=]+)(==|!=|=)(.*)$", term)
        if not m:
            raise bad_request(
                f"invalid selector: '{s}'; can't understand '{term}'")
        field, op, value = m.group(1), m.group(2), m.group(3)
        if field not in allowed:
            raise bad_request(f'field label not supported: {field}')
        reqs.append((field, "!=" if op == "!=" else "=", value))
    return reqs


def field_value(obj, field):
    if field == "source":
        return (obj.get("source") or {}).get("component", "")
    if field == "status.successful":
        return str((obj.get("status") or {}).get("succeeded", 0))
    cur = obj
    for part in field.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    return str(cur)


def fields_match(reqs, obj):
    for field, op, value in reqs:
        v = field_value(obj, field)
        if op == "=" and v != value:
            return False
        if op == "!=" and v == value:
            return False
    return True


# ---------------------------------------------------------------- patches


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            result.pop(k, None)
        else:
            result[k] = merge_patch(result.get(k), v)
    return result


def _json_pointer(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid",
                       f"JSON pointer {path!r} does not start with /")
    return [
        p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")
    ]


def _resolve_parent(doc, parts, op):
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise ApiError(
                422, "Invalid",
                f"the server rejected our request due to an error in our "
                f"request: doc is missing path: \"/{'/'.join(parts)}\": "
                f"missing value")
    return cur


def _pointer_get(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise ApiError(
                422, "Invalid",
                f"doc is missing path: \"/{'/'.join(parts)}\": missing "
                f"value")
    return cur


def json_patch(doc, ops):
    """RFC 6902 JSON patch."""
    if not isinstance(ops, list):
        raise bad_request(
            "json: cannot unmarshal object into Go value of type "
            "jsonpatch.Patch")
    doc = copy.deepcopy(doc)

    def add(doc, parts, value):
        if not parts:
            return value
        parent = _resolve_parent(doc, parts, "add")
        last = parts[-1]
        if isinstance(parent, dict):
            parent[last] = value
        elif isinstance(parent, list):
            if last == "-":
                parent.append(value)
            elif last.isdigit() and int(last) <= len(parent):
                parent.insert(int(last), value)
            else:
                raise ApiError(
                    422, "Invalid", f"add operation does not apply: index "
                    f"{last} out of bounds")
        else:
            raise ApiError(422, "Invalid", "add operation does not apply")
        return doc

    def remove(doc, parts):
        parent = _resolve_parent(doc, parts, "remove")
        last = parts[-1]
        if isinstance(parent, dict) and last in parent:
            return parent.pop(last)
        if isinstance(parent,
                      list) and last.isdigit() and int(last) < len(parent):
            return parent.pop(int(last))
        raise ApiError(
            422, "Invalid",
            f"the server rejected our request due to an error in our "
            f"request: remove operation does not apply: doc is missing "
            f"path: \"/{'/'.join(parts)}\": missing value")

    for op in ops:
        kind = op.get("op")
        parts = _json_pointer(op.get("path", ""))
        if kind == "add":
            doc = add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            remove(doc, parts)
        elif kind == "replace":
            _pointer_get(doc, parts)
            if not parts:
                doc = copy.deepcopy(op.get("value"))
            else:
                parent = _resolve_parent(doc, parts, "replace")
                last = parts[-1]
                if isinstance(parent, list):
                    parent[int(last)] = copy.deepcopy(op.get("value"))
                else:
                    parent[last] = copy.deepcopy(op.get("value"))
        elif kind == "move":
            frm = _json_pointer(op.get("from", ""))
            value = remove(doc, frm)
            doc = add(doc, parts, value)
        elif kind == "copy":
            frm = _json_pointer(op.get("from", ""))
            doc = add(doc, parts, copy.deepcopy(_pointer_get(doc, frm)))
        elif kind == "test":
            if _pointer_get(doc, parts) != op.get("value"):
                raise ApiError(
                    422, "Invalid",
                    f"the server rejected our request due to an error in "
                    f"our request: testing value /{'/'.join(parts)} failed: "
                    f"test failed")
        else:
            raise ApiError(422, "Invalid", f"Unexpected kind: {kind}")
    return doc


# Strategic merge patch: the patchMergeKey of the list fields of the types the
# fixture stores (from the Go struct tags of k8s.io/api). Lists absent here
# are atomic (replaced), as tolerations, args, command and envFrom are.
SMP_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "webhooks": "name",
}
# Lists of scalars with patchStrategy merge: union.
SMP_MERGE_PRIMITIVES = {"finalizers"}


def strategic_merge(original, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(original, dict):
        original = {}
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = copy.deepcopy(original)
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [
                    x for x in result[field] if x not in (v or [])
                ]
            continue
        if v is None:
            result.pop(k, None)
            continue
        if isinstance(v, dict):
            merged = strategic_merge(result.get(k), v)
            if merged is None:
                result.pop(k, None)
            else:
                result[k] = merged
        elif isinstance(v, list):
            result[k] = _smp_list(k, result.get(k), v)
        else:
            result[k] = copy.deepcopy(v)
    if isinstance(retain, list):
        for k in list(result.keys()):
            if k not in retain and k not in patch:
                result.pop(k, None)
    return result


def _smp_list(field, original, patch):
    original = original if isinstance(original, list) else []
    if field in SMP_MERGE_PRIMITIVES:
        out = list(original)
        for x in patch:
            if x not in out:
                out.append(x)
        return out
    key = SMP_MERGE_KEYS.get(field)
    if key is None or not all(isinstance(x, dict) for x in patch):
        return [
            x for x in copy.deepcopy(patch)
            if not (isinstance(x, dict) and "$patch" in x)
        ]
    for x in patch:
        if x.get("$patch") == "replace":
            return [copy.deepcopy(y) for y in patch if y.get("$patch") is None]
    out = copy.deepcopy(original)
    for x in patch:
        if key not in x:
            raise bad_request(
                f"map: {x} does not contain declared merge key: {key}")
        idx = next((i for i, y in enumerate(out)
                    if isinstance(y, dict) and y.get(key) == x[key]), None)
        if x.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, x))
        else:
            out[idx] = strategic_merge(out[idx], x)
    return out


# ---------------------------------------------------------------- tables


def human_duration(seconds):
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        sec = s % 60
        return f"{minutes}m" if sec == 0 else f"{minutes}m{sec}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        d = (hours // 24) % 365
        y = hours // 24 // 365
        return f"{y}y" if d == 0 else f"{y}y{d}d"
    return f"{hours // 24 // 365}y"


def _age(obj):
    t = parse_rfc3339((obj.get("metadata") or {}).get("creationTimestamp"))
    return "<unknown>" if t is None else human_duration(time.time() - t)


def _col(name, typ, desc, fmt="", priority=0):
    return {
        "name": name,
        "type": typ,
        "format": fmt,
        "description": desc,
        "priority": priority
    }


_NAME_COL = _col("Name", "string", "Name must be unique within a namespace.",
                 "name")


def _job_status(job):
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("status") != "True":
            continue
        if c.get("type") == "Failed":
            return "Failed"
        if c.get("type") == "Complete":
            return "Complete"
        if c.get("type") == "Suspended":
            return "Suspended"
        if c.get("type") == "FailureTarget":
            return "FailureTarget"
    return "Running"


def table_columns(rt):
    if rt is JOB_RT:
        return [
            _NAME_COL,
            _col("Status", "string", "Status of the job."),
            _col(
                "Completions", "string",
                "The desired number of successfully finished pods the job "
                "should be run with."),
            _col("Duration", "string", "Time required to complete the job."),
            _col(
                "Age", "string",
                "CreationTimestamp is a timestamp representing the server "
                "time when this object was created."),
            _col("Containers",
                 "string", "Names of each container in the "
                 "template.",
                 priority=1),
            _col("Images",
                 "string", "Images referenced by each container in the "
                 "template.",
                 priority=1),
            _col("Selector",
                 "string", "A label query over pods that should "
                 "match the pod count.",
                 priority=1),
        ]
    if rt is NAMESPACE_RT:
        return [
            _NAME_COL,
            _col("Status", "string", "The status of the namespace"),
            _col(
                "Age", "string", "CreationTimestamp is a timestamp "
                "representing the server time when this object was created.")
        ]
    if rt.custom:
        return [
            _NAME_COL,
            _col(
                "Age", "date", "CreationTimestamp is a timestamp "
                "representing the server time when this object "
                "was created.")
        ]
    return [
        _NAME_COL,
        _col(
            "Age", "string", "CreationTimestamp is a timestamp "
            "representing the server time when this object was "
            "created.")
    ]


def table_cells(rt, obj):
    name = obj["metadata"]["name"]
    if rt is JOB_RT:
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        succ = status.get("succeeded", 0)
        if spec.get("completions") is not None:
            comp = f"{succ}/{spec['completions']}"
        elif (spec.get("parallelism") or 0) > 1:
            comp = f"{succ}/1 of {spec['parallelism']}"
        else:
            comp = f"{succ}/1"
        start = parse_rfc3339(status.get("startTime"))
        end = parse_rfc3339(status.get("completionTime"))
        dur = "" if start is None else human_duration((end or time.time()) -
                                                      start)
        containers = (((spec.get("template") or {}).get("spec")
                       or {}).get("containers") or [])
        sel = ",".join(f"{k}={v}" for k, v in sorted((
            (spec.get("selector") or {}).get("matchLabels") or {}).items()))
        return [
            name,
            _job_status(obj), comp, dur,
            _age(obj), ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers), sel
        ]
    if rt is NAMESPACE_RT:
        return [name, (obj.get("status") or {}).get("phase", ""), _age(obj)]
    return [name, _age(obj)]


def wants_table(accept):
    return "as=Table" in (accept or "") and "g=meta.k8s.io" in (accept or "")


def to_table(rt, objs, include_object, list_meta=None):
    rows = []
    for o in objs:
        row = {"cells": table_cells(rt, o)}
        if include_object == "Object":
            row["object"] = o
        elif include_object != "None":
            row["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": o.get("metadata")
            }
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta or {},
        "columnDefinitions": table_columns(rt),
        "rows": rows
    }


# ---------------------------------------------------------------- store


class Watcher:

    def __init__(self, rt, namespace, name, label_reqs, field_reqs):
        self.rt = rt
        self.namespace = namespace
        self.name = name
        self.label_reqs = label_reqs
        self.field_reqs = field_reqs
        self.label_selector = ""
        self.queue = queue.Queue()

    def matches(self, obj):
        if obj is None:
            return False
        md = obj.get("metadata") or {}
        if self.namespace and md.get("namespace") != self.namespace:
            return False
        if self.name and md.get("name") != self.name:
            return False
        return (labels_match(self.label_reqs, md.get("labels"))
                and fields_match(self.field_reqs, obj))

    def translate(self, ev):
        """A store event as this watcher sees it (filter transitions)."""
        typ, obj, old = ev["type"], ev["object"], ev["old"]
        if ev["rt"] is not self.rt:
            return None
        if typ == "ADDED":
            return ("ADDED", obj) if self.matches(obj) else None
        if typ == "DELETED":
            return ("DELETED", obj) if self.matches(old) else None
        new_m, old_m = self.matches(obj), self.matches(old)
        if new_m and old_m:
            return ("MODIFIED", obj)
        if new_m:
            return ("ADDED", obj)
        if old_m:
            gone_obj = copy.deepcopy(old)
            gone_obj["metadata"]["resourceVersion"] = obj["metadata"][
                "resourceVersion"]
            return ("DELETED", gone_obj)
        return None


class Store:
    """Objects, the global resourceVersion, the watch history (as etcd)."""

    def __init__(self, watch_window):
        self.lock = threading.RLock()
        self.rv = 1
        self.objects = {}  # (rt.key, namespace, name) -> object
        self.history = collections.deque()
        self.min_rv = 1  # watches from an older resourceVersion get 410 Gone
        self.watch_window = watch_window
        self.watchers = set()
        self.listeners = []  # fn(event) called under the lock

    def next_rv(self):
        self.rv += 1
        return self.rv

    def _emit(self, typ, rt, obj, old):
        ev = {
            "type": typ,
            "rt": rt,
            "object": copy.deepcopy(obj),
            "old": copy.deepcopy(old),
            "rv": int(obj["metadata"]["resourceVersion"])
        }
        self.history.append(ev)
        while len(self.history) > self.watch_window:
            dropped = self.history.popleft()
            self.min_rv = dropped["rv"]
        for w in list(self.watchers):
            t = w.translate(ev)
            if t:
                w.queue.put((t[0], copy.deepcopy(t[1])))
        for fn in self.listeners:
            fn(ev)

    def get(self, rt, ns, name):
        with self.lock:
            o = self.objects.get((rt.key, ns or "", name))
            return copy.deepcopy(o) if o is not None else None

    def list(self, rt, ns):
        with self.lock:
            items = [
                copy.deepcopy(o) for (k, n, _), o in self.objects.items()
                if k == rt.key and (not ns or n == ns)
            ]
            rv = self.rv
        items.sort(key=lambda o:
                   (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return items, rv

    def put_new(self, rt, obj):
        with self.lock:
            key = (rt.key, obj["metadata"].get("namespace",
                                               ""), obj["metadata"]["name"])
            if key in self.objects:
                raise already_exists(rt, obj["metadata"]["name"])
            obj["metadata"]["resourceVersion"] = str(self.next_rv())
            self.objects[key] = copy.deepcopy(obj)
            self._emit("ADDED", rt, obj, None)
            return copy.deepcopy(obj)

    def replace(self, rt, obj, expect_rv=None):
        """Stores `obj` over the existing object; no-op writes keep the rv."""
        with self.lock:
            key = (rt.key, obj["metadata"].get("namespace",
                                               ""), obj["metadata"]["name"])
            old = self.objects.get(key)
            if old is None:
                raise not_found(rt, obj["metadata"]["name"])
            if expect_rv and expect_rv != old["metadata"]["resourceVersion"]:
                raise conflict(rt, obj["metadata"]["name"])
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = old["metadata"][
                "resourceVersion"]
            if obj == old:
                return copy.deepcopy(old)
            obj["metadata"]["resourceVersion"] = str(self.next_rv())
            self.objects[key] = obj
            self._emit("MODIFIED", rt, obj, old)
            return copy.deepcopy(obj)

    def delete(self, rt, ns, name, pre_uid=None, pre_rv=None):
        with self.lock:
            key = (rt.key, ns or "", name)
            old = self.objects.get(key)
            if old is None:
                raise not_found(rt, name)
            if pre_uid and pre_uid != old["metadata"].get("uid"):
                raise conflict(
                    rt, name,
                    f"Precondition failed: UID in precondition: {pre_uid}, "
                    f"UID in object meta: {old['metadata'].get('uid')}")
            if pre_rv and pre_rv != old["metadata"].get("resourceVersion"):
                raise conflict(
                    rt, name,
                    f"Precondition failed: ResourceVersion in precondition: "
                    f"{pre_rv}, ResourceVersion in object meta: "
                    f"{old['metadata'].get('resourceVersion')}")
            del self.objects[key]
            gone_obj = copy.deepcopy(old)
            gone_obj["metadata"]["resourceVersion"] = str(self.next_rv())
            self._emit("DELETED", rt, gone_obj, old)
            return gone_obj

    def compact(self):
        with self.lock:
            self.history.clear()
            self.min_rv = self.rv
            return self.rv

    def start_watch(self, watcher, rv_param, send_initial):
        """Registers a watcher atomically with its initial events.

        Returns the list of (type, object) events to send first.
        """
        with self.lock:
            first = []
            if rv_param in ("", "0", None) or send_initial:
                for (k, _, _), o in sorted(self.objects.items(),
                                           key=lambda kv: kv[0]):
                    if k == watcher.rt.key and watcher.matches(o):
                        first.append(("ADDED", copy.deepcopy(o)))
            else:
                try:
                    from_rv = int(rv_param)
                except ValueError:
                    raise bad_request(f'invalid resource version: {rv_param}')
                if from_rv < self.min_rv:
                    raise gone(
                        f"too old resource version: {from_rv} ({self.min_rv})")
                for ev in self.history:
                    if ev["rv"] > from_rv:
                        t = watcher.translate(ev)
                        if t:
                            first.append((t[0], copy.deepcopy(t[1])))
            self.watchers.add(watcher)
            return first, self.rv

    def stop_watch(self, watcher):
        with self.lock:
            self.watchers.discard(watcher)


# ---------------------------------------------------------------- defaulting
# and validation (what kubectl output and the shim see)

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def default_container(c):
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if "imagePullPolicy" not in c:
        image = c.get("image", "")
        tag = image.rsplit("/", 1)[-1]
        if "@" in tag:
            c["imagePullPolicy"] = "IfNotPresent"
        elif ":" not in tag or tag.endswith(":latest"):
            c["imagePullPolicy"] = "Always"
        else:
            c["imagePullPolicy"] = "IfNotPresent"
    res = c.setdefault("resources", {})
    for part in ("limits", "requests"):
        for k, v in list((res.get(part) or {}).items()):
            res[part][k] = canonical_quantity(v)
    if res.get("limits"):
        req = res.setdefault("requests", {})
        for k, v in res["limits"].items():
            req.setdefault(k, v)
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")


def canonical_quantity(v):
    """Quantities are strings on the wire (JSON numbers in YAML become "1")."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return v
    if float(v).is_integer():
        return str(int(v))
    milli = v * 1000
    if float(milli).is_integer():
        return f"{int(milli)}m"
    return repr(v)


def default_pod_spec(spec):
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in spec.get("containers") or []:
        default_container(c)
    for c in spec.get("initContainers") or []:
        default_container(c)


def default_job(job):
    spec = job.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoffLimit") is None:
        spec["backoffLimit"] = (2147483647 if spec.get("backoffLimitPerIndex")
                                is not None else 6)
    if not (job.get("metadata") or {}).get("labels"):
        tl = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        if tl:
            job["metadata"]["labels"] = dict(tl)
    spec.setdefault("completionMode", "NonIndexed")
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("podReplacementPolicy") is None:
        spec["podReplacementPolicy"] = ("Failed"
                                        if spec.get("podFailurePolicy") else
                                        "TerminatingOrFailed")
    tmpl = spec.setdefault("template", {})
    tmpl.setdefault("metadata", {})
    default_pod_spec(tmpl.setdefault("spec", {}))


def default_object(rt, obj):
    if rt is JOB_RT:
        default_job(obj)
    elif rt.plural == "podtemplates":
        tmpl = obj.setdefault("template", {})
        tmpl.setdefault("metadata", {})
        default_pod_spec(tmpl.setdefault("spec", {}))
    elif rt.plural == "pods":
        default_pod_spec(obj.setdefault("spec", {}))
    elif rt is NAMESPACE_RT:
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
        obj["metadata"].setdefault(
            "labels",
            {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif rt is MWC_RT:
        for wh in obj.get("webhooks") or []:
            wh.setdefault("failurePolicy", "Fail")
            wh.setdefault("matchPolicy", "Equivalent")
            wh.setdefault("namespaceSelector", {})
            wh.setdefault("objectSelector", {})
            wh.setdefault("timeoutSeconds", 10)
            wh.setdefault("reinvocationPolicy", "Never")
            for r in wh.get("rules") or []:
                r.setdefault("scope", "*")
    elif rt.plural == "events":
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")


def validate_meta(rt, obj, errs):
    md = obj.get("metadata") or {}
    name = md.get("name", "")
    if not name:
        errs.append(
            FieldError("Required", "metadata.name",
                       "name or generateName is required"))
    elif not _DNS1123_SUBDOMAIN.match(name) or len(name) > 253:
        errs.append(
            FieldError(
                "Invalid", "metadata.name",
                "a lowercase RFC 1123 subdomain must consist of lower case "
                "alphanumeric characters, '-' or '.', and must start and end "
                "with an alphanumeric character (e.g. 'example.com', regex "
                "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
                "(\\.[a-z0-9]"
                "([-a-z0-9]*[a-z0-9])?)*')", name))
    for k, v in (md.get("labels") or {}).items():
        if not _LABEL_KEY.match(k):
            errs.append(
                FieldError(
                    "Invalid", "metadata.labels", "name part must "
                    "consist of alphanumeric characters, '-', '_' or "
                    "'.'", k))
        if not isinstance(v, str) or not _LABEL_VALUE.match(v) or len(v) > 63:
            errs.append(
                FieldError(
                    "Invalid", "metadata.labels",
                    "a valid label must be an empty string or consist of "
                    "alphanumeric characters, '-', '_' or '.', and must start "
                    "and end with an alphanumeric character", v))


def validate_pod_template(path, tmpl, errs, job=False):
    spec = (tmpl or {}).get("spec") or {}
    containers = spec.get("containers") or []
    if not containers:
        errs.append(FieldError("Required", f"{path}.spec.containers"))
    names = set()
    for i, c in enumerate(containers):
        if not c.get("name"):
            errs.append(
                FieldError("Required", f"{path}.spec.containers[{i}].name"))
        elif c["name"] in names:
            errs.append(
                FieldError("Duplicate",
                           f"{path}.spec.containers[{i}].name",
                           value=c["name"]))
        names.add(c.get("name"))
        if not c.get("image"):
            errs.append(
                FieldError("Required", f"{path}.spec.containers[{i}].image"))
    if job:
        rp = spec.get("restartPolicy")
        if rp not in ("OnFailure", "Never"):
            errs.append(
                FieldError("NotSupported",
                           f"{path}.spec.restartPolicy",
                           value=rp,
                           supported=["OnFailure", "Never"]))
    for i, t in enumerate(spec.get("tolerations") or []):
        op = t.get("operator", "Equal")
        if op not in ("Equal", "Exists"):
            errs.append(
                FieldError("NotSupported",
                           f"{path}.spec.tolerations[{i}].operator",
                           value=op,
                           supported=["Equal", "Exists"]))


def validate_job(job, errs):
    spec = job.get("spec") or {}
    for f in ("parallelism", "completions", "backoffLimit",
              "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        v = spec.get(f)
        if v is not None and (not isinstance(v, int) or v < 0):
            errs.append(
                FieldError("Invalid", f"spec.{f}",
                           "must be greater than or equal to 0", v))
    if spec.get("completionMode") not in ("NonIndexed", "Indexed"):
        errs.append(
            FieldError("NotSupported",
                       "spec.completionMode",
                       value=spec.get("completionMode"),
                       supported=["NonIndexed", "Indexed"]))
    sel = spec.get("selector")
    tl = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if sel is None:
        errs.append(FieldError("Required", "spec.selector"))
    elif not label_selector_object_matches(sel, tl):
        errs.append(
            FieldError("Invalid", "spec.template.metadata.labels",
                       "`selector` does not match template `labels`", tl))
    validate_pod_template("spec.template",
                          spec.get("template"),
                          errs,
                          job=True)


_SCHEDULING_DIRECTIVES = (("spec", "nodeSelector"), ("spec", "tolerations"),
                          ("spec", "schedulingGates"), ("metadata", "labels"),
                          ("metadata", "annotations"))


def _strip_scheduling(tmpl):
    t = copy.deepcopy(tmpl or {})
    for part, field in _SCHEDULING_DIRECTIVES:
        (t.get(part) or {}).pop(field, None)
    return t


def validate_job_update(new, old, errs):
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    if ns.get("selector") != os_.get("selector"):
        errs.append(
            FieldError("Invalid", "spec.selector", "field is immutable",
                       ns.get("selector")))
    if ns.get("completions") != os_.get("completions"):
        errs.append(
            FieldError("Invalid", "spec.completions", "field is immutable",
                       ns.get("completions")))
    if ns.get("completionMode") != os_.get("completionMode"):
        errs.append(
            FieldError("Invalid", "spec.completionMode", "field is immutable",
                       ns.get("completionMode")))
    if ns.get("template") != os_.get("template"):
        # As the real API server: the pod template is immutable, except its
        # scheduling directives (nodeSelector, tolerations, schedulingGates,
        # labels, annotations) while the Job is suspended and not started.
        mutable = bool(os_.get("suspend")) and not (old.get("status")
                                                    or {}).get("startTime")
        if not mutable or _strip_scheduling(ns.get("template")) != \
            _strip_scheduling(os_.get("template")):
            errs.append(
                FieldError("Invalid", "spec.template", "field is immutable",
                           "core.PodTemplateSpec{...}"))


def validate_object(rt, obj, old=None):
    errs = []
    validate_meta(rt, obj, errs)
    if rt is JOB_RT:
        validate_job(obj, errs)
        if old is not None:
            validate_job_update(obj, old, errs)
    elif rt.plural == "podtemplates":
        validate_pod_template("template", obj.get("template"), errs)
    elif rt is MWC_RT:
        for i, wh in enumerate(obj.get("webhooks") or []):
            if not wh.get("name"):
                errs.append(FieldError("Required", f"webhooks[{i}].name"))
            if not wh.get("admissionReviewVersions"):
                errs.append(
                    FieldError("Required",
                               f"webhooks[{i}].admissionReviewVersions",
                               "must specify one of v1, v1beta1"))
            if not wh.get("sideEffects"):
                errs.append(
                    FieldError("Required", f"webhooks[{i}].sideEffects",
                               "must specify one of None, NoneOnDryRun"))
            if wh.get("failurePolicy") not in ("Fail", "Ignore"):
                errs.append(
                    FieldError("NotSupported",
                               f"webhooks[{i}].failurePolicy",
                               value=wh.get("failurePolicy"),
                               supported=["Fail", "Ignore"]))
    if errs:
        raise invalid(rt, (obj.get("metadata") or {}).get("name", ""), errs)


def job_prepare_for_create(job):
    """What the Job registry strategy adds: the controller-uid selector."""
    spec = job["spec"]
    uid = job["metadata"]["uid"]
    if not spec.get("manualSelector"):
        if spec.get("selector") is None:
            spec["selector"] = {
                "matchLabels": {
                    "batch.kubernetes.io/controller-uid": uid
                }
            }
        tm = spec["template"].setdefault("metadata", {})
        labels = tm.setdefault("labels", {})
        labels.setdefault("batch.kubernetes.io/controller-uid", uid)
        labels.setdefault("batch.kubernetes.io/job-name",
                          job["metadata"]["name"])
        labels.setdefault("controller-uid", uid)
        labels.setdefault("job-name", job["metadata"]["name"])


def _spec_part(obj):
    return {
        k: v
        for k, v in obj.items()
        if k not in ("metadata", "status", "kind", "apiVersion")
    }


# ---------------------------------------------------------------- webhooks


class WebhookError(Exception):
    pass


def _rule_matches(rule, rt, operation, subresource):

    def has(lst, v):
        lst = lst or []
        return "*" in lst or v in lst

    if not has(rule.get("operations"),
               operation) and "*" not in (rule.get("operations") or []):
        return False
    if not has(rule.get("apiGroups"), rt.group):
        return False
    if not has(rule.get("apiVersions"), rt.version):
        return False
    res = rt.plural + ("/" + subresource if subresource else "")
    resources = rule.get("resources") or []
    ok = False
    for r in resources:
        if r == res or r == "*/*":
            ok = True
        elif r == "*" and not subresource:
            ok = True
        elif subresource and r == f"*/{subresource}":
            ok = True
        elif subresource and r == f"{rt.plural}/*":
            ok = True
    if not ok:
        return False
    scope = rule.get("scope", "*")
    if scope == "Namespaced" and not rt.namespaced:
        return False
    if scope == "Cluster" and rt.namespaced:
        return False
    return True


class Admission:
    """Calls the stored MutatingWebhookConfigurations like the API server."""

    def __init__(self, store):
        self.store = store

    def mutate(self, rt, obj, old, operation, namespace, subresource=""):
        if rt is MWC_RT:
            return obj
        configs, _ = self.store.list(MWC_RT, "")
        for cfg in sorted(configs, key=lambda c: c["metadata"]["name"]):
            for wh in cfg.get("webhooks") or []:
                if not any(
                        _rule_matches(r, rt, operation, subresource)
                        for r in wh.get("rules") or []):
                    continue
                labels = ((obj or old).get("metadata") or {}).get("labels")
                if not label_selector_object_matches(
                        wh.get("objectSelector") or {}, labels):
                    continue
                if rt.namespaced and wh.get("namespaceSelector"):
                    ns = self.store.get(NAMESPACE_RT, "", namespace)
                    nsl = ((ns or {}).get("metadata") or {}).get("labels") or {
                        "kubernetes.io/metadata.name": namespace
                    }
                    if not label_selector_object_matches(
                            wh["namespaceSelector"], nsl):
                        continue
                try:
                    obj = self._call(wh, rt, obj, old, operation, namespace,
                                     subresource)
                except WebhookError as e:
                    if wh.get("failurePolicy", "Fail") == "Ignore":
                        continue
                    raise ApiError(
                        500, "InternalError",
                        f'Internal error occurred: failed calling webhook '
                        f'"{wh.get("name")}": {e}', {
                            "causes": [{
                                "message":
                                f'failed calling webhook '
                                f'"{wh.get("name")}": {e}'
                            }]
                        })
        return obj

    def _call(self, wh, rt, obj, old, operation, namespace, subresource):
        cc = wh.get("clientConfig") or {}
        url = cc.get("url")
        if not url:
            raise WebhookError(
                "failed to call webhook: only clientConfig.url is "
                "supported by the fixture")
        uid = str(uuid.uuid4())
        md = (obj or old).get("metadata") or {}
        gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        gvr = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        request = {
            "uid": uid,
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": md.get("name", ""),
            "namespace": namespace or "",
            "operation": operation,
            "userInfo": {
                "username": "fixture-admin",
                "groups": ["system:masters", "system:authenticated"]
            },
            "object": obj,
            "oldObject": old,
            "dryRun": False,
            "options": {
                "kind": f"{operation.capitalize()}Options",
                "apiVersion": "meta.k8s.io/v1"
            },
        }
        if subresource:
            request["subResource"] = subresource
        review = {
            "kind": "AdmissionReview",
            "apiVersion": "admission.k8s.io/v1",
            "request": request
        }
        ctx = ssl.create_default_context()
        if cc.get("caBundle"):
            try:
                ctx = ssl.create_default_context(
                    cadata=base64.b64decode(cc["caBundle"]).decode())
            except (ValueError, ssl.SSLError) as e:
                raise WebhookError(
                    f"failed to call webhook: bad caBundle: {e}")
        timeout = wh.get("timeoutSeconds") or 10
        sep = "&" if "?" in url else "?"
        req = urllib.request.Request(f"{url}{sep}timeout={timeout}s",
                                     data=json.dumps(review).encode(),
                                     headers={
                                         "Content-Type": "application/json",
                                         "Accept": "application/json"
                                     },
                                     method="POST")
        try:
            with urllib.request.urlopen(req, context=ctx,
                                        timeout=timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as e:
            raise WebhookError(
                f'failed to call webhook: the server responded with '
                f'the status code {e.code} but did not return an '
                f'AdmissionReview')
        except (urllib.error.URLError, OSError, socket.timeout) as e:
            reason = getattr(e, "reason", e)
            raise WebhookError(f'failed to call webhook: Post "{url}?timeout='
                               f'{timeout}s": {reason}')
        try:
            out = json.loads(body)
            resp = out["response"]
        except (ValueError, KeyError, TypeError):
            raise WebhookError("failed to call webhook: bad AdmissionReview "
                               "response")
        if resp.get("uid") != uid:
            raise WebhookError(f'expected response.uid="{uid}", got '
                               f'"{resp.get("uid")}"')
        if not resp.get("allowed"):
            st = resp.get("status") or {}
            code = st.get("code") or 400
            msg = st.get("message") or ""
            raise ApiError(
                code,
                st.get("reason") or "BadRequest",
                f'admission webhook "{wh.get("name")}" denied the request' +
                (f": {msg}" if msg else ""))
        if resp.get("patch"):
            if resp.get("patchType") != "JSONPatch":
                raise WebhookError(
                    f'unsupported patch type "{resp.get("patchType")}"')
            try:
                ops = json.loads(base64.b64decode(resp["patch"]))
            except ValueError as e:
                raise WebhookError(f"failed to decode patch: {e}")
            try:
                obj = json_patch(obj, ops)
            except ApiError as e:
                raise WebhookError(f"JSON patch failed: {e.message}")
        return obj


# ---------------------------------------------------------------- the API


class Api:
    """The REST verbs over the store: defaulting, validation, admission."""

    def __init__(self, store):
        self.store = store
        self.admission = Admission(store)
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self.ensure_namespace(ns)

    def ensure_namespace(self, name):
        if not name or self.store.get(NAMESPACE_RT, "", name) is not None:
            return
        obj = {
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name
            }
        }
        try:
            self._create_internal(NAMESPACE_RT, "", obj, admission=False)
        except ApiError as e:
            if e.code != 409:
                raise

    def _create_internal(self, rt, ns, obj, admission=True):
        if not isinstance(obj, dict):
            raise bad_request("Object 'Kind' is missing in the request body")
        obj = copy.deepcopy(obj)
        obj["kind"] = rt.kind
        obj["apiVersion"] = rt.group_version
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise bad_request("metadata must be an object")
        if rt.namespaced:
            if md.get("namespace") and md["namespace"] != ns:
                raise bad_request(
                    "the namespace of the provided object does not "
                    "match the namespace sent on the request")
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
        for f in ("uid", "resourceVersion", "creationTimestamp", "generation",
                  "deletionTimestamp", "selfLink"):
            md.pop(f, None)
        default_object(rt, obj)
        if admission:
            obj = self.admission.mutate(rt, obj, None, "CREATE", ns)
            md = obj["metadata"]
        if not md.get("name") and md.get("generateName"):
            base = md["generateName"][:58]
            md["name"] = base + uuid.uuid4().hex[:5]
        if not md.get("name"):
            raise invalid(rt, "", [
                FieldError("Required", "metadata.name",
                           "name or generateName is required")
            ])
        md["uid"] = str(uuid.uuid4())
        md["creationTimestamp"] = now_rfc3339()
        if rt.generation:
            md["generation"] = 1
        if rt is JOB_RT:
            job_prepare_for_create(obj)
        # Types with a status subresource take no status on create.
        if rt is JOB_RT:
            obj["status"] = {}
        elif rt.custom:
            obj.pop("status", None)
        validate_object(rt, obj)
        if rt.namespaced:
            self.ensure_namespace(ns)
        return self.store.put_new(rt, obj)

    def create(self, rt, ns, obj):
        return self._create_internal(rt, ns, obj)

    def update(self, rt, ns, name, obj, subresource=""):
        if not isinstance(obj, dict):
            raise bad_request("Object 'Kind' is missing in the request body")
        md = obj.get("metadata") or {}
        if md.get("name") and md["name"] != name:
            raise bad_request(
                f"the name of the object ({md['name']}) does not "
                f"match the name on the URL ({name})")
        if rt.namespaced and md.get("namespace") and md["namespace"] != ns:
            raise bad_request(
                "the namespace of the provided object does not match "
                "the namespace sent on the request")
        rv = md.get("resourceVersion") or ""
        if not rv and not rt.unconditional_update:
            raise invalid(rt, name, [
                FieldError("Invalid", "metadata.resourceVersion",
                           "must be specified for an update", 0)
            ])
        # An unconditional update applies to the latest object, whatever wrote
        # it meanwhile (e.g. the Job controller's status), as GuaranteedUpdate.
        for _ in range(20):
            old = self.store.get(rt, ns, name)
            if old is None:
                raise not_found(rt, name)
            try:
                return self._write(rt, ns, name, old, obj, rv, subresource)
            except ApiError as e:
                if e.code == 409 and not rv:
                    continue
                raise
        raise conflict(rt, name)

    def _write(self, rt, ns, name, old, obj, rv, subresource):
        obj = copy.deepcopy(obj)
        obj["kind"] = rt.kind
        obj["apiVersion"] = rt.group_version
        md = obj.setdefault("metadata", {})
        md["name"] = name
        if rt.namespaced:
            md["namespace"] = ns
        for f in ("uid", "creationTimestamp", "generation"):
            if f in old["metadata"]:
                md[f] = old["metadata"][f]
            else:
                md.pop(f, None)
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name)
        if subresource == "status":
            new = copy.deepcopy(old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            obj = new
        else:
            if "status" in (rt.subresources or []):
                if "status" in old:
                    obj["status"] = copy.deepcopy(old["status"])
                else:
                    obj.pop("status", None)
            default_object(rt, obj)
            obj = self.admission.mutate(rt, obj, old, "UPDATE", ns)
            if rt.generation and _spec_part(obj) != _spec_part(old):
                obj["metadata"]["generation"] = old["metadata"].get(
                    "generation", 1) + 1
        validate_object(rt, obj, old)
        # Always against the version the new object was computed from.
        return self.store.replace(rt, obj, old["metadata"]["resourceVersion"])

    def patch(self, rt, ns, name, content_type, body, subresource=""):
        ct = (content_type or "").split(";")[0].strip()
        try:
            patch = json.loads(body or b"null")
        except ValueError as e:
            raise bad_request(f"error decoding patch: {e}")
        for _ in range(20):
            old = self.store.get(rt, ns, name)
            if old is None:
                raise not_found(rt, name)
            if ct == "application/merge-patch+json":
                if not isinstance(patch, dict):
                    raise bad_request("json: cannot unmarshal into map")
                new = merge_patch(old, patch)
            elif ct == "application/strategic-merge-patch+json":
                if rt.custom:
                    raise ApiError(
                        415, "UnsupportedMediaType",
                        "the body of the request was in an unknown format - "
                        "accepted media types include: "
                        "application/json-patch+json, "
                        "application/merge-patch+json, "
                        "application/apply-patch+yaml")
                if not isinstance(patch, dict):
                    raise bad_request("json: cannot unmarshal into map")
                new = strategic_merge(old, patch)
            elif ct == "application/json-patch+json":
                new = json_patch(old, patch)
            else:
                raise ApiError(
                    415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - "
                    "accepted media types include: "
                    "application/json-patch+json, "
                    "application/merge-patch+json, "
                    "application/apply-patch+yaml" +
                    ("" if rt.custom else
                     ", application/strategic-merge-patch+json"))
            if not isinstance(new, dict):
                raise bad_request("patch produced a non-object")
            # A resourceVersion in the patch is a precondition; otherwise the
            # patch applies to the version just read (retried on a race).
            want = (new.get("metadata") or {}).get("resourceVersion")
            explicit = bool(
                want) and want != old["metadata"]["resourceVersion"] or (
                    isinstance(patch, dict) and bool(
                        (patch.get("metadata") or {}).get("resourceVersion")))
            rv = want if explicit else old["metadata"]["resourceVersion"]
            if explicit and want != old["metadata"]["resourceVersion"]:
                raise conflict(rt, name)
            try:
                return self._write(rt, ns, name, old, new, rv, subresource)
            except ApiError as e:
                if e.code == 409 and not explicit:
                    continue
                raise
        raise conflict(rt, name)

    def delete(self, rt, ns, name, options):
        pre = (options or {}).get("preconditions") or {}
        gone_obj = self.store.delete(rt, ns, name, pre.get("uid"),
                                     pre.get("resourceVersion"))
        return gone_obj


# ---------------------------------------------------------------- Job
# controller


class JobController:
    """Runs unsuspended Jobs: active at once, complete (or failed) later.

    A Job suspended while active keeps status.active for pod_stop seconds
    (the pods terminating), then active=0 and Suspended=True.
    """

    def __init__(self, store, job_runtime, pod_stop):
        self.store = store
        self.job_runtime = job_runtime
        self.pod_stop = pod_stop
        self.cv = threading.Condition()
        self.pending = collections.OrderedDict()  # key -> None
        self.timers = []  # heap of (when, seq, key)
        self.seq = 0
        self.state = {}  # uid -> {"started": t, "suspend_seen": t}
        store.listeners.append(self._on_event)
        threading.Thread(target=self._run, daemon=True,
                         name="job-controller").start()

    def _on_event(self, ev):
        if ev["rt"] is not JOB_RT:
            return
        md = ev["object"]["metadata"]
        self.enqueue((md.get("namespace"), md["name"]))

    def enqueue(self, key, at=None):
        with self.cv:
            if at is None:
                self.pending[key] = None
            else:
                self.seq += 1
                heapq.heappush(self.timers, (at, self.seq, key))
            self.cv.notify()

    def _run(self):
        while True:
            with self.cv:
                while True:
                    now = time.monotonic()
                    while self.timers and self.timers[0][0] <= now:
                        _, _, key = heapq.heappop(self.timers)
                        self.pending[key] = None
                    if self.pending:
                        key, _ = self.pending.popitem(last=False)
                        break
                    wait = self.timers[0][0] - now if self.timers else None
                    self.cv.wait(wait)
            try:
                self.reconcile(key)
            except Exception as e:  # keep the controller alive
                print(f"job controller: {key}: {e!r}",
                      file=sys.stderr,
                      flush=True)

    @staticmethod
    def _cond(status, typ):
        for c in status.get("conditions") or []:
            if c.get("type") == typ:
                return c
        return None

    @staticmethod
    def _set_cond(status, typ, value, reason, message):
        now = now_rfc3339()
        conds = status.setdefault("conditions", [])
        for c in conds:
            if c.get("type") == typ:
                if c.get("status") != value:
                    c["lastTransitionTime"] = now
                c.update({
                    "status": value,
                    "reason": reason,
                    "message": message,
                    "lastProbeTime": now
                })
                return
        conds.append({
            "type": typ,
            "status": value,
            "lastProbeTime": now,
            "lastTransitionTime": now,
            "reason": reason,
            "message": message
        })

    def _runtime(self, job):
        ann = job["metadata"].get("annotations") or {}
        try:
            return float(ann[RUNTIME_ANNOTATION])
        except (KeyError, ValueError):
            return self.job_runtime

    def _write_status(self, job, status):
        # Active, succeeded and failed are omitempty int32s in batch/v1.
        for f in ("active", "succeeded", "failed"):
            if not status.get(f):
                status.pop(f, None)
        with self.store.lock:
            cur = self.store.get(JOB_RT, job["metadata"]["namespace"],
                                 job["metadata"]["name"])
            seen = job["metadata"]
            if (cur is None or cur["metadata"]["uid"] != seen["uid"]
                    or cur["metadata"]["resourceVersion"] !=
                    seen["resourceVersion"]):
                return False  # changed meanwhile: its event re-queues it
            cur["status"] = status
            self.store.replace(JOB_RT, cur)
            return True

    def reconcile(self, key):
        ns, name = key
        job = self.store.get(JOB_RT, ns, name)
        if job is None:
            return
        uid = job["metadata"]["uid"]
        st = self.state.setdefault(uid, {
            "started": None,
            "suspend_seen": None
        })
        status = copy.deepcopy(job.get("status") or {})
        for t in ("Complete", "Failed"):
            c = self._cond(status, t)
            if c and c.get("status") == "True":
                self.state.pop(uid, None)
                return
        spec = job.get("spec") or {}
        par = spec.get("parallelism") or 0
        comp = spec.get("completions")
        want = par if comp is None else min(par, comp)
        now = time.monotonic()
        active = status.get("active", 0)
        if not spec.get("suspend"):
            st["suspend_seen"] = None
            if not status.get("startTime") or (active == 0 and want > 0):
                if want == 0:
                    return
                status["active"] = want
                status["startTime"] = now_rfc3339()
                status.setdefault("ready", 0)
                c = self._cond(status, "Suspended")
                if c and c.get("status") == "True":
                    self._set_cond(status, "Suspended", "False", "JobResumed",
                                   "Job resumed")
                st["started"] = now
                if self._write_status(job, status):
                    self.enqueue(key, now + self._runtime(job))
                return
            if st["started"] is None:
                st["started"] = now  # the fixture restarted its bookkeeping
            if active != want:
                # Parallelism changed while running: as many pods as it
                # now allows.
                status["active"] = want
                self._write_status(job, status)
                return
            deadline = st["started"] + self._runtime(job)
            if now < deadline:
                self.enqueue(key, deadline)
                return
            status["active"] = 0
            status["ready"] = 0
            if (job["metadata"].get("annotations")
                    or {}).get(FAIL_ANNOTATION) == "true":
                status["failed"] = status.get("failed", 0) + max(want, 1)
                self._set_cond(status, "FailureTarget", "True",
                               "BackoffLimitExceeded",
                               "Job has reached the specified backoff limit")
                self._set_cond(status, "Failed", "True",
                               "BackoffLimitExceeded",
                               "Job has reached the specified backoff limit")
            else:
                status["succeeded"] = comp if comp is not None else max(par, 1)
                status["completionTime"] = now_rfc3339()
                self._set_cond(status, "SuccessCriteriaMet", "True",
                               "CompletionsReached",
                               "Reached expected number of "
                               "succeeded pods")
                self._set_cond(status, "Complete", "True",
                               "CompletionsReached",
                               "Reached expected number of succeeded pods")
            self._write_status(job, status)
            return
        # Suspended.
        st["started"] = None
        if active > 0:
            if st["suspend_seen"] is None:
                st["suspend_seen"] = now
            deadline = st["suspend_seen"] + self.pod_stop
            if now < deadline:
                self.enqueue(key, deadline)
                return
        c = self._cond(status, "Suspended")
        if active == 0 and c and c.get(
                "status") == "True" and not status.get("startTime"):
            return
        status["active"] = 0
        status["ready"] = 0
        status.pop("startTime", None)
        self._set_cond(status, "Suspended", "True", "JobSuspended",
                       "Job suspended")
        self._write_status(job, status)


# ---------------------------------------------------------------- HTTP


def discovery_resources(group, version):
    out = []
    for rt in GROUP_VERSIONS.get((group, version), []):
        r = {
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced,
            "kind": rt.kind,
            "verbs": list(ALL_VERBS)
        }
        if rt.short_names:
            r["shortNames"] = rt.short_names
        if rt.categories:
            r["categories"] = rt.categories
        if rt is NAMESPACE_RT:
            r["verbs"] = [
                "create", "delete", "get", "list", "patch", "update", "watch"
            ]
        out.append(r)
        for sub in rt.subresources:
            out.append({
                "name": f"{rt.plural}/{sub}",
                "singularName": "",
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": ["get", "patch", "update"]
            })
    return out


def api_groups():
    groups = collections.OrderedDict()
    for (g, v) in GROUP_VERSIONS:
        if g:
            groups.setdefault(g, []).append(v)
    return [{
        "name":
        g,
        "versions": [{
            "groupVersion": f"{g}/{v}",
            "version": v
        } for v in vs],
        "preferredVersion": {
            "groupVersion": f"{g}/{vs[0]}",
            "version": vs[0]
        }
    } for g, vs in groups.items()]


def _gv_path(group, version):
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def openapi_v3_gv(gv_path):
    """A minimal OpenAPI v3 document for one group-version.

    It lists each resource's operations with x-kubernetes-group-version-kind
    and the query parameters the server honours; kubectl reads it to decide
    that the server does field validation (--validate=strict), so it needs no
    schemas. Objects are typed as free-form.
    """
    for (group, version), rts in GROUP_VERSIONS.items():
        if _gv_path(group, version) != gv_path:
            continue

        def param(name):
            return {
                "name": name,
                "in": "query",
                "uniqueItems": True,
                "schema": {
                    "type": "string",
                    "uniqueItems": True
                }
            }

        paths = {}
        schemas = {}
        for rt in rts:
            gvk = {"group": rt.group, "version": rt.version, "kind": rt.kind}
            schema_name = (f"io.k8s.fixture.{rt.group or 'core'}.{rt.version}."
                           f"{rt.kind}")
            schemas[schema_name] = {
                "type": "object",
                "x-kubernetes-group-version-kind": [gvk],
                "x-kubernetes-preserve-unknown-fields": True,
            }
            ref = {"$ref": f"#/components/schemas/{schema_name}"}
            ok = {
                "200": {
                    "description": "OK",
                    "content": {
                        "application/json": {
                            "schema": ref
                        }
                    }
                }
            }

            def op(action, params):
                return {
                    "operationId": f"{action}{rt.kind}",
                    "parameters": [param(p) for p in params],
                    "responses": ok,
                    "x-kubernetes-action": action,
                    "x-kubernetes-group-version-kind": gvk
                }

            write = ["dryRun", "fieldManager", "fieldValidation"]
            base = "/" + gv_path
            coll = (f"{base}/namespaces/{{namespace}}/{rt.plural}"
                    if rt.namespaced else f"{base}/{rt.plural}")
            paths[coll] = {
                "get":
                op("list", [
                    "labelSelector", "fieldSelector", "limit", "continue",
                    "resourceVersion", "watch", "allowWatchBookmarks",
                    "timeoutSeconds"
                ]),
                "post":
                op("post", write),
                "delete":
                op("deletecollection", ["labelSelector", "fieldSelector"]),
            }
            paths[coll + "/{name}"] = {
                "get": op("get", []),
                "put": op("put", write),
                "patch": op("patch", write + ["force"]),
                "delete": op("delete", ["propagationPolicy", "dryRun"]),
            }
            for sub in rt.subresources:
                paths[f"{coll}/{{name}}/{sub}"] = {
                    "get": op("get", []),
                    "put": op("put", write),
                    "patch": op("patch", write + ["force"]),
                }
        return {
            "openapi": "3.0.0",
            "info": {
                "title": "Kubernetes",
                "version": "v1.32.4"
            },
            "paths": paths,
            "components": {
                "schemas": schemas
            }
        }
    return None


def _pb_bytes(field, data):
    """One length-delimited protobuf field (wire type 2)."""
    out = bytearray()
    for n in ((field << 3) | 2, len(data)):
        while True:
            byte = n & 0x7F
            n >>= 7
            out.append(byte | (0x80 if n else 0))
            if not n:
                break
    return bytes(out) + data


def openapi_v2_document():
    """The OpenAPI v2 document as protobuf (gnostic's openapi_v2.Document:
    swagger = 1, info = 2 with title = 1 and version = 2).

    kubectl before 1.25 (Debian 12's is 1.20) validates objects on the client
    with it before every create or apply. It has no definitions: kubectl then
    finds no schema for any kind and skips its validation, as for a CRD
    without one; the server's own checks still apply.
    """
    info = _pb_bytes(1, b"Kubernetes") + _pb_bytes(2, b"v1.32.4")
    return _pb_bytes(1, b"2.0") + _pb_bytes(2, info)


def openapi_v3_index():
    out = {}
    for (group, version) in GROUP_VERSIONS:
        gv = _gv_path(group, version)
        h = hashlib.sha512(
            json.dumps(openapi_v3_gv(gv),
                       sort_keys=True).encode()).hexdigest().upper()[:128]
        out[gv] = {"serverRelativeURL": f"/openapi/v3/{gv}?hash={h}"}
    return {"paths": out}


class Fixture:

    def __init__(self, args):
        self.args = args
        self.store = Store(args.watch_window)
        self.api = Api(self.store)
        self.controller = JobController(self.store, args.job_runtime,
                                        args.pod_stop_seconds)
        self.requests = []
        self.requests_lock = threading.Lock()
        self.port = None
        self.shutting_down = threading.Event()

    def record(self, entry):
        with self.requests_lock:
            self.requests.append(entry)


def make_handler(fx):

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "fake-apiserver/1.32"
        sys_version = ""

        def log_message(self, fmt, *a):
            if fx.args.verbose:
                sys.stderr.write("%s - %s\n" %
                                 (self.address_string(), fmt % a))

        # -- plumbing

        def _read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    line = self.rfile.readline()
                    size = int(line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n",
                                                            b""):
                            pass
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            n = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(n) if n else b""

        def _send_json(self, code, obj, content_type="application/json"):
            self._send_bytes(code, json.dumps(obj).encode(), content_type)

        def _send_bytes(self, code, data, content_type):
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-cache, private")
            self.send_header("Audit-Id", str(uuid.uuid4()))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        def _send_error(self, e):
            self._send_json(e.code, e.status())

        def do_GET(self):
            self._handle()

        def do_POST(self):
            self._handle()

        def do_PUT(self):
            self._handle()

        def do_PATCH(self):
            self._handle()

        def do_DELETE(self):
            self._handle()

        def _handle(self):
            body = self._read_body()
            parsed = urllib.parse.urlsplit(self.path)
            path = parsed.path
            query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
            q = {k: v[-1] for k, v in query.items()}
            if not (path == "/fixture/requests" and self.command == "GET"):
                fx.record({
                    "method": self.command,
                    "path": path,
                    "query": parsed.query,
                    "contentType": self.headers.get("Content-Type", ""),
                    "body": body.decode("utf-8", "replace")
                })
            auth = self.headers.get("Authorization", "")
            if auth != f"Bearer {fx.args.token}":
                self._send_json(
                    401,
                    ApiError(401, "Unauthorized", "Unauthorized").status())
                return
            try:
                self._route(path, q, body)
            except ApiError as e:
                self._send_error(e)
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
                self.close_connection = True
            except Exception as e:  # a fixture bug: say so, as a 500 Status
                import traceback
                traceback.print_exc()
                self._send_error(
                    ApiError(500, "InternalError",
                             f"Internal error occurred: {e!r}"))

        # -- routing

        def _route(self, path, q, body):
            m = self.command
            if path == "/version" or path == "/version/":
                return self._send_json(200, SERVER_VERSION)
            if path in ("/healthz", "/livez", "/readyz"):
                return self._send_bytes(200, b"ok",
                                        "text/plain; charset=utf-8")
            if path.startswith("/fixture/"):
                return self._fixture(path, q)
            if path == "/api" or path == "/api/":
                return self._send_json(
                    200, {
                        "kind":
                        "APIVersions",
                        "versions": ["v1"],
                        "serverAddressByClientCIDRs":
                        [{
                            "clientCIDR": "0.0.0.0/0",
                            "serverAddress": f"127.0.0.1:{fx.port}"
                        }]
                    })
            if path == "/apis" or path == "/apis/":
                return self._send_json(
                    200, {
                        "kind": "APIGroupList",
                        "apiVersion": "v1",
                        "groups": api_groups()
                    })
            if path == "/openapi/v3" or path == "/openapi/v3/":
                return self._send_json(200, openapi_v3_index())
            if path.startswith("/openapi/v3/"):
                gv = path[len("/openapi/v3/"):].strip("/")
                doc = openapi_v3_gv(gv)
                if doc is None:
                    raise ApiError(
                        404, "NotFound", "the server could not find the "
                        "requested resource", {})
                return self._send_json(200, doc)
            if path == "/openapi/v2":
                # As kube-openapi answers the protobuf form: Go's mime
                # parser refuses the "@" of the type the client asks for.
                return self._send_bytes(200, openapi_v2_document(),
                                        "application/octet-stream")
            if path.startswith("/openapi/"):
                # kubectl 1.32 needs only the v3 documents (for its
                # fieldValidation support check), kubectl 1.20 only v2.
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            parts = [p for p in path.split("/") if p]
            if parts and parts[0] == "api":
                group, rest = "", parts[1:]
            elif parts and parts[0] == "apis" and len(parts) >= 2:
                group, rest = parts[1], parts[2:]
            else:
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            if not rest:
                vs = [v for (g, v) in GROUP_VERSIONS if g == group]
                if not vs or not group:
                    raise ApiError(
                        404, "NotFound", "the server could not find the "
                        "requested resource", {})
                g = [x for x in api_groups() if x["name"] == group][0]
                return self._send_json(
                    200, dict(kind="APIGroup", apiVersion="v1", **g))
            version, rest = rest[0], rest[1:]
            if (group, version) not in GROUP_VERSIONS:
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            if not rest:
                if m != "GET":
                    raise ApiError(
                        405, "MethodNotAllowed", "the server does not allow "
                        "this method on the requested resource", {})
                gv = version if not group else f"{group}/{version}"
                return self._send_json(
                    200, {
                        "kind": "APIResourceList",
                        "apiVersion": "v1",
                        "groupVersion": gv,
                        "resources": discovery_resources(group, version)
                    })
            watch_path = False
            if rest[0] == "watch":
                watch_path, rest = True, rest[1:]
            ns = ""
            plurals = {
                rt.plural: rt
                for rt in GROUP_VERSIONS[(group, version)]
            }
            if (len(rest) >= 3 and rest[0] == "namespaces"
                    and rest[2] in plurals and plurals[rest[2]].namespaced):
                ns, rest = rest[1], rest[2:]
            if not rest or rest[0] not in plurals:
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            rt = plurals[rest[0]]
            name = rest[1] if len(rest) > 1 else ""
            sub = rest[2] if len(rest) > 2 else ""
            if len(rest) > 3 or (sub and sub not in rt.subresources):
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            if ns and not rt.namespaced:
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            is_watch = watch_path or q.get("watch") in ("1", "true", "True")
            if is_watch:
                if m != "GET" or sub:
                    raise ApiError(405, "MethodNotAllowed",
                                   "method not allowed", {})
                return self._watch(rt, ns, name, q)
            if not name:
                if m == "GET":
                    return self._list(rt, ns, q)
                if m == "POST":
                    if rt.namespaced and not ns:
                        raise ApiError(
                            404, "NotFound", "the server could not find the "
                            "requested resource", {})
                    obj = self._decode(body)
                    created = fx.api.create(rt, ns, obj)
                    return self._send_json(201, created)
                if m == "DELETE":
                    return self._delete_collection(rt, ns, q)
                raise ApiError(
                    405, "MethodNotAllowed", "the server does not allow "
                    "this method on the requested resource", {})
            if rt.namespaced and not ns:
                raise ApiError(
                    404, "NotFound", "the server could not find the "
                    "requested resource", {})
            if m == "GET":
                obj = fx.store.get(rt, ns, name)
                if obj is None:
                    raise not_found(rt, name)
                if wants_table(self.headers.get("Accept")):
                    return self._send_json(
                        200,
                        to_table(rt, [obj], q.get("includeObject", "Metadata"),
                                 {
                                     "resourceVersion":
                                     obj["metadata"]["resourceVersion"]
                                 }),
                        "application/json;as=Table;v=v1;g=meta.k8s.io")
                return self._send_json(200, obj)
            if m == "PUT":
                obj = self._decode(body)
                return self._send_json(200,
                                       fx.api.update(rt, ns, name, obj, sub))
            if m == "PATCH":
                return self._send_json(
                    200,
                    fx.api.patch(rt, ns, name,
                                 self.headers.get("Content-Type"), body, sub))
            if m == "DELETE":
                if sub:
                    raise ApiError(405, "MethodNotAllowed",
                                   "method not allowed", {})
                opts = self._decode(body) if body.strip() else {}
                if q.get("propagationPolicy") not in (None, "", "Orphan",
                                                      "Background",
                                                      "Foreground"):
                    raise bad_request(
                        f"DeleteOptions.meta.k8s.io \"\" is invalid: "
                        f"propagationPolicy: Unsupported value: "
                        f"\"{q['propagationPolicy']}\"")
                pre = dict(opts.get("preconditions") or {})
                opts["preconditions"] = pre
                gone_obj = fx.api.delete(rt, ns, name, opts)
                d = err_details(rt, name)
                d["uid"] = gone_obj["metadata"]["uid"]
                return self._send_json(
                    200, {
                        "kind": "Status",
                        "apiVersion": "v1",
                        "metadata": {},
                        "status": "Success",
                        "details": d
                    })
            raise ApiError(
                405, "MethodNotAllowed", "the server does not allow "
                "this method on the requested resource", {})

        def _decode(self, body):
            try:
                obj = json.loads(body or b"")
            except ValueError as e:
                raise bad_request(
                    f"the object provided is unrecognized (must be "
                    f"JSON): {e}")
            if not isinstance(obj, dict):
                raise bad_request("the object provided is unrecognized")
            return obj

        def _fixture(self, path, q):
            if path == "/fixture/compact" and self.command == "POST":
                rv = fx.store.compact()
                if q.get("closeWatches") in ("1", "true"):
                    with fx.store.lock:
                        for w in list(fx.store.watchers):
                            expired = gone(f"too old resource version: "
                                           f"{rv} ({rv + 1})")
                            w.queue.put(("ERROR", expired.status()))
                return self._send_json(200, {"resourceVersion": str(rv)})
            if path == "/fixture/watches" and self.command == "GET":
                with fx.store.lock:
                    out = [{
                        "resource": w.rt.qualified,
                        "namespace": w.namespace,
                        "labelSelector": w.label_selector
                    } for w in fx.store.watchers]
                return self._send_json(200, out)
            if path == "/fixture/requests" and self.command == "GET":
                with fx.requests_lock:
                    return self._send_json(200, list(fx.requests))
            if path == "/fixture/requests" and self.command == "DELETE":
                with fx.requests_lock:
                    fx.requests.clear()
                return self._send_json(200, {})
            raise ApiError(404, "NotFound", "no such fixture endpoint", {})

        # -- list / watch

        def _list(self, rt, ns, q):
            label_reqs = parse_label_selector(q.get("labelSelector", ""))
            field_reqs = parse_field_selector(q.get("fieldSelector", ""), rt)
            items, rv = fx.store.list(rt, ns)
            cont = q.get("continue") or ""
            if cont:
                try:
                    tok = json.loads(base64.urlsafe_b64decode(cont + "==="))
                    start, list_rv = tok["start"], int(tok["rv"])
                except (ValueError, KeyError, TypeError):
                    raise bad_request(
                        "continue key is not valid: invalid token")
                if list_rv < fx.store.min_rv and list_rv < rv:
                    raise gone(
                        "The provided continue parameter is too old to "
                        "display a consistent list result. You can start a "
                        "new list without the continue parameter, or use the "
                        "continue token in this response to retrieve the "
                        "remainder of the results. Continuing with the "
                        "provided token results in an inconsistent list - "
                        "objects that were created, modified, or deleted "
                        "between the time the first chunk was returned and "
                        "now may show up in the list.")
                rv = list_rv
                items = [
                    o for o in items if (o["metadata"].get("namespace", ""),
                                         o["metadata"]["name"]) > tuple(start)
                ]
            items = [
                o for o in items
                if labels_match(label_reqs, o["metadata"].get("labels"))
                and fields_match(field_reqs, o)
            ]
            meta = {"resourceVersion": str(rv)}
            try:
                limit = int(q.get("limit") or 0)
            except ValueError:
                limit = 0
            if limit > 0 and len(items) > limit:
                last = items[limit - 1]["metadata"]
                tok = {
                    "rv": rv,
                    "start": [last.get("namespace", ""), last["name"]]
                }
                meta["continue"] = base64.urlsafe_b64encode(
                    json.dumps(tok).encode()).decode().rstrip("=")
                meta["remainingItemCount"] = len(items) - limit
                items = items[:limit]
            if wants_table(self.headers.get("Accept")):
                return self._send_json(
                    200,
                    to_table(rt, items, q.get("includeObject", "Metadata"),
                             meta),
                    "application/json;as=Table;v=v1;g=meta.k8s.io")
            if not rt.custom:
                for o in items:
                    o.pop("kind", None)
                    o.pop("apiVersion", None)
            self._send_json(
                200, {
                    "kind": f"{rt.kind}List",
                    "apiVersion": rt.group_version,
                    "metadata": meta,
                    "items": items
                })

        def _delete_collection(self, rt, ns, q):
            label_reqs = parse_label_selector(q.get("labelSelector", ""))
            field_reqs = parse_field_selector(q.get("fieldSelector", ""), rt)
            items, rv = fx.store.list(rt, ns)
            deleted = []
            for o in items:
                if labels_match(label_reqs, o["metadata"].get("labels")) and \
                    fields_match(field_reqs, o):
                    try:
                        deleted.append(
                            fx.store.delete(rt,
                                            o["metadata"].get("namespace", ""),
                                            o["metadata"]["name"]))
                    except ApiError:
                        pass
            if not rt.custom:
                for o in deleted:
                    o.pop("kind", None)
                    o.pop("apiVersion", None)
            self._send_json(
                200, {
                    "kind": f"{rt.kind}List",
                    "apiVersion": rt.group_version,
                    "metadata": {
                        "resourceVersion": str(fx.store.rv)
                    },
                    "items": deleted
                })

        def _peer_closed(self):
            # A client that stops watching closes its connection; notice
            # it while the stream is idle so the watcher goes away.
            try:
                r, _, _ = select.select([self.connection], [], [], 0)
                if not r:
                    return False
                self.connection.setblocking(False)
                try:
                    self.connection.recv(1)
                finally:
                    self.connection.setblocking(True)
                # EOF, or bytes of another request mid-stream: either way this
                # connection is done.
                self.close_connection = True
                return True
            except ssl.SSLWantReadError:
                return False
            except (OSError, ValueError):
                return True

        def _write_chunk(self, data):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _watch(self, rt, ns, name, q):
            label_reqs = parse_label_selector(q.get("labelSelector", ""))
            field_reqs = parse_field_selector(q.get("fieldSelector", ""), rt)
            bookmarks = q.get("allowWatchBookmarks") in ("1", "true", "True")
            send_initial = q.get("sendInitialEvents") in ("1", "true", "True")
            try:
                timeout = float(q.get("timeoutSeconds") or 0)
            except ValueError:
                timeout = 0
            if timeout <= 0:
                timeout = 1800.0
            table = wants_table(self.headers.get("Accept"))
            include = q.get("includeObject", "Metadata")
            w = Watcher(rt, ns, name, label_reqs, field_reqs)
            w.label_selector = q.get("labelSelector", "")
            first, start_rv = fx.store.start_watch(
                w, q.get("resourceVersion", ""), send_initial)
            try:
                self.send_response(200)
                self.send_header(
                    "Content-Type",
                    "application/json;as=Table;v=v1;g=meta.k8s.io"
                    if table else "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Cache-Control", "no-cache, private")
                self.end_headers()
                self.wfile.flush()
                deadline = time.monotonic() + timeout
                last_bookmark = time.monotonic()
                first_table = [True]

                def send(typ, obj):
                    if typ not in ("ERROR", "BOOKMARK") and table:
                        obj = to_table(rt, [obj], include)
                        if not first_table[0]:
                            obj["columnDefinitions"] = None
                        first_table[0] = False
                    line = json.dumps({
                        "type": typ,
                        "object": obj
                    }).encode() + b"\n"
                    self._write_chunk(line)

                def bookmark(rv, initial_end=False):
                    md = {"resourceVersion": str(rv)}
                    if initial_end:
                        md["annotations"] = {
                            "k8s.io/initial-events-end": "true"
                        }
                    send(
                        "BOOKMARK", {
                            "kind": rt.kind,
                            "apiVersion": rt.group_version,
                            "metadata": md
                        })

                for typ, obj in first:
                    send(typ, obj)
                if send_initial and bookmarks:
                    bookmark(start_rv, True)
                while not fx.shutting_down.is_set():
                    now = time.monotonic()
                    if now >= deadline:
                        break
                    wait = min(deadline - now, 0.2)
                    try:
                        typ, obj = w.queue.get(timeout=wait)
                    except queue.Empty:
                        if self._peer_closed():
                            break
                        if bookmarks and time.monotonic() - last_bookmark >= \
                            fx.args.bookmark_interval:
                            last_bookmark = time.monotonic()
                            bookmark(fx.store.rv)
                        continue
                    send(typ, obj)
                    if typ == "ERROR":
                        break
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError, ssl.SSLError,
                    OSError):
                self.close_connection = True
            finally:
                fx.store.stop_watch(w)

    return Handler


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, addr, handler, ctx):
        self.ctx = ctx
        super().__init__(addr, handler)

    def get_request(self):
        sock, addr = self.socket.accept()
        # The TLS handshake happens in the request thread (first read), so a
        # slow client does not block accept().
        return self.ctx.wrap_socket(sock,
                                    server_side=True,
                                    do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        try:
            request.settimeout(30)
            request.do_handshake()
            request.settimeout(None)
        except (ssl.SSLError, OSError):
            return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        exc = sys.exc_info()[1]
        if isinstance(exc, (ssl.SSLError, ConnectionError, OSError)):
            return
        super().handle_error(request, client_address)


def generate_certs(d):
    ca_crt, ca_key = os.path.join(d, "ca.crt"), os.path.join(d, "ca.key")
    srv_crt, srv_key = os.path.join(d, "server.crt"), os.path.join(
        d, "server.key")
    if all(os.path.exists(p) for p in (ca_crt, ca_key, srv_crt, srv_key)):
        return  # a restart in the same directory keeps the CA clients trust

    def run(*cmd):
        subprocess.run(["openssl", *cmd],
                       check=True,
                       stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)

    run("req", "-x509", "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", ca_key, "-out",
        ca_crt, "-days", "3650", "-subj", "/CN=fake-apiserver-ca", "-addext",
        "basicConstraints=critical,CA:TRUE", "-addext",
        "keyUsage=critical,keyCertSign,cRLSign")
    csr = os.path.join(d, "server.csr")
    ext = os.path.join(d, "server.ext")
    with open(ext, "w") as f:
        f.write("basicConstraints=CA:FALSE\n"
                "keyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
        "-nodes", "-keyout", srv_key, "-out", csr, "-subj",
        "/CN=fake-apiserver")
    run("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key,
        "-CAcreateserial", "-out", srv_crt, "-days", "3650", "-extfile", ext)
    for p in (csr, ext, os.path.join(d, "ca.srl")):
        if os.path.exists(p):
            os.remove(p)


def write_kubeconfig(d, port, token):
    with open(os.path.join(d, "ca.crt"), "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    text = f"""apiVersion: v1
kind: Config
clusters:
- name: fixture
  cluster:
    server: https://127.0.0.1:{port}
    certificate-authority-data: {ca}
users:
- name: fixture
  user:
    token: {token}
contexts:
- name: fixture
  context:
    cluster: fixture
    user: fixture
    namespace: default
current-context: fixture
preferences: {{}}
"""
    tmp = os.path.join(d, "kubeconfig.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(d, "kubeconfig"))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--token", default="kq-test-token")
    p.add_argument("--job-runtime", type=float, default=2.0)
    p.add_argument("--pod-stop-seconds", type=float, default=0.5)
    p.add_argument("--watch-window",
                   type=int,
                   default=10000,
                   help="events kept for watch replay; older rvs get 410 Gone")
    p.add_argument("--bookmark-interval",
                   type=float,
                   default=1.0,
                   help="seconds between BOOKMARK events on idle watches")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    generate_certs(args.dir)

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(args.dir, "server.crt"),
                        os.path.join(args.dir, "server.key"))
    # HTTP/1.1 only: Go clients fall back from h2 through ALPN.
    ctx.set_alpn_protocols(["http/1.1"])

    fx = Fixture(args)
    server = Server(("127.0.0.1", args.port), make_handler(fx), ctx)
    fx.port = server.server_address[1]
    write_kubeconfig(args.dir, fx.port, args.token)

    def stop(*_):
        fx.shutting_down.set()
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"READY https://127.0.0.1:{fx.port}", flush=True)
    server.serve_forever(poll_interval=0.2)
    server.server_close()


if __name__ == "__main__":
    main()
