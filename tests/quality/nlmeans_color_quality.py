#!/usr/bin/env python3
"""Colour quality test of nlmeans_gpu on natural photographs with exact AWGN.

For sigma = 10, 20 and 40 (fixed seeds), the mean PSNR over centre crops
of the colour scikit-image photographs of:
  - RGB (gbrp) frames with noise in R, G and B: each plane on its own
    (color=planes), one distance summed over the three channels
    (color=joint, Goossens et al.), opponent colours each filtered on its
    own (color=opponent); each with the exponential and the bisquare
    weighting kernel;
  - gray crops of all the photographs: the exponential and the bisquare
    kernel;
  - YUV 4:4:4 frames with independent noise in Y, U and V, joint and per
    plane, luma and chroma apart;
  - YUV 4:2:0 frames, whose chroma planes are filtered on their own.
The test fails unless, at every sigma, joint beats per-plane filtering and
opponent colours beat joint on the RGB frames (default kernel).
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import (COLOUR_PHOTOS, PHOTOS, add_options, crops, noisy_crops, noisy_yuv_crop,  # noqa: E402
                    skimage_data_dir)
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import luma_chroma_psnr, mean_psnr  # noqa: E402
from testlib.report import finish, log  # noqa: E402

MODES = ("planes", "joint", "opponent")
KERNELS = ("exp", "bisquare")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_options(ap, report="write the tables here (markdown)")
    ap.add_argument("--size", type=int, default=128, help="crop size (even)")
    ap.add_argument("--sigmas", default="10,20,40")
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg, args.device)
    size = args.size
    n = size * size
    data = skimage_data_dir(args.work)
    sigmas = [float(s) for s in args.sigmas.split(",")]
    rgb_paths, rgb_clean = crops(ff, data, args.work, COLOUR_PHOTOS, size, "rgb24")
    gray_paths, gray_clean = crops(ff, data, args.work, PHOTOS, size)
    failures = []
    rgb_rows, gray_rows, yuv444_rows, yuv420_rows = [], [], [], []
    t_start = time.time()

    for sigma in sigmas:
        # RGB: noise in R, G and B
        noisy = noisy_crops(args.tools, rgb_paths, sigma, 2000 * int(sigma), args.work)
        res = {}
        for mode in MODES:
            for kernel in KERNELS:
                out = ff.filter_raw(noisy, "rgb24", size, size,
                                    "format=gbrp,hwupload,nlmeans_gpu=sigma=%g:color=%s:kernel=%s,"
                                    "hwdownload,format=gbrp,format=rgb24" % (sigma, mode, kernel),
                                    opencl=True)
                res[mode, kernel] = mean_psnr(out, rgb_clean, 3 * n)[0]
        rgb_rows.append((sigma, mean_psnr(noisy, rgb_clean, 3 * n)[0], res))
        log("RGB sigma %g: " % sigma + ", ".join("%s %s %.2f" % (m, k, res[m, k])
                                                 for m in MODES for k in KERNELS))
        if not res["joint", "exp"] > res["planes", "exp"]:
            failures.append("sigma %g: joint %.2f dB does not beat per-plane filtering %.2f dB"
                            % (sigma, res["joint", "exp"], res["planes", "exp"]))
        if not res["opponent", "exp"] > res["joint", "exp"]:
            failures.append("sigma %g: opponent colours %.2f dB do not beat joint %.2f dB"
                            % (sigma, res["opponent", "exp"], res["joint", "exp"]))

        # gray: the two weighting kernels
        noisy = noisy_crops(args.tools, gray_paths, sigma, 1000 * int(sigma), args.work)
        gres = {}
        for kernel in KERNELS:
            out = ff.filter_raw(noisy, "gray", size, size,
                                "hwupload,nlmeans_gpu=sigma=%g:kernel=%s,hwdownload,format=gray"
                                % (sigma, kernel), opencl=True)
            gres[kernel] = mean_psnr(out, gray_clean, n)[0]
        gray_rows.append((sigma, mean_psnr(noisy, gray_clean, n)[0], gres))
        log("gray sigma %g: exp %.2f, bisquare %.2f" % (sigma, gres["exp"], gres["bisquare"]))

        # YUV 4:4:4 with independent noise in each plane
        pairs = [noisy_yuv_crop(ff, args.tools, os.path.join(data, name + ".png"), size, sigma,
                                4000 * int(sigma) + 3 * i, args.work, "yuv444p")
                 for i, name in enumerate(COLOUR_PHOTOS)]
        clean = b"".join(c for c, _ in pairs)
        noisy = b"".join(x for _, x in pairs)
        yres = {}
        for mode in ("planes", "joint"):
            out = ff.filter_raw(noisy, "yuv444p", size, size,
                                "hwupload,nlmeans_gpu=sigma=%g:color=%s,hwdownload,format=yuv444p"
                                % (sigma, mode), opencl=True)
            yres[mode] = luma_chroma_psnr(out, clean, len(pairs), n, 3 * n)
        yuv444_rows.append((sigma, luma_chroma_psnr(noisy, clean, len(pairs), n, 3 * n), yres))
        log("4:4:4 sigma %g: planes %.2f / %.2f, joint %.2f / %.2f" % (
            sigma, yres["planes"][0], yres["planes"][1], yres["joint"][0], yres["joint"][1]))

        # YUV 4:2:0: chroma planes filtered on their own
        pairs = [noisy_yuv_crop(ff, args.tools, os.path.join(data, name + ".png"), size, sigma,
                                3000 * int(sigma) + 3 * i, args.work)
                 for i, name in enumerate(COLOUR_PHOTOS)]
        clean = b"".join(c for c, _ in pairs)
        noisy = b"".join(x for _, x in pairs)
        out = ff.filter_raw(noisy, "yuv420p", size, size,
                            "hwupload,nlmeans_gpu=sigma=%g,hwdownload,format=yuv420p" % sigma,
                            opencl=True)
        yuv420_rows.append((sigma, luma_chroma_psnr(noisy, clean, len(pairs), n, n * 3 // 2),
                            luma_chroma_psnr(out, clean, len(pairs), n, n * 3 // 2)))

    lines = [
        "RGB: mean PSNR (dB) over the RGB samples of %d %dx%d centre crops of scikit-image "
        "photographs (%s) as gbrp frames, exact AWGN in R, G and B clipped to 8 bits, seeds "
        "2000*sigma+i; nlmeans_gpu defaults otherwise (exp kernel unless said)." % (
            len(COLOUR_PHOTOS), size, size, ", ".join(COLOUR_PHOTOS)),
        "",
        "| sigma | noisy | planes | joint (default) | opponent | joint - planes | opponent - joint "
        "| planes, bisquare | joint, bisquare | opponent, bisquare |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for sigma, npsnr, r in rgb_rows:
        lines.append("| %g | %.2f | %.2f | %.2f | **%.2f** | %+.2f | %+.2f | %.2f | %.2f | %.2f |" % (
            sigma, npsnr, r["planes", "exp"], r["joint", "exp"], r["opponent", "exp"],
            r["joint", "exp"] - r["planes", "exp"], r["opponent", "exp"] - r["joint", "exp"],
            r["planes", "bisquare"], r["joint", "bisquare"], r["opponent", "bisquare"]))
    lines += [
        "",
        "Weighting kernels: mean PSNR (dB) over %d gray %dx%d centre crops (%s), seeds "
        "1000*sigma+i." % (len(PHOTOS), size, size, ", ".join(PHOTOS)),
        "",
        "| sigma | noisy | exp (default) | bisquare | bisquare - exp |",
        "|---|---|---|---|---|",
    ]
    for sigma, npsnr, g in gray_rows:
        lines.append("| %g | %.2f | %.2f | %.2f | %+.2f |" % (
            sigma, npsnr, g["exp"], g["bisquare"], g["bisquare"] - g["exp"]))
    lines += [
        "",
        "YUV 4:4:4: mean PSNR (dB) of luma / chroma over the same %d crops as yuv444p, exact "
        "AWGN of the same sigma added to each plane (seeds 4000*sigma+3i+plane)." % len(COLOUR_PHOTOS),
        "",
        "| sigma | noisy | planes | joint (default) |",
        "|---|---|---|---|",
    ]
    for sigma, npsnr, y in yuv444_rows:
        lines.append("| %g | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |" % (
            sigma, npsnr[0], npsnr[1], y["planes"][0], y["planes"][1], y["joint"][0], y["joint"][1]))
    lines += [
        "",
        "YUV 4:2:0: mean PSNR (dB) of luma / chroma over the same crops as yuv420p, exact AWGN "
        "added to each plane (seeds 3000*sigma+3i+plane); each plane filtered on its own.",
        "",
        "| sigma | noisy | nlmeans_gpu |",
        "|---|---|---|",
    ]
    for sigma, npsnr, o in yuv420_rows:
        lines.append("| %g | %.2f / %.2f | %.2f / %.2f |" % (sigma, npsnr[0], npsnr[1], o[0], o[1]))
    finish("nlmeans colour quality", lines, args.report, failures, t_start)


if __name__ == "__main__":
    main()
