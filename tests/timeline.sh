#!/bin/bash
#
# The timeline (enable) of the GPU denoisers, frame by frame against the
# same graph without it: a frame outside the enabled range comes out as it
# went in, and an enabled frame with the bytes of the run without the
# timeline, since disabled frames still serve as the other frames' context
# (vbm3d_gpu: their basic estimates, and the second-step groups that the
# enabled frames after them gather). Disabled ranges at the start, in the
# middle (longer than the window, so that the rings wrap while frames pass
# through) and at the end of the stream. Formats with alpha get noisy alpha
# (a different alpha each frame), which must pass through every frame.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"

N=16

# md5 OUT FORMAT [FILTER [OPTIONS]]: frame MD5s (one a line) of N noisy
# frames in FORMAT, through FILTER with OPTIONS on the device; the noise is
# added in NOISY (yuv444p unless set: noise takes planar formats only)
md5() {
    local out=$1 fmt=$2 filter=${3:-} opts=${4:-}
    ff -t 300 -y $DEV \
        -f lavfi -i "testsrc2=s=48x40:r=5,trim=end_frame=$N,format=${NOISY:-yuv444p},noise=alls=20:allf=t,format=$fmt" \
        ${filter:+-vf "hwupload,$filter$opts,hwdownload,format=$fmt"} \
        -f framemd5 "$TMP/md5" 2> "$TMP/err" || return 1
    grep -v '^#' "$TMP/md5" | awk -F, '{ print $6 }' > "$out"
}

# check NAME FORMAT FILTER A B: FILTER with frames A to B disabled
check() {
    local name=$1 fmt=$2 filter=$3 a=$4 b=$5 k why=""
    local input="$TMP/input-$fmt-${NOISY:-yuv444p}"
    RUN=$((RUN + 1))
    # the input's checksums, once per format and format of the noise
    if ! { [ -s "$input" ] || md5 "$input" "$fmt"; } ||
       ! md5 "$TMP/plain" "$fmt" "$filter" ||
       ! md5 "$TMP/timed" "$fmt" "$filter" ":enable='not(between(n,$a,$b))'"; then
        fail "$name, frames $a to $b disabled: $(tail -n 1 "$TMP/err")"
        return
    fi
    if [ "$(wc -l < "$TMP/timed")" != $N ]; then
        fail "$name, frames $a to $b disabled: $(wc -l < "$TMP/timed") frames out of $N"
        return
    fi
    paste "$input" "$TMP/plain" "$TMP/timed" > "$TMP/all"
    for ((k = 0; k < N; k++)); do
        read -r in plain timed
        if ((k >= a && k <= b)); then
            [ "$timed" = "$in" ] || why+=" $k (disabled, not its input)"
        else
            [ "$timed" = "$plain" ] || why+=" $k (other bytes than without the timeline)"
        fi
    done < "$TMP/all"
    if [ -n "$why" ]; then
        fail "$name, frames $a to $b disabled: frames$why"
    else
        ok "$name, frames $a to $b disabled"
    fi
}

# NAME|FORMAT|FILTER[|NOISY]
CASES=(
    "bm3d_gpu|yuv420p|bm3d_gpu=sigma=20"
    "bm3d_gpu sigma=auto|yuv420p|bm3d_gpu=sigma=auto"
    "nlmeans_gpu sigma=curve|yuv420p|nlmeans_gpu=sigma=curve"
    "nlmeans_gpu past=1:future=2|yuv420p|nlmeans_gpu=sigma=20:past=1:future=2"
    "vbm3d_gpu|yuv420p|vbm3d_gpu=sigma=20"
    "vbm3d_gpu past=1:future=1|yuv420p|vbm3d_gpu=sigma=20:past=1:future=1"
    "vbm3d_gpu causal|yuv420p|vbm3d_gpu=sigma=20:causal=1"
    "vbm3d_gpu estim=basic|yuv420p|vbm3d_gpu=sigma=20:estim=basic"
    "vbm3d_gpu gbrp sigma=auto|gbrp|vbm3d_gpu=sigma=auto:past=2:future=2"
    "bm3d_gpu yuva420p|yuva420p|bm3d_gpu=sigma=20|yuva420p"
    "nlmeans_gpu rgba|rgba|nlmeans_gpu=sigma=20|gbrap"
    "vbm3d_gpu argb|argb|vbm3d_gpu=sigma=20:past=1:future=1|gbrap"
)
for c in "${CASES[@]}"; do
    IFS='|' read -r name fmt filter NOISY <<< "$c"
    check "$name" "$fmt" "$filter" 0 5
    check "$name" "$fmt" "$filter" 2 7
    check "$name" "$fmt" "$filter" 12 15
done

summary timeline
