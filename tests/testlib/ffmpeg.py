"""Running ffmpeg: the binary, the OpenCL device options, a command with a
time limit and how it ended, raw frames through a filter chain, what the
binary has (filters, options, pixel formats), framemd5 lists."""

import os
import re
import subprocess
import time

DEFAULT_BINARY = "build/ffmpeg/ffmpeg"
# before the arguments of every quiet run: errors only, no keyboard
QUIET = ["-nostdin", "-hide_banner", "-loglevel", "error"]


def binary_from_env():
    """FFMPEG, as for the shell tests, or build/ffmpeg/ffmpeg."""
    return os.environ.get("FFMPEG", DEFAULT_BINARY)


def device_from_env():
    """OPENCL_DEVICE (P.D), or '' for the default device."""
    return os.environ.get("OPENCL_DEVICE", "")


def add_options(ap, from_env=False):
    """--ffmpeg and --device. from_env: their defaults are FFMPEG and
    OPENCL_DEVICE (build/ffmpeg/ffmpeg and the default device without them);
    otherwise --ffmpeg is required and --device defaults to None."""
    if from_env:
        ap.add_argument("--ffmpeg", default=binary_from_env())
        ap.add_argument("--device", default=device_from_env(), help="OpenCL device P.D")
    else:
        ap.add_argument("--ffmpeg", required=True)
        ap.add_argument("--device", default=None, help="OpenCL device P.D")


def hw_args(device=None, name="ocl"):
    """ffmpeg's options for the OpenCL device P.D (None or '': the default
    device), named 'name', as the filters' device."""
    return ["-init_hw_device", "opencl=%s%s" % (name, ":" + device if device else ""),
            "-filter_hw_device", name]


class Result:
    """How a command ended: rc (negative: killed by that signal), out
    (stdout, bytes), err (stderr, text), timed_out, timeout (the limit in
    seconds, 0 when it did not run out), time (seconds), cmd."""

    def __init__(self, cmd, rc, out, err, timeout, seconds):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        self.timeout, self.time = timeout, seconds

    @property
    def timed_out(self):
        return bool(self.timeout)


def run(cmd, timeout=None, input=None, stdout=True):
    """Run cmd; stdout captured (bytes) unless stdout is False, stderr
    captured as text. A command still running after 'timeout' seconds is
    killed: its Result has timed_out set (and rc -9)."""
    t0 = time.time()
    out = subprocess.PIPE if stdout else subprocess.DEVNULL
    try:
        p = subprocess.run(cmd, input=input, stdout=out, stderr=subprocess.PIPE,
                           timeout=timeout)
        return Result(cmd, p.returncode, p.stdout or b"",
                      p.stderr.decode("utf-8", "replace"), 0, time.time() - t0)
    except subprocess.TimeoutExpired as e:
        return Result(cmd, -9, e.stdout or b"", (e.stderr or b"").decode("utf-8", "replace"),
                      timeout, time.time() - t0)


# "Assertion ... failed at file:line" (av_assert)
ASSERTION_RE = re.compile(r"Assertion .* failed at ")
# that, or an AddressSanitizer, LeakSanitizer or UBSan report
REPORT_RE = re.compile(r"Assertion .* failed at |Sanitizer|runtime error")


def classify(r, report=ASSERTION_RE):
    """(kind, detail) of a Result, the first that applies of
      timeout  it ran out of time: "timed out after N s"
      signal   killed by a signal: "killed by signal N"
      report   stderr has an assertion (report=REPORT_RE: or a sanitizer
               report): "assertion on stderr: LINE"
      ok       exit status 0: ""
      error    a clean non-zero exit: "exit N"
    """
    if r.timed_out:
        return "timeout", "timed out after %d s" % r.timeout
    if r.rc < 0:
        return "signal", "killed by signal %d" % -r.rc
    m = report.search(r.err)
    if m:
        return "report", "assertion on stderr: %s" % r.err[m.start():m.start() + 200].splitlines()[0]
    if r.rc == 0:
        return "ok", ""
    return "error", "exit %d" % r.rc


def filter_help(binary, name):
    """The text of ffmpeg -h filter=NAME, or None when there is no such
    filter."""
    p = subprocess.run([binary, "-hide_banner", "-h", "filter=" + name],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if not re.search(r"^Filter %s$" % re.escape(name), p.stdout, re.M):
        return None
    return p.stdout


def has_filter(binary, name):
    return filter_help(binary, name) is not None


def filter_option_names(binary, name):
    """The option names of a filter, or None without such a filter."""
    text = filter_help(binary, name)
    if text is None:
        return None
    return set(re.findall(r"^\s+([A-Za-z0-9_]+)\s+<", text, re.M))


def has_pix_fmt(binary, name):
    """Whether this ffmpeg knows the pixel format."""
    p = subprocess.run([binary, "-hide_banner", "-pix_fmts"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=True)
    return re.search(r"\s%s\s" % re.escape(name), p.stdout.decode()) is not None


def framemd5_lines(lines):
    """The frame lines of a framemd5 list (its text split in lines, or an
    open file), stripped, without the comments and blank lines."""
    return [l.strip() for l in lines if l.strip() and not l.startswith("#")]


def framemd5_frames(path):
    """(pts, duration, size, md5) of each frame of a framemd5 file, or None
    when it cannot be read."""
    try:
        with open(path) as f:
            rows = framemd5_lines(f)
    except OSError:
        return None
    return [tuple(c.strip() for c in r.split(",")[2:]) for r in rows]


class FFmpeg:
    """An ffmpeg binary and the OpenCL device its filters run on."""

    def __init__(self, binary, device=None, hw_name="ocl"):
        self.binary = binary
        self.device = device
        self.hw_name = hw_name

    def hw_args(self):
        return hw_args(self.device, self.hw_name)

    def run(self, args, input_bytes=None):
        """Run quietly (QUIET, then args); returns stdout, raises
        RuntimeError (the command and the end of stderr) on failure."""
        cmd = [self.binary] + QUIET + args
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

    def has_filter(self, name):
        return has_filter(self.binary, name)

    def filter_option_names(self, name):
        return filter_option_names(self.binary, name)

    def has_pix_fmt(self, name):
        return has_pix_fmt(self.binary, name)
