#!/bin/bash
#
# tools/denoise-segments on one and several OpenCL devices against one pass
# of ffmpeg on one device: wall time of the whole job, and with lossless
# output whether the joined frames are those of the one pass.
#
#   FFMPEG=path/ffmpeg FFPROBE=path/ffprobe DEVICES="1.0 1.0,1.0 1.0,1.1" \
#       CODEC=mpeg4 OUT=dir tests/bench/segments.sh
#
# Input, made here: N (1200) frames of noisy 1920x1080 yuv420p testsrc2,
# raw in NUT (CODEC=raw) or as an MPEG-4 Part 2 clip (CODEC=mpeg4, FFmpeg's
# own encoder, -q:v 2, a key frame every 25 frames). Output: rawvideo in
# Matroska (raw; then each run's decoded frames are hashed and compared with
# the one pass) or MPEG-4 (-q:v 3; then only the frame count is checked,
# since each segment starts its own GOP). Each filter of FILTERS runs once
# on the first device of DEVICES' first list (one pass), then through
# tools/denoise-segments with each list of DEVICES (--devices; a device
# listed twice runs two jobs on it), segments of SEGMENT_FRAMES (300)
# frames. The filters' programs are compiled on every device first (a
# driver that caches its binaries, as NVIDIA's does, would otherwise charge
# the first run with it). PARALLEL: GNU parallel (default: parallel).
# QUICK=1: 96x64 frames, 40 of them, segments of 10, on the default device,
# to check the script on a CPU device. A table is printed last and written
# to $OUT/table.md, the tool's own logs to $OUT/segments.log.

set -u
NAME=segments N_FULL=${N:-1200} N_QUICK=40
. "$(dirname "$0")/common.sh"
FFPROBE=${FFPROBE:-$(dirname "$FFMPEG")/ffprobe}
PARALLEL=${PARALLEL:-parallel}
CODEC=${CODEC:-mpeg4}
FILTERS=${FILTERS:-vbm3d_gpu=sigma=20 bm3d_gpu=sigma=20:preset=ref nlmeans_gpu=sigma=20}
if [ "${QUICK:-0}" = 1 ]; then
    SIZE=96x64 SEGMENT_FRAMES=10 DEVICES=${DEVICES:-0.0 0.0,0.0}
else
    SIZE=1920x1080 SEGMENT_FRAMES=${SEGMENT_FRAMES:-300}
    DEVICES=${DEVICES:-1.0 1.0,1.0 1.0,1.1}
fi
SEGMENTS=$(dirname "$0")/../../tools/denoise-segments
W=$TMP

since() { printf '%.2f' "$(calc "$(now) - $1")"; }
fps() { printf '%.1f' "$(calc "$1 / $2")"; }
ff() { "$FFMPEG" -nostdin -hide_banner -v error "$@"; }
frames() {
    "$FFPROBE" -v error -select_streams v:0 -count_packets \
        -show_entries stream=nb_read_packets -of csv=p=0 "$1"
}
# the decoded frames' hashes, hashed (lossless output only); a segmented
# run whose frames (raw) or frame count (mpeg4) differ from the one pass's
# is marked in the table and makes the exit status 1
frames_hash() { ff -i "$1" -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }' | md5sum | cut -c1-12; }
what() { if [ "$CODEC" = raw ]; then frames_hash "$1"; else echo "$(frames "$1") frames"; fi; }

if [ "$CODEC" = raw ]; then
    IN=$W/in.nut IN_ARGS="-c:v rawvideo -f nut" OUT_ARGS="-c:v rawvideo"
else
    IN=$W/in.mkv IN_ARGS="-c:v mpeg4 -q:v 2 -g 25 -f matroska" OUT_ARGS="-c:v mpeg4 -q:v 3 -g 25"
fi
t0=$(now)
ff -f lavfi -i "$(src "$SIZE" yuv420p)" \
    -frames:v "$N" $IN_ARGS "$IN" || exit 1
{
    echo "date: $(date -u +%FT%TZ); $(nproc) processors; input: $N frames of $SIZE yuv420p, $CODEC ($(du -m "$IN" | cut -f1) MB, made in $(since "$t0") s)"
    t0=$(now); ff -i "$IN" -f null -; echo "decoding alone: $(fps "$N" "$(since "$t0")") fps"
    t0=$(now); ff -i "$IN" $OUT_ARGS -f matroska -y "$W/copy.mkv"
    echo "decoding and encoding alone: $(fps "$N" "$(since "$t0")") fps"
} | tee "$OUT/setup.txt"

first=${DEVICES%% *}; first=${first%%,*}
for f in $FILTERS; do
    for d in $(echo "$DEVICES" | tr ' ,' '\n\n' | sort -u); do
        ff -init_hw_device "opencl=dn:$d" -filter_hw_device dn -i "$IN" -frames:v 4 -vf "$f" -f null - || exit 1
    done
done

echo "| filter | run | devices | seconds | fps | output |" > "$TABLE"
echo "|---|---|---|---|---|---|" >> "$TABLE"
status=0
for f in $FILTERS; do
    t0=$(now)
    ff -init_hw_device "opencl=dn:$first" -filter_hw_device dn -i "$IN" -vf "$f" \
        $OUT_ARGS -f matroska -y "$W/one.mkv" || status=1
    t=$(since "$t0")
    one=$(what "$W/one.mkv")
    echo "| \`$f\` | one pass | $first | $t | $(fps "$N" "$t") | $one |" >> "$TABLE"
    for devs in $DEVICES; do
        rm -rf "$W/seg.mkv" "$W/seg.mkv.parts"
        t0=$(now)
        python3 "$SEGMENTS" -i "$IN" -o "$W/seg.mkv" --vf "$f" --devices "$devs" \
            --segment-frames "$SEGMENT_FRAMES" --ffmpeg "$FFMPEG" --ffprobe "$FFPROBE" \
            --parallel "$PARALLEL" --no-bar -- $OUT_ARGS >> "$OUT/segments.log" 2>&1 || status=1
        t=$(since "$t0")
        got=$(what "$W/seg.mkv")
        if [ "$got" != "$one" ]; then
            got="$got: **not the one pass's**"
            status=1
        fi
        echo "| \`$f\` | segments | $devs | $t | $(fps "$N" "$t") | $got |" >> "$TABLE"
    done
done
cat "$TABLE"
exit $status
