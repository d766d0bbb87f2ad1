#!/usr/bin/env python3
"""Durations, a non-square sample aspect ratio and frame side data through
the GPU denoisers, the temporal ones included, at the start and the end of
the stream.

The input: MAXN tiny PNG frames written here (32x24 RGB, patterned, with a
pHYs chunk for a sample aspect ratio of 16:11, a cLLi chunk whose MaxCLL
and MaxFALL change from frame to frame, an mDCv chunk whose maximum
luminance changes from frame to frame, an sTER chunk on odd frames only and
a tEXt chunk frame=f<n>), read with a display matrix (-display_rotation 90
-noautorotate), given irregular timestamps (time base 1/1000, pts 1000 + 40 n
+ (7 n^2 mod 13)), where ffmpeg has setsar another non-square sample aspect
ratio (64:45), uploaded, denoised, downloaded. What showinfo and
metadata=print say of every output frame (pts, duration, SAR, side data:
display matrix, content light level, mastering display, stereo 3D; frame
metadata; not the checksums) must equal what they say of the same graph
without the denoiser, for N frames in, N in NS, for bm3d_gpu, nlmeans_gpu
and, with the temporal windows of tests/frames.sh (past/future 0/0, 1/1,
4/4, 2/0 causal, 0/3), nlmeans_gpu and vbm3d_gpu.

The reference itself is checked first: N frames, each with its own MaxCLL,
a display matrix, the SAR, a duration, its tEXt metadata, and stereo 3D on
odd frames only, so that the comparison cannot pass on frames without them.

Frame durations are the same for every frame (40 ms): this ffmpeg has no
filter or demuxer here that sets different durations frame by frame. Before
FFmpeg 8.0, setpts cleared them, and 5.1's frames have none: there they are
not compared.

Usage: sidedata.py [--ffmpeg PATH] [--device P.D] [--ns 1,2,3,5,9,12]
                   [--work DIR] [--keep]
Environment: FFMPEG and OPENCL_DEVICE, as for the other tests.
Standard library only.
"""

import argparse
import os
import re
import shlex
import struct
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import ffmpeg  # noqa: E402
from testlib.report import Tally, log  # noqa: E402
from testlib.tmp import add_work_options, work_dir  # noqa: E402

WINDOWS = ["0/0", "1/1", "4/4", "2/0c", "0/3"]
W, H = 32, 24


def chunk(tag, data):
    return (struct.pack(">I", len(data)) + tag + data +
            struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff))


def write_png(path, n):
    """Frame n: a pattern with pseudo-random noise, and its chunks."""
    seed = 12345 + n
    rows = []
    for y in range(H):
        row = bytearray(b"\0")
        for x in range(W):
            for c in range(3):
                seed = (seed * 1103515245 + 12345) & 0x7fffffff
                v = (x * 7 + y * 5 + c * 60 + n * 3) % 200 + 28 + (seed >> 16) % 25 - 12
                row.append(max(0, min(255, v)))
        rows.append(bytes(row))
    data = b"\x89PNG\r\n\x1a\n"
    data += chunk(b"IHDR", struct.pack(">IIBBBBB", W, H, 8, 2, 0, 0, 0))
    data += chunk(b"pHYs", struct.pack(">IIB", 16, 11, 0))
    data += chunk(b"cLLi", struct.pack(">II", (100 + n) * 10000, (50 + n) * 10000))
    data += chunk(b"mDCv", struct.pack(">8H2I", 35400, 14600, 8500, 39850, 6550,
                                        2300, 15635, 16450, (1000 + n) * 10000, 50))
    if n % 2:
        data += chunk(b"sTER", bytes([n // 2 % 2]))
    data += chunk(b"tEXt", b"frame\0f%d" % n)
    data += chunk(b"IDAT", zlib.compress(b"".join(rows)))
    data += chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


# FRAMES=software: software frames into the denoisers, which upload and
# download them themselves (default: through hwupload and hwdownload)
SOFTWARE = os.environ.get("FRAMES", "opencl") == "software"


def graph(n, denoiser, setsar):
    denoise = (denoiser + "," if denoiser else "") + "format=yuv420p"
    if not SOFTWARE:
        denoise = "hwupload," + denoise.replace("format=yuv420p", "hwdownload,format=yuv420p")
    return ("trim=end_frame=%d,settb=1/1000,setpts=1000+N*40+mod(N*N*7\\,13),"
            "format=yuv420p,%s%s,showinfo,metadata=print"
            % (n, "setsar=64/45," if setsar else "", denoise))


DROP = re.compile(r" (checksum|plane_checksum|mean|stdev):(\[[^]]*\]|[^ ]*)")


# The side data of the input, as showinfo names it (FFmpeg 5.1: "stereoscopic
# information"), and how many of the first n frames carry it.
SIDE_DATA = [("display matrix", r"displaymatrix: rotation of", lambda n: n),
             ("content light level", r"Content light level metadata", lambda n: n),
             ("mastering display", r"Mastering display metadata", lambda n: n),
             ("stereo 3D", r"Stereo 3D|stereoscopic information", lambda n: n // 2)]

# -display_rotation, where this ffmpeg has it (not in FFmpeg 5.1)
ROTATION = []


def describe(args, dev, tmp, n, denoiser, setsar):
    """(what showinfo then metadata=print say, or None, the command, stderr)"""
    cmd = [args.ffmpeg, "-nostdin", "-nostats", "-hide_banner", "-loglevel", "info"] + dev + ROTATION + [
        "-framerate", "25",
        "-i", os.path.join(tmp, "f%03d.png"), "-vf", graph(n, denoiser, setsar),
        "-f", "null", "-"]
    p = ffmpeg.run(cmd, timeout=300, stdout=False)
    if p.timed_out:
        return None, cmd, "timed out"
    if p.rc != 0:
        return None, cmd, p.err
    lines = []
    for f in ("showinfo", "metadata"):
        pre = re.compile(r"^\[Parsed_%s_\d+ @ [^]]*\] ?(.*)$" % f)
        for line in p.err.splitlines():
            m = pre.match(line)
            if m and not m.group(1).startswith("config "):
                lines.append(re.sub(r" +", " ", DROP.sub("", m.group(1))))
    return lines, cmd, p.err


def check_reference(lines, n, sar, durations, side_data):
    """None, or what the reference lacks."""
    text = "\n".join(lines)
    # FFmpeg 5.1's frames have no duration, nor does its showinfo print one
    frames = [(k, re.search(r"duration: *(\d+) ", rest).group(1) if durations else "", sar)
              for k, rest, sar in re.findall(r"^n: *(\d+) pts: *\d+ (.*)sar:(\S+)", text, re.M)
              if not durations or re.search(r"duration: *(\d+) ", rest)]
    if len(frames) != n:
        return "%d frames, not %d" % (len(frames), n)
    if (durations and any(d == "0" for _, d, _ in frames)) or any(s != sar for _, _, s in frames):
        return "durations or SAR not as set: %s" % frames
    cll = re.findall(r"Content light level metadata: MaxCLL=(\d+)", text)
    if "content light level" in side_data and cll != [str(100 + k) for k in range(n)]:
        return "content light levels %s" % cll
    for name, pattern, count in SIDE_DATA:
        found = len(re.findall(pattern, text))
        if name in side_data and found != count(n):
            return "%d %s, not %d" % (found, name, count(n))
    if re.findall(r"^frame=(f\d+)$", text, re.M) != ["f%d" % k for k in range(n)]:
        return "frame metadata missing"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ffmpeg.add_options(ap, from_env=True)
    ap.add_argument("--ns", default="1,2,3,5,9,12")
    add_work_options(ap)
    args = ap.parse_args()
    ns = [int(v) for v in args.ns.split(",")]
    dev = ffmpeg.hw_args(args.device, "gpu")
    with work_dir(args.work, "sidedata.", args.keep) as tmp:
        return run(args, dev, tmp, ns)


def run(args, dev, tmp, ns):
    for k in range(max(ns)):
        write_png(os.path.join(tmp, "f%03d.png" % k), k)
    setsar = ffmpeg.has_filter(args.ffmpeg, "setsar")
    sar = "64/45" if setsar else "16/11"
    if not setsar:
        log("note: no setsar in this ffmpeg; the SAR is the PNG frames' 16:11 only")

    # what this ffmpeg makes of the frames: FFmpeg 5.1 has no -display_rotation,
    # and its PNG decoder reads neither cLLi nor mDCv
    p = subprocess.run([args.ffmpeg, "-hide_banner", "-h", "full"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    if re.search(r"^ *-display_rotation\b", p.stdout, re.M):
        ROTATION.extend(["-noautorotate", "-display_rotation", "90"])
    p = subprocess.run([args.ffmpeg, "-nostdin", "-hide_banner"] + ROTATION +
                       ["-framerate", "25", "-i", os.path.join(tmp, "f%03d.png"),
                        "-frames:v", "2", "-vf", "showinfo", "-f", "null", "-"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       universal_newlines=True)
    side_data = [name for name, pattern, _ in SIDE_DATA if re.search(pattern, p.stderr)]
    for name, _, _ in SIDE_DATA:
        if name not in side_data:
            log("note: this ffmpeg gives the frames no %s: not among what is compared" % name)
    if not side_data:
        log("FAIL no side data on the input frames")
        return 1

    # before FFmpeg 8.0, setpts cleared every frame's duration
    p = subprocess.run([args.ffmpeg, "-nostdin", "-hide_banner", "-framerate", "25", "-i",
                        os.path.join(tmp, "f000.png"), "-vf", "settb=1/1000,setpts=PTS,showinfo",
                        "-f", "null", "-"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       universal_newlines=True)
    durations = re.search(r"duration: *[1-9]", p.stderr) is not None
    if not durations:
        log("note: this ffmpeg's setpts clears the frames' durations (or they have none): "
            "not compared")

    tally = Tally()
    refs = {}
    for n in ns:
        lines, cmd, err = describe(args, dev, tmp, n, "", setsar)
        why = "ffmpeg failed: %s" % err.strip()[-400:] if lines is None else \
            check_reference(lines, n, sar, durations, side_data)
        if why:
            tally.fail("reference N=%d: %s\n    %s" % (n, why, shlex.join(cmd)))
            return 1
        refs[n] = lines
    tally.ok("references: N = %s, SAR %s, duration %s, %s, metadata"
        % (",".join(map(str, ns)), sar, "40" if durations else "not compared",
           ", ".join(side_data).replace("stereo 3D", "stereo 3D on odd frames")))

    configs = [("bm3d_gpu", "bm3d_gpu=sigma=12"), ("nlmeans_gpu", "nlmeans_gpu=sigma=12")]
    for f in ("nlmeans_gpu", "vbm3d_gpu"):
        for w in WINDOWS:
            past, future = w.rstrip("c").split("/")
            opts = "sigma=12:past=%s:future=%s" % (past, future)
            if w.endswith("c"):
                opts += ":causal=1"
            configs.append((f, "%s=%s" % (f, opts)))

    for name, denoiser in configs:
        failed = tally.failed
        for n in ns:
            tally.cases += 1
            lines, cmd, err = describe(args, dev, tmp, n, denoiser, setsar)
            if lines is None:
                tally.fail("%s N=%d: ffmpeg failed: %s\n    %s" % (
                    denoiser, n, err.strip().splitlines()[-1:] or "", shlex.join(cmd)))
                continue
            if lines != refs[n]:
                diff = [(a, b) for a, b in zip(refs[n], lines) if a != b]
                tally.fail("%s N=%d: %d lines, %d in the reference; first difference:"
                           % (denoiser, n, len(lines), len(refs[n])))
                if diff:
                    log("    want %s\n    got  %s" % diff[0])
                log("    %s" % shlex.join(cmd))
        if tally.failed == failed:
            tally.ok("%s: N = %s, durations, SAR, side data and metadata kept"
                     % (denoiser, ",".join(map(str, ns))))
    return tally.summary("sidedata.py")


if __name__ == "__main__":
    sys.exit(main())
