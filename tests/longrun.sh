#!/bin/bash
#
# Long run: N frames (10,000 by default) of noisy 320x240 yuv420p through
# each filter, as OpenCL frames (hwupload) or, for the configurations
# marked sw:, as software frames the filter uploads itself, with the
# resident memory of ffmpeg sampled every half second and the OpenCL memory
# objects counted by tests/tools/cltrace.so. Asserts, for each filter, that
#   - every frame comes out;
#   - the resident memory after warm-up (the first tenth of the run) grows
#     by at most RSS_BOUND_KB (default 8192);
#   - the peak of live OpenCL memory objects, and of their bytes, is the
#     same over N frames as over WARMUP frames (200): nothing accumulates.
#
#   FFMPEG=... CLTRACE_SO=... [N=10000] [OPENCL_DEVICE=P.D]
#   [LONGRUN_FILTERS="FILTER ..."] tests/longrun.sh
#
# A figure line per filter goes to stdout (doc/reliability.md has them).

. "$(dirname "$0")/lib.sh"
CLTRACE_SO=${CLTRACE_SO:-build/tests/cltrace.so}
N=${N:-10000}
WARMUP=${WARMUP:-200}
RSS_BOUND_KB=${RSS_BOUND_KB:-8192}
CLTRACE_SO=$(cd "$(dirname "$CLTRACE_SO")" && pwd)/$(basename "$CLTRACE_SO")

# The configurations: the hwupload path of each filter, then software
# frames, the noise estimates, `ref`, causal mode and the timeline
# (vbm3d_gpu's queue with frames passed through)
LONGRUN_FILTERS=${LONGRUN_FILTERS:-"nlmeans_gpu=sigma=10 \
nlmeans_gpu=sigma=10:past=2:future=2 bm3d_gpu=sigma=10:preset=fast \
vbm3d_gpu=sigma=10 sw:nlmeans_gpu=sigma=auto sw:bm3d_gpu=sigma=10:preset=ref \
sw:vbm3d_gpu=sigma=curve:causal=1 vbm3d_gpu=sigma=10:enable=lt(mod(n\\,3)\\,1)"}

# run FILTER FRAMES TRACE: ffmpeg in the background, its RSS sampled into
# $TMP/rss ("seconds kB" lines); prints the number of frames that came out
run() {
    local filter=$1 frames=$2 trace=$3 chain pid t0
    case $filter in
    sw:*) chain=${filter#sw:} ;;
    *)    chain="hwupload,$filter,hwdownload,format=yuv420p" ;;
    esac
    rm -f "$trace" "$TMP/rss"
    CLTRACE_OUT=$trace LD_PRELOAD=$CLTRACE_SO "$FFMPEG" -nostdin -hide_banner \
        -loglevel error $DEV \
        -f lavfi -i "testsrc2=s=320x240:r=25,format=yuv420p,noise=alls=12:allf=t" \
        -frames:v "$frames" -vf "$chain" -f framecrc "$TMP/crc" -y 2> "$TMP/err" &
    pid=$!
    t0=$(date +%s.%N)
    while kill -0 $pid 2> /dev/null; do
        awk -v t="$(date +%s.%N)" -v t0="$t0" '/^VmRSS/ { print t - t0, $2 }' \
            /proc/$pid/status >> "$TMP/rss" 2> /dev/null
        sleep 0.5
    done
    wait $pid || { echo "ffmpeg failed:" >&2; tail -5 "$TMP/err" >&2; }
    grep -vc '^#' "$TMP/crc" 2> /dev/null || echo 0
}

# field TRACE NAME: the largest value of NAME in the trace (processes that
# the OpenCL implementation starts, such as PoCL's compiler, inherit the
# preload and add lines of their own); empty without a trace
field() {
    sed -n "s/.* $2 \([0-9.]*\).*/\1/p" "$1" 2> /dev/null | sort -g | tail -n 1
}

for filter in $LONGRUN_FILTERS; do
    short=$(run "$filter" "$WARMUP" "$TMP/trace-short")
    t_start=$(date +%s)
    long=$(run "$filter" "$N" "$TMP/trace-long")
    secs=$(($(date +%s) - t_start))
    # RSS at the end of warm-up (the first tenth of the run), its maximum
    # after that, and at the end
    read -r rss_warm rss_max rss_end < <(awk '
        { t[NR] = $1; r[NR] = $2 }
        END {
            w = 1; while (w < NR && t[w] < t[NR] / 10) w++
            m = r[w]; for (i = w; i <= NR; i++) if (r[i] > m) m = r[i]
            print r[w], m, r[NR]
        }' "$TMP/rss")
    objs_short=$(field "$TMP/trace-short" mem_peak_objects)
    objs_long=$(field "$TMP/trace-long" mem_peak_objects)
    bytes_short=$(field "$TMP/trace-short" mem_peak_bytes)
    bytes_long=$(field "$TMP/trace-long" mem_peak_bytes)
    growth=$((rss_max - rss_warm))
    echo "$filter: $long of $N frames in ${secs} s; RSS ${rss_warm} kB after warm-up, max ${rss_max} kB, end ${rss_end} kB (growth ${growth} kB, bound ${RSS_BOUND_KB}); OpenCL memory objects peak ${objs_long} (${bytes_long} bytes) over $N frames, ${objs_short} (${bytes_short} bytes) over $WARMUP"
    if [ "$long" != "$N" ] || [ "$short" != "$WARMUP" ]; then
        fail "$filter: $long of $N and $short of $WARMUP frames out"
    fi
    if [ "$growth" -gt "$RSS_BOUND_KB" ]; then
        fail "$filter: resident memory grew by $growth kB after warm-up"
    fi
    if [ -z "$objs_long" ] || [ -z "$objs_short" ] || [ "$objs_long" = 0 ]; then
        fail "$filter: no OpenCL memory trace (is $CLTRACE_SO built and preloaded?)"
    elif [ "$objs_long" != "$objs_short" ] || [ "$bytes_long" != "$bytes_short" ]; then
        fail "$filter: OpenCL memory objects grew with the run's length"
    fi
done
echo "longrun: $FAILED failed"
[ $FAILED -eq 0 ]
