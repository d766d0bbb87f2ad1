#!/usr/bin/env python3
"""Test videos: a natural photograph filmed by a slowly moving camera.

A scikit-image photograph is sampled along a smooth camera path, a
sub-pixel pan of 0.3 to 1.7 px/frame horizontally and 0.1 to 0.9 px/frame
vertically whose speed changes slowly, and a slow zoom of 0.2 to 0.5 % per
frame (in or out), with bicubic interpolation (Keys, a = -0.5) in pure
Python. The clean frames are the ground truth; every frame then gets exact
AWGN through tests/tools/awgn with its own fixed seed: for a camera path
seed S and a noise level sigma, n = S + 1000 * int(sigma), frame t gets the
seed n + t (gray, rgb24) or n + 3t + k for its plane k (yuv420p).

Formats: gray (the photograph decoded by ffmpeg as gray, as the other
quality tests do), rgb24, and yuv420p (RGB interpolated, clipped, then
BT.601 limited range in Python, chroma the mean of each 2x2 block; the
noise is added to each plane).

Deterministic: the path comes from random.Random(seed) (whose random() is
stable across Python versions), the interpolation uses only +, -, *, /, floor
and comparisons on doubles, so the same arguments give the same bytes.

As a module: make_sequence() returns the clean and noisy frames.
As a command:
    make_video.py --ffmpeg FFMPEG --tools DIR --out DIR [--photo camera]
                  [--size 96x96] [--frames 10] [--pix-fmt gray] [--sigmas 10,20,40]
writes <photo>-<pix_fmt>-clean.raw and <photo>-<pix_fmt>-s<sigma>.raw (raw
frames) into --out and prints the ffmpeg input options that read them.
"""

import argparse
import hashlib
import math
import os
import random
import sys

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, TESTS)
sys.path.insert(0, os.path.join(TESTS, "quality"))
from common import add_noise, skimage_data_dir  # noqa: E402
from testlib.ffmpeg import FFmpeg  # noqa: E402
from testlib.images import read_pnm, write_pnm  # noqa: E402

PIX_FMTS = ("gray", "rgb24", "yuv420p")

# camera motion, in pixels of the output frame per frame, and zoom per frame
PAN_X = (0.3, 1.7)
PAN_Y = (0.1, 0.9)
ZOOM = (0.002, 0.005)
MARGIN = 3  # photo samples kept between the path and the photo's edge


def camera_path(frames, seed):
    """The camera path, relative: a list of (x, y, scale) per frame, the
    frame centre in photo pixels (starting at 0, 0) and the photo pixels per
    frame pixel (starting at 1). Pan speeds and zoom rate move smoothly
    (smoothstep) from one random value to another over the sequence."""
    rng = random.Random(seed)

    def speed(lo, hi):
        sign = -1.0 if rng.random() < 0.5 else 1.0
        return sign * rng.uniform(lo, hi), sign * rng.uniform(lo, hi)

    vx = speed(*PAN_X)
    vy = speed(*PAN_Y)
    zoom_in = rng.random() < 0.5
    z = (rng.uniform(*ZOOM), rng.uniform(*ZOOM))
    x, y, scale = 0.0, 0.0, 1.0
    path = []
    for t in range(frames):
        path.append((x, y, scale))
        u = t / (frames - 1) if frames > 1 else 0.0
        u = u * u * (3.0 - 2.0 * u)
        x += (vx[0] + (vx[1] - vx[0]) * u) * scale
        y += (vy[0] + (vy[1] - vy[0]) * u) * scale
        rate = z[0] + (z[1] - z[0]) * u
        scale *= (1.0 - rate) if zoom_in else (1.0 + rate)
    return path


def place_path(path, pw, ph, width, height):
    """Shift a relative path so that its frames are centred on the photo;
    fails when a frame would leave it."""
    xs = [p[0] for p in path]
    ys = [p[1] for p in path]
    dx = pw / 2.0 - (min(xs) + max(xs)) / 2.0
    dy = ph / 2.0 - (min(ys) + max(ys)) / 2.0
    placed = [(x + dx, y + dy, s) for x, y, s in path]
    for x, y, s in placed:
        if (x - width / 2.0 * s < MARGIN or x + width / 2.0 * s > pw - MARGIN
                or y - height / 2.0 * s < MARGIN or y + height / 2.0 * s > ph - MARGIN):
            raise ValueError("a %dx%d frame leaves the %dx%d photograph" % (width, height, pw, ph))
    return placed


def _taps(centre, scale, n):
    """For output samples 0..n-1 around a centre: (first photo sample, the 4
    bicubic weights). Photo sample i has its centre at coordinate i."""
    taps = []
    for k in range(n):
        pos = centre + (k + 0.5 - n / 2.0) * scale - 0.5
        i = math.floor(pos)
        t = pos - i
        t2 = t * t
        t3 = t2 * t
        taps.append((i - 1, (-0.5 * t3 + t2 - 0.5 * t,
                             1.5 * t3 - 2.5 * t2 + 1.0,
                             -1.5 * t3 + 2.0 * t2 + 0.5 * t,
                             0.5 * t3 - 0.5 * t2)))
    return taps


def render(plane, pw, frame_pos, width, height):
    """One channel (bytes, pw samples per row) sampled at one camera
    position: width * height floats, row by row, not clipped."""
    cx, cy, scale = frame_pos
    xt = _taps(cx, scale, width)
    yt = _taps(cy, scale, height)
    rows = {}

    def hrow(r):
        if r not in rows:
            base = r * pw
            rows[r] = [w[0] * plane[base + i] + w[1] * plane[base + i + 1]
                       + w[2] * plane[base + i + 2] + w[3] * plane[base + i + 3]
                       for i, w in xt]
        return rows[r]

    out = []
    for j, w in yt:
        r0, r1, r2, r3 = hrow(j), hrow(j + 1), hrow(j + 2), hrow(j + 3)
        out.extend(w[0] * a + w[1] * b + w[2] * c + w[3] * d for a, b, c, d in zip(r0, r1, r2, r3))
    return out


def _clip(v):
    return 0.0 if v < 0.0 else 255.0 if v > 255.0 else v


def _byte(v):
    v = math.floor(v + 0.5)
    return 0 if v < 0 else 255 if v > 255 else int(v)


def load_photo(ff, data_dir, work, name, pix_fmt):
    """The photograph as (width, height, channel planes as bytes): gray for
    gray, R, G, B otherwise."""
    ext = "pgm" if pix_fmt == "gray" else "ppm"
    path = os.path.join(work, "photo-%s.%s" % (name, ext))
    if not os.path.exists(path):
        ff.run(["-i", os.path.join(data_dir, name + ".png"), "-vf",
                "format=" + ("gray" if pix_fmt == "gray" else "rgb24"), "-frames:v", "1",
                "-update", "1", "-y", path + ".tmp." + ext])
        os.replace(path + ".tmp." + ext, path)
    w, h, ch, samples = read_pnm(path)
    return w, h, [samples[c::ch] for c in range(ch)]


def clean_frames(photo, frames, width, height, pix_fmt, seed):
    """The clean frames (bytes each) of a photograph from load_photo()."""
    pw, ph, planes = photo
    if pix_fmt == "yuv420p" and (width % 2 or height % 2):
        raise ValueError("yuv420p needs an even width and height")
    path = place_path(camera_path(frames, seed), pw, ph, width, height)
    out = []
    for pos in path:
        chans = [render(p, pw, pos, width, height) for p in planes]
        if pix_fmt == "gray":
            out.append(bytes(_byte(v) for v in chans[0]))
        elif pix_fmt == "rgb24":
            out.append(bytes(_byte(v) for px in zip(*chans) for v in px))
        else:
            r, g, b = ([_clip(v) for v in c] for c in chans)
            y = bytes(_byte(16.0 + (65.481 * r[i] + 128.553 * g[i] + 24.966 * b[i]) / 255.0)
                      for i in range(width * height))
            cb = [128.0 + (-37.797 * r[i] - 74.203 * g[i] + 112.0 * b[i]) / 255.0
                  for i in range(width * height)]
            cr = [128.0 + (112.0 * r[i] - 93.786 * g[i] - 18.214 * b[i]) / 255.0
                  for i in range(width * height)]
            sub = []
            for c in (cb, cr):
                sub.append(bytes(_byte((c[i] + c[i + 1] + c[i + width] + c[i + width + 1]) / 4.0)
                                 for row in range(0, height, 2)
                                 for i in range(row * width, row * width + width, 2)))
            out.append(y + sub[0] + sub[1])
    return out


def _noisy_plane(tools, work, data, width, height, sigma, seed, colour=False):
    """Exact AWGN on one PGM (or PPM) image through awgn; the clean file is
    named by its content, so that add_noise's cache is always right."""
    ext = "ppm" if colour else "pgm"
    path = os.path.join(work, "clean-%s.%s" % (hashlib.sha1(data).hexdigest()[:16], ext))
    if not os.path.exists(path):
        write_pnm(path + ".tmp", width, height, data, 3 if colour else 1)
        os.replace(path + ".tmp", path)
    return read_pnm(add_noise(tools, path, sigma, seed, work))[3]


def noisy_frames(tools, work, frames, width, height, pix_fmt, sigma, seed):
    """Exact AWGN on every clean frame: frame t with the seed seed + t
    (yuv420p: plane k of frame t with seed + 3t + k)."""
    os.makedirs(work, exist_ok=True)
    out = []
    for t, frame in enumerate(frames):
        if pix_fmt == "yuv420p":
            ys = width * height
            cs = ys // 4
            planes = [(frame[:ys], width, height), (frame[ys:ys + cs], width // 2, height // 2),
                      (frame[ys + cs:], width // 2, height // 2)]
            out.append(b"".join(_noisy_plane(tools, work, d, w, h, sigma, seed + 3 * t + k)
                                for k, (d, w, h) in enumerate(planes)))
        else:
            out.append(_noisy_plane(tools, work, frame, width, height, sigma, seed + t,
                                    colour=pix_fmt == "rgb24"))
    return out


def make_sequence(ff, tools, data_dir, work, name, width, height, frames, pix_fmt, sigmas, seed):
    """Clean frames of photograph 'name' along the path of 'seed', and
    noisy versions for each sigma (noise seeds seed + 1000 * int(sigma) +
    ..., see noisy_frames). Returns (clean frames, {sigma: noisy frames})."""
    if pix_fmt not in PIX_FMTS:
        raise ValueError("pix_fmt must be one of " + ", ".join(PIX_FMTS))
    os.makedirs(work, exist_ok=True)
    clean = clean_frames(load_photo(ff, data_dir, work, name, pix_fmt), frames, width, height,
                         pix_fmt, seed)
    noisy = {s: noisy_frames(tools, work, clean, width, height, pix_fmt, s,
                             seed + 1000 * int(s))
             for s in sigmas}
    return clean, noisy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ffmpeg", required=True)
    ap.add_argument("--tools", required=True, help="folder holding the awgn tool")
    ap.add_argument("--out", required=True, help="folder for the raw videos")
    ap.add_argument("--work", default=None, help="folder for the frames as images (default: OUT/frames)")
    ap.add_argument("--photo", default="camera")
    ap.add_argument("--size", default="96x96")
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--pix-fmt", default="gray", choices=PIX_FMTS)
    ap.add_argument("--sigmas", default="10,20,40")
    ap.add_argument("--seed", type=int, default=1, help="camera path seed (noise: see above)")
    args = ap.parse_args()

    width, height = (int(v) for v in args.size.split("x"))
    sigmas = [float(s) for s in args.sigmas.split(",")] if args.sigmas else []
    os.makedirs(args.out, exist_ok=True)
    work = args.work or os.path.join(args.out, "frames")
    ff = FFmpeg(args.ffmpeg)
    clean, noisy = make_sequence(ff, args.tools, skimage_data_dir(work), work, args.photo,
                                 width, height, args.frames, args.pix_fmt, sigmas, args.seed)
    stem = os.path.join(args.out, "%s-%s" % (args.photo, args.pix_fmt))
    outputs = [(stem + "-clean.raw", clean)] + [(stem + "-s%g.raw" % s, noisy[s]) for s in sigmas]
    for path, frames in outputs:
        with open(path, "wb") as f:
            f.write(b"".join(frames))
        print(path)
    print("read with: -f rawvideo -pix_fmt %s -s %dx%d -framerate 25 -i FILE"
          % (args.pix_fmt, width, height))


if __name__ == "__main__":
    main()
