#!/bin/bash
#
# Option sets the documentation says are the same filter, or leave the
# output as it is, give the same frame MD5s (and, where the case could pass
# by doing nothing, a set it says differs gives other MD5s):
#   - the chroma options (csigma, pc, rc) do nothing on gray and RGB frames
#     (doc/nlmeans_gpu.texi, "pc", "csigma"; doc/bm3d_gpu.texi, "csigma");
#   - joint and opponent colour need all three channels: with planes=3 on
#     RGB frames the filters group plane by plane (nlmeans_gpu "color",
#     bm3d_gpu "color");
#   - nlmeans_gpu's joint colour with pc or rc different from p and r on YUV
#     frames is color=planes, with a warning;
#   - profile=1 only logs: the same output (nlmeans_gpu "profile");
#   - causal=1 searches past frames only, whatever future says: the frames
#     of future=0 (nlmeans_gpu and vbm3d_gpu "causal");
#   - the device option: the device the filter creates is the one ffmpeg
#     would give it (nlmeans_gpu "device");
#   - mu2=0 keeps every coefficient: the output is the input (bm3d_gpu
#     "mu2", which vbm3d_gpu takes).
# The input: 6 noisy testsrc2 frames of 48x32.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"
SRC="testsrc2=s=48x32:r=25:d=0.24"

# md5 FORMAT FILTER: the MD5 of the frames through the filter
md5() {
    ff $DEV -f lavfi -i "$SRC,format=$1,noise=alls=25:allf=t" \
        -vf "format=$1,hwupload,$2,hwdownload,format=$1" -f md5 - 2> "$TMP/err"
}

# same NAME FORMAT A B [DIFFERENT]: A and B give the same frames (and
# DIFFERENT, if given, others)
same() {
    local name=$1 fmt=$2 a b d=""
    RUN=$((RUN + 1))
    a=$(md5 "$fmt" "$3")
    b=$(md5 "$fmt" "$4")
    [ -n "${5:-}" ] && d=$(md5 "$fmt" "$5")
    if [ -z "$a" ] || [ -z "$b" ] || { [ -n "${5:-}" ] && [ -z "$d" ]; }; then
        fail "$name: ffmpeg failed: $(tail -n 1 "$TMP/err")"
    elif [ "$a" != "$b" ]; then
        fail "$name: $3 and $4 differ"
    elif [ -n "${5:-}" ] && [ "$d" = "$a" ]; then
        fail "$name: $5 gives the same frames as $3 (the case proves nothing)"
    else
        ok "$name: $3 = $4${5:+ != $5}"
    fi
}

same "nlmeans_gpu, chroma options on gray" gray \
    "nlmeans_gpu=sigma=10" "nlmeans_gpu=sigma=10:csigma=50:pc=4:rc=5" \
    "nlmeans_gpu=sigma=50"
same "nlmeans_gpu, chroma options on RGB" gbrp \
    "nlmeans_gpu=sigma=10:color=planes" "nlmeans_gpu=sigma=10:color=planes:csigma=50:pc=4:rc=5"
same "nlmeans_gpu, chroma options on RGB, opponent colours" gbrp \
    "nlmeans_gpu=sigma=10" "nlmeans_gpu=sigma=10:csigma=50:pc=4:rc=5" \
    "nlmeans_gpu=sigma=10:color=planes"
same "bm3d_gpu, csigma on gray" gray "bm3d_gpu=sigma=10" "bm3d_gpu=sigma=10:csigma=50"
same "bm3d_gpu, csigma on RGB" gbrp "bm3d_gpu=sigma=10" "bm3d_gpu=sigma=10:csigma=50"
same "vbm3d_gpu, csigma on RGB" gbrp \
    "vbm3d_gpu=sigma=10:past=1:future=1" "vbm3d_gpu=sigma=10:past=1:future=1:csigma=50"

same "nlmeans_gpu, two RGB channels" gbrp \
    "nlmeans_gpu=sigma=20:planes=3" "nlmeans_gpu=sigma=20:planes=3:color=planes"
same "nlmeans_gpu, two RGB channels, joint" gbrp \
    "nlmeans_gpu=sigma=20:planes=3:color=joint" "nlmeans_gpu=sigma=20:planes=3:color=planes"
same "bm3d_gpu, two RGB channels" gbrp \
    "bm3d_gpu=sigma=20:planes=3" "bm3d_gpu=sigma=20:planes=3:color=planes"
same "vbm3d_gpu, two RGB channels" gbrp \
    "vbm3d_gpu=sigma=20:planes=3:past=1:future=1" \
    "vbm3d_gpu=sigma=20:planes=3:past=1:future=1:color=planes"

same "nlmeans_gpu, joint colour with pc" yuv444p \
    "nlmeans_gpu=sigma=20:color=joint:pc=4" "nlmeans_gpu=sigma=20:color=planes:pc=4" \
    "nlmeans_gpu=sigma=20:color=joint"
RUN=$((RUN + 1))
FF_LOGLEVEL=warning md5 yuv444p "nlmeans_gpu=sigma=20:color=joint:rc=11" > /dev/null
if grep -q "pc or rc differ from p and r" "$TMP/err"; then
    ok "nlmeans_gpu, joint colour with rc: warned"
else
    fail "nlmeans_gpu, joint colour with rc: no warning"
fi

same "nlmeans_gpu, profile" yuv420p "nlmeans_gpu=sigma=20" "nlmeans_gpu=sigma=20:profile=1"
same "temporal nlmeans_gpu, profile" yuv420p \
    "nlmeans_gpu=sigma=20:past=1:future=1" "nlmeans_gpu=sigma=20:past=1:future=1:profile=1"
same "bm3d_gpu, profile" yuv420p "bm3d_gpu=sigma=20" "bm3d_gpu=sigma=20:profile=1"
same "vbm3d_gpu, profile" yuv420p \
    "vbm3d_gpu=sigma=20:past=1:future=1" "vbm3d_gpu=sigma=20:past=1:future=1:profile=1"

same "nlmeans_gpu, causal" yuv420p \
    "nlmeans_gpu=sigma=20:past=2:future=3:causal=1" "nlmeans_gpu=sigma=20:past=2:future=0" \
    "nlmeans_gpu=sigma=20:past=2:future=3"
same "vbm3d_gpu, causal" yuv420p \
    "vbm3d_gpu=sigma=20:past=2:future=3:causal=1" "vbm3d_gpu=sigma=20:past=2:future=0" \
    "vbm3d_gpu=sigma=20:past=2:future=3"

# mu2=0: the input itself (null passes the OpenCL frames through); `ref`'s
# default (0.9) and vbm3d_gpu's (1) denoise
same "bm3d_gpu, mu2=0" gray "bm3d_gpu=sigma=20:mu2=0" "null" "bm3d_gpu=sigma=20"
same "bm3d_gpu ref, mu2=0, RGB" gbrp "bm3d_gpu=sigma=20:preset=ref:mu2=0" "null" \
    "bm3d_gpu=sigma=20:preset=ref"
same "vbm3d_gpu, mu2=0" yuv420p "vbm3d_gpu=sigma=20:past=1:future=1:mu2=0" "null" \
    "vbm3d_gpu=sigma=20:past=1:future=1"

# the device option: software frames into a filter that creates its device
# give the frames of the same filter given that device by ffmpeg
RUN=$((RUN + 1))
D=${OPENCL_DEVICE:-0.0}
a=$(ff $DEV -f lavfi -i "$SRC,format=yuv420p,noise=alls=25:allf=t" -vf "nlmeans_gpu=sigma=20,format=yuv420p" -f md5 - 2> "$TMP/err")
b=$(ff -f lavfi -i "$SRC,format=yuv420p,noise=alls=25:allf=t" -vf "nlmeans_gpu=sigma=20:device=$D,format=yuv420p" -f md5 - 2>> "$TMP/err")
if [ -n "$a" ] && [ "$a" = "$b" ]; then
    ok "nlmeans_gpu, device=$D: the frames of -filter_hw_device $D"
else
    fail "nlmeans_gpu, device=$D: '$b' against '$a' with -filter_hw_device: $(tail -n 1 "$TMP/err")"
fi

summary equivalences.sh
