#!/usr/bin/env python3
"""The Python `bm3d` package (the authors' reference, PyPI; non-commercial
licence, so installed here only, in a virtual environment under the build
folder, never vendored) on the noisy gray photographs of the bm3d quality
test, for comparison with bm3d_gpu (doc/benchmarks.md).

    make bench-python-bm3d      (after make check-quality)
"""

import argparse
import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TESTS, "quality"))
from common import PHOTOS, python_with  # noqa: E402

VERSION = "4.0.3"

RUN = r'''
import sys, numpy as np, bm3d
sys.path.insert(0, sys.argv[1])
from testlib.images import read_pnm
work, sigma, names = sys.argv[2], float(sys.argv[3]), sys.argv[4].split(",")
values = []
for i, n in enumerate(names):
    w, h, c, clean = read_pnm("%s/clean-%s-256.pgm" % (work, n))
    _, _, _, noisy = read_pnm("%s/noisy-s%g-%d-clean-%s-256.pgm" % (work, sigma, 1000 * int(sigma) + i, n))
    cl = np.frombuffer(clean, np.uint8).reshape(h, w).astype(np.float64)
    no = np.frombuffer(noisy, np.uint8).reshape(h, w).astype(np.float64)
    out = np.clip(np.round(bm3d.bm3d(no, sigma)), 0, 255)
    values.append(10 * np.log10(255.0 ** 2 / np.mean((out - cl) ** 2)))
print("%g %.2f" % (sigma, sum(values) / len(values)))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True, help="work folder of the quality test")
    ap.add_argument("--venv", required=True)
    ap.add_argument("--sigmas", default="10,20,40")
    args = ap.parse_args()

    python, reason = python_with(args.venv, "bm3d==" + VERSION)
    if not python:
        sys.exit(reason)
    print("| sigma | Python bm3d %s, mean PSNR (dB) over %s |" % (VERSION, ", ".join(PHOTOS)))
    print("|---|---|")
    for sigma in args.sigmas.split(","):
        out = subprocess.run([python, "-c", RUN, TESTS, args.work, sigma, ",".join(PHOTOS)],
                             check=True, stdout=subprocess.PIPE).stdout.decode().split()
        print("| %s | %s |" % (out[0], out[1]))


if __name__ == "__main__":
    main()
