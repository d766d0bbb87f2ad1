#!/bin/bash
#
# Device memory: what the documentation says the filters allocate, measured
# by tests/tools/cltrace.so (the peak of the OpenCL buffers and images alive
# at once) on one small frame. Differences of two runs cancel what does not
# depend on the option changed, so each check is exact:
#
# - Tables (option band): a band of one row of reference blocks (three for
#   nlmeans_gpu, its smallest) takes less memory than the whole frame in
#   one band. With joint grouping (RGB in opponent colours, 4:4:4 YUV on
#   luma) the three channels share the tables of their first one, so the
#   difference is a gray plane's (and nlmeans_gpu's flat means of the other
#   two channels); grouped plane by plane, three times that, but one gray
#   plane's for nlmeans_gpu, whose components, filtered one after the
#   other, share one set (three until 2026-12-01). (bm3d_gpu and vbm3d_gpu
#   allocated three sets for joint grouping until 2026-11-27.)
# - Automatic bands (band=0): on a device that reports 1 or 4 GiB of
#   memory (tests/tools/clfault.so, memory=N), a band's tables take at most
#   1/32 of it (32 MiB at the least), as the documentation of option band
#   says, and more than half of that where the whole frame's tables would
#   not fit; where they fit, the frame is one band. Only the allocations of
#   these large frames are measured: the first kernel launch fails
#   (clfault's enqueue=1), so that PoCL does not filter them.
# - vbm3d_gpu's state per sample (doc/vbm3d_gpu.texi), 8-bit frames: each
#   past frame 2 bytes (noisy and basic rings of bytes), each future frame
#   36 (two more slots of both rings, two more planes of 64-bit sums in
#   the ring the two steps share) and 2 more for the two input frames then
#   waiting for output; with estim=basic 1 and 17 + 1. RGB grouped jointly
#   (gbrp) keeps its R, G and B bytes in those rings (since 2026-11-27,
#   opponent channels in floats before): three times gray's per pixel.
# - nlmeans_gpu's state per sample with a temporal window: each frame of
#   the window a byte per channel in the ring (8-bit frames, in opponent
#   colours the R, G and B bytes; a float with sigma=curve), and each
#   future frame its input frame (a byte per channel) waiting for output;
#   no patch sums. Until 2026-12-01 a float and two floats of patch sums
#   per channel: 12 and 13 bytes in gray; opponent colours' floats, 12 and
#   15 bytes in gbrp, until the second session of that day.
# - nlmeans_gpu's components share the patch sums and the tables: each
#   plane selected beyond the first adds only its ring (a byte per sample,
#   8-bit frames, no window) and its output plane (a float). Until
#   2026-12-01 also its own patch sums and tables: 13 bytes and a set of
#   tables.
#
# Environment: FFMPEG, CLTRACE_SO and CLFAULT_SO (the libraries),
# OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"
CLTRACE_SO=${CLTRACE_SO:-build/tests/cltrace.so}
CLFAULT_SO=${CLFAULT_SO:-build/tests/clfault.so}
# an AddressSanitizer build wants its runtime first in the library list
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

for so in "$CLTRACE_SO" "$CLFAULT_SO"; do
    [ -f "$so" ] || { echo "memory: no $so"; exit 1; }
done
CLTRACE_SO=$(cd "$(dirname "$CLTRACE_SO")" && pwd)/$(basename "$CLTRACE_SO")
CLFAULT_SO=$(cd "$(dirname "$CLFAULT_SO")" && pwd)/$(basename "$CLFAULT_SO")

W=96
H=64
SAMPLES=$((W * H))

# trace_peak: the largest peak in bytes that cltrace wrote to $TMP/trace
trace_peak() {
    sed -n 's/.*mem_peak_bytes \([0-9]*\).*/\1/p' "$TMP/trace" | sort -g | tail -n 1
}

# peak FORMAT FILTER: the peak device memory in bytes of the filter on one
# frame (software frames, which the filter uploads itself); empty on error
peak() {
    rm -f "$TMP/trace"
    CLTRACE_OUT=$TMP/trace LD_PRELOAD=$CLTRACE_SO ff -t 300 $DEV \
        -f lavfi -i "testsrc2=s=${W}x$H:r=5,format=$1" -frames:v 1 \
        -vf "$2" -f null - 2> "$TMP/err" || return
    trace_peak
}

# peak_alloc MiB SIZE FILTER: the peak device memory in bytes of the
# filter's allocations for a gray frame of SIZE on a device reporting MiB of
# memory, its first kernel launch refused; empty when nothing was allocated
peak_alloc() {
    rm -f "$TMP/trace"
    CLFAULT=memory=$1,enqueue=1 CLTRACE_OUT=$TMP/trace \
    LD_PRELOAD="$CLTRACE_SO $CLFAULT_SO" ff -t 300 $DEV \
        -f lavfi -i "testsrc2=s=$2:r=5,format=gray" -frames:v 1 \
        -vf "$3" -f null - 2> "$TMP/err"
    trace_peak
}

# tables_of FORMAT FILTER SMALL: the memory the whole frame's tables take
# beyond those of a band of SMALL rows
tables_of() {
    local whole band
    whole=$(peak "$1" "$2") && band=$(peak "$1" "$2:band=$3") &&
        [ -n "$whole" ] && [ -n "$band" ] || return 1
    echo $((whole - band))
}

# tables NAME FILTER SMALL SETS [JOINT]: the tables beyond a band of SMALL
# rows; joint grouping's (the filter's default, or option JOINT) are a gray
# plane's, per-plane grouping's SETS times that; with a JOINT option
# (nlmeans_gpu, which keeps the flat test's mean of each channel beside one
# set of neighbours) more than a gray plane's but less than two
tables() {
    local name=$1 filter=$2 small=$3 sets=$4 joint_filter=$2${5:+:$5} means=${5:+1}
    local gray joint yuv planes
    RUN=$((RUN + 1))
    if ! gray=$(tables_of gray "$filter" $small) ||
       ! joint=$(tables_of gbrp "$joint_filter" $small) ||
       ! yuv=$(tables_of yuv444p "$joint_filter" $small) ||
       ! planes=$(tables_of gbrp "$filter:color=planes" $small); then
        fail "$name: $(tail -n 1 "$TMP/err")"
        return
    fi
    if [ "$gray" -le 0 ]; then
        fail "$name: a band of $small rows takes no less memory ($gray bytes)"
    elif [ -z "$means" ] && { [ "$joint" != "$gray" ] || [ "$yuv" != "$gray" ]; }; then
        fail "$name: joint tables of $joint (gbrp) and $yuv (yuv444p) bytes, not one gray plane's $gray"
    elif [ -n "$means" ] && { [ "$joint" -le "$gray" ] || [ "$joint" -ge $((2 * gray)) ] ||
                                  [ "$yuv" != "$joint" ]; }; then
        fail "$name: joint tables of $joint (gbrp) and $yuv (yuv444p) bytes, not between one and two gray planes' $gray"
    elif [ "$planes" != $((sets * gray)) ]; then
        fail "$name: per-plane tables of $planes bytes, not $sets x $gray"
    else
        ok "$name: tables of $gray bytes a frame, shared by joint grouping, $sets x per plane"
    fi
}

# peaks FORMAT FILTER OPTIONS...: the peaks of FILTER with each of OPTIONS
# appended, on one line; fails where a run does (its error in $TMP/err)
peaks() {
    local fmt=$1 filter=$2 options value values=
    shift 2
    for options; do
        value=$(peak "$fmt" "$filter:$options") && [ -n "$value" ] || return 1
        values="$values $value"
    done
    echo $values
}

# per_frame NAME FILTER FORMAT BYTES_PAST BYTES_FUTURE: one more past
# frame, then one more future frame, takes that many more bytes per pixel
# (a future frame: its rings, and its images only where the output copies
# channels from them; the others' images go back to their pool once they
# are loaded)
per_frame() {
    local name=$1 filter=$2 fmt=$3 want_past=$4 want_future=$5 values base past future
    RUN=$((RUN + 1))
    if ! values=$(peaks "$fmt" "$filter" past=1:future=1 past=2:future=1 past=1:future=2); then
        fail "$name: $(tail -n 1 "$TMP/err")"
        return
    fi
    read -r base past future <<< "$values"
    past=$((past - base))
    future=$((future - base))
    if [ "$past" != $((want_past * SAMPLES)) ] ||
       [ "$future" != $((want_future * SAMPLES)) ]; then
        fail "$name, $fmt: a past frame $past bytes, a future frame $future, not $want_past and $want_future x $SAMPLES pixels"
    else
        ok "$name, $fmt: bytes per pixel, $want_past for each past frame, $want_future for each future frame"
    fi
}

# per_plane NAME FILTER FORMAT BYTES [TAIL]: each plane selected beyond the
# first (option planes) takes that many more bytes per sample, and TAIL
# bytes more (the word after a ring of bytes, which nlmeans_gpu's flat test
# may read)
per_plane() {
    local name=$1 filter=$2 fmt=$3 want=$4 tail=${5:-0} values one two three
    RUN=$((RUN + 1))
    if ! values=$(peaks "$fmt" "$filter" planes=1 planes=3 planes=7); then
        fail "$name: $(tail -n 1 "$TMP/err")"
        return
    fi
    read -r one two three <<< "$values"
    if [ $((two - one)) != $((want * SAMPLES + tail)) ] ||
       [ $((three - two)) != $((want * SAMPLES + tail)) ]; then
        fail "$name, $fmt: a second plane $((two - one)) bytes, a third $((three - two)), not $want x $SAMPLES samples + $tail"
    else
        ok "$name, $fmt: $want bytes per sample (and $tail) for each plane beyond the first"
    fi
}

# auto_bands NAME FILTER SIZE SMALL: the automatic bands' tables (beyond
# those of a band of SMALL rows) on devices of 1 and 4 GiB
auto_bands() {
    local name=$1 filter=$2 size=$3 small_band=$4 mib budget small whole auto
    for mib in 1024 4096; do
        RUN=$((RUN + 1))
        budget=$(((mib << 20) / 32))
        [ "$budget" -lt $((32 << 20)) ] && budget=$((32 << 20))
        small=$(peak_alloc $mib "$size" "$filter:band=$small_band")
        whole=$(peak_alloc $mib "$size" "$filter:band=65536")
        auto=$(peak_alloc $mib "$size" "$filter")
        if [ -z "$small" ] || [ -z "$whole" ] || [ -z "$auto" ]; then
            fail "$name, $mib MiB: nothing allocated: $(tail -n 1 "$TMP/err")"
            continue
        fi
        whole=$((whole - small))
        auto=$((auto - small))
        if [ "$whole" -le "$budget" ] && [ "$auto" != "$whole" ]; then
            fail "$name, $mib MiB: tables of $auto bytes, not the whole frame's $whole, which fit $budget"
        elif [ "$whole" -gt "$budget" ] &&
             { [ "$auto" -gt "$budget" ] || [ "$auto" -le $((budget / 2)) ]; }; then
            fail "$name, $mib MiB: tables of $auto bytes, not within half of $budget to $budget"
        else
            ok "$name, $size on $mib MiB: tables of $auto bytes beyond a band of $small_band rows' (the frame's $whole; at most $budget)"
        fi
    done
}

# nlmeans_gpu's smallest band for patches of 8 on a step of 4 is 3 rows
tables "nlmeans_gpu" "nlmeans_gpu=sigma=20" 3 1 color=joint
tables "bm3d_gpu fast" "bm3d_gpu=sigma=20" 1 3
tables "bm3d_gpu ref" "bm3d_gpu=sigma=20:preset=ref" 1 3
tables "vbm3d_gpu" "vbm3d_gpu=sigma=20:past=1:future=1" 1 3
auto_bands "nlmeans_gpu" "nlmeans_gpu=sigma=20" 3072x2048 3
auto_bands "bm3d_gpu fast" "bm3d_gpu=sigma=20" 3072x2048 1
auto_bands "bm3d_gpu ref" "bm3d_gpu=sigma=20:preset=ref" 3072x2048 1
auto_bands "vbm3d_gpu" "vbm3d_gpu=sigma=20:past=1:future=1" 4608x2048 1
per_frame "vbm3d_gpu state" "vbm3d_gpu=sigma=20" gray 2 36
per_frame "vbm3d_gpu estim=basic state" "vbm3d_gpu=sigma=20:estim=basic" gray 1 17
per_frame "vbm3d_gpu state" "vbm3d_gpu=sigma=20" gbrp 6 108
per_frame "vbm3d_gpu estim=basic state" "vbm3d_gpu=sigma=20:estim=basic" gbrp 3 51
per_frame "nlmeans_gpu window state" "nlmeans_gpu=sigma=20" gray 1 1
per_frame "nlmeans_gpu window state, opponent colours" "nlmeans_gpu=sigma=20" gbrp 3 3
per_frame "nlmeans_gpu window state, joint" "nlmeans_gpu=sigma=20:color=joint" gbrp 3 3
per_frame "nlmeans_gpu window state, sigma=curve" "nlmeans_gpu=sigma=curve" gray 4 4
# the input frames whose output copies from them are held until then: an
# alpha plane, planes left out
per_frame "nlmeans_gpu window state, alpha" "nlmeans_gpu=sigma=20" gbrap 3 7
per_frame "nlmeans_gpu window state, one plane" "nlmeans_gpu=sigma=20:planes=1" gbrp 1 4
per_plane "nlmeans_gpu shared buffers" "nlmeans_gpu=sigma=20:color=planes" gbrp 5 4

summary memory
