#!/usr/bin/env python3
"""Two build directories sharing a Redis compile cache.

"Two build directories sharing a Redis cache: the second build of the same
models compiles nothing." A redis-server of our own is started on a free
loopback port (no persistence, its own directory, stopped at the end), and:

  * build directory A exports 4 model variants (the mlp, the mlp with other
    weights, the mlp with another input shape, a scripted nn.Sequential)
    with --cache-dir A/cache --remote-cache redis://127.0.0.1:PORT; the
    server then holds one lib entry per variant and one code entry per
    distinct code (the two mlps differing only in weights share one);
  * build directory B, with its own empty --cache-dir, exports the same:
    every export is a whole-output hit from the remote (-v says "from the
    compile cache", --cache-stats' remote column is 1/...), nothing is
    compiled, and every library is byte-identical to A's;
  * (a) an unreachable remote (a closed port): the export succeeds,
    compiled locally, byte-identical, with exactly one warning, about the
    remote cache;
  * (b) a "server" that accepts connections and never answers: the export
    succeeds, byte-identical, within 30 s, with exactly one warning, about
    the remote cache;
  * (c) forged values in Redis under the keys exports ask for (found with
    SCAN: cuvil-cache:2:lib:<hex>): garbage, a real entry with one payload
    byte flipped, and another variant's real entry. Each export from an
    empty local cache succeeds with the byte-identical library, warns about
    the corrupt (or mismatched) entry, counts it in --cache-stats, takes
    the code from the remote (nothing compiled), and puts the right entry
    back on the server.

    /usr/bin/python3 test/cache/remote_cache.py --bin build/bin --work /tmp/x

Exit status: 0 pass, 1 a failure, 77 PyTorch or redis-server is missing.
"""
import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time

try:
    import torch
    import torch.nn as nn
except ImportError:
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "..", "..", "examples", "mlp", "model.pt")
REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"

FAILURES = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILURES.append(what)
        if detail:
            print("     " + detail.rstrip().replace("\n", "\n     "), flush=True)
    return cond


# ----------------------------------------------------------------- models


def make_models(work):
    """[(name, model path, input shape)], the files models/NAME/FAMILY.pt:
    the model's name (the file's stem) is part of its code."""
    models = []

    def save(name, family, module, shape):
        path = os.path.join(work, "models", name, family + ".pt")
        os.makedirs(os.path.dirname(path))
        module.save(path)
        models.append((name, path, shape))

    def mlp(factor):
        m = torch.jit.load(MLP)
        with torch.no_grad():
            for p in m.parameters():
                p.mul_(factor)
        return m

    save("mlp", "mlp", mlp(1.0), "0=2x8xf32")
    save("mlp_x2", "mlp", mlp(2.0), "0=2x8xf32")    # the same code, other weights
    save("mlp_4x8", "mlp", mlp(1.0), "0=4x8xf32")   # other code
    torch.manual_seed(3)
    seq = nn.Sequential(nn.Linear(8, 24), nn.ReLU(), nn.Linear(24, 24), nn.Tanh(),
                        nn.Linear(24, 4)).eval()
    save("seq", "seq", torch.jit.script(seq), "0=2x8xf32")
    return models


WEIGHTS_TWIN = "mlp_x2"  # differs from "mlp" only in its weights: all its code is mlp's


# ------------------------------------------------------------------ redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Redis:
    """Just enough of the Redis protocol (RESP) for this test."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def close(self):
        self.sock.close()

    def _line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(max(65536, n))
            if not chunk:
                raise ConnectionError("redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def _reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise RuntimeError("redis: " + rest.decode())
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if kind == b"*":
            return [self._reply() for _ in range(int(rest))]
        raise RuntimeError("redis: unexpected reply %r" % line)

    def call(self, *args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)
        return self._reply()

    def keys(self, pattern):
        """SCAN, as redis-cli --scan does."""
        cursor, found = b"0", []
        while True:
            cursor, batch = self.call("SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
            found += [k.decode() for k in batch]
            if cursor == b"0":
                return sorted(set(found))


def start_redis(work):
    d = os.path.join(work, "redis")
    os.makedirs(d)
    port = free_port()
    log = open(os.path.join(d, "redis.log"), "wb")
    proc = subprocess.Popen([REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", d],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 15
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("redis-server exited with %d (see %s)" % (proc.returncode, log.name))
        try:
            r = Redis(port)
            if r.call("PING") == b"PONG":
                return proc, port, r
            r.close()
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not answer on port %d" % port)


class SilentServer(threading.Thread):
    """Accepts connections, reads what comes, and never answers."""

    def __init__(self):
        super().__init__(daemon=True)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.accepted, self.conns = 0, []

    def run(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)

    def close(self):
        try:
            self.listener.shutdown(socket.SHUT_RDWR)  # wakes accept()
        except OSError:
            pass
        self.listener.close()
        for c in self.conns:
            c.close()


# ---------------------------------------------------------------- exports


STATS_ROW = re.compile(r"^\s*(lib|code|plan)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s+(\d+)/(\d+)\s+"
                       r"(\d+)/(\d+)\s+(\d+)/(\d+)\s", re.M)


def parse_stats(stderr):
    """{level: {column: (this export, all exports)}} from --cache-stats."""
    cols = ("hits", "remote", "misses", "corrupt", "refused")
    stats = {}
    for m in STATS_ROW.finditer(stderr):
        n = [int(x) for x in m.groups()[1:]]
        stats[m.group(1)] = {c: (n[2 * i], n[2 * i + 1]) for i, c in enumerate(cols)}
    return stats


def warnings(stderr):
    return [l for l in stderr.splitlines() if ": warning:" in l]


class Export:
    def __init__(self, exe, model, out, cache_dir, remote, timeout=120):
        name, path, shape = model
        cmd = [exe, "--model", path, "--input-shape", shape, "--target", "x86_64",
               "-o", out, "--soname", "lib%s.so" % name, "--cache-dir", cache_dir,
               "--remote-cache", remote, "--cache-stats", "-v"]
        os.makedirs(os.path.dirname(out), exist_ok=True)
        t = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            self.rc, self.stderr = p.returncode, p.stderr
        except subprocess.TimeoutExpired as e:
            self.rc, self.stderr = None, (e.stderr or b"").decode(errors="replace")
        self.seconds = time.time() - t
        self.out = out
        self.stats = parse_stats(self.stderr)
        self.warnings = warnings(self.stderr)
        self.cmd = " ".join(cmd)

    def ok(self):
        return self.rc == 0 and os.path.exists(self.out)

    def stat(self, level, col):
        return self.stats.get(level, {}).get(col, (-1, -1))

    def lib_key(self):
        m = re.search(r"from the compile cache \(entry ([0-9a-f]+)\)", self.stderr)
        return m.group(1) if m else None

    def compiled(self):
        return "compile cache: code compiled" in self.stderr

    def describe(self):
        return "$ %s\nexit %s after %.1f s\n%s" % (self.cmd, self.rc, self.seconds,
                                                 self.stderr[-3000:])


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory of cuvil-export")
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    args = ap.parse_args()
    if not os.access(REDIS_SERVER, os.X_OK):
        print("redis-server is not installed: skipped")
        return 77
    exe = os.path.abspath(os.path.join(args.bin, "cuvil-export"))
    if not os.access(exe, os.X_OK):
        print("FAIL no executable %s" % exe)
        return 1
    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.time()
    models = make_models(work)

    redis_proc, port, r = start_redis(work)
    try:
        run_checks(exe, work, models, port, r)
    finally:
        r.close()
        redis_proc.kill()
        redis_proc.wait()

    print("\n%.1f s in all" % (time.time() - t0))
    if FAILURES:
        print("%d failure(s):" % len(FAILURES))
        for f in FAILURES:
            print("  " + f)
        return 1
    print("PASS")
    return 0


def run_checks(exe, work, models, port, r):
    remote = "redis://127.0.0.1:%d" % port
    print("redis-server on port %d" % port, flush=True)

    # Build directory A fills the server.
    a_libs = {}
    code_misses = 0
    for m in models:
        name = m[0]
        e = Export(exe, m, os.path.join(work, "A", "lib", name + ".so"),
                   os.path.join(work, "A", "cache"), remote)
        if not check(e.ok() and e.stat("lib", "misses")[0] == 1 and not e.warnings,
                     "A: %s compiled (a lib miss, no warning)" % name, e.describe()):
            return
        a_libs[name] = read(e.out)
        code_misses += e.stat("code", "misses")[0]
        if name == WEIGHTS_TWIN:
            check(e.stat("code", "misses")[0] == 0 and e.stat("code", "hits")[0] > 0,
                  "A: %s, new weights only, takes all its code from the cache" % name, e.describe())
    lib_keys = r.keys("cuvil-cache:2:lib:*")
    code_keys = r.keys("cuvil-cache:2:code:*")
    check(len(lib_keys) == len(models) and len(code_keys) == code_misses,
          "the server holds %d lib and %d code entries (want %d and %d: one per whole output, "
          "one per code unit compiled)" % (len(lib_keys), len(code_keys), len(models), code_misses))

    # Build directory B, its own empty cache: compiles nothing.
    key_of = {}
    for m in models:
        name = m[0]
        e = Export(exe, m, os.path.join(work, "B", "lib", name + ".so"),
                   os.path.join(work, "B", "cache"), remote)
        good = (e.ok() and "from the compile cache" in e.stderr and not e.compiled()
                and e.stat("lib", "remote")[0] == 1 and e.stat("lib", "misses")[0] == 0
                and e.stat("code", "misses")[0] == 0 and not e.warnings)
        check(good, "B: %s is a whole-output hit from the remote (remote %d/%d), nothing "
              "compiled, no warning" % ((name,) + e.stat("lib", "remote")), e.describe())
        if e.ok():
            check(read(e.out) == a_libs[name], "B: %s is byte-identical to A's" % name)
        key_of[name] = e.lib_key()
        if key_of[name]:
            check("cuvil-cache:2:lib:" + key_of[name] in lib_keys,
                  "B: %s's entry %s... is one of the server's keys" % (name, key_of[name][:16]))
    b_entries = [f for _, _, files in os.walk(os.path.join(work, "B", "cache", "v2", "lib"))
                 for f in files if not f.startswith(".")]
    check(len(b_entries) == len(models),
          "B: the remote hits were stored in B's own cache directory too (%d lib entries)"
          % len(b_entries))

    # (a) An unreachable remote: compiled locally, one warning.
    closed = free_port()
    m = models[0]
    e = Export(exe, m, os.path.join(work, "unreachable", "mlp.so"),
               os.path.join(work, "unreachable", "cache"), "redis://127.0.0.1:%d" % closed)
    good = (e.ok() and e.compiled() and len(e.warnings) == 1
            and "remote cache" in e.warnings[0])
    check(good, "(a) unreachable remote (port %d closed): exported, compiled locally, exactly "
          "one warning about the remote cache (%d warnings)" % (closed, len(e.warnings)),
          e.describe())
    if e.ok():
        check(read(e.out) == a_libs[m[0]], "(a) the library is byte-identical to A's")

    # (b) A server that never answers: bounded, one warning.
    silent = SilentServer()
    silent.start()
    try:
        e = Export(exe, m, os.path.join(work, "silent", "mlp.so"),
                   os.path.join(work, "silent", "cache"), "redis://127.0.0.1:%d" % silent.port,
                   timeout=60)
    finally:
        silent.close()
    good = (e.ok() and e.seconds < 30 and e.compiled() and len(e.warnings) == 1
            and "remote cache" in e.warnings[0])
    check(good, "(b) a server that never answers (%d connection(s) accepted): exported in "
          "%.1f s (< 30), compiled locally, exactly one warning about the remote cache"
          % (silent.accepted, e.seconds), e.describe())
    if e.ok():
        check(read(e.out) == a_libs[m[0]], "(b) the library is byte-identical to A's")

    # (c) Forged values under the keys exports ask for.
    if not all(key_of.get(n) for n, _, _ in models):
        check(False, "(c) skipped: B's exports did not name their lib entries")
        return
    redis_key = {n: "cuvil-cache:2:lib:" + key_of[n] for n, _, _ in models}
    real = {n: r.call("GET", redis_key[n]) for n, _, _ in models}
    flipped = bytearray(real["mlp_x2"])
    flipped[-100] ^= 0x01  # a byte of the payload (the library)
    forgeries = [
        ("mlp", b"garbage, not a cache entry\n" * 10, "corrupt"),
        ("mlp_x2", bytes(flipped), "corrupt"),
        ("seq", real["mlp_4x8"], "mismatched"),  # another variant's entry
    ]
    for name, value, problem in forgeries:
        r.call("SET", redis_key[name], value)
        model = next(mm for mm in models if mm[0] == name)
        e = Export(exe, model, os.path.join(work, "forged", name, name + ".so"),
                   os.path.join(work, "forged", name, "cache"), remote)
        column = "corrupt" if problem == "corrupt" else "refused"
        warned = [w for w in e.warnings if problem in w and key_of[name] in w]
        good = (e.ok() and warned and e.stat("lib", column)[0] == 1
                and e.stat("lib", "remote")[0] == 0 and not e.compiled()
                and (e.stat("code", "remote")[0] >= 1 or e.stat("plan", "remote")[0] >= 1))
        what = "garbage" if name == "mlp" else "a " + problem
        check(good, "(c) forged %s entry for %s (%s...): exported with the code (or the "
              "weights plan) from the remote, warned about the %s entry, counted (%s %d/%d)"
              % ((what, name, key_of[name][:16], problem, column) + e.stat("lib", column)),
              e.describe())
        if e.ok():
            check(read(e.out) == a_libs[name], "(c) %s: the library is byte-identical to A's"
                  % name)
        check(r.call("GET", redis_key[name]) == real[name],
              "(c) %s: the server holds the right entry again" % name)


if __name__ == "__main__":
    sys.exit(main())
