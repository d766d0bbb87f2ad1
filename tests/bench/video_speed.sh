#!/bin/bash
#
# Speed of the video denoisers: vbm3d_gpu, and nlmeans_gpu with a temporal
# window.
#
#   FFMPEG=path/to/ffmpeg DEVICE=1.0 OUT=dir tests/bench/video_speed.sh
#
# - kernel time per frame (OpenCL profiling events, profile=1), median over
#   the frames after two warm-up frames, per stage, at 960x540 gray (the
#   size of Davy & Ehret's measure) and 1920x1080 yuv420p;
# - whole command through hwupload/hwdownload, frames per second by wall
#   clock, at 1920x1080 and 3840x2160 yuv420p.
# Details go to $OUT; a short table is printed last. QUICK=1: small frames.

NAME=video N_FULL=100 N_QUICK=5
. "$(dirname "$0")/common.sh"

if [ "${QUICK:-0}" = 1 ]; then
    QHD=160x90 UHD=640x360
else
    QHD=960x540 UHD=3840x2160
fi

VBM3D="vbm3d_gpu=sigma=20"
NLMEANS="nlmeans_gpu=sigma=20:past=4:future=4 nlmeans_gpu=sigma=20:p=16:past=4:future=4"
FILTERS="$VBM3D $VBM3D:causal=1"
$FFMPEG -hide_banner -h filter=nlmeans_gpu 2>/dev/null | grep -q '^ *past ' &&
    FILTERS="$FILTERS $NLMEANS"

kernel_time() {  # kernel_time SIZE FORMAT FRAMES FILTER
    local log=$OUT/kernel-${4%%=*}-$1-$2.log stages
    $FF $HW -f lavfi -i "$(src "$1" "$2")" -frames:v "$3" \
        -vf "hwupload,$4:profile=1,hwdownload,format=$2" -f null - > "$log" 2>&1
    stages=$(grep -m1 'kernel time:' "$log" | sed 's/.*kernel time://; s/, total.*//' |
             grep -o '[a-z/0-9]* [0-9.]* ms' | while read -r s _ _; do
                 printf '%s %s, ' "$s" "$(stage "$log" "$s")"; done)
    echo "| $4 | $1 $2 | kernels $(stage "$log" total) ms (${stages%, }) |" >> "$TABLE"
}

for f in $FILTERS; do
    kernel_time $QHD gray 16 "$f"
    kernel_time $HD yuv420p 16 "$f"
done

for size in $HD $UHD; do
    RAW=$TMPDIR/noisy-video-$size.yuv
    $FF -f lavfi -i "$(src $size yuv420p)" -frames:v $N -f rawvideo -y "$RAW" 2>> "$OUT/wall.log"
    for f in $FILTERS; do
        t=$(wall $FF $HW -f rawvideo -pix_fmt yuv420p -s $size -i "$RAW" -frames:v $N \
            -vf "hwupload,$f,hwdownload,format=yuv420p" -f null -)
        printf "| whole command, %d frames: %s | $size yuv420p | %.1f fps |\n" $N "$f" "$(calc "$N / $t")" >> "$TABLE"
    done
    t=$(wall $FF $HW -f rawvideo -pix_fmt yuv420p -s $size -i "$RAW" -frames:v $N \
        -vf "hwupload,hwdownload,format=yuv420p" -f null -)
    printf "| whole command, %d frames: hwupload,hwdownload alone | $size yuv420p | %.1f fps |\n" $N "$(calc "$N / $t")" >> "$TABLE"
    rm -f "$RAW"
done

echo
cat "$TABLE"
