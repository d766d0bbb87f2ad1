/*
 * Enough of OpenCL C as CUDA to compile kernels/patch_search.cl and
 * kernels/vbm3d_search.cl with nvcc, so that Nsight Compute (which does not
 * profile OpenCL) can tell where their time goes. A measuring tool, not a
 * port: nvcc's code is not NVIDIA's OpenCL compiler's (README.md).
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

#ifndef CL_AS_CUDA_H
#define CL_AS_CUDA_H

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

typedef unsigned int uint;

/* The address space qualifiers go; __local pointers become pointers into
 * the dynamic shared memory of the wrappers. The files' __kernel functions
 * compile but are not launched (their __local arguments cannot be). */
#define __kernel extern "C" __global__
#define __global
#define __local
#define __constant
#define reqd_work_group_size(x, y, z)
#define barrier(flags) __syncthreads()
#define CLK_LOCAL_MEM_FENCE  0
#define CLK_GLOBAL_MEM_FENCE 0

__device__ __forceinline__ int get_local_id(int d)
{
    return d == 0 ? threadIdx.x : d == 1 ? threadIdx.y : threadIdx.z;
}

__device__ __forceinline__ int get_group_id(int d)
{
    return d == 0 ? blockIdx.x : d == 1 ? blockIdx.y : blockIdx.z;
}

__device__ __forceinline__ int get_local_size(int d)
{
    return d == 0 ? blockDim.x : d == 1 ? blockDim.y : blockDim.z;
}

__device__ __forceinline__ int get_global_id(int d)
{
    return get_group_id(d) * get_local_size(d) + get_local_id(d);
}

__device__ __forceinline__ int clamp(int x, int lo, int hi)
{
    return min(max(x, lo), hi);
}

/* What the kernels take from kernels/denoise_common.cl, whose image
 * kernels nvcc cannot build: the rings' sample type (floats, or bytes with
 * -DDENOISE_RING_T=uchar; with -DDENOISE_RING_RGB=1 rings of R, G, B bytes
 * and basic estimates as opponent bytes) and their readers
 * denoise_ring_at() and denoise_basic_at(), the block of denoise_common.cl
 * that run.sh copies into denoise_ring.cl. */
typedef unsigned char uchar;
#define convert_float(x) ((float)(x))
#define static static __device__ __forceinline__
#include "denoise_ring.cl"
#undef static

#define CUDA_CHECK(x) do {                                                \
    cudaError_t err_ = (x);                                               \
    if (err_ != cudaSuccess) {                                            \
        fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(err_));        \
        exit(1);                                                          \
    }                                                                     \
} while (0)

/* A noisy picture of integer samples (or fractions, integer = 0): smooth
 * shapes, texture, a checkerboard, Gaussian noise of 'sigma', moved by
 * (1.3, 0.6) samples a frame. */
static void make_frames(float *dst, int w, int h, int nb_frames, double sigma,
                        int integer)
{
    srand(1);
    for (int t = 0; t < nb_frames; t++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double xs = x + 1.3 * t, ys = y + 0.6 * t;
                double v = 128 + 60 * sin(xs * 0.013) * cos(ys * 0.021) +
                           30 * sin(xs * 0.11 + ys * 0.07) +
                           ((((int)xs / 64) + ((int)ys / 64)) % 2 ? 20 : -20);
                double u1 = (rand() + 1.0) / (RAND_MAX + 2.0);
                double u2 = rand() / (RAND_MAX + 1.0);

                v += sigma * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
                v  = fmin(255, fmax(0, v));
                dst[((size_t)t * h + y) * w + x] = (float)(integer ? round(v) : v);
            }
}

/* The shortest and the mean time of 'repeat' calls of launch(), a kernel
 * launch, in ms by CUDA events. */
template <typename Launch>
static void time_launches(int repeat, Launch launch, float *best, float *mean)
{
    cudaEvent_t e0, e1;
    float total = 0;

    *best = 1e30f;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    for (int i = 0; i < repeat; i++) {
        float ms;

        cudaEventRecord(e0);
        launch();
        cudaEventRecord(e1);
        CUDA_CHECK(cudaEventSynchronize(e1));
        cudaEventElapsedTime(&ms, e0, e1);
        *best  = fminf(*best, ms);
        total += ms;
    }
    CUDA_CHECK(cudaGetLastError());
    *mean = total / repeat;
}

/* A checksum of the tables of entries (positions and distances) whose
 * index 'use' accepts, to compare two versions of a kernel. */
static double table_checksum(const uint *d_positions, const float *d_distances,
                             size_t entries, int (*use)(size_t entry))
{
    uint *pos = (uint *)malloc(entries * sizeof(uint));
    float *dist = (float *)malloc(entries * sizeof(float));
    double sum = 0;

    CUDA_CHECK(cudaMemcpy(pos, d_positions, entries * sizeof(uint), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(dist, d_distances, entries * sizeof(float), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < entries; i++)
        if (!use || use(i))
            sum += dist[i] * 1e-3 + (pos[i] % 9973) * (double)(i % 7 + 1);
    free(pos);
    free(dist);
    return sum;
}

#endif /* CL_AS_CUDA_H */
