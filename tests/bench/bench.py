#!/usr/bin/env python3
"""One-command benchmark: quality and speed of nlmeans_gpu, bm3d_gpu and
vbm3d_gpu against every peer, in one run on one machine (make bench).

Tasks:
  gray    gray centre crops of the scikit-image photographs;
  colour  RGB centre crops of the colour photographs;
  video   gray sequences of the photographs filmed by a moving camera
          (tests/video/make_video.py);
each with exact AWGN at sigma 10, 20 and 40 (fixed seeds, tests/tools/awgn).
Quality: mean PSNR and SSIM over the frames, from FFmpeg's psnr and ssim
filters. Peers' strength parameters are searched for each sigma (the best
PSNR kept); ours run at their defaults with the true sigma.
Speed, for each method of a task: the time per frame on a large noisy frame
(4608x3456 built from the photographs for gray and colour; 1920x1080 video
frames; smaller in --quick mode), as a wall clock time per frame after
warm-up (ffmpeg: the difference between a run of 1 + K frames and a run of
1 frame, over K), with the OpenCL kernel time and peak device memory of the
OpenCL filters measured by tests/tools/cltrace.so (profiling events and
memory objects), and for the Python GPU peers their own synchronised timing
and the peak of their allocator. A method whose frame would take longer than
--slow-ms is timed on a crop and its time scaled by the area (marked).

Writes NAME.csv, NAME.md and NAME.png into --out and, with --doc, the
report into that markdown file between <!-- bench:NAME --> markers.
"""

import argparse
import csv
import json
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "quality"))
sys.path.insert(0, os.path.join(ROOT, "tests", "video"))
from common import search_parameter, skimage_data_dir  # noqa: E402
from make_video import make_sequence  # noqa: E402
from testlib import tools  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import read_pnm, write_pnm  # noqa: E402
from testlib.report import log  # noqa: E402

SIGMAS = (10.0, 20.0, 40.0)
PHOTOS_GRAY = ["camera", "astronaut", "coffee", "chelsea", "coins", "motorcycle_left"]
PHOTOS_COLOUR = ["astronaut", "coffee", "chelsea", "motorcycle_left"]
PHOTOS_VIDEO = ["camera", "astronaut", "chelsea"]
TASKS = ("gray", "colour", "video")
TASK_TITLES = {"gray": "Image, gray", "colour": "Image, colour (RGB)", "video": "Video, gray"}


class Method:
    """A denoiser and how to run it.

    kind: "ours", "ffmpeg" (a filter of FFmpeg) or "python" (a package).
    chain(task, sigma, param): the filter chain (ffmpeg kinds).
    search: None (run with the true sigma) or (factors, lo, hi, refinements)
    of the strength parameter, in units of sigma.
    """

    def __init__(self, name, kind, tasks, chain=None, opencl=False, search=None,
                 per_clip=False, luma420=False, note="", package=None):
        self.name, self.kind, self.tasks = name, kind, tasks
        self.chain, self.opencl, self.search = chain, opencl, search
        self.per_clip = per_clip      # each image or sequence in its own run
        self.luma420 = luma420        # gray frames carried as yuv420p
        self.note, self.package = note, package


def ours_chain(filt, opts=""):
    def chain(task, sigma, _):
        f = "%s=sigma=%g%s" % (filt, sigma, ":" + opts if opts else "")
        if task == "colour":
            return "format=gbrp,hwupload,%s,hwdownload,format=gbrp,format=rgb24" % f
        return "hwupload,%s,hwdownload,format=gray" % f
    return chain


def cpu_chain(template):
    def chain(task, sigma, p):
        f = template.format(p=p, p2=p / 2)
        return "format=gbrp,%s,format=rgb24" % f if task == "colour" else f
    return chain


def nlmeans_opencl_chain(task, sigma, p):
    if task == "colour":
        return "format=gbrp,hwupload,nlmeans_opencl=s=%g,hwdownload,format=gbrp,format=rgb24" % p
    return "hwupload,nlmeans_opencl=s=%g,hwdownload,format=yuv420p" % p


IMAGE, VIDEO, ALL = ("gray", "colour"), ("video",), TASKS
NLM_FACTORS = ((0.4, 0.55, 0.7, 0.85, 1.0, 1.2), 1.0, 30.0, 2)
SIGMA_FACTORS = ((3.0, 4.0, 5.0, 6.0, 7.0, 8.0), 1.0, 999.9, 2)
METHODS = [
    Method("nlmeans_gpu", "ours", ALL, ours_chain("nlmeans_gpu"), True),
    Method("nlmeans_gpu p=5:step=1", "ours", ALL, ours_chain("nlmeans_gpu", "p=5:step=1"), True),
    Method("nlmeans_gpu past=4:future=4", "ours", VIDEO,
           ours_chain("nlmeans_gpu", "past=4:future=4"), True),
    Method("nlmeans_gpu p=5:step=1:past=4:future=4", "ours", VIDEO,
           ours_chain("nlmeans_gpu", "p=5:step=1:past=4:future=4"), True),
    Method("bm3d_gpu fast", "ours", ALL, ours_chain("bm3d_gpu", "preset=fast"), True),
    Method("bm3d_gpu ref", "ours", ALL, ours_chain("bm3d_gpu", "preset=ref"), True),
    Method("vbm3d_gpu", "ours", VIDEO, ours_chain("vbm3d_gpu"), True),
    Method("vbm3d_gpu causal", "ours", VIDEO, ours_chain("vbm3d_gpu", "causal=1"), True),
    Method("nlmeans", "ffmpeg", ALL, cpu_chain("nlmeans=s={p:g}"), search=NLM_FACTORS),
    Method("nlmeans_opencl", "ffmpeg", ALL, nlmeans_opencl_chain, True, NLM_FACTORS,
           luma420=True, note="gray carried as yuv420p with flat chroma"),
    Method("bm3d", "ffmpeg", ALL, cpu_chain("bm3d=sigma={p:g}:group=1:estim=basic"),
           search=SIGMA_FACTORS, note="one pass, group=1 (its best, see bm3d_quality.py)"),
    Method("hqdn3d", "ffmpeg", ALL, cpu_chain("hqdn3d=luma_spatial={p:g}:chroma_spatial={p:g}:"
                                              "luma_tmp={p2:g}:chroma_tmp={p2:g}"),
           search=((1.0, 1.5, 2.0, 2.5, 3.0, 4.0), 0.5, 252.0, 2), per_clip=True,
           note="temporal strength half the spatial one"),
    Method("atadenoise", "ffmpeg", VIDEO, cpu_chain("atadenoise=0a={p:g}:0b=5:s=9"),
           search=((2.0 / 255, 3.0 / 255, 4.0 / 255, 5.0 / 255, 6.0 / 255), 0.01, 0.3, 2),
           per_clip=True, note="9 frames"),
    Method("fftdnoiz", "ffmpeg", IMAGE, cpu_chain("fftdnoiz=sigma={p:g}"),
           search=((0.5, 1.0, 1.5, 2.0, 2.5, 3.0), 1.0, 100.0, 2)),
    Method("fftdnoiz prev=1:next=1", "ffmpeg", VIDEO,
           cpu_chain("fftdnoiz=sigma={p:g}:prev=1:next=1"),
           search=((0.5, 1.0, 1.5, 2.0, 2.5, 3.0), 1.0, 100.0, 2), per_clip=True),
    Method("Python bm3d", "python", IMAGE, search=((0.9, 1.0, 1.1), 1.0, 999.9, 1),
           package="bm3d", note="the authors' CPU reference; bm3d_rgb for colour"),
    Method("bm3d-cupy", "python", IMAGE, search=((0.8, 0.9, 1.0, 1.1, 1.2), 1.0, 999.9, 1),
           package="bm3d-cupy", note="GPU (CuPy); channels apart"),
    Method("bm3d-triton", "python", IMAGE, search=((0.8, 0.9, 1.0, 1.1, 1.2), 1.0, 999.9, 1),
           package="bm3d-triton", note="GPU (PyTorch, Triton); channels apart"),
]


class Clip:
    """Frames of one task: a list of clips (images or sequences), each a
    list of frames of bytes, the same size and format."""

    def __init__(self, pix_fmt, width, height, clean, noisy):
        self.pix_fmt, self.width, self.height = pix_fmt, width, height
        self.clean, self.noisy = clean, noisy     # [clip][frame], {sigma: [clip][frame]}

    @property
    def channels(self):
        return 3 if self.pix_fmt == "rgb24" else 1


def awgn(tools_dir, path_in, path_out, sigma, seed):
    """The samples of path_in with exact AWGN (made once, in path_out)."""
    return read_pnm(tools.awgn(tools_dir, path_in, path_out, sigma, seed, cache=True))[3]


def image_task(ff, tools, data, work, names, size, pix_fmt, sigmas, seed0):
    ext = "pgm" if pix_fmt == "gray" else "ppm"
    clean, noisy = [], {s: [] for s in sigmas}
    for i, name in enumerate(names):
        path = os.path.join(work, "clean-%s-%d.%s" % (name, size, ext))
        if not os.path.exists(path):
            ff.run(["-i", os.path.join(data, name + ".png"), "-vf",
                    "crop=%d:%d,format=%s" % (size, size, pix_fmt), "-frames:v", "1",
                    "-update", "1", "-y", path])
        clean.append([read_pnm(path)[3]])
        for s in sigmas:
            noisy[s].append([awgn(tools, path, path.replace("clean-", "noisy-s%g-" % s), s,
                                  seed0 + 1000 * int(s) + i)])
    return Clip(pix_fmt, size, size, clean, noisy)


def video_task(ff, tools, data, work, names, width, height, frames, sigmas):
    clean, noisy = [], {s: [] for s in sigmas}
    for i, name in enumerate(names):
        c, n = make_sequence(ff, tools, data, os.path.join(work, "video"), name, width, height,
                             frames, "gray", sigmas, 1000 + 100 * i)
        clean.append(c)
        for s in sigmas:
            noisy[s].append(n[s])
    return Clip("gray", width, height, clean, noisy)


def large_frame(ff, tools, data, work, width, height, pix_fmt, sigma):
    """A width x height frame tiled from the photographs (3 x 3 tiles),
    with AWGN: returns (path of the raw noisy frame)."""
    ext = "pgm" if pix_fmt == "gray" else "ppm"
    c = 3 if pix_fmt == "rgb24" else 1
    out = os.path.join(work, "large-%dx%d-%s-s%g.raw" % (width, height, pix_fmt, sigma))
    if os.path.exists(out):
        return out
    tw, th = width // 3, height // 3
    tiles = []
    for i in range(9):
        name = PHOTOS_COLOUR[i % len(PHOTOS_COLOUR)] if c == 3 else PHOTOS_GRAY[i % len(PHOTOS_GRAY)]
        path = os.path.join(work, "tile-%d-%dx%d.%s" % (i, tw, th, ext))
        ff.run(["-i", os.path.join(data, name + ".png"), "-vf",
                "scale=%d:%d:flags=bicubic,format=%s" % (tw, th, pix_fmt), "-frames:v", "1",
                "-update", "1", "-y", path])
        tiles.append(read_pnm(path)[3])
    rows = []
    for y in range(height):
        ty, ry = min(y // th, 2), min(y - min(y // th, 2) * th, th - 1)
        row = b"".join(tiles[ty * 3 + tx][ry * tw * c:(ry + 1) * tw * c] for tx in range(3))
        rows.append(row + row[-c:] * (width - 3 * tw))
    clean = os.path.join(work, "large-%dx%d.%s" % (width, height, ext))
    write_pnm(clean, width, height, b"".join(rows), c)
    noisy = awgn(tools, clean, clean.replace("large-", "large-noisy-s%g-" % sigma), sigma, 77)
    with open(out, "wb") as f:
        f.write(noisy)
    return out


def large_video(ff, tools, data, work, width, height, frames, sigma):
    """Frames of width x height panning over the 4608x3456 tiled gray
    frame (3 pixels right and 2 down a frame), with AWGN drawn anew for
    each frame: the path of the raw noisy frames."""
    out = os.path.join(work, "video-%dx%d-%d-s%g.raw" % (width, height, frames, sigma))
    if os.path.exists(out):
        return out
    large_frame(ff, tools, data, work, 4608, 3456, "gray", sigma)
    bw, bh, _, big = read_pnm(os.path.join(work, "large-4608x3456.pgm"))
    noisy = []
    for k in range(frames):
        x0, y0 = (bw - width) // 2 - 3 * frames // 2 + 3 * k, (bh - height) // 2 + 2 * k
        path = os.path.join(work, "video-large-clean-%d.pgm" % k)
        write_pnm(path, width, height, b"".join(big[y * bw + x0:y * bw + x0 + width]
                                                for y in range(y0, y0 + height)))
        noisy.append(awgn(tools, path, path.replace("-clean-", "-noisy-"), sigma, 500 + k))
    with open(out, "wb") as f:
        f.write(b"".join(noisy))
    return out


# ---------------------------------------------------------------- running


def to_yuv420(frame, w, h):
    return frame + b"\x80" * (w * h // 2)


def from_yuv420(out, w, h, n):
    fs = w * h * 3 // 2
    return [out[i * fs:i * fs + w * h] for i in range(n)]


class Runner:
    def __init__(self, args):
        self.args = args
        self.ff = FFmpeg(args.ffmpeg, args.device)
        self.work = args.work
        self.workers = {}
        self.cltrace = os.path.join(args.tools, "cltrace.so")
        self.reuse = {}
        for path in args.reuse or []:
            for r in csv.DictReader(open(path)):
                if r["measure"] == "quality":
                    self.reuse[(r["task"], r["method"], r["sigma"])] = r

    def ffmpeg_frames(self, m, task, clip, frames, sigma, param):
        """Run an ffmpeg method over frames (a list of bytes) of 'clip''s
        format; returns the output frames."""
        w, h = clip.width, clip.height
        fmt = clip.pix_fmt
        data = b"".join(frames)
        if m.luma420 and fmt == "gray":
            data = b"".join(to_yuv420(f, w, h) for f in frames)
            fmt = "yuv420p"
        out = self.ff.filter_raw(data, fmt, w, h, m.chain(task, sigma, param), m.opencl)
        if fmt == "yuv420p" and clip.pix_fmt == "gray":
            return from_yuv420(out, w, h, len(frames))
        fs = w * h * clip.channels
        return [out[i * fs:(i + 1) * fs] for i in range(len(frames))]

    def worker(self):
        if "py" not in self.workers:
            self.workers["py"] = subprocess.Popen(
                [self.args.python, os.path.join(HERE, "python_peers.py")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        return self.workers["py"]

    def python_request(self, req):
        p = self.worker()
        p.stdin.write(json.dumps(req) + "\n")
        p.stdin.flush()
        answer = json.loads(p.stdout.readline())
        if "error" in answer:
            raise RuntimeError("%s: %s" % (req["method"], answer["error"]))
        return answer

    def python_frames(self, m, clip, frames, sigma, param):
        path_in = os.path.join(self.work, "py-in.raw")
        path_out = os.path.join(self.work, "py-out.raw")
        with open(path_in, "wb") as f:
            f.write(b"".join(frames))
        self.python_request({"method": m.package, "input": path_in, "output": path_out,
                             "width": clip.width, "height": clip.height,
                             "channels": clip.channels, "frames": len(frames),
                             "sigma": param, "repeat": 0})
        with open(path_out, "rb") as f:
            out = f.read()
        fs = clip.width * clip.height * clip.channels
        return [out[i * fs:(i + 1) * fs] for i in range(len(frames))]

    def denoise(self, m, task, clip, sigma, param):
        """All clips of a task denoised: [clip][frame]."""
        if m.kind == "python":
            flat = [f for c in clip.noisy[sigma] for f in c]
            out = self.python_frames(m, clip, flat, sigma, param)
        elif m.per_clip or task == "video":
            out = []
            for c in clip.noisy[sigma]:
                out += self.ffmpeg_frames(m, task, clip, c, sigma, param)
        else:
            flat = [f for c in clip.noisy[sigma] for f in c]
            out = self.ffmpeg_frames(m, task, clip, flat, sigma, param)
        return out

    def measure(self, clip, out):
        """Mean PSNR and SSIM over the frames, from FFmpeg's psnr and ssim
        filters (gbrp for colour)."""
        clean = [f for c in clip.clean for f in c]
        a, b = os.path.join(self.work, "m-out.raw"), os.path.join(self.work, "m-ref.raw")
        with open(a, "wb") as f:
            f.write(b"".join(out))
        with open(b, "wb") as f:
            f.write(b"".join(clean))
        ps, ss = os.path.join(self.work, "psnr.log"), os.path.join(self.work, "ssim.log")
        raw = ["-f", "rawvideo", "-pix_fmt", clip.pix_fmt, "-s",
               "%dx%d" % (clip.width, clip.height)]
        fmt = "gbrp" if clip.pix_fmt == "rgb24" else "gray"
        self.ff.run(raw + ["-i", a] + raw + ["-i", b, "-lavfi",
                    "[0]format=%s,split[a0][a1];[1]format=%s,split[b0][b1];"
                    "[a0][b0]psnr=stats_file=%s[o0];[a1][b1]ssim=stats_file=%s[o1]"
                    % (fmt, fmt, ps, ss), "-map", "[o0]", "-map", "[o1]", "-f", "null", "-"])
        psnrs = [float(v) for v in re.findall(r"psnr_avg:(\S+)", open(ps).read())]
        ssims = [float(v) for v in re.findall(r"All:(\S+)", open(ss).read())]
        if len(psnrs) != len(clean) or len(ssims) != len(clean):
            raise RuntimeError("psnr/ssim measured %d/%d of %d frames"
                               % (len(psnrs), len(ssims), len(clean)))
        psnrs = [min(v, 99.0) for v in psnrs]   # "inf" for equal frames
        return sum(psnrs) / len(psnrs), sum(ssims) / len(ssims)

    def quality(self, m, task, clip, sigma):
        """(PSNR, SSIM, parameter) at the best parameter for a peer, or at
        the true sigma for ours; taken from --reuse's CSV if it has them."""
        old = self.reuse.get((task, m.name, "%g" % sigma))
        if old:
            return (float(old["psnr"]), float(old["ssim"]),
                    float(old["param"]) if old["param"] else None)
        def evaluate(param):
            return self.measure(clip, self.denoise(m, task, clip, sigma, param))
        if m.search is None:
            p, s = evaluate(sigma)
            return p, s, None
        factors, lo, hi, refinements = m.search
        if self.args.quick:
            refinements = min(refinements, 1)
        scores = {}

        def score(param):
            scores[param] = evaluate(param)
            return scores[param][0]
        best, _, _ = search_parameter(score, factors, sigma, lo, hi, refinements)
        return scores[best][0], scores[best][1], best

    # -------------------------------------------------------------- speed

    def wall(self, cmd, env=None):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        t = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError("%s failed: %s" % (" ".join(cmd),
                                                  p.stderr.decode(errors="replace")[-1500:]))
        return t

    def ffmpeg_speed(self, m, task, path, fmt, w, h, frames, param):
        """(wall ms per frame, kernel ms per frame or None, peak device MB or
        None) over 'frames' frames after the first, by the difference
        method."""
        fsize = w * h * (3 if fmt == "rgb24" else 1)
        src = path
        if m.luma420 and fmt == "gray":
            src = path + ".yuv420p"
            if not os.path.exists(src):
                with open(path, "rb") as f:
                    frame = f.read(fsize)
                with open(src, "wb") as f:
                    f.write(to_yuv420(frame, w, h))
            fmt = "yuv420p"
        # the input: one frame, looped
        base = [self.ff.binary, "-nostdin", "-hide_banner", "-loglevel", "error"]
        base += self.ff.hw_args() if m.opencl else []
        base += ["-f", "rawvideo", "-pix_fmt", fmt, "-s", "%dx%d" % (w, h), "-stream_loop", "-1",
                 "-i", src, "-vf", m.chain(task, 20.0, param), "-f", "null", "-"]
        # one untimed run first: the OpenCL driver's compiler and cache, the
        # file cache
        self.wall(base[:-3] + ["-frames:v", "1"] + base[-3:])
        results = []
        for n in (1, 1 + frames):
            env = None
            trace = os.path.join(self.work, "cltrace-%d.log" % n)
            if m.opencl:
                if os.path.exists(trace):
                    os.remove(trace)
                env = dict(os.environ, LD_PRELOAD=self.cltrace, CLTRACE_OUT=trace)
            t = self.wall(base[:-3] + ["-frames:v", str(n)] + base[-3:], env)
            kernel = mem = None
            if m.opencl:
                text = open(trace).read()
                kernel = float(re.search(r"kernel_ms (\S+)", text).group(1))
                mem = float(re.search(r"mem_peak_bytes (\d+)", text).group(1)) / 1e6
            results.append((t, kernel, mem))
        (t1, k1, _), (tn, kn, mn) = results
        per = (tn - t1) / frames * 1000.0
        kernel = (kn - k1) / frames if kn is not None else None
        return per, kernel, mn

    def python_speed(self, m, path, fmt, w, h, frames, param):
        c = 3 if fmt == "rgb24" else 1
        a = self.python_request({"method": m.package, "input": path, "output": None,
                                 "width": w, "height": h, "channels": c, "frames": 1,
                                 "sigma": param, "repeat": frames})
        times = sorted(a["ms"][1:])
        return times[len(times) // 2], None, a["peak_mb"]

    def speed(self, m, task, path, fmt, w, h, param):
        """Time per frame of a method on the task's large frame: measured on a
        crop of 1/16 (1/64 for frames 2000 wide or more) of the area first; if a whole frame would take longer
        than --slow-ms, the crop's time scaled by the area is given."""
        frames = 2
        div = 8 if w >= 2000 else 4
        cw, ch = (w // div) & ~3, (h // div) & ~3
        crop = self.crop(path, fmt, w, h, cw, ch)
        run = self.python_speed if m.kind == "python" else (
            lambda *a: self.ffmpeg_speed(m, task, *a))
        if m.kind == "python":
            small = self.python_speed(m, crop, fmt, cw, ch, frames, param)
        else:
            small = run(crop, fmt, cw, ch, frames, param)
        ratio = (w * h) / float(cw * ch)
        if small[0] * ratio > self.args.slow_ms:
            return small[0] * ratio, None, None, "scaled from %dx%d" % (cw, ch)
        # enough frames for the difference to stand out of the start-up's
        # variations: about --speed-s seconds, 2 to 100 frames
        estimate = max(small[0] * ratio, 0.01)
        frames = int(min(max(2, self.args.speed_s * 1000.0 / estimate), 100))
        if m.kind == "python":
            full = self.python_speed(m, path, fmt, w, h, frames, param)
        else:
            full = run(path, fmt, w, h, frames, param)
        return full + ("",)

    def crop(self, path, fmt, w, h, cw, ch):
        out = "%s.crop%dx%d" % (path, cw, ch)
        if not os.path.exists(out):
            c = 3 if fmt == "rgb24" else 1
            with open(path, "rb") as f:
                data = f.read(w * h * c)
            x0, y0 = (w - cw) // 2, (h - ch) // 2
            with open(out, "wb") as f:
                for y in range(y0, y0 + ch):
                    f.write(data[(y * w + x0) * c:(y * w + x0 + cw) * c])
        return out


# ---------------------------------------------------------------- report


def device_name(ff):
    """The OpenCL platform and device names as FFmpeg lists them."""
    p = subprocess.run([ff.binary, "-hide_banner", "-v", "verbose"] + ff.hw_args() +
                       ["-f", "lavfi", "-i", "color=s=16x16", "-frames:v", "1", "-f", "null", "-"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = p.stdout.decode(errors="replace")
    want = ff.device or "0.0"
    for line in text.splitlines():
        mm = re.search(r"\] (\d+)\.(\d+): (.+?) / (.+)$", line)
        if mm and "%s.%s" % (mm.group(1), mm.group(2)) == want:
            return "%s / %s" % (mm.group(3).strip(), mm.group(4).strip())
    mm = re.findall(r"(\d+)\.(\d+): (.+?) / (.+)", text)
    return "%s / %s" % (mm[0][2], mm[0][3]) if mm else "OpenCL device %s" % want


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return "%s, %d threads" % (line.split(":", 1)[1].strip(), os.cpu_count())
    except OSError:
        pass
    return platform.processor()


def fmt_num(v, f="%.2f"):
    return "-" if v is None or v == "" else f % v


def fmt_ms(v):
    """Milliseconds (or a ratio) with 3 significant digits, no exponent."""
    if v is None or v == "":
        return "-"
    return "%.0f" % v if abs(v) >= 100 else "%.3g" % v


def ratio_text(rows, ours):
    """Speed of 'ours' against the fastest peer of equal or better PSNR at
    sigma 20, else against the peer of best PSNR."""
    peers = [r for r in rows if r["kind"] != "ours" and r["ms"] is not None]
    if not peers or ours["ms"] is None:
        return "-"
    better = [r for r in peers if r["psnr20"] >= ours["psnr20"]]
    ref = min(better, key=lambda r: r["ms"]) if better else max(peers, key=lambda r: r["psnr20"])
    return "%sx vs %s (%+.2f dB)" % (fmt_ms(ref["ms"] / ours["ms"]), ref["method"],
                                      ours["psnr20"] - ref["psnr20"])


def summarise(records, sigmas):
    """Per task, one row a method: PSNR/SSIM per sigma and speed."""
    tasks = {}
    for r in records:
        t = tasks.setdefault(r["task"], {})
        row = t.setdefault(r["method"], {"method": r["method"], "kind": r["kind"],
                                         "psnr": {}, "ssim": {}, "param": {}, "ms": None,
                                         "kernel_ms": None, "peak_mb": None, "time_note": ""})
        if r["measure"] == "quality":
            s = float(r["sigma"])
            row["psnr"][s], row["ssim"][s] = float(r["psnr"]), float(r["ssim"])
            row["param"][s] = r["param"]
        elif r["measure"] == "speed":
            row["ms"] = float(r["ms"]) if r["ms"] != "" else None
            row["kernel_ms"] = float(r["kernel_ms"]) if r["kernel_ms"] != "" else None
            row["peak_mb"] = float(r["peak_mb"]) if r["peak_mb"] != "" else None
            row["time_note"] = r["time_note"]
    for t in tasks.values():
        for row in t.values():
            row["psnr20"] = row["psnr"].get(20.0, max(row["psnr"].values(), default=0.0))
    return tasks


def write_report(path, meta, records, sigmas, methods):
    tasks = summarise(records, sigmas)
    notes = {m.name: m.note for m in methods}
    lines = ["Measured %s on the OpenCL device %s, CPU peers on %s, with `%s`%s." % (
        meta["date"], meta["device"], meta["cpu"], meta["command"],
        " (quick mode: small inputs, a shorter search)" if meta["quick"] else ""), ""]
    lines += ["Inputs: %s. Exact AWGN (seeds fixed), sigma %s. Ours run at their defaults "
              "with the true sigma; every peer's strength is searched for each sigma and its "
              "best PSNR kept (the parameter is in the CSV). PSNR and SSIM: FFmpeg's psnr and "
              "ssim filters, the mean over the frames. Time: wall clock per frame after warm-up "
              "on %s, upload and download included for the OpenCL filters (ffmpeg: the "
              "difference of runs of 1 and 1 + K frames, K from 2 to 100 frames, about %g s); kernel: OpenCL profiling events; memory: "
              "peak OpenCL memory objects, or the Python GPU packages' allocator peak. "
              "Speed-up: against the fastest peer with PSNR at least ours at sigma 20, else "
              "against the peer with the best PSNR (its PSNR difference in brackets)."
              % (meta["inputs"], ", ".join("%g" % s for s in sigmas), meta["speed_inputs"],
                 meta["speed_s"]), ""]
    for task in TASKS:
        if task not in tasks:
            continue
        rows = sorted(tasks[task].values(), key=lambda r: (r["kind"] != "ours", -r["psnr20"]))
        lines += ["### %s" % TASK_TITLES[task], "",
                  "| method | " + " | ".join("PSNR σ%g" % s for s in sigmas) + " | " +
                  " | ".join("SSIM σ%g" % s for s in sigmas) +
                  " | ms/frame | kernel ms | device MB | speed-up |",
                  "|---" * (2 * len(sigmas) + 5) + "|"]
        for r in rows:
            name = "**%s**" % r["method"] if r["kind"] == "ours" else r["method"]
            ms = fmt_ms(r["ms"]) + (" (%s)" % r["time_note"] if r["time_note"] else "")
            lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                name, " | ".join(fmt_num(r["psnr"].get(s)) for s in sigmas),
                " | ".join(fmt_num(r["ssim"].get(s), "%.4f") for s in sigmas), ms,
                fmt_ms(r["kernel_ms"]), fmt_num(r["peak_mb"], "%.0f"),
                ratio_text(rows, r) if r["kind"] == "ours" else ""))
        lines.append("")
    lines += ["Notes on the peers: " + "; ".join("%s: %s" % (k, v) for k, v in notes.items() if v)
              + ".", ""]
    if meta.get("not_run"):
        lines += ["Not run: " + "; ".join(meta["not_run"]) + ".", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))
    return "\n".join(lines)


def write_plot(path, records, sigmas, title, sizes):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no matplotlib: no plot")
        return False
    tasks = summarise(records, sigmas)
    names = [t for t in TASKS if t in tasks]
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 5), squeeze=False)
    for ax, task in zip(axes[0], names):
        for r in tasks[task].values():
            if r["ms"] is None or not r["psnr"]:
                continue
            ours = r["kind"] == "ours"
            ax.scatter(r["ms"], r["psnr20"], marker="o" if ours else "s",
                       color="tab:red" if ours else "tab:blue", s=40 if ours else 30)
            ax.annotate(r["method"] + ("*" if r["time_note"] else ""), (r["ms"], r["psnr20"]),
                        fontsize=7, xytext=(4, 2), textcoords="offset points")
        ax.set_xscale("log")
        size = sizes.get(task)
        ax.set_xlabel("time per %sframe (ms, log scale)" % (size + " " if size else ""))
        ax.set_ylabel("PSNR at sigma 20 (dB)")
        ax.set_title(TASK_TITLES[task])
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title + "   (red: ours; blue: peers; *: time scaled from a crop)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def update_doc(doc, name, text, png):
    begin, end = "<!-- bench:%s -->" % name, "<!-- /bench:%s -->" % name
    body = "%s\n![PSNR against time per frame](%s)\n\n%s\n%s" % (begin, png, text.strip(), end)
    old = open(doc).read() if os.path.exists(doc) else ""
    if begin in old and end in old:
        new = old[:old.index(begin)] + body + old[old.index(end) + len(end):]
    else:
        new = old.rstrip("\n") + "\n\n## One-command benchmark: %s\n\n%s\n" % (name, body)
    with open(doc, "w") as f:
        f.write(new)


# ---------------------------------------------------------------- main


FIELDS = ["task", "method", "kind", "measure", "sigma", "psnr", "ssim", "param", "ms",
          "kernel_ms", "peak_mb", "time_note"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--tools", required=True, help="awgn and cltrace.so")
    ap.add_argument("--work", required=True)
    ap.add_argument("--device", default=None, help="OpenCL device P.D")
    ap.add_argument("--python", default=sys.executable,
                    help="python with numpy and the Python peers")
    ap.add_argument("--python-peers", default="bm3d",
                    help="comma-separated: bm3d, bm3d-cupy, bm3d-triton (or none)")
    ap.add_argument("--quick", action="store_true", help="small inputs, short search")
    ap.add_argument("--tasks", default=",".join(TASKS))
    ap.add_argument("--methods", default=None, help="regular expression on method names")
    ap.add_argument("--name", default=None, help="name of the outputs [pocl-quick, ...]")
    ap.add_argument("--out", required=True, help="folder for NAME.csv, NAME.md, NAME.png")
    ap.add_argument("--doc", default=None, help="markdown file to put the report into")
    ap.add_argument("--doc-png", default=None, help="the plot's path as the doc links it")
    ap.add_argument("--slow-ms", type=float, default=None,
                    help="time a method on a crop if a frame would take longer")
    ap.add_argument("--speed-s", type=float, default=None,
                    help="time per speed measure to aim at (seconds)")
    ap.add_argument("--reuse", action="append",
                    help="CSV of an earlier run on the same inputs whose quality rows are "
                         "taken instead of measured again (speed only)")
    ap.add_argument("--report-only", action="store_true", help="remake report and plot from CSV")
    args = ap.parse_args()

    q = args.quick
    args.speed_frames = 2 if q else 4
    if args.speed_s is None:
        args.speed_s = 2.0 if q else 3.0
    if args.slow_ms is None:
        args.slow_ms = 4000.0 if q else 15000.0
    sigmas = SIGMAS
    gray_size, colour_size = (96, 96) if q else (256, 256)
    names_gray = PHOTOS_GRAY[:2] if q else PHOTOS_GRAY
    names_colour = PHOTOS_COLOUR[:2] if q else PHOTOS_COLOUR
    names_video = PHOTOS_VIDEO[:2] if q else PHOTOS_VIDEO
    vsize, vframes = ((64, 64), 6) if q else ((128, 128), 10)
    large = (640, 480) if q else (4608, 3456)
    vlarge = (320, 240) if q else (1920, 1080)
    ff = FFmpeg(args.ffmpeg, args.device)
    name = args.name or ("quick" if q else "full")
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(args.work, exist_ok=True)
    csv_path = os.path.join(args.out, name + ".csv")
    meta_path = os.path.join(args.out, name + ".json")

    if not args.report_only:
        meta = {"date": time.strftime("%Y-%m-%d"),
                "device": device_name(ff), "cpu": cpu_name(), "quick": q,
                "command": "make bench" + (" QUICK=1" if q else ""),
                "inputs": "gray: %s (%dx%d crops); colour: %s (%dx%d); video: %s filmed by "
                          "tests/video/make_video.py (%d frames of %dx%d each)" % (
                              ", ".join(names_gray), gray_size, gray_size,
                              ", ".join(names_colour), colour_size, colour_size,
                              ", ".join(names_video), vframes, vsize[0], vsize[1]),
                "speed_inputs": "a %dx%d frame tiled from the photographs (gray; RGB for "
                                "colour) and %dx%d gray frames panning over it for video, sigma 20" % (
                                    large[0], large[1], vlarge[0], vlarge[1]),
                "speed_sizes": {"gray": "%dx%d" % large, "colour": "%dx%d" % large,
                                "video": "%dx%d" % vlarge},
                "speed_frames": args.speed_frames, "speed_s": args.speed_s, "not_run": []}
        if os.environ.get("BENCH_COMMAND"):
            meta["command"] = os.environ["BENCH_COMMAND"]
        run_benchmark(args, ff, meta, sigmas, csv_path, names_gray, names_colour, names_video,
                      gray_size, colour_size, vsize, vframes, large, vlarge)
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)
    meta = json.load(open(meta_path))
    records = list(csv.DictReader(open(csv_path)))
    text = write_report(os.path.join(args.out, name + ".md"), meta, records, sigmas, METHODS)
    png = os.path.join(args.out, name + ".png")
    have_plot = write_plot(png, records, sigmas, "%s, %s" % (meta["device"], meta["date"]),
                           meta.get("speed_sizes", {}))
    if args.doc:
        update_doc(args.doc, name, text, args.doc_png or os.path.relpath(png, os.path.dirname(args.doc))
                   if have_plot else "")
    print(text)


def run_benchmark(args, ff, meta, sigmas, csv_path, names_gray, names_colour, names_video,
                  gray_size, colour_size, vsize, vframes, large, vlarge):
    t_start = time.time()
    runner = Runner(args)
    data = skimage_data_dir(args.work)
    tasks = args.tasks.split(",")
    peers = [] if args.python_peers == "none" else args.python_peers.split(",")
    methods = [m for m in METHODS
               if (m.kind != "python" or m.package in peers)
               and (args.methods is None or re.search(args.methods, m.name))]
    have = set(re.findall(r"^ \S+ (\w+)\s", ff.run(["-filters"]).decode(), re.M))
    for m in list(methods):
        filt = m.name.split(" ")[0]
        if m.kind != "python" and filt not in have:
            meta["not_run"].append("%s (not in this ffmpeg)" % m.name)
            methods.remove(m)
    if "nlmeans_vulkan" not in have:
        meta["not_run"].append("nlmeans_vulkan (no Vulkan in this ffmpeg)")

    with open(csv_path, "w", newline="") as f:
        out = csv.DictWriter(f, FIELDS)
        out.writeheader()
        for task in tasks:
            if task == "gray":
                clip = image_task(ff, args.tools, data, args.work, names_gray, gray_size, "gray",
                                  sigmas, 1000)
                speed_in = (large_frame(ff, args.tools, data, args.work, large[0], large[1],
                                        "gray", 20.0), "gray") + large
            elif task == "colour":
                clip = image_task(ff, args.tools, data, args.work, names_colour, colour_size,
                                  "rgb24", sigmas, 2000)
                speed_in = (large_frame(ff, args.tools, data, args.work, large[0], large[1],
                                        "rgb24", 20.0), "rgb24") + large
            else:
                clip = video_task(ff, args.tools, data, args.work, names_video, vsize[0],
                                  vsize[1], vframes, sigmas)
                speed_in = (large_video(ff, args.tools, data, args.work, vlarge[0], vlarge[1],
                                        1 + args.speed_frames, 20.0), "gray") + vlarge
            for m in methods:
                if task not in m.tasks:
                    continue
                t0 = time.time()
                best = {}
                try:
                    for sigma in sigmas:
                        p, s, param = runner.quality(m, task, clip, sigma)
                        best[sigma] = param
                        out.writerow({"task": task, "method": m.name, "kind": m.kind,
                                      "measure": "quality", "sigma": "%g" % sigma,
                                      "psnr": "%.4f" % p, "ssim": "%.5f" % s,
                                      "param": "" if param is None else "%g" % param})
                    param = best.get(20.0) or 20.0
                    ms, kernel, mem, note = runner.speed(m, task, speed_in[0], speed_in[1],
                                                         speed_in[2], speed_in[3], param)
                    out.writerow({"task": task, "method": m.name, "kind": m.kind,
                                  "measure": "speed", "ms": "%.4f" % ms,
                                  "kernel_ms": "" if kernel is None else "%.4f" % kernel,
                                  "peak_mb": "" if mem is None else "%.2f" % mem,
                                  "time_note": note, "param": "%g" % param})
                    f.flush()
                    log("%s %s: %s; %.4g ms/frame%s (%.0f s)" % (
                        task, m.name, ", ".join("%g: %s" % kv for kv in best.items()), ms,
                        " " + note if note else "", time.time() - t0))
                except Exception as e:  # noqa: BLE001 (reported, the run goes on)
                    log("NOT RUN %s %s: %s" % (task, m.name, str(e)[-600:]))
                    meta["not_run"].append("%s on %s (%s)" % (
                        m.name, task, str(e).strip().splitlines()[-1][:200] if str(e).strip() else "failed"))
    log("benchmark: %.0f s" % (time.time() - t_start))


if __name__ == "__main__":
    main()
