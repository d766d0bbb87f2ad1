/*
 * The work-group searches of kernels/patch_search.cl as CUDA kernels
 * (cl_as_cuda.h), with the constants ff_denoise_opencl_init() gives them:
 * shared by search_bench.cu and filter_bench.cu.
 *
 * This file is part of FFmpeg.
 *
 * FFmpeg is free software; you can redistribute it and/or
 * modify it under the terms of the GNU Lesser General Public
 * License as published by the Free Software Foundation; either
 * version 2.1 of the License, or (at your option) any later version.
 *
 * FFmpeg is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
 * Lesser General Public License for more details.
 *
 * You should have received a copy of the GNU Lesser General Public
 * License along with FFmpeg; if not, write to the Free Software
 * Foundation, Inc., 51 Franklin Street, Fifth Floor, Boston, MA 02110-1301 USA
 */

#ifndef SEARCH_KERNELS_CUH
#define SEARCH_KERNELS_CUH

#include "cl_as_cuda.h"

#define NB_NEIGHBORS       16
#define SEARCH_TILE        16
#define SEARCH_UNROLL      4
#define SEARCH_ROWS_UNROLL 8
#define SEARCH_EDGE_LANES  32
#define IO_ROWS            4
#define static static __device__ __forceinline__
#include "patch_search.cl"
#undef static

/* The arguments of a work-group search of one frame of one channel. */
struct Search {
    const float *frames;
    int width, height, radius, nx, ny, regular_nx, regular_ny;
    uint *positions;
    float *distances;
    int local0;     /* bytes of the reference tile */
};

#define SEARCH_ARGS(s, patch, step, block)                                  \
    s.frames, 1, s.width * s.height, make_float4(1, 0, 0, 0), s.width,     \
    s.height, 0, 1, 1, 0, patch, step, block, s.radius, s.nx, s.ny,        \
    s.regular_nx, s.regular_ny, 0, 1, s.positions, s.distances, smem,      \
    smem + s.local0 / 4

extern "C" __global__ void __launch_bounds__(256)
squares_8x4_u11(Search s)
{
    extern __shared__ float smem[];
    search_squares(SEARCH_ARGS(s, 8, 4, 4), 11, 0);
}

extern "C" __global__ void __launch_bounds__(256)
squares_8x4_u11_keys(Search s)
{
    extern __shared__ float smem[];
    search_squares(SEARCH_ARGS(s, 8, 4, 4), 11, 1);
}

/* 7 offsets a pass: what rows_5x1_entry() of denoise_opencl.c takes for
 * nlmeans_gpu p=5:step=1's window of 21 (the _u7 entry points) */
extern "C" __global__ void __launch_bounds__(256)
rows_5x1(Search s)
{
    extern __shared__ float smem[];
    search_rows(SEARCH_ARGS(s, 5, 1, 1), 7, 0);
}

extern "C" __global__ void __launch_bounds__(256)
rows_5x1_keys(Search s)
{
    extern __shared__ float smem[];
    search_rows(SEARCH_ARGS(s, 5, 1, 1), 7, 1);
}

extern "C" __global__ void __launch_bounds__(256)
rows_8x3(Search s)
{
    extern __shared__ float smem[];
    search_rows(SEARCH_ARGS(s, 8, 3, 1), ROWS_UNROLL, 0);
}

#endif /* SEARCH_KERNELS_CUH */
