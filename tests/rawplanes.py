#!/usr/bin/env python3
"""The MD5 of each component of raw video frames, read byte for byte (no
conversion, which swscale does not always do exactly at 16 bits):

    tests/rawplanes.py FORMAT WxH FILE [--planar PLANAR OUT]

prints one line per component, "NAME MD5", in the order R G B Y U V A of
those the format has, each over the component's samples of every frame;
with --planar, writes the frames instead to OUT in the planar format
PLANAR, of the same sample size and of components FORMAT has (the same
subsampling). FORMAT: one of the formats of tests/formats.sh.
"""

import hashlib
import sys

# planar: the planes' components in memory order, with the chroma
# subsampling (log2 of width, height) of the chroma planes
PLANAR = {
    'gray': ('Y', 0, 0), 'gray16le': ('Y', 0, 0),
    'gbrp': ('GBR', 0, 0), 'gbrp16le': ('GBR', 0, 0),
    'gbrap': ('GBRA', 0, 0), 'gbrap16le': ('GBRA', 0, 0),
    'yuv420p': ('YUV', 1, 1), 'yuv422p': ('YUV', 1, 0),
    'yuv444p': ('YUV', 0, 0), 'yuv440p': ('YUV', 0, 1),
    'yuv411p': ('YUV', 2, 0),
    'yuvj440p': ('YUV', 0, 1), 'yuvj411p': ('YUV', 2, 0),
    'yuv420p16le': ('YUV', 1, 1), 'yuv422p16le': ('YUV', 1, 0),
    'yuv444p16le': ('YUV', 0, 0),
    'yuva420p': ('YUVA', 1, 1), 'yuva422p': ('YUVA', 1, 0),
    'yuva444p': ('YUVA', 0, 0),
    'yuva420p16le': ('YUVA', 1, 1), 'yuva422p16le': ('YUVA', 1, 0),
    'yuva444p16le': ('YUVA', 0, 0),
}
# packed: the components of a pixel in memory order
PACKED = {
    'rgba': 'RGBA', 'bgra': 'BGRA', 'argb': 'ARGB', 'abgr': 'ABGR',
    'rgba64le': 'RGBA', 'bgra64le': 'BGRA', 'vuya': 'VUYA', 'ayuv': 'AYUV',
    'ya8': 'YA', 'ya16le': 'YA',
}


def sample_bytes(fmt):
    return 2 if '16' in fmt or fmt.endswith('64le') else 1


def frames(fmt, width, height, data):
    """The frames of raw video: for each, the bytes of each component."""
    size = sample_bytes(fmt)
    out = []
    if fmt in PACKED:
        order = PACKED[fmt]
        pixel = len(order) * size
        frame = width * height * pixel
        for f in range(0, len(data) - frame + 1, frame):
            comps = {name: bytearray() for name in order}
            for p in range(f, f + frame, pixel):
                for i, name in enumerate(order):
                    comps[name] += data[p + i * size:p + (i + 1) * size]
            out.append(comps)
        return out
    frame = sum(w * h * size for _, w, h in planar_planes(fmt, width, height))
    for f in range(0, len(data) - frame + 1, frame):
        comps, p = {}, f
        for name, w, h in planar_planes(fmt, width, height):
            comps[name] = data[p:p + w * h * size]
            p += w * h * size
        out.append(comps)
    return out


def planar_planes(fmt, width, height):
    """The planes of a planar format: component, width, height."""
    order, sw, sh = PLANAR[fmt]
    cw, ch = -(-width >> sw), -(-height >> sh)
    return [(name, width, height) if name in 'RGBYA' else (name, cw, ch)
            for name in order]


def main():
    fmt, size, path = sys.argv[1:4]
    width, height = (int(v) for v in size.split('x'))
    with open(path, 'rb') as f:
        video = frames(fmt, width, height, f.read())
    if len(sys.argv) > 4:
        # --planar FORMAT OUT: the frames in a planar format
        planar, out = sys.argv[5:7]
        with open(out, 'wb') as f:
            for comps in video:
                for name, _, _ in planar_planes(planar, width, height):
                    f.write(comps[name])
        return
    for name in 'RGBYUVA':
        if video and name in video[0]:
            print(name, hashlib.md5(b''.join(c[name] for c in video)).hexdigest())


if __name__ == '__main__':
    main()
