#!/bin/bash
#
# Valgrind memcheck over a short stream through each filter: nlmeans_gpu
# (spatial and temporal), bm3d_gpu (both presets, YUV and RGB),
# vbm3d_gpu (default, and causal on 16-bit gray), plus two failure
# paths (an option refused at init, a device refusing an image in
# mid-stream with frames queued in vbm3d_gpu), and software frames in and
# out (vbm3d_gpu, and nlmeans_gpu with an image refused mid-stream, and
# on the filter's own device, none given). Each
# case must have
#   - no memcheck error (invalid read or write, use of an uninitialised
#     value, bad free) and no definitely lost block;
#   - for a good run, every frame out and the same bytes as the same run
#     without valgrind;
#   - for a failure path, a non-zero exit with a message, not a signal.
# Leaks made on the OpenCL implementation's own threads (PoCL compiling
# kernels with LLVM, its thread descriptors) are suppressed by
# tests/valgrind.supp; everything allocated on ffmpeg's threads counts.
#
#   FFMPEG=... CLFAULT_SO=... [OPENCL_DEVICE=P.D] tests/valgrind.sh
#
# Uses ffmpeg_g (the same program with symbols) when it is beside FFMPEG.

. "$(dirname "$0")/lib.sh"
CLFAULT_SO=${CLFAULT_SO:-build/tests/clfault.so}
SUPP=$TESTS/valgrind.supp
FRAMES=5
VG_ERROR=99

command -v valgrind > /dev/null || { echo "valgrind: not installed"; exit 1; }
[ -x "${FFMPEG}_g" ] && FFMPEG=${FFMPEG}_g
[ -f "$CLFAULT_SO" ] || { echo "valgrind: no $CLFAULT_SO"; exit 1; }
CLFAULT_SO=$(cd "$(dirname "$CLFAULT_SO")" && pwd)/$(basename "$CLFAULT_SO")

# ffmpeg_args FORMAT FILTER: the command line after the program; with
# SOFTWARE=1 the filter takes software frames and uploads them itself
ffmpeg_args() {
    local vf="hwupload,$2,hwdownload,format=$1"
    [ "${SOFTWARE:-0}" = 1 ] && vf=$2
    echo -nostdin -hide_banner -loglevel error $DEV \
        -f lavfi -i "testsrc2=s=64x48:r=5,format=$1" -frames:v $FRAMES \
        -vf "$vf" -f framemd5 -
}

# memcheck OUT LOG ARGS...: ffmpeg under valgrind, stdout to OUT
memcheck() {
    local out=$1 log=$2
    shift 2
    timeout 900 valgrind --tool=memcheck --leak-check=full \
        --errors-for-leak-kinds=definite --error-exitcode=$VG_ERROR \
        --suppressions="$SUPP" --num-callers=100 --log-file="$log" \
        "$FFMPEG" "$@" > "$out" 2> "$log.err"
}

# warm_cache ARGS...: ffmpeg under valgrind's lightest tool, in the
# background, as many at a time as there are cores. Valgrind shows PoCL
# another CPU (without AVX-512), so PoCL compiles the kernels for another
# target than in a plain run, and its kernel cache misses; LLVM compiling
# them under memcheck took most of this test's time (about 60 s a program
# against 16 s under --tool=none, on 2 cores). Every case is run that way
# first (WARMING=1), so that memcheck finds its kernels in the cache and
# checks the same host code, PoCL's compiler aside.
warm_cache() {
    wait_for_slot "$(nproc)"
    timeout 900 valgrind --tool=none "$FFMPEG" "$@" > /dev/null 2>&1 &
}

# the first line of each kind of memcheck finding
FINDING="Invalid (read|write|free)|uninitialised|Mismatched free|definitely lost in|Syscall param"

# the memcheck findings of LOG, or nothing when it is clean
findings() {
    grep -E "$FINDING" "$1"
}

# the first finding with its stack, and how many there are
first_finding() {
    grep -E -A 30 -m 1 "$FINDING" "$1" | sed '/^==[0-9]*== $/q'
    grep "ERROR SUMMARY" "$1"
}

leak_summary() {
    grep -Eo "definitely lost: [0-9,]+ bytes|no leaks are possible" "$1" | head -n 1
}

# expect_ok FORMAT FILTER
expect_ok() {
    local rc frames
    [ -n "${WARMING:-}" ] && { warm_cache $(ffmpeg_args "$1" "$2"); return; }
    RUN=$((RUN + 1))
    if ! "$FFMPEG" $(ffmpeg_args "$1" "$2") > "$TMP/plain" 2> "$TMP/err"; then
        fail "$1 $2: failed without valgrind"; tail -n 5 "$TMP/err"
        return
    fi
    memcheck "$TMP/vg" "$TMP/log" $(ffmpeg_args "$1" "$2")
    rc=$?
    frames=$(grep -vc '^#' "$TMP/vg")
    if [ $rc -eq $VG_ERROR ] || [ -n "$(findings "$TMP/log")" ]; then
        fail "$1 $2: memcheck errors"; first_finding "$TMP/log"
    elif [ $rc -ne 0 ]; then
        fail "$1 $2: exit status $rc under valgrind"
        tail -n 5 "$TMP/log.err" "$TMP/log"
    elif [ "$frames" != $FRAMES ]; then
        fail "$1 $2: $frames of $FRAMES frames out"
    elif ! cmp -s "$TMP/vg" "$TMP/plain"; then
        fail "$1 $2: output differs from the run without valgrind"
    else
        ok "$1 $2: $frames frames, same bytes, $(leak_summary "$TMP/log")"
    fi
}

# expect_error FAULT FORMAT FILTER REGEX: a failure path (CLFAULT as in
# tests/faults.sh, empty for none)
expect_error() {
    local rc
    [ -n "${WARMING:-}" ] && { warm_cache $(ffmpeg_args "$2" "$3"); return; }
    RUN=$((RUN + 1))
    CLFAULT=$1 LD_PRELOAD=${1:+$CLFAULT_SO} \
        memcheck "$TMP/vg" "$TMP/log" $(ffmpeg_args "$2" "$3")
    rc=$?
    if [ $rc -eq $VG_ERROR ] || [ -n "$(findings "$TMP/log")" ]; then
        fail "$1 $3: memcheck errors"; first_finding "$TMP/log"
    elif [ $rc -eq 0 ]; then
        fail "$1 $3: exit status 0"
    elif [ $rc -gt 128 ] && grep -q "Process terminating with default action" "$TMP/log"; then
        fail "$1 $3: killed by a signal"; grep -A 5 "Process terminating" "$TMP/log"
    elif ! grep -Eq "$4" "$TMP/log.err"; then
        fail "$1 $3: no message matching '$4'"; tail -n 5 "$TMP/log.err"
    else
        ok "${1:+$1 }$3: exit $rc, $(grep -Em1 "$4" "$TMP/log.err" | sed 's/^\[[^]]*\] //'), $(leak_summary "$TMP/log")"
    fi
}

# every case: warmed (WARMING=1), then checked
cases() {
    expect_ok yuv420p nlmeans_gpu=sigma=10
    expect_ok yuv420p nlmeans_gpu=sigma=10:past=2:future=2
    expect_ok yuv420p bm3d_gpu=sigma=10
    expect_ok gbrp bm3d_gpu=sigma=10:preset=fast
    expect_ok gray bm3d_gpu=sigma=10:preset=ref
    expect_ok yuv420p vbm3d_gpu=sigma=10
    expect_ok gray16le vbm3d_gpu=sigma=10:causal=1
    expect_error "" yuv420p nlmeans_gpu=sigma=-1.5 "sigma must be from 0 to 255"
    expect_error image=6 yuv420p vbm3d_gpu=sigma=10 "refused|Failed to create|allocate"
    # software frames in and out, and a refused image in the overlapped steady
    # state of that path
    SOFTWARE=1 expect_ok yuv420p vbm3d_gpu=sigma=10
    SOFTWARE=1 expect_error image=9 yuv420p nlmeans_gpu=sigma=10 "refused|Failed to create|allocate"
    # software frames on the filter's own device, none given
    SOFTWARE=1 DEV= expect_ok yuv420p nlmeans_gpu=sigma=10
}

WARMING=1 cases
wait
cases

summary valgrind
