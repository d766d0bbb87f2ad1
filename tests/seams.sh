#!/bin/bash
#
# The seam rule of the documentation (doc/*_gpu.texi, "Segments"): a segment
# [a, b) of a video of N frames, filtered as frames max(0, a - o1) ..
# min(N, b + o2) - 1 of which only [a, b) are kept, must give the bytes of
# one pass over the whole video, with o1 and o2 the frames of context that
# the rule gives for each filter and mode:
#
#   nlmeans_gpu          o1 = past, o2 = future (causal: future is 0)
#   bm3d_gpu             0, 0
#   vbm3d_gpu            o1 = 2 (past + future), o2 = 2 future
#                        (estim=basic: past + future, future; causal:
#                        future is 0)
#
# For every filter and mode the video is cut at random points (seeded) into
# segments, the first starting at frame 0 and the last ending at frame
# N - 1, each filtered with its context, plus single-frame segments at the
# first and the last frame; the frame MD5s (with the timestamps) of the
# frames kept must equal those of one pass. The rule is also checked to be
# tight: one frame of context less before a segment (or after it), in the
# middle of the video, must change its output.
#
# The input: tiny noisy testsrc2 clips (48x32, gray or yuv420p, 20 or 40
# frames, seeded noise), written once as raw video (a minimal build has
# what this test needs); a segment's frames are taken with trim before the
# filter and kept with trim after it.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D),
# SEED (cut points, default 15), SHRINK (frames taken off both contexts, to
# show that the test fails with less context than the rule: default 0),
# SEGMENTS (path of tools/denoise-segments, whose --context-of must give
# the same contexts; default tools/denoise-segments, skipped if missing).

. "$(dirname "$0")/lib.sh"
SEED=${SEED:-15}
SHRINK=${SHRINK:-0}
SEGMENTS=${SEGMENTS:-tools/denoise-segments}
RANDOM=$SEED

# source FORMAT N: the noisy clip, raw (its path on stdout)
source_clip() {
    local fmt=$1 n=$2 out=$TMP/in-$1-$2.raw
    [ -f "$out" ] || ff -t 120 -y \
        -f lavfi -i "testsrc2=s=48x32:r=25,trim=end_frame=$n,format=$fmt,noise=alls=25:allf=t:all_seed=7,format=$fmt" \
        -f rawvideo "$out" 2> "$TMP/err" || return 1
    echo "$out"
}

# frames OUT IN FILTER [START END KEEP_FROM KEEP_TO]: the pts, size and MD5
# of the frames kept, one a line; with START .. the input's frames START ..
# END - 1 are filtered and frames KEEP_FROM .. KEEP_TO - 1 of those kept
frames() {
    local out=$1 in=$2 filter=$3 graph=$3 fmt
    [ $# -gt 3 ] && graph="trim=start_frame=$4:end_frame=$5,$filter,trim=start_frame=$6:end_frame=$7"
    fmt=${in##*/in-}
    fmt=${fmt%%-*}
    ff -t 120 $DEV \
        -f rawvideo -pix_fmt "$fmt" -s 48x32 -r 25 -i "$in" \
        -vf "$graph" -f framemd5 - 2> "$TMP/err" > "$TMP/md5" || return 1
    grep -v '^#' "$TMP/md5" | awk -F', *' '{ print $3, $5, $6 }' > "$out"
}

# segment REF IN FILTER N A B O1 O2: frames [A, B) filtered with O1 frames of
# context before and O2 after; 0 when they equal the pass's, 1 when they
# differ, 2 when ffmpeg failed
segment() {
    local ref=$1 in=$2 filter=$3 n=$4 a=$5 b=$6 o1=$7 o2=$8 s e
    s=$((a - o1 < 0 ? 0 : a - o1))
    e=$((b + o2 > n ? n : b + o2))
    frames "$TMP/seg" "$in" "$filter" $s $e $((a - s)) $((b - s)) || return 2
    sed -n "$((a + 1)),${b}p" "$ref" > "$TMP/want"
    cmp -s "$TMP/want" "$TMP/seg" || return 1
    return 0
}

# differing A: the frames (from A on) where the segment's output differs
differing() {
    paste -d'|' "$TMP/want" "$TMP/seg" | awk -F'|' -v a="$1" '$1 != $2 { printf "%s%d", n++ ? " " : "", a + NR - 1 }'
}

# check FORMAT N O1 O2 FILTER: the rule's contexts O1, O2 for FILTER
check() {
    local fmt=$1 n=$2 o1=$3 o2=$4 filter=$5 c1 c2 in cuts a b k ret bad=0 list="" got
    local name="$filter $fmt"

    if [ -x "$SEGMENTS" ]; then
        RUN=$((RUN + 1))
        got=$("$SEGMENTS" --context-of "$filter" 2>&1)
        if [ "$got" != "$o1 $o2" ]; then
            fail "$name: $SEGMENTS --context-of says '$got', the rule $o1 $o2"
        fi
    fi
    # the contexts of the partition (less with SHRINK)
    c1=$((o1 > SHRINK ? o1 - SHRINK : 0))
    c2=$((o2 > SHRINK ? o2 - SHRINK : 0))

    RUN=$((RUN + 1))
    if ! in=$(source_clip "$fmt" "$n") || ! frames "$TMP/ref" "$in" "$filter"; then
        fail "$name: ffmpeg failed: $(tail -n 1 "$TMP/err")"
        return
    fi
    if [ "$(wc -l < "$TMP/ref")" != "$n" ]; then
        fail "$name: $(wc -l < "$TMP/ref") frames out of $n in one pass"
        return
    fi

    # three random cut points in 1 .. N - 1, and the single-frame segments
    # at both ends (RANDOM drawn in this shell: a subshell's is reseeded)
    cuts=""
    for k in 1 2 3; do
        cuts+="$((1 + RANDOM % (n - 1)))"$'\n'
    done
    cuts=$(sort -n -u <<< "$cuts" | tr '\n' ' ')
    a=0
    for b in $cuts $n "0:1" "$((n - 1)):$n"; do
        case $b in *:*) a=${b%:*}; b=${b#*:} ;; esac
        RUN=$((RUN + 1))
        segment "$TMP/ref" "$in" "$filter" "$n" $a $b $c1 $c2
        ret=$?
        if [ $ret -eq 2 ]; then
            fail "$name: segment [$a, $b): ffmpeg failed: $(tail -n 1 "$TMP/err")"
            bad=1
        elif [ $ret -eq 1 ]; then
            fail "$name: segment [$a, $b) with context $c1/$c2 differs from one pass in frame(s) $(differing $a)"
            bad=1
        fi
        list+=" [$a,$b)"
        a=$b
    done
    [ $bad -eq 0 ] && ok "$name: context $c1/$c2, segments$list equal to one pass"

    # tight: one frame less before a one-frame segment, or after it, changes
    # its output, where the video goes on past the context on both sides
    # (a frame whose windows are truncated by the video's end depends less
    # on the frames before: with one frame less they may happen to give the
    # same bytes, so these positions are fixed, not drawn)
    [ "$SHRINK" != 0 ] && return
    a=$((o1 + 2))
    b=$((n - o2 - 2))
    if [ $o1 -gt 0 ]; then
        RUN=$((RUN + 1))
        segment "$TMP/ref" "$in" "$filter" "$n" $a $((a + 1)) $((o1 - 1)) $o2
        case $? in
        0) fail "$name: frame $a with $((o1 - 1)) frames before it (one less than the rule) equals one pass: the rule is not tight" ;;
        1) ok "$name: one frame less before frame $a changes it" ;;
        *) fail "$name: ffmpeg failed: $(tail -n 1 "$TMP/err")" ;;
        esac
    fi
    if [ $o2 -gt 0 ]; then
        RUN=$((RUN + 1))
        segment "$TMP/ref" "$in" "$filter" "$n" $((b - 1)) $b $o1 $((o2 - 1))
        case $? in
        0) fail "$name: frame $((b - 1)) with $((o2 - 1)) frames after it (one less than the rule) equals one pass: the rule is not tight" ;;
        1) ok "$name: one frame less after frame $((b - 1)) changes it" ;;
        *) fail "$name: ffmpeg failed: $(tail -n 1 "$TMP/err")" ;;
        esac
    fi
}

echo "seams.sh: SEED=$SEED, SHRINK=$SHRINK"
#     format  N  o1 o2 filter
check gray    20 0  0  "nlmeans_gpu=sigma=20"
check gray    20 2  1  "nlmeans_gpu=sigma=20:past=2:future=1"
check yuv420p 20 0  2  "nlmeans_gpu=sigma=20:future=2"
check gray    20 1  0  "nlmeans_gpu=sigma=20:past=1:future=3:causal=1"
check gray    20 0  0  "bm3d_gpu=sigma=20"
check yuv420p 20 0  0  "bm3d_gpu=sigma=20"
check gray    20 4  2  "vbm3d_gpu=sigma=20:past=1:future=1"
check yuv420p 20 6  2  "vbm3d_gpu=sigma=20:past=2:future=1"
check gray    20 4  4  "vbm3d_gpu=sigma=20:past=0:future=2"
check gray    20 4  0  "vbm3d_gpu=sigma=20:past=2:causal=1"
check gray    20 3  1  "vbm3d_gpu=sigma=20:past=2:future=1:estim=basic"
check gray    20 4  0  "vbm3d_gpu=sigma=20:causal=1:estim=basic"
check gray    40 16 8  "vbm3d_gpu=sigma=20"

summary seams.sh
