#!/usr/bin/env python3
"""The main job: denoise a noisy natural photograph with nlmeans_gpu on the
OpenCL device P.D, or else on the filter's own device (the first GPU, else
the first device), and print the PSNR before and after.

    make demo [OPENCL_DEVICE=P.D] [SIGMA=20]

With --readme FILE (make check-doc), it also fails unless the two PSNR
figures FILE quotes for the demo are those printed, where the filter ran on
PoCL, as the figures FILE quotes did (elsewhere it says why it does not
compare).
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "quality"))
from common import add_noise, prepare_clean, skimage_data_dir  # noqa: E402
from testlib import ffmpeg  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402


def psnr_of(ff, path, clean):
    p = subprocess.run([ff.binary, "-nostdin", "-hide_banner", "-i", path, "-i", clean,
                        "-lavfi", "[0:v]format=gbrp[a];[1:v]format=gbrp[b];[a][b]psnr",
                        "-f", "null", "-"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    m = re.search(r"PSNR .* average:([0-9.inf]+)", p.stderr.decode())
    if p.returncode != 0 or not m:
        sys.exit("psnr failed: " + p.stderr.decode()[-500:])
    return float(m.group(1))


def filter_platform(log):
    """The OpenCL platform the filter says it ran on, from ffmpeg's verbose
    log: the device the filter names ("Software frames on ..., NAME (TYPE)."),
    then hwcontext_opencl's line "P.D: PLATFORM / NAME"."""
    m = re.search(r"Software frames on [^\n]*?, (.+) \((?:CPU|GPU|neither GPU nor CPU)\)", log)
    if not m:
        return "an OpenCL device the log does not name"
    m = re.search(r"\] \d+\.\d+: (.+?) / %s$" % re.escape(m.group(1)), log, re.M)
    return m.group(1) if m else "an OpenCL platform the log does not name"


def check_readme(path, before, after, platform):
    """Fail unless the README's quoted demo figures are these (on PoCL)."""
    with open(path) as f:
        text = f.read()
    m = re.search(r"PSNR noisy: +([0-9.]+) dB\nPSNR denoised: +([0-9.]+) dB", text)
    if not m:
        sys.exit("%s quotes no demo figures (PSNR noisy / PSNR denoised)" % path)
    printed = ("%.2f" % before, "%.2f" % after)
    if platform != "Portable Computing Language":
        print("skip %s's figures: they are PoCL's, the filter ran on %s" % (path, platform))
    elif m.groups() != printed:
        sys.exit("%s quotes PSNR %s -> %s dB, the demo printed %s -> %s dB" %
                 ((path,) + m.groups() + printed))
    else:
        print("ok   %s quotes these figures" % path)


def main():
    ap = argparse.ArgumentParser()
    ffmpeg.add_options(ap)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--sigma", type=float, default=20)
    ap.add_argument("--photo", default="astronaut")
    ap.add_argument("--readme", metavar="FILE",
                    help="fail unless FILE quotes the PSNR figures printed (on PoCL)")
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg, args.device)
    data = skimage_data_dir(args.work)
    clean = prepare_clean(ff, data, args.work, [args.photo], 512, "rgb24")[0]
    noisy = add_noise(args.tools, clean, args.sigma, 1, args.work)
    out = os.path.join(args.work, "denoised.png")
    cmd = (ff.hw_args() if args.device else []) + ["-i", noisy, "-vf",
                          "format=gbrp,nlmeans_gpu=sigma=%g" % args.sigma,
                          "-update", "1", "-y", out]
    print("ffmpeg " + " ".join(cmd))
    # the verbose log names the device the filter ran on (filter_platform)
    r = ffmpeg.run([ff.binary, "-nostdin", "-hide_banner", "-v", "verbose"] + cmd,
                   stdout=False)
    if r.rc != 0:
        sys.exit("ffmpeg failed (%d): %s" % (r.rc, r.err[-2000:]))
    before = psnr_of(ff, noisy, clean)
    after = psnr_of(ff, out, clean)
    print("photograph: %s (512x512 RGB), additive white Gaussian noise sigma=%g" % (args.photo, args.sigma))
    print("PSNR noisy:    %.2f dB  (%s)" % (before, noisy))
    print("PSNR denoised: %.2f dB  (%s)" % (after, out))
    print("gain: %+.2f dB, whole command %.1f s" % (after - before, r.time))
    if not after > before + 3:
        sys.exit("denoising gained less than 3 dB")
    if args.readme:
        check_readme(args.readme, before, after, filter_platform(r.err))


if __name__ == "__main__":
    main()
