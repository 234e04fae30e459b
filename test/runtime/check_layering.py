#!/usr/bin/env python3
"""The runtime's dependencies point one way (runtime/README.md).

    check_layering.py NM ARCHIVE CORE_STEM...

Reads the runtime archive's symbol tables and builds the file-level call
graph (member A -> member B when A references a symbol B defines). Fails
when the graph has a cycle, or when a core member (CORE_STEM: api,
thread_pool, ...) calls into any other member: core/ is what every backend
builds on, so it must not need the CPU kernels.
"""
import os
import subprocess
import sys


def member_stem(name):
    # CMake names members "gemm.c.o", the aarch64 build "gemm.o".
    base = os.path.basename(name)
    return base.split(".", 1)[0]


def read_graph(nm, archive):
    out = subprocess.run([nm, "-A", archive], capture_output=True, text=True, check=True).stdout
    defined, used = {}, {}
    for line in out.splitlines():
        # "libcuvil_runtime.a:gemm.c.o:0000000000000000 T cuvil_gemm_run"
        # "libcuvil_runtime.a:gemm.c.o:                 U cuvil_run_items"
        location, _, rest = line.rpartition(":")
        member = member_stem(location.rpartition(":")[2])
        fields = rest.split()
        if len(fields) < 2:
            continue
        kind, symbol = fields[-2], fields[-1]
        used.setdefault(member, set())
        if kind == "U":
            used[member].add(symbol)
        elif kind in "TDRBCVW":
            defined[symbol] = member
    return {m: sorted({defined[s] for s in syms if s in defined and defined[s] != m})
            for m, syms in used.items()}


def find_cycle(graph):
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    nm, archive, core = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    graph = read_graph(nm, archive)
    missing = core - set(graph)
    if missing:
        print("core members missing from %s: %s" % (archive, ", ".join(sorted(missing))))
        return 1
    failed = False
    for member in sorted(graph):
        print("%s -> %s" % (member, ", ".join(graph[member]) or "(nothing)"))
    cycle = find_cycle(graph)
    if cycle:
        print("error: the runtime's files call each other in a cycle: " + " -> ".join(cycle))
        failed = True
    for member in sorted(core):
        outside = [m for m in graph[member] if m not in core]
        if outside:
            print("error: core member %s calls %s (core/ must not depend on a backend)"
                  % (member, ", ".join(outside)))
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
