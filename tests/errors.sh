#!/bin/bash
#
# Bad input and determinism tests of the GPU denoisers.
#
# Every bad input must give a non-zero exit status (not a signal), within a
# time limit, and a message naming the problem. Two runs of the same command
# must give identical bytes.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"

SRC="testsrc2=s=64x48:r=5:d=0.6,format=yuv420p"

# expect_error NAME REGEX [env assignments --] ffmpeg arguments...: the
# command (a function of this file or a program, run by bash -c so that
# timeout can stop it) must fail cleanly with a message matching REGEX
expect_error() {
    local name=$1 regex=$2
    shift 2
    RUN=$((RUN + 1))
    timeout 120 bash -c '"$@"' bash "$@" > "$TMP/out" 2> "$TMP/err"
    check_error "$name" "$regex" $? "$TMP/err"
}

nlm() {
    # nlm FILTER_OPTIONS [FORMAT]
    local fmt=${2:-yuv420p}
    ff $DEV -f lavfi -i "testsrc2=s=64x48:r=5:d=0.6,format=$fmt" \
       -vf "hwupload,nlmeans_gpu=$1,hwdownload,format=$fmt" -f null -
}

bm() {
    # bm FILTER_OPTIONS [FORMAT] [SIZE]
    local fmt=${2:-yuv420p} size=${3:-64x48}
    ff $DEV -f lavfi -i "testsrc2=s=$size:r=5:d=0.6,format=$fmt" \
       -vf "hwupload,bm3d_gpu=$1,hwdownload,format=$fmt" -f null -
}

vbm() {
    # vbm FILTER_OPTIONS [FORMAT] [SIZE]
    local fmt=${2:-yuv420p} size=${3:-64x48}
    ff $DEV -f lavfi -i "testsrc2=s=$size:r=5:d=0.6,format=$fmt" \
       -vf "hwupload,vbm3d_gpu=$1,hwdownload,format=$fmt" -f null -
}

export -f ff nlm bm vbm

# expect_frames NAME FILTER FORMAT SIZE: noisy frames of SIZE (1x1 and up)
# through FILTER exit 0 with every frame (3), none equal to its input where
# the filter has something to filter (planes of 2x2 or more). 4:2:0 sizes
# are even: hwupload cannot allocate odd-sized 4:2:0 OpenCL frames on PoCL.
expect_frames() {
    local name=$1 filter=$2 fmt=$3 size=$4 src rc n
    RUN=$((RUN + 1))
    src="color=c=gray:s=$size:r=5:d=0.6,format=$fmt,noise=alls=40:allf=t,format=$fmt"
    ff -t 120 -f lavfi -i "$src" -f framemd5 -y "$TMP/in.md5" 2> "$TMP/err"
    ff -t 120 $DEV -f lavfi -i "$src" \
        -vf "hwupload,$filter,hwdownload,format=$fmt" -f framemd5 -y "$TMP/out.md5" 2>> "$TMP/err"
    rc=$?
    n=$(grep -c '^0,' "$TMP/out.md5" 2> /dev/null)
    if [ $rc -ne 0 ]; then
        fail "$name: exit status $rc"
        show_tail 3 "$TMP/err"
    elif [ "$n" != 3 ]; then
        fail "$name: $n frames out of 3"
    elif [ "$size" != 1x1 ] && cmp -s <(cut -d, -f6 "$TMP/in.md5") <(cut -d, -f6 "$TMP/out.md5"); then
        fail "$name: frames unchanged"
    else
        ok "$name: 3 frames"
    fi
}
export FFMPEG DEV

# opt_error OPTION VALUE: the message of a value the option cannot take,
# as FFmpeg 8 writes it (Unable to parse "OPTION" option value "VALUE"), or
# 7.1 and 5.1 (Unable to parse option value "VALUE", the option named on
# another line)
opt_error() {
    echo "Unable to parse \"$1\" option value \"$2\"|Unable to parse option value \"$2\""
}
# invalid option values
expect_error "sigma<0"     "parameter 'sigma' out of range"        nlm "sigma=-3"
expect_error "sigma=-1.5"  "sigma must be"                    nlm "sigma=-1.5"
expect_error "sigma=auto x" "$(opt_error sigma automatic)" nlm "sigma=automatic"
expect_error "sigma>255"   "parameter 'sigma' out of range"              nlm "sigma=256"
expect_error "p=0"         "parameter 'p' out of range"                  nlm "p=0"
expect_error "p=33"        "parameter 'p' out of range"                  nlm "p=33"
expect_error "pc=33"       "parameter 'pc' out of range"                 nlm "pc=33"
expect_error "r=0"         "parameter 'r' out of range"                  nlm "r=0"
expect_error "r=100"       "parameter 'r' out of range"                  nlm "r=100"
expect_error "step=0"      "parameter 'step' out of range"               nlm "step=0"
expect_error "step>p"      "step \(8\) must not exceed"       nlm "p=4:step=8"
expect_error "step>pc"     "must not exceed the chroma"       nlm "pc=2:step=4"
expect_error "step>pc 444" "must not exceed the chroma"       nlm "pc=2:step=4" yuv444p
expect_error "n=0"         "parameter 'n' out of range"                  nlm "n=0"
expect_error "n=33"        "parameter 'n' out of range"                  nlm "n=33"
expect_error "planes=16"   "parameter 'planes' out of range"             nlm "planes=16"
expect_error "flat<0"      "parameter 'flat' out of range"               nlm "flat=-1"
expect_error "h<0"         "parameter 'h' out of range"                  nlm "h=-1"
expect_error "color"       "$(opt_error color mixed)" nlm "color=mixed" yuv444p
expect_error "kernel"      "$(opt_error kernel gauss)" nlm "kernel=gauss"
expect_error "unknown"     "nosuchoption.*Option not found|Option 'nosuchoption' not found" nlm "nosuchoption=1"
expect_error "not-a-number" "$(opt_error sigma abc)" nlm "sigma=abc"

# software formats the OpenCL hwcontext carries but the filters do not (half
# floats and 32-bit integers, which it reads as 16-bit integers and floats),
# refused when the graph is configured; frames of zeros, since swscale
# makes none of them
# unsupported FILTER FORMAT BYTES: FILTER on 3 64x48 frames of BYTES bytes
unsupported() {
    head -c $((3 * $3)) /dev/zero > "$TMP/zeros.raw"
    ff $DEV -f rawvideo -pix_fmt "$2" -s 64x48 -i "$TMP/zeros.raw" \
       -vf "hwupload,$1=sigma=10,hwdownload,format=$2" -f null -
}
export -f unsupported
export TMP
# (formats that FFmpeg 7.1 or 5.1 lack are skipped there)
refused_format() {
    local name=$1 regex=$2 filter=$3 fmt=$4 bytes=$5
    if has_pix_fmt "$fmt"; then
        expect_error "$name" "$regex" unsupported "$filter" "$fmt" "$bytes"
    else
        skip "$name: $fmt is not in this FFmpeg"
    fi
}
refused_format "grayf16"        "Unsupported input format grayf16le.*Supported formats: gray" nlmeans_gpu grayf16le 6144
refused_format "gbrpf16"        "Unsupported input format gbrpf16le" nlmeans_gpu gbrpf16le 18432
refused_format "bm3d grayf16"   "Unsupported input format grayf16le" bm3d_gpu grayf16le 6144
refused_format "vbm3d gray32le" "Unsupported input format gray32le"  vbm3d_gpu gray32le 12288

# OpenCL frames without a device, no OpenCL platform
# (software frames without a device: the filter creates its own, in swframes.sh)
expect_error "no-device"   "A hardware device reference is required" ff -f lavfi -i "$SRC" -vf "hwupload,nlmeans_gpu,hwdownload,format=yuv420p" -f null -
mkdir -p "$TMP/no-icd"
expect_error "sw-no-platform" "Software frames need an OpenCL device, and none was found" env OCL_ICD_VENDORS="$TMP/no-icd" OCL_ICD_FILENAMES= \
    "$FFMPEG" -nostdin -hide_banner -loglevel error -f lavfi -i "$SRC" -vf "nlmeans_gpu" -f null -
expect_error "no-platform" "Failed to get number of OpenCL platforms|No OpenCL platforms found" env OCL_ICD_VENDORS="$TMP/no-icd" OCL_ICD_FILENAMES= \
    "$FFMPEG" -nostdin -hide_banner -loglevel error -init_hw_device opencl=ocl -filter_hw_device ocl \
    -f lavfi -i "$SRC" -vf "hwupload,nlmeans_gpu,hwdownload,format=yuv420p" -f null -
expect_error "bad-device"  "No matching (devices|platforms) found" ff -init_hw_device opencl=ocl:9.9 -filter_hw_device ocl \
    -f lavfi -i "$SRC" -vf "hwupload,nlmeans_gpu,hwdownload,format=yuv420p" -f null -
expect_error "bad-device-option" "Failed to create OpenCL device 9.9" ff -f lavfi -i "$SRC" -vf "nlmeans_gpu=device=9.9" -f null -
# the device option wins over the graph's device
expect_error "bad-device-option, a device given" "Failed to create OpenCL device 9.9" ff $DEV -f lavfi -i "$SRC" -vf "bm3d_gpu=device=9.9" -f null -

# software frames larger than the device's images (8192 columns on PoCL,
# 32768 on an NVIDIA H200: 65537 is more than any device we know) refused
# when the graph is configured, naming the device's limit, not at the first
# frame's upload as a lack of memory (and for vbm3d_gpu with advice on its
# window)
for filter in nlmeans_gpu bm3d_gpu vbm3d_gpu; do
    expect_error "$filter, frames wider than the device's images" \
        "Frames of 65537x2 are larger than the OpenCL device's images, at most [0-9]+x[0-9]+: scale or crop" \
        ff $DEV -f lavfi -i "color=gray:s=65537x2:d=0.2,format=gray" -vf "$filter=sigma=10" -f null -
done

# bm3d_gpu
expect_error "bm3d sigma<0"   "parameter 'sigma' out of range"                   bm "sigma=-3"
expect_error "bm3d group=3"   "group \(3\) must be a power of two"     bm "group=3"
expect_error "bm3d group2=12" "group2 \(12\) must be a power of two"   bm "group2=12"
expect_error "bm3d group=64"  "parameter 'group' out of range"                   bm "group=64"
expect_error "bm3d bstep=9"   "parameter 'bstep' out of range"                   bm "bstep=9"
expect_error "bm3d range=100" "parameter 'range' out of range"                   bm "range=100"
expect_error "bm3d thmse<-1"  "parameter 'thmse' out of range"                   bm "thmse=-2"
expect_error "bm3d preset"    "$(opt_error preset best)" bm "preset=best"
expect_error "bm3d estim"     "$(opt_error estim middle)" bm "estim=middle"
# pc applies to YUV chroma only: a step above it is filtered where there is
# none (gray, RGB, luma alone)
expect_frames "nlm step>pc gray"  "nlmeans_gpu=sigma=30:pc=2:step=4"          gray    16x12
expect_frames "nlm step>pc gbrp"  "nlmeans_gpu=sigma=30:pc=2:step=4"          gbrp    16x12
expect_frames "nlm step>pc luma"  "nlmeans_gpu=sigma=30:pc=2:step=4:planes=1" yuv420p 16x12
# planes smaller than a block are filtered (padded to 8x8), down to 1x1
expect_frames "bm3d 1x1 gray"     "bm3d_gpu=sigma=30"            gray    1x1
expect_frames "bm3d 7x5 gray"     "bm3d_gpu=sigma=30"            gray    7x5
expect_frames "bm3d 16x6 420"     "bm3d_gpu=sigma=30"            yuv420p 16x6
expect_frames "bm3d 4x2 420 ref"  "bm3d_gpu=sigma=30:preset=ref" yuv420p 4x2
expect_frames "bm3d 5x2 gbrp"     "bm3d_gpu=sigma=30"            gbrp    5x2

expect_error "past=16"     "parameter 'past' out of range"               nlm "past=16"
expect_error "future=16"   "parameter 'future' out of range"             nlm "future=16"

# vbm3d_gpu
expect_error "vbm3d past=16"     "parameter 'past' out of range"                   vbm "past=16"
expect_error "vbm3d future=9"    "parameter 'future' out of range"                 vbm "future=9"
expect_error "vbm3d perframe=0"  "parameter 'perframe' out of range"               vbm "perframe=0"
expect_error "vbm3d perframe=9"  "parameter 'perframe' out of range"               vbm "perframe=9"
expect_error "vbm3d prange=100"  "parameter 'prange' out of range"                 vbm "prange=100"
expect_error "vbm3d group=6"     "group \(6\) must be a power of two"  vbm "group=6"
expect_frames "vbm3d 2x2 420"    "vbm3d_gpu=sigma=30"         yuv420p 2x2
expect_frames "vbm3d 7x5 gray"   "vbm3d_gpu=sigma=30"         gray    7x5
expect_frames "vbm3d 9x4 444"    "vbm3d_gpu=sigma=30:causal=1" yuv444p 9x4

# determinism NAME DURATION FILTER: two runs, both successful, with every
# frame (5 a second of 96x64 yuv420p) and identical bytes
determinism() {
    local name=$1 duration=$2 filter=$3 i rc=0 size
    RUN=$((RUN + 1))
    rm -f "$TMP/det1.yuv" "$TMP/det2.yuv"
    for i in 1 2; do
        ff $DEV -f lavfi -i "testsrc2=s=96x64:r=5:d=$duration,format=yuv420p,noise=alls=30:allf=t" \
           -vf "hwupload,$filter,hwdownload,format=yuv420p" -f rawvideo -y "$TMP/det$i.yuv" || rc=$?
    done
    size=$(awk "BEGIN { print int($duration * 5 + 0.5) * 96 * 64 * 3 / 2 }")
    if [ $rc -ne 0 ]; then
        fail "$name determinism: a run failed (exit $rc)"
    elif [ "$(stat -c %s "$TMP/det1.yuv")" != "$size" ]; then
        fail "$name determinism: $(stat -c %s "$TMP/det1.yuv") bytes out, $size expected"
    elif cmp -s "$TMP/det1.yuv" "$TMP/det2.yuv"; then
        ok "$name determinism: two runs identical ($(md5sum < "$TMP/det1.yuv" | cut -c1-32))"
    else
        fail "$name determinism: outputs differ"
    fi
}

# A change of size or format within the stream, which the ffmpeg tool does
# not rebuild the filter graph for with -reinit_filter 0: software frames
# (PNG, gray, 3 frames of 32x24, then 3 of 48x32 gray or of 32x24 gray16be)
# straight into each filter must be refused, naming both.
for i in 0 1 2; do
    ff -f lavfi -i "testsrc2=s=32x24:r=5,trim=start_frame=$i:end_frame=$((i + 1))" \
        -pix_fmt gray -y "$TMP/size$i.png"
    cp "$TMP/size$i.png" "$TMP/format$i.png"
    ff -f lavfi -i "testsrc2=s=48x32:r=5,trim=start_frame=$i:end_frame=$((i + 1))" \
        -pix_fmt gray -y "$TMP/size$((i + 3)).png"
    ff -f lavfi -i "testsrc2=s=32x24:r=5,trim=start_frame=$i:end_frame=$((i + 1))" \
        -pix_fmt gray16be -y "$TMP/format$((i + 3)).png"
done
midstream() {
    # midstream SEQUENCE FILTER: the six frames through the filter
    ff $DEV -reinit_filter 0 -i "$TMP/$1%d.png" -vf "$2" -f null -
}
export -f midstream
export TMP
for filter in bm3d_gpu=sigma=10 nlmeans_gpu=sigma=10:past=1:future=1 \
              vbm3d_gpu=sigma=10:past=1:future=2; do
    expect_error "${filter%%=*}, size change" \
        "The frames changed from 32x24 gray to 48x32 gray: changes of size or format" \
        midstream size "$filter"
    expect_error "${filter%%=*}, format change" \
        "The frames changed from 32x24 gray to 32x24 gray16be: changes of size or format" \
        midstream format "$filter"
done

# The same size change with the ffmpeg tool's default (-reinit_filter 1):
# it builds a new graph at the change and frees the old one undrained, so
# the frames the filter holds then are lost (FFmpeg's documented behaviour,
# doc/nlmeans_gpu.texi), yet each frame that comes out must be, once and in
# order, the frame of its own segment filtered alone (no wrong picture;
# -noautoscale: the frames after the change keep their size). With scale
# and format before the filter and -reinit_filter 0, the way the
# documentation gives to keep them, all six must come out, in order.
mkdir -p "$TMP/seg0" "$TMP/seg1"
for i in 0 1 2; do
    cp "$TMP/size$i.png" "$TMP/seg0/$i.png"
    cp "$TMP/size$((i + 3)).png" "$TMP/seg1/$i.png"
done
# pts_md5 FRAMEMD5 [OFFSET]: "pts md5" lines, OFFSET added to the pts
pts_md5() { grep -v '^#' "$1" | awk -F', *' -v o="${2:-0}" '{ print $2 + o, $6 }'; }
for filter in bm3d_gpu=sigma=10 nlmeans_gpu=sigma=10:past=1:future=1 \
              vbm3d_gpu=sigma=10:past=1:future=2; do
    RUN=$((RUN + 1))
    name="${filter%%=*}, size change, graph rebuilt"
    ff $DEV -i "$TMP/size%d.png" -vf "$filter" -noautoscale -f framemd5 "$TMP/rebuilt.md5" 2> "$TMP/err" &&
        ff $DEV -i "$TMP/seg0/%d.png" -vf "$filter" -f framemd5 "$TMP/seg0.md5" 2>> "$TMP/err" &&
        ff $DEV -i "$TMP/seg1/%d.png" -vf "$filter" -f framemd5 "$TMP/seg1.md5" 2>> "$TMP/err"
    rc=$?
    out=$(pts_md5 "$TMP/rebuilt.md5" | wc -l)
    if [ $rc != 0 ]; then
        fail "$name: a run failed"; show_tail 3 "$TMP/err"
    elif [ "$out" = 0 ] || ! pts_md5 "$TMP/rebuilt.md5" | sort -c -n -u 2> /dev/null; then
        fail "$name: $out frames, not in order once each"
    elif pts_md5 "$TMP/rebuilt.md5" |
         grep -qvxF -f <(pts_md5 "$TMP/seg0.md5"; pts_md5 "$TMP/seg1.md5" 3); then
        fail "$name: a frame out is not its segment's"
    else
        ok "$name: frames $(pts_md5 "$TMP/rebuilt.md5" | awk '{ printf "%s ", $1 }')out of 0 to 5 (the rest held at the change), each its segment's"
    fi
    RUN=$((RUN + 1))
    name="${filter%%=*}, size change, -reinit_filter 0 and scale before the filter"
    if ! ff $DEV -reinit_filter 0 -i "$TMP/size%d.png" -vf "scale=32:24,format=gray,$filter" \
            -f framemd5 "$TMP/kept.md5" 2> "$TMP/err"; then
        fail "$name: failed"; show_tail 3 "$TMP/err"
    elif [ "$(pts_md5 "$TMP/kept.md5" | awk '{ printf "%s ", $1 }')" != "0 1 2 3 4 5 " ]; then
        fail "$name: frames $(pts_md5 "$TMP/kept.md5" | awk '{ printf "%s ", $1 }')out, not 0 to 5"
    else
        ok "$name: all 6 frames out, in order"
    fi
done

determinism nlmeans          0.6 "nlmeans_gpu=sigma=25"
determinism bm3d             0.6 "bm3d_gpu=sigma=25:preset=ref"
determinism vbm3d            1.6 "vbm3d_gpu=sigma=25:past=2:future=2"
determinism "temporal nlmeans" 1.6 "nlmeans_gpu=sigma=25:past=2:future=2"

summary errors.sh
