#!/bin/bash
#
# Two-channel (semi-planar) formats and hwmap, on a device that can carry
# them (not PoCL, which has no two-channel images), for each filter:
# - nv12 must give the same samples as yuv420p, and p016 as yuv420p16
#   (and nv16, nv24, p216, p416 as yuv422p, yuv444p, yuv422p16, yuv444p16),
#   since the filter treats the interleaved U and V channels as the planes
#   of the planar format; p010 must run and stay within one 10-bit step of
#   the p016 result;
# - reading the output through hwmap (mode=read) must give the bytes that
#   hwdownload gives.
#
#   FFMPEG=... OPENCL_DEVICE=1.0 tests/semiplanar.sh    (make check-gpu)

. "$(dirname "$0")/lib.sh"
SRC420="testsrc2=s=160x90:r=5:d=1.2,format=yuv420p,noise=alls=25:allf=t"
SRC=$SRC420

# run FILTER FORMAT OUTPUT_FORMAT FILE [READ]: the filter on FORMAT frames,
# read back with hwdownload (or READ), converted to OUTPUT_FORMAT
run() {
    local read=${5:-hwdownload}
    ff $DEV -f lavfi -i "$SRC" \
        -vf "format=$2,hwupload,$1,$read,format=$2,format=$3" \
        -f rawvideo -y "$TMP/$4"
}

check_same() {
    RUN=$((RUN + 1))
    if [ -s "$TMP/$2" ] && cmp -s "$TMP/$2" "$TMP/$3"; then
        ok "$1: $2 = $3"
    else
        fail "$1: $2 differs from $3 (or is empty)"
    fi
}

for filter in nlmeans_gpu=sigma=20 bm3d_gpu=sigma=20 vbm3d_gpu=sigma=20; do
    name=${filter%%=*}
    run "$filter" yuv420p   yuv420p   yuv420p.raw
    run "$filter" nv12      yuv420p   nv12.raw
    check_same "$name" nv12.raw yuv420p.raw
    run "$filter" yuv420p16 yuv420p16 yuv420p16.raw
    run "$filter" p016      yuv420p16 p016.raw
    check_same "$name" p016.raw yuv420p16.raw
    run "$filter" nv12      nv12      nv12-download.raw
    run "$filter" nv12      nv12      nv12-map.raw hwmap=mode=read
    check_same "$name" nv12-map.raw nv12-download.raw
    run "$filter" p016      p016      p016-native.raw
    RUN=$((RUN + 1))
    if run "$filter" p010 p010 p010.raw && [ -s "$TMP/p010.raw" ]; then
        maxdiff=$(python3 -c "
import struct
a = open('$TMP/p010.raw', 'rb').read(); b = open('$TMP/p016-native.raw', 'rb').read()
va = struct.unpack('<%dH' % (len(a) // 2), a); vb = struct.unpack('<%dH' % (len(b) // 2), b)
print(max(abs((x >> 6) - round(y / 64.0)) for x, y in zip(va, vb)) if len(a) == len(b) else 99999)")
        if [ "$maxdiff" -le 1 ]; then
            ok "$name: p010 within $maxdiff step of p016"
        else
            fail "$name: p010 differs from p016 by $maxdiff 10-bit steps"
        fi
    else
        fail "$name: p010 did not run"
    fi
    # the 4:2:2 and 4:4:4 semi-planar formats, 8 and 16 bits, from a source
    # in the planar format (swscale's 4:2:0 to nv16 and to yuv422p upsample
    # the chroma differently)
    for pair in nv16/yuv422p nv24/yuv444p p216/yuv422p16 p416/yuv444p16; do
        SRC="testsrc2=s=160x90:r=5:d=1.2,format=${pair#*/},noise=alls=25:allf=t"
        run "$filter" "${pair#*/}" "${pair#*/}" planar.raw
        run "$filter" "${pair%/*}" "${pair#*/}" "${pair%/*}.raw"
        check_same "$name" "${pair%/*}.raw" planar.raw
    done
    SRC=$SRC420
done
summary semiplanar.sh checks
