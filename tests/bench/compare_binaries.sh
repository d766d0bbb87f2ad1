#!/bin/bash
#
# Kernel time and whole-command speed of two or more ffmpeg binaries with
# our filters, measured in one run, to check that a change does not slow the
# kernels down (or to measure by how much it speeds them up).
#
#   DEVICE=1.0 OUT=dir tests/bench/compare_binaries.sh before=path/ffmpeg after=path/ffmpeg
#
# For every configuration the binaries run one after the other, so that they
# see the same device state:
# - kernel time per frame (OpenCL profiling events, profile=1): the median
#   over the frames after two warm-up frames of the sum of the stages;
# - whole command from a raw 1080p yuv420p file through hwupload/hwdownload
#   to -f null, by wall clock (frames per second).
# - with CLTRACE_SO (tests/tools/cltrace.so), the peak OpenCL memory of one
#   4608x3456 frame, gray and gbrp, through each filter and preset (a binary
#   that rejects MEMORY_OPTS shows 0).
# Details go to $OUT; a short table is printed last. QUICK=1: small frames,
# to check the script on a CPU device. ONLY=REGEX: only the kernel rows
# whose name (nl-hd, nl-rgb, bm-fast-hd, vb-causal, ...) matches, and no memory or
# whole-command rows.

set -u
NAME=compare N_FULL=200 N_QUICK=6
BINARIES=("$@")
[ ${#BINARIES[@]} -ge 1 ] || { echo "usage: $0 NAME=FFMPEG ..." >&2; exit 1; }
FFMPEG=${BINARIES[0]#*=}
. "$(dirname "$0")/common.sh"

label() { echo "${1%%=*}"; }
binary() { echo "${1#*=}"; }

header() {
    local h="| measure | frames |" s="|---|---|"
    for b in "${BINARIES[@]}"; do
        h="$h $(label "$b") |"
        s="$s---|"
    done
    [ ${#BINARIES[@]} -ge 2 ] && h="$h $(label "${BINARIES[1]}") / $(label "${BINARIES[0]}") |" && s="$s---|"
    echo "$h" > "$TABLE"
    echo "$s" >> "$TABLE"
}

# row TEXT FRAMES VALUES...: a table row, with the ratio of the second value
# to the first
row() {
    local line="| $1 | $2 |"
    shift 2
    for v in "$@"; do
        line="$line $v |"
    done
    [ $# -ge 2 ] && line="$line $(calc "$2 / $1" | xargs printf '%.3f') |"
    echo "$line" >> "$TABLE"
}

# kernel LABEL SIZE FORMAT FRAMES FILTER: the median kernel time of each binary
kernel() {
    local what=$1 size=$2 fmt=$3 n=$4 filter=$5 values=() b log
    [ -n "${ONLY:-}" ] && ! [[ $what =~ $ONLY ]] && return
    for b in "${BINARIES[@]}"; do
        log=$OUT/kernel-$what-$(label "$b").log
        "$(binary "$b")" -nostdin -hide_banner $HW -f lavfi -i "$(src "$size" "$fmt")" \
            -frames:v "$n" -vf "hwupload,$filter:profile=1,hwdownload,format=$fmt" \
            -f null - > "$log" 2>&1
        values+=("$(stage "$log" total)")
    done
    row "kernel ms: $filter, $size $fmt" "$n" "${values[@]}"
}

# memory SIZE FORMAT FILTER: peak OpenCL memory (MB) of one frame, each binary
memory() {
    local size=$1 fmt=$2 filter=$3 values=() b trace
    for b in "${BINARIES[@]}"; do
        trace=$OUT/memory-$(label "$b").log
        rm -f "$trace"
        CLTRACE_OUT=$trace LD_PRELOAD=$CLTRACE_SO "$(binary "$b")" -nostdin -hide_banner $HW \
            -f lavfi -i "$(src "$size" "$fmt")" -frames:v 1 \
            -vf "hwupload,$filter,hwdownload,format=$fmt" -f null - >> "$OUT/memory.log" 2>&1
        values+=("$(sed -n 's|.*mem_peak_bytes \([0-9]*\).*|\1|p' "$trace" | sort -g | tail -n 1 |
                    awk '{ printf "%.0f", $1 / 1e6 }')")
    done
    row "peak MB: $filter, $size $fmt" 1 "${values[@]}"
}

# whole FILTER: frames per second of each binary from the raw file
whole() {
    local filter=$1 values=() b t
    for b in "${BINARIES[@]}"; do
        t=$(wall "$(binary "$b")" -nostdin -hide_banner $HW -f rawvideo -pix_fmt yuv420p \
            -s $HD -i "$RAW" -vf "hwupload,$filter,hwdownload,format=yuv420p" -f null -)
        values+=("$(calc "$N / $t" | xargs printf '%.1f')")
    done
    row "fps, whole command: $filter, $HD yuv420p" "$N" "${values[@]}"
}

header
kernel nl-hd      $HD  gray    12 "nlmeans_gpu=sigma=20"
kernel nl-big     $BIG gray     6 "nlmeans_gpu=sigma=20"
kernel nl-p5s1    $HD  gray     6 "nlmeans_gpu=sigma=20:p=5:step=1"
kernel nl-temp    $HD  yuv420p 14 "nlmeans_gpu=sigma=20:past=4:future=4"
kernel nl-rgb     $HD  gbrp    12 "nlmeans_gpu=sigma=20"
kernel nl-rgb-temp $HD gbrp    14 "nlmeans_gpu=sigma=20:past=4:future=4"
kernel bm-fast-hd $HD  gray    12 "bm3d_gpu=sigma=20"
kernel bm-fast-bg $BIG gray     6 "bm3d_gpu=sigma=20"
kernel bm-ref-hd  $HD  gray     5 "bm3d_gpu=sigma=20:preset=ref"
kernel bm-ref-big $BIG gray     4 "bm3d_gpu=sigma=20:preset=ref"
kernel vb-hd      $HD  yuv420p 20 "vbm3d_gpu=sigma=20"
kernel vb-causal  $HD  yuv420p 20 "vbm3d_gpu=sigma=20:causal=1"
kernel vb-gbrp    $HD  gbrp    20 "vbm3d_gpu=sigma=20"

# MEMORY_OPTS: further options for the memory rows, e.g. :band=16 (the
# smallest automatic bands: the memory of a device with little of it)
if [ -n "${CLTRACE_SO:-}" ] && [ -z "${ONLY:-}" ]; then
    for fmt in gray gbrp; do
        for f in "nlmeans_gpu=sigma=20" "nlmeans_gpu=sigma=20:p=5:step=1" "bm3d_gpu=sigma=20" \
                 "bm3d_gpu=sigma=20:preset=ref" "vbm3d_gpu=sigma=20" \
                 "nlmeans_gpu=sigma=20:past=4:future=4"; do
            memory $BIG $fmt "$f"
            [ -n "${MEMORY_OPTS:-}" ] && memory $BIG $fmt "$f$MEMORY_OPTS"
        done
    done
fi

if [ -n "${ONLY:-}" ]; then
    echo
    cat "$TABLE"
    exit 0
fi

RAW=$TMPDIR/compare-$$.yuv
$FF -f lavfi -i "$(src $HD yuv420p)" -frames:v $N -f rawvideo -y "$RAW" 2>> "$OUT/wall.log"
whole "nlmeans_gpu=sigma=20"
whole "nlmeans_gpu=sigma=20:past=4:future=4"
whole "bm3d_gpu=sigma=20"
whole "vbm3d_gpu=sigma=20"
whole "vbm3d_gpu=sigma=20:causal=1"
rm -f "$RAW"

echo
cat "$TABLE"
