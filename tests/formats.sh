#!/bin/bash
#
# Formats with alpha, packed four-channel formats and the full-range
# variants, for each filter: each must give the colour samples of the
# planar format without alpha that holds the same samples, and leave the
# alpha samples as they came in:
# - rgba, bgra, argb, abgr and gbrap as gbrp; rgba64, bgra64 and gbrap16
#   as gbrp16 (the filters see the channels of a packed image in the
#   format's component order, whatever their order in memory);
# - yuva420p, yuva422p, yuva444p (8 and 16 bits) as yuv420p, yuv422p,
#   yuv444p (8 and 16 bits); vuya and ayuv as yuv444p; ya8 and ya16 as
#   gray and gray16;
# - yuvj440p and yuvj411p as yuv440p and yuv411p;
# - the alpha samples of the output: the input's, bit for bit (the source's
#   alpha is noisy, so that a filtered or a constant alpha shows);
# - the colour samples of the output differ from the input's (a filter that
#   did nothing would pass the other checks);
# - grayf32, gbrpf32 and gbrapf32 give the result of gray16, gbrp16 and
#   gbrap16 on the same samples (v / 255 and v * 257 of 8-bit ones), the
#   float output clamped and within 0.52 16-bit steps of it (half a step of
#   rounding, and float rounding), alpha unchanged; and with 1 added to the
#   input, values above 1 kept (the output less 1 as close, within an 8-bit
#   step for the BM3D filters, whose Wiener weights see the offset);
# - yaf32 (which swscale neither writes nor reads: made here from ya8
#   samples) gives grayf32's colour samples, byte for byte, alpha unchanged;
# - grayf32 frames with NaN and infinite samples come out, all of them,
#   without a crash or a hang.
# A format the device cannot carry (ya8, ya16, yaf32, abgr and bgra64 have
# no image format on PoCL, abgr and bgra64 none on an H200) is skipped, and
# said so.
#
#   FFMPEG=... [OPENCL_DEVICE=P.D] tests/formats.sh    (make check-formats)

. "$(dirname "$0")/lib.sh"
SIZE=48x32
FRAMES="r=5:d=0.6"

# noisy FORMAT: testsrc2 with noise on every plane (alpha too), in FORMAT
noisy() {
    echo "testsrc2=s=$SIZE:$FRAMES,format=$1,noise=alls=25:allf=t"
}

# denoise FILTER FORMAT IN OUT: the filter on the raw FORMAT frames of IN,
# the raw output in FORMAT in OUT
denoise() {
    ff $DEV -f rawvideo -pix_fmt "$2" -s $SIZE -framerate 5 -i "$TMP/$3" \
       -vf "hwupload,$1,hwdownload,format=$2" -f rawvideo -y "$TMP/$4"
}

# reference FILTER FORMAT IN OUT: denoise, run once for each filter, format
# and input bytes (the planar references of several formats, made from the
# same samples, are the same run)
reference() {
    local key
    key=$(echo "$1 $2 $(md5sum < "$TMP/$3")" | md5sum | cut -c1-32)
    if [ ! -s "$TMP/ref-$key.raw" ]; then
        denoise "$1" "$2" "$3" "ref-$key.raw" || return
    fi
    cp "$TMP/ref-$key.raw" "$TMP/$4"
}

# planes FORMAT FILE [NAMES]: "NAME MD5" of each component of the raw
# frames of FILE, read byte for byte (tests/rawplanes.py), of those whose
# names are in NAMES (default: the colour components)
planes() {
    python3 "$TESTS/rawplanes.py" md5 "$1" $SIZE "$TMP/$2" | grep "^[${3:-RGBYUV}] "
}

# carried FORMAT: whether the device takes frames of FORMAT (asked once
# a format), from raw frames of zeros, so that a format swscale does not
# write (yaf32) is asked too
declare -A CARRIED
carried() {
    if [ -z "${CARRIED[$1]:-}" ]; then
        CARRIED[$1]=no
        [ -s "$TMP/zero.raw" ] || head -c $((16 * 16 * 16)) /dev/zero > "$TMP/zero.raw"
        ff $DEV -f rawvideo -pix_fmt "$1" -s 16x16 -i "$TMP/zero.raw" \
           -vf "hwupload,hwdownload,format=$1" -f null - 2> /dev/null && CARRIED[$1]=yes
    fi
    [ "${CARRIED[$1]}" = yes ]
}

# alpha_kept LABEL FORMAT IN OUT: where FORMAT has alpha, OUT's must be IN's
# (else a failure, and status 1); ALPHA: ", alpha unchanged" where checked
alpha_kept() {
    local in
    ALPHA=""
    in=$(planes "$2" "$3" A)
    [ -z "$in" ] && return 0
    if [ "$(planes "$2" "$4" A)" != "$in" ]; then
        fail "$1: alpha differs from the input's"
        return 1
    fi
    ALPHA=", alpha unchanged"
}

# check FILTER NOISY FORMAT PLANAR: FILTER on FORMAT frames converted from
# NOISY against PLANAR frames of the same colour samples, copied byte for
# byte (swscale's gbrap16 to gbrp16 is not exact)
check() {
    local filter=$1 name=${1%%=*} src fmt=$3 planar=$4
    src=$(noisy "$2")
    RUN=$((RUN + 1))
    if ! carried "$fmt"; then
        skip "$name $fmt: the device cannot carry $fmt"
        return
    fi
    ff -f lavfi -i "$src,format=$fmt" -f rawvideo -y "$TMP/in.raw"
    python3 "$TESTS/rawplanes.py" planar "$fmt" $SIZE "$TMP/in.raw" \
        "$planar" "$TMP/in-planar.raw"
    colour_as "$filter" "$fmt" "$planar"
}

# colour_as FILTER FORMAT PLANAR: FILTER on the FORMAT frames of in.raw and
# on the PLANAR frames of in-planar.raw (the same colour samples): the same
# colour samples out, byte for byte, not the input's, and the alpha kept
colour_as() {
    local filter=$1 name=${1%%=*} fmt=$2 planar=$3 colour
    rm -f "$TMP/out.raw" "$TMP/out-planar.raw"
    if ! denoise "$filter" "$fmt" in.raw out.raw || [ ! -s "$TMP/out.raw" ] ||
       ! reference "$filter" "$planar" in-planar.raw out-planar.raw; then
        fail "$name $fmt: did not run"
        return
    fi
    colour=$(planes "$fmt" out.raw)
    if [ "$colour" != "$(planes "$planar" out-planar.raw)" ]; then
        fail "$name $fmt: colour samples differ from $planar's"
        return
    fi
    if [ "$colour" = "$(planes "$fmt" in.raw)" ]; then
        fail "$name $fmt: the colour samples are the input's"
        return
    fi
    alpha_kept "$name $fmt" "$fmt" in.raw out.raw || return
    ok "$name $fmt: colour as $planar$ALPHA"
}

# check_float FILTER EIGHT FLOAT WIDE STEPS [OFFSET]: FILTER on float
# frames (FLOAT) against the 16-bit frames (WIDE) of the same noisy 8-bit
# samples (EIGHT): v / 255 (plus OFFSET on the colour components) and
# v * 257; the float output, less OFFSET and clamped as the 16-bit one is,
# within STEPS 16-bit steps of it, and alpha unchanged
check_float() {
    local filter=$1 name=${1%%=*} eight=$2 fmt=$3 wide=$4 steps=$5 offset=${6:-0}
    local worst label="$name $fmt${6:+ + $6}"
    RUN=$((RUN + 1))
    if ! carried "$fmt"; then
        skip "$label: the device cannot carry $fmt"
        return
    fi
    ff -f lavfi -i "$(noisy "${eight/gray/yuv444p}"),format=$eight" -f rawvideo -y "$TMP/in8.raw"
    python3 "$TESTS/rawplanes.py" widen "$eight" $SIZE "$TMP/in8.raw" "$wide" "$TMP/in16.raw"
    python3 "$TESTS/rawplanes.py" widen "$eight" $SIZE "$TMP/in8.raw" "$fmt" "$TMP/inf.raw" "$offset"
    rm -f "$TMP/outf.raw" "$TMP/out16.raw"
    if ! denoise "$filter" "$fmt" inf.raw outf.raw || [ ! -s "$TMP/outf.raw" ] ||
       ! reference "$filter" "$wide" in16.raw out16.raw; then
        fail "$label: did not run"
        return
    fi
    if [ "$(planes "$wide" out16.raw)" = "$(planes "$wide" in16.raw)" ]; then
        fail "$label: the colour samples are the input's"
        return
    fi
    worst=$(python3 "$TESTS/rawplanes.py" floatdiff "$fmt" $SIZE "$TMP/outf.raw" \
            "$wide" "$TMP/out16.raw" "$offset")
    alpha_kept "$label" "$fmt" inf.raw outf.raw || return
    if python3 -c "import sys; sys.exit(not $worst <= $steps)"; then
        ok "$label: as $wide within $worst 16-bit steps$ALPHA"
    else
        fail "$label: $worst 16-bit steps from $wide (more than $steps)"
    fi
}

# check_yaf32 FILTER: yaf32le frames (which swscale neither writes nor
# reads) of noisy ya8 samples (v / 255) against grayf32le frames of the
# same colour samples, byte for byte, alpha unchanged
check_yaf32() {
    local filter=$1 name=${1%%=*}
    RUN=$((RUN + 1))
    if ! carried yaf32le; then
        skip "$name yaf32le: not in this FFmpeg, or the device cannot carry it"
        return
    fi
    ff -f lavfi -i "$(noisy ya8),format=ya8" -f rawvideo -y "$TMP/in8.raw"
    python3 "$TESTS/rawplanes.py" widen ya8 $SIZE "$TMP/in8.raw" yaf32le "$TMP/in.raw"
    python3 "$TESTS/rawplanes.py" widen ya8 $SIZE "$TMP/in8.raw" grayf32le "$TMP/in-planar.raw"
    colour_as "$filter" yaf32le grayf32le
}

# nonfinite FILTER: grayf32 frames with NaN and infinite samples (not
# video, but a float format can hold them): every frame out, no crash, no
# hang (what comes out is not defined)
nonfinite() {
    local w=${SIZE%x*} h=${SIZE#*x} n
    RUN=$((RUN + 1))
    python3 -c "
import random, struct
random.seed(1)
v = [random.choice((float('nan'), float('inf'), -float('inf'))) if random.random() < 0.1
     else random.random() for _ in range(3 * $w * $h)]
open('$TMP/nan.raw', 'wb').write(struct.pack('<%df' % len(v), *v))"
    rm -f "$TMP/nan-out.raw"
    ff -t 120 $DEV -f rawvideo -pix_fmt grayf32le -s $SIZE -i "$TMP/nan.raw" \
       -vf "hwupload,$1,hwdownload,format=grayf32le" -f rawvideo -y "$TMP/nan-out.raw"
    n=$(( $(stat -c %s "$TMP/nan-out.raw" 2> /dev/null || echo 0) / (w * h * 4) ))
    if [ "$n" -eq 3 ]; then
        ok "$1 on grayf32le with NaN and infinities: 3 frames out"
    else
        fail "$1 on grayf32le with NaN and infinities: $n frames out of 3"
    fi
}

for filter in nlmeans_gpu=sigma=20 bm3d_gpu=sigma=20 vbm3d_gpu=sigma=20; do
    nonfinite "$filter"
    nonfinite "${filter%%=*}=sigma=auto"
    for fmt in rgba bgra argb abgr gbrap; do
        check "$filter" gbrap "$fmt" gbrp
    done
    for fmt in rgba64le bgra64le gbrap16le; do
        check "$filter" gbrap16le "$fmt" gbrp16le
    done
    for s in 420 422 444; do
        check "$filter" "yuva${s}p" "yuva${s}p" "yuv${s}p"
        check "$filter" "yuva${s}p16le" "yuva${s}p16le" "yuv${s}p16le"
    done
    check "$filter" yuva444p vuya yuv444p
    check "$filter" yuva444p ayuv yuv444p
    check "$filter" ya8 ya8 gray
    check "$filter" ya16le ya16le gray16le
    check "$filter" yuv440p yuvj440p yuv440p
    check "$filter" yuv411p yuvj411p yuv411p
    # the same values but for the 16-bit rounding (half a step) and float
    # rounding (measured: up to 0.505 steps)
    check_float "$filter" gray grayf32le gray16le 0.52
    check_float "$filter" gbrp gbrpf32le gbrp16le 0.52
    check_float "$filter" gbrap gbrapf32le gbrap16le 0.52
    check_yaf32 "$filter"
    # values above 1 kept: nlmeans_gpu's weights see differences only (0.527
    # steps measured), BM3D's Wiener weights the DC coefficient too (45
    # steps): within an 8-bit step, where a clamp at 1 would be 255 of them
    if [ "${filter%%=*}" = nlmeans_gpu ]; then
        check_float "$filter" gray grayf32le gray16le 0.55 1
    else
        check_float "$filter" gray grayf32le gray16le 257 1
    fi
done
summary -s formats.sh checks
