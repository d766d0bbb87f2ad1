#!/bin/bash
#
# check_kernels on Oclgrind, Debian's OpenCL device simulator, which checks
# each access of a kernel to global, local and private memory against the
# bounds of its buffer or array, and with --data-races each pair of
# work-items that touch one address, one of them writing, without a barrier
# between them. Such errors can leave every result right on PoCL, which runs
# a work-group's work-items one after the other (doc/reliability.md, "Mutants
# of the kernels"): here they fail the check.
#
#   TESTBIN=build/tests tests/kernels_oclgrind.sh [NAME...]
#
# NAME: a check of check_kernels, by its whole name (patch_search is the
# per-patch search alone, with its joint-colour cases), each run on its
# own; by default every check, each work-group search by its first program
# and, where it has them, one with keys (its other programs are the same
# code with other constants). Environment:
#   SEARCH_CASES   by default 4: the checks of the per-patch and work-group
#                  searches run their first 4 cases, their smallest planes,
#                  as those take up to minutes a case on the simulator;
#                  0: every case
#   EDGE_STRIPES   by default 4: the edge search's planes of stripes, both
#                  windows (one frame, two) and ref_first, of the 16
#                  check_kernels runs elsewhere (each takes 5 s on the
#                  simulator)
#   OCLGRIND       the simulator
#   OCLGRIND_ARGS  by default --data-races, --check-api, which reports
#                  OpenCL calls that fail, and 256 KiB of local memory, so
#                  that the work-group searches run on every step, as on
#                  GPUs (Oclgrind's own is 32 KiB; its --uninitialized does
#                  not work with Debian's build: doc/reliability.md)
#   OCLGRIND_JOBS  groups run at once, by default one a core
#   LOGDIR         the logs, by default build/oclgrind
#   KERNELS        the folder of the .cl files, by default kernels/
# Fails when check_kernels fails or Oclgrind logs
# anything; the log's start is printed.

. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/.." || exit 1
TESTBIN=${TESTBIN:-build/tests}
OCLGRIND=${OCLGRIND:-oclgrind}
OCLGRIND_ARGS=${OCLGRIND_ARGS:---data-races --check-api --local-mem-size 262144}
LOGDIR=${LOGDIR:-build/oclgrind}
SEARCH_CASES=${SEARCH_CASES:-4}
EDGE_STRIPES=${EDGE_STRIPES:-4}
KERNELS=${KERNELS:-kernels}

if ! command -v "$OCLGRIND" > /dev/null; then
    echo "kernels_oclgrind.sh: $OCLGRIND not found (Debian: apt-get install oclgrind)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    # every group, the longest first (so that the rest share the other
    # core meanwhile; the searches on 4 cases: on all their cases the
    # per-patch search takes 6 minutes there and patch_search_rows more
    # than 18)
    set -- patch_search_edge vbm3d_search patch_search_tiled \
        bm3d_filter_wiener bm3d_filter_ht noise_select nlmeans_weights \
        patch_search_rows patch_search_squares \
        patch_search_squares_8x4_u9_keys bm3d_normalise nlmeans_aggregate \
        patch_search_rows_5x1_u7_keys denoise_load_plane \
        denoise_load_plane_u8 denoise_store_plane denoise_write_plane \
        denoise_load_plane_float denoise_store_plane_float \
        denoise_write_plane_float noise_accumulate noise_vst noise_blocks \
        denoise_opponent_forward denoise_opponent_inverse patch_search
fi
mkdir -p "$LOGDIR"

# One group under Oclgrind; its verdict in $LOGDIR/NAME.result
run_group() {
    local name=$1 cases='' status start t
    local log=$LOGDIR/$name.log out=$LOGDIR/$name.out
    case $name in
    patch_search|patch_search_tiled*|patch_search_squares*|patch_search_rows*)
        [ "$SEARCH_CASES" -gt 0 ] && cases="--search-cases $SEARCH_CASES" ;;
    patch_search_edge)
        cases="--edge-stripes $EDGE_STRIPES" ;;
    esac
    rm -f "$log"
    start=$SECONDS
    # shellcheck disable=SC2086
    "$OCLGRIND" $OCLGRIND_ARGS --log "$log" \
        "$TESTBIN/check_kernels" --kernels "$KERNELS" --test "$name\$" $cases > "$out" 2>&1
    status=$?
    t=$((SECONDS - start))
    if [ $status -ne 0 ] || [ -s "$log" ]; then
        echo "FAIL $name ($t s): check_kernels exit $status, Oclgrind log of $(wc -l < "$log" 2> /dev/null || echo 0) lines"
        grep -E '^(ok|FAIL)' "$out" | sed 's/^/    /'
        [ -s "$log" ] && head -20 "$log" | sed 's/^/    /'
    else
        echo "ok   $name ($t s): $(grep -c '^ok' "$out") check(s), no Oclgrind report"
    fi > "$LOGDIR/$name.result"
}

# OCLGRIND_JOBS groups at once (Oclgrind's own threads keep about 1.4 of
# 2 cores busy, so two groups at once take less time than one after the
# other); the verdicts in the order of the groups
jobs_max=${OCLGRIND_JOBS:-$(nproc)}
for name in "$@"; do
    rm -f "$LOGDIR/$name.result"
    wait_for_slot "$jobs_max"
    run_group "$name" &
done
wait
failed=0
for name in "$@"; do
    if [ -f "$LOGDIR/$name.result" ]; then
        cat "$LOGDIR/$name.result"
        grep -q '^ok ' "$LOGDIR/$name.result" || failed=$((failed + 1))
    else
        echo "FAIL $name: no verdict"
        failed=$((failed + 1))
    fi
done
echo "kernels_oclgrind.sh: $# group(s), $failed failed (logs in $LOGDIR)"
[ $failed -eq 0 ]
