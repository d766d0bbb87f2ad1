"""Helpers of the quality tests and benchmarks: the test photographs, their
crops with exact AWGN through tests/tools/awgn, the command-line options
they share, the search of a peer's best setting. What every test shares
(running ffmpeg, images, PSNR, the table and verdict) is in tests/testlib.

Standard library only, so that the tests run on any python3.
"""

import glob
import os
import subprocess
import sys
import venv

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from testlib import ffmpeg  # noqa: E402
from testlib.images import read_pnm, write_pgm  # noqa: E402
from testlib.report import log  # noqa: E402
from testlib.tools import awgn  # noqa: E402

# Natural photographs shipped by scikit-image (Debian's python3-skimage).
PHOTOS = ["camera", "astronaut", "coffee", "chelsea", "coins", "motorcycle_left"]
# Those in colour.
COLOUR_PHOTOS = ["astronaut", "coffee", "chelsea", "motorcycle_left"]
# The seeds of the whole photographs' noise: base * sigma + index of the
# photograph (the bm3d quality test and check-reference share the files).
WHOLE_SEED_BASES = {"gray": 4000, "rgb24": 5000}


def python_with(venv_dir, requirement):
    """The python3 of the virtual environment 'venv_dir' with 'requirement'
    installed by pip (made on first use): (path, None), or (None, the
    reason) where it cannot be made or installed (no network, no wheel for
    this machine)."""
    python = os.path.join(venv_dir, "bin", "python3")
    stamp = os.path.join(venv_dir, "installed-" + requirement)
    if os.path.exists(stamp):
        return python, None
    try:
        if not os.path.exists(python):
            venv.create(venv_dir, with_pip=True)
        subprocess.run([python, "-m", "pip", "install", "-q", requirement], check=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    except (OSError, subprocess.CalledProcessError) as e:
        out = getattr(e, "stdout", None)
        return None, "pip install %s failed: %s" % (
            requirement, out.decode(errors="replace").strip().splitlines()[-1] if out else e)
    open(stamp, "w").close()
    return python, None


def add_options(ap, tools="folder holding the awgn tool", report="write the table here (markdown)"):
    """--ffmpeg, --tools, --work, --device and --report, as the Makefile
    gives them."""
    ffmpeg.add_options(ap)
    ap.add_argument("--tools", required=True, help=tools)
    ap.add_argument("--work", required=True)
    ap.add_argument("--report", default=None, help=report)


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


def crops(ff, data_dir, work, names, size, pix_fmt="gray"):
    """The centre crops of prepare_clean: their paths, and their samples."""
    paths = prepare_clean(ff, data_dir, work, names, size, pix_fmt)
    return paths, [read_pnm(p)[3] for p in paths]


def whole_photograph(ff, data_dir, work, name, pix_fmt):
    """The whole photograph 'name' as a PGM (gray) or PPM (rgb24) file, made
    once; returns its path."""
    ext = "pgm" if pix_fmt == "gray" else "ppm"
    path = os.path.join(work, "whole-%s.%s" % (name, ext))
    if not os.path.exists(path):
        ff.run(["-i", os.path.join(data_dir, name + ".png"), "-vf", "format=" + pix_fmt,
                "-frames:v", "1", "-update", "1", "-y", path])
    return path


def add_noise(tools, clean, sigma, seed, work):
    """The image 'clean' with exact AWGN (kept: made once per sigma and seed)."""
    base = os.path.basename(clean)
    out = os.path.join(work, "noisy-s%g-%d-%s" % (sigma, seed, base))
    return awgn(tools, clean, out, sigma, seed, cache=True)


def noisy_crops(tools, paths, sigma, seed, work):
    """The samples of the images 'paths' with exact AWGN (add_noise, seeds
    seed, seed + 1, ...), one after the other."""
    return b"".join(read_pnm(add_noise(tools, p, sigma, seed + i, work))[3]
                    for i, p in enumerate(paths))


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


def noisy_yuv_crop(ff, tools, photo, size, sigma, seed, work, pix_fmt="yuv420p"):
    """A centre crop of a photograph as yuv420p or yuv444p (clean), and the
    same with exact AWGN added to each plane (seeds seed, seed + 1, seed +
    2). Returns (clean, noisy) raw frames."""
    clean = ff.run(["-i", photo, "-vf", "crop=%d:%d,format=%s" % (size, size, pix_fmt),
                    "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", pix_fmt, "pipe:1"])
    c = size // 2 if pix_fmt == "yuv420p" else size
    noisy, offset = b"", 0
    for i, (w, h) in enumerate([(size, size), (c, c), (c, c)]):
        src = os.path.join(work, "%s-clean-%d.pgm" % (pix_fmt, i))
        dst = os.path.join(work, "%s-noisy-%d.pgm" % (pix_fmt, i))
        write_pgm(src, w, h, clean[offset:offset + w * h])
        offset += w * h
        noisy += read_pnm(awgn(tools, src, dst, sigma, seed + i))[3]
    return clean, noisy
