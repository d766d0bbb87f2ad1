/*
 * The filtering kernels of kernels/bm3d_gpu.cl (bm3d_filter_group: hard
 * thresholding and Wiener) built with nvcc (cl_as_cuda.h), timed by CUDA
 * events, for Nsight Compute:
 *   filter_bench WIDTH HEIGHT [REPEAT]
 * bm3d_gpu `fast`'s parameters (step 4, window 21, groups of 16, DCT and
 * Haar): the tables come from the squares search with keys on one 8-bit
 * gray frame of noise 20 (its regular grid; the edge groups hold their
 * reference patch 16 times), and the Wiener step takes the same frame as
 * its basic estimate, with the first step's largest distance so that its
 * groups are as large. run.sh builds it from a copy of bm3d_gpu.cl whose
 * constant tables are made __constant__ (cl_as_cuda.h maps the address
 * space qualifier __constant to nothing), so that, as in NVIDIA's OpenCL
 * build, the matrices are read from the constant bank rather than by
 * global loads, and from the 2-D transforms that vf_bm3d_gpu.c writes
 * (BM3D_FWD1 ..., in a generated header).
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

#include <algorithm>
#include <cstring>
#include "search_kernels.cuh"

#define BM3D_HAAR          1
#define BM3D_INT64_ATOMICS 1
#define BM3D_DCT1          1
#define M_SQRT1_2_F        0.70710678118654752440f

/* The OpenCL built-ins of bm3d_gpu.cl that cl_as_cuda.h lacks. */
__device__ __forceinline__ void atom_add(long *p, long v)
{
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
}
#define as_float(u)         __uint_as_float(u)
#define convert_long_rte(f) ((long)__float2ll_rn(f))
__device__ __forceinline__ float clamp(float x, float lo, float hi)
{
    return fminf(fmaxf(x, lo), hi);
}

#include "bm3d_matrices.h"
#define static static __device__ __forceinline__
#include "bm3d_gpu_cuda.cl"
#undef static

/* The arguments of bm3d_filter_group() for one still gray frame. */
struct Filter {
    const float *noisy, *basic;
    int width, nx;
    const uint *positions;
    const float *distances;
    float tau, sigma, threshold;
    float *kaiser;          /* __constant in the kernel: no const here */
    long *num, *weights;
    uint plane_size;
};

#define FILTER_ARGS(f, wiener)                                                 \
    f.noisy, f.basic, f.width, f.nx, f.positions, f.distances, NB, f.tau,    \
    f.sigma, f.threshold, wiener, f.kaiser, f.num, f.weights, f.plane_size,  \
    1, 0, 1, 0, 1, 0u, 0

extern "C" __global__ void __launch_bounds__(KK)
filter_ht(Filter f)
{
    __shared__ float stack[NB * PATCH_PITCH];
    __shared__ float partial[KK];
    __shared__ int corner[NB];

    bm3d_filter_group(FILTER_ARGS(f, 0), stack, partial, corner);
}

extern "C" __global__ void __launch_bounds__(KK)
filter_wiener(Filter f)
{
    __shared__ float stack[(1 + BM3D_LOAD_BOTH) * NB * PATCH_PITCH];
    __shared__ float partial[KK];
    __shared__ int corner[NB];

    bm3d_filter_group(FILTER_ARGS(f, 1), stack, partial, corner);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: filter_bench WIDTH HEIGHT [REPEAT]\n");
        return 1;
    }

    int w = atoi(argv[1]), h = atoi(argv[2]), repeat = argc > 3 ? atoi(argv[3]) : 20;
    const int patch = 8, step = 4, region = (SEARCH_TILE - 1) * step + patch;
    size_t plane = (size_t)w * h;
    Search s = { 0 };
    Filter f = { 0 };
    float *frame = (float *)malloc(plane * sizeof(float)), kaiser[KK + K];
    size_t entries, local1 = SEARCH_UNROLL * (region / 4) * region * sizeof(float);
    uint *pos;
    float *dist, best, mean;

    s.width  = w;
    s.height = h;
    s.radius = 10;
    s.nx = (w - patch + step - 1) / step + 1;
    s.ny = (h - patch + step - 1) / step + 1;
    s.regular_nx = (w - patch) / step + 1;
    s.regular_ny = (h - patch) / step + 1;
    s.local0 = region * region * sizeof(float);
    entries = (size_t)s.nx * s.ny * NB;

    make_frames(frame, w, h, 1, 20, 1);
    CUDA_CHECK(cudaMalloc(&s.frames, plane * sizeof(float)));
    CUDA_CHECK(cudaMemcpy((void *)s.frames, frame, plane * sizeof(float),
                          cudaMemcpyHostToDevice));
    /* every group its reference patch, then the search's tables */
    pos  = (uint *)malloc(entries * sizeof(uint));
    dist = (float *)calloc(entries, sizeof(float));
    for (int gy = 0; gy < s.ny; gy++)
        for (int gx = 0; gx < s.nx; gx++)
            for (int k = 0; k < NB; k++)
                pos[((size_t)gy * s.nx + gx) * NB + k] =
                    std::min(gy * step, h - patch) * w +
                    std::min(gx * step, w - patch);
    CUDA_CHECK(cudaMalloc(&s.positions, entries * sizeof(uint)));
    CUDA_CHECK(cudaMalloc(&s.distances, entries * sizeof(float)));
    CUDA_CHECK(cudaMemcpy(s.positions, pos, entries * sizeof(uint), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s.distances, dist, entries * sizeof(float), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaFuncSetAttribute(squares_8x4_u11_keys,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)(s.local0 + local1)));
    squares_8x4_u11_keys<<<dim3((s.regular_nx + SEARCH_TILE - 1) / SEARCH_TILE,
                                (s.regular_ny + SEARCH_TILE - 1) / SEARCH_TILE),
                           dim3(SEARCH_TILE, SEARCH_TILE), s.local0 + local1>>>(s);
    CUDA_CHECK(cudaDeviceSynchronize());

    for (int i = 0; i < KK + K; i++)
        kaiser[i] = 1.0f;
    f.noisy = f.basic = s.frames;
    f.width = w;
    f.nx = s.nx;
    f.positions = s.positions;
    f.distances = s.distances;
    f.tau = 3000.0f;
    f.sigma = 20.0f;
    f.threshold = 2.7f * 20.0f;
    f.plane_size = (uint)plane;
    CUDA_CHECK(cudaMalloc(&f.kaiser, sizeof(kaiser)));
    CUDA_CHECK(cudaMemcpy(f.kaiser, kaiser, sizeof(kaiser), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&f.num, plane * sizeof(long)));
    CUDA_CHECK(cudaMalloc(&f.weights, plane * sizeof(long)));
    CUDA_CHECK(cudaMemset(f.num, 0, plane * sizeof(long)));
    CUDA_CHECK(cudaMemset(f.weights, 0, plane * sizeof(long)));

    dim3 grid(s.nx, s.ny);
    const char *names[2] = { "filter_ht", "filter_wiener" };
    void (*kernels[2])(Filter) = { filter_ht, filter_wiener };

    for (int k = 0; k < 2; k++) {
        cudaFuncAttributes attr;

        time_launches(repeat, [&] { kernels[k]<<<grid, KK>>>(f); }, &best, &mean);
        CUDA_CHECK(cudaFuncGetAttributes(&attr, kernels[k]));
        printf("%s %dx%d: %d registers, %zu bytes of shared memory, %ux%u "
               "groups: min %.4f ms, mean %.4f ms\n", names[k], w, h,
               attr.numRegs, attr.sharedSizeBytes, grid.x, grid.y, best, mean);
    }
    return 0;
}
