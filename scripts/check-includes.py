#!/usr/bin/env python3
"""Keeps the module map of docs/architecture.md true.

Every `#include "..."` of a project header in src/, include/ and plugins/ must
point to the including module itself or to a module it may use (ALLOWED
below, which is the map drawn in docs/architecture.md). Tests (`*_test.cc`,
test/) and benchmarks may include anything. The allowed graph itself must
have no cycle.

Usage: scripts/check-includes.py [ROOT]   (exit 0: clean; 1: violations, each
printed as file:line with the rule it breaks; 2: bad invocation)
"""
import os
import re
import sys

# module -> modules it may include (besides itself). Modules: `util`
# (include/gantry/util), `api` (include/gantry, the plugin API), `src/<dir>`,
# `plugins/helper`, `plugins/registry`, and `plugin` (each built-in plugin's
# own folder; plugins never include one another).
ALLOWED = {
    "util": set(),
    "src/metrics": set(),
    "src/api": {"util"},
    "api": {"util", "src/api"},
    "src/cel": {"util", "src/api"},
    "src/config": {"util", "api", "src/api"},
    "src/queue": {"util", "api"},
    "src/state": {"util", "api", "src/api"},
    "src/dra": {"util", "api", "src/api", "src/cel", "src/state"},
    "src/framework": {"util", "api", "src/api", "src/state"},
    "plugins/helper": {"util", "api", "src/api"},
    "plugin": {"util", "api", "src/api", "src/cel", "src/dra", "plugins/helper"},
    "plugins/registry": {"util", "api", "src/api", "plugin"},
    "src/scheduler": {"util", "api", "src/api", "src/config", "src/framework", "src/metrics",
                      "src/queue", "src/state"},
    "src/sim": {"util", "api", "src/api", "src/config", "src/scheduler", "src/state"},
    "src/client": {"util", "api", "src/api", "src/metrics", "src/state"},
    "src/admin": {"util", "api", "src/api", "src/client", "src/config", "src/framework",
                  "src/scheduler", "src/sim", "src/state"},
    "src/server": {"util", "api", "src/api", "src/admin", "src/metrics", "src/sim"},
    "src/runtime": {"util", "api", "src/api", "src/admin", "src/client", "src/config",
                    "src/metrics", "src/scheduler", "src/server", "src/state"},
    "src/main": {"util", "api", "src/api", "src/admin", "src/cel", "src/client", "src/config",
                 "src/metrics", "src/runtime", "src/scheduler", "src/server", "src/sim",
                 "plugins/registry"},
}

# Single headers a module may include against the map, each with its reason.
# Keep this list short; each entry is a known departure named in
# docs/architecture.md.
EXCEPTIONS = {
    ("plugin", "src/state/dra_state.h"):
        "DRA plugins read the DRA state through FrameworkHandle::Dra() until a narrow DRA view "
        "interface replaces it",
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def module_of_path(path):
    """The module a repository-relative file belongs to, or None (not checked)."""
    parts = path.split("/")
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "gantry":
        return "util" if parts[2] == "util" else "api"
    if parts[0] == "src" and len(parts) > 2:
        return "src/" + parts[1]
    if parts[0] == "plugins" and len(parts) > 2:
        if parts[1] in ("helper", "registry"):
            return "plugins/" + parts[1]
        return "plugin"
    return None


def module_of_include(inc):
    if inc.startswith("gantry/"):
        return module_of_path("include/" + inc)
    return module_of_path(inc)


def plugin_folder(path):
    parts = path.split("/")
    return parts[1] if parts[0] == "plugins" and len(parts) > 2 else None


def find_cycle(graph):
    state = {}
    stack = []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def main(argv):
    if len(argv) > 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.abspath(argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(__file__), ".."))
    problems = []
    cycle = find_cycle(ALLOWED)
    if cycle:
        problems.append("the module map has a cycle: " + " -> ".join(cycle))
    unknown = {m for deps in ALLOWED.values() for m in deps} - set(ALLOWED)
    for m in sorted(unknown):
        problems.append(f"the module map names an unknown module {m}")

    checked = 0
    for top in ("include", "src", "plugins"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")) or name.endswith("_test.cc"):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                mod = module_of_path(rel)
                if mod is None:
                    continue
                if mod not in ALLOWED:
                    problems.append(f"{rel}: module {mod} is not in the module map "
                                    "(add it to scripts/check-includes.py and docs/architecture.md)")
                    continue
                checked += 1
                with open(full, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        target = module_of_include(inc)
                        if target is None:
                            continue  # generated (proto) or third-party headers
                        if target == mod:
                            if mod == "plugin" and plugin_folder(rel) != plugin_folder(inc):
                                problems.append(f"{rel}:{lineno}: a plugin includes another plugin's "
                                                f"header {inc} (plugins use only the plugin API)")
                            continue
                        if target in ALLOWED[mod] or (mod, inc) in EXCEPTIONS:
                            continue
                        allowed = ", ".join(sorted(ALLOWED[mod])) or "nothing"
                        problems.append(f"{rel}:{lineno}: {mod} may not include {inc} ({target}); "
                                        f"{mod} may use: {allowed}")
    for p in problems:
        print(p)
    if problems:
        print(f"check-includes: {len(problems)} problem(s); the module map is in docs/architecture.md")
        return 1
    print(f"check-includes: {checked} files follow the module map")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
