#!/bin/bash
#
# Run every ffmpeg command of the documentation's @example blocks, with
# INPUT replaced by a short test clip, OUTPUT by the null muxer and the
# OpenCL device by $OPENCL_DEVICE (or the default device).
#
# A command whose only failure is that this device cannot download the
# example's pixel format (PoCL has no two-channel images for nv12/p010) is
# reported as skipped, with its reason.

set -u
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
DEV=${OPENCL_DEVICE:+:$OPENCL_DEVICE}
FAILED=0
RUN=0
SKIPPED=0
ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT

while IFS= read -r cmd; do
    RUN=$((RUN + 1))
    cmd=${cmd#ffmpeg }
    cmd=$(printf '%s' "$cmd" | sed -E \
        -e "s/opencl=gpu(:[0-9.]+)?/opencl=gpu$DEV/" \
        -e 's/-i INPUT/-f lavfi -i testsrc2=s=96x64:r=10:d=0.3/' \
        -e 's/ OUTPUT$/ -f null -/')
    if eval "\"$FFMPEG\" -nostdin -hide_banner -loglevel error $cmd" 2> "$ERR"; then
        echo "ok   ffmpeg $cmd"
    elif grep -q "Invalid output format .* for hwframe download\|Unsupported format" "$ERR"; then
        echo "skip ffmpeg $cmd: $(head -n1 "$ERR")"
        SKIPPED=$((SKIPPED + 1))
    else
        echo "FAIL ffmpeg $cmd"
        sed 's/^/    /' "$ERR" | tail -n 5
        FAILED=$((FAILED + 1))
    fi
done < <(cat "$@" | sed -n '/^@example/,/^@end example/p' | grep '^ffmpeg ' | sed 's/@{/{/g; s/@}/}/g')

echo "doc_examples.sh: $RUN examples, $SKIPPED skipped, $FAILED failed"
[ $RUN -gt 0 ] && [ $FAILED -eq 0 ]
