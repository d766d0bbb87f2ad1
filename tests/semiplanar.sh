#!/bin/bash
#
# Two-channel (semi-planar) formats on a device that can carry them (not
# PoCL): the output of nv12 must equal that of yuv420p, and p016 that of
# yuv420p16, sample for sample, since the filter treats the interleaved U and
# V channels as the planes of the planar format. p010 must run and stay
# within one 10-bit step of the p016 result.
#
#   FFMPEG=... OPENCL_DEVICE=1.0 tests/semiplanar.sh

set -u
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
DEV="-init_hw_device opencl=ocl${OPENCL_DEVICE:+:$OPENCL_DEVICE} -filter_hw_device ocl"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SRC="testsrc2=s=160x90:r=5:d=0.6,format=yuv420p,noise=alls=25:allf=t"
FAILED=0

run() {  # run FORMAT OUTPUT_FORMAT FILE
    "$FFMPEG" -nostdin -hide_banner -loglevel error $DEV -f lavfi -i "$SRC" \
        -vf "format=$1,hwupload,nlmeans_gpu=sigma=20,hwdownload,format=$1,format=$2" \
        -f rawvideo "$TMP/$3"
}

check_same() {
    if cmp -s "$TMP/$1" "$TMP/$2" && [ -s "$TMP/$1" ]; then
        echo "ok   $1 = $2"
    else
        echo "FAIL $1 differs from $2"
        FAILED=$((FAILED + 1))
    fi
}

run yuv420p   yuv420p   yuv420p.raw
run nv12      yuv420p   nv12.raw
check_same nv12.raw yuv420p.raw
run yuv420p16 yuv420p16 yuv420p16.raw
run p016      yuv420p16 p016.raw
check_same p016.raw yuv420p16.raw
run p016      p016      p016-native.raw
if run p010 p010 p010.raw && [ -s "$TMP/p010.raw" ]; then
    maxdiff=$(python3 -c "
import struct, sys
a = open('$TMP/p010.raw', 'rb').read(); b = open('$TMP/p016-native.raw', 'rb').read()
va = struct.unpack('<%dH' % (len(a) // 2), a); vb = struct.unpack('<%dH' % (len(b) // 2), b)
print(max(abs((x >> 6) - round(y / 64.0)) for x, y in zip(va, vb)))")
    if [ "$maxdiff" -le 1 ]; then
        echo "ok   p010 within $maxdiff step of p016"
    else
        echo "FAIL p010 differs from p016 by $maxdiff 10-bit steps"
        FAILED=$((FAILED + 1))
    fi
else
    echo "FAIL p010 did not run"
    FAILED=$((FAILED + 1))
fi
echo "semiplanar.sh: $FAILED failed"
[ $FAILED -eq 0 ]
