"""Images and raw frames: binary PGM/PPM of 8 or 16 bits, 16-bit samples
of raw frames, PSNR."""

import array
import math
import operator
import struct
import sys


def read_pnm(path, maxval=255):
    """Read a binary PGM or PPM whose maxval is 'maxval' (255: 8 bits,
    65535: 16 bits, big-endian); return (width, height, channels, bytes)."""
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
    magic, w, h, mv = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
    if mv != maxval or magic not in (b"P5", b"P6"):
        if maxval == 255:
            sys.exit("%s: only 8-bit P5/P6 is supported" % path)
        sys.exit("%s: not a binary PGM or PPM with maxval %d" % (path, maxval))
    channels = 1 if magic == b"P5" else 3
    size = w * h * channels * (1 if maxval < 256 else 2)
    return w, h, channels, data[pos:pos + size]


def read_pnm16(path):
    """A 16-bit binary PGM or PPM: (width, height, channels, samples, the
    channels of a pixel interleaved)."""
    w, h, c, data = read_pnm(path, 65535)
    return w, h, c, list(struct.unpack(">%dH" % (len(data) // 2), data))


def write_pnm(path, width, height, data, channels=1):
    """Write 8-bit samples (channels interleaved) as a binary PGM (1
    channel) or PPM (3)."""
    with open(path, "wb") as f:
        f.write(b"P%d\n%d %d\n255\n" % (5 if channels == 1 else 6, width, height))
        f.write(data)


def write_pgm(path, width, height, data):
    """Write 8-bit samples as a binary PGM."""
    write_pnm(path, width, height, data, 1)


def write_ppm(path, width, height, data):
    """Write 8-bit RGB samples as a binary PPM."""
    write_pnm(path, width, height, data, 3)


def write_pnm16(path, width, height, samples, channels=1):
    """Write 16-bit samples (a sequence of numbers) as a binary PGM or PPM."""
    with open(path, "wb") as f:
        f.write(b"P%d\n%d %d\n65535\n" % (5 if channels == 1 else 6, width, height))
        f.write(struct.pack(">%dH" % len(samples), *samples))


def samples(data, bytes_per_sample):
    """The samples of raw native frame data: the bytes themselves for 8 bits,
    an array of 16-bit little-endian values otherwise."""
    if bytes_per_sample == 1:
        return data
    a = array.array("H")
    a.frombytes(data)
    if sys.byteorder != "little":
        a.byteswap()
    return a


# d * d at index d for d in -255 .. 255 (a negative index counts from the end)
_SQUARES = [min(i, 512 - i) ** 2 for i in range(512)]


def squared_error(a, b):
    """Sum of the squared differences of two equally long sequences of
    samples; byte strings through a table of squares (C loops only, a third
    faster than a Python loop: the quality tests compute it for every frame
    of every run)."""
    if isinstance(a, (bytes, bytearray)) and isinstance(b, (bytes, bytearray)):
        return sum(map(_SQUARES.__getitem__, map(operator.sub, a, b)))
    return sum((x - y) * (x - y) for x, y in zip(a, b))


def psnr(a, b, peak=255.0):
    """PSNR of two equally long sequences of 8-bit samples (99 when they are
    equal)."""
    if len(a) != len(b) or not a:
        raise ValueError("PSNR of sequences of %d and %d samples" % (len(a), len(b)))
    sse = squared_error(a, b)
    if sse == 0:
        return 99.0
    return 10.0 * math.log10(peak * peak * len(a) / sse)


def mean_psnr(out, clean_frames, frame_size):
    """The mean PSNR of the frames of 'out' against clean_frames, and the
    PSNR of each."""
    values = [psnr(out[i * frame_size:(i + 1) * frame_size], c) for i, c in enumerate(clean_frames)]
    return sum(values) / len(values), values


def luma_chroma_psnr(out, clean, nb_frames, luma, frame):
    """Mean PSNR of the luma and of the chroma samples of raw planar frames
    of 'frame' bytes whose first 'luma' bytes are luma."""
    ys, cs = [], []
    for i in range(nb_frames):
        o, c = out[i * frame:(i + 1) * frame], clean[i * frame:(i + 1) * frame]
        ys.append(psnr(o[:luma], c[:luma]))
        cs.append(psnr(o[luma:], c[luma:]))
    return sum(ys) / len(ys), sum(cs) / len(cs)
