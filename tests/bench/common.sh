# Shared by the speed benchmarks: sourced, with NAME set to the benchmark's
# name and N_FULL / N_QUICK to its number of frames for the whole-command
# measure. Environment: FFMPEG, DEVICE (OpenCL P.D), OUT, QUICK=1 (small
# frames, to check a script on a CPU device). What all the shell tests
# share comes from tests/lib.sh (FFMPEG's default, TMP, on_exit).

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
DEVICE=${DEVICE:-}
OUT=${OUT:-/tmp/$NAME-speed}
TMPDIR=${TMPDIR:-/tmp}
mkdir -p "$OUT"
HW=$(dev_options gpu "$DEVICE")
FF="$FFMPEG -nostdin -hide_banner"
TABLE=$OUT/table.md

if [ "${QUICK:-0}" = 1 ]; then
    HD=320x180 BIG=640x480 N=$N_QUICK
else
    HD=1920x1080 BIG=4608x3456 N=$N_FULL
fi

now() { date +%s.%N; }
calc() { awk "BEGIN { print $* }"; }

# median of numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# src WxH PIX_FMT: noisy testsrc2 frames
src() { echo "testsrc2=s=$1:r=25,format=yuv420p,noise=alls=20:allf=t,format=$2"; }

# stage LOG NAME: median time of a stage of the filters' profile=1 lines,
# after two warm-up frames ("total" for the sum of the stages)
stage() {
    grep 'kernel time:' "$1" | tail -n +3 | sed -n "s|.* $2 \([0-9.]*\) ms.*|\1|p" | median
}

# wall COMMAND...: seconds the command took
wall() {
    local t0 t1
    t0=$(now)
    "$@" > /dev/null 2>> "$OUT/wall.log"
    t1=$(now)
    calc "$t1 - $t0"
}

# per_frame SIZE FMT N HW FILTER_OPTION FILTER: milliseconds per frame by the
# difference method (t(N) - t(1)) / (N - 1), minus the same for the source
# alone; HW is "$HW" or "" and FILTER_OPTION -vf or -filter_complex
per_frame() {
    local size=$1 fmt=$2 n=$3 hw=$4 opt=$5 filter=$6 t1 tn s1 sn
    t1=$(wall $FF $hw -f lavfi -i "$(src "$size" "$fmt")" -frames:v 1 "$opt" "$filter" -f null -)
    tn=$(wall $FF $hw -f lavfi -i "$(src "$size" "$fmt")" -frames:v "$n" "$opt" "$filter" -f null -)
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
