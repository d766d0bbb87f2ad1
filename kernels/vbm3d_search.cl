/*
 * The predictive block matching of VBM3D (Davy & Ehret 2020).
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
 * Built for vbm3d_gpu only, after patch_search.cl (its tables of NB
 * entries) and bm3d_gpu.cl (K, the block size); the frames are rings of
 * DENOISE_RING_T (denoise_common.cl).
 */

#pragma OPENCL FP_CONTRACT OFF

/*
 * The predictive search of VBM3D (doc/vbm3d_gpu-algorithm.md), one
 * work-item per reference patch. Compile-time constants: VBM3D_Q, the
 * patches kept per frame; VBM3D_R1MAX and VBM3D_R2MAX, the largest radii of
 * the windows in the reference frame and in the other frames that are
 * scanned a row of candidates at a time (0 to VBM3D_RMAX). 'frames' is a
 * ring of 'ring' planes. Like patch_search, a launch covers the grid rows
 * gy_first to ny - 1, table r = (gy - gy_first) * nx + gx. Samples are
 * read by denoise_ring_at(), channel 0, or, where 'basic' (a constant of
 * each kernel), the ring being one of basic estimates, by
 * denoise_basic_at() ('stride': see there).
 */

#define Q VBM3D_Q

static float vbm3d_sample(__global const DENOISE_RING_T *p, uint stride,
                          const int basic)
{
    return basic ? denoise_basic_at(p, stride, 0) :
                   denoise_ring_at(p, stride, 0);
}

/*
 * Offer the candidate p of distance d to the table (dist, pos) of Q
 * entries: skipped when it is 'exclude' or, with 'dedupe', already in the
 * table (reached from another centre).
 */
static void vbm3d_offer(float *dist, uint *pos, float d, uint p, uint exclude,
                        int dedupe)
{
    int seen = p == exclude;

#pragma unroll
    for (int k = 0; k < Q; k++)
        seen |= dedupe && pos[k] == p;
    if (!seen && d < dist[Q - 1])
        search_insert_sized(dist, pos, Q, d, p);
}

/* Windows up to this radius are scanned a row of candidates at a time. */
#define VBM3D_RMAX 3
#define VBM3D_SIDE (2 * VBM3D_RMAX + 1)

/* Insert the finite entries first .. Q - 1 of a frame's table into the
 * group's table. */
static void vbm3d_merge(float *gdist, uint *gpos, const float *dist,
                        const uint *pos, int first)
{
#pragma unroll
    for (int k = 0; k < Q; k++)
        if (k >= first && dist[k] < gdist[NB - 1])
            search_insert(gdist, gpos, dist[k], pos[k]);
}

/* The distance of patch_search.cl (patch 8, block 8) from the reference
 * patch held in registers: per row the sum of the 8 squares, then the rows;
 * stops once 'limit' is reached. */
static float vbm3d_distance(const float *ref,
                            __global const DENOISE_RING_T *b,
                            int width, uint stride, const int basic,
                            float limit)
{
    float ssd = 0.0f;

    for (int j = 0; j < K && ssd < limit; j++) {
        float row = 0.0f;
#pragma unroll
        for (int i = 0; i < K; i++) {
            float d = ref[j * K + i] -
                      vbm3d_sample(b + j * width + i, stride, basic);
            row = fma(d, d, row);
        }
        ssd += row;
    }
    return ssd;
}

/*
 * The candidates of plane 'slot' within 'radius' of (cx, cy), scanned y
 * outer, x inner, offered to the table. Up to 'rmax' (a constant at each
 * call, at most VBM3D_RMAX), the distances of a whole row of candidates are
 * computed together from each image row read once, with the sums of
 * vbm3d_distance in the same order (without its early stop, which does not
 * change which candidates enter).
 */
static DENOISE_INLINE void vbm3d_scan_window(__global const DENOISE_RING_T *frames,
                                             uint stride, const int basic,
                                             const float *ref, int width,
                                             int height, int slot, int cx,
                                             int cy, int radius,
                                             const int rmax, uint exclude,
                                             int dedupe, float *dist,
                                             uint *pos)
{
    uint plane_size = (uint)width * height;
    __global const DENOISE_RING_T *plane = frames + slot * plane_size;
    int xs = max(0, cx - radius), xe = min(width  - K, cx + radius);
    int ys = max(0, cy - radius), ye = min(height - K, cy + radius);

    if (radius > rmax) {
        for (int y = ys; y <= ye; y++) {
            for (int x = xs; x <= xe; x++) {
                uint p = slot * plane_size + y * width + x;
                float d = vbm3d_distance(ref, frames + p, width, stride,
                                         basic, dist[Q - 1]);

                vbm3d_offer(dist, pos, d, p, exclude, dedupe);
            }
        }
        return;
    }

    for (int y = ys; y <= ye; y++) {
        float acc[VBM3D_SIDE];

#pragma unroll
        for (int c = 0; c < 2 * rmax + 1; c++)
            acc[c] = 0.0f;
#pragma unroll
        for (int j = 0; j < K; j++) {
            __global const DENOISE_RING_T *line = plane + (y + j) * width;
            float row[VBM3D_SIDE + K - 1];

#pragma unroll
            for (int i = 0; i < 2 * rmax + K; i++)
                row[i] = vbm3d_sample(line + clamp(cx - rmax + i, 0, width - 1),
                                      stride, basic);
#pragma unroll
            for (int c = 0; c < 2 * rmax + 1; c++) {
                float sum = 0.0f;
#pragma unroll
                for (int i = 0; i < K; i++) {
                    float d = ref[j * K + i] - row[c + i];
                    sum = fma(d, d, sum);
                }
                acc[c] += sum;
            }
        }
#pragma unroll
        for (int c = 0; c < 2 * rmax + 1; c++) {
            int x = cx - rmax + c;

            if (x >= xs && x <= xe)
                vbm3d_offer(dist, pos, acc[c], slot * plane_size + y * width + x,
                            exclude, dedupe);
        }
    }
}

/* The best Q patches of plane 'slot' around the centres of the table
 * (cdist, cpos) of the previous frame, a patch reached twice counting once. */
static void vbm3d_search_frame(__global const DENOISE_RING_T *frames,
                               uint stride, const int basic, const float *ref,
                               int width, int height, int slot, int radius,
                               const float *cdist, const uint *cpos,
                               float *dist, uint *pos)
{
    uint plane_size = (uint)width * height;

#pragma unroll
    for (int k = 0; k < Q; k++) {
        dist[k] = INFINITY;
        pos[k]  = UINT_MAX;
    }
    /* not unrolled: one copy of the window's scan (on the H100, 1080p
     * yuv420p: the second search 1.33 -> 1.22 ms, the first 0.91 -> 0.90,
     * with causal=1 0.46 -> 0.49) */
#pragma unroll 1
    for (int c = 0; c < Q; c++) {
        uint centre = cpos[c] % plane_size;

        if (cdist[c] != INFINITY)
            vbm3d_scan_window(frames, stride, basic, ref, width, height, slot,
                              centre % width, centre / width, radius,
                              VBM3D_R2MAX, UINT_MAX, 1, dist, pos);
    }
}

/* Follow the motion from the reference frame's table through nb_frames
 * frames in direction dir (1: forward, -1: backward). */
static void vbm3d_search_direction(__global const DENOISE_RING_T *frames,
                                   uint stride, const int basic,
                                   const float *ref, int width,
                                   int height, int ring, int ref_slot, int dir,
                                   int nb_frames, int radius,
                                   const float *ref_dist, const uint *ref_pos,
                                   float *gdist, uint *gpos)
{
    float cdist[Q], dist[Q];
    uint cpos[Q], pos[Q];

#pragma unroll
    for (int k = 0; k < Q; k++) {
        cdist[k] = ref_dist[k];
        cpos[k]  = ref_pos[k];
    }
    for (int d = 1; d <= nb_frames; d++) {
        int slot = ((ref_slot + dir * d) % ring + ring) % ring;

        vbm3d_search_frame(frames, stride, basic, ref, width, height, slot,
                           radius, cdist, cpos, dist, pos);
        vbm3d_merge(gdist, gpos, dist, pos, 0);
#pragma unroll
        for (int k = 0; k < Q; k++) {
            cdist[k] = dist[k];
            cpos[k]  = pos[k];
        }
    }
}

static void vbm3d_search_group(__global const DENOISE_RING_T *frames,
                               uint stride,
                               const int basic,
                               int width,
                               int height,
                               int ring,
                               int ref_slot,
                               int nb_past,
                               int nb_future,
                               int step,
                               int nx,
                               int ny,
                               int gy_first,
                               int radius1,
                               int radius2,
                               __global uint *positions,
                               __global float *distances)
{
    int gx = get_global_id(0);
    int gy = gy_first + get_global_id(1);
    uint plane_size = (uint)width * height;
    int x0, y0;
    float ref[K * K];
    uint ref_pos;
    float gdist[NB], dist[Q];
    uint gpos[NB], pos[Q];

    if (gx >= nx || gy >= ny)
        return;
    x0 = search_grid_pos(gx, step, width, K);
    y0 = search_grid_pos(gy, step, height, K);
    ref_pos = ref_slot * plane_size + y0 * width + x0;
#pragma unroll
    for (int j = 0; j < K; j++)
#pragma unroll
        for (int i = 0; i < K; i++)
            ref[j * K + i] = vbm3d_sample(frames + (ref_pos + j * width + i),
                                          stride, basic);

    /* the reference frame: the reference patch first, then its window */
#pragma unroll
    for (int k = 0; k < Q; k++) {
        dist[k] = INFINITY;
        pos[k]  = UINT_MAX;
    }
    dist[0] = 0.0f;
    pos[0]  = ref_pos;
    vbm3d_scan_window(frames, stride, basic, ref, width, height, ref_slot,
                      x0, y0, radius1, VBM3D_R1MAX, ref_pos, 0, dist, pos);

    search_init(gdist, gpos, ref_pos, 1);
    vbm3d_merge(gdist, gpos, dist, pos, 1);
    /* forward (d = 0), then backward, one copy of the code */
#pragma unroll 1
    for (int d = 0; d < 2; d++)
        vbm3d_search_direction(frames, stride, basic, ref, width, height, ring,
                               ref_slot, d ? -1 : 1, d ? nb_past : nb_future,
                               radius2, dist, pos, gdist, gpos);
    search_store(gdist, gpos, (gy - gy_first) * nx + gx, positions, distances);
}

#define VBM3D_SEARCH_KERNEL(name, basic)                                       \
__kernel void name(__global const DENOISE_RING_T *frames, uint stride,         \
                   int width, int height, int ring, int ref_slot,              \
                   int nb_past, int nb_future, int step, int nx, int ny,       \
                   int gy_first, int radius1, int radius2,                     \
                   __global uint *positions, __global float *distances)        \
{                                                                              \
    vbm3d_search_group(frames, stride, basic, width, height, ring, ref_slot,   \
                       nb_past, nb_future, step, nx, ny, gy_first, radius1,    \
                       radius2, positions, distances);                         \
}

/* The search on a ring of frames, and on one of basic estimates where
 * these are read otherwise (RGB rings: the second step's search). */
VBM3D_SEARCH_KERNEL(vbm3d_search, 0)
#if DENOISE_RING_RGB
VBM3D_SEARCH_KERNEL(vbm3d_search_basic, 1)
#endif
