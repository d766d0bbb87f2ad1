#!/bin/bash
# Builds search_bench, vbm3d_bench and filter_bench with nvcc and times every
# kernel they have; with NCU=1 also profiles each at 1080p with Nsight
# Compute (the "full" set), writing its details and per-instruction SASS
# counters under OUT (default /tmp/cuda-bench). WHAT=search, vbm3d or
# filter: that bench alone. Needs the CUDA toolkit (nvcc, ncu), python3 (the
# filters' transform matrices) and an NVIDIA GPU of compute capability 9.0
# (ARCH=sm_XX for another).
#
# This file is part of FFmpeg (LGPL 2.1 or later).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
kernels=$here/../../../kernels
OUT=${OUT:-/tmp/cuda-bench}
ARCH=${ARCH:-sm_90}
WHAT=${WHAT:-all}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT/gen"
wants() { [ "$WHAT" = all ] || [ "$WHAT" = "$1" ]; }

# filter_bench's sources: bm3d_gpu.cl with its constant tables
# __constant__ (cl_as_cuda.h maps __constant to nothing; __device__ tables
# would be read by global loads, which NVIDIA's OpenCL build does not do),
# up to its filtering kernels (the bench launches bm3d_filter_group() from
# its own; the normalising kernels after them need more of OpenCL C), and
# the DCT matrices of both steps as define_transforms() of vf_bm3d_gpu.c
# writes them
# the rings' type and readers, for cl_as_cuda.h: the block of
# denoise_common.cl from their comment to the end of its readers,
# denoise_ring_at() and denoise_basic_at()
sed -n '/^\/\* The type of the samples of the rings/,/^\/\* (end of the rings/p' "$kernels/denoise_common.cl" \
    > "$OUT/gen/denoise_ring.cl"
sed -e 's/^__constant uint /__constant__ uint /' \
    -e '/^\/\* The global size is exactly/,$d' "$kernels/bm3d_gpu.cl" > "$OUT/gen/bm3d_gpu_cuda.cl"
python3 - "$OUT/gen/bm3d_matrices.h" <<'PY'
import math, struct, sys
F = [[(math.sqrt(1 / 8) if r == 0 else math.sqrt(2 / 8)) *
      math.cos(math.pi * (2 * a + 1) * r / 16) for a in range(8)] for r in range(8)]
bits = lambda v: '0x%08xu' % struct.unpack('<I', struct.pack('<f', v))[0]
fwd = ', '.join(bits(F[r][a]) for r in range(8) for a in range(8))
inv = ', '.join(bits(F[r][a]) for a in range(8) for r in range(8))
with open(sys.argv[1], 'w') as f:
    for step in (1, 2):
        f.write('#define BM3D_FWD%d %s\n#define BM3D_INV%d %s\n' % (step, fwd, step, inv))
PY
for b in search_bench vbm3d_bench filter_bench; do
    wants "${b%_bench}" || continue
    # -fmad=false: the kernels are built with FP_CONTRACT OFF
    nvcc -O3 -arch="$ARCH" -fmad=false -I"$kernels" -I"$OUT/gen" -o "$OUT/$b" "$here/$b.cu"
done
# vbm3d_bench on rings of bytes, and of RGB bytes (gbrp grouped jointly)
if wants vbm3d; then
    nvcc -O3 -arch="$ARCH" -fmad=false -I"$kernels" -I"$OUT/gen" \
        -DDENOISE_RING_T=uchar -o "$OUT/vbm3d_bench_u8" "$here/vbm3d_bench.cu"
    nvcc -O3 -arch="$ARCH" -fmad=false -I"$kernels" -I"$OUT/gen" \
        -DDENOISE_RING_T=uchar -DDENOISE_RING_RGB=1 -o "$OUT/vbm3d_bench_rgb" \
        "$here/vbm3d_bench.cu"
fi
if wants search; then
    for k in squares_8x4_u11 squares_8x4_u11_keys rows_5x1 rows_5x1_keys rows_8x3; do
        "$OUT/search_bench" $k 1920 1080 20
    done
    for k in squares_8x4_u11 squares_8x4_u11_keys; do
        "$OUT/search_bench" $k 4608 3456 10
    done
fi
if wants vbm3d; then
    "$OUT/vbm3d_bench" 1920 1080 6 1 20
    "$OUT/vbm3d_bench" 1920 1080 4 0 20
    "$OUT/vbm3d_bench_u8" 1920 1080 6 1 20
    "$OUT/vbm3d_bench_rgb" 1920 1080 6 1 20
fi
if wants filter; then
    "$OUT/filter_bench" 1920 1080 20
    "$OUT/filter_bench" 4608 3456 10
fi
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
if wants search; then
    profile squares_keys squares_8x4_u11_keys "$OUT/search_bench" squares_8x4_u11_keys 1920 1080 1
    profile rows_5x1_keys rows_5x1_keys "$OUT/search_bench" rows_5x1_keys 1920 1080 1
fi
if wants vbm3d; then
    profile vbm3d_search1 vbm3d_search "$OUT/vbm3d_bench" 1920 1080 6 1 1
    profile vbm3d_search1_u8 vbm3d_search "$OUT/vbm3d_bench_u8" 1920 1080 6 1 1
    profile vbm3d_search1_rgb vbm3d_search "$OUT/vbm3d_bench_rgb" 1920 1080 6 1 1
fi
if wants filter; then
    profile filter_ht filter_ht "$OUT/filter_bench" 1920 1080 1
    profile filter_wiener filter_wiener "$OUT/filter_bench" 1920 1080 1
fi
