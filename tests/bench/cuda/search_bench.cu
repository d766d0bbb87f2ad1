/*
 * The work-group searches of kernels/patch_search.cl built with nvcc
 * (cl_as_cuda.h), timed by CUDA events and checksummed, for Nsight Compute:
 *   search_bench KERNEL WIDTH HEIGHT [REPEAT]
 * KERNEL: squares_8x4_u11, squares_8x4_u11_keys (nlmeans_gpu's defaults and
 * bm3d_gpu `fast`'s first search, window 21), rows_5x1, rows_5x1_keys
 * (nlmeans_gpu p=5:step=1), rows_8x3 (bm3d_gpu `ref`, window 39); one
 * 8-bit gray frame of noise 20, 16 entries a table (README.md).
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

#include <cstring>
#include "search_kernels.cuh"

static int grid_nx, grid_regular_nx, grid_regular_ny;

/* Whether a table entry is one of a reference patch of the regular grid. */
static int regular_entry(size_t entry)
{
    size_t r = entry / NB;

    return (int)(r % grid_nx) < grid_regular_nx && (int)(r / grid_nx) < grid_regular_ny;
}

static const struct {
    const char *name;
    void (*kernel)(Search);
    int patch, step, radius, rows;
} kernels[] = {
    { "squares_8x4_u11",      squares_8x4_u11,      8, 4, 10, 0 },
    { "squares_8x4_u11_keys", squares_8x4_u11_keys, 8, 4, 10, 0 },
    { "rows_5x1",             rows_5x1,             5, 1, 10, 1 },
    { "rows_5x1_keys",        rows_5x1_keys,        5, 1, 10, 1 },
    { "rows_8x3",             rows_8x3,             8, 3, 19, 1 },
};

int main(int argc, char **argv)
{
    int k = -1;

    for (int i = 0; argc > 1 && i < (int)(sizeof(kernels) / sizeof(kernels[0])); i++)
        if (!strcmp(argv[1], kernels[i].name))
            k = i;
    if (argc < 4 || k < 0) {
        fprintf(stderr, "usage: search_bench KERNEL WIDTH HEIGHT [REPEAT]\n");
        return 1;
    }

    int w = atoi(argv[2]), h = atoi(argv[3]), repeat = argc > 4 ? atoi(argv[4]) : 20;
    int patch = kernels[k].patch, step = kernels[k].step, block = patch % step ? 1 : step;
    int region = (SEARCH_TILE - 1) * step + patch;
    size_t plane = (size_t)w * h;
    Search s = { 0 };
    float *frame = (float *)malloc(plane * sizeof(float));
    size_t entries, local1;
    float best, mean;
    double checksum = 0;

    s.width  = w;
    s.height = h;
    s.radius = kernels[k].radius;
    s.nx = (w - patch + step - 1) / step + 1;
    s.ny = (h - patch + step - 1) / step + 1;
    s.regular_nx = (w - patch) / step + 1;
    s.regular_ny = (h - patch) / step + 1;
    s.local0 = region * region * sizeof(float);
    /* ff_denoise_opencl_search_init() */
    local1 = kernels[k].rows ?
             SEARCH_ROWS_UNROLL * region * SEARCH_TILE * sizeof(float) :
             SEARCH_UNROLL * (region / block) * region * sizeof(float);
    entries = (size_t)s.nx * s.ny * NB;

    make_frames(frame, w, h, 1, 20, 1);
    CUDA_CHECK(cudaMalloc(&s.frames, plane * sizeof(float)));
    CUDA_CHECK(cudaMemcpy((void *)s.frames, frame, plane * sizeof(float),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMalloc(&s.positions, entries * sizeof(uint)));
    CUDA_CHECK(cudaMalloc(&s.distances, entries * sizeof(float)));
    CUDA_CHECK(cudaFuncSetAttribute(kernels[k].kernel,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)(s.local0 + local1)));

    dim3 grid((s.regular_nx + SEARCH_TILE - 1) / SEARCH_TILE,
              (s.regular_ny + SEARCH_TILE - 1) / SEARCH_TILE);
    dim3 tile(SEARCH_TILE, SEARCH_TILE);

    time_launches(repeat, [&] { kernels[k].kernel<<<grid, tile, s.local0 + local1>>>(s); },
                  &best, &mean);

    /* the tables of the regular grid, which the work-group kernels fill */
    grid_nx = s.nx;
    grid_regular_nx = s.regular_nx;
    grid_regular_ny = s.regular_ny;
    checksum = table_checksum(s.positions, s.distances, entries, regular_entry);
    cudaFuncAttributes attr;
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernels[k].kernel));
    printf("%s %dx%d: %d registers, %zu bytes of shared memory, %ux%u blocks: "
           "min %.4f ms, mean %.4f ms; checksum %.1f\n", kernels[k].name, w, h,
           attr.numRegs, s.local0 + local1, grid.x, grid.y, best, mean,
           checksum);
    return 0;
}
