#!/bin/bash
#
# Run every ffmpeg and ffprobe command of the documentation's @example
# blocks, with INPUT (-i INPUT, movie=INPUT) replaced by a short test clip,
# OUTPUT by the null muxer and the OpenCL device by $OPENCL_DEVICE (or the
# default device; device=P.D for the filters' device option).
#
# An ffprobe command is reported as skipped where the build has no ffprobe
# (a minimal build). A command whose only failure is that this device cannot download the
# example's pixel format (PoCL has no two-channel images for nv12/p010) is
# reported as skipped, with its reason.

. "$(dirname "$0")/lib.sh"
FFPROBE=${FFPROBE:-$(dirname "$FFMPEG")/ffprobe}
ERR=$TMP/err

while IFS= read -r cmd; do
    RUN=$((RUN + 1))
    prog=${cmd%% *}
    bin=$FFMPEG
    [ "$prog" = ffprobe ] && bin=$FFPROBE
    cmd=${cmd#$prog }
    if [ ! -x "$bin" ]; then
        # a minimal build (./configure --minimal, make check-asan) has no ffprobe
        skip "$prog $cmd: no $bin in this build"
        continue
    fi
    cmd=$(printf '%s' "$cmd" | sed -E \
        -e "s/opencl=gpu(:[0-9.]+)?/opencl=gpu${OPENCL_DEVICE:+:$OPENCL_DEVICE}/" \
        -e "s/device=[0-9]+\.[0-9]+/device=${OPENCL_DEVICE:-0.0}/" \
        -e 's/-i INPUT/-f lavfi -i testsrc2=s=96x64:r=10:d=0.3/' \
        -e 's/movie=INPUT/testsrc2=s=96x64:r=10:d=0.3,format=yuv420p/' \
        -e 's/ OUTPUT$/ -f null -/')
    if eval "\"$bin\" $([ "$prog" = ffmpeg ] && echo -nostdin) -hide_banner -loglevel error $cmd" \
        > /dev/null 2> "$ERR"; then
        ok "$prog $cmd"
    elif grep -q "Invalid output format .* for hwframe download\|Unsupported format" "$ERR"; then
        skip "$prog $cmd: $(head -n1 "$ERR")"
    else
        fail "$prog $cmd"
        show_tail 5 "$ERR"
    fi
done < <(cat "$@" | sed -n '/^@example/,/^@end example/p' | grep -E '^(ffmpeg|ffprobe) ' | sed 's/@{/{/g; s/@}/}/g')

summary -s doc_examples.sh examples && [ $RUN -gt 0 ]
