#!/bin/bash
#
# Cost of the noise estimation (sigma=auto, sigma=curve) of the denoisers,
# and its quality on larger inputs than make check's.
#
#   FFMPEG=path/to/ffmpeg DEVICE=1.0 OUT=dir tests/bench/noise_speed.sh
#
# - kernel time per frame (OpenCL profiling events, profile=1), median over
#   the frames after two warm-up frames: the whole filter with sigma=20, and
#   with sigma=auto and sigma=curve with the share of their "noise estimate"
#   stage (and of the transforms, "vst", for curve), at 960x540 gray,
#   1920x1080 gray and yuv420p and 4608x3456 gray;
# - whole command through hwupload/hwdownload, frames per second by wall
#   clock, 1920x1080 yuv420p, sigma=20 against sigma=auto (the estimate is
#   read back before the frame's kernels are enqueued);
# - unless NO_QUALITY=1, tests/quality/noise_quality.py on the whole
#   photographs and 288x288 crops and 256x256 pans (needs python3 and the
#   awgn tool: TOOLS=dir holding it, default build/tests; photographs from
#   PHOTO_CACHE, default build/photos).
# Details go to $OUT; the tables are printed last. QUICK=1: small frames.

NAME=noise N_FULL=100 N_QUICK=5
. "$(dirname "$0")/common.sh"

if [ "${QUICK:-0}" = 1 ]; then
    QHD=160x90
else
    QHD=960x540
fi

FILTERS="nlmeans_gpu bm3d_gpu vbm3d_gpu"

ms() { awk -v v="$1" 'BEGIN { printf "%.3f ms", v }'; }
share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f %%", 100 * a / b }'; }

# kernel_time SIZE FORMAT FRAMES FILTER: a row of the table
kernel_time() {
    local base=$OUT/kernel-$4-$1-$2 log total est vst
    local row="| $4 | $1 $2 |"
    for sigma in 20 auto curve; do
        log=$base-$sigma.log
        $FF $HW -f lavfi -i "$(src "$1" "$2")" -frames:v "$3" \
            -vf "hwupload,$4=sigma=$sigma:profile=1,hwdownload,format=$2" -f null - > "$log" 2>&1
        total=$(stage "$log" total)
        est=$(stage "$log" "noise estimate")
        vst=$(stage "$log" vst)
        case $sigma in
        20) row="$row $(ms "$total") |" ;;
        auto) row="$row $(ms "$total"), estimate $(ms "$est") ($(share "$est" "$total")) |" ;;
        curve) row="$row $(ms "$total"), estimate $(ms "$est") ($(share "$est" "$total")), vst $(ms "$vst") |" ;;
        esac
    done
    echo "$row" >> "$TABLE"
}

{
    echo "| filter | frames | kernels, sigma=20 | kernels, sigma=auto | kernels, sigma=curve |"
    echo "|---|---|---|---|---|"
} >> "$TABLE"
for f in $FILTERS; do
    kernel_time $QHD gray 16 $f
    kernel_time $HD gray 16 $f
    kernel_time $HD yuv420p 16 $f
done
for f in nlmeans_gpu bm3d_gpu; do
    kernel_time $BIG gray 6 $f
done

RAW=$TMPDIR/noisy-noise-$HD.yuv
$FF -f lavfi -i "$(src $HD yuv420p)" -frames:v $N -f rawvideo -y "$RAW" 2>> "$OUT/wall.log"
{
    echo
    echo "| whole command, $N frames, $HD yuv420p | sigma=20 | sigma=auto |"
    echo "|---|---|---|"
} >> "$TABLE"
for f in $FILTERS; do
    row="| $f |"
    for sigma in 20 auto; do
        t=$(wall $FF $HW -f rawvideo -pix_fmt yuv420p -s $HD -i "$RAW" -frames:v $N \
            -vf "hwupload,$f=sigma=$sigma,hwdownload,format=yuv420p" -f null -)
        row="$row $(awk -v n=$N -v t="$t" 'BEGIN { printf "%.1f", n / t }') fps |"
    done
    echo "$row" >> "$TABLE"
done
rm -f "$RAW"

if [ "${NO_QUALITY:-0}" != 1 ]; then
    PHOTO_CACHE=${PHOTO_CACHE:-build/photos} python3 "$(dirname "$0")/../quality/noise_quality.py" \
        --ffmpeg "$FFMPEG" --tools "${TOOLS:-build/tests}" --work "$OUT/quality" \
        ${DEVICE:+--device $DEVICE} --acc-size whole --crop 288 --pan 256 --cost-size 1024 \
        --report "$OUT/noise_quality.md" > "$OUT/noise_quality.log" 2>&1
    echo "noise_quality.py: exit status $?" >> "$TABLE"
fi

echo
cat "$TABLE"
[ -f "$OUT/noise_quality.md" ] && cat "$OUT/noise_quality.md"
exit 0
