#!/usr/bin/python3
"""Fails when a source file includes a module its own module may not use.

CMake's DEPS catch a wrong arrow only when it links; a header-only include
links anyway. This is the include-line check of the module table (STYLE.md
6.2, in its present shape): each module below lists the project modules and
the third-party libraries its files may include. Tests are not checked: they
may include anything they test.

Usage: check-includes.py [ROOT]       check the tree at ROOT (default: ..)
       check-includes.py --self-test  prove that a wrong include fails
Prints one line per wrong include, "file:line: ...", and exits 1 if any.
"""

import os
import re
import sys
import tempfile

ABSL = {"absl"}
# Kueue's arithmetic and objects, free of I/O, threads and logging.
CORE_LIBS = ABSL | {"nlohmann"}

# module -> the modules and libraries its files may include. A module is a
# directory (server/engine) or, for a file directly under a top directory,
# that directory (server, shim). "proto" is kq/v1's generated code,
# "kq_client" the client library's public headers (kq/client/...).
ALLOWED = {
    # metrics.h is kq::base_metrics, on prometheus-cpp.
    "base": ABSL | {"prometheus"},
    "server/common": ABSL | {"base"},
    # nlohmann escapes the JSON log lines.
    "server/logging": ABSL | {"spdlog", "nlohmann"},
    # The compact containers: nothing of Kueue.
    "server/container": ABSL | {"base", "server/common"},
    "server/core": CORE_LIBS | {"base", "server/common", "server/container"},
    "server/cache": ABSL | {"base", "server/common", "server/core"},
    "server/queue": ABSL | {"base", "server/common", "server/core"},
    # The pure scheduling pass: no store, engine, proto, grpc or logging.
    "server/scheduler":
        ABSL | {"base", "server/common", "server/core", "server/cache"},
    "server/preemption":
        ABSL | {
            "base", "server/common", "server/core", "server/cache",
            "server/scheduler"
        },
    "server/admission":
        ABSL | {
            "base", "server/common", "server/core", "server/cache",
            "server/queue", "server/scheduler", "server/preemption"
        },
    # The MultiKueue manager's pure decision rules: core types only.
    "server/federation": ABSL | {"server/core"},
    # The MultiKueue manager's runtime: links to the workers over the
    # client library, and the controller that follows the engine's commits.
    "server/federation/manager":
        ABSL | {
            "base", "server/common", "server/core", "server/federation",
            "server/engine", "server/admission", "server/store",
            "server/codec", "proto", "google", "kq_client", "prometheus",
            "spdlog"
        },
    "server/simulator":
        ABSL | {"base", "server/common", "server/core", "server/admission"},
    "server/codec":
        CORE_LIBS | {"base", "server/common", "server/core", "proto", "google"},
    # The Store interface: no database.
    "server/store": ABSL | {"base", "server/common", "server/core"},
    "server/store/sqlite":
        ABSL | {
            "base", "server/common", "server/core", "server/store",
            "server/codec", "proto", "google", "migrations", "spdlog"
        },
    "server/engine":
        ABSL | {
            "base", "server/common", "server/core", "server/admission",
            "server/store", "server/logging", "spdlog"
        },
    # What kqd exports on /metrics: observes the engine's committed batches
    # and reads the committed state.
    "server/metrics":
        ABSL | {
            "base", "server/common", "server/core", "server/container",
            "server/engine", "server/admission", "server/cache",
            "server/queue", "server/store", "prometheus", "grpcpp"
        },
    # Who is calling and whether they may: TLS, identities, RBAC, audit.
    # Below the API and the HTTP port; knows nothing of the engine.
    "server/auth":
        ABSL | {
            "base", "manifest", "nlohmann", "prometheus", "grpcpp", "grpc",
            "spdlog"
        },
    # HTTP listeners (a leaf on cpp-httplib), and kqd's port on them.
    "server/http":
        ABSL | {
            "base", "spdlog", "server/engine", "server/metrics",
            "server/visibility", "server/auth", "nlohmann"
        },
    # Kueue's visibility API as HTTP answers: engine reads, rendered as
    # Kueue's JSON.
    "server/visibility":
        ABSL | {
            "base", "server/common", "server/core", "server/engine",
            "server/admission", "nlohmann"
        },
    "server/api":
        ABSL | {
            "base", "server/common", "server/core", "server/engine",
            "server/codec", "server/auth", "proto", "google", "grpcpp", "grpc",
            "spdlog"
        },
    # The composition root.
    "server/daemon": None,
    "server": None,
    "client-lib/include": ABSL | {"proto", "google", "kq_client"},
    # context_file.cc reads YAML through the manifest module's loader.
    "client-lib/src":
        ABSL | {
            "base", "proto", "google", "grpcpp", "grpc", "kq_client",
            "manifest", "nlohmann"
        },
    "manifest": CORE_LIBS | {"base", "proto", "google"},
    # kq simulate runs the admission core offline, so the CLI links the
    # simulator and the codec it reads scenarios with.
    "cli":
        CORE_LIBS | {
            "base", "proto", "google", "grpcpp", "kq_client",
            "manifest", "CLI", "server/common", "server/codec",
            "server/simulator", "server/core"
        },
    # kq_reflector: the shim's list+watch of kqd, shared by jobs and
    # provisioning.
    "shim/common": CORE_LIBS | {"base", "spdlog", "proto", "kq_client"},
    "shim/kube": CORE_LIBS | {"base", "spdlog", "yaml-cpp"},
    "shim/webhook":
        CORE_LIBS | {"base", "spdlog", "shim/common", "server/http"},
    "shim/jobs":
        CORE_LIBS | {
            "base", "spdlog", "shim/common", "shim/kube", "proto", "google",
            "kq_client", "manifest"
        },
    "shim/provisioning":
        CORE_LIBS | {
            "base", "spdlog", "shim/common", "shim/kube", "shim/jobs",
            "proto", "google", "kq_client", "manifest"
        },
    # kq-k8s-shim's main: its modules.
    "shim":
        ABSL | {
            "base", "spdlog", "CLI", "kq_client",
            "shim/common", "shim/kube", "shim/jobs", "shim/provisioning",
            "shim/webhook"
        },
    "bench": None,
}

TOP_DIRS = ("base", "manifest", "server", "client-lib", "cli", "shim", "bench")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module_of(path):
    """The module of a file (or of an included path) relative to the root."""
    parts = path.split("/")
    if parts[0] in ("server", "client-lib", "shim") and len(parts) > 2:
        # Rooms with a room of their own inside.
        for sub in (["server", "store", "sqlite"],
                    ["server", "federation", "manager"]):
            if parts[:3] == sub and len(parts) > 3:
                return "/".join(sub)
        return "/".join(parts[:2])
    return parts[0]


def included_module(include):
    """What an include line names: a project module or a library."""
    if include.startswith("kq/v1/"):
        return "proto"
    if include.startswith("kq/client/"):
        return "kq_client"
    if "/" not in include:
        return None  # a library's top header (httplib.h): not checked
    first = include.split("/", 1)[0]
    if first in TOP_DIRS or first in ("migrations", "proto", "tests"):
        return module_of(include)
    return first


def check(root):
    wrong = []
    for top in TOP_DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                module = module_of(path)
                if module not in ALLOWED:
                    wrong.append(f"{path}: module {module} is not in the "
                                 "table of scripts/check-includes.py")
                    continue
                allowed = ALLOWED[module]
                if allowed is None:
                    continue
                with open(os.path.join(root, path), errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = included_module(m.group(1))
                        if target is None or target == module:
                            continue
                        if target not in allowed:
                            wrong.append(
                                f"{path}:{number}: {module} may not include "
                                f"\"{m.group(1)}\" ({target}); it may "
                                f"include {', '.join(sorted(allowed))}")
    return wrong


def self_test():
    """A tree with one allowed and one wrong include must give exactly the
    wrong one."""
    with tempfile.TemporaryDirectory() as root:
        files = {
            "server/scheduler/a.cc": '#include "server/core/objects.h"\n'
                                     '#include "server/store/store.h"\n',
            "server/core/objects.h": '#include "absl/strings/str_cat.h"\n',
            "server/store/store.h": "",
        }
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)),
                        exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        wrong = check(root)
        if len(wrong) != 1 or not wrong[0].startswith(
                "server/scheduler/a.cc:2: server/scheduler may not include "
                "\"server/store/store.h\""):
            print("self-test failed:", wrong)
            return 1
    print("check-includes self-test: 1 passed, 0 failed")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    root = argv[1] if len(argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    wrong = check(root)
    for line in wrong:
        print(line)
    if wrong:
        print(f"check-includes: {len(wrong)} include(s) cross a module "
              "boundary (scripts/check-includes.py lists what each module "
              "may include)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
