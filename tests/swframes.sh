#!/bin/bash
#
# Software frames into the denoisers: with an OpenCL device given to the
# filter (-filter_hw_device), each filter takes the software formats it
# supports, uploads and downloads the frames itself and outputs software
# frames of the input's format. Their bytes must equal those of the same
# filter between hwupload and hwdownload, for every filter and every format
# family the device can carry (frame MD5s), with the timeline and a runtime
# command too; OpenCL frames in still give OpenCL frames out. Without a
# device, the filter creates its own (the first GPU, else the first one).
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"

# md5 OUT FORMAT FRAMES GRAPH: frame MD5s of the graph on noisy testsrc2
# frames of SIZE (48x40 unless set)
md5() {
    local out=$1 fmt=$2 n=$3 graph=$4
    rm -f "$out"
    ff -t 300 -y $DEV \
        -f lavfi -i "testsrc2=s=${SIZE:-48x40}:r=5,trim=end_frame=$n,format=yuv444p,noise=alls=20:allf=t,format=$fmt" \
        -vf "$graph" -f framemd5 "$out" 2> "$TMP/err"
}

# same NAME FORMAT FRAMES FILTER: software path against the hwupload path
same() {
    local name=$1 fmt=$2 n=$3 filter=$4
    RUN=$((RUN + 1))
    if ! md5 "$TMP/hw" "$fmt" "$n" "hwupload,$filter,hwdownload,format=$fmt"; then
        fail "$name: the hwupload path failed: $(tail -n 1 "$TMP/err")"
    elif ! md5 "$TMP/sw" "$fmt" "$n" "$filter"; then
        fail "$name: software frames failed: $(tail -n 1 "$TMP/err")"
    elif ! cmp -s <(grep -v '^#' "$TMP/hw") <(grep -v '^#' "$TMP/sw"); then
        fail "$name: software frames give other bytes than hwupload"
    elif [ "$(grep -vc '^#' "$TMP/sw")" != "$n" ]; then
        fail "$name: $(grep -vc '^#' "$TMP/sw") frames out of $n"
    else
        ok "$name: $n frames, same bytes"
    fi
}

# The format families; the semi-planar ones only where the device carries
# two-channel images (not PoCL: there hwupload cannot give nv12 frames).
FORMATS="gray gray16le yuv420p yuv422p yuv444p yuv440p yuv410p yuvj420p
yuv420p16le yuv444p16le gbrp gbrp16le yuva420p gbrap rgba grayf32le"
# the MSB formats came with FFmpeg 8.0
if has_pix_fmt yuv444p10msble; then
    FORMATS+=" yuv444p10msble"
else
    skip "yuv444p10msble: not in this FFmpeg"
fi
if md5 "$TMP/probe" nv12 1 "hwupload,hwdownload,format=nv12"; then
    FORMATS+=" nv12 p010le"
else
    skip "nv12, p010le: the device cannot carry them as OpenCL images"
fi

for fmt in $FORMATS; do
    same "nlmeans_gpu $fmt" $fmt 3 "nlmeans_gpu=sigma=20"
    same "bm3d_gpu $fmt"    $fmt 3 "bm3d_gpu=sigma=20"
done
for fmt in gray yuv420p gbrp yuv444p16le; do
    same "vbm3d_gpu $fmt"             $fmt 8 "vbm3d_gpu=sigma=20:past=2:future=2"
    same "vbm3d_gpu causal $fmt"      $fmt 8 "vbm3d_gpu=sigma=20:causal=1"
    same "nlmeans_gpu temporal $fmt"  $fmt 8 "nlmeans_gpu=sigma=20:past=1:future=2"
done
# odd sizes, where the format has them, and planes smaller than a block
# (filtered padded): the filters' own frames context and transfers at the
# frame's size
for fmt in gray yuv444p gbrp; do
    SIZE=33x21 same "bm3d_gpu $fmt 33x21"    $fmt 3 "bm3d_gpu=sigma=20"
    SIZE=33x21 same "nlmeans_gpu $fmt 33x21" $fmt 3 "nlmeans_gpu=sigma=20"
done
SIZE=7x5 same "vbm3d_gpu gray 7x5"          gray 4 "vbm3d_gpu=sigma=20:past=1:future=1"
SIZE=6x4 same "bm3d_gpu yuv420p 6x4"        yuv420p 3 "bm3d_gpu=sigma=20"
same "bm3d_gpu timeline"      yuv420p 5 "bm3d_gpu=sigma=20:enable=between(n\,1\,2)"
same "vbm3d_gpu timeline"     yuv420p 8 "vbm3d_gpu=sigma=20:past=1:future=1:enable=between(n\,2\,4)"
same "nlmeans_gpu sendcmd"    yuv420p 5 "sendcmd=c='0.4 nlmeans_gpu sigma 40',nlmeans_gpu=sigma=10"

# No device given: the filter creates the first GPU, else the first device
# (that the filters can run on), names it in the log and gives the bytes of
# that device given to the graph. It is created with the filter, so that
# the formats it cannot carry are converted before it (ya8 on PoCL), as for
# a device given. Where OPENCL_DEVICE names a GPU, the device created must
# be a GPU.
GPU_GIVEN=0
if [ -n "${OPENCL_DEVICE:-}" ] &&
   DEV= FF_LOGLEVEL=verbose md5 "$TMP/probe" gray 1 "nlmeans_gpu=device=$OPENCL_DEVICE" &&
   grep -q "Software frames on OpenCL device $OPENCL_DEVICE, .* (GPU): the device option's\." "$TMP/err"; then
    GPU_GIVEN=1
fi
# own_device NAME FORMAT FRAMES FILTER
own_device() {
    local name=$1 fmt=$2 n=$3 filter=$4 used
    RUN=$((RUN + 1))
    if ! DEV= FF_LOGLEVEL=verbose md5 "$TMP/own" "$fmt" "$n" "$filter"; then
        fail "$name: no device given, the filter failed: $(grep -v '^\[' "$TMP/err" | tail -n 1)"
        return
    fi
    used=$(sed -n 's/.*Software frames on OpenCL device \([0-9]*\.[0-9]*\), .*: the default, no device given\./\1/p' "$TMP/err")
    if [ -z "$used" ]; then
        fail "$name: the log does not name the device the filter created"
    elif [ $GPU_GIVEN = 1 ] && ! grep -q "Software frames on OpenCL device $used, .* (GPU): the default" "$TMP/err"; then
        fail "$name: the filter created $used, not a GPU, where OPENCL_DEVICE is one"
    elif ! DEV=$(dev_options ocl "$used") md5 "$TMP/given" "$fmt" "$n" "$filter"; then
        fail "$name: with device $used given: $(tail -n 1 "$TMP/err")"
    elif ! cmp -s <(grep -v '^#' "$TMP/own") <(grep -v '^#' "$TMP/given"); then
        fail "$name: its own device $used gives other bytes than the same device given"
    else
        ok "$name: device $used, $n frames, the bytes of that device given"
    fi
}
own_device "nlmeans_gpu own device" gray 3 "nlmeans_gpu=sigma=20"
own_device "vbm3d_gpu own device"   yuv420p 5 "vbm3d_gpu=sigma=20:past=1:future=1"
own_device "bm3d_gpu own device ya8" ya8 2 "bm3d_gpu=sigma=20"
# the device option wins over the graph's device
RUN=$((RUN + 1))
if ! FF_LOGLEVEL=verbose md5 "$TMP/x" gray 1 "nlmeans_gpu=device=${OPENCL_DEVICE:-0.0}"; then
    fail "device option and the graph's device: $(tail -n 1 "$TMP/err")"
elif ! grep -q "Software frames on OpenCL device ${OPENCL_DEVICE:-0.0}, .*: the device option's\." "$TMP/err"; then
    fail "device option and the graph's device: the option's device is not the one used"
else
    ok "device option and the graph's device: the option's used"
fi

# OpenCL frames in: OpenCL frames out (hwdownload needs them)
RUN=$((RUN + 1))
if md5 "$TMP/hw" yuv420p 2 "hwupload,nlmeans_gpu,hwdownload,format=yuv420p" &&
   ! md5 "$TMP/x" yuv420p 2 "hwupload,nlmeans_gpu,format=yuv420p"; then
    ok "OpenCL frames in, OpenCL frames out"
else
    fail "OpenCL frames in did not give OpenCL frames out"
fi

summary swframes.sh
