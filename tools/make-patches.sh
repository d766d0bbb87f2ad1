#!/bin/bash
#
# make-patches.sh [--ffmpeg-source=DIR|TARBALL] [--signoff] [OUTDIR]
# make-patches.sh --check [--ffmpeg-source=DIR|TARBALL]
#
# Writes our changes as a git format-patch series on top of the FFmpeg
# release into OUTDIR [build/patches], for sending upstream: the release is
# unpacked into a scratch git repository (commit "FFmpeg <version>"), then
# committed in this order:
#   1. patches/*.patch (git am), our changes to FFmpeg's own files;
#   2. the host code and kernels that every filter shares;
#   3. one commit per filter of tools/register.sh's FILTERS table: its
#      sources, the kernels it adds, its allfilters.c, Makefile, configure
#      and opencl_source.h lines, its Changelog line and one minor version
#      more in libavfilter/version.h;
#   4. the FATE tests (tests/fate, tests/Makefile, tests/ref, tests/filtergraphs);
#   5. the documentation (doc/filters.texi).
# The files and lines of each commit come from running tools/overlay.sh and
# tools/register.sh on the scratch tree; the script fails unless the last
# commit equals the tree that our build uses (overlay, registration and
# tools/apply-patches.sh on the pristine release), byte for byte.
#
# --signoff: each commit signed off by the git identity (user.name and
# user.email of this repository, or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL):
# the sender's certificate of origin, which FFmpeg asks of a patch; only
# the sender can give it, so it is not the default.
#
# --check: also unpack a fresh copy of the release, apply the series with
# git am --whitespace=error-all, and fail, naming the files, unless the result
# equals that tree.  Needs no network.
#
# The release is the source that ./configure unpacked into FFMPEG_TREE
# (found through its stamp file .ffmpeg-gpu-source and BUILDDIR/downloads),
# else the newest BUILDDIR/downloads/*.orig.tar.xz, or --ffmpeg-source.
# FFMPEG_TREE and BUILDDIR come from the environment, else from config.mk.
# KEEP_WORK=1 keeps the scratch folder (TMPDIR, else /dev/shm or /tmp).

set -e
set -o pipefail

SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
PROG=make-patches
CHECK=no
SOURCE=
SIGNOFF=()
OUTDIR=

die() {
    echo "$PROG: error: $*" >&2
    exit 1
}

note() {
    echo "$PROG: $*"
}

for opt in "$@"; do
    case "$opt" in
    --check)            CHECK=yes; PROG=check-patches ;;
    --ffmpeg-source=*)  SOURCE=${opt#*=} ;;
    --signoff)          SIGNOFF=(--signoff) ;;
    --help|-h)          awk 'NR > 2 && !/^#/ { exit } NR > 2 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    -*)                 die "unknown option $opt" ;;
    *)                  OUTDIR=$opt ;;
    esac
done

command -v git > /dev/null 2>&1 || die "git not found (Debian: apt-get install git)"

config_value() {
    [ -f "$SRCDIR/config.mk" ] && sed -n "s/^$1=//p" "$SRCDIR/config.mk" | tail -n1
    return 0
}
BUILDDIR=${BUILDDIR:-$(config_value BUILDDIR)}
BUILDDIR=${BUILDDIR:-$SRCDIR/build}
FFMPEG_TREE=${FFMPEG_TREE:-$(config_value FFMPEG_TREE)}
FFMPEG_TREE=${FFMPEG_TREE:-$BUILDDIR/ffmpeg-src}
OUTDIR=${OUTDIR:-$BUILDDIR/patches}
START=$(date +%s)

# ---------------------------------------------------------------------------
# The pristine release

# find_source: set SOURCE to the release our build tree was unpacked from.
find_source() {
    local stamp=$FFMPEG_TREE/.ffmpeg-gpu-source kind value f arg
    if [ -f "$stamp" ]; then
        read -r kind value < "$stamp" || true
        if [ "$kind" = dir ]; then
            SOURCE=$value
            return 0
        fi
        # a tarball, known by its checksum: the downloaded one, or the one
        # given to ./configure
        arg=$(config_value CONFIGURE_ARGS | tr ' ' '\n' | sed -n "s/^'\{0,1\}--ffmpeg-source=//p" | tr -d "'")
        for f in "$BUILDDIR"/downloads/*.orig.tar.* $arg; do
            case "$f" in *.asc) continue ;; esac
            [ -f "$f" ] || continue
            if [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$value" ]; then
                SOURCE=$f
                return 0
            fi
        done
        die "$FFMPEG_TREE was unpacked from a tarball (sha256 $value) that is not in $BUILDDIR/downloads; give it with --ffmpeg-source=TARBALL (make patches FFMPEG_SOURCE=...)"
    fi
    SOURCE=$(ls "$BUILDDIR"/downloads/*.orig.tar.xz 2> /dev/null | sort -V | tail -n1)
    [ -n "$SOURCE" ] ||
        die "no FFmpeg source found: run ./configure first, or give --ffmpeg-source=DIR|TARBALL (make patches FFMPEG_SOURCE=...)"
}

[ -n "$SOURCE" ] || find_source
[ -e "$SOURCE" ] || die "$SOURCE: no such file or directory"
SOURCE=$(cd "$(dirname "$SOURCE")" && pwd)/$(basename "$SOURCE")

# unpack DEST: a fresh copy of the release in DEST (without .git or our stamp)
unpack() {
    mkdir -p "$1"
    if [ -d "$SOURCE" ]; then
        (cd "$SOURCE" && tar --exclude=.git --exclude=.ffmpeg-gpu-source -cf - .) |
            tar -C "$1" -xf -
    else
        tar -C "$1" --strip-components=1 -xf "$SOURCE"
    fi
    [ -f "$1/libavfilter/allfilters.c" ] || die "$SOURCE does not look like an FFmpeg source tree"
}

# build_tree DEST: the tree our build uses (./configure and 'make overlay')
build_tree() {
    unpack "$1"
    "$SRCDIR/tools/overlay.sh" "$SRCDIR" "$1" > /dev/null
    "$SRCDIR/tools/register.sh" "$1"
    "$SRCDIR/tools/apply-patches.sh" "$1" > /dev/null
}

# compare A B: print the files that differ between two trees, in content,
# presence or executable bit; .git and our stamp file are not compared.
compare() {
    local a=$1 b=$2
    diff -rq --no-dereference -x .git -x .ffmpeg-gpu-source "$a" "$b" |
        sed -e "s|^Files $a/\(.*\) and $b/.* differ\$|    \1: differs|" \
            -e "s|^Only in $a/*\([^:]*\): \(.*\)|    \1/\2: only in the build tree|" \
            -e "s|^Only in $b/*\([^:]*\): \(.*\)|    \1/\2: only in the series|" \
            -e 's|^    /|    |' || true
    diff <(cd "$a" && find . -path ./.git -prune -o -type f -perm -u+x -print | sort) \
         <(cd "$b" && find . -path ./.git -prune -o -type f -perm -u+x -print | sort) |
        sed -n 's|^[<>] \./\(.*\)|    \1: executable bit differs|p' || true
}

# ---------------------------------------------------------------------------
# Scratch repositories

# Commits of our own are dated like our last commit, so that the series
# only changes with our sources; the identity is ours (git config) unless
# GIT_AUTHOR_NAME and friends are set.
NAME=$(git -C "$SRCDIR" config user.name 2> /dev/null || echo "FFmpeg GPU denoise")
EMAIL=$(git -C "$SRCDIR" config user.email 2> /dev/null || echo "ffmpeg-gpu-denoise@invalid")
DATE=$(git -C "$SRCDIR" log -1 --format=%ad --date=raw 2> /dev/null || date -u +'%s +0000')
export GIT_AUTHOR_NAME=${GIT_AUTHOR_NAME:-$NAME}
export GIT_AUTHOR_EMAIL=${GIT_AUTHOR_EMAIL:-$EMAIL}
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-$GIT_AUTHOR_NAME}
export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-$GIT_AUTHOR_EMAIL}
export GIT_AUTHOR_DATE=${GIT_AUTHOR_DATE:-$DATE}
export GIT_COMMITTER_DATE=${GIT_COMMITTER_DATE:-$DATE}
# the machine's and the user's git settings (autocrlf, hooks, ...) must not
# change the series
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null

# Four FFmpeg trees of 10,000 files: in memory where there is room, since
# creating files can be slow on a virtual machine's disk (TMPDIR decides).
if [ -z "$TMPDIR" ] && [ -w /dev/shm ] &&
   [ "$(df -Pk /dev/shm 2> /dev/null | awk 'NR == 2 { print $4 }')" -gt 2097152 ] 2> /dev/null; then
    TMPDIR=/dev/shm
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/make-patches.XXXXXX")
WORK=$(cd "$WORK" && pwd)
if [ -n "$KEEP_WORK" ]; then
    note "keeping $WORK"
else
    trap 'rm -rf "$WORK"' EXIT
fi

# init_repo DIR [OBJECTS]: DIR as a git repository with the release as its
# one commit; OBJECTS: the object folder of another one, to borrow from.
init_repo() {
    git -C "$1" init -q
    git -C "$1" config gc.auto 0
    [ -z "$2" ] || echo "$2" > "$1/.git/objects/info/alternates"
    git -C "$1" add -A -f
    git -C "$1" commit -q -m "FFmpeg $VERSION"
}

# am DIR [OPTION...] PATCH...: git am, its messages (indented, without the
# advice on going on) only when it fails
am() {
    local dir=$1 out
    shift
    if ! out=$(git -C "$dir" am "$@" 2>&1); then
        echo "$out" | grep -v -e '^hint:' -e '^When you have resolved' -e '^If you prefer' \
            -e '^To restore the original' | sed 's/^/    /' >&2
        return 1
    fi
}

# ---------------------------------------------------------------------------
# The filters, kernels and objects of tools/register.sh

FILTERS=$(awk '/^FILTERS="/ { on = 1; sub(/^FILTERS="/, "") }
               on { end = sub(/"$/, ""); print; if (end) exit }' "$SRCDIR/tools/register.sh")
NAMES=() OBJS=() KERNELS=()
while IFS='|' read -r name objs kernels; do
    [ -n "$name" ] || continue
    NAMES+=("$name")
    OBJS+=("$objs")
    KERNELS+=("$kernels")
done <<< "$FILTERS"
N=${#NAMES[@]}
[ "$N" -gt 0 ] || die "no FILTERS table found in tools/register.sh"

# Stages: 1 shared code, 2 .. N+1 the filters, N+2 FATE, N+3 documentation.
SHARED=1
FATE=$((N + 2))
DOC=$((N + 3))

# owner kernel|object ITEM: the stage that adds ITEM: the shared one when
# every filter uses it, else the first filter's that uses it; empty if none.
owner() {
    local i list first='' all=yes
    for ((i = 0; i < N; i++)); do
        if [ "$1" = kernel ]; then list=${KERNELS[i]}; else list=${OBJS[i]}; fi
        if [[ " $list " == *" $2 "* ]]; then
            [ -n "$first" ] || first=$((i + 2))
        else
            all=no
        fi
    done
    [ -n "$first" ] || return 0
    if [ $all = yes ]; then echo $SHARED; else echo "$first"; fi
}

ALL_KERNELS=$(echo "${KERNELS[@]}" | tr ' ' '\n' | awk 'NF && !seen[$0]++')

# Rules telling which stage adds a line of a registration file (allfilters.c,
# libavfilter/Makefile, configure, opencl_source.h): "STAGE TYPE STRING",
# TYPE s: the line contains STRING, p: the line starts with it.
RULES=$WORK/rules
: > "$RULES"
for k in $ALL_KERNELS; do
    # ff_opencl_source_NAME in FFmpeg 5.1
    echo "$(owner kernel "$k") s ff_source_${k}_cl;" >> "$RULES"
    echo "$(owner kernel "$k") s ff_opencl_source_${k};" >> "$RULES"
done
for ((i = 0; i < N; i++)); do
    name=${NAMES[i]}
    upper=$(echo "$name" | tr 'a-z' 'A-Z')
    {
        echo "$((i + 2)) s ff_vf_$name;"
        echo "$((i + 2)) s (CONFIG_${upper}_FILTER)"
        echo "$((i + 2)) p ${name}_filter_"
        echo "$((i + 2)) p - $name filter"
    } >> "$RULES"
done
# make checkheaders skips the shared header without OpenCL
echo "$SHARED p SKIPHEADERS-\$(CONFIG_OPENCL) " >> "$RULES"
# the Changelog's "version <next>:" section, where the release has none,
# comes with the first filter, its blank lines too (TYPE e: an empty line)
echo "2 p version <next>:" >> "$RULES"
echo "2 e " >> "$RULES"

# ---------------------------------------------------------------------------
# Commit messages

# join WORD...: "a", "a and b", "a, b and c"
join() {
    local out='' i
    for ((i = 1; i <= $#; i++)); do
        if [ $i -eq 1 ]; then out=${!i}
        elif [ $i -eq $# ]; then out="$out and ${!i}"
        else out="$out, ${!i}"
        fi
    done
    echo "$out"
}

shared_kernels=()
for k in $ALL_KERNELS; do
    [ "$(owner kernel "$k")" = $SHARED ] && shared_kernels+=("$k.cl")
done
ALL_NAMES=$(join "${NAMES[@]}")

# Before FFmpeg 8.0 the overlay adds denoise_compat.h (tools/overlay.sh)
compat_note() {
    if [ -f "$REPO/libavfilter/denoise_compat.h" ]; then
        echo "  denoise_compat.h holds what this release lacks of the API of"
        echo "FFmpeg 8.1, which the filters are written for."
    fi
}

message() {
    local stage=$1 i name body objs o more=() j
    case $stage in
    "$SHARED")
        cat <<EOF
lavfi: add shared host code and kernels of the OpenCL denoisers

Host code and OpenCL kernels shared by the OpenCL denoise filters
$ALL_NAMES, which the following commits add.

denoise_opencl.c has the pixel format handling, the program build, the
loading and storing of planes, the block-matching search, the frame queue
of the temporal filters, the opponent colour transform and the kernel
profiling; denoise_noise.c the estimation of the noise (sigma=auto and
sigma=curve: Ponomarenko et al.'s DCT-block method on the device, smoothed
over the frames, and the variance-stabilising transform of a noise curve); $(join "${shared_kernels[@]}") hold the OpenCL code that
every filter uses.$(compat_note)

The filters implement, with some improvements, the methods of A. Davy and
T. Ehret, "GPU acceleration of NL-means, BM3D and VBM3D", Journal of
Real-Time Image Processing, 2020.
EOF
        ;;
    "$FATE")
        cat <<EOF
fate: add tests of the OpenCL denoisers

Tests of $ALL_NAMES in tests/fate/gpu-denoise.mak: every format family,
odd frame sizes, option extremes, timeline and runtime commands.  They
need an OpenCL device, so like the other hardware tests they are part of
'make fate-hw', not of 'make fate'; 'make fate-gpu-denoise' runs them
alone, OPENCL_DEVICE=P.D on another device.  The references were made on
PoCL: outputs that are bit-exact on every device are compared through
checksums, the others with a tolerance (see the comment at the top of
gpu-denoise.mak).
EOF
        ;;
    "$DOC")
        cat <<EOF
doc/filters: document the OpenCL denoisers

Add the sections of $ALL_NAMES to the OpenCL video filters chapter.
EOF
        ;;
    *)
        i=$((stage - 2))
        name=${NAMES[i]}
        case $name in
        nlmeans_gpu)
            body="Non-local means on OpenCL after Davy and Ehret's GPU NL-means: patch-wise
NL-means with the n most similar patches, bias-corrected weights, a
flat-patch test and tent-weighted aggregation on a grid of patches.  It
takes every format of the OpenCL hwcontext, 8 to 16 bits; on 4:4:4 and
RGB it can compute one distance over the three channels or work on RGB
as opponent colours; the weighting kernel is exponential or bisquare." ;;
        bm3d_gpu)
            body="BM3D on OpenCL after Davy and Ehret: both steps (hard thresholding, then
Wiener filtering), each with one fused filtering kernel per group, the
presets fast (Davy and Ehret's parameters) and ref (Dabov et al.'s), and
a deterministic fixed-point aggregation.  On 4:4:4 and RGB it groups
the three channels jointly in opponent colours (CBM3D).  The 2D
transform is a DCT, or Bior1.5 for the first step as an option." ;;
        vbm3d_gpu)
            body="Video BM3D on OpenCL: the predictive search of Davy and Ehret's VBM3D
through past and future frames, then both BM3D steps with bm3d_gpu's
fused kernel.  Frames are queued inside the filter and every frame comes
out once, in order, with its properties; with causal=1 only past frames
are searched and there is no delay." ;;
        *)
            body="The $name OpenCL denoise filter." ;;
        esac
        # a source file shared with other filters
        for o in ${OBJS[i]}; do
            j=$(owner object "$o")
            if [ -n "$j" ] && [ "$j" != $SHARED ] && [ "$j" -lt "$stage" ]; then
                body="$body

Its code is in ${o%.o}.c, which the ${NAMES[j - 2]} commit added."
            fi
            [ "$j" = "$stage" ] || continue
            more=()
            for ((j = i + 1; j < N; j++)); do
                [[ " ${OBJS[j]} " == *" $o "* ]] && more+=("${NAMES[j]}")
            done
            [ ${#more[@]} -gt 0 ] &&
                body="$body

${o%.o}.c also holds $(join "${more[@]}"), which a following commit registers."
        done
        printf 'lavfi: add %s filter\n\n%s\n' "$name" "$body"
        ;;
    esac
}

# ---------------------------------------------------------------------------
# The series

note "FFmpeg source: $SOURCE"
REPO=$WORK/series-tree
unpack "$REPO"
VERSION=$(cat "$REPO/VERSION" 2> /dev/null || cat "$REPO/RELEASE" 2> /dev/null || echo unknown)
init_repo "$REPO"
BASE=$(git -C "$REPO" rev-parse HEAD)

# 1. our patches to FFmpeg's files
for p in "$SRCDIR"/patches/*.patch; do
    [ -f "$p" ] || continue
    am "$REPO" "${SIGNOFF[@]}" "$p" ||
        die "$(basename "$p") does not apply to FFmpeg $VERSION with git am"
done

# The rest: what the overlay and the registration change, split by stage.
"$SRCDIR/tools/overlay.sh" "$SRCDIR" "$REPO" > /dev/null
"$SRCDIR/tools/register.sh" "$REPO"
"$SRCDIR/tools/apply-patches.sh" "$REPO" > /dev/null
[ -z "$(git -C "$REPO" ls-files -d)" ] ||
    die "the overlay removed files: $(git -C "$REPO" ls-files -d | tr '\n' ' ')"

# Whole files: WHOLE_k lists the paths that stage k adds.
declare -A WHOLE
# Files of several stages: their lines get an owning stage each.
SPLIT=()
BUMP_VERSION=no
is_new() {
    [ -z "$(git -C "$REPO" ls-files -- "$1")" ]
}
while IFS= read -r path; do
    stage=
    case "$path" in
    libavfilter/allfilters.c|libavfilter/Makefile|configure|libavfilter/opencl_source.h|Changelog)
        is_new "$path" || { SPLIT+=("$path"); continue; } ;;
    libavfilter/version.h)
        # one minor version more in each filter's commit
        BUMP_VERSION=yes
        continue ;;
    esac
    case "$path" in
    libavfilter/opencl/*.cl)
        f=${path#libavfilter/opencl/}
        stage=$(owner kernel "${f%.cl}") ;;
    libavfilter/*/*)
        stage=none ;;
    libavfilter/denoise_compat.h)
        # (releases before 8.0) included by denoise_opencl.h, for every filter
        stage=$SHARED ;;
    libavfilter/*.c|libavfilter/*.h)
        f=${path#libavfilter/}
        stage=$(owner object "${f%.*}.o") ;;
    tests/*)
        stage=$FATE ;;
    doc/*)
        stage=$DOC ;;
    *)
        stage=none ;;
    esac
    [ "$stage" != none ] ||
        die "$path is changed by the overlay or the registration, but this script puts it in no commit"
    if [ -z "$stage" ]; then
        note "warning: $path belongs to no filter of tools/register.sh; it goes into the shared commit"
        stage=$SHARED
    fi
    WHOLE[$stage]+="$path"$'\n'
done < <(git -C "$REPO" ls-files -m -o | sort -u)

# For each split file, the stage of each of its lines (0: FFmpeg's), from
# the diff between the committed file and the registered one.
mkdir -p "$WORK/split"
for path in "${SPLIT[@]}"; do
    own=$WORK/split/$(echo "$path" | tr / _)
    git -C "$REPO" show "HEAD:$path" > "$own.base"
    cp "$REPO/$path" "$own.full"
    { diff --old-line-format=$'-\n' --unchanged-line-format=$'=\n' \
           --new-line-format='+%L' "$own.base" "$own.full" || [ $? -eq 1 ]; } |
        awk -v rules="$RULES" -v path="$path" -v prog="$PROG" '
            BEGIN {
                while ((getline r < rules) > 0) {
                    n++
                    stage[n] = substr(r, 1, index(r, " ") - 1)
                    r = substr(r, index(r, " ") + 1)
                    type[n] = substr(r, 1, 1)
                    str[n] = substr(r, 3)
                }
            }
            /^-/ { print prog ": error: the registration removes a line of " path > "/dev/stderr"; exit 1 }
            /^=/ { print 0; next }
            {
                line = substr($0, 2)
                s = ""
                for (i = 1; i <= n; i++) {
                    p = type[i] == "e" ? (line == "" ? 1 : 0) : index(line, str[i])
                    if (p > 0 && (type[i] != "p" || p == 1)) {
                        if (s != "" && s != stage[i]) {
                            print prog ": error: more than one commit claims this line of " path ": " line > "/dev/stderr"
                            exit 1
                        }
                        s = stage[i]
                    }
                }
                if (s == "") {
                    print prog ": error: no commit claims this line of " path ": " line > "/dev/stderr"
                    exit 1
                }
                print s
            }' > "$own.owners"
done

# 2-5. one commit per stage
for ((stage = 1; stage <= DOC; stage++)); do
    paths=()
    while IFS= read -r path; do
        [ -n "$path" ] && paths+=("$path")
    done <<< "${WHOLE[$stage]}"
    # New files that are not text (raw FATE references) go as binary
    # patches: git would take one without a NUL byte for text.
    mkdir -p "$REPO/.git/info"
    for path in "${paths[@]}"; do
        is_new "$path" || continue
        if [ "$(LC_ALL=C tr -d '\t\n\f -~\200-\377' < "$REPO/$path" | wc -c)" -gt 0 ] ||
           ! iconv -f UTF-8 -t UTF-8 "$REPO/$path" > /dev/null 2>&1; then
            echo "/$path binary" >> "$REPO/.git/info/attributes"
        fi
    done
    [ ${#paths[@]} -eq 0 ] || git -C "$REPO" add -f -- "${paths[@]}"
    for path in "${SPLIT[@]}"; do
        own=$WORK/split/$(echo "$path" | tr / _)
        grep -qx "$stage" "$own.owners" || continue
        awk -v stage="$stage" 'NR == FNR { o[FNR] = $1; next } o[FNR] <= stage' \
            "$own.owners" "$own.full" > "$REPO/$path"
        git -C "$REPO" add -- "$path"
    done
    if [ $BUMP_VERSION = yes ] && [ $stage -ge 2 ] && [ $stage -le $((N + 1)) ]; then
        git -C "$REPO" show HEAD:libavfilter/version.h > "$WORK/version.h"
        "$SRCDIR/tools/register.sh" --bump-minor "$WORK/version.h" \
            > "$REPO/libavfilter/version.h"
        git -C "$REPO" add -- libavfilter/version.h
    fi
    if git -C "$REPO" diff --cached --quiet; then
        note "warning: nothing for commit $stage ($(message "$stage" | head -n1))"
        continue
    fi
    message "$stage" | { IFS= read -r subject; printf '%s\n' "$subject"; fmt -w 72; } |
        git -C "$REPO" commit -q "${SIGNOFF[@]}" -F -
done

# The series must end on the tree of our build.
build_tree "$WORK/build-tree"
differ=$(compare "$WORK/build-tree" "$REPO")
[ -n "$(git -C "$REPO" status --porcelain)" ] &&
    differ="$differ$(git -C "$REPO" status --porcelain | sed 's/^.. \(.*\)/    \1: not committed/')"
[ -z "$differ" ] || die "the last commit of the series differs from the build tree:
$differ"

# ---------------------------------------------------------------------------
# Output

if [ $CHECK = yes ]; then
    OUTDIR=$WORK/series
fi
mkdir -p "$OUTDIR"
rm -f "$OUTDIR"/[0-9][0-9][0-9][0-9]-*.patch
git -C "$REPO" format-patch -q -o "$OUTDIR" "$BASE"..HEAD
COUNT=$(ls "$OUTDIR"/[0-9][0-9][0-9][0-9]-*.patch | wc -l)

if [ $CHECK = no ]; then
    note "$COUNT patches on FFmpeg $VERSION in $OUTDIR:"
    (cd "$OUTDIR" && ls [0-9][0-9][0-9][0-9]-*.patch | sed 's/^/    /')
    exit 0
fi

# --check: git am on a fresh copy of the release
FRESH=$WORK/fresh
unpack "$FRESH"
init_repo "$FRESH" "$REPO/.git/objects"
am "$FRESH" --whitespace=error-all "$OUTDIR"/[0-9][0-9][0-9][0-9]-*.patch ||
    die "the series does not apply cleanly to FFmpeg $VERSION with git am --whitespace=error-all"
differ=$(compare "$WORK/build-tree" "$FRESH")
[ -z "$differ" ] || die "FFmpeg $VERSION with the series applied differs from the build tree:
$differ"
# FFmpeg 8 (libavfilter 11) and later: code as upstream takes it, with no
# compatibility code for older releases (tools/overlay.sh)
if [ "$(sed -n 's/^#define LIBAVFILTER_VERSION_MAJOR *//p' \
        "$FRESH/libavfilter/version_major.h")" -ge 11 ]; then
    compat=$(grep -l -e '^+.*denoise_compat' -e '^+.*LIBAVFILTER_VERSION_MAJOR' \
             "$OUTDIR"/[0-9][0-9][0-9][0-9]-*.patch || true)
    [ -z "$compat" ] || die "the series for FFmpeg $VERSION carries compatibility code for older releases: $(echo $compat | xargs -n1 basename | tr '\n' ' ')"
fi
note "ok: the $COUNT patches apply to FFmpeg $VERSION with git am --whitespace=error-all and give the tree of the build, $(find "$FRESH" -path "$FRESH/.git" -prune -o -type f -print | wc -l) files, exactly ($(($(date +%s) - START)) s)"
(cd "$OUTDIR" && ls [0-9][0-9][0-9][0-9]-*.patch | sed 's/^/    /')
