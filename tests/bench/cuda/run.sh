#!/bin/bash
# Builds search_bench and vbm3d_bench with nvcc and times every kernel they
# have; with NCU=1 also profiles each at 1080p with Nsight Compute (the
# "full" set), writing its details and per-instruction SASS counters under
# OUT (default /tmp/cuda-bench). Needs the CUDA toolkit (nvcc, ncu) and an
# NVIDIA GPU of compute capability 9.0 (ARCH=sm_XX for another).
#
# This file is part of FFmpeg (LGPL 2.1 or later).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernels=$here/../../../kernels
OUT=${OUT:-/tmp/cuda-bench}
ARCH=${ARCH:-sm_90}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT"
for b in search_bench vbm3d_bench; do
    # -fmad=false: the kernels are built with FP_CONTRACT OFF
    nvcc -O3 -arch="$ARCH" -fmad=false -I"$kernels" -o "$OUT/$b" "$here/$b.cu"
done
for k in squares_8x4_u11 squares_8x4_u11_keys rows_5x1 rows_5x1_keys rows_8x3; do
    "$OUT/search_bench" $k 1920 1080 20
done
for k in squares_8x4_u11 squares_8x4_u11_keys; do
    "$OUT/search_bench" $k 4608 3456 10
done
"$OUT/vbm3d_bench" 1920 1080 6 1 20
"$OUT/vbm3d_bench" 1920 1080 4 0 20
[ "${NCU:-0}" = 1 ] || exit 0
profile() {
    local name=$1 kernel=$2
    shift 2
    ncu --set full -k "$kernel" -c 1 -f -o "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1
    ncu -i "$OUT/$name.ncu-rep" --page details > "$OUT/$name-details.txt"
    ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name-sass.csv"
    grep -E "Duration|Registers Per|Achieved Occupancy|Issued Ipc Active" "$OUT/$name-details.txt" |
        sed "s/^/$name: /"
}
profile squares_keys squares_8x4_u11_keys "$OUT/search_bench" squares_8x4_u11_keys 1920 1080 1
profile rows_5x1_keys rows_5x1_keys "$OUT/search_bench" rows_5x1_keys 1920 1080 1
profile vbm3d_search1 vbm3d_search "$OUT/vbm3d_bench" 1920 1080 6 1 1
