#!/usr/bin/python3
"""Seed corpus for the inputs fuzz target (FuzzInputs.cpp): .npy files of
every dtype and header version, Fortran order, a pipe-like stream; shared
libraries (a Cuvil library when one is given, the system's libz) whole and
truncated; MLIR text of the tests. Each seed starts with the byte that
selects the reader.

    /usr/bin/python3 make_input_corpus.py OUT_DIR [A_CUVIL_LIBRARY.so]
"""
import glob
import io
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def npy(array, version=None):
    buf = io.BytesIO()
    if version:
        np.lib.format.write_array(buf, array, version=version)
    else:
        np.save(buf, array)
    return buf.getvalue()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = []
    arrays = [np.zeros((2, 8), np.float32), np.arange(6, dtype=np.int64).reshape(2, 3),
              np.array([True, False]), np.ones((1, 3, 4, 4), np.float16), np.array(3.0),
              np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4)), np.zeros((0, 5), np.uint8)]
    for a in arrays:
        seeds.append(b"\0" + npy(a))
        seeds.append(b"\1\x80\x02" + npy(a))
        seeds.append(b"\1\x00\x00" + npy(a, version=(2, 0)))
    libs = [l for l in sys.argv[2:] + ["/lib/x86_64-linux-gnu/libz.so.1"] if os.path.exists(l)]
    for lib in libs:
        data = open(lib, "rb").read()
        for n in (len(data), len(data) // 2, 4096, 64):
            seeds.append(b"\2" + data[:n])
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "Transforms", "*.mlir")))[:20]:
        seeds.append(b"\3" + open(path, "rb").read())
    for i, s in enumerate(seeds):
        with open(os.path.join(out, "seed-%03d" % i), "wb") as f:
            f.write(s)
    print("%d seeds in %s" % (len(seeds), out))


if __name__ == "__main__":
    main()
