/*
 * vbm3d_search of kernels/vbm3d_search.cl built with nvcc (cl_as_cuda.h),
 * timed by CUDA events and checksummed, for Nsight Compute:
 *   vbm3d_bench WIDTH HEIGHT STEP INTEGER [REPEAT [BLOCK_X BLOCK_Y]]
 * vbm3d_gpu's defaults: 4 past and 4 future frames of a ring of 13, 2
 * patches kept a frame, windows of 7 and 5, groups of 8; STEP 6 and INTEGER
 * 1 for its first search (8-bit noisy frames), STEP 4 and INTEGER 0 for its
 * second (the basic estimate). Built with -DDENOISE_RING_T=uchar, the ring
 * holds bytes (INTEGER 1 only), and with -DDENOISE_RING_RGB=1 too, three
 * rings of bytes (R, G and B the same here) read as opponent Y, as
 * vbm3d_gpu's are for gbrp. README.md.
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

#include "cl_as_cuda.h"

#define NB_NEIGHBORS       8
#define SEARCH_TILE        16
#define SEARCH_UNROLL      4
#define SEARCH_ROWS_UNROLL 8
#define SEARCH_EDGE_LANES  32
#define IO_ROWS            4
#define K                  8
#define VBM3D_Q            2
#define VBM3D_R1MAX        3
#define VBM3D_R2MAX        2
#define static static __device__ __forceinline__
#include "patch_search.cl"
#include "vbm3d_search.cl"
#undef static

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: vbm3d_bench WIDTH HEIGHT STEP INTEGER [REPEAT [BLOCK_X BLOCK_Y]]\n");
        return 1;
    }

    int w = atoi(argv[1]), h = atoi(argv[2]), step = atoi(argv[3]);
    int integer = atoi(argv[4]), repeat = argc > 5 ? atoi(argv[5]) : 20;
    int bx = argc > 7 ? atoi(argv[6]) : 16, by = argc > 7 ? atoi(argv[7]) : 4;
    int ring = 13, nb_past = 4, nb_future = 4, ref_slot = 4;
    int nx = (w - K + step - 1) / step + 1, ny = (h - K + step - 1) / step + 1;
    size_t plane = (size_t)w * h, entries = (size_t)nx * ny * NB_NEIGHBORS;
    int channels = DENOISE_RING_RGB ? 3 : 1;
    uint stride = DENOISE_RING_RGB ? plane * ring : 0;
    size_t samples = channels * plane * ring;
    float *frames = (float *)malloc(plane * ring * sizeof(float));
    DENOISE_RING_T *rings = (DENOISE_RING_T *)malloc(samples * sizeof(*rings));
    DENOISE_RING_T *d_frames;
    float *d_dist, best, mean;
    uint *d_pos;
    double checksum = 0;

    if (sizeof(DENOISE_RING_T) == 1 && !integer) {
        fprintf(stderr, "vbm3d_bench: rings of bytes hold integers (INTEGER 1)\n");
        return 1;
    }
    /* noise 20 on the noisy frames, 4 on the basic estimate */
    make_frames(frames, w, h, ring, integer ? 20 : 4, integer);
    for (size_t i = 0; i < samples; i++)
        rings[i] = (DENOISE_RING_T)frames[i % (plane * ring)];
    CUDA_CHECK(cudaMalloc(&d_frames, samples * sizeof(*rings)));
    CUDA_CHECK(cudaMemcpy(d_frames, rings, samples * sizeof(*rings), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&d_pos, entries * sizeof(uint)));
    CUDA_CHECK(cudaMalloc(&d_dist, entries * sizeof(float)));

    dim3 grid((nx + bx - 1) / bx, (ny + by - 1) / by), block(bx, by);

    time_launches(repeat, [&] {
        vbm3d_search<<<grid, block>>>(d_frames, stride, w, h, ring, ref_slot, nb_past,
                                      nb_future, step, nx, ny, 0, 3, 2, d_pos, d_dist);
    }, &best, &mean);
    checksum = table_checksum(d_pos, d_dist, entries, NULL);
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, (const void *)vbm3d_search));
    printf("vbm3d_search %dx%d step %d, %s samples, ring of %s, blocks of %dx%d: "
           "%d registers: min %.4f ms, mean %.4f ms; checksum %.3f\n", w, h, step,
           integer ? "integer" : "fractional", DENOISE_RING_RGB ? "RGB bytes" :
           sizeof(DENOISE_RING_T) == 1 ? "bytes" : "floats", bx, by, attr.numRegs,
           best, mean, checksum);
    return 0;
}
