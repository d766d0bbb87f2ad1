#!/usr/bin/env python3
"""nlmeans_gpu, bm3d_gpu and vbm3d_gpu on the OpenCL device against the plain
C golden models (tests/model/), on noisy crops of a natural photograph of
several sizes, odd and tiny ones included, 8 and 16 bits, gray, RGB and YUV
4:4:4, RGB with 10 and 12 bits in the high bits of 16 (FFmpeg's MSB
formats; the models write their output with the low bits 0, option -shift),
and several option sets; 4:2:0 and 4:2:2 frames plane by plane (the
chroma options csigma, pc and rc on U and V, planes left out unchanged);
vbm3d_gpu on short sequences of a moving crop, of 1 frame, of fewer frames
than the window and of more. With --random N, also N random cases of
bm3d_gpu (images) and vbm3d_gpu (sequences) in turn, seeded (--seed):
size, format (8 and 16 bits, RGB) and every option of both steps, so that
combinations no fixed case has are compared too (a wrong picture of
vbm3d_gpu with groups of 32 on 8-bit frames went unseen until 2026-11-26).

Tolerance, and why:
  - bm3d_gpu and vbm3d_gpu: none. Their models follow
    doc/bm3d_gpu-algorithm.md, which fixes every rounding (fixed-point
    aggregation, distances summed in one order), so every sample must be
    equal.
  - nlmeans_gpu (doc/nlmeans_gpu-algorithm.md, "What is exact and what
    is not"): the model computes the patch distances, the neighbour
    ranking and the weights in float exactly as the kernel does (same
    order of operations, no contraction), then estimates and aggregates in
    double, where the kernel sums in float in another order. The two
    results differ by a few float roundings (relative 1e-6), so after
    quantisation a sample differs only when its value lies within that
    distance of a rounding boundary: 8 bits (gray, RGB or YUV) and 10 or
    12 bits (MSB formats), at most 1 step of the format on at most 0.5 % of
    the samples; 16 bits, at most 2 steps (2/65535
    of the range, 0.008 on the 8-bit scale). A different neighbour set,
    weight or aggregation rule moves samples by many steps and fails.
Every case starts without the outputs of an earlier run.
"""

import argparse
import os
import random
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "quality"))
from common import skimage_data_dir  # noqa: E402
from testlib import ffmpeg  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import read_pnm, read_pnm16, write_pgm, write_pnm16, write_ppm  # noqa: E402
from testlib.report import Tally  # noqa: E402
from testlib.tmp import fresh_dir  # noqa: E402
from testlib.tools import awgn, cmpimg  # noqa: E402

BM3D_CASES = [
    # planes smaller than a block, filtered padded to 8x8
    (1, 1, 8, "sigma=20"),
    (5, 3, 8, "sigma=20"),
    (3, 7, 8, "sigma=20:preset=ref"),
    (6, 5, 16, "sigma=20"),
    (4, 4, "rgb8", "sigma=20"),
    (7, 2, "rgb8", "sigma=20:color=planes"),
    (8, 8, 8, "sigma=20"),
    (17, 9, 8, "sigma=20"),
    (33, 65, 8, "sigma=20"),
    (97, 61, 8, "sigma=20"),
    (97, 61, 8, "sigma=20:preset=ref"),
    (64, 48, 8, "sigma=10:estim=basic"),
    (64, 48, 8, "sigma=40"),
    (64, 48, 8, "sigma=20:group=1:group2=1"),
    (64, 48, 8, "sigma=20:group=32:group2=32:range=11:range2=11"),
    (64, 48, 8, "sigma=20:bstep=1:bstep2=2"),
    (64, 48, 8, "sigma=20:thmse=100:thmse2=50"),
    (64, 48, 8, "sigma=20:hdthr=1.5:kaiser=4"),
    (64, 48, 8, "sigma=20:mu2=0.5"),
    (97, 61, 8, "sigma=20:preset=ref:mu2=1"),
    (64, 48, 8, "sigma=0"),
    (64, 48, 8, "sigma=20:transform=bior"),
    (97, 61, 8, "sigma=20:preset=ref:transform=bior"),
    (33, 65, 16, "sigma=40:transform=bior"),
    (64, 48, 8, "sigma=20:transform1d=haar"),
    (97, 61, 8, "sigma=20:preset=ref:transform1d=haar"),
    (33, 65, 16, "sigma=20"),
    (97, 61, 16, "sigma=20:preset=ref"),
    # RGB: joint grouping on opponent colours, and per plane
    (64, 48, "rgb8", "sigma=20"),
    (33, 65, "rgb8", "sigma=20:preset=ref"),
    (64, 48, "rgb8", "sigma=20:color=planes"),
    (33, 65, "rgb16", "sigma=20"),
    (64, 48, "rgb8", "sigma=20:transform=bior"),
    # 10 and 12 bits in the high bits of 16
    (33, 65, "rgb10msb", "sigma=20"),
    (40, 24, "rgb12msb", "sigma=20:preset=ref:color=planes"),
]

# filter option -> bm3d_ref option
BM3D_OPTIONS = {"sigma": "-sigma", "preset": "-profile", "estim": "-estim",
                "bstep": "-step1", "group": "-group1", "range": "-window1", "thmse": "-tau1",
                "bstep2": "-step2", "group2": "-group2", "range2": "-window2", "thmse2": "-tau2",
                "hdthr": "-lambda", "mu2": "-mu2", "kaiser": "-beta", "color": "-color",
                "transform": "-transform", "transform1d": "-transform1d"}

# bits -> (format of the crop, format through the filter, file extension);
# "yuv8": the three channels of a PPM go through the filter as the Y, U and
# V planes of a yuv444p frame, unconverted
FORMATS = {8: ("gray", "gray", "pgm"), 16: ("gray16be", "gray16le", "pgm"),
           "rgb8": ("rgb24", "gbrp", "ppm"), "rgb16": ("rgb48be", "gbrp16le", "ppm"),
           "yuv8": ("rgb24", "yuv444p", "ppm"),
           "rgb10msb": ("rgb48be", "gbrp10msble", "ppm"),
           "rgb12msb": ("rgb48be", "gbrp12msble", "ppm")}
# the unused low bits of the MSB formats
MSB_SHIFT = {"rgb10msb": 6, "rgb12msb": 4}

VBM3D_CASES = [
    # (width, height, frames, bits, filter options)
    (61, 45, 7, 8, "sigma=20"),
    (64, 48, 1, 8, "sigma=20"),
    (33, 17, 3, 8, "sigma=20"),
    (8, 8, 4, 8, "sigma=20"),
    (1, 1, 3, 8, "sigma=20"),
    (5, 7, 4, 8, "sigma=20"),
    (6, 3, 4, "rgb8", "sigma=20"),
    (64, 48, 9, 8, "sigma=20:causal=1"),
    (64, 48, 9, 8, "sigma=40:past=2:future=3:perframe=3:group=16:group2=16"),
    (64, 48, 6, 8, "sigma=10:estim=basic:past=1:future=2"),
    (64, 48, 6, 8, "sigma=20:bstep=3:bstep2=5:range=9:prange=3:range2=5:prange2=7"),
    (64, 48, 6, 8, "sigma=20:transform=bior:transform1d=haar"),
    (64, 48, 6, 8, "sigma=20:thmse=100:thmse2=50:hdthr=2:kaiser=4:perframe=1"),
    (64, 48, 6, 8, "sigma=20:mu2=0.6"),
    # groups of 32 in both steps (two stacks of 32 patches do not fit: the
    # Wiener step loads its basic stack apart)
    (64, 48, 9, 8, "sigma=20:perframe=4:group=32:group2=32"),
    (64, 48, 5, 8, "sigma=0"),
    (40, 32, 6, 16, "sigma=20"),
    (48, 40, 6, "rgb8", "sigma=20"),
    (48, 40, 6, "rgb8", "sigma=20:color=planes:past=1:future=1"),
    # RGB's basic estimates as opponent bytes, read apart by the Wiener
    # step of groups of 32
    (48, 40, 6, "rgb8", "sigma=20:group2=32"),
]

# nlmeans_gpu with a temporal window: (width, height, frames, bits, options)
NLMEANS_VIDEO_CASES = [
    (61, 45, 7, 8, "sigma=20:past=2:future=2"),
    (64, 48, 1, 8, "sigma=20:past=4:future=4"),
    (33, 17, 3, 8, "sigma=20:past=4:future=4:p=5:step=1"),
    (64, 48, 6, 8, "sigma=20:past=3:causal=1"),
    (64, 48, 6, 8, "sigma=40:past=1:future=3:n=32:r=11"),
    (40, 32, 5, 16, "sigma=20:past=1:future=1"),
    (48, 40, 5, "rgb8", "sigma=20:past=1:future=2"),
    (48, 40, 5, "rgb8", "sigma=20:past=2:future=1:color=joint"),
]

CASES = [
    # (width, height, bits, filter options)
    (1, 1, 8, "sigma=20"),
    (7, 5, 8, "sigma=20"),
    (17, 9, 8, "sigma=20"),
    (33, 65, 8, "sigma=20"),
    (97, 61, 8, "sigma=20"),
    (160, 120, 8, "sigma=20"),
    (97, 61, 8, "sigma=20:p=5:step=1"),
    (64, 48, 8, "sigma=10:p=5:step=1:r=11"),
    (64, 48, 8, "sigma=40:p=8:step=2"),
    (33, 65, 8, "sigma=20:p=1:step=1"),
    (64, 48, 8, "sigma=20:n=1"),
    (64, 48, 8, "sigma=20:n=32"),
    (64, 48, 8, "sigma=20:flat=0"),
    (64, 48, 8, "sigma=20:flat=3"),
    (64, 48, 8, "sigma=20:h=35"),
    (64, 48, 8, "sigma=0"),
    (64, 48, 8, "sigma=20:r=1"),
    (64, 48, 8, "sigma=20:p=32:step=32"),
    (33, 65, 16, "sigma=20"),
    (97, 61, 16, "sigma=20:p=5:step=1"),
    (64, 48, 16, "sigma=20:p=1:step=1"),
    (64, 48, 16, "sigma=20:n=32:flat=0"),
    # bisquare weighting kernel
    (64, 48, 8, "sigma=20:kernel=bisquare"),
    (97, 61, 8, "sigma=40:p=5:step=1:kernel=bisquare"),
    (64, 48, 8, "sigma=10:h=25:kernel=bisquare"),
    (33, 65, 16, "sigma=20:kernel=bisquare"),
    # colour: one distance summed over the three channels (joint), each
    # channel on its own (planes), RGB as opponent channels each on its own
    # (opponent); the default, auto, is opponent for RGB, planes for YUV
    (7, 5, "rgb8", "sigma=20:color=joint"),
    (64, 48, "rgb8", "sigma=20"),
    (64, 48, "rgb8", "sigma=20:color=joint"),
    (97, 61, "rgb8", "sigma=20:p=5:step=1:color=joint"),
    (64, 48, "rgb8", "sigma=40:flat=3:color=joint"),
    (64, 48, "rgb8", "sigma=20:color=planes"),
    (64, 48, "rgb8", "sigma=20:color=opponent"),
    (97, 61, "rgb8", "sigma=40:p=5:step=1:color=opponent"),
    (33, 65, "rgb16", "sigma=20:color=opponent"),
    (64, 48, "yuv8", "sigma=20:csigma=8:color=opponent"),
    (64, 48, "rgb8", "sigma=20:kernel=bisquare:color=joint"),
    (33, 65, "rgb16", "sigma=20"),
    (64, 48, "yuv8", "sigma=20"),
    (64, 48, "yuv8", "sigma=20:csigma=8:color=joint"),
    (64, 48, "yuv8", "sigma=10:csigma=0:color=joint"),
    (64, 48, "yuv8", "sigma=20:csigma=8:color=planes"),
    (33, 65, "yuv8", "sigma=20:csigma=30:p=5:step=1:kernel=bisquare:color=joint"),
    (33, 65, "rgb10msb", "sigma=20"),
    (40, 24, "rgb12msb", "sigma=20:color=planes"),
]


def model_args(filt, opts, bits):
    args = ["-yuv"] if bits == "yuv8" else []
    if bits in MSB_SHIFT:
        args += ["-shift", str(MSB_SHIFT[bits])]
    for kv in opts.split(":"):
        k, v = kv.split("=")
        if filt == "vbm3d_gpu" and k == "causal":
            k, v = "future", "0"
        args += [BM3D_OPTIONS[k] if filt == "bm3d_gpu" else "-" + k, v]
    return args


def compare(tools, gpu, ref, bits, filt):
    """cmpimg's report line, and whether it is within the tolerance of the
    filter (none for bm3d_gpu and vbm3d_gpu)."""
    line, fields = cmpimg(tools, gpu, ref)
    maxdiff = int(fields["maxdiff"])
    ndiff, total = (int(x) for x in fields["differing"].split("/"))
    if filt in ("bm3d_gpu", "vbm3d_gpu"):
        return line, maxdiff == 0
    if bits in (8, "rgb8", "yuv8"):
        return line, maxdiff <= 1 and ndiff <= 0.005 * total + 0.5
    if bits in MSB_SHIFT:
        return line, maxdiff <= 1 << MSB_SHIFT[bits] and ndiff <= 0.005 * total + 0.5
    return line, maxdiff <= 2


def nlmeans_window_args(opts):
    """nlmeans_ref's options without the window's, and (past, future)."""
    kept, past, future, causal = [], 0, 0, False
    for kv in opts.split(":"):
        k, v = kv.split("=")
        if k == "past":
            past = int(v)
        elif k == "future":
            future = int(v)
        elif k == "causal":
            causal = v == "1"
        else:
            kept.append(kv)
    return ":".join(kept), past, 0 if causal else future


def run_nlmeans_model(args, opts, bits, noisy, out_pattern):
    """nlmeans_ref on every frame with the frames of its window."""
    opts, past, future = nlmeans_window_args(opts)
    n = len(noisy)
    for t in range(n):
        lo, hi = max(0, t - past), min(n - 1, t + future)
        subprocess.run([os.path.join(args.tools, "nlmeans_ref")] +
                       model_args("nlmeans_gpu", opts, bits) +
                       ["-frames", ",".join(noisy[lo:hi + 1]), "-ref", str(t - lo),
                        out_pattern % t], check=True)


def run_vbm3d_model(args, opts, bits, noisy, out_pattern):
    subprocess.run([os.path.join(args.tools, "vbm3d_ref")] + model_args("vbm3d_gpu", opts, bits) +
                   noisy + ["-o", out_pattern], check=True)


def sequence_case(ff, args, tally, photo, filt, i, case):
    """One sequence: a crop moving by (1, 1/2) sample per frame, noisy with
    a seed per frame, through the filter and its model; every output frame
    compared, a run each."""
    w, h, n, bits, opts = case
    crop_fmt, fmt, ext = FORMATS[bits]
    work = fresh_dir(os.path.join(args.work, "%s-%d" % (filt, i)))
    ff.run(["-loop", "1", "-i", photo, "-vf",
            "crop=%d:%d:'200+n':'100+n/2',format=%s" % (w, h, crop_fmt),
            "-frames:v", str(n), "-start_number", "0", "-y",
            os.path.join(work, "clean-%02d." + ext)])
    noisy = []
    for t in range(n):
        noisy.append(os.path.join(work, "noisy-%02d.%s" % (t, ext)))
        awgn(args.tools, os.path.join(work, "clean-%02d.%s" % (t, ext)), noisy[-1], 20,
             1000 * i + t + 1)
    model = run_vbm3d_model if filt == "vbm3d_gpu" else run_nlmeans_model
    model(args, opts, bits, noisy, os.path.join(work, "model-%02d." + ext))
    ff.run(ff.hw_args() + ["-start_number", "0", "-i", os.path.join(work, "noisy-%02d." + ext),
                           "-vf", "format=%s,hwupload,%s=%s,hwdownload,format=%s"
                           % (fmt, filt, opts, fmt), "-start_number", "0", "-y",
                           os.path.join(work, "gpu-%02d." + ext)])
    tally.cases += n
    for t in range(n):
        gpu = os.path.join(work, "gpu-%02d.%s" % (t, ext))
        if not os.path.exists(gpu):
            tally.fail("%-11s %3dx%-3d %-5s %-44s frame %d missing" % (filt, w, h, bits, opts, t))
            continue
        line, ok = compare(args.tools, gpu, os.path.join(work, "model-%02d.%s" % (t, ext)),
                           bits, filt)
        tally.result(ok, "%-11s %3dx%-3d %-5s %-44s frame %d/%d %s" % (
            filt, w, h, bits, opts, t, n, line))
    if os.path.exists(os.path.join(work, "gpu-%02d.%s" % (n, ext))):
        tally.fail("%s: more output frames than input frames" % filt)


# Subsampled YUV, plane by plane: (width, height, format, filter options).
# Each plane of a noisy frame is compared with the model run on that plane
# alone, with the chroma options (csigma, pc, rc) for U and V; planes the
# planes option leaves out must equal the input.
SUBSAMPLED_CASES = [
    ("nlmeans_gpu", 64, 48, "yuv420p", "sigma=20"),
    ("nlmeans_gpu", 66, 50, "yuv420p", "sigma=20:csigma=8:pc=4:rc=9"),
    ("nlmeans_gpu", 64, 48, "yuv422p", "sigma=20:pc=2:step=2:rc=5"),
    ("nlmeans_gpu", 64, 48, "yuv420p", "sigma=20:planes=1"),
    ("nlmeans_gpu", 64, 48, "yuv420p", "sigma=20:planes=6:csigma=12"),
    ("bm3d_gpu", 64, 48, "yuv420p", "sigma=20"),
    ("bm3d_gpu", 66, 30, "yuv420p", "sigma=20:csigma=6"),
    ("bm3d_gpu", 64, 48, "yuv422p", "sigma=20:preset=ref"),
    ("bm3d_gpu", 40, 24, "yuv420p", "sigma=20:planes=1"),
    ("bm3d_gpu", 14, 10, "yuv420p", "sigma=20"),
]

# chroma shifts (log2) of the subsampled formats
SUBSAMPLING = {"yuv420p": (1, 1), "yuv422p": (1, 0)}


def plane_options(filt, opts, plane):
    """The filter options as they apply to one plane (0: Y, 1, 2: U, V), and
    whether the plane is filtered at all."""
    kv = dict(o.split("=", 1) for o in opts.split(":"))
    planes = int(kv.pop("planes", "15"))
    csigma, pc, rc = kv.pop("csigma", None), kv.pop("pc", None), kv.pop("rc", None)
    if plane:
        if csigma is not None and float(csigma) >= 0:
            kv["sigma"] = csigma
        if pc and int(pc):
            kv["p"] = pc
        if rc and int(rc):
            kv["r"] = rc
    return ":".join("%s=%s" % i for i in kv.items()), bool(planes & (1 << plane))


def subsampled_case(ff, args, tally, photo, i, case):
    """One 4:2:0 or 4:2:2 case: each plane against its model, a run each."""
    filt, w, h, fmt, opts = case
    model = "nlmeans_ref" if filt == "nlmeans_gpu" else "bm3d_ref"
    work = fresh_dir(os.path.join(args.work, "subsampled-%d" % i))
    sx, sy = SUBSAMPLING[fmt]
    sizes = [(w, h)] + [(-(-w >> sx), -(-h >> sy))] * 2
    clean = ff.run(["-i", photo, "-vf", "crop=%d:%d:200:100,format=%s" % (w, h, fmt),
                    "-frames:v", "1", "-f", "rawvideo", "-"])
    noisy, pos = [], 0
    for c, (pw, ph) in enumerate(sizes):
        src = os.path.join(work, "clean-%d.pgm" % c)
        write_pgm(src, pw, ph, clean[pos:pos + pw * ph])
        pos += pw * ph
        noisy.append(os.path.join(work, "noisy-%d.pgm" % c))
        awgn(args.tools, src, noisy[-1], 20, 5000 + 10 * i + c)
    frame = b"".join(read_pnm(n)[3] for n in noisy)
    out = ff.filter_raw(frame, fmt, w, h, "hwupload,%s=%s,hwdownload,format=%s"
                        % (filt, opts, fmt), opencl=True)
    pos = 0
    for c, (pw, ph) in enumerate(sizes):
        gpu = os.path.join(work, "gpu-%d.pgm" % c)
        write_pgm(gpu, pw, ph, out[pos:pos + pw * ph])
        pos += pw * ph
        popts, filtered = plane_options(filt, opts, c)
        ref = os.path.join(work, "model-%d.pgm" % c)
        if filtered:
            subprocess.run([os.path.join(args.tools, model)] + model_args(filt, popts, 8) +
                           [noisy[c], ref], check=True)
        else:
            shutil.copy(noisy[c], ref)
        line, ok = compare(args.tools, gpu, ref, 8, filt)
        tally.cases += 1
        tally.result(ok, "%-11s %3dx%-3d %-7s %-36s plane %d %s" % (
            filt, w, h, fmt, opts, c, line))


def filter_yuv444p(ff, src, chain, dst):
    """Run 'chain' on the channels of the 8-bit PPM src as the planes of a
    yuv444p frame (channel 0 as Y, 1 as U, 2 as V, no conversion) and write
    the output planes back as the channels of the PPM dst."""
    w, h, _, data = read_pnm(src)
    planar = b"".join(data[c::3] for c in range(3))
    out = ff.filter_raw(planar, "yuv444p", w, h, chain, opencl=True)
    interleaved = bytearray(3 * w * h)
    for c in range(3):
        interleaved[c::3] = out[c * w * h:(c + 1) * w * h]
    write_ppm(dst, w, h, bytes(interleaved))


def clear_low_bits(path, shift):
    """The samples of a 16-bit PPM with their 'shift' low bits cleared: valid
    samples of a format that keeps 16 - shift bits in the high bits."""
    w, h, c, v = read_pnm16(path)
    write_pnm16(path, w, h, [x & ~((1 << shift) - 1) for x in v], c)


def filter_msb(ff, src, chain, dst, fmt):
    """Run 'chain' on the 16-bit PPM src as raw gbrp10msb or gbrp12msb
    planes (G, B, R, samples in the high bits, no conversion) and write the
    output the same way, as the PPM dst."""
    w, h, _, v = read_pnm16(src)
    n = w * h
    raw = b"".join(struct.pack("<%dH" % n, *v[c::3]) for c in (1, 2, 0))
    out = struct.unpack("<%dH" % (3 * n), ff.filter_raw(raw, fmt, w, h, chain, opencl=True))
    rgb = [0] * (3 * n)
    for c, plane in zip((1, 2, 0), range(3)):
        rgb[c::3] = out[plane * n:(plane + 1) * n]
    write_pnm16(dst, w, h, rgb, 3)


def random_option(rng, opts, p, name, value):
    """Add name=value to opts with probability p."""
    if rng.random() < p:
        opts.append("%s=%s" % (name, value))


def random_cases(seed, n):
    """n random cases, bm3d_gpu images and vbm3d_gpu sequences in turn
    (case k of a seed is the same on every machine): size, format, and
    options of both steps drawn within the filters' ranges, each left at its
    default half the time or more. Returns (images, sequences) in the forms
    of BM3D_CASES and VBM3D_CASES."""
    rng = random.Random(seed)
    images, sequences = [], []
    for k in range(n):
        video = k % 2 == 1
        bits = rng.choice([8, 8, 8, 16, "rgb8"])
        opts = ["sigma=%d" % rng.choice([0, 5, 10, 20, 35, 60])]
        if not video:
            random_option(rng, opts, 0.25, "preset", "ref")
        for suffix in ("", "2"):
            random_option(rng, opts, 0.4, "bstep" + suffix, rng.randint(1, 8))
            random_option(rng, opts, 0.4, "group" + suffix, rng.choice([1, 2, 4, 8, 16, 32]))
            random_option(rng, opts, 0.3, "range" + suffix, rng.randint(1, 21))
            random_option(rng, opts, 0.3, "thmse" + suffix, rng.choice([50, 400, 2500, 10000]))
            if video:
                random_option(rng, opts, 0.3, "prange" + suffix, rng.randint(1, 9))
        random_option(rng, opts, 0.3, "hdthr", round(rng.uniform(1.5, 3.5), 2))
        random_option(rng, opts, 0.3, "kaiser", round(rng.uniform(0.0, 4.0), 2))
        random_option(rng, opts, 0.3, "mu2", round(rng.uniform(0.2, 1.5), 2))
        random_option(rng, opts, 0.3, "transform", rng.choice(["dct", "bior"]))
        random_option(rng, opts, 0.3, "transform1d", rng.choice(["hadamard", "haar"]))
        random_option(rng, opts, 0.15, "estim", "basic")
        if bits == "rgb8":
            random_option(rng, opts, 0.3, "color", "planes")
        if video:
            random_option(rng, opts, 0.4, "perframe", rng.randint(1, 8))
            random_option(rng, opts, 0.5, "past", rng.randint(0, 4))
            if rng.random() < 0.15:
                opts.append("causal=1")
            else:
                random_option(rng, opts, 0.5, "future", rng.randint(0, 4))
            sequences.append((rng.randint(1, 48), rng.randint(1, 40), rng.randint(1, 7), bits,
                              ":".join(opts)))
        else:
            images.append((rng.randint(1, 80), rng.randint(1, 64), bits, ":".join(opts)))
    return images, sequences


def main():
    ap = argparse.ArgumentParser()
    ffmpeg.add_options(ap)
    ap.add_argument("--tools", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--match", default="",
                    help="run only the cases whose filter, format or options contain this")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="also N random cases, bm3d_gpu and vbm3d_gpu in turn (random_cases)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the random cases [1]")
    ap.add_argument("--no-fixed", action="store_true",
                    help="only the random cases, none of the fixed lists")
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg, args.device)
    camera = os.path.join(skimage_data_dir(args.work), "camera.png")
    astronaut = os.path.join(skimage_data_dir(args.work), "astronaut.png")
    tally = Tally()
    random_images, random_sequences = random_cases(args.seed, args.random)
    fixed = not args.no_fixed
    cases = [("nlmeans_gpu", "nlmeans_ref") + c for c in CASES if fixed] + \
            [("bm3d_gpu", "bm3d_ref") + c for c in (BM3D_CASES if fixed else []) + random_images]
    for i, (filt, model, w, h, bits, opts) in enumerate(cases):
        if args.match not in "%s %s %s" % (filt, bits, opts):
            continue
        crop_fmt, fmt, ext = FORMATS[bits]
        if bits in MSB_SHIFT and not ff.has_pix_fmt(fmt):
            print("skip %-11s %3dx%-3d %-5s %s: this FFmpeg has no %s" % (filt, w, h, bits, opts, fmt))
            continue
        photo = camera if ext == "pgm" else astronaut
        clean = os.path.join(args.work, "clean-%dx%d-%s.%s" % (w, h, bits, ext))
        noisy = os.path.join(args.work, "noisy-%dx%d-%s.%s" % (w, h, bits, ext))
        gpu = os.path.join(args.work, "gpu-%d.%s" % (i, ext))
        ref = os.path.join(args.work, "model-%d.%s" % (i, ext))
        ff.run(["-i", photo, "-vf", "crop=%d:%d:200:100,format=%s" % (w, h, crop_fmt),
                "-frames:v", "1", "-update", "1", "-y", clean])
        awgn(args.tools, clean, noisy, 20, i + 1)
        if bits in MSB_SHIFT:
            clear_low_bits(noisy, MSB_SHIFT[bits])
        subprocess.run([os.path.join(args.tools, model)] + model_args(filt, opts, bits) +
                       [noisy, ref], check=True)
        # both search kernels: the per-patch one and the work-group one
        for search in ("direct", "tiled"):
            if os.path.exists(gpu):
                os.remove(gpu)
            chain = "format=%s,hwupload,%s=%s:search=%s,hwdownload,format=%s" % (
                fmt, filt, opts, search, fmt)
            if bits == "yuv8":
                filter_yuv444p(ff, noisy, chain, gpu)
            elif bits in MSB_SHIFT:
                filter_msb(ff, noisy, chain, gpu, fmt)
            else:
                ff.run(ff.hw_args() + ["-i", noisy, "-vf", chain, "-update", "1", "-y", gpu])
            line, ok = compare(args.tools, gpu, ref, bits, filt)
            tally.cases += 1
            tally.result(ok, "%-11s %3dx%-3d %-5s %-44s %-6s %s" % (filt, w, h, bits, opts,
                                                                   search, line))
    for i, case in enumerate(SUBSAMPLED_CASES if fixed else []):
        if args.match not in "%s %s %s" % (case[0], case[3], case[4]):
            continue
        subsampled_case(ff, args, tally, astronaut, i, case)
    sequences = [("vbm3d_gpu", c) for c in (VBM3D_CASES if fixed else []) + random_sequences] + \
                [("nlmeans_gpu", c) for c in NLMEANS_VIDEO_CASES if fixed]
    for i, (filt, case) in enumerate(sequences):
        if args.match not in "%s %s %s" % (filt, case[3], case[4]):
            continue
        photo = camera if FORMATS[case[3]][2] == "pgm" else astronaut
        sequence_case(ff, args, tally, photo, filt, i, case)
    sys.exit(tally.summary("golden model", "runs"))


if __name__ == "__main__":
    main()
