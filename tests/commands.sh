#!/bin/bash
#
# Runtime commands take effect, on the frame the documentation gives. A
# clip of N = 16 frames is filtered three times, frame MD5s compared: with
# sigma=10, with sigma=40, and with sigma=10 changed to 40 by sendcmd at
# frame C = 10. A command reaches the filter before frame C does; the
# filter has then output every frame but its last D (its delay), so the
# change applies from output frame C - D:
#   - frames before C - D are those of the sigma=10 run;
#   - frame C - D is not;
#   - frames from C - D + R on are those of the sigma=40 run, where R is
#     the filter's memory of the old value: 0 for nlmeans_gpu and bm3d_gpu
#     (each output is computed from the noisy frames alone); for vbm3d_gpu
#     (past P, future F, D = 2F) the frames before C + P + F mix both
#     values (their basic estimates and search were made before the
#     command), so R = D + P + F (doc/vbm3d_gpu.texi, "Commands"); with
#     estim=basic (D = F) R = F.
# The same for csigma on the chroma planes, hdthr and mu2, h, flat and
# kernel (nlmeans_gpu); mu2 only acts in the second step, whose groups of frame t
# are aggregated in frames t to t + F too, so for vbm3d_gpu its R is F.
# Then commands the filters refuse (sigma from or to auto or curve; with
# those, csigma from or to -1): the refusal is logged and every frame is
# that of the run without the command.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"
SRC="testsrc2=s=48x32:r=25:d=0.64,format=yuv420p,noise=alls=30:allf=t"
N=16 C=10

# md5s FILTERGRAPH: the frame MD5s of the clip through the graph, one a line
md5s() {
    ff $DEV -f lavfi -i "$SRC" \
        -vf "$1" -f framemd5 - | grep -v '^#' | awk -F, '{ print $6 }'
}

# check NAME FILTER OPTIONS OPTION OLD NEW DELAY MEMORY
check() {
    local name=$1 filter=$2 opts=$3 option=$4 old=$5 new=$6 d=$7 r=$8
    local a b c pattern expect t first=$((C - d))
    RUN=$((RUN + 1))
    a=$(md5s "hwupload,$filter=$opts:$option=$old,hwdownload,format=yuv420p")
    b=$(md5s "hwupload,$filter=$opts:$option=$new,hwdownload,format=yuv420p")
    c=$(md5s "sendcmd=c='$(awk "BEGIN { print ($C - 0.01) / 25 }") $filter $option $new',hwupload,$filter=$opts:$option=$old,hwdownload,format=yuv420p")
    # o: the old run's frame, N: the new run's, x: neither (o where both)
    pattern=$(paste <(echo "$a") <(echo "$b") <(echo "$c") |
              awk '{ printf "%s", $3 == $1 ? "o" : $3 == $2 ? "N" : "x" }')
    expect=""
    for ((t = 0; t < N; t++)); do
        if [ $t -lt $first ]; then
            expect+="o"
        elif [ $t -eq $first ]; then
            expect+="[Nx]"
        elif [ $t -ge $((first + r)) ]; then
            expect+="N"
        else
            expect+="[Nx]"
        fi
    done
    if [ ${#pattern} -eq $N ] && [[ $pattern =~ ^$expect$ ]]; then
        ok "$name: $pattern (from frame $first)"
    else
        fail "$name: $pattern, expected $expect (o: old value, N: new, x: neither)"
    fi
}

# refused NAME FILTER OPTIONS OPTION OLD NEW: a command the filter refuses
# (sigma from or to auto or curve; with those, csigma from or to -1) is
# logged as refused and changes nothing: every frame is the one of the run
# without the command
refused() {
    local name=$1 filter=$2 opts=$3 option=$4 old=$5 new=$6 a c pattern
    RUN=$((RUN + 1))
    a=$(md5s "hwupload,$filter=$opts:$option=$old,hwdownload,format=yuv420p")
    c=$(md5s "sendcmd=c='$(awk "BEGIN { print ($C - 0.01) / 25 }") $filter $option $new',hwupload,$filter=$opts:$option=$old,hwdownload,format=yuv420p" 2>"$TMP/refused.err")
    pattern=$(paste <(echo "$a") <(echo "$c") | awk '{ printf "%s", $2 == $1 ? "o" : "x" }')
    if ! grep -q "cannot change from or to auto or curve" "$TMP/refused.err"; then
        fail "$name $old to $new: the command was not refused"
        show_tail 3 "$TMP/refused.err"
    elif [ ${#pattern} -eq $N ] && [[ $pattern =~ ^o+$ ]]; then
        ok "$name $old to $new: refused, $pattern"
    else
        fail "$name $old to $new: refused, yet $pattern (o: the run without the command)"
    fi
}

check "nlmeans_gpu sigma"             nlmeans_gpu "p=5"                         sigma  10 40 0 0
check "nlmeans_gpu h"                 nlmeans_gpu "sigma=20"                    h      0.5 1.5 0 0
check "nlmeans_gpu csigma"            nlmeans_gpu "sigma=20"                    csigma 5 40 0 0
check "nlmeans_gpu flat"              nlmeans_gpu "sigma=20"                    flat   0 3 0 0
check "nlmeans_gpu kernel"            nlmeans_gpu "sigma=20"                    kernel exp bisquare 0 0
check "temporal nlmeans_gpu sigma"    nlmeans_gpu "past=1:future=2"             sigma  10 40 2 0
check "causal nlmeans_gpu sigma"      nlmeans_gpu "past=2:causal=1"             sigma  10 40 0 0
check "bm3d_gpu sigma"                bm3d_gpu    "preset=fast"                 sigma  10 40 0 0
check "bm3d_gpu hdthr"                bm3d_gpu    "sigma=20"                    hdthr  1.5 4 0 0
check "bm3d_gpu mu2"                  bm3d_gpu    "sigma=20:preset=ref"         mu2    0.3 2 0 0
check "bm3d_gpu mu2 to -1 (preset's)" bm3d_gpu    "sigma=20:preset=ref"         mu2    1.5 -1 0 0
check "vbm3d_gpu sigma"               vbm3d_gpu   "past=1:future=2"             sigma  10 40 4 7
check "vbm3d_gpu csigma"              vbm3d_gpu   "sigma=20:past=1:future=1"    csigma 5 40 2 4
check "vbm3d_gpu hdthr"               vbm3d_gpu   "sigma=20:past=2:future=1"    hdthr  1.5 4 2 5
check "vbm3d_gpu mu2"                 vbm3d_gpu   "sigma=20:past=1:future=2"    mu2    0.3 2 4 2
check "causal vbm3d_gpu sigma"        vbm3d_gpu   "past=2:causal=1"             sigma  10 40 0 2
check "vbm3d_gpu estim=basic sigma"   vbm3d_gpu   "past=1:future=2:estim=basic" sigma  10 40 2 2

refused "nlmeans_gpu sigma"            nlmeans_gpu "p=5"                         sigma  10 auto
refused "bm3d_gpu sigma"               bm3d_gpu    "preset=fast"                 sigma  auto 10
refused "bm3d_gpu csigma"              bm3d_gpu    "sigma=curve"                 csigma -1 10
refused "vbm3d_gpu sigma"              vbm3d_gpu   "past=1:future=2"             sigma  10 curve
refused "vbm3d_gpu csigma"             vbm3d_gpu   "sigma=auto:past=1:future=1"  csigma 10 -1

summary commands.sh
