#!/bin/bash
#
# Device faults: the OpenCL device made to fail by tests/tools/clfault.so
# (LD_PRELOAD) the way real devices do. For each of the three filters:
#   - no image support: a clear error;
#   - a kernel build failure: a clear error;
#   - the device refusing its 1st, 2nd, ... buffer, or an image (the frames
#     of hwupload), at start and in mid-stream: a clear error;
#   - the device running out of memory at a command (a kernel launch or a
#     buffer fill), as one that allocates buffers at their first use does
#     (NVIDIA's): an error that says so;
#   - every buffer refused in turn, in ten configurations making other
#     buffers (the noise estimator's, bands, RGB rings, ...), every image
#     of the frames' pools in two (hwupload's and software frames), and the
#     device out of memory at the noise estimator's commands (with
#     FAULTS_LONG=1, at every command of those configurations; with
#     FAULTS_LONG=only, those sweeps alone, and FAULTS_CONFIGS=REGEX keeps
#     the configurations it matches: shares of the long run side by side);
#   - after a refused buffer or a lack of memory at a command, one line
#     naming the options that need less memory from the filters with a
#     window of frames (vbm3d_gpu, nlmeans_gpu with past or future), none
#     from the others;
#   - no 64-bit atomics (bm3d_gpu, vbm3d_gpu): atomics=auto falls back to
#     32-bit pairs with the same output bytes, atomics=int64 is refused;
#   - work-groups smaller than the filters' 128 work-items on the device
#     (refused at start) or on a kernel (refused at its launch): a clear
#     error; too small or too little local memory for the work-group
#     searches: search=tiled warns and falls back, with the same bytes;
#     patch_search_edge alone too small: the grid's edges by the per-patch
#     search after the work-group search, with the same bytes;
#   - and, with no fault made, a frame too large for the device's largest
#     allocation: a clear error.
# Each failure must be a non-zero exit, not by a signal (under check-asan:
# no sanitizer report, no leak), within a time limit, with a message.
#
# Environment: FFMPEG, CLFAULT_SO (the library), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"
CLFAULT_SO=${CLFAULT_SO:-build/tests/clfault.so}
# an AddressSanitizer build wants its runtime first in the library list
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

[ -f "$CLFAULT_SO" ] || { echo "faults: no $CLFAULT_SO"; exit 1; }
CLFAULT_SO=$(cd "$(dirname "$CLFAULT_SO")" && pwd)/$(basename "$CLFAULT_SO")

# run FAULT FILTER [FRAMES]: the filter on frames of SOURCE in FORMAT (64x48
# yuv420p unless set) with the fault, stopped after TIMEOUT seconds; between
# hwupload and hwdownload, or with FRAMES=software on software frames, which
# the filter uploads and downloads itself
run() {
    local vf="hwupload,$2,hwdownload,format=${FORMAT:-yuv420p}"
    [ "${FRAMES:-}" = software ] && vf="$2"
    CLFAULT=$1 LD_PRELOAD=$CLFAULT_SO ff -t "${TIMEOUT:-120}" $DEV \
        -f lavfi -i "${SOURCE:-testsrc2=s=64x48:r=5},format=${FORMAT:-yuv420p}" \
        -frames:v "${3:-4}" -vf "$vf" \
        -f rawvideo "$TMP/out.yuv" -y > /dev/null 2> "$TMP/err"
}

# expect_error FAULT FILTER REGEX [FRAMES]
expect_error() {
    RUN=$((RUN + 1))
    run "$1" "$2" "${4:-4}"
    check_error "${FRAMES:+$FRAMES frames: }$1 $2" "$3" $? "$TMP/err"
}

# a buffer of the filters, or an image of the frames' pool (FFmpeg's message)
REFUSED="The OpenCL device refused a buffer of [0-9]+ bytes|Failed to create image for plane "
OUT_OF_MEMORY="Failed to (enqueue kernel|clear a buffer): -4 \(out of device memory\)"
# every_fault KIND FORMAT FILTER FRAMES: KIND=1, KIND=2, ... (buffer: the
# buffers the filter makes; image: the images of the frames' pools, made
# as FRAMES frames go through; enqueue: the commands it enqueues for them)
# until a run passes; each run before that must fail cleanly. One case,
# its failures each counted; the ok line says how many were made.
every_fault() {
    local kind=$1 fmt=$2 filter=$3 frames=$4 regex=$REFUSED n=0 status
    local failed=$FAILED label="${FRAMES:+$FRAMES frames: }$2"
    [ "$kind" = enqueue ] && regex=$OUT_OF_MEMORY
    RUN=$((RUN + 1))
    while [ $n -lt 2000 ]; do
        n=$((n + 1))
        FORMAT=$fmt run "$kind=$n" "$filter" "$frames"
        status=$?
        [ $status = 0 ] && break
        check_error "$label $kind=$n $filter" "$regex" $status "$TMP/err" > "$TMP/check" ||
            cat "$TMP/check"
    done
    if [ $n -eq 2000 ]; then
        fail "$label $filter: still failing at $kind=$n"
    elif [ $n -eq 1 ]; then
        fail "$label $filter: no $kind made"
    elif [ "$FAILED" = "$failed" ]; then
        ok "$label $filter: each of its $((n - 1)) ${kind/enqueue/command}s failed in turn, a clear error"
    fi
}

# Every buffer of the filters refused in turn, in the configurations that
# make other buffers than the defaults above: the noise estimator (sigma=auto
# and curve; 7 buffers of its own), bands, `ref`, the basic estimate alone,
# the causal window, RGB rings and opponent channels, 32-bit atomics. With
# FAULTS_LONG=1 (make check-faults-long) the same for every command the
# filters enqueue for 3 frames, a few hundred runs each.
EVERY="yuv420p:nlmeans_gpu=sigma=curve
yuv420p:nlmeans_gpu=sigma=auto:past=2:future=2:band=3
yuv420p:bm3d_gpu=sigma=10:preset=ref:band=2
yuv420p:bm3d_gpu=sigma=auto:estim=basic
yuv420p:vbm3d_gpu=sigma=curve:causal=1
gbrp:nlmeans_gpu=sigma=10
gbrp:bm3d_gpu=sigma=10:estim=basic
gbrp:vbm3d_gpu=sigma=auto
gbrp:vbm3d_gpu=sigma=10:color=planes
yuv444p:bm3d_gpu=sigma=10:atomics=int32"
# the sweeps of EVERY, the configurations FAULTS_CONFIGS (an extended
# regular expression on FORMAT:FILTER) matches where it is set
every_sweep() {
    local matched=0
    while IFS=: read -r fmt filter; do
        [[ -z "${FAULTS_CONFIGS:-}" || "$fmt:$filter" =~ $FAULTS_CONFIGS ]] || continue
        matched=$((matched + 1))
        [ "${FAULTS_LONG:-0}" = only ] || every_fault buffer "$fmt" "$filter" 4
        [ "${FAULTS_LONG:-0}" != 0 ] && every_fault enqueue "$fmt" "$filter" 3
    done <<< "$EVERY"
    [ $matched -gt 0 ] || fail "FAULTS_CONFIGS=$FAULTS_CONFIGS matches no configuration"
}

# FAULTS_LONG=only: those sweeps of every command alone, nothing else (with
# FAULTS_CONFIGS, a share of check-faults-long to run beside the others)
if [ "${FAULTS_LONG:-0}" = only ]; then
    every_sweep
    summary faults
    exit $?
fi

# each filter, and buffers refused spread over those it makes for 64x48
# yuv420p: nlmeans_gpu 10 (its planes share their tables and patch sums;
# 18 until 2026-12-01), 9 with the window, bm3d_gpu 19, vbm3d_gpu 22
for c in "nlmeans_gpu=sigma=10|1 2 3 4 5 6 8 10" "bm3d_gpu=sigma=10|1 2 3 4 5 6 8 10 12 19" \
         "vbm3d_gpu=sigma=10|1 2 3 4 5 6 8 10 12 22" \
         "nlmeans_gpu=sigma=10:past=2:future=2|1 2 3 4 5 6 8 9"; do
    IFS='|' read -r filter buffers <<< "$c"
    expect_error noimage "$filter" "no image support"
    expect_error build "$filter" "Failed to build program"
    for n in $buffers; do
        expect_error buffer=$n "$filter" "$REFUSED"
    done
    # the first image, the last plane of the first frame, and the last
    # plane of the second frame allocated (the 6th image is the last one
    # these pools make for 64x48 yuv420p)
    for n in 1 3 6; do
        expect_error image=$n "$filter" "$REFUSED" 12
    done
    # the first command, one of the first frame, one further on
    for n in 1 7 40; do
        expect_error enqueue=$n "$filter" "$OUT_OF_MEMORY" 12
    done
done

every_sweep
# every image of the frames' pools refused in turn, through hwupload and
# with software frames (the filter's own uploads and output frames): each
# point of the overlapped steady state, through to the end of the stream
for c in yuv420p:vbm3d_gpu=sigma=10 gbrp:nlmeans_gpu=sigma=curve:past=1:future=1; do
    IFS=: read -r fmt filter <<< "$c"
    every_fault image "$fmt" "$filter" 12
    FRAMES=software every_fault image "$fmt" "$filter" 12
done
# the estimator's commands: the clearing of its histogram at the start,
# the first frame's estimates and transforms; vbm3d_gpu's estimates made
# ahead of its output; software frames on the filter's own device
for n in $(seq 1 16); do
    expect_error enqueue=$n nlmeans_gpu=sigma=curve "$OUT_OF_MEMORY" 12
done
for n in 1 5 20 60; do
    expect_error enqueue=$n vbm3d_gpu=sigma=auto "$OUT_OF_MEMORY" 12
done
for n in 2 8; do
    FRAMES=software expect_error enqueue=$n nlmeans_gpu=sigma=auto "$OUT_OF_MEMORY" 12
done

# after a lack of memory, the filters with a window of frames say once
# which options need less (the other filters have none to name)
HINT="needs? less device memory"
for c in "vbm3d_gpu=sigma=10 1" "nlmeans_gpu=sigma=10:past=2:future=2 1" \
         "bm3d_gpu=sigma=10 0" "nlmeans_gpu=sigma=10 0"; do
    read -r filter hints <<< "$c"
    for fault in buffer=2 enqueue=7; do
        RUN=$((RUN + 1))
        run $fault "$filter" 12
        n=$(grep -Ec "$HINT" "$TMP/err")
        if [ "$n" = "$hints" ]; then
            ok "$fault $filter: $n line(s) on what needs less memory"
        else
            fail "$fault $filter: $n line(s) on what needs less memory, not $hints"
            show_tail 5 "$TMP/err"
        fi
    done
done

# software frames in: refusals at the start and in the overlapped steady
# state, where the filter uploads and downloads the frames itself
for filter in nlmeans_gpu=sigma=10 vbm3d_gpu=sigma=10; do
    for n in 1 4 10; do
        FRAMES=software expect_error buffer=$n "$filter" "$REFUSED"
    done
    for n in 1 3 6 9; do
        FRAMES=software expect_error image=$n "$filter" "$REFUSED" 12
    done
    FRAMES=software expect_error enqueue=40 "$filter" "$OUT_OF_MEMORY" 12
done

# no 64-bit atomics: the same bytes as atomics=int32 without the fault
for filter in bm3d_gpu vbm3d_gpu; do
    RUN=$((RUN + 1))
    if ! run "" "$filter=sigma=15:atomics=int32"; then
        fail "$filter atomics=int32: failed"; cat "$TMP/err"
        continue
    fi
    mv "$TMP/out.yuv" "$TMP/int32.yuv"
    if ! run noint64 "$filter=sigma=15"; then
        fail "noint64 $filter: atomics=auto failed"; cat "$TMP/err"
    elif ! cmp -s "$TMP/out.yuv" "$TMP/int32.yuv"; then
        fail "noint64 $filter: atomics=auto differs from atomics=int32"
    else
        ok "noint64 $filter: atomics=auto fell back, same bytes as atomics=int32"
    fi
    expect_error noint64 "$filter=sigma=15:atomics=int64" "64-bit"
done

# small work-groups: a device of fewer than 128 work-items a work-group
# (the filters' kernels without one of their own take 16 x 8) is refused
# at the start; a kernel of fewer (its registers) at its first launch
for filter in nlmeans_gpu=sigma=10 bm3d_gpu=sigma=10 vbm3d_gpu=sigma=10; do
    expect_error workgroup=64 "$filter" "runs work-groups of at most 64 work-items; the filter needs 128"
    expect_error kernelgroup=64 "$filter" "Failed to enqueue kernel: -54 \(a work-group larger than the device runs for this kernel\)"
done
# direct FILTER: its output with search=direct, into $TMP/direct.yuv
direct() {
    if ! run "" "$1:search=direct"; then
        fail "$1:search=direct: failed"; cat "$TMP/err"
        return 1
    fi
    mv "$TMP/out.yuv" "$TMP/direct.yuv"
}

# tiled_as_direct FAULT FILTER LEVEL TEXT: with the fault, search=tiled
# logs TEXT at log level LEVEL and gives the bytes of direct()
tiled_as_direct() {
    if ! FF_LOGLEVEL=$3 run "$1" "$2:search=tiled"; then
        fail "$1 $2:search=tiled: failed"; cat "$TMP/err"
    elif ! grep -q "$4" "$TMP/err"; then
        fail "$1 $2:search=tiled: no '$4' in its log"
    elif ! cmp -s "$TMP/out.yuv" "$TMP/direct.yuv"; then
        fail "$1 $2:search=tiled: other bytes than search=direct"
    else
        return 0
    fi
    return 1
}

# the work-group searches (16 x 16 work-items, their tiles in local
# memory) where they do not fit: search=tiled says so and takes the
# per-patch search, whose bytes are the same
NO_FIT="The work-group search does not fit this device"
for filter in nlmeans_gpu=sigma=10 bm3d_gpu=sigma=10 bm3d_gpu=sigma=10:preset=ref; do
    RUN=$((RUN + 1))
    direct "$filter" &&
        tiled_as_direct workgroup=128 "$filter" warning "$NO_FIT" &&
        tiled_as_direct localmem=4 "$filter" warning "$NO_FIT" &&
        ok "$filter:search=tiled on work-groups of 128 or 4 KiB of local memory: warned, the bytes of search=direct"
done

# patch_search_edge where it does not fit (its registers holding its
# work-groups below its 32 work-items a patch): the work-group search
# leaves the grid's last column and row, moved to the frame's edge, to the
# per-patch search; the bytes of search=direct, on frames of 66x50, whose
# grids of steps 3 and 4 have such a column
for filter in nlmeans_gpu=sigma=10 bm3d_gpu=sigma=10 bm3d_gpu=sigma=10:preset=ref; do
    RUN=$((RUN + 1))
    SOURCE=testsrc2=s=66x50:r=5 direct "$filter" &&
        SOURCE=testsrc2=s=66x50:r=5 tiled_as_direct edgegroup=16 "$filter" verbose ": work-group search" &&
        ok "$filter:search=tiled without patch_search_edge (66x50): the bytes of search=direct"
done

# a real refusal, no fault made: vbm3d_gpu's largest buffer for an
# 8192x8192 frame (the largest image PoCL carries) is the steps' ring of 9
# planes of 64-bit sums, 4,831,838,208 bytes (its rings of 13 frames hold
# bytes, 872 MB each). Where the device's largest allocation is smaller,
# the filter must fail with a message; elsewhere it must give its frames,
# on a GPU: a CPU device that takes the buffer (PoCL on a machine of 23 GB
# offers 8 GiB) runs out of host memory instead (23 GB and over 9 minutes
# without a frame on 2 cores), so there the case is skipped.
BIG_BUFFER=4831838208
CLINFO_DEV=$(echo "${OPENCL_DEVICE:-0.0}" | tr . :)
# device_info KEY: the value clinfo gives the device for KEY
device_info() {
    clinfo --raw -d "$CLINFO_DEV" 2> /dev/null | awk -v k="$1" '$2 == k { print $NF; exit }'
}
max_alloc=$(device_info CL_DEVICE_MAX_MEM_ALLOC_SIZE)
dev_type=$(device_info CL_DEVICE_TYPE)
# big COMMAND ARGS...: run or expect_error on 8192x8192 gray frames
big() {
    SOURCE="color=s=8192x8192:r=5" FORMAT=gray TIMEOUT=300 "$@"
}
if [ -n "$max_alloc" ] && [ "$max_alloc" -lt $BIG_BUFFER ]; then
    big expect_error "" vbm3d_gpu=sigma=10 \
        "refused a buffer of $BIG_BUFFER bytes, over its largest of $max_alloc bytes" 2
elif [ "$dev_type" = CL_DEVICE_TYPE_CPU ]; then
    skip "8192x8192 vbm3d_gpu: a CPU device with a largest allocation of $max_alloc bytes"
else
    RUN=$((RUN + 1))
    if big run "" vbm3d_gpu=sigma=10 2 &&
       [ "$(stat -c %s "$TMP/out.yuv")" = $((2 * 8192 * 8192)) ]; then
        ok "8192x8192 vbm3d_gpu: 2 frames (largest allocation ${max_alloc:-unknown})"
    else
        fail "8192x8192 vbm3d_gpu, largest allocation ${max_alloc:-unknown}: no 2 frames"
        tail -n 5 "$TMP/err"
    fi
fi

# frames too large for the filters' 32-bit sample indices, refused before
# any buffer is made: at 16000x16000 (the largest square FFmpeg allows
# below 16384), nlmeans_gpu's joint colour indexes its three channels'
# rings of 9 frames as one buffer, 6.9 G samples; vbm3d_gpu's default ring
# of 13 frames is 3.3 G samples, past its limit of 2^31 (its accumulators
# are pairs of 32-bit words); at 12000x10000 its rings of RGB bytes (gbrp),
# read as one buffer, are 4.68 G samples, past 2^32 (a frame it could
# otherwise hold on an 80 GB GPU). Only where the device carries images of
# 16000 samples a side (GPUs; PoCL's largest is 8192).
max_w=$(device_info CL_DEVICE_IMAGE2D_MAX_WIDTH)
max_h=$(device_info CL_DEVICE_IMAGE2D_MAX_HEIGHT)
if [ "${max_w:-0}" -lt 16000 ] || [ "${max_h:-0}" -lt 16000 ]; then
    skip "16000x16000 frames: the device's images are at most ${max_w:-?}x${max_h:-?}"
else
    huge() {
        SOURCE="color=s=$1:r=5" FORMAT=$2 TIMEOUT=300 expect_error "" "$3" \
            "Frames of $1 are too large for this window" 1
    }
    huge 16000x16000 yuv444p "nlmeans_gpu=sigma=10:color=joint:past=4:future=4"
    huge 16000x16000 gray vbm3d_gpu=sigma=10
    huge 12000x10000 gbrp vbm3d_gpu=sigma=10
fi

summary faults
