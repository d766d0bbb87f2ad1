#!/usr/bin/env python3
"""Quality test of the noise estimation of the denoisers (sigma=auto and
sigma=curve) on natural photographs and short videos.

Exact noise through tests/tools/awgn (fixed seeds): white Gaussian noise of
standard deviation sigma (8-bit scale), or Poisson-Gaussian noise of
variance a * x + b (awgn -gain a -sigma sqrt(b)). The estimates are read
from the frame metadata lavfi.<filter>.sigma.<component>. Five parts:

  accuracy  sigma from 1 to 50 on centre crops of the six photographs
            (384x288, gray 8 bits), and on 16- and 10-bit frames and the
            three planes of yuv420p frames: the estimate must be within
            10 % of sigma, or 0.5 below sigma 5; a clean photograph at most
            1.0. The photographs are filtered as stills (sigma_tau=0).
            Also two photographs scaled to 1280x720 and 1920x1080, where
            the grid of blocks is coarser (a step of 4 and 8), at sigma
            3, 10 and 30; the verbose log's grid there is the documented
            one (a step of 2, 4 or 8, at most 65536 blocks).
            astronaut has grain of its own (its clean estimate, about 1.2,
            is the frame's noise): there the estimate at sigma below 5 must
            be within 0.5 of sqrt(sigma^2 + clean^2) and its clean estimate
            is not bounded.
  auto      PSNR of nlmeans_gpu and bm3d_gpu (256x256 crops) and of
            vbm3d_gpu (a pan over a photograph) with sigma=auto, against the
            same filter given the true sigma, at sigma 10, 20 and 40: at
            most 0.15 dB below.
  curve     Poisson-Gaussian noise, (a, b) = (1, 1) and (4, 1): PSNR of each
            filter with sigma=curve against its best single sigma, searched
            on a grid for each photograph (or video): the mean gain over
            the photographs must be at least 0.3 dB; the curve exported
            with each frame (lavfi.<filter>.curve.0.<intensity>), on
            average over its points (geometric mean of the ratios), within
            5 % of the true noise sqrt(a x + b) at their intensities; the
            verbose log's line of each frame (nlmeans_gpu and bm3d_gpu)
            gives the exported estimate and curve.
  video     a pan over a photograph at 25 frames per second: with constant
            noise the estimate's spread (standard deviation over mean over
            the frames) is under 3 %; after a step of the noise from 10 to
            20 it is within 5 % of the new level in at most one second, and
            stays there; with timestamps at 5 frames a second (sigma_tau
            is a time, not a number of frames) it reaches it in at most one
            second too, and after a pause of 2 s in the timestamps at once;
            at
            a cut to another photograph and noise level, within 10 % of the
            new level at once; there the verbose log has a line a frame,
            numbered from 0, with the exported estimate, and reports the
            scene cut on that frame and no other, where the average
            restarts.
  cost      reported only (the 5 % target is checked by the benchmark):
            the share of the estimation in each filter's kernel time
            (profile=1) on a 512x512 frame.

Every filter or option missing from the ffmpeg binary fails the test.
"""

import argparse
import functools
import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import PHOTOS, add_options, crops, skimage_data_dir  # noqa: E402
from testlib import ffmpeg, tools  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import mean_psnr, psnr, read_pnm, write_pgm, write_pnm16  # noqa: E402
from testlib.report import finish, log  # noqa: E402

SIGMAS = [1, 2, 3, 5, 10, 20, 30, 40, 50]
OWN_NOISE = {"astronaut"}        # photographs with grain of their own
ACC_REL = 0.10                   # accuracy at sigma >= 5
ACC_ABS = 0.5                    # below sigma 5
CLEAN_MAX = 1.0
AUTO_SIGMAS = [10, 20, 40]
AUTO_MARGIN = 0.15               # dB below the true sigma's PSNR, at most
PG_PARAMS = [(1.0, 1.0), (4.0, 1.0)]
PG_GAIN = 0.3                    # dB, mean over the photographs
CURVE_TOL = 0.05                 # the exported curve against the true noise
PG_GRID = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.4, 1.6]   # times the mean noise
SPREAD_MAX = 0.03
STEP_TOLERANCE = 0.05
CUT_TOLERANCE = 0.10
FPS = 25
CHEAP = "p=1:r=1:n=1:step=1"     # nlmeans_gpu doing almost nothing, to read estimates


def parse_metadata(path, filt):
    """Per frame, in order, of the metadata printed by the metadata filter:
    {component: value} of lavfi.<filt>.sigma.<component>, and [(intensity,
    value)] of component 0's curve, lavfi.<filt>.curve.0.<intensity>."""
    sigma = re.compile(re.escape("lavfi.%s.sigma." % filt) + r"(\d+)=([-0-9.]+)$")
    curve = re.compile(re.escape("lavfi.%s.curve.0." % filt) + r"(\d+)=([-0-9.]+)$")
    sigmas, curves = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("frame:"):
                sigmas.append({})
                curves.append([])
            elif sigmas:
                m = sigma.match(line.strip())
                if m:
                    sigmas[-1][int(m.group(1))] = float(m.group(2))
                m = curve.match(line.strip())
                if m:
                    curves[-1].append((float(m.group(1)), float(m.group(2))))
    return sigmas, curves


LOG_FRAME = re.compile(r"\] Frame (\d+)(, scene cut)?, noise sigma of component(.*)$")
LOG_COMPONENT = re.compile(r"\s*(\d+): ([-0-9.]+) \(this frame ([-0-9.]+)\)(.*)$")


def parse_log(text):
    """The filter's verbose log, per frame line, in order: (frame number,
    scene cut, {component: (estimate used, the frame's own, [(intensity,
    sigma)] of the curve)})."""
    frames = []
    for line in text.splitlines():
        m = LOG_FRAME.search(line)
        if not m:
            continue
        comps = {}
        for part in m.group(3).split(";"):
            mc = LOG_COMPONENT.match(part)
            if mc:
                curve = [(float(i), float(v)) for i, v in re.findall(r" (\d+):([-0-9.]+)",
                                                                     mc.group(4))]
                comps[int(mc.group(1))] = (float(mc.group(2)), float(mc.group(3)), curve)
        frames.append((int(m.group(1)), bool(m.group(2)), comps))
    return frames


class Runner:
    def __init__(self, ff, work):
        self.ff = ff
        self.work = work
        self.meta = os.path.join(work, "metadata.txt")
        self.log = []

    def run(self, frames, pix_fmt, width, height, filt, opts, pre=None, verbose=False):
        """Filter raw frames with 'filt=opts' (after the filters 'pre');
        returns (output, estimates per frame). With 'verbose', the filter's
        log at the verbose level is kept, parsed, in self.log."""
        if os.path.exists(self.meta):
            os.remove(self.meta)
        chain = "%s%s=%s,metadata=mode=print:file='%s'" % (pre + "," if pre else "", filt, opts,
                                                           self.meta)
        if verbose:
            cmd = [self.ff.binary, "-nostdin", "-hide_banner", "-loglevel", "verbose"] + \
                self.ff.hw_args() + ["-f", "rawvideo", "-pix_fmt", pix_fmt, "-s",
                                     "%dx%d" % (width, height), "-i", "pipe:0", "-vf", chain,
                                     "-f", "rawvideo", "-pix_fmt", pix_fmt, "pipe:1"]
            p = ffmpeg.run(cmd, input=frames)
            if p.rc:
                raise RuntimeError("ffmpeg failed (%d): %s\n%s" % (p.rc, " ".join(cmd),
                                                                   p.err[-2000:]))
            out, self.log = p.out, parse_log(p.err)
        else:
            out = self.ff.filter_raw(frames, pix_fmt, width, height, chain, opencl=True)
        est, self.curves = parse_metadata(self.meta, filt)
        return out, est


# awgn(tools, src, dst, sigma, seed[, gain]): dst, made once
awgn = functools.partial(tools.awgn, cache=True)


def read_pgm16(path):
    """The samples of a 16-bit PGM, big-endian."""
    return read_pnm(path, 65535)[3]


def check_accuracy(name, sigma, est, clean_est, failures, what):
    """The accuracy rules; returns the printed error."""
    if sigma == 0:
        if name not in OWN_NOISE and not est <= CLEAN_MAX:
            failures.append("%s %s clean: estimate %.2f > %.1f" % (what, name, est, CLEAN_MAX))
        return "%.2f" % est
    if sigma < 5:
        ref = math.hypot(sigma, clean_est) if name in OWN_NOISE else sigma
        if not abs(est - ref) <= ACC_ABS:
            failures.append("%s %s sigma %g: estimate %.2f not within %.1f of %.2f"
                            % (what, name, sigma, est, ACC_ABS, ref))
        return "%+.2f" % (est - ref)
    if not abs(est / sigma - 1) <= ACC_REL:
        failures.append("%s %s sigma %g: estimate %.2f not within %d %%"
                        % (what, name, sigma, est, ACC_REL * 100))
    return "%+.1f%%" % (100 * (est / sigma - 1))


def estimates(run, items, pix_fmt, opts, pre=None):
    """The estimates of frames (samples, width, height), those of one size
    filtered together as one stream."""
    out = []
    i = 0
    while i < len(items):
        j = i
        while j < len(items) and items[j][1:] == items[i][1:]:
            j += 1
        _, est = run.run(b"".join(it[0] for it in items[i:j]), pix_fmt, items[i][1], items[i][2],
                         "nlmeans_gpu", opts, pre)
        out += est
        i = j
    return out


def part_accuracy(args, ff, run, data, lines, failures):
    names = args.photos
    if args.acc_size:
        crop, what = "crop=%d:%d" % args.acc_size, "%dx%d centre crops" % args.acc_size
    elif args.acc_scale != 1:
        crop = ("scale=trunc(iw*%g/2)*2:trunc(ih*%g/2)*2:flags=lanczos"
                % (args.acc_scale, args.acc_scale))
        what = "whole photographs scaled by %g" % args.acc_scale
    else:
        crop, what = "crop=iw-mod(iw\\,2):ih-mod(ih\\,2)", "whole photographs"
    tag = "%dx%d" % args.acc_size if args.acc_size else "whole%g" % args.acc_scale
    paths = []
    for name in names:
        p = os.path.join(args.work, "clean-%s-%s.pgm" % (name, tag))
        if not os.path.exists(p):
            ff.run(["-i", os.path.join(data, name + ".png"), "-vf", crop + ",format=gray",
                    "-frames:v", "1", "-update", "1", "-y", p])
        paths.append(p)
    sizes = [read_pnm(p)[:2] for p in paths]
    lines += ["", "### Accuracy, gray 8 bits, %s (estimate; error)" % what, "",
              "| sigma | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    clean_est = {}
    for sigma in [0] + SIGMAS:
        items = []
        for i, p in enumerate(paths):
            src = p if sigma == 0 else awgn(args.tools, p, p.replace("clean-", "noisy-s%g-" % sigma),
                                            sigma, 7000 + 100 * sigma + i)
            items.append((read_pnm(src)[3],) + sizes[i])
        est = estimates(run, items, "gray", "sigma=auto:sigma_tau=0:" + CHEAP)
        cells = []
        for i, name in enumerate(names):
            e = est[i][0]
            if sigma == 0:
                clean_est[name] = e
            cells.append("%.2f (%s)" % (e, check_accuracy(name, sigma, e, clean_est[name],
                                                          failures, "gray8")))
        lines.append("| %s | " % (sigma or "clean") + " | ".join(cells) + " |")
    log("accuracy, gray 8 bits: done")

    # 16 bits (gray16) and 10 bits (gbrp10msb, the first component), from
    # the same noise drawn on 16-bit samples. FFmpeg before 8.0 has no MSB
    # formats, and its 10-bit formats that the filters take are two-channel
    # ones (p010...), which a CPU OpenCL device cannot carry: 16 bits only.
    hi_names = names[:3]
    ten_bits = ffmpeg.has_pix_fmt(args.ffmpeg, "gbrp10msble")
    depths = ("16-bit", "10-bit") if ten_bits else ("16-bit",)
    if not ten_bits:
        log("accuracy, 10 bits: skipped, this FFmpeg has no gbrp10msble")
    lines += ["", "### Accuracy, %s bits (estimate; error)" % " and ".join(
                  d.split("-")[0] for d in depths), "",
              "| sigma | " + " | ".join("%s %s" % (n, b) for b in depths
                                       for n in hi_names) + " |",
              "|---" * (len(depths) * len(hi_names) + 1) + "|"]
    paths16 = []
    for i, p in enumerate(paths[:len(hi_names)]):
        p16 = p.replace(".pgm", "-16.pgm")
        if not os.path.exists(p16):
            write_pnm16(p16, sizes[i][0], sizes[i][1], [v * 257 for v in read_pnm(p)[3]])
        paths16.append(p16)
    for sigma in [1, 3, 5, 20, 50]:
        items = [(read_pgm16(awgn(args.tools, p, p.replace("clean-", "noisy-s%g-" % sigma),
                                  sigma, 9000 + 100 * sigma + i)),) + sizes[i]
                 for i, p in enumerate(paths16)]
        cells = []
        est16 = estimates(run, items, "gray16be", "sigma=auto:sigma_tau=0:" + CHEAP)
        # 10 bits: converted to gbrp10msb (R = G = B, no range change),
        # the first component estimated
        est10 = estimates(run, items, "gray16be", "sigma=auto:sigma_tau=0:planes=1:" + CHEAP,
                          pre="format=gbrp10msble") if ten_bits else None
        for bits, est in (("16-bit", est16), ("10-bit", est10))[:len(depths)]:
            for i, name in enumerate(hi_names):
                e = est[i][0]
                cells.append("%.2f (%s)" % (e, check_accuracy(name, sigma, e, clean_est[name],
                                                              failures, bits)))
        lines.append("| %g | " % sigma + " | ".join(cells) + " |")
    log("accuracy, 16 and 10 bits: done")

    # the three planes of yuv420p frames, noise added to each
    yuv_names = [n for n in ("coffee", "motorcycle_left") if n in names] or names[:1]
    lines += ["", "### Accuracy, yuv420p, %s, each plane (estimate; error)" % what, "",
              "| sigma | " + " | ".join("%s %s" % (n, c) for n in yuv_names for c in "YUV") + " |",
              "|---" * (3 * len(yuv_names) + 1) + "|"]
    for sigma in [3, 10, 30]:
        items = []
        for i, name in enumerate(yuv_names):
            w, h = sizes[names.index(name)]
            fit = crop if crop.startswith("scale=") else "crop=%d:%d" % (w, h)
            raw = ff.run(["-i", os.path.join(data, name + ".png"), "-vf",
                          fit + ",format=yuv420p", "-frames:v", "1", "-f",
                          "rawvideo", "-pix_fmt", "yuv420p", "pipe:1"])
            planes = [(0, w, h), (w * h, w // 2, h // 2), (w * h * 5 // 4, w // 2, h // 2)]
            frame = b""
            for k, (off, pw, ph) in enumerate(planes):
                src = os.path.join(args.work, "yuv-%s-%s-%d.pgm" % (name, tag, k))
                write_pgm(src, pw, ph, raw[off:off + pw * ph])
                dst = src.replace(".pgm", "-s%g.pgm" % sigma)
                if os.path.exists(dst):
                    os.remove(dst)
                frame += read_pnm(awgn(args.tools, src, dst, sigma, 11000 + 10 * i + k))[3]
            items.append((frame, w, h))
        est = estimates(run, items, "yuv420p", "sigma=auto:sigma_tau=0:" + CHEAP)
        cells = []
        for i, name in enumerate(yuv_names):
            for c in range(3):
                cells.append("%.2f (%s)" % (est[i][c], check_accuracy(
                    name, sigma, est[i][c], 0.0, failures, "yuv420p plane %d" % c)))
        lines.append("| %g | " % sigma + " | ".join(cells) + " |")
    log("accuracy, yuv420p: done")

    # HD frames: on planes this large the grid of blocks has a step of 4
    # (1280x720) or 8 (1920x1080) instead of 2, so that there are at most
    # 65536 blocks; photographs scaled to the size
    hd_names = [n for n in ("camera", "coffee") if n in names] or names[:1]
    hd_sigmas = (3, 10, 30)
    lines += ["", "### Accuracy, gray 8 bits, photographs scaled to HD sizes (estimate; error)",
              "", "| size | " + " | ".join("%s, sigma %g" % (n, v) for v in hd_sigmas
                                           for n in hd_names) + " |",
              "|---" * (len(hd_sigmas) * len(hd_names) + 1) + "|"]
    grids = []
    for w, h in ((1280, 720), (1920, 1080)):
        hd_paths = []
        for name in hd_names:
            p = os.path.join(args.work, "clean-%s-%dx%d.pgm" % (name, w, h))
            if not os.path.exists(p):
                ff.run(["-i", os.path.join(data, name + ".png"), "-vf",
                        "scale=%d:%d:flags=lanczos,format=gray" % (w, h),
                        "-frames:v", "1", "-update", "1", "-y", p])
            hd_paths.append(p)
        cells = []
        for sigma in hd_sigmas:
            items = [(read_pnm(awgn(args.tools, p, p.replace("clean-", "noisy-s%g-" % sigma),
                                    sigma, 13000 + 100 * sigma + i))[3], w, h)
                     for i, p in enumerate(hd_paths)]
            est = estimates(run, items, "gray", "sigma=auto:sigma_tau=0:" + CHEAP)
            for i, name in enumerate(hd_names):
                cells.append("%.2f (%s)" % (est[i][0], check_accuracy(
                    name, sigma, est[i][0], clean_est.get(name, 0.0), failures,
                    "gray8 %dx%d" % (w, h))))
        lines.append("| %dx%d | " % (w, h) + " | ".join(cells) + " |")
        grids.append(check_grid(ff, hd_paths[0], w, h, failures))
    lines += ["", "The grid of blocks (the verbose log): " + "; ".join(grids) + "."]
    log("accuracy, HD sizes: done")


LOG_GRID = re.compile(r"Noise of component 0 estimated on (\d+)x(\d+) blocks of 8x8, "
                      r"every (\d+) samples")


def expected_grid(w, h):
    """The grid of 8x8 blocks the documentation gives: a step of 2, or 4 or
    8 on large planes, so that there are at most 65536 blocks."""
    for step in (2, 4, 8):
        nx, ny = (w - 8) // step + 1, (h - 8) // step + 1
        if nx * ny <= 65536 or step == 8:
            return nx, ny, step


def check_grid(ff, path, w, h, failures):
    """The grid of blocks of a gray picture's plane, as the filter's verbose
    log gives it, against expected_grid(); returns a note."""
    cmd = [ff.binary, "-nostdin", "-hide_banner", "-loglevel", "verbose"] + ff.hw_args() + \
        ["-i", path, "-vf", "format=gray,hwupload,nlmeans_gpu=sigma=auto:%s,hwdownload,"
         "format=gray" % CHEAP, "-f", "null", "-"]
    p = ffmpeg.run(cmd)
    m = LOG_GRID.search(p.err)
    got = tuple(int(v) for v in m.groups()) if m else None
    want = expected_grid(w, h)
    if p.rc or got != want:
        failures.append("grid of blocks at %dx%d: %s, expected %dx%d blocks every %d samples"
                        % (w, h, "%dx%d every %d" % got if got else "no log line (exit %d)"
                           % p.rc, *want))
    return "%dx%d: %s blocks every %d samples%s" % (
        w, h, "%dx%d" % got[:2] if got else "?", got[2] if got else 0,
        "" if got == want else " (expected %dx%d every %d)" % want)


def pan_frames(ff, data, name, size, frames, start=0):
    """Clean gray frames of a camera pan over a photograph: a size x size
    window moving 2 samples right and 1 down per frame (from frame
    'start'), through the photograph's centre at frame 20."""
    raw = ff.run(["-loop", "1", "-i", os.path.join(data, name + ".png"), "-vf",
                  "crop=%d:%d:x='(iw-%d)/2+2*(n+%d-20)':y='(ih-%d)/2+n+%d-20',format=gray"
                  % (size, size, size, start, size, start),
                  "-frames:v", str(frames), "-f", "rawvideo", "-pix_fmt", "gray", "pipe:1"])
    fs = size * size
    return [raw[i * fs:(i + 1) * fs] for i in range(frames)]


def noisy_frames(args, frames, size, tag, seed, sigma, gain=None):
    """Each frame with its own noise (seed + t), through awgn."""
    out = []
    for t, f in enumerate(frames):
        src = os.path.join(args.work, "frame-%s-%d.pgm" % (tag, t))
        write_pgm(src, size, size, f)
        dst = src.replace(".pgm", "-s%g-g%g.pgm" % (sigma, gain or 0))
        if os.path.exists(dst):
            os.remove(dst)
        out.append(read_pnm(awgn(args.tools, src, dst, sigma, seed + t, gain))[3])
    return out


def psnrs(out, clean):
    fs = len(clean[0])
    return [psnr(out[i * fs:(i + 1) * fs], c) for i, c in enumerate(clean)]


def part_auto(args, ff, run, data, lines, failures):
    size, pan = args.crop, args.pan
    paths, clean = crops(ff, data, args.work, args.photos, size)
    video_names = ["camera", "coffee"]
    videos = {n: pan_frames(ff, data, n, pan, 10) for n in video_names}
    lines += ["", "### sigma=auto against the true sigma: PSNR (dB), auto - true", "",
              "| filter | sigma | " + " | ".join(args.photos) + " | mean |",
              "|---" * (len(args.photos) + 3) + "|"]
    vlines = ["", "| filter | sigma | " + " | ".join(video_names) + " | mean |",
              "|---" * (len(video_names) + 3) + "|"]
    for sigma in AUTO_SIGMAS:
        noisy = b"".join(read_pnm(awgn(args.tools, p, p.replace("clean-", "noisy-s%g-" % sigma),
                                       sigma, 13000 + 100 * sigma + i))[3]
                         for i, p in enumerate(paths))
        for filt in ("nlmeans_gpu", "bm3d_gpu"):
            auto, est = run.run(noisy, "gray", size, size, filt, "sigma=auto:sigma_tau=0")
            true, _ = run.run(noisy, "gray", size, size, filt, "sigma=%g" % sigma)
            pa, pt = psnrs(auto, clean), psnrs(true, clean)
            cells = []
            for name, a, t, e in zip(args.photos, pa, pt, est):
                cells.append("%.2f %+.2f (%.1f)" % (a, a - t, e[0]))
                if not a >= t - AUTO_MARGIN:
                    failures.append("%s sigma %g %s: auto %.2f dB, true sigma %.2f dB"
                                    % (filt, sigma, name, a, t))
            lines.append("| %s | %g | %s | %+.3f |" % (filt, sigma, " | ".join(cells),
                                                       (sum(pa) - sum(pt)) / len(pa)))
        cells, diffs = [], []
        for i, name in enumerate(video_names):
            noisy_v = noisy_frames(args, videos[name], pan, "auto-" + name,
                                   15000 + 100 * sigma + 20 * i, sigma)
            auto, est = run.run(b"".join(noisy_v), "gray", pan, pan, "vbm3d_gpu", "sigma=auto")
            true, _ = run.run(b"".join(noisy_v), "gray", pan, pan, "vbm3d_gpu", "sigma=%g" % sigma)
            a, _ = mean_psnr(auto, videos[name], pan * pan)
            t, _ = mean_psnr(true, videos[name], pan * pan)
            cells.append("%.2f %+.2f (%.1f)" % (a, a - t, est[-1][0]))
            diffs.append(a - t)
            if not a >= t - AUTO_MARGIN:
                failures.append("vbm3d_gpu sigma %g %s: auto %.2f dB, true sigma %.2f dB"
                                % (sigma, name, a, t))
        vlines.append("| vbm3d_gpu | %g | %s | %+.3f |" % (sigma, " | ".join(cells),
                                                          sum(diffs) / len(diffs)))
        log("auto, sigma %g: done" % sigma)
    lines += ["", "Cells: PSNR with sigma=auto, its difference to the true sigma's, "
              "(the estimate). vbm3d_gpu: pans of 10 frames of %dx%d over the "
              "photographs, mean PSNR over the frames (estimate of the last frame):" % (pan, pan)] + vlines


def grid_search(evaluate, centre):
    """PSNR per item for each sigma of the grid around 'centre'; returns
    the best sigma and PSNR of each item, and whether it is inside the
    grid."""
    grid = [round(centre * f, 2) for f in PG_GRID]
    results = [evaluate(s) for s in grid]
    best = []
    for i in range(len(results[0])):
        k = max(range(len(grid)), key=lambda j: results[j][i])
        best.append((grid[k], results[k][i], 0 < k < len(grid) - 1))
    return best


def check_curve(curves, a, b, nb_frames, what, notes, failures):
    """The curve exported with each frame (metadata): its points, the noise
    at their intensities, on average (geometric mean of the ratios) within
    CURVE_TOL of the true sqrt(a x + b)."""
    logs = [math.log(s / math.sqrt(a * x + b)) for frame in curves for x, s in frame]
    if len(curves) != nb_frames or not all(curves):
        failures.append("%s: curves exported with %d of %d frames"
                        % (what, sum(1 for c in curves if c), nb_frames))
        return
    ratio = math.exp(sum(logs) / len(logs))
    notes.append("%s: the exported curves' %d points are %.3f times the true noise at "
                 "their intensities (geometric mean)" % (what, len(logs), ratio))
    if not abs(ratio - 1) <= CURVE_TOL:
        failures.append("%s: the exported curves are %.3f times the true noise, not within "
                        "%d %%" % (what, ratio, 100 * CURVE_TOL))


def part_curve(args, ff, run, data, lines, failures):
    size, pan = args.crop, args.pan
    paths, clean = crops(ff, data, args.work, args.photos, size)
    video_names = ["camera", "coffee"]
    videos = {n: pan_frames(ff, data, n, pan, 10) for n in video_names}
    notes = []
    lines += ["", "### Poisson-Gaussian noise, variance a x + b: sigma=curve against the best "
              "single sigma", "",
              "| filter | a, b | " + " | ".join(args.photos) + " | mean gain |",
              "|---" * (len(args.photos) + 3) + "|"]
    for a, b in PG_PARAMS:
        noisy = b"".join(read_pnm(awgn(args.tools, p, p.replace("clean-", "noisy-pg%g-%g-" % (a, b)),
                                       math.sqrt(b), 17000 + i, gain=a))[3]
                         for i, p in enumerate(paths))
        mean_x = sum(sum(c) for c in clean) / sum(len(c) for c in clean)
        centre = math.sqrt(a * mean_x + b)
        for filt in ("nlmeans_gpu", "bm3d_gpu"):
            out, est = run.run(noisy, "gray", size, size, filt, "sigma=curve:sigma_tau=0",
                               verbose=True)
            notes.append(check_log(run.log, est, run.curves, None,
                                   "%s=sigma=curve (%g, %g)" % (filt, a, b), failures))
            curve = psnrs(out, clean)
            check_curve(run.curves, a, b, len(paths), "%s (%g, %g)" % (filt, a, b), notes,
                        failures)
            best = grid_search(lambda s: psnrs(run.run(noisy, "gray", size, size, filt,
                                                       "sigma=%g" % s)[0], clean), centre)
            gains = [c - bp for c, (_, bp, _) in zip(curve, best)]
            cells = ["%.2f %+.2f (%g)" % (c, g, bs) for c, g, (bs, _, _) in zip(curve, gains, best)]
            mean_gain = sum(gains) / len(gains)
            lines.append("| %s | %g, %g | %s | %+.2f |" % (filt, a, b, " | ".join(cells), mean_gain))
            for name, (bs, _, inside) in zip(args.photos, best):
                if not inside:
                    failures.append("%s (%g, %g) %s: the best single sigma %g is at the edge of "
                                    "the grid" % (filt, a, b, name, bs))
            if not mean_gain >= PG_GAIN:
                failures.append("%s (%g, %g): sigma=curve gains %.2f dB over the best single "
                                "sigma, less than %.1f" % (filt, a, b, mean_gain, PG_GAIN))
            log("curve, %s (%g, %g): mean gain %+.2f dB" % (filt, a, b, mean_gain))
        # vbm3d_gpu on the pans
        seqs = [(videos[n], noisy_frames(args, videos[n], pan, "pg-" + n, 19000 + 100 * i,
                                         math.sqrt(b), a)) for i, n in enumerate(video_names)]
        curve = [mean_psnr(run.run(b"".join(nv), "gray", pan, pan, "vbm3d_gpu", "sigma=curve")[0],
                           cv, pan * pan)[0] for cv, nv in seqs]
        best = grid_search(lambda s: [mean_psnr(run.run(b"".join(nv), "gray", pan, pan, "vbm3d_gpu",
                                                        "sigma=%g" % s)[0], cv, pan * pan)[0]
                                      for cv, nv in seqs], centre)
        gains = [c - bp for c, (_, bp, _) in zip(curve, best)]
        mean_gain = sum(gains) / len(gains)
        lines.append("| vbm3d_gpu | %g, %g | %s | %+.2f |" % (
            a, b, " | ".join("%s: %.2f %+.2f (%g)" % (n, c, g, bs) for n, c, g, (bs, _, _)
                             in zip(video_names, curve, gains, best)), mean_gain))
        for name, (bs, _, inside) in zip(video_names, best):
            if not inside:
                failures.append("vbm3d_gpu (%g, %g) %s: the best single sigma %g is at the edge "
                                "of the grid" % (a, b, name, bs))
        if not mean_gain >= PG_GAIN:
            failures.append("vbm3d_gpu (%g, %g): sigma=curve gains %.2f dB over the best single "
                            "sigma, less than %.1f" % (a, b, mean_gain, PG_GAIN))
        log("curve, vbm3d_gpu (%g, %g): mean gain %+.2f dB" % (a, b, mean_gain))
    lines += ["", "Cells: PSNR with sigma=curve, its gain over the best single sigma (that "
              "sigma, searched on the grid %s times sqrt(a mean(x) + b)). vbm3d_gpu: pans of 10 "
              "frames of %dx%d, mean PSNR." % (", ".join("%g" % f for f in PG_GRID), pan, pan),
              ""] + ["- " + note for note in notes]


def check_log(log, est, curves, cuts, what, failures):
    """The verbose log's frame lines against the metadata: one a frame,
    numbered from 0, luma's estimate the exported one, and its curve (when
    'curves') the exported curve (the log rounds to 2 decimals, the
    metadata to 3); a scene cut on the frames 'cuts' and no other, where
    the average restarts (the estimate is the frame's own) and, on the
    next frame, goes on (it is not). 'cuts' None: no cut asserted.
    Returns a line for the report."""
    errors = []
    if [n for n, _, _ in log] != list(range(len(est))):
        errors.append("frame numbers %s for %d frames" % ([n for n, _, _ in log][:8], len(est)))
    for i, (n, _, comps) in enumerate(log[:len(est)]):
        used, own, curve = comps.get(0, (None, None, []))
        if used != est[i].get(0):
            errors.append("frame %d: luma's estimate %s, exported %s" % (n, used, est[i].get(0)))
        if curves is not None and (
                [x for x, _ in curve] != [x for x, _ in curves[i]] or
                any(abs(a - b) > 0.0051 for (_, a), (_, b) in zip(curve, curves[i]))):
            errors.append("frame %d: curve %s, exported %s" % (n, curve[:4], curves[i][:4]))
    if cuts is not None:
        got = [n for n, cut, _ in log if cut]
        if got != cuts:
            errors.append("scene cuts on frames %s, expected %s" % (got, cuts))
        for c in cuts:
            if c + 1 < len(log) and c in got:
                at, after = log[c][2][0], log[c + 1][2][0]
                if at[0] != at[1] or after[0] == after[1]:
                    errors.append("the average not restarted at the cut (%s) or not going on "
                                  "after it (%s)" % (at[:2], after[:2]))
    failures += ["verbose log, %s: %s" % (what, e) for e in errors[:3]]
    return "%s, the verbose log: %d frame lines, %s" % (
        what, len(log), "each as the metadata" if not errors else "; ".join(errors[:3]))


def part_video(args, ff, run, data, lines, failures):
    size, n = args.pan, 2 * FPS
    cam = pan_frames(ff, data, "camera", size, 3 * FPS)
    lines += ["", "### Video, %dx%d at %d frames per second" % (size, size, FPS), ""]
    for sigma in (10, 30):
        noisy = noisy_frames(args, cam[:n], size, "const", 21000 + 100 * sigma, sigma)
        for tau in ("0.25", "0"):
            _, est = run.run(b"".join(noisy), "gray", size, size, "nlmeans_gpu",
                             "sigma=auto:sigma_tau=%s:%s" % (tau, CHEAP))
            v = [e[0] for e in est]
            mean = sum(v) / len(v)
            spread = math.sqrt(sum((x - mean) ** 2 for x in v) / len(v)) / mean
            jump = max(abs(v[i] / v[i - 1] - 1) for i in range(1, len(v)))
            lines.append("- constant sigma %g, %d frames, sigma_tau=%s: mean estimate %.2f, "
                         "spread %.2f %%, largest change between frames %.2f %%%s"
                         % (sigma, n, tau, mean, 100 * spread, 100 * jump,
                            "" if tau != "0" else " (each frame on its own, for comparison)"))
            if tau != "0" and not spread < SPREAD_MAX:
                failures.append("constant sigma %g: spread %.2f %% of the estimate"
                                % (sigma, 100 * spread))
    # a step of the noise, same scene
    step = FPS
    noisy = (noisy_frames(args, cam[:step], size, "step-a", 23000, 10) +
             noisy_frames(args, cam[step:3 * FPS], size, "step-b", 23500, 20))
    # the same frames with timestamps 5 a second apart, the link's frame rate
    # still 25: sigma_tau is a time, so the estimate reaches the new level as
    # soon in seconds, in fewer frames (each frame weighs more, so it does
    # not stay within 5 % as at 25 frames a second: only the time to reach
    # it is asserted)
    for rate, pre in ((FPS, None), (5, "settb=1/100,setpts=N*20")):
        _, est = run.run(b"".join(noisy), "gray", size, size, "nlmeans_gpu",
                         "sigma=auto:" + CHEAP, pre=pre)
        v = [e[0] for e in est]
        within = [abs(x / 20 - 1) <= STEP_TOLERANCE for x in v]
        reached = next((t for t in range(step, len(v)) if within[t]), None)
        settled = next((t for t in range(step, len(v)) if all(within[t:])), None)

        def when(t):
            return "frame %d (%.2f s)" % (t, (t - step) / rate) if t is not None else "never"

        lines.append("- noise from 10 to 20 at frame %d, %d frames a second%s: the estimate is "
                     "within %d %% of 20 at %s, and from %s on; frames %d to %d: %s"
                     % (step, rate, " by their timestamps (%s)" % pre if pre else "",
                        100 * STEP_TOLERANCE, when(reached), when(settled),
                        step - 1, step + 5, ", ".join("%.2f" % x for x in v[step - 1:step + 6])))
        last = settled if rate == FPS else reached
        if last is None or last - step > rate:
            failures.append("noise step, %d frames a second: the estimate not within %d %% of "
                            "the new level one second later%s"
                            % (rate, 100 * STEP_TOLERANCE, "" if rate == FPS else " (once)"))
    # the same frames at 25 a second with a pause of 2 s before the step:
    # the first frame after it weighs 1 - exp(-2 / 0.25) in the average, so
    # the estimate is at the new level at once
    _, est = run.run(b"".join(noisy), "gray", size, size, "nlmeans_gpu", "sigma=auto:" + CHEAP,
                     pre="setpts=N+%d*gte(N\\,%d)" % (2 * FPS, step))
    v = [e[0] for e in est]
    lines.append("- the same at %d frames a second with a pause of 2 s before frame %d: the "
                 "estimate %.2f there (frames %d to %d: %s)"
                 % (FPS, step, v[step], step - 1, step + 2,
                    ", ".join("%.2f" % x for x in v[step - 1:step + 3])))
    if not abs(v[step] / 20 - 1) <= STEP_TOLERANCE:
        failures.append("noise step after a pause of 2 s: the estimate %.2f, not within %d %% of "
                        "the new level at once" % (v[step], 100 * STEP_TOLERANCE))
    # a cut to another photograph and noise level
    cut = FPS
    other = pan_frames(ff, data, "coffee", size, FPS)
    noisy = (noisy_frames(args, cam[:cut], size, "cut-a", 25000, 10) +
             noisy_frames(args, other, size, "cut-b", 25500, 30))
    _, est = run.run(b"".join(noisy), "gray", size, size, "nlmeans_gpu", "sigma=auto:" + CHEAP,
                     verbose=True)
    v = [e[0] for e in est]
    lines.append("- " + check_log(run.log, est, None, [cut], "nlmeans_gpu=sigma=auto, the cut",
                                  failures))
    lines.append("- cut from camera at sigma 10 to coffee at sigma 30 at frame %d: estimates of "
                 "frames %d to %d: %s" % (cut, cut - 2, cut + 2,
                                          ", ".join("%.2f" % x for x in v[cut - 2:cut + 3])))
    if not abs(v[cut] / 30 - 1) <= CUT_TOLERANCE:
        failures.append("scene cut: estimate %.2f at the cut, not within %d %% of 30"
                        % (v[cut], 100 * CUT_TOLERANCE))
    log("video: done")


def part_cost(args, ff, run, data, lines, failures):
    size = args.cost_size
    src = os.path.join(args.work, "cost-camera.pgm")
    if not os.path.exists(src):
        # camera is 512x512: larger frames are the photograph scaled up
        ff.run(["-i", os.path.join(data, "camera.png"), "-vf",
                "crop=min(iw\\,%d):min(ih\\,%d),scale=%d:%d,format=gray"
                % (size, size, size, size), "-frames:v", "1", "-update", "1", "-y", src])
    noisy = awgn(args.tools, src, src.replace(".pgm", "-s20.pgm"), 20, 27000)
    frames = read_pnm(noisy)[3] * 3
    lines += ["", "### Cost on this device: kernel time per frame (profile=1), %dx%d gray, "
              "3 frames" % (size, size), "", "| filter | noise estimate | vst | total | share |",
              "|---|---|---|---|---|"]
    for filt, opts in (("nlmeans_gpu", "sigma=auto"), ("bm3d_gpu", "sigma=auto"),
                       ("vbm3d_gpu", "sigma=auto"), ("nlmeans_gpu", "sigma=curve"),
                       ("bm3d_gpu", "sigma=curve")):
        cmd = [ff.binary, "-nostdin", "-hide_banner"] + ff.hw_args() + [
            "-f", "rawvideo", "-pix_fmt", "gray", "-s", "%dx%d" % (size, size), "-i", "pipe:0",
            "-vf", "%s=%s:profile=1" % (filt, opts), "-f", "null", "-"]
        p = ffmpeg.run(cmd, input=frames)
        text = p.err
        avg = dict((m.group(1), float(m.group(2))) for m in
                   re.finditer(r"\] ([a-z0-9/ ]+): ([0-9.]+) ms per frame on average", text))
        est, vst = avg.get("noise estimate", 0.0), avg.get("vst", 0.0)
        total = sum(avg.values())
        if p.rc or not total:
            failures.append("cost: %s=%s failed" % (filt, opts))
            continue
        lines.append("| %s=%s | %.2f ms | %.2f ms | %.1f ms | %.1f %% |"
                     % (filt, opts, est, vst, total, 100 * est / total))
    log("cost: done")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_options(ap, report="write the tables here (markdown)")
    ap.add_argument("--photos", default=",".join(PHOTOS))
    ap.add_argument("--parts", default="accuracy,auto,curve,video,cost")
    ap.add_argument("--acc-scale", type=float, default=1,
                    help="with --acc-size whole: scale the photographs by this "
                    "factor (Lanczos), for larger frames than the photographs")
    ap.add_argument("--acc-size", default="384x288",
                    help="accuracy: centre crops WxH, or 'whole' for the whole photographs")
    ap.add_argument("--crop", type=int, default=256, help="auto and curve: centre crops")
    ap.add_argument("--pan", type=int, default=128, help="videos: frame size")
    ap.add_argument("--cost-size", type=int, default=512, help="cost: frame size")
    args = ap.parse_args()

    args.photos = args.photos.split(",")
    args.acc_size = (None if args.acc_size == "whole" else
                     tuple(int(v) for v in args.acc_size.split("x")))
    args.work = os.path.join(args.work, "noise")
    os.makedirs(args.work, exist_ok=True)
    ff = FFmpeg(args.ffmpeg, args.device)
    run = Runner(ff, args.work)
    data = skimage_data_dir(args.work)
    lines = ["## Noise estimation (sigma=auto, sigma=curve)"]
    failures = []
    t_start = time.time()
    parts = args.parts.split(",")
    for name, fn in (("accuracy", part_accuracy), ("auto", part_auto), ("curve", part_curve),
                     ("video", part_video), ("cost", part_cost)):
        if name in parts:
            fn(args, ff, run, data, lines, failures)
    finish("noise_quality.py", lines, args.report, failures, t_start)


if __name__ == "__main__":
    main()
