#!/usr/bin/env python3
"""Several GPU denoisers at once on one OpenCL device, in one ffmpeg
process: every output must be, frame for frame (pts, duration, size, MD5 of
the pixels), what the same denoiser gives alone.

  split      one graph: hwupload, split into nlmeans_gpu (temporal),
             bm3d_gpu and vbm3d_gpu, three outputs
  same       one graph: split into two bm3d_gpu of different strength
  chain      one graph: nlmeans_gpu then vbm3d_gpu on the same OpenCL
             frames; alone: nlmeans_gpu to a raw file, vbm3d_gpu on it
  two -vf    two graphs: two outputs, each with its own -vf (vbm3d_gpu,
             temporal nlmeans_gpu), from one input
  two -filter_complex
             two graphs: two -filter_complex options on the same input
             stream (bm3d_gpu and vbm3d_gpu)

The input: N (default 7) noisy 48x32 yuv420p testsrc2 frames. The outputs
are framemd5 lists; each must have N frames, and equal the one of the
denoiser run alone.

Usage: instances.py [--ffmpeg PATH] [--device P.D] [--frames N] [--work DIR]
                    [--keep]
Environment: FFMPEG and OPENCL_DEVICE, as for the other tests.
Standard library only.
"""

import argparse
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import ffmpeg  # noqa: E402
from testlib.report import Tally, log  # noqa: E402
from testlib.tmp import add_work_options, work_dir  # noqa: E402

NLM = "nlmeans_gpu=sigma=15:past=1:future=2"
BM3D = "bm3d_gpu=sigma=15"
BM3D_STRONG = "bm3d_gpu=sigma=40:estim=basic"
VBM3D = "vbm3d_gpu=sigma=15:past=2:future=2"
FMT = "yuv420p"


class Test:
    def __init__(self, args, tmp):
        self.args = args
        self.dev = ffmpeg.hw_args(args.device, "gpu")
        self.src = ("testsrc2=s=48x32:r=25,trim=end_frame=%d,"
                    "noise=alls=20:allf=t,format=%s" % (args.frames, FMT))
        self.tmp = tmp
        self.tally = Tally()
        self.solo = {}

    def ffmpeg(self, argv):
        cmd = [self.args.ffmpeg] + ffmpeg.QUIET + ["-y"] + self.dev + argv
        r = ffmpeg.run(cmd, timeout=300, stdout=False)
        if r.timed_out:
            return cmd, "timed out"
        if r.rc:
            return cmd, "exit %d: %s" % (r.rc, r.err.strip()[-500:])
        return cmd, None

    def frames(self, path):
        """The (pts, duration, size, md5) of each frame of a framemd5 file."""
        return ffmpeg.framemd5_frames(path)

    def out(self, name):
        return os.path.join(self.tmp, name + ".framemd5")

    def run_solo(self, key, filt):
        path = self.out("solo-" + key)
        cmd, err = self.ffmpeg(["-f", "lavfi", "-i", self.src, "-vf",
                                "hwupload,%s,hwdownload,format=%s" % (filt, FMT),
                                "-f", "framemd5", path])
        got = self.frames(path)
        if err or not got or len(got) != self.args.frames:
            log("FAIL %s alone: %s\n    %s" % (filt, err or "%s frames" % (
                len(got) if got else 0), shlex.join(cmd)))
            sys.exit(1)
        self.solo[key] = got

    def check(self, name, cmd, err, outputs):
        """outputs: [(file, solo key)]"""
        self.tally.cases += 1
        problems = []
        if err:
            problems.append("ffmpeg failed: %s" % err)
        for path, key in outputs:
            got = self.frames(path)
            want = self.solo[key]
            if got is None:
                problems.append("%s: no output" % key)
            elif len(got) != self.args.frames:
                problems.append("%s: %d frames for %d" % (key, len(got), self.args.frames))
            elif got != want:
                k = [i for i in range(len(got)) if got[i] != want[i]][0]
                problems.append("%s: frame %d is %s, alone %s" % (key, k, got[k], want[k]))
        if problems:
            self.tally.fail("%s: %s\n    %s" % (name, "; ".join(problems), shlex.join(cmd)))
        else:
            self.tally.ok("%s: %s" % (name, ", ".join(
                "%s %d frames as alone" % (key, self.args.frames) for _, key in outputs)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ffmpeg.add_options(ap, from_env=True)
    ap.add_argument("--frames", type=int, default=7)
    add_work_options(ap)
    args = ap.parse_args()
    with work_dir(args.work, "instances.", args.keep) as tmp:
        return run(Test(args, tmp))


def run(t):
    for key, filt in (("nlmeans", NLM), ("bm3d", BM3D), ("bm3d-strong", BM3D_STRONG),
                      ("vbm3d", VBM3D)):
        t.run_solo(key, filt)
    # the chain alone: nlmeans_gpu to a raw file, vbm3d_gpu on it
    raw = os.path.join(t.tmp, "nlmeans.yuv")
    cmd, err = t.ffmpeg(["-f", "lavfi", "-i", t.src, "-vf",
                         "hwupload,%s,hwdownload,format=%s" % (NLM, FMT), "-f", "rawvideo", raw])
    path = t.out("solo-chain")
    cmd2, err2 = t.ffmpeg(["-f", "rawvideo", "-pix_fmt", FMT, "-s", "48x32", "-framerate", "25",
                           "-i", raw, "-vf", "hwupload,%s,hwdownload,format=%s" % (VBM3D, FMT),
                           "-f", "framemd5", path])
    t.solo["chain"] = t.frames(path)
    if err or err2 or not t.solo["chain"] or len(t.solo["chain"]) != t.args.frames:
        log("FAIL chain alone: %s\n    %s\n    %s" % (err or err2, shlex.join(cmd), shlex.join(cmd2)))
        return 1

    d = "hwdownload,format=%s" % FMT
    o = t.out
    cmd, err = t.ffmpeg([
        "-f", "lavfi", "-i", t.src, "-filter_complex",
        "[0:v]hwupload,split=3[a][b][c];[a]%s,%s[oa];[b]%s,%s[ob];[c]%s,%s[oc]"
        % (NLM, d, BM3D, d, VBM3D, d),
        "-map", "[oa]", "-f", "framemd5", o("split-a"),
        "-map", "[ob]", "-f", "framemd5", o("split-b"),
        "-map", "[oc]", "-f", "framemd5", o("split-c")])
    t.check("one graph, split into three denoisers", cmd, err,
            [(o("split-a"), "nlmeans"), (o("split-b"), "bm3d"), (o("split-c"), "vbm3d")])

    cmd, err = t.ffmpeg([
        "-f", "lavfi", "-i", t.src, "-filter_complex",
        "[0:v]hwupload,split[a][b];[a]%s,%s[oa];[b]%s,%s[ob]" % (BM3D, d, BM3D_STRONG, d),
        "-map", "[oa]", "-f", "framemd5", o("same-a"),
        "-map", "[ob]", "-f", "framemd5", o("same-b")])
    t.check("one graph, two bm3d_gpu", cmd, err,
            [(o("same-a"), "bm3d"), (o("same-b"), "bm3d-strong")])

    cmd, err = t.ffmpeg([
        "-f", "lavfi", "-i", t.src, "-vf", "hwupload,%s,%s,%s" % (NLM, VBM3D, d),
        "-f", "framemd5", o("chain")])
    t.check("one graph, nlmeans_gpu then vbm3d_gpu", cmd, err, [(o("chain"), "chain")])

    cmd, err = t.ffmpeg([
        "-f", "lavfi", "-i", t.src,
        "-vf", "hwupload,%s,%s" % (VBM3D, d), "-f", "framemd5", o("vf-a"),
        "-vf", "hwupload,%s,%s" % (NLM, d), "-f", "framemd5", o("vf-b")])
    t.check("two graphs (two -vf)", cmd, err,
            [(o("vf-a"), "vbm3d"), (o("vf-b"), "nlmeans")])

    cmd, err = t.ffmpeg([
        "-f", "lavfi", "-i", t.src,
        "-filter_complex", "[0:v]hwupload,%s,%s[x]" % (BM3D, d),
        "-filter_complex", "[0:v]hwupload,%s,%s[y]" % (VBM3D, d),
        "-map", "[x]", "-f", "framemd5", o("fc-a"),
        "-map", "[y]", "-f", "framemd5", o("fc-b")])
    t.check("two graphs (two -filter_complex)", cmd, err,
            [(o("fc-a"), "bm3d"), (o("fc-b"), "vbm3d")])

    return t.tally.summary("instances.py")


if __name__ == "__main__":
    sys.exit(main())
