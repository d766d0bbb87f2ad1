"""The C tools of tests/tools and tests/model (make build/tests/NAME),
from the folder given to the tests as --tools."""

import os
import subprocess


def tool(tools, name):
    return os.path.join(tools, name)


def awgn(tools, src, dst, sigma, seed, gain=None, cache=False):
    """Exact noise through awgn: sigma on the 8-bit scale, with gain the
    Poisson-Gaussian noise of variance gain * x + sigma^2. cache: kept when
    dst exists already (written under another name, then renamed, so that
    an interrupted run leaves no half file). Returns dst."""
    if cache and os.path.exists(dst):
        return dst
    cmd = [tool(tools, "awgn"), "-sigma", str(sigma), "-seed", str(seed)]
    if gain:
        cmd += ["-gain", str(gain)]
    out = dst + ".tmp" if cache else dst
    subprocess.run(cmd + [src, out], check=True)
    if cache:
        os.replace(out, dst)
    return dst


def cmpimg(tools, a, b):
    """cmpimg's report line on two images, and its fields (maxdiff,
    differing, psnr, ...) as text."""
    p = subprocess.run([tool(tools, "cmpimg"), a, b], stdout=subprocess.PIPE, check=True)
    line = p.stdout.decode().strip()
    return line, dict(kv.split("=", 1) for kv in line.split())
