#!/usr/bin/env python3
"""Randomised robustness test of the GPU denoisers (nlmeans_gpu, bm3d_gpu,
vbm3d_gpu).

Each case draws, from a seeded generator (case K of seed S is the same on
every machine), one filter, a frame size (1 to 300 each way, mostly small),
a pixel format among those the filters accept (the list the filters print
when they refuse a format; two-channel formats, which PoCL cannot download,
are left out), option values (names, ranges and named constants parsed from
`ffmpeg -h filter=NAME`; mostly in range, some out of range or not numbers),
sometimes a timeline (enable=between(n,A,B)), and 1 to 6 noisy testsrc2
frames, and runs

  ffmpeg -init_hw_device opencl=gpu[:DEV] -filter_hw_device gpu
         -f lavfi -i testsrc2=...,noise=...,format=F
         -vf hwupload,FILTER=OPTS,hwdownload,format=F -f rawvideo -

with a time limit. A case passes when

  * ffmpeg exits 0 with exactly as many frames as went in, of the input's
    size, where the components the planes option leaves out, the frames the
    timeline disables and the low bits of MSB formats equal the input's,
    and with moderate settings each filtered plane stays close to the
    input's (mean and mean absolute difference; see sane_plane);
  * or ffmpeg exits non-zero, without a signal, without 'Assertion ...
    failed' on stderr, with a message naming the problem: the option's name
    for a value out of range or not a number (which must fail), hwupload's
    message for a size the format's chroma subsampling does not divide
    (OpenCL frames cannot hold those), otherwise an error logged by the
    filter itself that is one of the documented refusals of a valid
    configuration (ALLOWED_REFUSALS: a constraint between options, a
    device limit). Any other error of the filter ("Failed to enqueue
    kernel", "Kernel failed", ...) fails the case.

Every third random case (K divisible by 3) that passes on a planar format
with variants (VARIANTS: the same samples with an alpha plane or channel,
packed, or semi-planar; nv12, nv16 and nv24 only where the device carries
two-channel images, GPUs; ya8 and ya16 likewise) runs again through one of
them, the ((K / 3) mod n)-th of the n the device carries (format=V before
hwupload, hwdownload into it) and must give the bytes of the planar
run's output turned into it (swscale's conversions both ways are exact
for these): the colour samples of the planar run, and alpha as it came in;
the draw itself does not change, so case K of seed S stays the same
everywhere. So the formats tests/formats.sh checks at one size also meet
random sizes (odd and tiny ones among them), options, timelines and
runtime commands. Likewise every third case with K mod 3 = 1 that passes
runs again on software frames (no hwupload or hwdownload: the filter
moves the frames itself, tests/swframes.sh) and must give the same bytes:
with K mod 6 = 1 on the device given to ffmpeg, with K mod 6 = 4 on the
filter's own device, ffmpeg given none (the device option naming --device;
without --device, the filter's default device: ffmpeg's -init_hw_device
then takes the only device there is, refusing to choose among several).

A timeout, a signal, an assertion, a wrong frame count, an accepted value
out of range or a refusal without a message fails the test; each failure
prints the command that reproduces it.

Cases 0 to 14 are fixed shapes, each with each filter: 1xN, Nx1, 7x7, 8x8
and odd WxH. Some cases also change a runtime option with sendcmd at a
later frame. The regression cases r0, r1, ... (REGRESSIONS: cases that
found bugs) run first in every mode.

Usage: robustness.py [--ffmpeg PATH] [--device P.D] [--seed S]
                     [--cases N | --short] [--first K] [--jobs J]
                     [--case K ...] [--timeout T] [-v]
--first K runs cases K to K+N-1 (and, when K > 0, no regression cases), so
that a long run can be made in chunks; --jobs J runs J cases at once.
Environment: FFMPEG and OPENCL_DEVICE, as for the other tests.
Standard library only.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shlex
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import ffmpeg as tl  # noqa: E402
from testlib.images import samples as raw_samples  # noqa: E402
from testlib.report import log  # noqa: E402

FILTERS = ["nlmeans_gpu", "bm3d_gpu", "vbm3d_gpu"]
DEFAULT_SEED = 1905
DEFAULT_CASES = 300
SHORT_CASES = 60
SHAPES = ["1xN", "Nx1", "7x7", "8x8", "odd"]
# the timeline option is drawn on its own (Case.enable)
# enable: the timeline has tests of its own; device: an OpenCL device name
# (P.D), which the cases give through -init_hw_device instead
SKIP_OPTIONS = {"enable", "device"}

OPT_RE = re.compile(r"^   ([A-Za-z0-9_]+)\s+<(\w+)>\s+(\S+)\s?(.*)$")
CONST_RE = re.compile(r"^     ([A-Za-z0-9_]+)\s+(-?\d+)\s+\S+")


# ---------------------------------------------------------------------------
# What the binary says: options and formats


class Option:
    def __init__(self, name, typ, flags, lo, hi, default, desc):
        self.name, self.typ, self.lo, self.hi = name, typ, lo, hi
        self.default, self.desc = default, desc
        # T: can be changed while running (a command)
        self.runtime = len(flags) > 9 and flags[9] == "T"
        self.consts = []

    def __repr__(self):
        return "%s <%s> [%s, %s] %s" % (self.name, self.typ, self.lo, self.hi,
                                        [c for c, _ in self.consts])


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def filter_options(ffmpeg, name):
    """The options of filter NAME: [Option]; exits when the filter is
    missing or a numeric option has no parsable range."""
    text = tl.filter_help(ffmpeg, name)
    if text is None:
        sys.exit("FAIL %s: no such filter in %s" % (name, ffmpeg))
    opts, cur = [], None
    for line in text.splitlines():
        m = OPT_RE.match(line)
        if m:
            oname, typ, flags, desc = m.groups()
            r = re.search(r"\(from (\S+) to (\S+)\)", desc)
            d = re.search(r"\(default ([^)]*)\)\s*$", desc)
            lo, hi = (number(r.group(1)), number(r.group(2))) if r else (None, None)
            if typ == "boolean":
                lo, hi = 0, 1
            if typ in ("int", "float", "double", "int64") and (lo is None or hi is None):
                sys.exit("FAIL %s: cannot parse the range of option %s: %r"
                         % (name, oname, line))
            cur = Option(oname, typ, flags, lo, hi, d.group(1) if d else None, desc)
            opts.append(cur)
            continue
        m = CONST_RE.match(line)
        if m and cur is not None:
            cur.consts.append((m.group(1), int(m.group(2))))
    if not opts:
        sys.exit("FAIL %s: no options parsed from ffmpeg -h filter=%s" % (name, name))
    return opts


def supported_formats(ffmpeg, dev, name):
    """The formats filter NAME accepts: those it lists when it refuses
    grayf16le (half floats, which the OpenCL hwcontext carries; frames of
    zeros, since swscale makes none)."""
    cmd = [ffmpeg] + tl.QUIET + dev + [
        "-f", "rawvideo", "-pix_fmt", "grayf16le", "-s", "16x16", "-i", "/dev/zero",
        "-vf", "hwupload,%s,hwdownload,format=grayf16le" % name, "-frames:v", "1",
        "-f", "null", "-"]
    p = tl.run(cmd, timeout=120, stdout=False)
    m = re.search(r"Supported formats: ([^\n]*)\.", p.err)
    if p.rc == 0 or not m:
        sys.exit("FAIL %s: grayf16le not refused with the list of supported formats:\n%s\n%s"
                 % (name, shlex.join(cmd), p.err[-2000:]))
    return [f.strip() for f in m.group(1).split(",")]


class Layout:
    """Planes of a planar format as rawvideo stores them: (w, h) scale,
    bytes per sample, plane of each component, MSB shift."""

    PATTERN = r"^(gray|yuvj?(4[0-4][0-4])p|gbrp)(\d+)?(msb)?(le)?$"

    @staticmethod
    def known(fmt):
        """Whether the format is one of the planar ones without alpha."""
        m = re.match(Layout.PATTERN, fmt)
        return bool(m) and not (m.group(5) is None and m.group(3) is not None)

    def __init__(self, fmt):
        self.fmt = fmt
        m = re.match(Layout.PATTERN, fmt)
        if not self.known(fmt):
            raise ValueError("no layout known for pixel format %s: teach "
                             "tests/robustness.py (class Layout)" % fmt)
        kind, sub, depth, msb = m.group(1), m.group(2), m.group(3), m.group(4)
        self.bytes = 2 if depth else 1
        self.depth = int(depth) if depth else 8
        self.shift = 16 - self.depth if msb else 0
        self.maxval = (1 << (8 * self.bytes)) - 1
        self.log2w = self.log2h = 0
        if kind == "gray":
            self.comp_plane = [0]
            self.rgb = False
        elif kind == "gbrp":
            self.comp_plane = [2, 0, 1]     # R, G, B in planes 2, 0, 1
            self.rgb = True
        else:
            self.comp_plane = [0, 1, 2]
            self.rgb = False
            self.log2w, self.log2h = {
                "444": (0, 0), "422": (1, 0), "420": (1, 1), "440": (0, 1),
                "411": (2, 0), "410": (2, 2)}[sub]

    def planes(self, w, h):
        """[(width, height)] of each plane."""
        cw = -(-w >> self.log2w)
        ch = -(-h >> self.log2h)
        if len(self.comp_plane) == 1:
            return [(w, h)]
        if self.rgb:
            return [(w, h)] * 3
        return [(w, h), (cw, ch), (cw, ch)]

    def fits(self, w, h):
        """Whether OpenCL frames of this size exist (chroma exact)."""
        return w % (1 << self.log2w) == 0 and h % (1 << self.log2h) == 0


# The formats holding the samples of a planar one otherwise: chroma
# interleaved, an alpha plane or channel added (255 or 65535 on the way in,
# dropped on the way out), or the channels packed. swscale converts each
# way exactly (checked on noisy frames; not so between yuvj440p or yuvj411p
# and their yuv formats, nor gbrap16 and gbrp16), so a case gives the same
# bytes through them.
VARIANTS = {
    "gray": ["ya8"],
    "gray16le": ["ya16le"],
    "yuv420p": ["nv12", "yuva420p"],
    "yuv422p": ["nv16", "yuva422p"],
    "yuv444p": ["nv24", "yuva444p", "vuya", "ayuv"],
    "yuv420p16le": ["yuva420p16le"],
    "yuv422p16le": ["yuva422p16le"],
    "yuv444p16le": ["yuva444p16le"],
    "gbrp": ["gbrap", "rgba", "bgra", "argb", "abgr"],
    "gbrp16le": ["rgba64le", "bgra64le"],
}


def usable_variants(ffmpeg, dev, listed):
    """{planar format: [its VARIANTS that every filter lists ('listed') and
    the device uploads and downloads]} (not two-channel images on PoCL, nor
    the image formats it lacks), and the variants left out."""
    usable, left_out = {}, []
    for planar, variants in VARIANTS.items():
        for v in variants:
            p = v in listed and tl.run(
                [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error"] + dev +
                ["-f", "lavfi", "-i", "color=s=16x16,format=" + v, "-frames:v", "1",
                 "-vf", "hwupload,hwdownload,format=" + v, "-f", "null", "-"], 60)
            if p and p.rc == 0:
                usable.setdefault(planar, []).append(v)
            else:
                left_out.append(v)
    return usable, left_out


def variant_of(k, fmt, variants):
    """The variant case K runs through too, or None: every third case,
    the ((K / 3) mod n)-th of the n variants of its format."""
    options = variants.get(fmt)
    if not options or str(k).startswith("r") or int(k) % 3:
        return None
    return options[(int(k) // 3) % len(options)]


def usable_formats(ffmpeg, dev, filters):
    """The layouts of the planar formats every filter lists, and the names
    of the others (two-channel, with alpha, packed or float): drawn only as
    variants of planar ones (VARIANTS), tests/formats.sh checking the
    floats."""
    lists = [supported_formats(ffmpeg, dev, f) for f in filters]
    common = [f for f in lists[0] if all(f in l for l in lists[1:])]
    for f, l in zip(filters, lists):
        if l != lists[0]:
            log("note %s lists other formats: %s" % (f, ", ".join(l)))
    semi = [f for f in common if re.match(r"^(nv\d\d|p\d\d\d)(le|be)?$", f)]
    alpha = [f for f in common if f not in semi and not Layout.known(f)]
    fmts = [f for f in common if f not in semi and f not in alpha]
    log("formats: %s" % ", ".join(fmts))
    log("not drawn (two-channel, alpha, packed or float: variants of planar "
        "formats or tests/formats.sh): %s" % ", ".join(semi + alpha))
    return {f: Layout(f) for f in fmts}, semi + alpha


# ---------------------------------------------------------------------------
# Cases


class Case:
    pass


def fmt_float(v):
    s = "%.3f" % v
    s = s.rstrip("0").rstrip(".")
    return s if s not in ("-0", "") else "0"


def draw_dim(rng):
    u = rng.random()
    if u < 0.08:
        return rng.randint(1, 3)
    if u < 0.60:
        return rng.randint(4, 24)
    if u < 0.85:
        return rng.randint(25, 64)
    if u < 0.95:
        return rng.randint(65, 160)
    return rng.randint(161, 300)


def in_range_value(rng, opt):
    """A value inside the option's range, as text."""
    if opt.consts and rng.random() < 0.5:
        return rng.choice(opt.consts)[0]
    lo, hi = opt.lo, opt.hi
    if opt.typ == "boolean":
        return rng.choice(["0", "1", "true", "false"])
    if opt.typ in ("int", "int64"):
        lo, hi = int(lo), int(hi)
        pows = [1 << k for k in range(0, 31) if lo <= (1 << k) <= hi]
        if "power of two" in opt.desc and rng.random() < 0.85:
            return str(rng.choice(pows + [0] if lo <= 0 else pows))
        u = rng.random()
        if u < 0.40:
            v = rng.randint(lo, min(hi, lo + 7))
        elif u < 0.65:
            v = rng.randint(lo, hi)
        elif u < 0.80:
            v = rng.choice([lo, hi])
        else:
            v = rng.choice(pows) if pows else rng.randint(lo, hi)
        return str(v)
    u = rng.random()
    if u < 0.35:
        a, b = max(lo, 0.0), min(hi, 50.0)
        v = rng.uniform(a, b) if a < b else lo
    elif u < 0.60:
        v = rng.uniform(lo, hi)
    elif u < 0.80:
        v = rng.choice([lo, hi])
    else:
        v = rng.uniform(lo, lo + (hi - lo) * 0.05)
    return fmt_float(min(max(v, lo), hi))


def out_of_range_value(rng, opt):
    """A value outside the option's range, as text."""
    lo, hi = opt.lo, opt.hi
    step = 1 if opt.typ in ("int", "int64", "boolean") else rng.choice([0.5, 1, 100])
    if rng.random() < 0.5:
        v = lo - step
    else:
        v = hi + step
    if rng.random() < 0.2:
        v = rng.choice([-1e9, 1e9])
    return str(int(v)) if opt.typ in ("int", "int64", "boolean") else fmt_float(v)


GARBAGE = ["abc", "inf", "-inf", "nan", "1..2", "sigma", "0x", "1-", ""]


def fvalue(c, name, default):
    """Option NAME of case c as a number, DEFAULT where absent or not a
    finite number."""
    try:
        v = float(c.values.get(name, default))
    except ValueError:
        return default
    return v if abs(v) < 1e12 else default


def window_frames(case, name):
    """How many frames of the window a temporal filter holds."""
    if name not in ("nlmeans_gpu", "vbm3d_gpu"):
        return 1
    default = 4 if name == "vbm3d_gpu" else 0
    past = max(0, int(fvalue(case, "past", default)))
    future = max(0, int(fvalue(case, "future", default)))
    if case.values.get("causal") in ("1", "true"):
        future = 0
    return past + future + 1


def cost(case):
    """A rough estimate of the work of a case, in operations, so that large
    frames go with light settings (COST_LIMIT: about 5 s on PoCL, 2 cores)."""
    o, w, h = case.values, case.w, case.h
    px = w * h * case.frames * 1.5
    def iv(name, default):
        v = int(fvalue(case, name, default))
        return v if v > 0 else default
    frames = min(window_frames(case, case.filter), case.frames)
    if case.filter == "nlmeans_gpu":
        r = iv("r", 21)
        p = min(iv("p", 8), w, h)
        step = max(1, min(iv("step", 4), p))
        per = min(r, w) * min(r, h) * p * p / (step * step)
        per += iv("n", 16) * p * p / (step * step) * 4
        return px * per * frames
    ref = o.get("preset") in ("ref", "1")
    steps = []
    for s in ("", "2"):
        rng_ = iv("range" + s, (39 if ref else 21) if case.filter == "bm3d_gpu" else 7)
        bstep = iv("bstep" + s, (3 if ref else 4) if case.filter == "bm3d_gpu" else (6 if not s else 4))
        group = iv("group" + s, (16 if not s else 32) if ref else 8)
        per = min(rng_, w) * min(rng_, h) * 64
        if case.filter == "vbm3d_gpu":
            pr = iv("prange" + s, 5)
            per += (frames - 1) * iv("perframe", 2) * pr * pr * 64
        per += group * 64 * 16
        steps.append(per / (bstep * bstep))
    return px * sum(steps) * 1.0


COST_LIMIT = 4e9


# The only refusals of a configuration whose options are each in range,
# each with the message it must log (regular expression) and where it is
# documented; any other error of the filter fails the case.
ALLOWED_REFUSALS = [
    (r"^group2? \(\d+\) must be a power of two",
     "bm3d_gpu, vbm3d_gpu: group and group2 are powers of two (their option help)"),
    (r"^step \(\d+\) must not exceed the (chroma )?patch size",
     "nlmeans_gpu: step no larger than p and pc (doc/nlmeans_gpu.texi)"),
    (r"^sigma must be from 0 to 255, auto \(-1\) or curve \(-2\)",
     "sigma between -2 and 0 other than auto (-1) and curve (-2)"),
    (r"^band=\d+ is too small for patches of \d+",
     "nlmeans_gpu: a band holds at least the rows of one patch"),
    (r"^sigma cannot change from or to auto or curve while filtering",
     "runtime command: sigma=auto or curve is chosen at start"),
    (r"^Frames of \d+x\d+ are too large|^The OpenCL device refused a buffer of \d+ bytes",
     "device limits: the largest allocation, the device's memory"),
]


def allowed_refusal(line):
    """Whether a filter's error line is a documented refusal."""
    return any(re.search(pattern, line) for pattern, _ in ALLOWED_REFUSALS)


# Cases that found bugs, run first in every mode (rK): filter, WxH, format,
# frames, options, the option that must be refused as out of range (where
# its range changed since), and optionally the noise's strength and seed
# (10 and 1 otherwise).
REGRESSIONS = [
    # kaiser once in range (0 to 20) but above about 11.5: the final estimate was
    # black where the Kaiser window's weights are small (all of it at 20);
    # since then kaiser stops at 5 and these values are refused
    ("bm3d_gpu", "16x16", "gray", 1, "kaiser=20", "kaiser"),
    ("bm3d_gpu", "24x37", "yuv422p", 1, "group=4:kaiser=12.409:search=direct", "kaiser"),
    ("vbm3d_gpu", "32x32", "yuv420p", 3, "kaiser=15:past=1:future=1", "kaiser"),
    # the largest accepted value must give a sane picture
    ("bm3d_gpu", "16x16", "gray", 1, "kaiser=5", None),
    ("vbm3d_gpu", "32x32", "yuv420p", 3, "kaiser=5:past=1:future=1", None),
    # planes smaller than a block were extended by repeating their last
    # column and row, which pulled the output towards the last sample
    # (cases 4307 and 8793 of the 10,000-case run); now they are mirrored
    # (with those cases' noise: strength, seed)
    ("bm3d_gpu", "2x8", "yuv420p", 2, "preset=fast:sigma=30.605:csigma=9.826", None,
     21, 220781570),
    ("vbm3d_gpu", "2x2", "yuvj444p", 3,
     "bstep=2:color=planes:estim=1:future=4:hdthr=4.666:prange=8:sigma=19.797", None,
     37, 777508634),
]


def regression_case(i, filters, formats):
    name, size, fmt, frames, opts, refused = REGRESSIONS[i][:6]
    noise, noise_seed = REGRESSIONS[i][6:] or (10, 1)
    c = Case()
    c.k, c.filter, c.shape, c.fmt, c.frames = "r%d" % i, name, None, fmt, frames
    c.w, c.h = (int(v) for v in size.split("x"))
    c.values = dict(kv.split("=", 1) for kv in opts.split(":"))
    c.expect, c.bad_option, c.enable, c.command = "any", None, None, None
    if refused:
        c.expect, c.bad_option = "fail", refused
    c.noise, c.noise_seed = noise, noise_seed
    if name not in filters or fmt not in formats:
        raise ValueError("regression case r%d: %s or %s not available" % (i, name, fmt))
    return c


def make_case(seed, k, filters, options, formats):
    rng = random.Random("%s:%d" % (seed, k))
    c = Case()
    c.k = k
    fmt_names = sorted(formats)
    if k < len(SHAPES) * len(filters):
        c.filter = filters[k % len(filters)]
        c.shape = SHAPES[k // len(filters)]
    else:
        c.filter = rng.choice(filters)
        c.shape = None

    # options
    c.values, c.expect, c.bad_option = {}, "any", None
    opts = [o for o in options[c.filter] if o.name not in SKIP_OPTIONS]
    for o in opts:
        if rng.random() < 0.35:
            c.values[o.name] = in_range_value(rng, o)
    if c.shape is None:
        u = rng.random()
        numeric = [o for o in opts if o.typ in ("int", "int64", "float", "double", "boolean")]
        if u < 0.10:
            o = rng.choice(numeric)
            c.values[o.name] = out_of_range_value(rng, o)
            c.expect, c.bad_option = "fail", o.name
        elif u < 0.14:
            o = rng.choice(numeric)
            # libavutil reads an empty boolean as 0
            c.values[o.name] = rng.choice([g for g in GARBAGE if g or o.typ != "boolean"])
            c.expect, c.bad_option = "fail", o.name

    # frames, format, size
    c.frames = rng.randint(1, 6)
    c.enable = None
    if rng.random() < 0.12:
        a = rng.randint(0, c.frames - 1)
        b = rng.randint(a, c.frames)
        c.enable = (a, b)
    # a command changing a runtime option at frame 1 or later (sendcmd)
    c.command = None
    runtime = [o for o in opts if o.runtime]
    if c.frames > 1 and runtime and rng.random() < 0.12:
        o = rng.choice(runtime)
        v = in_range_value(rng, o) if rng.random() < 0.8 else out_of_range_value(rng, o)
        c.command = (rng.randint(1, c.frames - 1), o.name, v)
    if c.shape:
        n = rng.randint(2, 40)
        odd = rng.choice([3, 5, 9, 11, 13, 15, 17, 21, 25, 31, 33, 45])
        w, h = {"1xN": (1, n), "Nx1": (n, 1), "7x7": (7, 7), "8x8": (8, 8),
                "odd": (odd, rng.choice([3, 5, 9, 11, 13, 15, 17, 21, 25, 31, 33, 45]))}[c.shape]
        fits = [f for f in fmt_names if formats[f].fits(w, h)]
        c.fmt = rng.choice(fits)
        c.w, c.h = w, h
    else:
        c.fmt = rng.choice(fmt_names)
        lay = formats[c.fmt]
        c.w, c.h = draw_dim(rng), draw_dim(rng)
        if rng.random() < 0.93:
            c.w = -(-c.w >> lay.log2w) << lay.log2w
            c.h = -(-c.h >> lay.log2h) << lay.log2h
        # keep it affordable on a CPU device: shrink the frames, then drop
        # frames, keeping the shape's parity
        while cost(c) > COST_LIMIT and max(c.w, c.h) > 8:
            if c.w >= c.h:
                c.w = max(8, (c.w * 2 // 3) >> lay.log2w << lay.log2w)
            else:
                c.h = max(8, (c.h * 2 // 3) >> lay.log2h << lay.log2h)
        while cost(c) > COST_LIMIT and c.frames > 1:
            c.frames -= 1
        if c.enable:
            c.enable = (min(c.enable[0], c.frames - 1), min(c.enable[1], c.frames))
    c.noise = rng.randint(0, 40)
    c.noise_seed = rng.randint(0, 1 << 30)
    return c


def source(c):
    return ("testsrc2=s=%dx%d:r=25,format=gbrp,trim=end_frame=%d,"
            "noise=alls=%d:allf=t:all_seed=%d,format=%s"
            % (c.w, c.h, c.frames, c.noise, c.noise_seed, c.fmt))


def sendcmd(c):
    """The sendcmd filter sending c's command at its frame (25 frames/s)."""
    if not c.command:
        return ""
    f, name, value = c.command
    return "sendcmd=c='%s %s %s %s'," % (fmt_float(f / 25.0 - 0.001), c.filter, name, value)


def filter_args(c):
    args = ["%s=%s" % kv for kv in sorted(c.values.items())]
    if c.enable:
        args.append("enable='between(n,%d,%d)'" % c.enable)
    return c.filter + ("=" + ":".join(args) if args else "")


def commands(ffmpeg, dev, c, variant=None, software=None):
    """The commands of the input alone and of the case; with 'variant', the
    case's frames in that format (VARIANTS), in and out; with 'software',
    software frames into and out of the filter: on ffmpeg's device dev
    (GRAPH_DEVICE), or, an OwnDevice, on the filter's own."""
    base = [ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error"]
    ref = base + ["-f", "lavfi", "-i", source(c), "-f", "rawvideo", "-"]
    upload = "format=%s,hwupload," % variant if variant else "hwupload,"
    download = ",hwdownload,format=" + (variant or c.fmt)
    filt = filter_args(c)
    if software:
        upload = download = ""
    if isinstance(software, OwnDevice):
        dev = []
        if software.option:
            filt += (":" if "=" in filt else "=") + "device=" + software.option
    run = base + dev + ["-f", "lavfi", "-i", source(c), "-vf",
                        "%s%s%s%s" % (sendcmd(c), upload, filt, download),
                        "-f", "rawvideo", "-"]
    return ref, run


GRAPH_DEVICE = "the graph's device"


class OwnDevice:
    """Software frames on the filter's own device: option, the device
    option's value (None: no option, the filter's default device)."""

    def __init__(self, option):
        self.option = option

    def __str__(self):
        return "the filter's own device (%s)" % (
            "device=" + self.option if self.option else "its default")


def as_variant(ffmpeg, c, raw, variant, timeout):
    """The raw frames 'raw' of case c (in c.fmt) turned into 'variant' by
    swscale: a Result."""
    return tl.run([ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error",
                   "-f", "rawvideo", "-pix_fmt", c.fmt, "-s", "%dx%d" % (c.w, c.h),
                   "-i", "-", "-vf", "format=" + variant, "-f", "rawvideo", "-"],
                  timeout, input=raw)


def describe(c):
    return "case %s: %s %dx%d %s, %d frame%s, %s%s" % (
        c.k, c.filter, c.w, c.h, c.fmt, c.frames, "s" if c.frames > 1 else "",
        filter_args(c), ", command %s=%s at frame %d" % (c.command[1], c.command[2], c.command[0])
        if c.command else "")


# ---------------------------------------------------------------------------
# Checks


def samples(data, lay):
    return raw_samples(data, lay.bytes)




def moderate(c):
    """Settings under which a denoised plane must keep its input's mean
    (those of the command too)."""
    if c.command:
        after = Case()
        after.filter, after.command = c.filter, None
        after.values = dict(c.values)
        after.values[c.command[1]] = c.command[2]
        if not moderate(after):
            return False
    if max(fvalue(c, "sigma", 10), fvalue(c, "csigma", -1), fvalue(c, "h", 0)) > 40:
        return False
    if c.filter == "nlmeans_gpu":
        return fvalue(c, "flat", 1.05) <= 2
    # the Wiener step's gains B^2 / (B^2 + mu2 sigma^2) shrink every
    # coefficient, the groups' means too: up to the reference's largest
    # regularisation (3.6, its refiltering) a plane keeps its mean within a
    # few levels; at mu2 96 to 100 (the option's maximum) small planes at
    # sigma 30 to 40 lost 16 to 22 levels of 255 (seed 1127, cases 2285,
    # 4160, 5449, 6623 and 8826)
    return fvalue(c, "hdthr", 2.7) <= 6 and fvalue(c, "mu2", 1) <= 4


def convex(c, lay, mask):
    """Whether every output sample is a weighted average of input samples of
    its plane: nlmeans_gpu, except in opponent colours (RGB frames, all
    three components, color auto or opponent) and with sigma=curve, whose
    output is the exact unbiased inverse of a variance-stabilising transform
    of the average: that inverse corrects the bias of the transform, and may
    leave the input's range (doc/nlmeans_gpu.texi, sigma)."""
    if c.filter != "nlmeans_gpu":
        return False
    if c.values.get("sigma") in ("curve", "-2"):
        return False
    color = c.values.get("color", "auto")
    return not (lay.rgb and mask & 7 == 7 and color in ("auto", "opponent", "2", "3"))


def sane_plane(c, out, ref, lay, plane, w, h):
    """None, or why a denoised plane is not a denoised version of ref: its
    mean moved by more than 6% of the full scale, or, for planes of 16x16
    and more, the mean absolute difference exceeds 15%."""
    a, b = samples(out, lay), samples(ref, lay)
    n = len(a)
    mo, mr = sum(a) / n, sum(b) / n
    scale = lay.maxval
    if abs(mo - mr) > 0.06 * scale:
        return ("plane %d: mean %.1f, input %.1f: more than 6%% of %d apart"
                % (plane, mo, mr, scale))
    if w >= 16 and h >= 16:
        mad = sum(abs(x - y) for x, y in zip(a, b)) / n
        if mad > 0.15 * scale:
            return ("plane %d: mean absolute difference from the input %.1f, "
                    "more than 15%% of %d" % (plane, mad, scale))
    return None


def check_output(c, lay, out, ref):
    """None, or what is wrong with a successful run's output."""
    planes = lay.planes(c.w, c.h)
    sizes = [w * h * lay.bytes for w, h in planes]
    offsets = [sum(sizes[:p]) for p in range(len(sizes))]
    fsize = sum(sizes)
    if len(ref) != fsize * c.frames:
        return "the reference has %d bytes, not %d frames of %d" % (len(ref), c.frames, fsize)
    if len(out) != len(ref):
        return ("%d frame(s) out (%d bytes) for %d in (%d bytes)"
                % (len(out) // fsize, len(out), c.frames, len(ref)))
    try:
        mask = int(c.values.get("planes", "15"), 0)
    except ValueError:
        mask = 15
    selected = {lay.comp_plane[i] for i in range(len(lay.comp_plane)) if mask >> i & 1}
    plane = lambda data, f, p: data[f * fsize + offsets[p]:f * fsize + offsets[p] + sizes[p]]
    bounds = {}
    if convex(c, lay, mask):
        for p in selected:
            vals = [samples(plane(ref, f, p), lay) for f in range(c.frames)]
            bounds[p] = (min(min(v) for v in vals), max(max(v) for v in vals))
    for f in range(c.frames):
        disabled = c.enable and not (c.enable[0] <= f <= c.enable[1])
        for p, (w, h) in enumerate(planes):
            o, r = plane(out, f, p), plane(ref, f, p)
            if disabled or p not in selected:
                if o != r:
                    why = "disabled by the timeline" if disabled else "not selected by planes"
                    return "frame %d plane %d (%s) differs from the input" % (f, p, why)
                continue
            so = samples(o, lay)
            if lay.shift:
                low = (1 << lay.shift) - 1
                bad = sum(1 for v in so if v & low)
                if bad:
                    return "frame %d plane %d: %d samples with low bits set" % (f, p, bad)
            if p in bounds:
                lo, hi = min(so), max(so)
                if lo < bounds[p][0] or hi > bounds[p][1]:
                    return ("frame %d plane %d: samples from %d to %d, outside the "
                            "input's %d to %d (a weighted average cannot be)"
                            % (f, p, lo, hi, bounds[p][0], bounds[p][1]))
            if moderate(c):
                why = sane_plane(c, o, r, lay, p, w, h)
                if why:
                    return "frame %d %s" % (f, why)
    return None


def filter_errors(c, err):
    """Error lines logged by the filter instance itself, bar libavfilter's
    generic ones."""
    pre = re.compile(r"^\[(Parsed_%s_\d+|%s) @ [^]]*\] (.*)$" % (c.filter, c.filter))
    lines = []
    for line in err.splitlines():
        m = pre.match(line)
        if m and not m.group(2).startswith("Failed to configure"):
            lines.append(m.group(2))
    return lines


def classify(c, lay, p, out, ref):
    """(outcome, detail): outcome is ok, refused, rejected-option,
    refused-upload or FAIL."""
    err, rc = p.err, p.rc
    kind, detail = tl.classify(p)
    if kind in ("timeout", "signal", "report"):
        return "FAIL", detail
    if rc == 0:
        if c.expect == "fail":
            return "FAIL", "%s=%s accepted" % (c.bad_option, c.values[c.bad_option])
        why = check_output(c, lay, out, ref)
        if why:
            return "FAIL", why
        return "ok", ""
    if not err.strip():
        return "FAIL", "exit status %d with nothing on stderr" % rc
    if c.expect == "fail":
        # FFmpeg 5.1: "Error setting option NAME to value ...", unquoted
        named = r"['\"]{0}['\"]|option {0} ".format(re.escape(c.bad_option))
        if re.search(named, err):
            first = [l for l in err.splitlines() if re.search(named, l)][0]
            return "rejected-option", re.sub(r"^\[[^]]*\] ", "", first)
        return "FAIL", "exit %d, no message naming option %s" % (rc, c.bad_option)
    if not lay.fits(c.w, c.h) and re.search(r"^\[hwupload @ [^]]*\] ", err, re.M):
        return "refused-upload", "hwupload: " + re.search(
            r"^\[hwupload @ [^]]*\] (.*)$", err, re.M).group(1)
    lines = filter_errors(c, err)
    if lines and allowed_refusal(lines[0]):
        return "refused", lines[0]
    if lines:
        return "FAIL", "refused with an error not in ALLOWED_REFUSALS: %s" % lines[0]
    return "FAIL", "exit %d without an error from %s" % (rc, c.filter)


def normalise(msg):
    """A refusal message without its numbers, to count the kinds."""
    return re.sub(r"-?\d+(\.\d+)?", "N", msg)[:90]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tl.add_options(ap, from_env=True)
    ap.add_argument("--seed", default=str(DEFAULT_SEED))
    ap.add_argument("--cases", type=int, default=DEFAULT_CASES)
    ap.add_argument("--short", action="store_true",
                    help="%d cases (make check)" % SHORT_CASES)
    ap.add_argument("--first", type=int, default=0,
                    help="number of the first random case (later chunks of a "
                    "long run leave the regression cases out)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="cases run at once")
    ap.add_argument("--case", action="append", default=[],
                    help="run only case K, or regression case rK (repeatable)")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.short:
        args.cases = SHORT_CASES

    t_start = time.time()
    dev = tl.hw_args(args.device, "gpu")
    options = {f: filter_options(args.ffmpeg, f) for f in FILTERS}
    for f in FILTERS:
        log("%s options: %s" % (f, " ".join(o.name for o in options[f])))
    try:
        formats, others = usable_formats(args.ffmpeg, dev, FILTERS)
    except ValueError as e:
        log("FAIL %s" % e)
        return 1
    variants, left_out = usable_variants(args.ffmpeg, dev, others)
    # without --device, ffmpeg's -init_hw_device takes the only device
    # there is (it refuses to choose among several), the filter's default
    own = OwnDevice(args.device or None)
    log("software frames (K mod 6 = 4): on %s" % own)
    log("variants (every third case): %s" % "; ".join(
        "%s as %s" % (f, ", ".join(v)) for f, v in sorted(variants.items())))
    if left_out:
        log("variants the device does not carry: %s" % ", ".join(left_out))

    regressions = [] if args.first else ["r%d" % i for i in range(len(REGRESSIONS))]
    ks = args.case or regressions + list(range(args.first, args.first + args.cases))
    counts = {f: {} for f in FILTERS}
    kinds = {}
    failures = []
    times = []
    rerun_details = []

    def rerun(k, c, cmd, p, detail):
        """Case k again, where it is one to run twice: through a variant
        format (variant_of) or, every third case with K mod 3 = 1, on
        software frames (on the filter's own device where K mod 6 = 4);
        its bytes against those of the first run p (turned into the
        variant). (outcome, detail, command, result)."""
        variant = variant_of(k, c.fmt, variants)
        software = None
        if not variant and not str(k).startswith("r") and int(k) % 3 == 1:
            software = own if int(k) % 6 == 4 else GRAPH_DEVICE
        if not variant and not software:
            return "ok", detail, cmd, p
        expected = p.out
        if variant:
            converted = as_variant(args.ffmpeg, c, p.out, variant, args.timeout)
            if converted.rc != 0:
                return "FAIL", "the output as %s: %s" % (variant, converted.err[-300:]), cmd, p
            expected = converted.out
        how = "as %s" % variant if variant else "on software frames, %s" % software
        cmd2 = commands(args.ffmpeg, dev, c, variant, software)[1]
        p2 = tl.run(cmd2, args.timeout)
        if p2.rc != 0 or p2.out != expected:
            return "FAIL", "%s: %s" % (how, "exit %d" % p2.rc if p2.rc else
                                       "other bytes than %s" % c.fmt if variant else
                                       "other bytes than through hwupload"), cmd2, p2
        return "ok", "%s too, the same bytes" % how, cmd, p

    def run_case(k):
        """(case, layout, outcome, detail, command, result) or an error."""
        try:
            if str(k).startswith("r"):
                c = regression_case(int(str(k)[1:]), FILTERS, formats)
            else:
                c = make_case(args.seed, int(k), FILTERS, options, formats)
        except ValueError as e:
            return e
        lay = formats[c.fmt]
        ref_cmd, cmd = commands(args.ffmpeg, dev, c)
        r = tl.run(ref_cmd, args.timeout)
        if r.rc != 0:
            return (c, lay, "FAIL", "the input alone failed: %s"
                    % r.err.strip()[-300:], ref_cmd, r)
        p = tl.run(cmd, args.timeout)
        outcome, detail = classify(c, lay, p, p.out, r.out)
        if outcome == "ok" and p.rc == 0:
            outcome, detail, cmd, p = rerun(k, c, cmd, p, detail)
        # the frames are checked: keep only what the summary needs
        p.out = b""
        return (c, lay, outcome, detail, cmd, p)

    def record(k, res):
        c, lay, outcome, detail, cmd, p = res
        counts[c.filter][outcome] = counts[c.filter].get(outcome, 0) + 1
        times.append((p.time, k))
        if outcome in ("refused", "rejected-option", "refused-upload"):
            key = (c.filter, outcome, normalise(detail))
            kinds[key] = kinds.get(key, 0) + 1
        if outcome == "ok" and detail:
            rerun_details.append(detail)
        line = "%-4s %s (%.1f s)%s" % ("ok" if outcome != "FAIL" else "FAIL",
                                        describe(c), p.time,
                                        ": %s %s" % (outcome, detail) if outcome != "ok" else
                                        ": " + detail if detail else "")
        if outcome == "FAIL":
            failures.append((c, detail, cmd, p.err))
            log(line)
            log("    reproduce: %s" % shlex.join(cmd))
            for l in p.err.strip().splitlines()[-6:]:
                log("    | %s" % l)
        elif args.verbose:
            log(line)

    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        results = pool.map(run_case, ks)
        for k, res in zip(ks, results):
            if isinstance(res, ValueError):
                log("FAIL %s" % res)
                failures.append(k)
                continue
            record(k, res)
    return summarise(args, ks, t_start, counts, kinds, failures, times, rerun_details)


def summarise(args, ks, t_start, counts, kinds, failures, times, rerun_details):
    elapsed = time.time() - t_start
    log("")
    log("summary, seed %s, %d cases in %.0f s:" % (args.seed, len(ks), elapsed))
    order = ["ok", "refused", "rejected-option", "refused-upload", "FAIL"]
    for f in FILTERS:
        n = sum(counts[f].values())
        log("  %-12s %3d cases: %s" % (f, n, ", ".join(
            "%d %s" % (counts[f][o], o) for o in order if counts[f].get(o))))
    software = sum(d.startswith("on software") for d in rerun_details)
    own = sum(d.startswith("on software frames, the filter's own") for d in rerun_details)
    if rerun_details:
        log("  variants: %d cases gave the bytes of their planar format, %d on "
            "software frames those through hwupload (%d on the filter's own device)"
            % (len(rerun_details) - software, software, own))
    log("  slowest: %s" % ", ".join("case %s %.1f s" % (k, t) for t, k in sorted(times)[::-1][:3]))
    log("  refusals (filter, kind, message):")
    for (f, o, msg), n in sorted(kinds.items()):
        log("    %3d %-12s %-16s %s" % (n, f, o, msg))
    log("robustness.py: %d cases, %d failed" % (len(ks), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
