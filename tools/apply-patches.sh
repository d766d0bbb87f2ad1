#!/bin/sh
#
# apply-patches.sh TREE: apply our patches to FFmpeg's own files
# (patches/*.patch, in git format-patch form, in name order) to an FFmpeg
# source tree, after tools/overlay.sh and tools/register.sh.  A patch that is
# already applied is skipped, so running it again changes nothing; a patch
# that applies neither way stops it with an error.

set -e
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
TREE=$1

die() {
    echo "apply-patches: error: $*" >&2
    exit 1
}

[ -n "$TREE" ] && [ -d "$TREE" ] || die "usage: $0 TREE (an FFmpeg source tree)"
command -v patch > /dev/null 2>&1 || die "'patch' not found (Debian: apt-get install patch)"

# run_patch [-R] [--dry-run] < PATCH: -f: no questions, never guess that a
# patch is reversed; --fuzz=0: the context must match exactly, as with git am.
run_patch() {
    patch -d "$TREE" -p1 -f --fuzz=0 --no-backup-if-mismatch "$@"
}

for p in "$SRCDIR"/patches/*.patch; do
    [ -f "$p" ] || continue
    name=$(basename "$p")
    if run_patch -R --dry-run < "$p" > /dev/null 2>&1; then
        continue
    fi
    if ! out=$(run_patch --dry-run < "$p" 2>&1); then
        echo "apply-patches: error: $name does not apply to $TREE:" >&2
        echo "$out" | sed 's/^/    /' >&2
        die "it is neither applied nor applicable (an older version of it applied,
or another FFmpeg version?); remove $TREE/.ffmpeg-gpu-source
and run ./configure again to start from a fresh FFmpeg tree"
    fi
    run_patch -s < "$p" || die "applying $name to $TREE failed"
    echo "apply-patches: $name"
done
exit 0
