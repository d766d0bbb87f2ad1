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
# own; by default every check but the per-patch and work-group searches.
# Environment: OCLGRIND (the simulator), OCLGRIND_ARGS (by default
# --data-races and 256 KiB of local memory, so that the work-group searches
# run on every step, as on GPUs; Oclgrind's own is 32 KiB), LOGDIR (the
# logs, by default build/oclgrind), KERNELS (the folder of the .cl files,
# by default kernels/). Fails when check_kernels fails or Oclgrind logs
# anything; the log's start is printed.

set -u
cd "$(dirname "$0")/.."
TESTBIN=${TESTBIN:-build/tests}
OCLGRIND=${OCLGRIND:-oclgrind}
OCLGRIND_ARGS=${OCLGRIND_ARGS:---data-races --local-mem-size 262144}
LOGDIR=${LOGDIR:-build/oclgrind}
KERNELS=${KERNELS:-kernels}

if ! command -v "$OCLGRIND" > /dev/null; then
    echo "kernels_oclgrind.sh: $OCLGRIND not found (Debian: apt-get install oclgrind)" >&2
    exit 1
fi
if [ $# -eq 0 ]; then
    # every check but the per-patch and work-group searches (3 minutes on
    # 2 cores; in the simulator the per-patch search takes 6 minutes and
    # patch_search_rows more than 18: name them to run them)
    set -- denoise_load_plane denoise_store_plane bm3d_normalise \
        bm3d_filter_ht bm3d_filter_wiener nlmeans_weights nlmeans_aggregate \
        vbm3d_search patch_search_edge noise_select noise_accumulate \
        noise_vst noise_blocks denoise_opponent_forward \
        denoise_opponent_inverse
fi
mkdir -p "$LOGDIR"
failed=0
for name in "$@"; do
    log=$LOGDIR/$name.log out=$LOGDIR/$name.out
    rm -f "$log"
    start=$SECONDS
    # shellcheck disable=SC2086
    "$OCLGRIND" $OCLGRIND_ARGS --log "$log" \
        "$TESTBIN/check_kernels" --kernels "$KERNELS" --test "$name\$" > "$out" 2>&1
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
