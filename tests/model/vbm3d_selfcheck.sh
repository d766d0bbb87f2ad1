#!/bin/bash
#
# Self-check of the golden model of vbm3d_gpu (vbm3d_ref), no FFmpeg needed.
#
#   tests/model/vbm3d_selfcheck.sh TOOLDIR [WORKDIR]
#
# TOOLDIR holds vbm3d_ref, bm3d_ref, awgn and cmpimg (make TESTBIN=TOOLDIR
# TOOLDIR/vbm3d_ref ...); WORKDIR (default: a new temporary directory) gets
# the images. Prints one line per check and exits with 1 when one fails.
#
# 1. With past = future = 0, perframe = group = group2 and the search
#    window w1 = bm3d's window, doc/vbm3d_gpu-algorithm.md makes VBM3D the
#    BM3D of doc/bm3d_gpu-algorithm.md: vbm3d_ref's outputs (final and
#    basic) must equal bm3d_ref's byte for byte. The steps are those whose
#    bm3d distance, summed in blocks of gcd(8, step) samples, is the plain
#    row sum of the video search (block 1 or 8: odd steps, or 8), and
#    bm3d_ref keeps the basic estimate in float (-round 0), as vbm3d_gpu
#    does (bm3d_gpu rounds it on 8-bit frames with an even step 2).
# 2. A control: with another w1 the outputs must differ (the comparison of
#    1 can fail).
# 3. A sequence of 5 frames of 40x32, an image shifted by one pixel per
#    frame plus noise, with past = future = 2 (gray, RGB, and causal): as
#    many output frames as input frames, each closer to the clean frame
#    than the noisy one, and different from the output without the other
#    frames.
#
# This file is part of FFmpeg.
#
# FFmpeg is free software; you can redistribute it and/or
# modify it under the terms of the GNU Lesser General Public
# License as published by the Free Software Foundation; either
# version 2.1 of the License, or (at your option) any later version.
#
# FFmpeg is distributed in the hope that it will be useful,
# but WITHOUT ANY WARRANTY; without even the implied warranty of
# MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
# Lesser General Public License for more details.
#
# You should have received a copy of the GNU Lesser General Public
# License along with FFmpeg; if not, write to the Free Software
# Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA

. "$(dirname "$0")/../lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 TOOLDIR [WORKDIR]" >&2
    exit 2
fi
TOOLS=$1
WORK=${2:-$(mktemp -d)}
PYTHON=${PYTHON:-python3}
for t in vbm3d_ref bm3d_ref awgn cmpimg; do
    if [ ! -x "$TOOLS/$t" ]; then
        echo "$TOOLS/$t: missing (build it first)" >&2
        exit 2
    fi
done
mkdir -p "$WORK" || exit 2

pass() { echo "PASS $*"; }

# Clean images: a smooth pattern plus edges, W x H, 1 or 3 channels, maxval
# 255 or 65535; with SHIFT, frames 0 .. N - 1 of width W cut at x = i from
# an image N - 1 columns wider (the scene moves one pixel left per frame).
make_image() { # name width height channels maxval [frames]
    PYTHONPATH=$TESTS "$PYTHON" - "$@" <<'EOF'
import math, sys
from testlib.images import write_pnm, write_pnm16
name, w, h, ch, maxval = sys.argv[1], *map(int, sys.argv[2:6])
frames = int(sys.argv[6]) if len(sys.argv) > 6 else 0
full = w + max(frames - 1, 0)

def sample(x, y, c):
    v = 0.5 + 0.35 * math.sin(0.31 * x + c) * math.cos(0.23 * y - 0.5 * c)
    v += 0.15 * ((x // 6 + y // 5) % 2)
    return max(0, min(maxval, int(v * maxval)))

def write(path, x0):
    v = [sample(x, y, c) for y in range(h) for x in range(x0, x0 + w) for c in range(ch)]
    if maxval > 255:
        write_pnm16(path, w, h, v, ch)
    else:
        write_pnm(path, w, h, bytes(v), ch)

if frames:
    for i in range(frames):
        write(name % i, i)
else:
    write(name, 0)
EOF
}

psnr() { # a b
    "$TOOLS/cmpimg" "$1" "$2" | sed -n 's/.*psnr=\([^ ]*\).*/\1/p'
}

# --- 1 and 2: one frame, VBM3D reduced to BM3D -------------------------

make_image "$WORK/g.pgm" 41 37 1 255 || exit 2
make_image "$WORK/c.ppm" 33 26 3 255 || exit 2
make_image "$WORK/g16.pgm" 29 21 1 65535 || exit 2
for f in g.pgm c.ppm g16.pgm; do
    "$TOOLS/awgn" -sigma 20 -seed 7 "$WORK/$f" "$WORK/n_$f" || exit 2
done

# vbm3d_ref's names of the options that bm3d_ref spells otherwise
bm3d_options() {
    echo "$1" | sed 's/-hdthr /-lambda /; s/-kaiser /-beta /;
                     s/-thmse2 /-tau2 /; s/-thmse /-tau1 /'
}

# same_as_bm3d NAME INPUT "COMMON OPTIONS" STEP1 STEP2 W1 W2 GROUP
same_as_bm3d() {
    local name=$1 in=$2 common=$3 s1=$4 s2=$5 w1=$6 w2=$7 g=$8 ext=${2##*.}
    local v="$WORK/v_$name" b="$WORK/b_$name"

    # shellcheck disable=SC2086
    "$TOOLS/vbm3d_ref" $common -past 0 -future 0 -perframe "$g" \
        -group "$g" -group2 "$g" -bstep "$s1" -bstep2 "$s2" \
        -range "$w1" -range2 "$w2" -prange 3 -prange2 9 \
        -o "$v%d.$ext" -basic "${v}_basic%d.$ext" "$WORK/$in" &&
    # vbm3d_gpu's matching thresholds (2500, 400) and Walsh-Hadamard
    # transform unless given: bm3d_ref's profiles have their own
    # shellcheck disable=SC2086
    "$TOOLS/bm3d_ref" -tau1 2500 -tau2 400 -transform1d hadamard -round 0 $(bm3d_options "$common") \
        -group1 "$g" -group2 "$g" -step1 "$s1" -step2 "$s2" \
        -window1 "$w1" -window2 "$w2" \
        -basic "${b}_basic.$ext" "$WORK/$in" "$b.$ext" || {
        fail "$name: a tool failed"
        return
    }
    if cmp -s "${v}0.$ext" "$b.$ext" &&
       cmp -s "${v}_basic0.$ext" "${b}_basic.$ext"; then
        pass "$name: vbm3d_ref = bm3d_ref"
    else
        fail "$name: vbm3d_ref differs from bm3d_ref"
    fi
}

same_as_bm3d gray        n_g.pgm   "-sigma 20"                       3 5 21 21 8
same_as_bm3d gray-bior   n_g.pgm   "-sigma 20 -transform bior -transform1d haar" \
                                                                     8 1 11 15 4
same_as_bm3d gray-basic  n_g.pgm   "-sigma 25 -estim basic"          5 5 9 9 16
same_as_bm3d gray-lambda n_g.pgm   "-sigma 15 -hdthr 2 -kaiser 4"    7 3 13 7 2
same_as_bm3d gray-sigma0 n_g.pgm   "-sigma 0"                        3 3 7 7 8
same_as_bm3d gray-q1     n_g.pgm   "-sigma 20"                       1 8 5 5 1
same_as_bm3d gray16      n_g16.pgm "-sigma 30 -thmse 100 -thmse2 1e9" 7 3 21 11 32
same_as_bm3d rgb-joint   n_c.ppm   "-sigma 20"                       3 5 21 21 8
same_as_bm3d yuv-joint   n_c.ppm   "-sigma 20 -yuv"                  5 3 15 15 8
same_as_bm3d rgb-planes  n_c.ppm   "-sigma 20 -color planes"         3 5 21 21 8

# 2: the control, w1 = 7 against bm3d's window 21
"$TOOLS/vbm3d_ref" -sigma 20 -past 0 -future 0 -perframe 8 -bstep 3 \
    -bstep2 5 -range 7 -range2 21 -o "$WORK/ctl%d.pgm" "$WORK/n_g.pgm" &&
if cmp -s "$WORK/ctl0.pgm" "$WORK/b_gray.pgm"; then
    fail "control: another w1 gives the same output"
else
    pass "control: another w1 gives another output"
fi

# --- 3: a sequence ------------------------------------------------------

make_image "$WORK/seq%d.pgm" 40 32 1 255 5 || exit 2
make_image "$WORK/seq%d.ppm" 40 32 3 255 5 || exit 2
for i in 0 1 2 3 4; do
    for ext in pgm ppm; do
        "$TOOLS/awgn" -sigma 20 -seed $((i + 1)) "$WORK/seq$i.$ext" \
            "$WORK/nseq$i.$ext" || exit 2
    done
done

# run_sequence NAME EXT OPTIONS: 5 outputs, better than the noisy frames
run_sequence() {
    local name=$1 ext=$2 opts=$3 i n ok=1 pn pd mid

    rm -f "$WORK/$name"_*."$ext"
    # shellcheck disable=SC2086
    "$TOOLS/vbm3d_ref" -sigma 20 $opts -o "$WORK/${name}_%d.$ext" \
        "$WORK"/nseq0."$ext" "$WORK"/nseq1."$ext" "$WORK"/nseq2."$ext" \
        "$WORK"/nseq3."$ext" "$WORK"/nseq4."$ext" || {
        fail "$name: vbm3d_ref failed"
        return
    }
    n=$(ls "$WORK/$name"_*."$ext" | wc -l)
    if [ "$n" -ne 5 ]; then
        fail "$name: $n output frames for 5 input frames"
        return
    fi
    for i in 0 1 2 3 4; do
        pn=$(psnr "$WORK/seq$i.$ext" "$WORK/nseq$i.$ext")
        pd=$(psnr "$WORK/seq$i.$ext" "$WORK/${name}_$i.$ext")
        if ! awk -v a="$pd" -v b="$pn" 'BEGIN { exit !(a > b + 3) }'; then
            fail "$name: frame $i: PSNR $pd dB, noisy $pn dB"
            ok=0
        fi
        [ $i = 2 ] && mid="$pn -> $pd dB"
    done
    [ $ok = 1 ] && pass "$name: 5 frames out for 5 in, all denoised (frame 2: $mid)"
}

run_sequence seq-gray   pgm "-past 2 -future 2"
run_sequence seq-alone  pgm "-past 0 -future 0"
run_sequence seq-causal pgm "-past 2 -future 0"
run_sequence seq-rgb    ppm "-past 2 -future 2"
run_sequence seq-basic  pgm "-past 2 -future 2 -estim basic -perframe 3"

same=0
for i in 0 1 2 3 4; do
    cmp -s "$WORK/seq-gray_$i.pgm" "$WORK/seq-alone_$i.pgm" && same=$((same + 1))
done
if [ $same -eq 0 ]; then
    pass "seq: the other frames change every output frame"
else
    fail "seq: $same frames as without the other frames"
fi

if [ $FAILED -ne 0 ]; then
    echo "vbm3d_selfcheck: $FAILED check(s) failed (images in $WORK)"
    exit 1
fi
echo "vbm3d_selfcheck: all checks passed"
