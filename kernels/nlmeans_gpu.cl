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
 * Built after patch_search.cl, whose tables it reads. Per reference patch
 * r = gy * nx + gx, nlmeans_weights turns the distances into
 *   weights[r * NB + k]    normalised weights (0 for unused entries)
 *   flat_means[r]          mean of the group when it is flat, otherwise -1
 */

#pragma OPENCL FP_CONTRACT OFF

/*
 * Weights and flat test of the group of each reference patch. 'weights'
 * holds the distances of patch_search on input, the weights on output.
 */
__kernel void nlmeans_weights(__global const float *frames,
                              int width,
                              int patch,
                              int nx,
                              int ny,
                              float bias,
                              float inv_h2,
                              float flat_threshold,
                              __global const uint *positions,
                              __global float *weights,
                              __global float *flat_means)
{
    int gx = get_global_id(0);
    int gy = get_global_id(1);
    int r  = gy * nx + gx;
    float dist[NB];
    uint pos[NB];
    float inv_area = 1.0f / (float)(patch * patch);
    float w[NB];
    float wsum = 0.0f;
    int count = 0;

    if (gx >= nx || gy >= ny)
        return;
#pragma unroll
    for (int k = 0; k < NB; k++) {
        dist[k] = weights[r * NB + k];
        pos[k]  = positions[r * NB + k];
    }

    /* exp(-(d^2 - 2 sigma^2)+ / h^2), d^2 per sample */
#pragma unroll
    for (int k = 0; k < NB; k++) {
        float excess = dist[k] * inv_area - bias;

        if (dist[k] == INFINITY)
            w[k] = 0.0f;
        else
            w[k] = excess > 0.0f ? exp(-excess * inv_h2) : 1.0f;
        wsum  += w[k];
        count += dist[k] != INFINITY;
    }
#pragma unroll
    for (int k = 0; k < NB; k++)
        weights[r * NB + k] = w[k] / wsum;

    /* flat group: the variance of all its samples is at most beta sigma^2 */
    flat_means[r] = -1.0f;
    if (flat_threshold >= 0.0f) {
        float sum = 0.0f, var = 0.0f, mean;
        float n = (float)(count * patch * patch);

        for (int k = 0; k < count; k++)
            for (int j = 0; j < patch; j++)
                for (int i = 0; i < patch; i++)
                    sum += frames[pos[k] + j * width + i];
        mean = sum / n;
        for (int k = 0; k < count; k++) {
            for (int j = 0; j < patch; j++) {
                for (int i = 0; i < patch; i++) {
                    float d = frames[pos[k] + j * width + i] - mean;
                    var += d * d;
                }
            }
        }
        if (var / n <= flat_threshold)
            flat_means[r] = mean;
    }
}

/*
 * One work-item per sample: the weighted mean of the estimates of every
 * reference patch that covers it, each weighted by a separable tent that is
 * largest at the patch centre. Every sum is taken in a fixed order, so the
 * result does not depend on scheduling (no atomics).
 */
__kernel void nlmeans_aggregate(__global const float *frames,
                                __global float *dst,
                                int width,
                                int height,
                                int patch,
                                int step,
                                int nx,
                                int ny,
                                __global const uint *positions,
                                __global const float *weights,
                                __global const float *flat_means)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    int gx, gy, gx0, gx1, gy0, gy1, k;
    float num = 0.0f, den = 0.0f;

    if (x >= width || y >= height)
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
            int r = gy * nx + gx;
            float b, est;

            if (dx < 0 || dx >= patch)
                continue;
            b   = wy * (float)min(dx + 1, patch - dx);
            est = flat_means[r];
            if (est < 0.0f) {
                int offset = dy * width + dx;

                est = 0.0f;
                for (k = 0; k < NB; k++)
                    est += weights[r * NB + k] * frames[positions[r * NB + k] + offset];
            }
            num += b * est;
            den += b;
        }
    }
    dst[y * width + x] = num / den;
}
