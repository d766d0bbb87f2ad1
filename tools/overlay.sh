#!/bin/sh
#
# overlay.sh SRCDIR TREE: copy our filter sources, kernels, FATE tests and
# their references into an FFmpeg source tree (the FATE tests without those
# that the tree's release cannot run).  A file is only copied when its
# content changed, so that 'make' rebuilds only what was edited.

set -e
SRCDIR=$1
TREE=$2

copy_if_changed() {
    src=$1
    dst=$2
    if ! cmp -s "$src" "$dst"; then
        mkdir -p "$(dirname "$dst")"
        cp "$src" "$dst"
        echo "overlay: $dst"
    fi
}

# The sources are FFmpeg 8's. Before 8.0 (libavfilter 11) a filter is an
# AVFilter with its public fields at the top level, not in FFFilter's p,
# and libavfilter/denoise_compat.h, included at the end of denoise_opencl.h,
# supplies what else those releases lack; 8.x trees get neither.
LAVFI_MAJOR=$(sed -n 's/^#define LIBAVFILTER_VERSION_MAJOR *//p' \
              "$TREE/libavfilter/version_major.h")
for_release() {
    if [ "$LAVFI_MAJOR" -ge 11 ]; then
        cat "$1"
    else
        case "$1" in
        */vf_*.c)
            sed 's/^\( *\)\.p\.\([a-z_]*\)\( *\)=/\1.\2\3  =/' "$1" ;;
        */denoise_opencl.h)
            sed 's|^#endif /\* AVFILTER_DENOISE_OPENCL_H \*/$|#include "denoise_compat.h"\n\n&|' "$1" ;;
        *)
            cat "$1" ;;
        esac
    fi
}
tmp=$(mktemp)
chmod 644 "$tmp"
for f in "$SRCDIR"/libavfilter/*.c "$SRCDIR"/libavfilter/*.h; do
    [ -f "$f" ] || continue
    dst="$TREE/libavfilter/$(basename "$f")"
    if [ "$(basename "$f")" = denoise_compat.h ] && [ "$LAVFI_MAJOR" -ge 11 ]; then
        rm -f "$dst"
        continue
    fi
    for_release "$f" > "$tmp"
    copy_if_changed "$tmp" "$dst"
done
for f in "$SRCDIR"/kernels/*.cl; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/libavfilter/opencl/$(basename "$f")"
done
# FATE tests of what older FFmpeg releases lack are left out of the copy:
# the MSB formats came with FFmpeg 8.0; before 7.0, ffmpeg read a filter
# graph from a file with -filter_complex_script, not -/filter_complex.
# (The C side of the differences: for_release() above.)
adapt_fate() {
    if grep -q 'AV_PIX_FMT_YUV444P10MSB' "$TREE/libavutil/pixfmt.h"; then
        cat "$1"
    else
        grep -v -e '-gpu-[a-z0-9]*msb[,:]' "$1"
    fi |
    if grep -q "if (\*opt == '/')" "$TREE/fftools/cmdutils.c"; then
        cat
    else
        sed 's|-/filter_complex |-filter_complex_script |'
    fi
}
for f in "$SRCDIR"/tests/fate/*.mak; do
    [ -f "$f" ] || continue
    adapt_fate "$f" > "$tmp"
    copy_if_changed "$tmp" "$TREE/tests/fate/$(basename "$f")"
done
rm -f "$tmp"
for f in "$SRCDIR"/tests/filtergraphs/*; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/tests/filtergraphs/$(basename "$f")"
done
for f in "$SRCDIR"/tests/ref/fate/*; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/tests/ref/fate/$(basename "$f")"
done
exit 0
