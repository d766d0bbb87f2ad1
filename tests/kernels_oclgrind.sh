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
# code with other constants). Environment: SEARCH_CASES (by default 4: the
# checks of the per-patch and work-group searches run their first 4 cases,
# their smallest planes, as those take up to minutes a case on the
# simulator; 0: every case), OCLGRIND (the simulator), OCLGRIND_ARGS (by
# default --data-races, --check-api, which reports OpenCL calls that fail,
# and 256 KiB of local memory, so that the work-group searches run on every
# step, as on GPUs; Oclgrind's own is 32 KiB; its --uninitialized does not
# work with Debian's build: doc/reliability.md), LOGDIR (the
# logs, by default build/oclgrind), KERNELS (the folder of the .cl files,
# by default kernels/). Fails when check_kernels fails or Oclgrind logs
# anything; the log's start is printed.

set -u
cd "$(dirname "$0")/.." || exit 1
TESTBIN=${TESTBIN:-build/tests}
OCLGRIND=${OCLGRIND:-oclgrind}
OCLGRIND_ARGS=${OCLGRIND_ARGS:---data-races --check-api --local-mem-size 262144}
LOGDIR=${LOGDIR:-build/oclgrind}
SEARCH_CASES=${SEARCH_CASES:-4}
KERNELS=${KERNELS:-kernels}

if ! command -v "$OCLGRIND" > /dev/null; then
    echo "kernels_oclgrind.sh: $OCLGRIND not found (Debian: apt-get install oclgrind)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    # about 5 minutes on 2 cores, 2 of them the searches on 4 cases (on
    # all their cases the per-patch search takes 6 minutes there and
    # patch_search_rows more than 18)
    set -- denoise_load_plane denoise_load_plane_u8 denoise_store_plane \
        denoise_load_plane_float denoise_store_plane_float \
        bm3d_normalise bm3d_filter_ht bm3d_filter_wiener nlmeans_weights \
        nlmeans_aggregate vbm3d_search patch_search_edge noise_select \
        noise_accumulate noise_vst noise_blocks denoise_opponent_forward \
        denoise_opponent_inverse patch_search patch_search_tiled \
        patch_search_squares patch_search_squares_8x4_u9_keys \
        patch_search_rows patch_search_rows_5x1_u7_keys
fi
mkdir -p "$LOGDIR"
failed=0
for name in "$@"; do
    log=$LOGDIR/$name.log out=$LOGDIR/$name.out
    cases=
    case $name in
    patch_search|patch_search_tiled*|patch_search_squares*|patch_search_rows*)
        [ "$SEARCH_CASES" -gt 0 ] && cases="--search-cases $SEARCH_CASES" ;;
    esac
    rm -f "$log"
    start=$SECONDS
    # shellcheck disable=SC2086
    "$OCLGRIND" $OCLGRIND_ARGS --log "$log" \
        "$TESTBIN/check_kernels" --kernels "$KERNELS" --test "$name\$" $cases > "$out" 2>&1
    status=$?
    t=$((SECONDS - start))
    if [ $status -ne 0 ] || [ -s "$log" ]; then
        failed=$((failed + 1))
        echo "FAIL $name ($t s): check_kernels exit $status, Oclgrind log of $(wc -l < "$log" 2> /dev/null || echo 0) lines"
        grep -E '^(ok|FAIL)' "$out" | sed 's/^/    /'
        [ -s "$log" ] && head -20 "$log" | sed 's/^/    /'
    else
        echo "ok   $name ($t s): $(grep -c '^ok' "$out") check(s), no Oclgrind report"
    fi
done
echo "kernels_oclgrind.sh: $# group(s), $failed failed (logs in $LOGDIR)"
[ $failed -eq 0 ]
