#!/usr/bin/env python3
"""cuvil-verify's HTML report in a real browser: headless Chromium loads a
passing and a failing report and must lay out every row (the page's own
script says so in #render-check), with the verdict and the manifest.

    python3 test/tools/cuvil-verify/browser.py --bin build/bin --work /tmp/cv-html
Exit status: 0 pass, 1 a failure, 77 chromium is not installed (skipped).
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def npy(path, shape, values):
    """A little-endian f32 .npy (no numpy needed)."""
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % (
        ", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIPPED: chromium is not installed (scripts/setup.sh installs it)")
        return 77
    os.makedirs(os.path.join(args.work, "data", "s0"), exist_ok=True)
    npy(os.path.join(args.work, "data", "s0", "input0.npy"), (4, 6), [((i * 37) % 11 - 5) / 4 for i in range(24)])
    failures = []
    inputs = os.path.join(HERE, "Inputs")
    for name, model, want, code in (("passing", "classifier.mlir", "<h1>Verified</h1>", 0),
                                    ("failing", "classifier-perturbed.mlir", "<h1>Not verified</h1>", 1)):
        lib = os.path.join(args.work, name + ".so")
        subprocess.run([os.path.join(args.bin, "cuvil-export"), "--model", os.path.join(inputs, model),
                        "--target", "x86_64", "-o", lib], check=True)
        html = os.path.join(args.work, name + ".html")
        r = subprocess.run([os.path.join(args.bin, "cuvil-verify"), lib, "--reference",
                            os.path.join(inputs, "classifier.mlir"), "--data", os.path.join(args.work, "data"),
                            "--manifest", "--html", html], capture_output=True, text=True)
        if r.returncode != code:
            failures.append(f"{name}: cuvil-verify exit {r.returncode}, expected {code}: {r.stderr[-500:]}")
            continue
        r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--disable-background-networking", "--disable-component-update", "--disable-sync",
                            "--user-data-dir=" + tempfile.mkdtemp(prefix="chromium-", dir=args.work),
                            "--dump-dom", "file://" + os.path.abspath(html)],
                           capture_output=True, text=True, timeout=120)
        dom = r.stdout
        ok = r.returncode == 0 and 'id="render-check">rendered ' in dom and want in dom and "Manifest" in dom
        print(("ok   " if ok else "FAIL ") + f"{name} report laid out in chromium: "
              f"{dom[dom.find('render-check'):][:40] if 'render-check' in dom else r.stderr[-300:]}")
        if not ok:
            failures.append(name)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
