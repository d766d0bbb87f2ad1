#!/usr/bin/env python3
"""Run the bit-exact FATE tests (GPU_DENOISE_MD5_TEST in
tests/fate/gpu-denoise.mak) with a given ffmpeg, outside FFmpeg's tree, and
compare the frame checksums with tests/ref/fate: for a machine that has an
ffmpeg binary and an OpenCL device but no FFmpeg source tree (a GPU machine).

    tests/fate_md5.py --ffmpeg path/to/ffmpeg [--device P.D]

Prints one line per test and exits non-zero if any checksum differs.
"""

import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import ffmpeg  # noqa: E402
from testlib.report import Tally  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAK = os.path.join(ROOT, 'tests', 'fate', 'gpu-denoise.mak')
REFS = os.path.join(ROOT, 'tests', 'ref', 'fate')


def source(size, fmt8, fmt, frames, after_noise=''):
    """GPU_DENOISE_SRC of the makefile (d=1.6 for 8 frames): gbrp drawn by
    testsrc2 itself, gray16le by way of gray, as there; after_noise: a
    filter applied to the noisy 8-bit picture."""
    duration = '1.6' if frames == 8 else '0.6'
    first = '' if fmt8 == 'gbrp' else 'scale,'
    last = 'scale,format=gray,' if fmt == 'gray16le' else ''
    return (f'testsrc2=s=96x72:r=5:d={duration},{first}format={fmt8},'
            f'noise=alls=25:allf=t,{after_noise + "," if after_noise else ""}'
            f'crop={size}:0:0,{last}scale,format={fmt}')


def tests():
    """(name, filter, size, 8-bit format, format, options, frames, filter
    after the noise) of each test, and the reference each one is compared
    with."""
    text = open(MAK).read()
    refs = dict(re.findall(r'^fate-([\w-]+): REF = \$\(SRC_PATH\)/tests/ref/fate/([\w-]+)$',
                           text, re.M))
    for m in re.finditer(r'^\$\(eval \$\(call GPU_DENOISE_MD5_TEST,(.*)\)\)$', text, re.M):
        fields = re.split(r'(?<!\\),', m.group(1))
        name, filt, size, fmt8, fmt, opts, frames = fields[:7]
        after_noise = fields[7] if len(fields) > 7 else ''
        yield (name, filt, size, fmt8, fmt, opts, int(frames), after_noise,
               refs.get(name, name))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--ffmpeg', required=True)
    ap.add_argument('--device', default='')
    ap.add_argument('--match', default='', help='only the tests whose name contains this')
    args = ap.parse_args()
    tally = Tally()
    cases = [c for c in tests() if args.match in c[0]]
    tally.cases = len(cases)
    for name, filt, size, fmt8, fmt, opts, frames, after_noise, ref in cases:
        graph = (f'{source(size, fmt8, fmt, frames, after_noise)},hwupload,'
                 f'{filt}={opts},hwdownload,format={fmt}')
        cmd = [args.ffmpeg, '-nostdin', '-nostats'] + ffmpeg.hw_args(args.device) + [
               '-lavfi', graph, '-frames:v', str(frames), '-bitexact', '-f', 'framemd5', '-']
        run = ffmpeg.run(cmd)
        expected = ffmpeg.framemd5_lines(open(os.path.join(REFS, ref)))
        got = ffmpeg.framemd5_lines(run.out.decode().splitlines())
        if run.rc == 0 and got == expected:
            tally.ok(name)
        else:
            tally.fail(f'{name}: exit {run.rc}, '
                       f'{sum(a != b for a, b in zip(got, expected))} of {len(expected)} frames differ'
                       + (f'\n{run.err[-2000:]}' if run.rc else ''))
    return tally.summary('fate_md5') or (0 if cases else 1)


if __name__ == '__main__':
    sys.exit(main())
