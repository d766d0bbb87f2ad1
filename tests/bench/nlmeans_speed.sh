#!/bin/bash
#
# Speed of nlmeans_gpu, with nlmeans_opencl measured in the same run.
#
#   FFMPEG=path/to/ffmpeg DEVICE=1.0 OUT=dir tests/bench/nlmeans_speed.sh
#
# - kernel time per frame of nlmeans_gpu (OpenCL profiling events, the
#   filter's profile=1 option), median over the frames after two warm-up
#   frames, on $HD and $BIG gray, defaults and P5,S1;
# - nlmeans_opencl at its defaults (s=1 p=7 r=15): it has no profiling, so its
#   time per frame is the wall clock difference (t(N frames) - t(1 frame)) /
#   (N - 1) with the same source, which includes the source generation
#   measured alone the same way and subtracted;
# - whole-command frames per second at 1080p yuv420p through hwupload and
#   hwdownload, reading a raw file of noisy frames, for both filters.
#
# Details go to $OUT; a short table is printed last.

NAME=nlmeans N_FULL=200 N_QUICK=10
. "$(dirname "$0")/common.sh"

# kernel_time NAME SIZE FMT FRAMES OPTIONS: per-stage medians from profile=1
kernel_time() {
    local name=$1 size=$2 fmt=$3 frames=$4 opts=$5 log=$OUT/kernel-$1.log
    $FF $HW -f lavfi -i "$(src "$size" "$fmt")" -frames:v "$frames" \
        -vf "hwupload,nlmeans_gpu=$opts:profile=1,hwdownload,format=$fmt" -f null - > "$log" 2>&1
    echo "| nlmeans_gpu $opts | $size $fmt | kernels $(stage "$log" total) ms (search $(stage "$log" search), weights $(stage "$log" weights), aggregate $(stage "$log" aggregate), load/store $(stage "$log" load/store)) |" >> "$TABLE"
}

kernel_time default-1080 $HD gray 20 "sigma=20"
kernel_time default-4608 $BIG gray 8  "sigma=20"
kernel_time p5s1-1080    $HD gray 8  "sigma=20:p=5:step=1"
kernel_time default-1080-yuv420p $HD yuv420p 20 "sigma=20"

ms=$(per_frame $HD yuv420p 11 "$HW" -vf "hwupload,nlmeans_opencl,hwdownload,format=yuv420p")
printf "| nlmeans_opencl defaults (wall clock, difference method) | $HD yuv420p | %.1f ms |\n" "$ms" >> "$TABLE"

# nlmeans_opencl on a large frame: does its 32-bit integral image overflow?
$FF $HW -f lavfi -i "$(src $BIG yuv420p)" -frames:v 1 \
    -vf "hwupload,nlmeans_opencl,hwdownload,format=yuv420p" -f null - > "$OUT/nlmeans_opencl-4608.log" 2>&1
overflow=$(grep -c "integral image overflow" "$OUT/nlmeans_opencl-4608.log")
echo "| nlmeans_opencl $BIG yuv420p: 'integral image overflow' messages | | $overflow |" >> "$TABLE"

# whole command through hwupload/hwdownload, from a raw file
RAW=$TMPDIR/noisy-1080p.yuv
$FF -f lavfi -i "$(src $HD yuv420p)" -frames:v $N -f rawvideo -y "$RAW" 2>> "$OUT/wall.log"
for f in "nlmeans_gpu=sigma=20" "nlmeans_gpu=sigma=20:p=5:step=1" "nlmeans_opencl"; do
    n=$N
    [ "$f" = nlmeans_opencl ] && n=$((N < 30 ? N : 30))
    t=$(wall $FF $HW -f rawvideo -pix_fmt yuv420p -s $HD -i "$RAW" -frames:v $n \
        -vf "hwupload,$f,hwdownload,format=yuv420p" -f null -)
    printf "| whole command, %d frames: %s | $HD yuv420p | %.1f fps |\n" $n "$f" \
        "$(calc "$n / $t")" >> "$TABLE"
done
rm -f "$RAW"

echo
cat "$TABLE"
