"""Helpers shared by the quality tests and benchmarks: the test photographs,
exact AWGN through tests/tools/awgn, running ffmpeg on raw frames, PSNR.

Standard library only, so that the tests run on any python3.
"""

import glob
import math
import os
import shutil
import subprocess
import sys
import time

# Natural photographs shipped by scikit-image (Debian's python3-skimage).
PHOTOS = ["camera", "astronaut", "coffee", "chelsea", "coins", "motorcycle_left"]


def log(msg):
    print(msg, flush=True)


def skimage_data_dir(work):
    """Return the scikit-image data folder, downloading Debian's package
    (apt-get download + dpkg -x, nothing installed) when needed, into
    $PHOTO_CACHE if set, else into work."""
    work = os.environ.get("PHOTO_CACHE", work)
    for base in ("/usr/lib/python3/dist-packages", os.path.join(work, "skimage-pkg", "usr", "lib", "python3", "dist-packages")):
        d = os.path.join(base, "skimage", "data")
        if os.path.exists(os.path.join(d, "camera.png")):
            return d
    pkgdir = os.path.join(work, "skimage-pkg")
    dl = os.path.join(work, "skimage-deb")
    os.makedirs(dl, exist_ok=True)
    os.chmod(dl, 0o777)
    if not glob.glob(os.path.join(dl, "python3-skimage_*.deb")):
        log("downloading Debian's python3-skimage for its sample photographs")
        subprocess.run(["apt-get", "download", "python3-skimage"], cwd=dl, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deb = sorted(glob.glob(os.path.join(dl, "python3-skimage_*.deb")))[-1]
    subprocess.run(["dpkg", "-x", deb, pkgdir], check=True)
    d = os.path.join(pkgdir, "usr", "lib", "python3", "dist-packages", "skimage", "data")
    if not os.path.exists(os.path.join(d, "camera.png")):
        sys.exit("no camera.png in %s" % deb)
    return d


def read_pnm(path):
    """Read a binary 8-bit PGM or PPM; return (width, height, channels, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    fields = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            while data[pos:pos + 1] not in (b"\n", b""):
                pos += 1
            continue
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    pos += 1
    magic, w, h, maxval = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if maxval != 255 or magic not in (b"P5", b"P6"):
        sys.exit("%s: only 8-bit P5/P6 is supported" % path)
    channels = 1 if magic == b"P5" else 3
    return w, h, channels, data[pos:pos + w * h * channels]


class FFmpeg:
    def __init__(self, binary, device=None):
        self.binary = binary
        self.device = device

    def hw_args(self):
        dev = "opencl=ocl" + (":" + self.device if self.device else "")
        return ["-init_hw_device", dev, "-filter_hw_device", "ocl"]

    def run(self, args, input_bytes=None):
        cmd = [self.binary, "-nostdin", "-hide_banner", "-loglevel", "error"] + args
        p = subprocess.run(cmd, input=input_bytes, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        if p.returncode != 0:
            raise RuntimeError("ffmpeg failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                              p.stderr.decode(errors="replace")[-2000:]))
        return p.stdout

    def filter_raw(self, frames, pix_fmt, width, height, chain, opencl=False):
        """Run a filter chain over raw frames; return the raw output."""
        args = self.hw_args() if opencl else []
        args += ["-f", "rawvideo", "-pix_fmt", pix_fmt, "-s", "%dx%d" % (width, height),
                 "-i", "pipe:0", "-vf", chain, "-f", "rawvideo", "-pix_fmt", pix_fmt, "pipe:1"]
        return self.run(args, frames)


def prepare_clean(ff, data_dir, work, names, size, pix_fmt):
    """Centre crops of size x size of the photographs as PGM (gray) or PPM
    (rgb24) files; returns their paths."""
    ext = "pgm" if pix_fmt == "gray" else "ppm"
    paths = []
    for name in names:
        out = os.path.join(work, "clean-%s-%d.%s" % (name, size, ext))
        if not os.path.exists(out):
            ff.run(["-i", os.path.join(data_dir, name + ".png"), "-vf",
                    "crop=%d:%d,format=%s" % (size, size, pix_fmt), "-frames:v", "1",
                    "-update", "1", "-y", out])
        paths.append(out)
    return paths


def add_noise(tools, clean, sigma, seed, work):
    base = os.path.basename(clean)
    out = os.path.join(work, "noisy-s%g-%d-%s" % (sigma, seed, base))
    if not os.path.exists(out):
        subprocess.run([os.path.join(tools, "awgn"), "-sigma", str(sigma), "-seed", str(seed),
                        clean, out], check=True)
    return out


def psnr(a, b, peak=255.0):
    """PSNR of two equally long byte strings of 8-bit samples."""
    if len(a) != len(b) or not a:
        raise ValueError("PSNR of sequences of %d and %d samples" % (len(a), len(b)))
    hist = {}
    for x, y in zip(a, b):
        d = x - y
        hist[d] = hist.get(d, 0) + 1
    sse = sum(d * d * n for d, n in hist.items())
    if sse == 0:
        return 99.0
    return 10.0 * math.log10(peak * peak * len(a) / sse)


def mean_psnr(out, clean_frames, frame_size):
    values = [psnr(out[i * frame_size:(i + 1) * frame_size], c) for i, c in enumerate(clean_frames)]
    return sum(values) / len(values), values


def search_parameter(evaluate, factors, scale, lo, hi, refinements=2):
    """Best value of a peer's strength parameter: a grid scale * factors,
    extended by the grid's step beyond whichever end is best until the best
    value has a worse value tried on each side (or is the bound lo or hi),
    then 'refinements' halvings around the best point. Returns
    (value, score, {value: score})."""
    tried = {}

    def ev(v):
        v = round(min(max(v, lo), hi), 2)
        if v not in tried:
            tried[v] = evaluate(v)
        return tried[v]

    for f in factors:
        ev(scale * f)
    grid = (factors[1] - factors[0]) * scale
    while True:
        best = max(tried, key=tried.get)
        if best == min(tried) and best > lo:
            ev(best - grid)
        elif best == max(tried) and best < hi:
            ev(best + grid)
        else:
            break
    step = grid / 2
    for _ in range(refinements):
        best = max(tried, key=tried.get)
        ev(best - step)
        ev(best + step)
        step /= 2
    best = max(tried, key=tried.get)
    return best, tried[best], tried


def search_choice(evaluate, values, start):
    """Best of an ordered list of a peer's discrete settings (a block size,
    a search range): from values[start] and its neighbours, moving towards
    the better side until the best has a worse (or no) neighbour on each
    side. Returns (value, score, {value: score})."""
    tried = {}

    def ev(i):
        if values[i] not in tried:
            tried[values[i]] = evaluate(values[i])
        return tried[values[i]]

    i = start
    while True:
        here = ev(i)
        left = ev(i - 1) if i > 0 else None
        right = ev(i + 1) if i + 1 < len(values) else None
        if left is not None and left > here and (right is None or left >= right):
            i -= 1
        elif right is not None and right > here:
            i += 1
        else:
            return values[i], here, tried


def write_pgm(path, width, height, data):
    """Write 8-bit samples as a binary PGM."""
    with open(path, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (width, height))
        f.write(data)


def noisy_yuv420p(ff, tools, photo, size, sigma, seed, work):
    """A centre crop of a photograph as yuv420p (clean), and the same with
    exact AWGN added to each plane (seeds seed, seed + 1, seed + 2).
    Returns (clean, noisy) raw frames."""
    clean = ff.run(["-i", photo, "-vf", "crop=%d:%d,format=yuv420p" % (size, size),
                    "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p", "pipe:1"])
    planes = [(0, size, size), (size * size, size // 2, size // 2),
              (size * size * 5 // 4, size // 2, size // 2)]
    noisy = b""
    for i, (offset, w, h) in enumerate(planes):
        src = os.path.join(work, "yuv-clean-%d.pgm" % i)
        dst = os.path.join(work, "yuv-noisy-%d.pgm" % i)
        write_pgm(src, w, h, clean[offset:offset + w * h])
        subprocess.run([os.path.join(tools, "awgn"), "-sigma", str(sigma), "-seed",
                        str(seed + i), src, dst], check=True)
        noisy += read_pnm(dst)[3]
    return clean, noisy


def finish(name, lines, report, failures, t_start):
    """Print the table of 'lines' (also written to 'report' when given) and
    the run time, then exit with status 1 listing the failures, if any."""
    table = "\n".join(lines)
    print()
    print(table)
    print("\n(%.0f s)" % (time.time() - t_start))
    if report:
        with open(report, "w") as f:
            f.write(table + "\n")
    if failures:
        for f in failures:
            print("FAIL: " + f)
        sys.exit(1)
    print("%s: PASS" % name)
