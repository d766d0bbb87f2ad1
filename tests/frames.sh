#!/bin/bash
#
# Frame accounting of the temporal GPU denoisers: N frames in, N frames out,
# with the same timestamps and the same properties, for N = 1 .. 20 and
# several temporal windows (past/future: 0/0, 1/1, 4/4, 2/0 causal, 0/3), for
# vbm3d_gpu and for nlmeans_gpu with its temporal options; bm3d_gpu and
# nlmeans_gpu without them run too, as a baseline.
#
# The input: tiny noisy testsrc2 frames (32x24 yuv420p, sample aspect ratio
# 16:11) with irregular timestamps (time base 1/1000, pts 1000 + 40 n +
# (7 n^2 mod 13)), colour properties set (range, matrix, primaries, transfer,
# chroma location; with setparams, where ffmpeg has it, the field order too)
# and per-frame metadata (frame=f<n> on frame n), uploaded, denoised,
# downloaded. What showinfo and metadata=print say of every output frame
# (pts, duration, time base, format, size, SAR, flags, colour properties,
# metadata; not the checksums) must equal what they say of the same graph
# without the denoiser. tests/sidedata.py does the same with frame side
# data. Then the timestamp of the end of the stream: fps=100 after the
# denoisers (N = 1, 2, 7) gives the frames it gives without them. Last, the
# noise each frame's metadata gives (sigma=auto) is the one estimated in that
# frame, after the temporal filters' delay too, and luma's alone with csigma;
# a black frame keeps the previous frame's estimate, 0 at the start.
#
# A filter or option missing from ffmpeg fails its cases (no skipping).
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D),
# MAXN (largest N, default 20), FRAMES (opencl: through hwupload and
# hwdownload, the default; software: software frames into the denoisers,
# which upload and download them themselves).

. "$(dirname "$0")/lib.sh"
MAXN=${MAXN:-20}
FRAMES=${FRAMES:-opencl}

# temporal windows: past/future[c] (c: causal)
WINDOWS="0/0 1/1 4/4 2/0c 0/3"

# colour properties: setparams where this ffmpeg has it (FFmpeg 5.1's sets
# no chroma location), else scale's out_*
if filter_help setparams > "$TMP/setparams"; then
    PROPS="setparams=field_mode=tff:range=pc:colorspace=smpte170m:color_primaries=bt709:color_trc=smpte240m"
    if grep -q "^  *chroma_location " "$TMP/setparams"; then
        PROPS+=":chroma_location=topleft"
    else
        echo "note: this setparams sets no chroma location: not compared"
    fi
else
    PROPS="scale=out_range=pc:out_color_matrix=smpte170m:out_primaries=bt709:out_transfer=smpte240m:out_chroma_loc=topleft"
fi

# options FILTER: the filter's option names, one a line; fails when the
# filter is missing
options() {
    filter_help "$1" > "$TMP/help" || return 1
    sed -n 's/^  *\([A-Za-z0-9_]\+\)  *<.*/\1/p' "$TMP/help"
}

# denoise_chain DENOISER: the denoiser (none if empty) on yuv420p frames,
# between hwupload and hwdownload or, with FRAMES=software, alone
denoise_chain() {
    if [ "$FRAMES" = software ]; then
        echo "${1:+$1,}format=yuv420p"
    else
        echo "hwupload,${1:+$1,}hwdownload,format=yuv420p"
    fi
}

# graph N DENOISER: the filter graph for N input frames
graph() {
    local n=$1 denoiser=$2 tags="" k
    for ((k = 0; k < n; k++)); do
        tags+="metadata=add:key=frame:value=f$k:enable='eq(n,$k)',"
    done
    local denoise
    denoise=$(denoise_chain "$denoiser")
    echo "settb=1/1000,setpts=1000+N*40+mod(N*N*7\,13),format=yuv420p,noise=alls=12:allf=t,$PROPS,${tags}$denoise,showinfo,metadata=print"
}

# describe N DENOISER OUT: run the graph; OUT gets what showinfo, then what
# metadata=print say of the output frames (each filter's lines in order; how
# the two filters' lines interleave depends on scheduling, not on the
# frames), checksums and statistics left out
describe() {
    local n=$1 denoiser=$2 out=$3 f
    FF_LOGLEVEL=info ff -t 300 -nostats $DEV \
        -f lavfi -i "testsrc2=s=32x24:r=25:sar=16/11,trim=end_frame=$n" \
        -vf "$(graph "$n" "$denoiser")" -f null - > /dev/null 2> "$TMP/err" || return 1
    for f in showinfo metadata; do
        grep -E "^\[Parsed_${f}_[0-9]+ @ " "$TMP/err" |
            sed -E 's/^\[[^]]*\] //; s/ (checksum|plane_checksum|mean|stdev):(\[[^]]*\]|[^ ]*)//g; s/ +/ /g'
    done > "$out"
}

# the references: the graphs without a denoiser
for ((n = 1; n <= MAXN; n++)); do
    if ! describe $n "" "$TMP/ref$n"; then
        fail "reference N=$n: ffmpeg failed:"
        show_tail 3 "$TMP/err"
        exit 1
    fi
    frames=$(grep -c '^n: *[0-9]* pts:' "$TMP/ref$n")
    tags=$(grep -c '^frame=f' "$TMP/ref$n")
    sars=$(grep -c '^n: .* sar:16/11 ' "$TMP/ref$n")
    if [ "$frames" != $n ] || [ "$tags" != $n ] || [ "$sars" != $n ] ||
       ! grep -q 'color_range:pc' "$TMP/ref$n"; then
        fail "reference N=$n: $frames frames, $tags tags, $sars with SAR 16:11, or no colour properties"
        exit 1
    fi
done
ok "references: N = 1..$MAXN, pts $(grep -o '^n: *[0-9]* pts: *[0-9]*' "$TMP/ref$MAXN" | sed 's/.*pts: *//' | tr '\n' ' ')"

# check NAME DENOISER: every N
check() {
    local name=$1 denoiser=$2 n bad=0 got
    for ((n = 1; n <= MAXN; n++)); do
        RUN=$((RUN + 1))
        if ! describe $n "$denoiser" "$TMP/out"; then
            fail "$name N=$n: ffmpeg failed: $(grep -v '^\[Parsed_showinfo' "$TMP/err" | tail -n 1)"
            bad=1
            continue
        fi
        if ! cmp -s "$TMP/out" "$TMP/ref$n"; then
            got=$(grep -c '^n: *[0-9]* pts:' "$TMP/out")
            fail "$name N=$n: $got frames out; differences from the graph without it:"
            diff "$TMP/ref$n" "$TMP/out" | head -n 6 | sed 's/^/    /'
            bad=1
        fi
    done
    [ $bad -eq 0 ] && ok "$name: N = 1..$MAXN, frames, pts and properties kept"
}

for filter in bm3d_gpu nlmeans_gpu vbm3d_gpu; do
    if ! opts=$(options $filter); then
        cases=$((MAXN * (1 + $(wc -w <<< "$WINDOWS"))))
        [ $filter = vbm3d_gpu ] && cases=$((MAXN * $(wc -w <<< "$WINDOWS")))
        [ $filter = bm3d_gpu ] && cases=$MAXN
        RUN=$((RUN + cases))
        fail "$filter: no such filter in $FFMPEG ($cases cases)"
        FAILED=$((FAILED + cases - 1))
        continue
    fi
    case $filter in
    bm3d_gpu)    check "bm3d_gpu" "bm3d_gpu=sigma=12"; continue ;;
    nlmeans_gpu) check "nlmeans_gpu spatial" "nlmeans_gpu=sigma=12" ;;
    esac
    for w in $WINDOWS; do
        past=${w%/*}
        future=${w#*/}
        future=${future%c}
        args="sigma=12:past=$past:future=$future"
        need="past future"
        if [ "${w%c}" != "$w" ]; then
            args+=":causal=1"
            need+=" causal"
        fi
        lacking=""
        for o in $need; do
            grep -qx "$o" <<< "$opts" || lacking+=" $o"
        done
        if [ -n "$lacking" ]; then
            RUN=$((RUN + MAXN))
            fail "$filter $args: option(s)$lacking missing in $FFMPEG ($MAXN cases)"
            FAILED=$((FAILED + MAXN - 1))
            continue
        fi
        check "$filter $args" "$filter=$args"
    done
done

# The end of the stream keeps its timestamp: a filter after the denoiser that
# reads it (fps, which repeats the last frame up to it) gives the same frames
# as without the denoiser.
# fps_pts N DENOISER: the timestamps out of fps=100 after the denoiser
fps_pts() {
    local n=$1 denoise
    denoise=$(denoise_chain "$2")
    ff -t 300 $DEV -f lavfi -i "testsrc2=s=32x24:r=25,trim=end_frame=$n" \
        -vf "settb=1/1000,setpts=1000+N*40+mod(N*N*7\,13),format=yuv420p,$denoise,fps=100" \
        -f framecrc - 2> "$TMP/err" | grep -v '^#' | awk -F, '{ printf " %d", $2 }'
}
for n in 1 2 7; do
    ref=$(fps_pts $n "")
    for denoiser in bm3d_gpu=sigma=12 nlmeans_gpu=sigma=12:past=1:future=2 \
                    vbm3d_gpu=sigma=12:past=1:future=1; do
        RUN=$((RUN + 1))
        got=$(fps_pts $n $denoiser)
        if [ -n "$ref" ] && [ "$got" = "$ref" ]; then
            ok "$denoiser, N=$n, then fps=100: $(wc -w <<< "$got") frames, as without it"
        else
            fail "$denoiser, N=$n, then fps=100: pts$got, without it$ref"
            show_tail 2 "$TMP/err"
        fi
    done
done

# The noise estimated in a frame (sigma=auto) goes out with that frame: the
# temporal filters, which send a frame after reading later ones, export in
# each frame's metadata (lavfi.<filter>.sigma.<component>) what bm3d_gpu,
# which sends each frame at once, exports; the noise grows from frame 6 on.
# estimates DENOISER: the exported estimates, frame by frame
estimates() {
    local denoise
    denoise=$(denoise_chain "$1")
    ff -t 300 $DEV -f lavfi -i "testsrc2=s=64x48:r=25,trim=end_frame=12" \
        -vf "format=yuv420p,noise=alls=6:allf=t,noise=alls=25:allf=t:enable='gte(n,6)',$denoise,metadata=print:file=-" \
        -f null - 2> "$TMP/err" | sed -n 's/^lavfi\.[a-z0-9_]*\.sigma\./sigma./p'
}
ref=$(estimates bm3d_gpu=sigma=auto)
for denoiser in nlmeans_gpu=sigma=auto:past=1:future=2 vbm3d_gpu=sigma=auto:past=1:future=2 \
                vbm3d_gpu=sigma=auto:past=1:future=2:estim=basic \
                vbm3d_gpu=sigma=auto:past=2:causal=1; do
    RUN=$((RUN + 1))
    got=$(estimates $denoiser)
    if [ "$(grep -c . <<< "$ref")" != 36 ] || [ "$(sort -u <<< "$ref" | wc -l)" -lt 12 ]; then
        fail "$denoiser: bm3d_gpu's estimates are not 3 a frame, or too few differ:" $ref
    elif [ "$got" = "$ref" ]; then
        ok "$denoiser: the estimates of each frame go out with it"
    else
        fail "$denoiser: estimates of the frames out, then bm3d_gpu's:"
        diff <(echo "$got") <(echo "$ref") | head -n 6 | sed 's/^/    /'
    fi
done
# with csigma given, the chroma planes are not measured: luma's estimates
# alone, the same
RUN=$((RUN + 1))
got=$(estimates nlmeans_gpu=sigma=auto:csigma=4)
if [ "$got" = "$(grep '^sigma\.0=' <<< "$ref")" ]; then
    ok "nlmeans_gpu=sigma=auto:csigma=4: luma's estimates alone"
else
    fail "nlmeans_gpu=sigma=auto:csigma=4: exported $(echo $got | head -c 200)"
fi

# Each frame is denoised with its own estimate: nlmeans_gpu's temporal
# window (sigma=auto:past=2:future=1 reads frame t + 1 before it outputs
# frame t) against the same filter with sigma fixed to the estimate exported
# with frame t, on gray frames whose noise grows tenfold at frame 6 (the
# estimates about 1.5, then 7, 9, .. 15 as the smoothing follows). Frame t
# of the two runs must be near the same (the exported estimate has 3
# decimals): at least 45 dB apart (80 dB to identical here), where frames 6
# and 7 denoised with another frame's estimate were 30 and 35 dB apart
# (2026-11-28: a mutant that left the estimate of frame 4 in use).
# gray_run OUT DENOISER: the 12 output frames, raw; the estimates to stdout
gray_run() {
    local chain="$2,format=gray"
    [ "$FRAMES" = software ] || chain="hwupload,$2,hwdownload,format=gray"
    ff -t 300 -y $DEV -f lavfi -i "testsrc2=s=64x48:r=25,trim=end_frame=12" \
        -vf "format=yuv444p,noise=alls=3:allf=t:enable='lt(n,6)',noise=alls=30:allf=t:enable='gte(n,6)',format=gray,$chain,metadata=print:file=-" \
        -f rawvideo "$1" 2> "$TMP/err" | sed -n 's/^lavfi\.nlmeans_gpu\.sigma\.0=//p'
}
# frame_psnr A B K: the PSNR (dB) of frame K of two raw 64x48 gray files
frame_psnr() {
    python3 -c 'import math, sys
n = 64 * 48
a, b = (open(f, "rb").read()[int(sys.argv[3]) * n:][:n] for f in sys.argv[1:3])
e = sum((x - y) ** 2 for x, y in zip(a, b)) / n if len(a) == len(b) == n else -1
print("none" if e < 0 else "inf" if e == 0 else "%.1f" % (10 * math.log10(255 ** 2 / e)))' "$@"
}
auto=($(gray_run "$TMP/auto.raw" nlmeans_gpu=sigma=auto:past=2:future=1))
for k in 4 6 7; do
    RUN=$((RUN + 1))
    if [ ${#auto[@]} != 12 ]; then
        fail "nlmeans_gpu=sigma=auto:past=2:future=1: ${#auto[@]} estimates out of 12"
        break
    fi
    gray_run "$TMP/fixed.raw" "nlmeans_gpu=sigma=${auto[k]}:past=2:future=1" > /dev/null
    got=$(frame_psnr "$TMP/auto.raw" "$TMP/fixed.raw" $k)
    if [ "$got" = inf ] || { [ "$got" != none ] && awk "BEGIN { exit !($got >= 45) }"; }; then
        ok "nlmeans_gpu=sigma=auto:past=2:future=1: frame $k denoised with its estimate ${auto[k]} ($got dB from sigma=${auto[k]})"
    else
        fail "nlmeans_gpu=sigma=auto:past=2:future=1: frame $k, $got dB from sigma=${auto[k]}, its estimate (estimates: ${auto[*]})"
    fi
done

# a frame with no block left (black: every sample clipped) keeps the
# previous frame's estimate, 0 at the start
# black_estimates FIRST LAST N: luma's estimates of N frames with frames
# FIRST to LAST black
black_estimates() {
    local denoise
    denoise=$(denoise_chain bm3d_gpu=sigma=auto)
    ff -t 300 $DEV -f lavfi -i "testsrc2=s=64x48:r=25,trim=end_frame=$3" \
        -vf "format=yuv420p,noise=alls=20:allf=t,geq=lum=0:cb=128:cr=128:enable='between(n,$1,$2)',$denoise,metadata=print:file=-" \
        -f null - 2> "$TMP/err" | sed -n 's/^lavfi\.bm3d_gpu\.sigma\.0=//p' | tr '\n' ' '
}
RUN=$((RUN + 1))
got=($(black_estimates 4 5 8))
if [ ${#got[@]} = 8 ] && [ "${got[4]}" = "${got[3]}" ] && [ "${got[5]}" = "${got[3]}" ] &&
   [ "${got[3]}" != 0.000 ]; then
    ok "bm3d_gpu=sigma=auto, frames 4 and 5 black: frame 3's estimate kept (${got[*]})"
else
    fail "bm3d_gpu=sigma=auto, frames 4 and 5 black: estimates ${got[*]:-none}"
fi
RUN=$((RUN + 1))
got=($(black_estimates 0 1 4))
if [ "${got[*]:0:2}" = "0.000 0.000" ] && [ "${got[2]:-0.000}" != 0.000 ]; then
    ok "bm3d_gpu=sigma=auto, frames 0 and 1 black: 0 until a frame has blocks (${got[*]})"
else
    fail "bm3d_gpu=sigma=auto, frames 0 and 1 black: estimates ${got[*]:-none}"
fi

summary frames.sh
