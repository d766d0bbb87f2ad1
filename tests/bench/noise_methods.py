#!/usr/bin/env python3
"""The two noise estimation methods the issue names, compared on the same
photographs and noise (tests/tools/noise_methods): the DCT-block method of
Ponomarenko et al. with the filters' parameters, and the PCA method of
Chen, Zhu and Heng; the whole gray scikit-image photographs, exact AWGN
(awgn, fixed seeds) at sigma 0 (clean) to 50. Prints a markdown table of
the estimates and, per method, the largest error below sigma 5 and the
largest relative error from sigma 5 on.
"""

import argparse
import os
import subprocess
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "quality"))
from common import PHOTOS, skimage_data_dir  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.tools import awgn  # noqa: E402

SIGMAS = [0, 1, 2, 3, 5, 10, 20, 30, 40, 50]
METHODS = [("dct", []), ("pca", [])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--tools", required=True, help="folder holding awgn and noise_methods")
    ap.add_argument("--work", required=True)
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg)
    data = skimage_data_dir(args.work)
    est = {}
    for i, name in enumerate(PHOTOS):
        clean = os.path.join(args.work, "methods-%s.pgm" % name)
        if not os.path.exists(clean):
            ff.run(["-i", os.path.join(data, name + ".png"), "-vf", "format=gray",
                    "-frames:v", "1", "-update", "1", "-y", clean])
        for s in SIGMAS:
            path = clean
            if s:
                path = clean.replace(".pgm", "-s%g.pgm" % s)
                awgn(args.tools, clean, path, s, 7000 + 100 * s + i)
            for m, opts in METHODS:
                out = subprocess.run([os.path.join(args.tools, "noise_methods"), m] + opts + [path],
                                     check=True, stdout=subprocess.PIPE).stdout
                est[m, name, s] = float(out)
    print("| sigma | " + " | ".join("%s %s" % (n, m) for n in PHOTOS for m, _ in METHODS) + " |")
    print("|---" * (len(PHOTOS) * len(METHODS) + 1) + "|")
    for s in SIGMAS:
        print("| %s | " % (s or "clean") + " | ".join(
            "%.2f" % est[m, n, s] for n in PHOTOS for m, _ in METHODS) + " |")
    print()
    for m, _ in METHODS:
        low = max(abs(est[m, n, s] - s) for n in PHOTOS for s in SIGMAS if 0 < s < 5)
        high = max(abs(est[m, n, s] / s - 1) for n in PHOTOS for s in SIGMAS if s >= 5)
        clean = [est[m, n, 0] for n in PHOTOS]
        print("- %s: clean %.2f to %.2f; largest error below sigma 5: %.2f; from sigma 5 on: "
              "%.1f %%" % (m, min(clean), max(clean), low, 100 * high))


if __name__ == "__main__":
    main()
