/*
 * Improved patch-wise NL-means (Davy & Ehret 2020, Algorithms 1 and 4).
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

/*
 * Compile-time constant (prepended by the host):
 *   NB_NEIGHBORS  number of most similar patches kept per reference patch
 *
 * Built after patch_search.cl, whose tables it reads. A frame has
 * 'channels' channels (1, or 3 for joint colour), channel c starting
 * c * channel_stride samples after channel 0; one search, and so one set of
 * neighbours and weights, serves every channel. With DENOISE_RING_RGB the
 * one channel is opponent channel 'ring_channel' of R, G and B rings
 * channel_stride samples apart, read as the searches read it
 * (DENOISE_RING_SAMPLE()), and the sums of nlmeans_patch_sums are that
 * channel's. Per reference patch
 * r = gy * nx + gx, nlmeans_weights turns the distances (and, for the
 * flat test, the patch sums of nlmeans_patch_sums, or the patches' own
 * samples where the filter keeps no sums) into
 *   weights[r * NB + k]          normalised weights (0 for unused entries)
 *   flat_means[c * nx * ny + r]  mean of channel c of the group when it is
 *                                flat (in all channels), otherwise NaN
 *                                (samples may be negative: opponent
 *                                colours)
 */

#pragma OPENCL FP_CONTRACT OFF

#define MAX_CHANNELS 3

enum NLMeansKernel {
    NLMEANS_KERNEL_EXP,
    NLMEANS_KERNEL_BISQUARE,
};

static float nlmeans_channel_value(float4 v, int c)
{
    return c == 0 ? v.x : c == 1 ? v.y : v.z;
}

/*
 * Weight of a neighbour whose squared distance per sample exceeds the noise
 * bias by 'excess': 1 up to the bias, then exp(-excess / h^2), or the
 * bisquare (1 - excess / h'^2)^2 down to 0 at h'^2; 'inv_scale' is 1 / h^2
 * or 1 / h'^2.
 */
static float nlmeans_weight(float excess, float inv_scale, int kernel_type)
{
    float u;

    if (!(excess > 0.0f))
        return 1.0f;
    u = excess * inv_scale;
    if (kernel_type == NLMEANS_KERNEL_BISQUARE)
        return u < 1.0f ? (1.0f - u) * (1.0f - u) : 0.0f;
    return exp(-u);
}

/*
 * The NB entries of table r (distances or weights, and positions): 16-byte
 * loads where NB is a multiple of 4, which keeps every table aligned.
 */
static void nlmeans_load_table(__global const float *values,
                               __global const uint *positions, int r,
                               float *v, uint *p)
{
#if NB % 4 == 0
    __global const float4 *v4 = (__global const float4 *)(values + r * NB);
    __global const uint4 *p4 = (__global const uint4 *)(positions + r * NB);

#pragma unroll
    for (int k = 0; k < NB / 4; k++) {
        vstore4(v4[k], k, v);
        vstore4(p4[k], k, p);
    }
#else
#pragma unroll
    for (int k = 0; k < NB; k++) {
        v[k] = values[r * NB + k];
        p[k] = positions[r * NB + k];
    }
#endif
}

#if DENOISE_RING_BYTES && defined(__ENDIAN_LITTLE__)
/*
 * The 8 bytes from q (the first four in .x), read as the three aligned
 * words that hold them: 3 loads instead of 8. The rings of bytes are
 * allocated with room for the word after their last byte.
 */
static uint2 nlmeans_row8(__global const uchar *q)
{
    __global const uint *w = (__global const uint *)((uintptr_t)q & ~(uintptr_t)3);
    uint shift = (uint)((uintptr_t)q & 3) * 8;
    uint w0 = w[0], w1 = w[1], w2 = w[2];

    return (uint2)((uint)(as_ulong((uint2)(w0, w1)) >> shift),
                   (uint)(as_ulong((uint2)(w1, w2)) >> shift));
}

/* byte i (0 to 7) of a row of nlmeans_row8() */
static int nlmeans_row8_byte(uint2 row, int i)
{
    return ((i < 4 ? row.x : row.y) >> (8 * (i & 3))) & 0xff;
}

/*
 * nlmeans_patch_sum() of an 8x8 patch, its rows (of R, G and B with
 * DENOISE_RING_RGB) read by nlmeans_row8(): the flat test of a temporal
 * window, which sums each group's patches itself, took a quarter of the
 * time on 1080p gbrp and half on yuv420p on an H200 (doc/benchmarks.md).
 */
static float2 nlmeans_patch_sum8(__global const uchar *plane,
                                 uint channel_stride, int ring_channel, int p,
                                 int width)
{
    float2 sums = 0.0f;

    for (int j = 0; j < 8; j++) {
        __global const uchar *q = plane + (p + j * width);
        uint2 r = nlmeans_row8(q);
#if DENOISE_RING_RGB
        uint2 g = nlmeans_row8(q + channel_stride);
        uint2 b = nlmeans_row8(q + 2 * channel_stride);
#endif
        float row = 0.0f, row_sq = 0.0f;

#pragma unroll
        for (int i = 0; i < 8; i++) {
#if DENOISE_RING_RGB
            float v = denoise_opponent_of_bytes(nlmeans_row8_byte(r, i),
                                                nlmeans_row8_byte(g, i),
                                                nlmeans_row8_byte(b, i),
                                                ring_channel);
#else
            float v = convert_float(nlmeans_row8_byte(r, i));
#endif

            row   += v;
            row_sq = fma(v, v, row_sq);
        }
        sums.x += row;
        sums.y += row_sq;
    }
    return sums;
}
#endif

/*
 * The sum of the samples and the sum of their squares of the patch whose
 * top-left sample is p: each row's samples in order, then the rows in order
 * (doc/nlmeans_gpu-algorithm.md, "Flat groups").
 */
static float2 nlmeans_patch_sum(__global const DENOISE_RING_T *plane,
                                uint channel_stride, int ring_channel, int p,
                                int width, int patch)
{
    float2 sums = 0.0f;

#if DENOISE_RING_BYTES && defined(__ENDIAN_LITTLE__)
    if (patch == 8)
        return nlmeans_patch_sum8(plane, channel_stride, ring_channel, p, width);
#endif

    for (int j = 0; j < patch; j++) {
        float row = 0.0f, row_sq = 0.0f;

        for (int i = 0; i < patch; i++) {
            float v = DENOISE_RING_SAMPLE(plane, p + j * width + i);

            row   += v;
            row_sq = fma(v, v, row_sq);
        }
        sums.x += row;
        sums.y += row_sq;
    }
    return sums;
}

/*
 * One work-item per IO_ROWS positions of a column of plane 'plane' of
 * 'frames' (planes of width x height samples), from (x, IO_ROWS y), where a
 * patch fits: sums[plane * width * height + y * width + x] =
 * nlmeans_patch_sum() of that patch. The flat test reads these instead of
 * the group's samples.
 */
__kernel void nlmeans_patch_sums(__global const DENOISE_RING_T *frames,
                                 int plane, int width, int height, int patch,
                                 uint channel_stride, int ring_channel,
                                 __global float2 *sums)
{
    int x = get_global_id(0);
    int y0 = get_global_id(1) * IO_ROWS;
    uint offset = (uint)plane * width * height;

    if (x > width - patch)
        return;
    for (int y = y0; y < min(y0 + IO_ROWS, height - patch + 1); y++)
        sums[offset + y * width + x] = nlmeans_patch_sum(frames + offset,
                                                         channel_stride,
                                                         ring_channel,
                                                         y * width + x, width,
                                                         patch);
}

#define SUMS_TILE_W 16
#define SUMS_TILE_H 8
#define SUMS_POS_H  (SUMS_TILE_H * IO_ROWS)
#define SUMS_SPAN_W (SUMS_TILE_W + 7)
#define SUMS_SPAN_H (SUMS_POS_H + 7)

/*
 * nlmeans_patch_sums for 8x8 patches, a work-group's tile of 16 x (8
 * IO_ROWS) positions at a time (work-item (lx, ly): positions (lx, ly + 8 r)
 * of the tile): the samples its patches cover, then the sums of their rows
 * of 8, staged in local memory, so that each sample is read from global
 * memory once and each row summed once. The same sums, in the same order,
 * as nlmeans_patch_sum().
 */
__kernel __attribute__((reqd_work_group_size(SUMS_TILE_W, SUMS_TILE_H, 1)))
void nlmeans_patch_sums_p8(__global const DENOISE_RING_T *frames, int plane,
                           int width, int height, int patch,
                           uint channel_stride, int ring_channel,
                           __global float2 *sums)
{
    __local float tile[SUMS_SPAN_H][SUMS_SPAN_W];
    __local float2 rows[SUMS_SPAN_H][SUMS_TILE_W];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x0 = get_group_id(0) * SUMS_TILE_W, y0 = get_group_id(1) * SUMS_POS_H;
    int x = x0 + lx;
    uint offset = (uint)plane * width * height;
    __global const DENOISE_RING_T *src = frames + offset;

    for (int i = ly * SUMS_TILE_W + lx; i < SUMS_SPAN_H * SUMS_SPAN_W;
         i += SUMS_TILE_W * SUMS_TILE_H) {
        int ty = i / SUMS_SPAN_W, tx = i % SUMS_SPAN_W;

        tile[ty][tx] = DENOISE_RING_SAMPLE(src, min(y0 + ty, height - 1) * width +
                                                min(x0 + tx, width - 1));
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int r = ly; r < SUMS_SPAN_H; r += SUMS_TILE_H) {
        float row = 0.0f, row_sq = 0.0f;

#pragma unroll
        for (int i = 0; i < 8; i++) {
            float v = tile[r][lx + i];

            row   += v;
            row_sq = fma(v, v, row_sq);
        }
        rows[r][lx] = (float2)(row, row_sq);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x > width - 8)
        return;
    for (int ty = ly; ty < SUMS_POS_H && y0 + ty <= height - 8; ty += SUMS_TILE_H) {
        float2 patch_sums = 0.0f;

#pragma unroll
        for (int j = 0; j < 8; j++)
            patch_sums += rows[ty + j][lx];
        sums[offset + (y0 + ty) * width + x] = patch_sums;
    }
}

/*
 * Flat test of one channel of a group: the mean of its samples when their
 * variance, the mean of the squares less the squared mean, is at most
 * 'threshold', otherwise NaN. Each patch's sums are read from 'sums'
 * (nlmeans_patch_sums) or, where that is NULL, summed from its samples in
 * 'plane' (planes of 'width' samples across): the same sums either way.
 * The loop's bound is NB, a constant, so that pos stays in registers
 * (with rings of RGB bytes and a bound of count, NVIDIA's compiler put it
 * on the stack).
 */
static float nlmeans_flat_mean(__global const DENOISE_RING_T *plane,
                               uint channel_stride, int ring_channel, int width,
                               __global const float2 *sums, const uint *pos,
                               int count, int patch, float threshold)
{
    float sum = 0.0f, sum_sq = 0.0f, mean;
    float n = (float)(count * patch * patch);

#pragma unroll
    for (int k = 0; k < NB; k++) {
        if (k < count) {
            float2 s = sums ? sums[pos[k]] :
                              nlmeans_patch_sum(plane, channel_stride, ring_channel,
                                                pos[k], width, patch);

            sum    += s.x;
            sum_sq += s.y;
        }
    }
    mean = sum / n;
    return (sum_sq - mean * sum) / n <= threshold ? mean : NAN;
}

/*
 * Weights and flat test of the group of each reference patch. 'weights'
 * holds the distances of patch_search on input (summed over the channels),
 * the weights on output; 'frames' the searched planes, 'width' samples
 * across, and 'sums' their patch sums (nlmeans_patch_sums), laid out as
 * they are, or NULL. A negative threshold of channel 0 disables the flat
 * test.
 */
__kernel void nlmeans_weights(__global const DENOISE_RING_T *frames,
                              int width,
                              __global const float2 *sums,
                              int channels,
                              uint channel_stride,
                              int ring_channel,
                              int patch,
                              int nx,
                              int ny,
                              float bias,
                              float inv_scale,
                              int kernel_type,
                              float4 flat_thresholds,
                              __global const uint *positions,
                              __global float *weights,
                              __global float *flat_means)
{
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    int r  = gy * nx + gx;
    float dist[NB];
    uint pos[NB];
    float inv_area = 1.0f / (float)(channels * patch * patch);
    float w[NB];
    float wsum = 0.0f;
    float means[MAX_CHANNELS];
    int count = 0, flat;

    if (gx >= nx || gy >= ny)
        return;
    nlmeans_load_table(weights, positions, r, dist, pos);

    /* d^2 per sample, bias corrected */
#pragma unroll
    for (int k = 0; k < NB; k++) {
        if (dist[k] == INFINITY)
            w[k] = 0.0f;
        else
            w[k] = nlmeans_weight(dist[k] * inv_area - bias, inv_scale, kernel_type);
        wsum  += w[k];
        count += dist[k] != INFINITY;
    }
#pragma unroll
    for (int k = 0; k < NB; k++)
        weights[r * NB + k] = w[k] / wsum;

    /* flat group: in every channel, the variance of all its samples is at
     * most beta sigma^2 (that channel's); each channel is then replaced by
     * its mean */
    flat = flat_thresholds.x >= 0.0f;
#pragma unroll
    for (int c = 0; c < SEARCH_CHANNELS; c++) {
        if (c < channels && flat) {
            means[c] = nlmeans_flat_mean(frames + c * channel_stride,
                                         channel_stride, ring_channel, width,
                                         sums ? sums + c * channel_stride : NULL,
                                         pos, count, patch,
                                         nlmeans_channel_value(flat_thresholds, c));
            flat = !isnan(means[c]);
        }
    }
#pragma unroll
    for (int c = 0; c < SEARCH_CHANNELS; c++)
        if (c < channels)
            flat_means[c * nx * ny + r] = flat ? means[c] : NAN;
}

/*
 * One work-item per sample of the rows y_first to y_end - 1: the weighted
 * mean of the estimates of every reference patch that covers it, each
 * weighted by a separable tent that is largest at the patch centre. Every
 * sum is taken in a fixed order, so the result does not depend on
 * scheduling (no atomics). Channel c goes to dst0, dst1 or dst2. The tables
 * hold table_rows grid rows from gy_first, which must include every row of
 * patches covering these samples.
 */
static void aggregate_sample(__global const DENOISE_RING_T *frames,
                             int channels,
                             uint channel_stride,
                             int ring_channel,
                             __global float *dst0,
                             __global float *dst1,
                             __global float *dst2,
                             int width,
                             int height,
                             int patch,
                             int step,
                             int nx,
                             int ny,
                             int gy_first,
                             int table_rows,
                             int y_first,
                             int y_end,
                             __global const uint *positions,
                             __global const float *weights,
                             __global const float *flat_means)
{
    int x = get_global_id(0);
    int y = y_first + get_global_id(1);
    int gx, gy, gx0, gx1, gy0, gy1, k;
    int nr = nx * table_rows;
    float num[MAX_CHANNELS] = { 0.0f, 0.0f, 0.0f }, den = 0.0f;

    if (x >= width || y >= y_end)
        return;

    gx0 = x >= patch ? (x - patch) / step + 1 : 0;
    gy0 = y >= patch ? (y - patch) / step + 1 : 0;
    gx1 = min(nx - 1, x / step + 1);
    gy1 = min(ny - 1, y / step + 1);

    for (gy = gy0; gy <= gy1; gy++) {
        int dy = y - search_grid_pos(gy, step, height, patch);
        float wy;

        if (dy < 0 || dy >= patch)
            continue;
        wy = (float)min(dy + 1, patch - dy);
        for (gx = gx0; gx <= gx1; gx++) {
            int dx = x - search_grid_pos(gx, step, width, patch);
            int r = (gy - gy_first) * nx + gx;
            float b, est[MAX_CHANNELS] = { 0.0f, 0.0f, 0.0f };
            int flat;

            if (dx < 0 || dx >= patch)
                continue;
            b = wy * (float)min(dx + 1, patch - dx);
            /* a group is flat in all its channels or in none */
            flat = !isnan(flat_means[r]);
            if (!flat) {
                int offset = dy * width + dx;

                float w[NB];
                uint p[NB];

                nlmeans_load_table(weights, positions, r, w, p);
                for (k = 0; k < NB; k++) {
#pragma unroll
                    for (int c = 0; c < SEARCH_CHANNELS; c++)
                        if (c < channels)
                            est[c] += w[k] * DENOISE_RING_SAMPLE(frames, c * channel_stride +
                                                                         p[k] + offset);
                }
            }
#pragma unroll
            for (int c = 0; c < SEARCH_CHANNELS; c++) {
                if (c < channels) {
                    float fm = flat_means[c * nr + r];
                    num[c] += b * (flat ? fm : est[c]);
                }
            }
            den += b;
        }
    }
    dst0[y * width + x] = num[0] / den;
    if (channels > 1) {
        dst1[y * width + x] = num[1] / den;
        dst2[y * width + x] = num[2] / den;
    }
}

/* An entry point of aggregate_sample(): the patch size and the step as the
 * arguments, or as constants (8x8 patches on a step of 4, the default:
 * the divisions by the step become shifts and the loops over the covering
 * patches have constant bounds; the same sums). */
#define NLMEANS_AGGREGATE_KERNEL(name, patch_, step_)                         \
__kernel void name(__global const DENOISE_RING_T *frames, int channels,     \
                   uint channel_stride, int ring_channel,                   \
                   __global float *dst0, __global float *dst1,              \
                   __global float *dst2, int width, int height, int patch,  \
                   int step, int nx, int ny, int gy_first, int table_rows,  \
                   int y_first, int y_end,                                  \
                   __global const uint *positions,                          \
                   __global const float *weights,                           \
                   __global const float *flat_means)                        \
{                                                                            \
    aggregate_sample(frames, channels, channel_stride, ring_channel, dst0,   \
                     dst1, dst2, width, height, patch_, step_, nx, ny,       \
                     gy_first, table_rows, y_first, y_end, positions,        \
                     weights, flat_means);                                   \
}

NLMEANS_AGGREGATE_KERNEL(nlmeans_aggregate, patch, step)
NLMEANS_AGGREGATE_KERNEL(nlmeans_aggregate_8x4, 8, 4)
