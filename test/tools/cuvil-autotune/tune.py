#!/usr/bin/env python3
"""cuvil-autotune tune, measured on this machine, end to end.

A small CNN (3x3 convolutions Winograd can take, a strided one, 1x1 ones, a
linear layer) is scripted with PyTorch. Then:
  * `tune` measures every tunable kernel (records with method "measured",
    every candidate timed or its failure recorded; a convolution that can
    run in bands with its producer measured both ways), writes an HTML report
    that renders in headless Chromium;
  * a second `tune` with the complete database measures nothing;
  * two shards tuned separately and merged hold the same keys as one run
    over the whole model;
  * `cuvil-export --strategy autotune` takes the configurations from the
    database (kernel report), gives the same bytes twice, and the library's
    output matches PyTorch's;
  * the same tuning through `--runner env` (a runner that runs the command
    as given) measures too;
  * runners that fail: one that exits non-zero, one that hangs (past
    --candidate-timeout), one that prints garbage: a clear message and
    exit 1, no database written; a runner under which the candidate
    libraries crash, or compute other outputs than the heuristics' library:
    each is tried kernel by kernel, the culprits recorded as failed and
    skipped.

    /usr/bin/python3 test/tools/cuvil-autotune/tune.py --bin build/bin --work-dir /tmp/t
Exit status: 0 pass, 1 a failure, 77 PyTorch is not importable.
"""
import argparse
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
import sys
import time

try:
    import numpy as np
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit(77)

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 32, 3, padding=1)
        self.c2 = nn.Conv2d(32, 32, 3, padding=1)
        self.c3 = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.c4 = nn.Conv2d(64, 64, 1)
        self.c5 = nn.Conv2d(64, 64, 3, padding=1)
        self.fc = nn.Linear(64, 10)
        # An inverted residual block: pairs that can run in bands.
        self.expand = nn.Conv2d(32, 64, 1)
        self.dw = nn.Conv2d(64, 64, 3, padding=1, groups=64)
        self.project = nn.Conv2d(64, 32, 1)

    def forward(self, x):
        x = torch.relu(self.c1(x))
        x = torch.relu(self.c2(x)) + x
        x = self.project(torch.relu(self.dw(torch.relu(self.expand(x))))) + x
        x = torch.relu(self.c3(x))
        x = torch.relu(self.c4(x))
        x = torch.relu(self.c5(x))
        # The feature map too: an output that any wrong kernel changes.
        return self.fc(x.mean(dim=(2, 3))), x


def run(cmd, **kw):
    kw.setdefault("timeout", 600)
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def show(bin_dir, db):
    r = run([os.path.join(bin_dir, "cuvil-autotune"), "show", db])
    return r.stdout if r.returncode == 0 else ""


def signatures(text):
    return sorted(re.findall(r'^  signature: "(.*)"$', text, re.M))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work-dir", required=True)
    args = ap.parse_args()
    tool = os.path.join(args.bin, "cuvil-autotune")
    export = os.path.join(args.bin, "cuvil-export")
    cuvil_run = os.path.join(args.bin, "cuvil-run")
    work = args.work_dir
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    torch.manual_seed(0)
    net = Net().eval()
    x = torch.rand(1, 3, 32, 32)
    model = os.path.join(work, "net.pt")
    torch.jit.script(net).save(model)
    np.save(os.path.join(work, "x.npy"), x.numpy())
    with torch.no_grad():
        for i, y in enumerate(net(x)):
            np.save(os.path.join(work, f"y{i}.npy"), y.numpy())
    shape = ["--input-shape", "0=1x3x32x32xf32"]
    common = [tool, "tune", "--model", model] + shape + ["--threads", "1", "--candidate-timeout", "60"]

    # Measured tuning with a report.
    db = os.path.join(work, "tuning.db")
    html = os.path.join(work, "report.html")
    r = run(common + ["--output", db, "--report", html])
    check(r.returncode == 0, f"tune exits 0 ({r.stderr.strip()[-300:]})")
    m = re.search(r"(\d+) kernel signature\(s\) of (\d+) kernel op\(s\).*?(\d+) tuned now.*?(\d+) measurement\(s\)",
                  r.stdout)
    check(m is not None and int(m.group(1)) >= 4 and int(m.group(3)) == int(m.group(1)) and int(m.group(4)) > 0,
          f"every tunable kernel tuned, with measurements: {r.stdout.strip()}")
    text = show(args.bin, db)
    records = text.count("\nrecords {")
    check(records >= 4 and text.count('method: "measured"') == records,
          f"{records} records, each measured")
    check("median_ms: -" not in text or "failure:" in text, "a candidate without a time says why")
    times = [float(v) for v in re.findall(r"^  best_ms: ([0-9.e-]+)$", text, re.M)]
    check(len(times) == records and all(t > 0 for t in times), "every record has a positive best time")
    cands = re.findall(r"^  trials: (\d+)$", text, re.M)
    check(all(int(c) >= 2 for c in cands), f"every record compares 2 or more candidates ({cands})")
    check('variant: "banded"' in text, "pairs that can run in bands are measured banded too")
    check(os.path.exists(html) and "<svg" in open(html).read(), "HTML report written with charts")

    # A complete database measures nothing.
    r = run(common + ["--output", db])
    check(r.returncode == 0 and " 0 measurement(s)" in r.stdout and " 0 tuned now" in r.stdout,
          f"second tune measures nothing: {r.stdout.strip()}")

    # Shards merged: the same keys as one run.
    shards = []
    for i in (1, 2):
        s = os.path.join(work, f"shard{i}.db")
        r = run(common + ["--shard", f"{i}/2", "--output", s])
        check(r.returncode == 0, f"shard {i}/2 tuned")
        shards.append(s)
    merged = os.path.join(work, "merged.db")
    r = run([tool, "merge"] + shards + ["--output", merged])
    check(r.returncode == 0, "merge exits 0")
    check(signatures(show(args.bin, merged)) == signatures(text) and signatures(text),
          "merged shards have the same keys as one run over the whole model")

    # The export reads the database; numerics against PyTorch.
    libs = []
    for name in ("a", "b"):
        d = os.path.join(work, name)
        os.makedirs(d)
        lib = os.path.join(d, "libinference.so")
        report = os.path.join(d, "kernels.json")
        r = run([export, "--model", model, "--target", "x86_64"] + shape +
                ["--strategy", "autotune", "--tuning-db", db, "-o", lib, "--kernel-report", report])
        check(r.returncode == 0, f"export --strategy autotune ({r.stderr.strip()[-300:]})")
        libs.append(lib)
    check(open(libs[0], "rb").read() == open(libs[1], "rb").read(), "the export is byte-identical each time")
    kernels = json.load(open(os.path.join(work, "a", "kernels.json")))["kernels"]
    tuned = [k for k in kernels if k["source"] == "tuning-db"]
    check(len(tuned) >= 4, f"{len(tuned)} of {len(kernels)} kernels configured by the database")
    r = run([cuvil_run, libs[0], "--input", os.path.join(work, "x.npy"),
             "--expected-output", os.path.join(work, "y0.npy"), "--expected-output", os.path.join(work, "y1.npy"),
             "--rtol", "1e-3", "--atol", "1e-4", "-o", work])
    check(r.returncode == 0, f"the autotuned library matches PyTorch ({r.stdout.strip()[-200:]})")

    # A runner that runs the command as given measures the same way.
    rdb = os.path.join(work, "runner.db")
    r = run(common + ["--runner", "env", "--output", rdb, "--trials", "2"])
    check(r.returncode == 0 and show(args.bin, rdb).count('method: "measured"') == records,
          f"--runner env measures every kernel ({r.stderr.strip()[-200:]})")

    # Runners that fail.
    bad = [("exits non-zero", "false", "exited with status 1"),
           ("hangs", "sh -c 'sleep 30' --", "timed out"),
           ("prints garbage", "echo", "printed no profile")]
    for what, runner, message in bad:
        out = os.path.join(work, "bad.db")
        r = run(common + ["--runner", runner, "--output", out, "--candidate-timeout", "2"], timeout=120)
        check(r.returncode == 1 and message in r.stderr and not os.path.exists(out),
              f"a runner that {what}: exit 1 naming it, no database ({r.stderr.strip()[-200:]})")

    # A runner under which every candidate library crashes: each is tried
    # kernel by kernel, every candidate recorded as crashed, the heuristics'
    # configurations kept.
    script = os.path.join(work, "crashy.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\ncase "$2" in *round0.so) ;; *) kill -SEGV $$ ;; esac\nexec "$@"\n')
    os.chmod(script, os.stat(script).st_mode | stat.S_IEXEC)
    cdb = os.path.join(work, "crashy.db")
    r = run(common + ["--runner", script, "--output", cdb])
    ctext = show(args.bin, cdb)
    kept = all(k == b for k, b in zip(re.findall(r'^  variant: "(.*)"$', ctext, re.M),
                                       re.findall(r'^  baseline_variant: "(.*)"$', ctext, re.M)))
    check(r.returncode == 0 and "crashed: signal 11" in ctext and ctext.count("\nrecords {") == records and kept,
          f"crashing candidates are recorded and skipped ({r.stdout.strip()[-200:]})")

    # A runner that changes the inputs of the candidate libraries: their
    # outputs differ from the heuristics' library's, recorded as wrong.
    script = os.path.join(work, "wrong.sh")
    with open(script, "w") as f:
        f.write('#!/bin/sh\ncase "$2" in *round0.so) exec "$@" ;; esac\n'
                'out=""; prev=""\n'
                'for a in "$@"; do [ "$prev" = --seed ] && a=2; out="$out \'$a\'"; prev=$a; done\n'
                'eval exec $out\n')
    os.chmod(script, os.stat(script).st_mode | stat.S_IEXEC)
    wdb = os.path.join(work, "wrong.db")
    r = run(common + ["--runner", script, "--output", wdb])
    wtext = show(args.bin, wdb)
    check(r.returncode == 0 and "computes wrong results" in wtext,
          f"candidates with wrong outputs are recorded and skipped ({r.stderr.strip()[-300:]})")

    # SIGTERM at moments of a tune: exit 143, no database, no work directory
    # or run left behind.
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    idb = os.path.join(work, "interrupted.db")
    for delay in (0.3, 1.0, 2.0):
        p = subprocess.Popen(common + ["--output", idb], env=dict(os.environ, TMPDIR=tmp),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)
        left = os.listdir(tmp)
        runs = subprocess.run(["pgrep", "-f", "cuvil-run " + tmp], capture_output=True, text=True).stdout.split()
        # No database, or (the signal after it was published) a complete one.
        whole = not os.path.exists(idb) or show(args.bin, idb).count("\nrecords {") == records
        check(rc in (-signal.SIGTERM, 143, 0) and not left and not runs and whole,
              f"SIGTERM after {delay} s: exit {rc}, left {left}, runs {runs}, database whole: {whole}")
        if os.path.exists(idb):
            os.remove(idb)

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP HTML report in the browser: chromium is not installed (scripts/setup.sh installs it)")
    elif os.path.exists(html):
        r = run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 # A profile of its own: two headless browsers sharing the
                 # default one (ctest -j runs both report tests) collide.
                 "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=work), "--dump-dom", "file://" + html],
                timeout=120)
        check(r.returncode == 0 and r.stdout.count("<svg") >= 1 and "Gains per layer" in r.stdout,
              "HTML report renders in chromium")

    if FAILURES:
        print(f"\n{len(FAILURES)} failure(s)")
        return 1
    print("\nall passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
