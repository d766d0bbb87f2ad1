#!/bin/bash
# Several OpenCL devices (tools/test-device.sh, the filters' own device).
#
# ffmpeg's -init_hw_device opencl without P.D takes the only device there
# is and refuses to choose among several; make check then takes, through
# tools/test-device.sh, the device the filters take given none. With PoCL's
# CPU device listed twice (POCL_DEVICES), where PoCL is the first platform:
# test-device.sh names a device that ffmpeg accepts, the one the filters
# name in their log, and a software-frame denoise without a device runs
# there, and two instances of a filter in one graph, each given one of the
# two devices, both run, each on its own, with the bytes of the filter
# alone; with the machine's own devices, where ffmpeg takes a device by
# itself, test-device.sh names none. Skipped where PoCL does not double its
# device.
#
# Environment: FFMPEG (default build/ffmpeg/ffmpeg).

. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$TESTS/.." && pwd)
TEST_DEVICE="$ROOT/tools/test-device.sh"
INPUT="-f lavfi -i testsrc2=s=32x24:r=5,format=gray -frames:v 2"

# the machine's devices: nothing named where ffmpeg takes one by itself,
# though its probe finds the filters' own device (in this build: the
# probe's input must exist in the minimal ones too)
RUN=$((RUN + 1))
if ff $(dev_options probe "") $INPUT -f null - 2> "$TMP/err"; then
    named=$("$TEST_DEVICE" "$FFMPEG")
    own=$("$TEST_DEVICE" --own "$FFMPEG")
    if [ -z "$own" ]; then
        fail "one device: test-device.sh --own finds no device of the filters'"
    elif [ -z "$named" ]; then
        ok "one device: none named, ffmpeg's default taken (the filters' own: $own)"
    else
        fail "one device: test-device.sh named $named where ffmpeg takes a device by itself"
    fi
else
    skip "one device: ffmpeg does not take a device by itself here (several)"
fi

export POCL_DEVICES="pthread pthread"
if ff $(dev_options probe "") $INPUT -f null - 2> "$TMP/err" ||
   ! grep -q "More than one matching device" "$TMP/err"; then
    skip "two devices: POCL_DEVICES does not give ffmpeg several devices here"
    summary -s devices.sh
    exit
fi

RUN=$((RUN + 1))
named=$("$TEST_DEVICE" "$FFMPEG")
FF_LOGLEVEL=verbose ff $INPUT -vf nlmeans_gpu=sigma=10 -f null - 2> "$TMP/own"
own=$(sed -n 's/.*Software frames on OpenCL device \([0-9.]*\), .*: the default, no device given\./\1/p' "$TMP/own")
if [ -z "$named" ]; then
    fail "two devices: test-device.sh named none"
elif [ "$named" != "$own" ]; then
    fail "two devices: test-device.sh named $named, the filters take ${own:-none}"
elif ! ff $(dev_options probe "$named") $INPUT -vf hwupload,nlmeans_gpu=sigma=10,hwdownload,format=gray \
        -f null - 2> "$TMP/err"; then
    fail "two devices: ffmpeg refuses $named: $(tail -n 1 "$TMP/err")"
else
    ok "two devices: $named named, the filters' own, accepted by ffmpeg"
fi

# one graph, one filter on each device (software frames, the device
# option): each instance on its own device, as its log says, and each
# output the bytes of the filter alone
RUN=$((RUN + 1))
CLIP="-f lavfi -i testsrc2=s=32x24:r=5:d=0.6,format=gray"
FF_LOGLEVEL=verbose ff $CLIP -filter_complex \
    "split[a][b];[a]vbm3d_gpu=sigma=10:device=0.0[x];[b]vbm3d_gpu=sigma=10:device=0.1[y]" \
    -map "[x]" -f framemd5 "$TMP/x.md5" -map "[y]" -f framemd5 "$TMP/y.md5" 2> "$TMP/two"
devices=$(sed -n 's/.*Software frames on OpenCL device \([0-9.]*\), .*/\1/p' "$TMP/two" | sort | tr '\n' ' ')
ff $CLIP -vf vbm3d_gpu=sigma=10:device=0.1 -f framemd5 "$TMP/alone.md5" 2> "$TMP/err"
frames() { grep -v '^#' "$1"; }
if [ "$devices" != "0.0 0.1 " ]; then
    fail "two devices, one filter on each: devices '${devices}', not 0.0 and 0.1"
    show_tail 5 "$TMP/two"
elif [ "$(frames "$TMP/x.md5" | wc -l)" != 3 ] ||
     ! cmp -s <(frames "$TMP/x.md5") <(frames "$TMP/alone.md5") ||
     ! cmp -s <(frames "$TMP/y.md5") <(frames "$TMP/alone.md5"); then
    fail "two devices, one filter on each: outputs differ from the filter alone (or not 3 frames)"
else
    ok "two devices, one vbm3d_gpu on each in one graph: the bytes of the filter alone"
fi

summary -s devices.sh
