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

set -u
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
DEVICE=${DEVICE:-}
OUT=${OUT:-/tmp/bm3d-speed}
TMPDIR=${TMPDIR:-/tmp}
mkdir -p "$OUT"
HW="-init_hw_device opencl=gpu${DEVICE:+:$DEVICE} -filter_hw_device gpu"
FF="$FFMPEG -nostdin -hide_banner"
TABLE=$OUT/table.md
if [ "${QUICK:-0}" = 1 ]; then
    HD=320x180 BIG=640x480 N=5
else
    HD=1920x1080 BIG=4608x3456 N=100
fi

now() { date +%s.%N; }
calc() { awk "BEGIN { print $* }"; }
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
src() { echo "testsrc2=s=$1:r=25,format=yuv420p,noise=alls=20:allf=t,format=$2"; }
stage() {  # stage LOG NAME
    grep 'kernel time:' "$1" | tail -n +3 | sed -n "s|.* $2 \([0-9.]*\) ms.*|\1|p" | median
}

kernel_time() {  # kernel_time NAME SIZE FRAMES OPTIONS
    local log=$OUT/kernel-$1.log
    $FF $HW -f lavfi -i "$(src "$2" gray)" -frames:v "$3" \
        -vf "hwupload,bm3d_gpu=$4:profile=1,hwdownload,format=gray" -f null - > "$log" 2>&1
    local total
    total=$(grep 'kernel time:' "$log" | tail -n +3 | sed 's/.*total \([0-9.]*\) ms/\1/' | median)
    echo "| bm3d_gpu $4 | $2 gray | kernels $total ms (step 1: search $(stage "$log" search1), filter $(stage "$log" filter1); step 2: search $(stage "$log" search2), filter $(stage "$log" filter2); normalise $(stage "$log" normalise), load/store $(stage "$log" load/store)) |" >> "$TABLE"
}

wall() {
    local t0 t1
    t0=$(now)
    "$@" > /dev/null 2>> "$OUT/wall.log"
    t1=$(now)
    calc "$t1 - $t0"
}

cpu_per_frame() {  # cpu_per_frame N FILTERGRAPH
    local n=$1 graph=$2 t1 tn s1 sn
    t1=$(wall $FF -f lavfi -i "$(src $HD gray)" -frames:v 1 -filter_complex "$graph" -f null -)
    tn=$(wall $FF -f lavfi -i "$(src $HD gray)" -frames:v "$n" -filter_complex "$graph" -f null -)
    s1=$(wall $FF -f lavfi -i "$(src $HD gray)" -frames:v 1 -f null -)
    sn=$(wall $FF -f lavfi -i "$(src $HD gray)" -frames:v "$n" -f null -)
    calc "(($tn - $t1) - ($sn - $s1)) / ($n - 1) * 1000"
}

{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(uname -n), $(nproc) CPU cores"
    command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    command -v clinfo > /dev/null && clinfo -l
    echo "ffmpeg: $($FFMPEG -version | head -n1)"
} > "$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

echo "| what | frame | time per frame |" > "$TABLE"
echo "|---|---|---|" >> "$TABLE"
kernel_time fast-hd  $HD  12 "sigma=20"
kernel_time fast-big $BIG 6  "sigma=20"
kernel_time ref-hd   $HD  6  "sigma=20:preset=ref"
kernel_time ref-big  $BIG 4  "sigma=20:preset=ref"

ms=$(cpu_per_frame 6 "bm3d=sigma=100:group=1:estim=basic")
printf "| FFmpeg bm3d, one pass, group=1, %d threads (wall clock) | $HD gray | %.1f ms |\n" "$(nproc)" "$ms" >> "$TABLE"
ms=$(cpu_per_frame 3 "split[a][b];[a]bm3d=sigma=100:group=1:estim=basic[s];[b][s]bm3d=sigma=100:group=16:estim=final:ref=1")
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
