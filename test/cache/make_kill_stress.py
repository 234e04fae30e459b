#!/usr/bin/env python3
"""The compile cache survives a parallel build whose exports are SIGKILLed.

RELIABILITY case: "A `make -j8` build of 16 model variants into one cache,
with a killer process sending SIGKILL to random exports, ends with every
library correct (byte-identical to a cold build) after a rerun."

  1. 16 TorchScript variants, models/vN/FAMILY.pt, are made from
     examples/mlp/model.pt and from scripted nn.Sequential stacks: some
     differ only in their weights (they share one code entry and the
     weights plan of one structure), one is a byte copy of another under
     another SONAME, some differ in the input shape, some in the
     architecture.
  2. Each is exported once, sequentially and without a cache, into cold/:
     the reference every later library must equal byte for byte.
  3. Exported one after another into a cache of their own, the variants
     alike in code take their code from the cache (code-level hits or the
     weights plan of their structure), and every library still equals its
     cold build (a check that the levels are at work).
  4. A Makefile builds lib/vN.so from models/vN/FAMILY.pt with
     --cache-dir shared/cache and a fixed --soname per variant (the
     targets .PRECIOUS, so that make leaves what a killed export wrote for
     the test to see). For the first --kill-seconds, `make -j8 -k` runs in rounds while a killer
     thread SIGKILLs a random running cuvil-export under make every
     50-300 ms (at the default --kill-rate). After every round each
     lib/vN.so that exists must equal the cold one (never partial, never
     another variant's); then, while the window is still open, the outputs
     are deleted (and, every other round, a random half of the cache
     entries too, so that stores are killed as well as lookups) and make
     runs again.
  5. `make -j8` without the killer must succeed, and all 16 libraries must
     equal the cold ones.
  6. The cache holds no corrupt entry: every entry under shared/cache/v2
     starts with "cuvil-cache 2", and one more export of each variant with
     --cache-stats (mostly whole-output hits) is byte-identical with 0
     corrupt and 0 refused entries, this export's and the directory's
     totals, and no warning.
  7. Every library run by cuvil-run matches PyTorch's own output
     (rtol = atol = 1e-4).

    /usr/bin/python3 test/cache/make_kill_stress.py --bin build/bin --work /tmp/x

Exit status: 0 pass, 1 a failure (each one named, with its variant), 77
PyTorch is not importable or make is not installed.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "..", "..", "examples", "mlp", "model.pt")
MAGIC = b"cuvil-cache 2\n"

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)
    return cond


# ----------------------------------------------------------------- models


class Variant:
    def __init__(self, name, family, shape, how):
        self.name = name      # v0 ... v15
        self.family = family  # the model file's stem: the model's name
        self.shape = shape    # (rows, features)
        self.how = how        # a word for the summary

    @property
    def model(self):
        # The model's name (its file's stem) is part of its code, so
        # variants of one family share code only under one stem.
        return "models/%s/%s.pt" % (self.name, self.family)

    @property
    def soname(self):
        return "lib%s.so" % self.name

    @property
    def input_shape(self):
        return "0=%dx%dxf32" % self.shape

    @property
    def code(self):
        """What the code depends on: variants alike here share code."""
        return (self.family, self.shape)


def scaled_mlp(path, factor):
    """examples/mlp with every parameter multiplied by `factor`: the same
    code, other weights."""
    m = torch.jit.load(MLP)
    with torch.no_grad():
        for p in m.parameters():
            p.mul_(factor)
    m.save(path)


def sequential(path, widths, seed, act=nn.ReLU):
    """Linear layers of these widths with `act` between them, scripted."""
    torch.manual_seed(seed)
    layers = []
    for i, (a, b) in enumerate(zip(widths, widths[1:])):
        if i:
            layers.append(act())
        layers.append(nn.Linear(a, b))
    torch.jit.script(nn.Sequential(*layers).eval()).save(path)


def make_variants(work, count):
    """Writes models/vN/FAMILY.pt and returns the Variants. The first 16 are
    a fixed mix; past 16 it repeats with other weights."""
    def mlp(factor):
        return lambda p, k: scaled_mlp(p, factor + k)

    def seq(widths, seed, act=nn.ReLU):
        return lambda p, k: sequential(p, widths, seed + 10 * k, act)

    plan = [  # (family, input shape, what it is, maker(path, repeat))
        ("mlp", (2, 8), "the mlp", mlp(1.0)),
        ("mlp", (2, 8), "mlp, weights x0.5", mlp(0.5)),
        ("mlp", (2, 8), "mlp, weights x0.75", mlp(0.75)),
        ("mlp", (2, 8), "mlp, weights x1.25", mlp(1.25)),
        ("mlp", (2, 8), "mlp, weights x1.5", mlp(1.5)),
        ("mlp", (2, 8), "a byte copy of v0's model", None),
        ("mlp", (4, 8), "mlp, input 4x8", mlp(1.0)),
        ("mlp", (4, 8), "mlp, input 4x8, weights x2", mlp(2.0)),
        ("mlp", (1, 8), "mlp, input 1x8", mlp(0.9)),
        ("narrow", (2, 8), "linear 8-12-4", seq([8, 12, 4], 1)),
        ("wide", (2, 8), "linear 8-24-4", seq([8, 24, 4], 2)),
        ("wide", (2, 8), "linear 8-24-4, other weights", seq([8, 24, 4], 3)),
        ("wide", (3, 8), "linear 8-24-4, input 3x8", seq([8, 24, 4], 4)),
        ("deep", (2, 8), "linear 8-32-32-4", seq([8, 32, 32, 4], 5)),
        ("deeptanh", (2, 8), "linear 8-32-32-4, tanh", seq([8, 32, 32, 4], 6, nn.Tanh)),
        ("deeper", (2, 8), "linear 8-16-16-16-4", seq([8, 16, 16, 16, 4], 7)),
    ]
    variants = []
    for i in range(count):
        family, shape, how, maker = plan[i % len(plan)]
        k = i // len(plan)
        v = Variant("v%d" % i, family, shape, how if k == 0 else "%s (repeat %d)" % (how, k))
        path = os.path.join(work, v.model)
        os.makedirs(os.path.dirname(path))
        if maker is None:  # the same bytes as the group's first
            shutil.copyfile(os.path.join(work, variants[i - 5].model), path)
        else:
            maker(path, k)
        variants.append(v)
    return variants


# ---------------------------------------------------------------- exports


def export_args(exe, v, output, extra=()):
    return [exe, "--model", v.model, "--input-shape", v.input_shape, "--target", "x86_64",
            "-o", output, "--soname", v.soname, *extra]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write_makefile(work, exe, variants):
    libs = " ".join("lib/%s.so" % v.name for v in variants)
    lines = ["# Written by make_kill_stress.py", "EXPORT := %s" % exe,
             "CACHE := shared/cache", "", "all: %s" % libs, ""]
    for v in variants:
        args = export_args("$(EXPORT)", v, "$@", ["--cache-dir", "$(CACHE)"])
        args[2] = "$<"
        lines += ["lib/%s.so: %s" % (v.name, v.model), "\t" + " ".join(args), ""]
    # make deletes the target of a recipe killed by a signal; that would
    # hide a partial output, which is what this test looks for.
    lines += [".PRECIOUS: %s" % libs, ".PHONY: all"]
    with open(os.path.join(work, "Makefile"), "w") as f:
        f.write("\n".join(lines) + "\n")


# ----------------------------------------------------------------- killer


def proc_table():
    """{pid: (ppid, comm)} of every process now."""
    table = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        table[int(d)] = (ppid, comm)
    return table


def exports_under(root):
    """The cuvil-export processes descended from `root` (make)."""
    table = proc_table()
    found = []
    for pid, (ppid, comm) in table.items():
        if comm != "cuvil-export":
            continue
        p = ppid
        for _ in range(8):  # make -> (sh ->) cuvil-export
            if p == root:
                found.append(pid)
                break
            if p not in table:
                break
            p = table[p][0]
    return found


class Killer(threading.Thread):
    """SIGKILLs a random cuvil-export under the current make, at intervals
    uniform in [0.3, 1.7] / rate seconds, until stopped."""

    def __init__(self, rng, rate):
        super().__init__(daemon=True)
        self.rng, self.rate = rng, rate
        self.make_pid = None
        self.killed = 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(self.rng.uniform(0.3, 1.7) / self.rate):
            root = self.make_pid
            if root is None:
                continue
            pids = exports_under(root)
            if not pids:
                continue
            pid = self.rng.choice(pids)
            try:
                os.kill(pid, signal.SIGKILL)
                self.killed += 1
            except ProcessLookupError:
                pass  # finished in between


def run_make(work, jobs, log, killer=None):
    """Runs make -jN (-k under the killer); returns its exit status."""
    cmd = ["make", "-j%d" % jobs, "--no-print-directory"] + (["-k"] if killer else [])
    with open(log, "ab") as out:
        p = subprocess.Popen(cmd, cwd=work, stdout=out, stderr=subprocess.STDOUT)
        if killer:
            killer.make_pid = p.pid
        try:
            rc = p.wait(timeout=300)
        finally:
            if killer:
                killer.make_pid = None
    return rc


def check_outputs(work, variants, cold, when):
    """Every lib/vN.so that exists equals the cold one; returns how many
    exist and how many do not equal it."""
    present, wrong = 0, 0
    for v in variants:
        path = os.path.join(work, "lib", v.name + ".so")
        if not os.path.exists(path):
            continue
        present += 1
        data = read(path)
        if data != cold[v.name]:
            wrong += 1
            check(False, "%s: lib/%s.so (%s) is %d bytes and differs from the cold build "
                  "(%d bytes)" % (when, v.name, v.how, len(data), len(cold[v.name])))
    return present, wrong


def entry_files(cache):
    """(entries, leftover temporaries) under cache/v2."""
    entries, temps = [], []
    for level in ("lib", "code"):
        top = os.path.join(cache, "v2", level)
        if not os.path.isdir(top):
            continue
        for sub in os.listdir(top):
            for name in os.listdir(os.path.join(top, sub)):
                (temps if name.startswith(".") else entries).append(os.path.join(top, sub, name))
    return entries, temps


STATS_ROW = re.compile(r"^\s*(lib|code)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s+"
                       r"(\d+)/(\d+)\s+(\d+)/(\d+)\s", re.M)


def parse_stats(stderr):
    """{level: {column: (this export, all exports)}} from --cache-stats."""
    cols = ("hits", "remote", "misses", "corrupt", "refused")
    stats = {}
    for m in STATS_ROW.finditer(stderr):
        n = [int(x) for x in m.groups()[1:]]
        stats[m.group(1)] = {c: (n[2 * i], n[2 * i + 1]) for i, c in enumerate(cols)}
    return stats


# ------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory of cuvil-export and cuvil-run")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--variants", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--kill-rate", type=float, default=6.0,
                    help="SIGKILLs per second, on average, while exports run (default 6: "
                         "one every 50-300 ms)")
    ap.add_argument("--kill-seconds", type=float, default=6.0,
                    help="how long builds run under the killer (default 6)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    exe = os.path.abspath(os.path.join(args.bin, "cuvil-export"))
    run = os.path.abspath(os.path.join(args.bin, "cuvil-run"))
    for tool in (exe, run):
        if not os.access(tool, os.X_OK):
            print("FAIL no executable %s" % tool)
            return 1
    if shutil.which("make") is None:
        print("make is not installed: skipped")
        return 77
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "lib"))
    os.makedirs(os.path.join(work, "cold"))
    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    t0 = time.time()

    variants = make_variants(work, args.variants)
    print("made %d variants in %.1f s" % (len(variants), time.time() - t0), flush=True)

    # The reference: each variant compiled cold, one at a time.
    cold = {}
    t = time.time()
    for v in variants:
        out = "cold/%s.so" % v.name
        p = subprocess.run(export_args(exe, v, out), cwd=work, capture_output=True, text=True)
        if not check(p.returncode == 0, "%s (%s): cold export" % (v.name, v.how)):
            print(p.stderr)
            return 1
        cold[v.name] = read(os.path.join(work, out))
    print("cold builds: %.1f s" % (time.time() - t), flush=True)
    distinct = len(set(cold.values()))
    check(distinct == len(variants),
          "the %d cold libraries are all different (%d distinct)" % (len(variants), distinct))

    # Both levels at work: sequentially into a cache of its own, the
    # variants alike in code hit the code level, the others compile; each
    # library equals its cold build either way.
    os.makedirs(os.path.join(work, "probe"))
    seen, probe_ok, code_hits = set(), True, 0
    for v in variants:
        out = os.path.join(work, "probe", v.name + ".so")
        p = subprocess.run(export_args(exe, v, out, ["--cache-dir", "probe/cache", "-v"]),
                           cwd=work, capture_output=True, text=True)
        # The code from the cache: relinked, or the structure's weights plan
        # placed into its linked image.
        hit = ("compile cache: code from the cache" in p.stderr
               or "compile cache: weights made by the cached plan" in p.stderr)
        want = v.code in seen
        seen.add(v.code)
        code_hits += hit
        problems = []
        if p.returncode != 0:
            problems.append("exit %d" % p.returncode)
        elif read(out) != cold[v.name]:
            problems.append("the library differs from the cold build")
        if hit != want:
            problems.append("code %s, want %s" % (("compiled", "a hit") if want
                                                  else ("a hit", "compiled")))
        if problems:
            probe_ok = check(False, "%s (%s): export into an unshared cache: %s\n%s"
                             % (v.name, v.how, "; ".join(problems), p.stderr))
    check(probe_ok, "exported one after another into one cache: %d code hits (variants that "
          "differ only in weights or SONAME), %d compiled, all equal to the cold builds"
          % (code_hits, len(variants) - code_hits))

    write_makefile(work, exe, variants)
    cache = os.path.join(work, "shared", "cache")
    log = os.path.join(work, "make.log")

    # Builds under the killer, in rounds, for --kill-seconds.
    killer = Killer(random.Random(args.seed + 1), args.kill_rate)
    killer.start()
    rounds, present_total, wrong_total, built_total, failed_rounds = 0, 0, 0, 0, 0
    deadline = time.time() + args.kill_seconds
    while True:
        rounds += 1
        rc = run_make(work, args.jobs, log, killer)
        failed_rounds += rc != 0
        present, wrong = check_outputs(work, variants, cold, "after killed round %d" % rounds)
        present_total += present
        wrong_total += wrong
        built_total += len(variants)
        print("round %d: make -k exit %d, %d/%d outputs present, %d exports killed so far"
              % (rounds, rc, present, len(variants), killer.killed), flush=True)
        if time.time() >= deadline or wrong:
            break
        for v in variants:  # build them all again
            try:
                os.unlink(os.path.join(work, "lib", v.name + ".so"))
            except FileNotFoundError:
                pass
        if rounds % 2 == 0:  # and store half of the entries again
            entries, _ = entry_files(cache)
            for e in rng.sample(entries, len(entries) // 2):
                os.unlink(e)
    killer.stop.set()
    killer.join()
    check(killer.killed > 0, "the killer killed %d exports in %d rounds of make (%d of them "
          "failed)" % (killer.killed, rounds, failed_rounds))
    check(wrong_total == 0, "after every killed round, each output present (%d of %d) was "
          "byte-identical to its cold build" % (present_total, built_total))

    # The rerun completes the build.
    t = time.time()
    rc = run_make(work, args.jobs, log)
    if not check(rc == 0, "make -j%d without the killer succeeds (%.1f s; log %s)"
                 % (args.jobs, time.time() - t, log)):
        with open(log) as f:
            print(f.read()[-4000:])
    final_ok = True
    for v in variants:
        path = os.path.join(work, "lib", v.name + ".so")
        if not os.path.exists(path):
            final_ok = check(False, "%s (%s): lib/%s.so is missing after the rerun"
                             % (v.name, v.how, v.name))
        elif read(path) != cold[v.name]:
            final_ok = check(False, "%s (%s): lib/%s.so differs from the cold build"
                             % (v.name, v.how, v.name))
    check(final_ok, "after the rerun all %d libraries are byte-identical to the cold builds"
          % len(variants))

    # No corrupt entries: by their header, and as the exports see them.
    entries, temps = entry_files(cache)
    names = {v.name + ".so" for v in variants}
    strays = [n for n in os.listdir(os.path.join(work, "lib")) if n not in names]
    bad = [e for e in entries if not read(e).startswith(MAGIC)]
    check(entries and not bad, "all %d cache entries start with 'cuvil-cache 2'%s (%d temporaries "
          "of killed exports left)" % (len(entries), "" if not bad else "; not: " + ", ".join(bad),
                                       len(temps)))
    os.makedirs(os.path.join(work, "again"))
    stats_ok, hits = True, 0
    for v in variants:
        p = subprocess.run(export_args(exe, v, "again/%s.so" % v.name,
                                       ["--cache-dir", "shared/cache", "--cache-stats", "-v"]),
                           cwd=work, capture_output=True, text=True)
        s = parse_stats(p.stderr)
        problems = []
        if p.returncode != 0:
            problems.append("exit %d" % p.returncode)
        if "lib" not in s or "code" not in s:
            problems.append("no --cache-stats table")
        else:
            for level in ("lib", "code"):
                for col in ("corrupt", "refused"):
                    if s[level][col] != (0, 0):
                        problems.append("%s %s %d/%d" % ((level, col) + s[level][col]))
            # Not always a hit: an export killed between writing its
            # output and storing it leaves an output make keeps.
            hits += s["lib"]["hits"][0]
        if ": warning:" in p.stderr:
            problems.append("a warning")
        if not problems and read(os.path.join(work, "again", v.name + ".so")) != cold[v.name]:
            problems.append("the library differs from the cold build")
        if problems:
            stats_ok = False
            check(False, "%s (%s): export from the cache after the build: %s\n%s"
                  % (v.name, v.how, "; ".join(problems), p.stderr))
    check(stats_ok, "one more export of each variant: byte-identical, 0 corrupt and 0 refused "
          "entries (this export's and the directory's totals), %d of %d whole-output hits"
          % (hits, len(variants)))

    # The libraries compute what PyTorch does.
    numeric_ok = True
    nprng = np.random.default_rng(args.seed)
    for v in variants:
        x = nprng.uniform(-1, 1, v.shape).astype(np.float32)
        d = os.path.join(work, "run", v.name)
        os.makedirs(d)
        np.save(os.path.join(d, "x.npy"), x)
        with torch.no_grad():
            want = torch.jit.load(os.path.join(work, v.model))(torch.from_numpy(x)).numpy()
        p = subprocess.run([run, os.path.join(work, "lib", v.name + ".so"), "--input",
                            os.path.join(d, "x.npy"), "--output-dir", d, "-q"],
                           capture_output=True, text=True)
        out = os.path.join(d, "output0.npy")
        if p.returncode != 0 or not os.path.exists(out):
            numeric_ok = check(False, "%s (%s): cuvil-run failed (exit %d)\n%s"
                               % (v.name, v.how, p.returncode, p.stderr))
            continue
        got = np.load(out)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-4):
            err = np.abs(got - want).max() if got.shape == want.shape else float("nan")
            numeric_ok = check(False, "%s (%s): output %s differs from PyTorch's %s (max |diff| "
                               "%g)" % (v.name, v.how, got.shape, want.shape, err))
    check(numeric_ok, "every library's output matches PyTorch's (rtol = atol = 1e-4)")

    print("\nsummary (%.1f s in all):" % (time.time() - t0))
    print("  %d variants; %d rounds of make -j%d -k under the killer, %d exports SIGKILLed"
          % (len(variants), rounds, args.jobs, killer.killed))
    print("  outputs present after those rounds: %d of %d, %d of them wrong"
          % (present_total, built_total, wrong_total))
    print("  rerun without the killer: %s; libraries equal to the cold builds: %s"
          % ("ok" if rc == 0 else "FAILED", "all" if final_ok else "NOT all"))
    print("  cache: %d entries, %d bad headers; temporaries left by killed exports: %d in the "
          "cache, %d next to the outputs" % (len(entries), len(bad), len(temps), len(strays)))
    if FAILURES:
        print("%d failure(s):" % len(FAILURES))
        for f in FAILURES:
            print("  " + f.split("\n")[0])
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
