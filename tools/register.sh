#!/bin/sh
#
# register.sh TREE: register our filters in an FFmpeg source tree with small,
# idempotent edits (allfilters.c, libavfilter/Makefile, configure,
# opencl_source.h, doc/filters.texi, tests/Makefile, Changelog,
# libavfilter/version.h).

set -e
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)

# name|objects|kernels
FILTERS="nlmeans_gpu|vf_nlmeans_gpu.o opencl.o denoise_opencl.o denoise_noise.o|denoise_common patch_search noise_estimate nlmeans_gpu
bm3d_gpu|vf_bm3d_gpu.o opencl.o denoise_opencl.o denoise_noise.o|denoise_common patch_search noise_estimate bm3d_gpu
vbm3d_gpu|vf_bm3d_gpu.o opencl.o denoise_opencl.o denoise_noise.o|denoise_common patch_search noise_estimate bm3d_gpu vbm3d_search"

# replace_with_tmp FILE: FILE takes the content of FILE.tmp (its mode kept)
replace_with_tmp() {
    cat "$1.tmp" > "$1"
    rm -f "$1.tmp"
}

# insert_after FILE ANCHOR LINE: add LINE after the first line that starts
# with the fixed string ANCHOR, unless FILE already contains LINE.
insert_after() {
    file=$1
    anchor=$2
    line=$3
    grep -qxF "$line" "$file" && return 0
    awk -v anchor="$anchor" 'index($0, anchor) == 1 { found = 1 } END { exit !found }' "$file" || {
        echo "register: cannot find '$anchor' in $file" >&2
        exit 1
    }
    awk -v anchor="$anchor" -v line="$line" '
        { print } index($0, anchor) == 1 && !done { print line; done = 1 }' "$file" > "$file.tmp"
    replace_with_tmp "$file"
}

# set_line FILE PREFIX ANCHOR LINE: make LINE the one line of FILE that starts
# with PREFIX, replacing an older version of it, or else add it after ANCHOR.
set_line() {
    file=$1
    prefix=$2
    anchor=$3
    line=$4
    grep -qxF "$line" "$file" && return 0
    if awk -v p="$prefix" 'index($0, p) == 1 { found = 1 } END { exit !found }' "$file"; then
        awk -v p="$prefix" -v line="$line" '
            index($0, p) == 1 { if (!done) print line; done = 1; next } { print }' \
            "$file" > "$file.tmp"
        replace_with_tmp "$file"
    else
        insert_after "$file" "$anchor" "$line"
    fi
}

# Changelog and version, as FFmpeg's checklist for a new filter asks
# (doc/developer.texi): a line "- NAME filter" per filter at the end of the
# "version <next>:" section (which a release's Changelog gets at its top),
# and libavfilter's minor version one higher for each line added, its
# micro version back to 100.
# add_changelog_entry CHANGELOG ENTRY
add_changelog_entry() {
    awk -v entry="$2" '
        !done && /^version / {
            if ($0 != "version <next>:") {
                print "version <next>:"
                print entry
                print ""
                print ""
                done = 1
            } else {
                next_section = 1
            }
        }
        !done && next_section && /^$/ { print entry; done = 1 }
        { print }' "$1" > "$1.tmp"
    replace_with_tmp "$1"
}

# bump_minor_version VERSION_H: libavfilter/version.h with the minor version
# one higher and the micro version 100, on stdout.
bump_minor_version() {
    awk '$1 == "#define" && $2 == "LIBAVFILTER_VERSION_MINOR" {
             printf "#define LIBAVFILTER_VERSION_MINOR %3d\n", $3 + 1; next }
         $1 == "#define" && $2 == "LIBAVFILTER_VERSION_MICRO" {
             print "#define LIBAVFILTER_VERSION_MICRO 100"; next }
         { print }' "$1"
}

# register.sh --bump-minor VERSION_H: the same, for tools/make-patches.sh,
# which bumps it in each filter's commit.
if [ "$1" = --bump-minor ]; then
    bump_minor_version "$2"
    exit 0
fi

# register.sh --check OBJDIR: succeed when FFmpeg's configure in OBJDIR
# enabled every filter of the list (a filter added since needs a new run).
if [ "$1" = --check ]; then
    for entry in $(echo "$FILTERS" | tr ' \n' '# '); do
        name=$(echo "${entry%%|*}" | tr 'a-z' 'A-Z')
        grep -q "^CONFIG_${name}_FILTER=yes" "$2/ffbuild/config.mak" 2> /dev/null || exit 1
    done
    exit 0
fi
TREE=$1

# What differs between the FFmpeg releases (8.1, 7.1, 5.1), found in the
# tree itself; the C side is in libavfilter/denoise_compat.h and
# tools/overlay.sh.
# FFmpeg 8 declares filters as FFFilter, 7.1 and older as AVFilter.
if grep -q '^extern const FFFilter ff_vf_nlmeans_opencl;' "$TREE/libavfilter/allfilters.c"; then
    FILTER_TYPE=FFFilter
else
    FILTER_TYPE=AVFilter
fi
# FFmpeg 5.1 names the kernel sources ff_opencl_source_NAME (tools/cl2c),
# later releases ff_source_NAME_cl (tools/source2c).
if grep -q '^extern const char \*ff_opencl_source_nlmeans;' "$TREE/libavfilter/opencl_source.h"; then
    CL_SOURCE_ANCHOR='extern const char *ff_opencl_source_nlmeans;'
    CL_SOURCE_FORMAT='extern const char *ff_opencl_source_%s;'
else
    CL_SOURCE_ANCHOR='extern const char *ff_source_nlmeans_cl;'
    CL_SOURCE_FORMAT='extern const char *ff_source_%s_cl;'
fi

for entry in $(echo "$FILTERS" | tr ' \n' '# '); do
    entry=$(echo "$entry" | tr '#' ' ')
    name=${entry%%|*}
    rest=${entry#*|}
    objs=${rest%%|*}
    kernels=${rest#*|}
    upper=$(echo "$name" | tr 'a-z' 'A-Z')
    for k in $kernels; do
        objs="$objs opencl/$k.o"
        insert_after "$TREE/libavfilter/opencl_source.h" \
            "$CL_SOURCE_ANCHOR" "$(printf "$CL_SOURCE_FORMAT" "$k")"
    done
    insert_after "$TREE/libavfilter/allfilters.c" \
        "extern const $FILTER_TYPE ff_vf_nlmeans_opencl;" \
        "extern const $FILTER_TYPE ff_vf_$name;"
    set_line "$TREE/libavfilter/Makefile" "OBJS-\$(CONFIG_${upper}_FILTER) " \
        'OBJS-$(CONFIG_NLMEANS_OPENCL_FILTER)' \
        "OBJS-\$(CONFIG_${upper}_FILTER) += $objs"
    insert_after "$TREE/configure" \
        'nlmeans_opencl_filter_deps=' \
        "${name}_filter_deps=\"opencl\""
    if ! grep -qxF -- "- $name filter" "$TREE/Changelog"; then
        add_changelog_entry "$TREE/Changelog" "- $name filter"
        bump_minor_version "$TREE/libavfilter/version.h" > "$TREE/libavfilter/version.h.tmp"
        replace_with_tmp "$TREE/libavfilter/version.h"
    fi
done

# make checkheaders: denoise_opencl.h includes the OpenCL headers, so it is
# skipped without OpenCL, as opencl.h is (denoise_compat.h, in older
# releases' trees, includes it)
skip=denoise_opencl.h
[ -f "$TREE/libavfilter/denoise_compat.h" ] && skip="$skip denoise_compat.h"
set_line "$TREE/libavfilter/Makefile" \
    'SKIPHEADERS-$(CONFIG_OPENCL)                 += denoise_opencl.h' \
    'SKIPHEADERS-$(CONFIG_OPENCL) ' \
    "SKIPHEADERS-\$(CONFIG_OPENCL)                 += $skip"

# FATE: our tests are included after the hardware tests.
insert_after "$TREE/tests/Makefile" \
    'include $(SRC_PATH)/tests/fate/hw.mak' \
    'include $(SRC_PATH)/tests/fate/gpu-denoise.mak'

# Documentation: our sections go at the end of the OpenCL filters chapter.
texi=$TREE/doc/filters.texi
for doc in "$SRCDIR"/doc/*.texi; do
    [ -f "$doc" ] || continue
    tag="@c ffmpeg-gpu-denoise: $(basename "$doc")"
    if grep -qxF "$tag" "$texi"; then
        # replace the previously inserted copy
        awk -v tag="$tag" '$0 == tag { skip = !skip; next } !skip' "$texi" > "$texi.tmp"
        mv "$texi.tmp" "$texi"
    fi
    awk -v tag="$tag" -v doc="$doc" '
        /^@c man end OPENCL VIDEO FILTERS/ && !done {
            print tag
            while ((getline l < doc) > 0) print l
            print tag
            done = 1
        }
        { print }' "$texi" > "$texi.tmp"
    if cmp -s "$texi" "$texi.tmp"; then rm -f "$texi.tmp"; else mv "$texi.tmp" "$texi"; fi
done
# nlmeans_gpu's section refers to nlmeans_opencl's, which has no anchor in
# FFmpeg 5.1 (the reference would name a missing node)
if ! grep -qxF '@anchor{nlmeans_opencl}' "$texi"; then
    awk '/^@section nlmeans_opencl$/ && !done { print "@anchor{nlmeans_opencl}"; done = 1 }
         { print }' "$texi" > "$texi.tmp"
    replace_with_tmp "$texi"
fi
exit 0
