#!/bin/bash
#
# Where the time of a whole ffmpeg command goes, per frame, for each filter:
# reading or decoding the input, the upload and download of the frames,
# the filter's kernels, the whole command to -f null and to a file; with
# the bus's own bandwidth measured in the same run (tests/tools/clbandwidth).
#
#   FFMPEG=path/to/ffmpeg CLBANDWIDTH=path/to/clbandwidth DEVICE=1.0 \
#       OUT=dir tests/bench/pipeline.sh
#
# Inputs, made here with ffmpeg: raw yuv420p files of 1920x1080 and
# 3840x2160 (noisy testsrc2), and an MPEG-4 Part 2 clip of the first (FFmpeg's
# native encoder). Times per frame by the difference method:
# (t(N) - t(N0)) / (N - N0) with N output frames, which removes start-up
# (device, program build) and the frames a temporal filter reads ahead.
# - read: the input to -f null;
# - transfers: hwupload,hwdownload, minus read;
# - kernels: the filter's own kernel time (profile=1, median after warm-up);
# - whole: the command through hwupload, the filter and hwdownload to
#   -f null; "to file": the same, encoded with mpeg4 into a file; "software
#   frames": the filter alone, uploading and downloading itself;
# - the issue's bound: 1.2 x max(kernels, transfers).
# Whole-command times are the median of REPEAT (3) measures. Details go to
# $OUT; a short table is printed last. QUICK=1: small frames, to check the
# script on a CPU device. SIZES: other sizes (the first also gets the
# MPEG-4 clip).

NAME=pipeline N_FULL=200 N_QUICK=8
. "$(dirname "$0")/common.sh"

if [ "${QUICK:-0}" = 1 ]; then
    SIZES="320x180 640x360" N0=2
else
    SIZES=${SIZES:-1920x1080 3840x2160} N0=10
fi
FILTERS="nlmeans_gpu=sigma=20 bm3d_gpu=sigma=20 vbm3d_gpu=sigma=20 vbm3d_gpu=sigma=20:causal=1"
CLBANDWIDTH=${CLBANDWIDTH:-}
WORK=$TMP

# per_frame N INPUT_ARGS... -- OUTPUT_ARGS...: ms per frame of a command by
# the difference method between N0 and N frames, the median of REPEAT
# measures
REPEAT=${REPEAT:-3}
per_frame_cmd() {
    local n=$1 t0 t1 in=() out=() r
    shift
    while [ "$1" != -- ]; do in+=("$1"); shift; done
    shift
    out=("$@")
    for ((r = 0; r < REPEAT; r++)); do
        t0=$(wall $FF $HW "${in[@]}" -frames:v $N0 "${out[@]}")
        t1=$(wall $FF $HW "${in[@]}" -frames:v "$n" "${out[@]}")
        calc "($t1 - $t0) / ($n - $N0) * 1000"
    done | median
}

fmt2() { printf '%.2f' "$1"; }

# whether this ffmpeg's denoisers take software frames (older ones do not)
supports_software() {
    $FF $HW -f lavfi -i "testsrc2=s=64x48:d=0.1" -vf nlmeans_gpu -f null - > /dev/null 2>&1
}

echo "| input | stage or filter | ms per frame | fps |" > "$TABLE"
echo "|---|---|---|---|" >> "$TABLE"

for size in $SIZES; do
    n=$N
    [ "$size" = 3840x2160 ] && n=$((N / 2))
    raw=$WORK/$size.yuv
    # 16 frames more than measured: vbm3d_gpu reads 8 frames ahead
    $FF -f lavfi -i "$(src "$size" yuv420p)" -frames:v $((n + 16)) -f rawvideo -y "$raw" 2>> "$OUT/wall.log"
    inputs="raw"
    if [ "$size" = "${SIZES%% *}" ]; then
        $FF -f rawvideo -pix_fmt yuv420p -s "$size" -i "$raw" -c:v mpeg4 -q:v 3 \
            -y "$WORK/$size.avi" 2>> "$OUT/wall.log"
        inputs="raw mpeg4"
    fi
    for kind in $inputs; do
        if [ "$kind" = raw ]; then
            in=(-f rawvideo -pix_fmt yuv420p -s "$size" -i "$raw")
        else
            in=(-i "$WORK/$size.avi")
        fi
        label="$size $kind"
        read_ms=$(per_frame_cmd "$n" "${in[@]}" -- -f null -)
        echo "| $label | read/decode | $(fmt2 "$read_ms") | |" >> "$TABLE"
        both=$(per_frame_cmd "$n" "${in[@]}" -- -vf "hwupload,hwdownload,format=yuv420p" -f null -)
        xfer=$(calc "$both - $read_ms")
        echo "| $label | hwupload,hwdownload (minus read) | $(fmt2 "$xfer") | $(fmt2 "$(calc "1000 / $both")") |" >> "$TABLE"
        for f in $FILTERS; do
            log=$OUT/kernel-$size-$kind-${f%%=*}-$(echo "${f#*=}" | tr ':=' '__').log
            $FF $HW "${in[@]}" -frames:v 30 -vf "hwupload,$f:profile=1,hwdownload,format=yuv420p" \
                -f null - > "$log" 2>&1
            kern=$(stage "$log" total)
            whole=$(per_frame_cmd "$n" "${in[@]}" -- -vf "hwupload,$f,hwdownload,format=yuv420p" -f null -)
            bound=$(calc "1.2 * ($kern > $xfer ? $kern : $xfer)")
            echo "| $label | $f: kernels | $(fmt2 "$kern") | |" >> "$TABLE"
            echo "| $label | $f: whole command to -f null (bound 1.2 x max(kernels, transfers): $(fmt2 "$bound")) | $(fmt2 "$whole") | $(fmt2 "$(calc "1000 / $whole")") |" >> "$TABLE"
            if supports_software; then
                whole=$(per_frame_cmd "$n" "${in[@]}" -- -vf "$f" -f null -)
                echo "| $label | $f: software frames in and out, to -f null | $(fmt2 "$whole") | $(fmt2 "$(calc "1000 / $whole")") |" >> "$TABLE"
            fi
            if [ "$kind" = mpeg4 ] && [ "$f" = "${FILTERS%% *}" ]; then
                enc=$(per_frame_cmd "$n" "${in[@]}" -- -vf "hwupload,$f,hwdownload,format=yuv420p" \
                      -c:v mpeg4 -q:v 3 -y "$WORK/out.avi")
                echo "| $label | $f: whole command to an mpeg4 file | $(fmt2 "$enc") | $(fmt2 "$(calc "1000 / $enc")") |" >> "$TABLE"
            fi
        done
    done
    rm -f "$raw"
done

if [ -n "$CLBANDWIDTH" ]; then
    p=${DEVICE%%.*} d=${DEVICE#*.}
    "$CLBANDWIDTH" ${DEVICE:+-p "$p" -d "$d"} -w "${SIZES%%x*}" -h "$(echo "${SIZES%% *}" | cut -dx -f2)" \
        > "$OUT/bandwidth.md" 2>&1
fi

echo
cat "$TABLE"
[ -f "$OUT/bandwidth.md" ] && { echo; cat "$OUT/bandwidth.md"; }
exit 0
