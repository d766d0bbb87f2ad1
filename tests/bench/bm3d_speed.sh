#!/bin/bash
#
# Speed of bm3d_gpu, with FFmpeg's CPU bm3d measured in the same run.
#
#   FFMPEG=path/to/ffmpeg DEVICE=1.0 OUT=dir tests/bench/bm3d_speed.sh
#
# - kernel time per frame of bm3d_gpu (OpenCL profiling events, profile=1),
#   median over the frames after two warm-up frames, per stage, on
#   1920x1080 and 4608x3456 gray, presets fast and ref;
# - FFmpeg's bm3d on all CPU cores, wall clock per frame by the difference
#   method (t(N) - t(1)) / (N - 1), minus the same for the source alone: one
#   pass with group 1, and two passes (ref=1, group 16), at 1920x1080 gray;
# - whole command through hwupload/hwdownload at 1080p yuv420p.
# Details go to $OUT; a short table is printed last. QUICK=1: small frames.

NAME=bm3d N_FULL=100 N_QUICK=5
. "$(dirname "$0")/common.sh"

kernel_time() {  # kernel_time NAME SIZE FRAMES OPTIONS
    local log=$OUT/kernel-$1.log
    $FF $HW -f lavfi -i "$(src "$2" gray)" -frames:v "$3" \
        -vf "hwupload,bm3d_gpu=$4:profile=1,hwdownload,format=gray" -f null - > "$log" 2>&1
    echo "| bm3d_gpu $4 | $2 gray | kernels $(stage "$log" total) ms (step 1: search $(stage "$log" search1), filter $(stage "$log" filter1); step 2: search $(stage "$log" search2), filter $(stage "$log" filter2); normalise $(stage "$log" normalise), load/store $(stage "$log" load/store)) |" >> "$TABLE"
}

kernel_time fast-hd  $HD  12 "sigma=20"
kernel_time fast-big $BIG 6  "sigma=20"
kernel_time ref-hd   $HD  6  "sigma=20:preset=ref"
kernel_time ref-big  $BIG 4  "sigma=20:preset=ref"

ms=$(per_frame $HD gray 6 "" -filter_complex "bm3d=sigma=100:group=1:estim=basic")
printf "| FFmpeg bm3d, one pass, group=1, %d threads (wall clock) | $HD gray | %.1f ms |\n" "$(nproc)" "$ms" >> "$TABLE"
ms=$(per_frame $HD gray 3 "" -filter_complex "split[a][b];[a]bm3d=sigma=100:group=1:estim=basic[s];[b][s]bm3d=sigma=100:group=16:estim=final:ref=1")
printf "| FFmpeg bm3d, two passes, group=16, %d threads (wall clock) | $HD gray | %.1f ms |\n" "$(nproc)" "$ms" >> "$TABLE"

RAW=$TMPDIR/noisy-bm3d.yuv
$FF -f lavfi -i "$(src $HD yuv420p)" -frames:v $N -f rawvideo -y "$RAW" 2>> "$OUT/wall.log"
for f in "bm3d_gpu=sigma=20" "bm3d_gpu=sigma=20:preset=ref"; do
    t=$(wall $FF $HW -f rawvideo -pix_fmt yuv420p -s $HD -i "$RAW" -frames:v $N \
        -vf "hwupload,$f,hwdownload,format=yuv420p" -f null -)
    printf "| whole command, %d frames: %s | $HD yuv420p | %.1f fps |\n" $N "$f" "$(calc "$N / $t")" >> "$TABLE"
done
rm -f "$RAW"

echo
cat "$TABLE"
