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

set -u
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
DEVICE=${DEVICE:-}
OUT=${OUT:-/tmp/nlmeans-speed}
TMPDIR=${TMPDIR:-/tmp}
mkdir -p "$OUT"
HW="-init_hw_device opencl=gpu${DEVICE:+:$DEVICE} -filter_hw_device gpu"
FF="$FFMPEG -nostdin -hide_banner"
TABLE=$OUT/table.md

now() { date +%s.%N; }
calc() { awk "BEGIN { print $* }"; }

# QUICK=1: small frames, to check the script on a CPU device
if [ "${QUICK:-0}" = 1 ]; then
    HD=320x180 BIG=640x480 N=10
else
    HD=1920x1080 BIG=4608x3456 N=200
fi

# median of numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

src() {  # src WxH PIX_FMT: noisy testsrc2 frames
    echo "testsrc2=s=$1:r=25,format=yuv420p,noise=alls=20:allf=t,format=$2"
}

# kernel_time NAME SIZE FMT FRAMES OPTIONS: per-stage medians from profile=1
kernel_time() {
    local name=$1 size=$2 fmt=$3 frames=$4 opts=$5 log=$OUT/kernel-$1.log
    $FF $HW -f lavfi -i "$(src "$size" "$fmt")" -frames:v "$frames" \
        -vf "hwupload,nlmeans_gpu=$opts:profile=1,hwdownload,format=$fmt" -f null - > "$log" 2>&1
    local total search aggregate io
    total=$(grep 'kernel time:' "$log" | tail -n +3 | sed 's/.*total \([0-9.]*\) ms/\1/' | median)
    search=$(grep 'kernel time:' "$log" | tail -n +3 | sed 's/.* search \([0-9.]*\) ms.*/\1/' | median)
    aggregate=$(grep 'kernel time:' "$log" | tail -n +3 | sed 's/.* aggregate \([0-9.]*\) ms.*/\1/' | median)
    io=$(grep 'kernel time:' "$log" | tail -n +3 | sed 's/.* load\/store \([0-9.]*\) ms.*/\1/' | median)
    echo "| nlmeans_gpu $opts | $size $fmt | kernels $total ms (search $search, aggregate $aggregate, load/store $io) |" >> "$TABLE"
}

# wall NAME ARGS...: seconds of one command
wall() {
    local t0 t1
    t0=$(now)
    "$@" > /dev/null 2>> "$OUT/wall.log"
    t1=$(now)
    calc "$t1 - $t0"
}

# per_frame SIZE FMT N FILTER: wall clock per frame by the difference method,
# minus the same measure of the source alone
per_frame() {
    local size=$1 fmt=$2 n=$3 filter=$4 t1 tn s1 sn
    t1=$(wall $FF $HW -f lavfi -i "$(src "$size" "$fmt")" -frames:v 1 -vf "$filter" -f null -)
    tn=$(wall $FF $HW -f lavfi -i "$(src "$size" "$fmt")" -frames:v "$n" -vf "$filter" -f null -)
    s1=$(wall $FF -f lavfi -i "$(src "$size" "$fmt")" -frames:v 1 -f null -)
    sn=$(wall $FF -f lavfi -i "$(src "$size" "$fmt")" -frames:v "$n" -f null -)
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

kernel_time default-1080 $HD gray 20 "sigma=20"
kernel_time default-4608 $BIG gray 8  "sigma=20"
kernel_time p5s1-1080    $HD gray 8  "sigma=20:p=5:step=1"
kernel_time default-1080-yuv420p $HD yuv420p 20 "sigma=20"

ms=$(per_frame $HD yuv420p 11 "hwupload,nlmeans_opencl,hwdownload,format=yuv420p")
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
