#!/usr/bin/python3
"""Fault injection: every tool survives full disks, memory limits, signals,
truncated libraries and huge or deep inputs, with nothing half-written left.

Each case runs real tools (build/bin) on the bundled example model
(examples/mlp) or on squeezenet (made with torchvision when PyTorch is
importable) and asserts what RELIABILITY.md requires of every row:

  - a clear message, exit 1, 2 or 3 (or death by the signal the test sent),
    never a crash: no other signal, no "LLVM ERROR", no "terminate called",
    no stack dump;
  - the final output path holds the old file or the complete new one;
  - nothing left behind: no temporaries in the output directory or TMPDIR
    (each case runs with a TMPDIR of its own, which must end empty).

Cases that need what this machine may lack (a tmpfs mount needs root, the
memory-limit case squeezenet) are skipped visibly, with the reason.

    /usr/bin/python3 test/reliability/faults.py --bin build/bin --work /tmp/f [-k NAME]

Prints one line per case and a summary ("N cases: P passed, F failed, S
skipped"); --json FILE writes the same as JSON (the README's table is made
from it). Exit status: 0 when no case failed, 1 otherwise.
"""
import argparse
import json
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "mlp")

EXAMPLE_MODEL = os.path.join(EXAMPLE, "model.pt")
# The models' input shapes (TorchScript archives do not hold them).
SHAPES = {"model.pt": "0=2x8xf32", "squeezenet.pt": "0=1x3x224x224xf32"}

CASES = []


def export_command(e, model, output, target="x86_64"):
    return [e.tool("cuvil-export"), "--model", model, "--input-shape", SHAPES[os.path.basename(model)],
            "--target", target, "-o", output]


def case(section, name):
    def register(fn):
        CASES.append((section, name, fn))
        return fn
    return register


class Skip(Exception):
    pass


class Env:
    """Where a case runs: its own directory and TMPDIR."""

    def __init__(self, args, name):
        self.bin = args.bin
        self.dir = os.path.join(args.work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.tmp = os.path.join(self.dir, "tmp")
        os.makedirs(self.tmp)
        self.models = args.models

    def tool(self, name):
        return os.path.join(self.bin, name)

    def run(self, cmd, expect_rc=None, limit_as=None, timeout=300, stdin=None):
        env = dict(os.environ, TMPDIR=self.tmp, LC_ALL="C")
        env.pop("CUVIL_CACHE_DIR", None)
        pre = None
        if limit_as:
            def pre():
                resource.setrlimit(resource.RLIMIT_AS, (limit_as, limit_as))
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, preexec_fn=pre, stdin=stdin)
        p.out = p.stdout.decode(errors="replace")
        p.err = p.stderr.decode(errors="replace")
        check_clean_exit(p)
        if expect_rc is not None and p.returncode not in (
                expect_rc if isinstance(expect_rc, tuple) else (expect_rc,)):
            raise AssertionError("exit %d, expected %s: %s" % (p.returncode, expect_rc, p.err.strip()[-600:]))
        return p

    def export(self, *extra, model=None, output=None, target="x86_64", **kw):
        model = model or EXAMPLE_MODEL
        output = output or os.path.join(self.dir, "lib.so")
        return self.run(export_command(self, model, output, target) + list(extra), **kw)

    def no_debris(self, directory=None, allowed=()):
        """Nothing but `allowed` (and tmp/, which must be empty) in the directory."""
        directory = directory or self.dir
        left = sorted(set(os.listdir(directory)) - set(allowed) - {"tmp"})
        if left:
            raise AssertionError("left behind in %s: %s" % (directory, ", ".join(left)))
        if os.listdir(self.tmp):
            raise AssertionError("left behind in TMPDIR: %s" % ", ".join(sorted(os.listdir(self.tmp))))


CRASH_SIGNS = ("LLVM ERROR", "terminate called", "Stack dump", "Segmentation fault",
               "Aborted", "AddressSanitizer", "std::bad_alloc", "PLEASE submit a bug report")


def check_clean_exit(p):
    if p.returncode < 0:
        raise AssertionError("killed by signal %d: %s" % (-p.returncode, p.err.strip()[-600:]))
    if p.returncode not in (0, 1, 2, 3):
        raise AssertionError("exit %d (not 0-3): %s" % (p.returncode, p.err.strip()[-600:]))
    for sign in CRASH_SIGNS:
        if sign in p.err:
            raise AssertionError("crash output (%s): %s" % (sign, p.err.strip()[-600:]))


def expect_message(p, *patterns):
    for pat in patterns:
        if not re.search(pat, p.err):
            raise AssertionError("stderr lacks /%s/: %s" % (pat, p.err.strip()[-600:]))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def npy_header(shape, descr="<f4"):
    d = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        descr, "".join("%d, " % s for s in shape) if len(shape) != 1 else "%d," % shape[0])
    total = 10 + len(d) + 1
    pad = (total + 63) // 64 * 64 - total
    d = d + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d)) + d.encode()


class Tmpfs:
    """A small tmpfs mounted for the case (root only; else the case is skipped)."""

    def __init__(self, path, size):
        self.path = path
        os.makedirs(path, exist_ok=True)
        if os.geteuid() != 0:
            raise Skip("mounting a tmpfs needs root")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise Skip("cannot mount a tmpfs here: " + r.stderr.decode().strip())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.path])

    def fill(self, leave):
        """Fills the file system until `leave` bytes are free."""
        st = os.statvfs(self.path)
        free = st.f_bavail * st.f_frsize
        if free > leave:
            with open(os.path.join(self.path, "filler"), "wb") as f:
                f.write(b"\0" * (free - leave))


# --- H3: disk full ------------------------------------------------------------

@case("H3", "disk full during the export: exit 3 naming the path, the old library kept, no debris")
def disk_full_export(e):
    with Tmpfs(os.path.join(e.dir, "full"), "200k") as fs:
        out = os.path.join(fs.path, "lib.so")
        write(out, b"old library")
        p = e.export(output=out, expect_rc=3)
        expect_message(p, re.escape(out), "[Nn]o space left")
        assert read(out) == b"old library", "the old library was replaced"
        e.no_debris(fs.path, allowed=("lib.so",))


@case("H3", "disk full writing --emit-header: the old library and header kept (committed together)")
def disk_full_header(e):
    ref = os.path.join(e.dir, "ref.so")
    e.export("--emit-header", os.path.join(e.dir, "ref.h"), output=ref, expect_rc=0)
    size = os.path.getsize(ref)
    os.remove(ref)
    os.remove(os.path.join(e.dir, "ref.h"))
    with Tmpfs(os.path.join(e.dir, "full"), "%dk" % (size // 1024 + 512)) as fs:
        out, header = os.path.join(fs.path, "lib.so"), os.path.join(fs.path, "lib.h")
        write(out, b"old library")
        write(header, b"old header")
        # Room for the library (and a little), not for the header too.
        fs.fill(size + 4096 - os.path.getsize(out))
        p = e.export("--emit-header", header, output=out, expect_rc=3)
        expect_message(p, "[Nn]o space left")
        assert read(out) == b"old library", "the old library was replaced"
        assert read(header) == b"old header", "the old header was replaced"
        e.no_debris(fs.path, allowed=("lib.so", "lib.h", "filler"))


# --- H6: outputs that clash ----------------------------------------------------

@case("H6", "--emit-header, --depfile or --kernel-report equal to --output: usage error, nothing written")
def clashing_outputs(e):
    out = os.path.join(e.dir, "lib.so")
    for flag in ("--emit-header", "--depfile", "--kernel-report"):
        p = e.export(flag, out, output=out, expect_rc=2)
        expect_message(p, re.escape(flag))
        assert not os.path.exists(out), flag + " = --output left a file"
    write(out, b"old library")
    e.export("--emit-header", out, output=out, expect_rc=2)
    assert read(out) == b"old library"
    hdr = os.path.join(e.dir, "x.h")
    p = e.export("--emit-header", hdr, "--depfile", hdr, output=os.path.join(e.dir, "new.so"), expect_rc=2)
    assert not os.path.exists(hdr)
    e.no_debris(allowed=("lib.so",))


# --- H4: output paths ----------------------------------------------------------

@case("H4", "output through a symbolic link: the link's target written, the link kept; dangling into a missing directory: exit 3")
def symlink_outputs(e):
    real = os.path.join(e.dir, "real.so")
    link = os.path.join(e.dir, "link.so")
    os.symlink("real.so", link)
    e.export(output=link, expect_rc=0)
    assert os.path.islink(link), "the symbolic link was replaced by a file"
    assert os.path.getsize(real) > 0
    dangling = os.path.join(e.dir, "dangling.so")
    os.symlink("missing-dir/x.so", dangling)
    p = e.export(output=dangling, expect_rc=3)
    expect_message(p, "missing-dir")
    assert os.path.islink(dangling) and not os.path.exists(dangling)
    e.no_debris(allowed=("real.so", "link.so", "dangling.so"))


@case("H4", "output directory read-only, missing, or the output a directory: exit 3 before any work")
def unwritable_outputs(e):
    missing = os.path.join(e.dir, "no-such-dir", "lib.so")
    p = e.export(output=missing, expect_rc=3)
    expect_message(p, "no-such-dir", "does not exist", "CUVIL-E-IO")
    p = e.export(output=e.dir, expect_rc=3)
    expect_message(p, "is a directory")
    with Tmpfs(os.path.join(e.dir, "ro"), "1m") as fs:
        write(os.path.join(fs.path, "lib.so"), b"old library")
        subprocess.run(["mount", "-o", "remount,ro", fs.path], check=True)
        start = time.time()
        model = e.models.get("squeezenet") or EXAMPLE_MODEL
        p = e.export(model=model, output=os.path.join(fs.path, "lib.so"), expect_rc=3)
        expect_message(p, "not writable|[Rr]ead-only")
        # Refused before the import and compile (which take seconds here).
        assert time.time() - start < 2.0, "took %.1f s: not a pre-flight check" % (time.time() - start)
        assert read(os.path.join(fs.path, "lib.so")) == b"old library"
    e.no_debris(allowed=("ro",))


@case("H5", "the model truncated while it is read: a clean error, never SIGBUS")
def model_truncated_meanwhile(e):
    source = e.models.get("squeezenet") or EXAMPLE_MODEL
    model = os.path.join(e.dir, os.path.basename(source))
    out = os.path.join(e.dir, "lib.so")
    data = read(source)
    rng = random.Random(5)
    env = dict(os.environ, TMPDIR=e.tmp)
    for i in range(6):
        write(model, data)
        p = subprocess.Popen(export_command(e, model, out), env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.0, 0.4))
        with open(model, "r+b") as f:
            f.truncate(rng.randrange(len(data)))
        _, err = p.communicate(timeout=120)
        p.err = err.decode(errors="replace")
        check_clean_exit(p)
        if os.path.exists(out):
            os.remove(out)
    e.no_debris(allowed=(os.path.basename(model),))


@case("H6", "the output is the model, or a hard link to it: refused, the model intact")
def output_is_input(e):
    model = os.path.join(e.dir, "model.pt")
    shutil.copy(EXAMPLE_MODEL, model)
    os.link(model, os.path.join(e.dir, "link.pt"))
    before = read(model)
    for out in (model, os.path.join(e.dir, "link.pt")):
        p = e.export(model=model, output=out, expect_rc=2)
        expect_message(p, "is the input model")
    p = e.export("--emit-header", model, model=model, expect_rc=2)
    assert read(model) == before
    e.no_debris(allowed=("model.pt", "link.pt"))


@case("H7", "paths with spaces, non-UTF-8 bytes and 200-byte names: written and run")
def odd_paths(e):
    for name in (b"dir with space/lib \xc3\xbc.so", b"bytes \xff\xfe/lib.so",
                 b"long/" + b"x" * 200 + b".so"):
        out = os.path.join(os.fsencode(e.dir), name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        dep = out + b".d"
        e.export("--depfile", os.fsdecode(dep), output=os.fsdecode(out), expect_rc=0)
        p = e.run([e.tool("cuvil-run"), os.fsdecode(out), "--input", os.path.join(EXAMPLE, "input0.npy"),
                   "--expected-output", os.path.join(EXAMPLE, "expected_output0.npy"), "--atol", "1e-5",
                   "-o", os.fsdecode(os.path.dirname(out))], expect_rc=0)
        # The depfile escapes spaces for make.
        if b" " in name:
            assert b"\\ " in read(os.fsdecode(dep)), read(os.fsdecode(dep))


@case("H9", "TMPDIR missing, or on a full file system: the export still works")
def tmpdir_faults(e):
    out = os.path.join(e.dir, "lib.so")
    env = dict(os.environ, TMPDIR=os.path.join(e.dir, "no-such-tmp"))
    p = subprocess.run(export_command(e, EXAMPLE_MODEL, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.err = p.stderr.decode(errors="replace")
    check_clean_exit(p)
    assert p.returncode == 0, p.err
    os.remove(out)
    with Tmpfs(os.path.join(e.dir, "fulltmp"), "64k") as fs:
        fs.fill(0)
        env = dict(os.environ, TMPDIR=fs.path)
        p = subprocess.run(export_command(e, EXAMPLE_MODEL, out), env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        p.err = p.stderr.decode(errors="replace")
        check_clean_exit(p)
        assert p.returncode == 0, p.err
    e.no_debris(allowed=("lib.so", "fulltmp"))


@case("G6", "a compile cache on a read-only or full file system: one warning, the export succeeds")
def cache_unusable(e):
    out = os.path.join(e.dir, "lib.so")
    with Tmpfs(os.path.join(e.dir, "rocache"), "1m") as fs:
        subprocess.run(["mount", "-o", "remount,ro", fs.path], check=True)
        p = e.export("--cache-dir", os.path.join(fs.path, "cache"), output=out, expect_rc=0)
        expect_message(p, "cache")
    with Tmpfs(os.path.join(e.dir, "fullcache"), "256k") as fs:
        p = e.export("--cache-dir", os.path.join(fs.path, "cache"), output=out, expect_rc=0)
        p = e.export("--cache-dir", os.path.join(fs.path, "cache"), output=out, expect_rc=0)
    e.no_debris(allowed=("lib.so", "rocache", "fullcache"))


# --- I: libraries cuvil-run is given --------------------------------------------

def example_library(e):
    lib = os.path.join(e.dir, "lib.so")
    e.export(output=lib, expect_rc=0)
    return lib


def run_lib(e, lib, expect_rc=1):
    return e.run([e.tool("cuvil-run"), lib, "--input", os.path.join(EXAMPLE, "input0.npy"),
                  "--output-dir", e.dir], expect_rc=expect_rc)


@case("I", "a truncated library (head -c 4096): 'truncated', exit 1, never dlopen'ed")
def truncated_library(e):
    lib = example_library(e)
    data = read(lib)
    for n in (4096, 64, 20000, len(data) // 2, len(data) - 1):
        t = os.path.join(e.dir, "t.so")
        write(t, data[:n])
        p = run_lib(e, t)
        expect_message(p, "truncated", "CUVIL-E-LIB-TRUNCATED")


@case("I", "a library of garbage, a text file, an empty file: 'not an ELF shared library', exit 1")
def garbage_library(e):
    rng = random.Random(1)
    for name, data in (("garbage.so", bytes(rng.randrange(256) for _ in range(65536))),
                       ("text.so", b"hello\n" * 100), ("empty.so", b""),
                       ("header-only.so", b"\x7fELF\x02\x01\x01" + b"\0" * 57)):
        t = os.path.join(e.dir, name)
        write(t, data)
        p = run_lib(e, t)
        expect_message(p, re.escape(name), "CUVIL-E-LIB-")


@case("I", "an aarch64 library run by the x86-64 cuvil-run: names the architecture and the aarch64 cuvil-run")
def other_arch_library(e):
    lib = os.path.join(e.dir, "arm.so")
    e.export(output=lib, target="aarch64", expect_rc=0)
    p = run_lib(e, lib)
    expect_message(p, "for aarch64", "aarch64/cuvil-run", "CUVIL-E-LIB-ARCH")
    assert "No such file" not in p.err, p.err


@case("I", "a plain shared library (no Cuvil descriptor): 'not a Cuvil library', never run")
def foreign_library(e):
    libs = [l for l in ("/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libm.so.6") if os.path.exists(l)]
    if not libs:
        raise Skip("no system library to try")
    t = os.path.join(e.dir, "foreign.so")
    shutil.copy(libs[0], t)
    p = run_lib(e, t)
    expect_message(p, "not a Cuvil library", "CUVIL-E-LIB-")


# --- D: inputs cuvil-run is given ------------------------------------------------

@case("D", "--input /dev/zero: 'not a NumPy .npy file' at once")
def npy_dev_zero(e):
    lib = example_library(e)
    start = time.time()
    p = e.run([e.tool("cuvil-run"), lib, "--input", "/dev/zero", "--output-dir", e.dir],
              expect_rc=1, timeout=30)
    expect_message(p, "/dev/zero", "not a NumPy", "CUVIL-E-NPY-")
    assert time.time() - start < 10


@case("D", "a valid 2x8 header on a 5 GB sparse file: refused from its size, nothing read (ulimit -v 1 GB)")
def npy_sparse_huge(e):
    lib = example_library(e)
    t = os.path.join(e.dir, "huge.npy")
    with open(t, "wb") as f:
        f.write(npy_header((2, 8)))
        f.truncate(5 << 30)
    p = e.run([e.tool("cuvil-run"), lib, "--input", t, "--output-dir", e.dir],
              expect_rc=1, limit_as=1 << 30, timeout=60)
    expect_message(p, re.escape(t), "holds|size")
    os.remove(t)


@case("D", "an input whose header disagrees with the model: refused before its data is read")
def npy_wrong_shape(e):
    lib = example_library(e)
    t = os.path.join(e.dir, "big.npy")
    # 40 GB of declared (sparse) data: reading it would take minutes.
    with open(t, "wb") as f:
        h = npy_header((100000, 100000))
        f.write(h)
        f.truncate(len(h) + 100000 * 100000 * 4)
    start = time.time()
    p = e.run([e.tool("cuvil-run"), lib, "--input", t, "--output-dir", e.dir],
              expect_rc=1, limit_as=1 << 30, timeout=60)
    expect_message(p, "100000x100000", "CUVIL-E-")
    assert time.time() - start < 20, "took %.1f s" % (time.time() - start)
    os.remove(t)


@case("D1", "NaN and Inf weights: the model compiles, and runs as PyTorch does (NaN where PyTorch has NaN)")
def nan_weights(e):
    try:
        import numpy as np
        import torch
    except Exception:
        raise Skip("needs PyTorch")
    m = torch.jit.load(EXAMPLE_MODEL)
    params = list(m.parameters())
    with torch.no_grad():
        params[0].view(-1)[0] = float("nan")
        params[0].view(-1)[3] = float("inf")
        params[-1].view(-1)[1] = float("-inf")
    model = os.path.join(e.dir, "model.pt")
    m.save(model)
    x = torch.from_numpy(np.load(os.path.join(EXAMPLE, "input0.npy")))
    want = m(x).detach().numpy()
    np.save(os.path.join(e.dir, "want.npy"), want)
    lib = os.path.join(e.dir, "lib.so")
    e.export(model=model, output=lib, expect_rc=0)
    e.run([e.tool("cuvil-run"), lib, "--input", os.path.join(EXAMPLE, "input0.npy"), "-o", e.dir,
           "--expected-output", os.path.join(e.dir, "want.npy"), "--atol", "1e-5"], expect_rc=0)
    got = np.load(os.path.join(e.dir, "output0.npy"))
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)


@case("D2/D3", "zero-size, rank-0 and rank-17 inputs; dims of 2^31 and overflowing products: compiled, or refused by name")
def odd_shapes(e):
    out = os.path.join(e.dir, "lib.so")
    base = [e.tool("cuvil-export"), "--model", EXAMPLE_MODEL, "--target", "x86_64", "-o", out]
    e.run(base + ["--input-shape", "0=0x8xf32"], expect_rc=0)
    p = e.run([e.tool("cuvil-run"), out, "--input", "0=0x8xf32:random", "-o", e.dir], expect_rc=0)
    assert "0x4xf32" in p.out, p.out
    os.remove(out)
    p = e.run(base + ["--input-shape", "0=f32"], expect_rc=1) # rank 0 where a matrix is needed
    expect_message(p, "CUVIL-E-")
    p = e.run(base + ["--input-shape", "0=" + "1x" * 17 + "f32"], expect_rc=2)
    expect_message(p, "rank above 16")
    p = e.run(base + ["--input-shape", "0=1099511627775x1099511627775xf32"], expect_rc=2)
    expect_message(p, "overflows")
    e.run(base + ["--input-shape", "0=2147483647x8xf32"], expect_rc=(0, 1))
    if os.path.exists(out):
        os.remove(out)
    e.no_debris(allowed=("output0.npy",))


# --- H8: memory limits ----------------------------------------------------------

@case("H8", "ulimit -v 200000 on a squeezenet export: 'out of memory', exit 1 or 3, no debris")
def memory_limit_export(e):
    model = e.models.get("squeezenet")
    if not model:
        raise Skip("squeezenet needs PyTorch and torchvision")
    out = os.path.join(e.dir, "lib.so")
    # From just above what the executable maps (below it, the kernel kills
    # it before it runs): out of memory in the passes, in code generation,
    # in the link. bin/cuvil-export is a small launcher: the compiler it
    # runs is the size that counts.
    size = os.path.getsize(os.path.join(os.path.dirname(os.path.abspath(e.bin)), "libexec", "cuvil-export-compiler"))
    failed = 0
    for limit in [200000 * 1024] + [size + (mb << 20) for mb in (4, 8, 16, 24, 40, 80)]:
        p = e.run(export_command(e, model, out), expect_rc=(0, 1, 3), limit_as=limit)
        failed += p.returncode != 0
        if p.returncode:
            expect_message(p, "out of memory|cannot allocate|memory")
            assert not os.path.exists(out)
        else:
            os.remove(out)
        e.no_debris()
    assert failed, "no limit made the export run out of memory"


def mapped_size(exe):
    """The bytes of `exe` and of the shared libraries the loader maps for it."""
    size = os.path.getsize(exe)
    ldd = subprocess.run(["ldd", exe], capture_output=True, text=True)
    for line in ldd.stdout.splitlines():
        m = re.search(r"=> (/\S+)", line)
        if m and os.path.exists(m.group(1)):
            size += os.path.getsize(m.group(1))
    return size


@case("H8", "ulimit -v on cuvil-import, cuvil-opt and cuvil-run: a message, never an abort")
def memory_limit_tools(e):
    model = e.models.get("squeezenet") or EXAMPLE_MODEL
    shape = SHAPES[os.path.basename(model)]
    mlir = os.path.join(e.dir, "m.mlir")
    e.run([e.tool("cuvil-import"), model, "--input-shape", shape, "-o", mlir], expect_rc=0)
    lib = os.path.join(e.dir, "lib.so")
    e.export(model=model, output=lib, expect_rc=0)
    inp = "0=%s:random" % shape.split("=")[1]
    # A limit below what the executable maps kills it before it runs (the
    # kernel's or the loader's doing): limits from its size, and its shared
    # libraries' (cuvil-opt maps Z3's 23 MB for --cuvil-validate-rewrites), up.
    for tool, cmd in (("cuvil-import", [model, "--input-shape", shape, "-o", os.path.join(e.dir, "x.mlir")]),
                      ("cuvil-opt", [mlir, "--cuvil-graph-optimize", "-o", os.path.join(e.dir, "y.mlir")]),
                      ("cuvil-run", [mlir, "--input", inp, "--output-dir", os.path.join(e.dir, "out")]),
                      ("cuvil-run", [lib, "--input", inp, "--output-dir", os.path.join(e.dir, "out")])):
        size = mapped_size(e.tool(tool))
        for extra in (20 << 20, 60 << 20, 150 << 20):
            p = e.run([e.tool(tool)] + cmd, expect_rc=(0, 1, 3), limit_as=size + extra)
            if p.returncode:
                expect_message(p, "memory")
    for f in ("x.mlir", "y.mlir", "out"):
        path = os.path.join(e.dir, f)
        if os.path.isdir(path):
            shutil.rmtree(path)
        elif os.path.exists(path):
            os.remove(path)
    e.no_debris(allowed=("m.mlir", "lib.so"))


# --- deep nesting of MLIR input ---------------------------------------------------

def deep_inputs(e):
    modules = os.path.join(e.dir, "deep-modules.mlir")
    write(modules, b"module {\n" * 5000 + b"}\n" * 5000)
    regions = os.path.join(e.dir, "deep-regions.mlir")
    body = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
    body += "scf.execute_region {\n" * 5000 + "scf.yield\n}\n" * 5000
    body += "return %a : tensor<2xf32>\n}\n"
    write(regions, body.encode())
    tuple_type = os.path.join(e.dir, "deep-type.mlir")
    t = "tuple<" * 100000 + "f32" + ">" * 100000
    write(tuple_type, ("func.func private @f(%s)\n" % t).encode())
    return modules, regions, tuple_type


@case("B5", "5,000 nested modules or regions, a 100,000-deep tuple type: a nesting error from cuvil-opt, cuvil-run and cuvil-export; a 20,000-deep type in bytecode: no crash")
def deep_nesting(e):
    for f in deep_inputs(e):
        for cmd in ([e.tool("cuvil-opt"), f, "-o", os.path.join(e.dir, "out.mlir")],
                    [e.tool("cuvil-run"), f, "--output-dir", e.dir],
                    [e.tool("cuvil-export"), "--model", f, "--target", "x86_64", "-o", os.path.join(e.dir, "lib.so")]):
            p = e.run(cmd, expect_rc=1)
            expect_message(p, "nest", "CUVIL-E-")
    # Bytecode is not scanned: a 20,000-deep type in it (written by
    # mlir-opt-19 with an unlimited stack) parses on the tools' large stack.
    mlir_opt = shutil.which("mlir-opt-19")
    allowed = ["deep-modules.mlir", "deep-regions.mlir", "deep-type.mlir"]
    if mlir_opt:
        text = os.path.join(e.dir, "deep20k.mlir")
        d = 20000
        write(text, ("func.func private @f(%s)\n" % ("tuple<" * d + "f32" + ">" * d)).encode())
        bc = os.path.join(e.dir, "deep20k.mlirbc")
        unlimited = lambda: resource.setrlimit(resource.RLIMIT_STACK, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        subprocess.run([mlir_opt, text, "--emit-bytecode", "-o", bc], preexec_fn=unlimited, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for cmd in ([e.tool("cuvil-opt"), bc, "-o", os.path.join(e.dir, "out.mlir")],
                    [e.tool("cuvil-run"), bc, "--output-dir", e.dir],
                    [e.tool("cuvil-export"), "--model", bc, "--target", "x86_64", "-o", os.path.join(e.dir, "lib.so")]):
            e.run(cmd, expect_rc=(0, 1, 2))
        for f in ("out.mlir", "lib.so"):
            if os.path.exists(os.path.join(e.dir, f)):
                os.remove(os.path.join(e.dir, f))
        allowed += ["deep20k.mlir", "deep20k.mlirbc"]
    e.no_debris(allowed=tuple(allowed))


@case("J1", "a 20,000-op graph and one of 1,000 inputs: compiled and run, memory in proportion")
def large_graphs(e):
    chain = os.path.join(e.dir, "chain.mlir")
    lines = ["func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {"]
    prev = "%x"
    for i in range(20000):
        lines.append("  %%v%d = %s %s : tensor<2x8xf32>" % (i, "cuvil.act.relu" if i % 2 == 0 else "cuvil.math.neg", prev))
        prev = "%%v%d" % i
    lines.append("  return %s : tensor<2x8xf32>\n}" % prev)
    write(chain, "\n".join(lines).encode())
    wide = os.path.join(e.dir, "wide.mlir")
    n = 1000
    args = ", ".join("%%a%d: tensor<4xf32>" % i for i in range(n))
    lines = ["func.func @forward(%s) -> tensor<4xf32> {" % args]
    prev = "%a0"
    for i in range(1, n):
        lines.append("  %%s%d = cuvil.math.add %s, %%a%d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>" % (i, prev, i))
        prev = "%%s%d" % i
    lines.append("  return %s : tensor<4xf32>\n}" % prev)
    write(wide, "\n".join(lines).encode())
    for model, inputs in ((chain, ["0=2x8xf32:random"]), (wide, ["%d=4xf32:random" % i for i in range(n)])):
        lib = model[:-5] + ".so"
        e.run([e.tool("cuvil-export"), "--model", model, "--target", "x86_64", "-o", lib], expect_rc=0,
              limit_as=4 << 30)
        ref = os.path.join(e.dir, "ref")
        got = os.path.join(e.dir, "got")
        cmd_in = []
        for i in inputs:
            cmd_in += ["--input", i]
        e.run([e.tool("cuvil-run"), model, "-o", ref, "-q"] + cmd_in, expect_rc=0)
        e.run([e.tool("cuvil-run"), lib, "-o", got, "-q", "--expected-output", os.path.join(ref, "output0.npy"),
               "--atol", "1e-5"] + cmd_in, expect_rc=0)


@case("J2", "a 128 MB constant (a 4096x8192 linear layer): compiled in memory in proportion (under 8x), and right")
def huge_constant(e):
    try:
        import numpy as np
        import torch
    except Exception:
        raise Skip("needs PyTorch")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(4096, 8192), torch.nn.ReLU()).eval()
    model = os.path.join(e.dir, "huge.pt")
    torch.jit.script(m).save(model)
    x = torch.rand(1, 4096)
    np.save(os.path.join(e.dir, "x.npy"), x.numpy())
    np.save(os.path.join(e.dir, "want.npy"), m(x).detach().numpy())
    lib = os.path.join(e.dir, "huge.so")
    # The export's own peak memory, measured in a child of its own.
    probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    p = e.run([sys.executable, "-c", probe, e.tool("cuvil-export"), "--model", model, "--input-shape",
               "0=1x4096xf32", "--target", "x86_64", "-o", lib], expect_rc=0)
    peak_kb = int(p.out.split()[-1])
    weights_kb = os.path.getsize(model) // 1024
    assert peak_kb < 8 * weights_kb, "peak %d MB for %d MB of weights" % (peak_kb >> 10, weights_kb >> 10)
    e.run([e.tool("cuvil-run"), lib, "--input", os.path.join(e.dir, "x.npy"), "-o", e.dir, "-q",
           "--expected-output", os.path.join(e.dir, "want.npy"), "--rtol", "1e-4", "--atol", "1e-4"], expect_rc=0)
    for f in ("huge.pt", "huge.so"):
        os.remove(os.path.join(e.dir, f))


# --- H1, H2: signals -------------------------------------------------------------

def signal_export(e, sig, rounds, model):
    out = os.path.join(e.dir, "lib.so")
    # What a complete output is: the same export, uninterrupted (the
    # library names itself by its file name, hence the same one).
    e.run(export_command(e, model, out), expect_rc=0)
    complete = read(out)
    os.remove(out)
    rng = random.Random(sig)
    env = dict(os.environ, TMPDIR=e.tmp)
    outcomes = []
    for i in range(rounds):
        p = subprocess.Popen(export_command(e, model, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        delay = rng.uniform(0.02, 1.2)
        time.sleep(delay)
        p.send_signal(sig)
        out_text, err = p.communicate(timeout=120)
        err = err.decode(errors="replace")
        rc = p.returncode
        outcomes.append(rc)
        if rc not in (0, -sig, 128 + sig):
            raise AssertionError("round %d: exit %d after signal %d sent at %.3f s; stderr: %r; stdout: %r" %
                                 (i, rc, sig, delay, err[-400:], out_text.decode(errors="replace")[-400:]))
        if rc == 0 and not os.path.exists(out):
            raise AssertionError("round %d: exit 0 without the output" % i)
        # Killed before the outputs were published: none; after: the
        # complete one. Never a part of it.
        if os.path.exists(out):
            if read(out) != complete:
                raise AssertionError("round %d: a partial or different output after signal %d" % (i, sig))
            os.remove(out)
        if sig != signal.SIGKILL:
            e.no_debris()
    return outcomes


@case("H2", "SIGTERM and SIGINT at random moments of an export: exit 143/130, no output or the complete one, nothing left")
def sigterm_sigint(e):
    model = e.models.get("squeezenet") or EXAMPLE_MODEL
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal_export(e, sig, 6, model)


@case("H1", "SIGKILL at random moments of an export: never a partial library; the next export cleans what was left")
def sigkill_then_clean(e):
    model = e.models.get("squeezenet") or EXAMPLE_MODEL
    signal_export(e, signal.SIGKILL, 8, model)
    e.export(model=model, expect_rc=0)
    e.no_debris(allowed=("lib.so",))


# --- messages -----------------------------------------------------------------------

@case("L", "cuvil-export's command-line mistakes: precise usage errors (exit 2), nothing written")
def export_messages(e):
    out = os.path.join(e.dir, "lib.so")
    p = e.run([e.tool("cuvil-export"), "--model", EXAMPLE_MODEL, "--input-shape", "0=1x1099511627776xf32",
               "--target", "x86_64", "-o", out], expect_rc=2)
    expect_message(p, "1099511627776", "too large")
    p = e.export("--strategy", "bogus", expect_rc=2)
    expect_message(p, "unknown strategy 'bogus'", "graph_fusion", "autotune", "hybrid")
    p = e.export("--cpu", "notacpu", expect_rc=2)
    expect_message(p, "notacpu")
    assert "ignoring processor" not in p.err, p.err
    p = e.export("--input-shape", "0=2x8xf32", expect_rc=2)
    expect_message(p, "twice|more than once")
    assert not os.path.exists(out)
    e.no_debris()


@case("L", "cuvil-run's limits and errors: --threads over the library's 1024 refused at once; stable error codes")
def run_messages(e):
    lib = example_library(e)
    inp = os.path.join(EXAMPLE, "input0.npy")
    p = e.run([e.tool("cuvil-run"), lib, "--input", inp, "--threads", "2000"], expect_rc=2)
    expect_message(p, "1024")
    p = e.run([e.tool("cuvil-run"), os.path.join(e.dir, "missing.so"), "--input", inp], expect_rc=3)
    expect_message(p, "CUVIL-E-IO", "missing.so")
    p = e.run([e.tool("cuvil-run"), lib, "--input", os.path.join(e.dir, "nope.npy")], expect_rc=3)
    expect_message(p, "CUVIL-E-IO", "nope.npy")


def make_models(work):
    """squeezenet1_0 scripted, when PyTorch and torchvision are importable."""
    models = {}
    path = os.path.join(work, "squeezenet.pt")
    if os.path.exists(path):
        models["squeezenet"] = path
        return models
    try:
        import torch
        import torchvision
    except Exception:
        return models
    torch.manual_seed(0)
    m = torchvision.models.squeezenet1_0().eval()
    torch.jit.trace(m, torch.randn(1, 3, 224, 224)).save(path)
    models["squeezenet"] = path
    return models


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("-k", help="run only the cases whose function name contains this")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)
    args.models = make_models(args.work)
    results = []
    for section, title, fn in CASES:
        if args.k and args.k not in fn.__name__:
            continue
        start = time.time()
        try:
            fn(Env(args, fn.__name__))
            status, why = "pass", ""
        except Skip as s:
            status, why = "skip", str(s)
        except (AssertionError, subprocess.TimeoutExpired) as x:
            status, why = "FAIL", str(x) or repr(x)
        dt = time.time() - start
        results.append({"section": section, "case": fn.__name__, "title": title, "status": status,
                        "detail": why, "seconds": round(dt, 1)})
        print("%-4s %-4s %-22s %5.1fs  %s%s" % (status, section, fn.__name__, dt, title,
                                              ("\n       " + why) if why else ""), flush=True)
    counts = {s: sum(r["status"] == s for r in results) for s in ("pass", "FAIL", "skip")}
    print("%d cases: %d passed, %d failed, %d skipped" % (len(results), counts["pass"], counts["FAIL"], counts["skip"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if counts["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
