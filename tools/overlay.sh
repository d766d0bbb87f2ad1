#!/bin/sh
#
# overlay.sh SRCDIR TREE: copy our filter sources, kernels, FATE tests and
# their references into an FFmpeg source tree.  A file is only copied when its
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
for f in "$SRCDIR"/tests/fate/*.mak; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/tests/fate/$(basename "$f")"
done
for f in "$SRCDIR"/tests/filtergraphs/*; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/tests/filtergraphs/$(basename "$f")"
done
for f in "$SRCDIR"/tests/ref/fate/*; do
    [ -f "$f" ] && copy_if_changed "$f" "$TREE/tests/ref/fate/$(basename "$f")"
done
exit 0
