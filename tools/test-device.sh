#!/bin/sh
# test-device.sh [--own] FFMPEG
#
# The OpenCL device for the tests where OPENCL_DEVICE is not given: nothing
# where ffmpeg's -init_hw_device opencl takes a device by itself (there is
# one), else, where it refuses to choose among several ("More than one
# matching device found"), the device P.D the filters take for software
# frames when given none (the first GPU, else the first device), read from
# their log. Nothing either where ffmpeg does not run. --own: that device
# of the filters', whatever ffmpeg does.

own=no
if [ "$1" = --own ]; then
    own=yes
    shift
fi
ffmpeg=$1
[ -x "$ffmpeg" ] || exit 0
# testsrc2: in every build of ours, the minimal ones too
input="-nostdin -f lavfi -i testsrc2=s=16x16 -frames:v 1"
if [ $own = no ] &&
   "$ffmpeg" -v error -init_hw_device opencl=probe $input -f null - > /dev/null 2>&1; then
    exit 0
fi
"$ffmpeg" -v verbose $input -vf nlmeans_gpu -f null - 2>&1 |
    sed -n 's/.*Software frames on OpenCL device \([0-9]*\.[0-9]*\),.*/\1/p' | head -n 1
