#!/bin/bash
#
# Run every ffmpeg and ffprobe command of the documentation's @example
# blocks, with INPUT (-i INPUT, movie=INPUT) replaced by a short test clip,
# OUTPUT by the null muxer and the OpenCL device by $OPENCL_DEVICE (or the
# default device; device=0.0 for the filters' own device).
#
# An ffprobe command is reported as skipped where the build has no ffprobe
# (a minimal build). A command whose only failure is that this device cannot download the
# example's pixel format (PoCL has no two-channel images for nv12/p010) is
# reported as skipped, with its reason.

set -u
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
FFPROBE=${FFPROBE:-$(dirname "$FFMPEG")/ffprobe}
DEV=${OPENCL_DEVICE:+:$OPENCL_DEVICE}
FAILED=0
RUN=0
SKIPPED=0
ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT

while IFS= read -r cmd; do
    RUN=$((RUN + 1))
    prog=${cmd%% *}
    bin=$FFMPEG
    [ "$prog" = ffprobe ] && bin=$FFPROBE
    cmd=${cmd#$prog }
    if [ ! -x "$bin" ]; then
        # a minimal build (./configure --minimal, make check-asan) has no ffprobe
        echo "skip $prog $cmd: no $bin in this build"
        SKIPPED=$((SKIPPED + 1))
        continue
    fi
    cmd=$(printf '%s' "$cmd" | sed -E \
        -e "s/opencl=gpu(:[0-9.]+)?/opencl=gpu$DEV/" \
        -e "s/device=0\.0/device=${OPENCL_DEVICE:-0.0}/" \
        -e 's/-i INPUT/-f lavfi -i testsrc2=s=96x64:r=10:d=0.3/' \
        -e 's/movie=INPUT/testsrc2=s=96x64:r=10:d=0.3,format=yuv420p/' \
        -e 's/ OUTPUT$/ -f null -/')
    if eval "\"$bin\" $([ "$prog" = ffmpeg ] && echo -nostdin) -hide_banner -loglevel error $cmd" \
        > /dev/null 2> "$ERR"; then
        echo "ok   $prog $cmd"
    elif grep -q "Invalid output format .* for hwframe download\|Unsupported format" "$ERR"; then
        echo "skip $prog $cmd: $(head -n1 "$ERR")"
        SKIPPED=$((SKIPPED + 1))
    else
        echo "FAIL $prog $cmd"
        sed 's/^/    /' "$ERR" | tail -n 5
        FAILED=$((FAILED + 1))
    fi
done < <(cat "$@" | sed -n '/^@example/,/^@end example/p' | grep -E '^(ffmpeg|ffprobe) ' | sed 's/@{/{/g; s/@}/}/g')

echo "doc_examples.sh: $RUN examples, $SKIPPED skipped, $FAILED failed"
[ $RUN -gt 0 ] && [ $FAILED -eq 0 ]
