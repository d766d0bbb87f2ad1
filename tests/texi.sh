#!/bin/bash
# The filters' documentation builds as FFmpeg builds its own: doc/filters.texi
# of the FFmpeg tree (where tools/register.sh puts our sections) through
# makeinfo with FFmpeg's HTML settings (doc/t2h.pm) and through
# doc/texi2pod.pl and pod2man for the man page, as FFmpeg's doc/Makefile
# does; any makeinfo message (a reference to a missing node, an @item
# outside a table, an unclosed block) fails. Skipped without makeinfo
# (texinfo; tools/deps.sh installs it).
#
# Usage: tests/texi.sh FFMPEG_TREE

. "$(dirname "$0")/lib.sh"
TREE=${1:?usage: texi.sh FFMPEG_TREE}
FILTERS="nlmeans_gpu bm3d_gpu vbm3d_gpu"

if ! command -v makeinfo > /dev/null; then
    skip "no makeinfo (apt-get install texinfo)"
    summary -s texi.sh
    exit
fi

# missing_sections FILE FORMAT: the filters without a line FORMAT (printf,
# the filter's name for %s) in FILE
missing_sections() {
    local f missing=""
    for f in $FILTERS; do
        grep -qx -- "$(printf "$2" "$f")" "$1" || missing="$missing $f"
    done
    echo "$missing"
}

RUN=$((RUN + 1))
missing=$(missing_sections "$TREE/doc/filters.texi" '@section %s')
if [ -n "$missing" ]; then
    fail "doc/filters.texi has no section of:$missing"
else
    ok "doc/filters.texi has the sections of $FILTERS"
fi

RUN=$((RUN + 1))
if (cd "$TREE" && makeinfo --html -I doc --no-split -D config-not-all \
        --init-file=doc/t2h.pm --output "$TMP/filters.html" \
        doc/ffmpeg-filters.texi) > "$TMP/html.log" 2>&1 && [ ! -s "$TMP/html.log" ]; then
    ok "HTML (makeinfo, doc/t2h.pm): no message"
else
    fail "HTML (makeinfo, doc/t2h.pm):"
    show_tail 10 "$TMP/html.log"
fi

RUN=$((RUN + 1))
if (cd "$TREE" && perl doc/texi2pod.pl -Dconfig-not-all=yes -Idoc \
        doc/ffmpeg-filters.texi "$TMP/filters.pod") > "$TMP/pod.log" 2>&1 &&
   pod2man --section=1 --center=" " --release=" " --date=" " "$TMP/filters.pod" \
        > "$TMP/filters.1" 2>> "$TMP/pod.log"; then
    missing=$(missing_sections "$TMP/filters.1" '.SS "%s"')
    if [ -n "$missing" ]; then
        fail "man page (texi2pod.pl, pod2man): no section of:$missing"
    else
        ok "man page (texi2pod.pl, pod2man): the three sections"
    fi
else
    fail "man page (texi2pod.pl, pod2man):"
    show_tail 10 "$TMP/pod.log"
fi

summary -s texi.sh
