#!/usr/bin/env python3
"""Quality test of nlmeans_gpu on natural photographs with exact AWGN.

For sigma = 10, 20 and 40 (fixed seeds), the mean PSNR over gray centre
crops of the scikit-image photographs of:
  - nlmeans_gpu with 5x5 patches and step 1 (the paper's "P5,S1"),
  - nlmeans_gpu at its defaults (8x8 patches, step 4),
  - FFmpeg's nlmeans and nlmeans_opencl, each at the strength s that gives
    its best mean PSNR for that sigma (searched on a grid, then refined).
The test fails unless P5,S1 beats both FFmpeg filters at every sigma.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import (PHOTOS, add_options, crops, noisy_crops, search_parameter,  # noqa: E402
                    skimage_data_dir)
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import mean_psnr  # noqa: E402
from testlib.report import finish, log  # noqa: E402


# grid of FFmpeg's strength s, in units of sigma (s is limited to 1..30)
STRENGTH_FACTORS = (0.4, 0.55, 0.7, 0.85, 1.0, 1.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_options(ap)
    ap.add_argument("--size", type=int, default=256, help="crop size")
    ap.add_argument("--sigmas", default="10,20,40")
    ap.add_argument("--photos", default=",".join(PHOTOS))
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg, args.device)
    names = args.photos.split(",")
    size = args.size
    fsize = size * size
    data = skimage_data_dir(args.work)
    clean_paths, clean = crops(ff, data, args.work, names, size)
    sigmas = [float(s) for s in args.sigmas.split(",")]

    rows = []
    failures = []
    t_start = time.time()
    for sigma in sigmas:
        noisy = noisy_crops(args.tools, clean_paths, sigma, 1000 * int(sigma), args.work)
        # nlmeans_opencl takes no gray: Y = the gray frame, neutral chroma
        chroma = bytes([128]) * (fsize // 2)
        noisy420 = b"".join(noisy[i * fsize:(i + 1) * fsize] + chroma for i in range(len(names)))

        def ours(opts):
            out = ff.filter_raw(noisy, "gray", size, size,
                                "hwupload,nlmeans_gpu=sigma=%g%s,hwdownload,format=gray" % (sigma, opts),
                                opencl=True)
            return mean_psnr(out, clean, fsize)[0]

        def cpu(s):
            out = ff.filter_raw(noisy, "gray", size, size, "nlmeans=s=%g" % s)
            return mean_psnr(out, clean, fsize)[0]

        def ocl(s):
            out = ff.filter_raw(noisy420, "yuv420p", size, size,
                                "hwupload,nlmeans_opencl=s=%g,hwdownload,format=yuv420p" % s,
                                opencl=True)
            luma = b"".join(out[i * fsize * 3 // 2:i * fsize * 3 // 2 + fsize] for i in range(len(names)))
            return mean_psnr(luma, clean, fsize)[0]

        noisy_psnr = mean_psnr(noisy, clean, fsize)[0]
        p5s1 = ours(":p=5:step=1")
        default = ours("")
        cpu_s, cpu_psnr, _ = search_parameter(cpu, STRENGTH_FACTORS, sigma, 1.0, 30.0)
        ocl_s, ocl_psnr, _ = search_parameter(ocl, STRENGTH_FACTORS, sigma, 1.0, 30.0)
        rows.append((sigma, noisy_psnr, p5s1, default, cpu_s, cpu_psnr, ocl_s, ocl_psnr))
        log("sigma %g: noisy %.2f, nlmeans_gpu P5,S1 %.2f, defaults %.2f, nlmeans %.2f (s=%g), "
            "nlmeans_opencl %.2f (s=%g)" % (sigma, noisy_psnr, p5s1, default, cpu_psnr, cpu_s,
                                            ocl_psnr, ocl_s))
        for name, value in (("nlmeans", cpu_psnr), ("nlmeans_opencl", ocl_psnr)):
            if not p5s1 > value:
                failures.append("sigma %g: nlmeans_gpu P5,S1 %.2f dB does not beat %s %.2f dB"
                                % (sigma, p5s1, name, value))

    lines = [
        "Mean PSNR (dB) over %d gray %dx%d centre crops of scikit-image photographs (%s), "
        "exact AWGN clipped to 8 bits, seeds 1000*sigma+i. FFmpeg's filters at their best "
        "strength s for each sigma (searched), with their default p=7, r=15." % (
            len(names), size, size, ", ".join(names)),
        "",
        "| sigma | noisy | nlmeans_gpu P5,S1 | nlmeans_gpu defaults | nlmeans (best s) | nlmeans_opencl (best s) | P5,S1 margin |",
        "|---|---|---|---|---|---|---|",
    ]
    for sigma, npsnr, p5, de, cs, cp, os_, op in rows:
        lines.append("| %g | %.2f | **%.2f** | %.2f | %.2f (s=%g) | %.2f (s=%g) | %+.2f |" % (
            sigma, npsnr, p5, de, cp, cs, op, os_, p5 - max(cp, op)))
    finish("nlmeans quality", lines, args.report, failures, t_start)


if __name__ == "__main__":
    main()
