#!/bin/bash
#
# What the filters' programs compile: with every search kernel a filter's
# first start took 2 to 3 times longer on an H200, 5 to 12 s
# (doc/benchmarks.md, "Start-up"), so a program holds the search kernels
# its searches may run and the noise estimator's kernels only where sigma
# is estimated. Each case runs a filter on one small frame with
# tests/tools/cltrace.so writing its program's kernel names
# (CLTRACE_PROGRAMS) and compares the search kernels (patch_search*) with
# those its searches choose from (ff_denoise_opencl_search_init()): the
# per-patch search alone with search=direct; with search=tiled, the
# work-group kernel of its patch, step, channels and samples
# (denoise_opencl.c, choose_entries(), on a device of 48 KiB of local
# memory or more), in its variant of keys where it has one and the largest
# window fits keys (windows of 21 x 21: one frame of patches of 8, not 3;
# up to 4 frames of patches of 5, not 5), beside patch_search_edge;
# none for vbm3d_gpu, whose searches are its own. A program that compiled
# them all again, or missed one a search may run, fails; so does one whose
# build log holds a warning (build_warnings below: the one PoCL gives for
# each bm3d_gpu and vbm3d_gpu program, and its notes on loops of the
# per-patch searches and nlmeans_gpu, excepted).
#
# Environment: FFMPEG, CLTRACE_SO, OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"
CLTRACE_SO=${CLTRACE_SO:-build/tests/cltrace.so}
[ -f "$CLTRACE_SO" ] || { echo "programs: no $CLTRACE_SO"; exit 1; }
CLTRACE_SO=$(cd "$(dirname "$CLTRACE_SO")" && pwd)/$(basename "$CLTRACE_SO")
# an AddressSanitizer build wants its runtime first in the library list
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# kernels FORMAT FILTER: the kernel names of the filter's program, sorted;
# those it launched in $TMP/launched
kernels() {
    rm -f "$TMP"/prog.* "$TMP/trace"
    CLTRACE_PROGRAMS=$TMP/prog CLTRACE_KERNELS=1 CLTRACE_OUT=$TMP/trace \
    LD_PRELOAD=$CLTRACE_SO ff -t 300 $DEV \
        -f lavfi -i "testsrc2=s=96x64:r=5,format=$1" -frames:v 1 \
        -vf "$2" -f null - 2> "$TMP/err" || return
    sed -n 's/^cltrace: kernel \([a-z0-9_]*\) .*/\1/p' "$TMP/trace" | sort -u > "$TMP/launched"
    cat "$TMP"/prog.*.kernels | sed '/^$/d' | sort -u
}

# build_warnings NAMES: the warnings of the program's build log (cltrace
# writes it; PoCL keeps it with a cached program) that should not be
# there. PoCL's optimizer notes each loop it could not unroll ("loop not
# unrolled"): the per-patch searches and nlmeans_gpu's kernels on several
# channels, counted at run time, have some; bm3d_gpu's and vbm3d_gpu's
# programs (with bm3d_filter_ht), whose specialised functions are inlined
# (DENOISE_INLINE), one place only: bm3d_filter_group's shrinkage loop,
# whose early exit stays (bm3d_gpu.cl says why). Any other warning is one.
build_warnings() {
    local notes=any
    echo "$1" | grep -qx bm3d_filter_ht && notes=1
    # each place once: PoCL appends the logs of a program that two
    # processes built at once, each naming its own temporary file
    cat "$TMP"/prog.*.log 2>/dev/null | grep 'warning:' |
        sed -E 's#[^ <=]*tempfile_[A-Za-z0-9]+\.cl#program.cl#g' | sort -u |
        awk -v notes=$notes '/loop not unrolled/ && (notes == "any" || n++ < notes) { next }
                             { print }'
}

# program NAME FORMAT FILTER NOISE SEARCH...: the program of FILTER holds
# exactly the search kernels SEARCH... (none: -), and the noise kernels
# where NOISE is 1; a work-group search among them (other than
# patch_search_edge) is the one launched; it builds without a warning
# (build_warnings)
program() {
    local name=$1 fmt=$2 filter=$3 noise=$4 names got_search want_search got_noise wg warnings
    shift 4
    RUN=$((RUN + 1))
    if ! names=$(kernels "$fmt" "$filter"); then
        fail "$name: $filter failed"; show_tail 3 "$TMP/err"; return
    fi
    got_search=$(echo "$names" | grep '^patch_search' | tr '\n' ' ')
    want_search=$(printf '%s\n' "$@" | grep -v '^-$' | sort | tr '\n' ' ')
    got_noise=$(echo "$names" | grep -c '^noise_')
    wg=$(printf '%s\n' "$@" | grep '^patch_search_' | grep -v '^patch_search_edge$')
    warnings=$(build_warnings "$names")
    if [ "$got_search" != "$want_search" ]; then
        fail "$name: search kernels [$got_search], expected [$want_search]"
    elif [ "$noise" = 1 ] && [ "$got_noise" -ne 4 ]; then
        fail "$name: $got_noise noise kernels, expected the estimator's 4"
    elif [ "$noise" = 0 ] && [ "$got_noise" -ne 0 ]; then
        fail "$name: $got_noise noise kernels with sigma given"
    elif [ -n "$wg" ] && ! grep -qxF "$wg" "$TMP/launched"; then
        fail "$name: none of [$(echo $wg)] launched: [$(echo $(grep '^patch_search' "$TMP/launched"))]"
    elif [ -n "$warnings" ]; then
        fail "$name: $(echo "$warnings" | wc -l) build warning(s): $(echo "$warnings" | head -n 1 | cut -c1-200)"
    else
        ok "$name: search kernels [$got_search]$([ "$noise" = 1 ] && echo ", the noise estimator's")"
    fi
}

program "nlmeans_gpu per-patch" gray "nlmeans_gpu=sigma=20:search=direct" 0 patch_search
program "nlmeans_gpu work-group" gray "nlmeans_gpu=sigma=20:search=tiled" 0 \
    patch_search patch_search_edge patch_search_squares_8x4_u11_keys
program "nlmeans_gpu 3 frames" gray "nlmeans_gpu=sigma=20:past=1:future=1:search=tiled" 0 \
    patch_search patch_search_edge patch_search_squares_8x4_u11
program "nlmeans_gpu p=5:step=1" gray "nlmeans_gpu=sigma=20:p=5:step=1:search=tiled" 0 \
    patch_search patch_search_edge patch_search_rows_5x1_u7_keys
program "nlmeans_gpu p=5:step=1, 4 frames" gray \
    "nlmeans_gpu=sigma=20:p=5:step=1:past=2:future=1:search=tiled" 0 \
    patch_search patch_search_edge patch_search_rows_5x1_u7_keys
program "nlmeans_gpu p=5:step=1, 5 frames" gray \
    "nlmeans_gpu=sigma=20:p=5:step=1:past=2:future=2:search=tiled" 0 \
    patch_search patch_search_edge patch_search_rows_5x1_u7
program "nlmeans_gpu RGB joint" gbrp "nlmeans_gpu=sigma=20:color=joint:search=tiled" 0 \
    patch_search patch_search_edge patch_search_tiled_8x4
program "nlmeans_gpu sigma=auto" gray "nlmeans_gpu=sigma=auto:search=direct" 1 patch_search
program "bm3d_gpu fast" gray "bm3d_gpu=sigma=20:search=tiled" 0 \
    patch_search patch_search_edge \
    patch_search_squares_8x4_u11_keys patch_search_squares_8x4_u9_keys
program "bm3d_gpu fast, 16-bit" gray16le "bm3d_gpu=sigma=20:search=tiled" 0 \
    patch_search patch_search_edge patch_search_tiled_8x4
program "bm3d_gpu ref" gray "bm3d_gpu=sigma=20:preset=ref:search=tiled" 0 \
    patch_search patch_search_edge patch_search_rows_8x3
program "bm3d_gpu sigma=curve" gray "bm3d_gpu=sigma=curve:search=direct" 1 patch_search
program "vbm3d_gpu" gray "vbm3d_gpu=sigma=20:past=1:future=1" 0 -
program "vbm3d_gpu sigma=auto" yuv420p "vbm3d_gpu=sigma=auto:past=1:future=1" 1 -

summary programs
