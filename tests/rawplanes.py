#!/usr/bin/env python3
"""Components of raw video frames, read byte for byte (no conversion,
which swscale does not always do exactly at 16 bits), for tests/formats.sh:

    tests/rawplanes.py md5 FORMAT WxH FILE
        one line per component, "NAME MD5", in the order R G B Y U V A of
        those the format has, each over the component's samples of every
        frame;
    tests/rawplanes.py planar FORMAT WxH FILE PLANAR OUT
        the frames in the planar format PLANAR, of the same sample size and
        of components FORMAT has (the same subsampling), into OUT;
    tests/rawplanes.py widen FORMAT WxH FILE WIDE OUT [OFFSET]
        8-bit frames (gray, gbrp, gbrap, ya8) as 16-bit ones (v * 257) or
        float ones (v / 255, plus OFFSET on the colour components) of the
        same components, WIDE (planar, or yaf32le, which swscale does not
        write), into OUT;
    tests/rawplanes.py floatdiff FLOAT WxH FILE WIDE FILE2 [OFFSET]
        the largest difference between the colour samples of float frames,
        less OFFSET and clamped to 0 .. 1, and those of 16-bit frames, in
        16-bit steps.
"""

import hashlib
import struct
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
    'grayf32le': ('Y', 0, 0), 'gbrpf32le': ('GBR', 0, 0),
    'gbrapf32le': ('GBRA', 0, 0),
}
# packed: the components of a pixel in memory order
PACKED = {
    'rgba': 'RGBA', 'bgra': 'BGRA', 'argb': 'ARGB', 'abgr': 'ABGR',
    'rgba64le': 'RGBA', 'bgra64le': 'BGRA', 'vuya': 'VUYA', 'ayuv': 'AYUV',
    'ya8': 'YA', 'ya16le': 'YA', 'yaf32le': 'YA',
}


def sample_bytes(fmt):
    if 'f32' in fmt:
        return 4
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


def read(fmt, size, path):
    width, height = (int(v) for v in size.split('x'))
    with open(path, 'rb') as f:
        return frames(fmt, width, height, f.read()), width, height


def write_frames(fmt, width, height, video, path):
    """The frames into a planar format, or a packed one (PACKED)."""
    size = sample_bytes(fmt)
    with open(path, 'wb') as f:
        for comps in video:
            if fmt in PACKED:
                order = PACKED[fmt]
                for p in range(0, width * height * size, size):
                    for name in order:
                        f.write(comps[name][p:p + size])
                continue
            for name, _, _ in planar_planes(fmt, width, height):
                f.write(comps[name])


def widen(samples, wide, offset):
    if 'f32' in wide:
        return struct.pack('<%df' % len(samples),
                           *(v / 255.0 + offset for v in samples))
    return struct.pack('<%dH' % len(samples), *(v * 257 for v in samples))


def floatdiff(fvideo, gvideo, offset):
    worst = 0.0
    for fc, gc in zip(fvideo, gvideo):
        for name in fc:
            if name == 'A':
                continue
            f = struct.unpack('<%df' % (len(fc[name]) // 4), fc[name])
            g = struct.unpack('<%dH' % (len(gc[name]) // 2), gc[name])
            for a, b in zip(f, g):
                worst = max(worst, abs(min(max(a - offset, 0.0), 1.0) * 65535 - b))
    return worst


def main():
    cmd, fmt, size, path = sys.argv[1:5]
    video, width, height = read(fmt, size, path)
    if cmd == 'md5':
        for name in 'RGBYUVA':
            if video and name in video[0]:
                print(name, hashlib.md5(b''.join(c[name] for c in video)).hexdigest())
    elif cmd == 'planar':
        write_frames(sys.argv[5], width, height, video, sys.argv[6])
    elif cmd == 'widen':
        wide = sys.argv[5]
        offset = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
        video = [{name: widen(data, wide, 0.0 if name == 'A' else offset)
                  for name, data in comps.items()} for comps in video]
        write_frames(wide, width, height, video, sys.argv[6])
    elif cmd == 'floatdiff':
        offset = float(sys.argv[7]) if len(sys.argv) > 7 else 0.0
        wide, _, _ = read(sys.argv[5], size, sys.argv[6])
        print('%.4f' % floatdiff(video, wide, offset))
    else:
        sys.exit('unknown command %s' % cmd)


if __name__ == '__main__':
    main()
