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

for f in "$SRCDIR"/libavfilter/*.c "$SRCDIR"/libavfilter/*.h; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/libavfilter/$(basename "$f")"
done
for f in "$SRCDIR"/kernels/*.cl; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/libavfilter/opencl/$(basename "$f")"
done
# FATE tests of what older FFmpeg releases lack are left out of the copy:
# the MSB formats came with FFmpeg 8.0; before 7.0, ffmpeg read a filter
# graph from a file with -filter_complex_script, not -/filter_complex.
# (The C side of the differences is in libavfilter/denoise_compat.h.)
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
tmp=$(mktemp)
chmod 644 "$tmp"
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
