/*
 * Patch search shared by the GPU denoisers: the most similar patches of a
 * search window, kept sorted in registers (Davy & Ehret 2020, section 4.1).
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
 * Compile-time constants (prepended by the host):
 *   NB_NEIGHBORS   size of the table of most similar patches
 *   SEARCH_TILE    side of the square work-group of the work-group
 *                  searches (patch_search_tiled, _squares, _rows)
 *   SEARCH_UNROLL  offsets of the search window per pass of
 *                  patch_search_tiled
 *   SEARCH_ROWS_UNROLL  the same for patch_search_rows (the most: the
 *                       5x5 entry points on a step of 1 also take 7)
 *   SEARCH_EDGE_LANES   work-items per patch of patch_search_edge
 *   SKIP_<kernel>  leaves that kernel out: the host defines it for each
 *                  search kernel that none of its searches runs, since
 *                  building them all takes seconds on some devices
 *
 * Patches are square, 'patch' samples wide, addressed by their top-left
 * sample. Reference patches lie on a grid of step 'step' whose last row and
 * column are moved to the frame's edge, so that every sample is covered.
 * Candidates are the patches lying entirely inside the frame whose top-left
 * sample is within 'radius' of the reference's, in nb_frames planes of a
 * ring of 'ring' planes of width * height samples: planes first_slot,
 * first_slot + 1, .. (modulo ring), scanned in that order, row by row, left
 * to right. The reference patch lies in plane ref_slot.
 *
 * A frame may have 'channels' channels (1 to 3), each a ring of its own,
 * channel c starting 'channel_stride' * c samples after the first; positions
 * are those of channel 0. The distance of two patches is then the sum over
 * the channels of their squared differences times channel_weights[c]. With
 * DENOISE_RING_RGB the rings hold R, G and B bytes 'channel_stride' samples
 * apart, and the one channel searched is their opponent channel
 * 'ring_channel' (DENOISE_RING_SAMPLE(), denoise_common.cl).
 *
 * A launch covers the rows gy_first to ny - 1 of the grid (a band, so that
 * the tables of a large frame need not be held at once). Output, one table
 * per reference patch r = (gy - gy_first) * nx + gx, sorted by increasing
 * distance, ties in scan order:
 *   positions[r * NB + k]  index of the k-th best patch in the frame stack
 *   distances[r * NB + k]  its sum of squared differences (INFINITY: unused)
 * With ref_first, the reference patch is entry 0 whatever ties there are.
 */

#pragma OPENCL FP_CONTRACT OFF

#define NB     NB_NEIGHBORS
#define TILE   SEARCH_TILE
#define UNROLL SEARCH_UNROLL

static int search_grid_pos(int g, int step, int size, int patch)
{
    return min(g * step, size - patch);
}

/*
 * SEARCH_CHANNELS, the most channels of a distance in this program (3 with
 * joint colour, else 1), bounds the loops over the channels at compile
 * time, so that one-channel programs compile to the plain distance.
 */
#ifndef SEARCH_CHANNELS
#define SEARCH_CHANNELS 1
#endif

static float search_channel_weight(float4 weights, int c)
{
#if SEARCH_CHANNELS == 1
    return 1.0f;
#else
    return c == 0 ? weights.x : c == 1 ? weights.y : weights.z;
#endif
}

/*
 * Patch distances are sums of squared differences grouped the same way by
 * every kernel (and the golden model), so that they are bit-identical: in
 * each row, sums of 'block' consecutive squares, each multiplied by the
 * weight of its channel and added over the channels in order, these summed
 * along the row, then the rows summed from top to bottom. 'block' divides
 * the patch size and the step. With one channel of weight 1, the products
 * are exact: the distance is the plain sum of squares.
 */
static float search_distance(__global const DENOISE_RING_T *a,
                             __global const DENOISE_RING_T *b,
                             int width, int patch, int block, int channels,
                             uint channel_stride, int ring_channel,
                             float4 channel_weights, float limit)
{
    float ssd = 0.0f;

    for (int j = 0; j < patch && ssd < limit; j++) {
        float row = 0.0f;
        for (int k = 0; k < patch; k += block) {
            float blocks = 0.0f;
#pragma unroll
            for (int c = 0; c < SEARCH_CHANNELS && c < channels; c++) {
                __global const DENOISE_RING_T *ac = a + c * channel_stride + j * width;
                __global const DENOISE_RING_T *bc = b + c * channel_stride + j * width;
                float sum = 0.0f;
                for (int i = k; i < k + block; i++) {
                    float d = DENOISE_RING_SAMPLE(ac, i) - DENOISE_RING_SAMPLE(bc, i);
                    sum = fma(d, d, sum);
                }
                blocks += search_channel_weight(channel_weights, c) * sum;
            }
            row += blocks;
        }
        ssd += row;
    }
    return ssd;
}

/* Insert into a sorted table of 'size' candidates (a constant at every
 * call, so that the table stays in registers); a candidate goes after the
 * entries of equal distance, found earlier in the scan. Entry k becomes
 * entry k - 1 where the candidate goes before that one, else the candidate
 * where it goes before entry k, else stays: each entry's comparison with
 * the candidate is independent of the others' (a chain of "already
 * inserted" flags, one comparison after another, took the H100 3 % longer
 * in the squares search). */
static void search_insert_sized(float *dist, uint *pos, int size, float d, uint p)
{
    float prev_dist  = dist[0];
    uint  prev_pos   = pos[0];
    int   prev_after = d < dist[0];

    dist[0] = prev_after ? d : dist[0];
    pos[0]  = prev_after ? p : pos[0];
#pragma unroll
    for (int k = 1; k < size; k++) {
        int   after = d < dist[k];
        float old_dist = dist[k];
        uint  old_pos  = pos[k];

        dist[k] = prev_after ? prev_dist : after ? d : old_dist;
        pos[k]  = prev_after ? prev_pos  : after ? p : old_pos;
        prev_dist  = old_dist;
        prev_pos   = old_pos;
        prev_after = after;
    }
}

/* Insert into the sorted table of the NB best candidates. */
static void search_insert(float *dist, uint *pos, float d, uint p)
{
    search_insert_sized(dist, pos, NB, d, p);
}

static void search_init(float *dist, uint *pos, uint ref_pos, int ref_first)
{
#pragma unroll
    for (int k = 0; k < NB; k++) {
        dist[k] = INFINITY;
        pos[k]  = ref_pos;
    }
    if (ref_first)
        dist[0] = 0.0f;
}

static void search_store(const float *dist, const uint *pos, int r,
                         __global uint *positions, __global float *distances)
{
#pragma unroll
    for (int k = 0; k < NB; k++) {
        positions[r * NB + k] = pos[k];
        distances[r * NB + k] = dist[k];
    }
}

/*
 * The table as sorted 32-bit keys, for the work-group searches of one
 * channel of integer samples in the 8-bit scale (squares up to 255^2):
 * key = distance << shift | (scan index + 1), the scan index counting the
 * candidates of the window in scan order, frame by frame, row by row, left
 * to right; the reference patch of ref_first is key 0, an unused entry
 * UINT_MAX. Keys order candidates as the (distance, position) tables do, by
 * distance, then scan order; an entry takes one register instead of two,
 * and an insertion a minimum and a maximum an entry. The host uses them
 * where the distances are integers below 2^(32 - shift) and the window has
 * fewer than 2^shift - 1 candidates (keys_fit() of denoise_opencl.c,
 * whose shift is this one): on an H100 the search of nlmeans_gpu's defaults
 * 0.640 -> 0.559 ms per 1080p gray frame, of p=5:step=1 5.74 -> 4.32 ms.
 */
static int search_key_shift(int patch)
{
    return patch <= 4 ? 12 : patch <= 5 ? 11 : 10;
}

static void search_keys_init(uint *keys, int ref_first)
{
#pragma unroll
    for (int k = 0; k < NB; k++)
        keys[k] = UINT_MAX;
    if (ref_first)
        keys[0] = 0;
}

/* The key of a candidate of distance ssd (an integer) and scan index scan. */
static uint search_key(float ssd, int shift, int scan)
{
    return (uint)ssd << shift | (uint)(scan + 1);
}

/* Insert into the keys of the NB best candidates: entry k becomes the
 * middle one of the new key, entry k - 1 and entry k. */
static void search_keys_insert(uint *keys, uint key)
{
#pragma unroll
    for (int k = NB - 1; k > 0; k--)
        keys[k] = min(max(key, keys[k - 1]), keys[k]);
    keys[0] = min(key, keys[0]);
}

/*
 * Offer a candidate of distance ssd to the table: with keys, by its scan
 * index, else by its position p.
 */
static void search_offer(float *dist, uint *pos, int keys, int shift, float ssd,
                         int scan, uint p)
{
    if (keys) {
        uint key = search_key(ssd, shift, scan);

        if (key < pos[NB - 1])
            search_keys_insert(pos, key);
    } else if (ssd < dist[NB - 1]) {
        search_insert(dist, pos, ssd, p);
    }
}

/* search_store() of the keys of the reference patch at (x0, y0) of slot
 * ref_slot, whose window of 'radius' spans nb_frames slots of a ring from
 * first_slot. */
static void search_keys_store(const uint *keys, int shift, int width,
                              uint plane_size, int first_slot, int ring,
                              int ref_slot, int radius, int x0, int y0, int r,
                              __global uint *positions,
                              __global float *distances)
{
    int side = 2 * radius + 1;

#pragma unroll
    for (int k = 0; k < NB; k++) {
        uint key  = keys[k];
        uint scan = (key & ((1u << shift) - 1)) - 1;
        int dx = scan % side, dy = scan / side % side, t = scan / side / side;
        uint pos = ref_slot * plane_size + y0 * width + x0;

        if (key != UINT_MAX && key)
            pos = (first_slot + t) % ring * plane_size +
                  (y0 + dy - radius) * width + x0 + dx - radius;
        positions[r * NB + k] = pos;
        distances[r * NB + k] = key == UINT_MAX ? INFINITY : (float)(key >> shift);
    }
}

/*
 * The reference region of a work-group kernel (the patches of its TILE x
 * TILE references, rw x rh samples from (x_base, y_base), clamped to the
 * plane) into local memory, stored as [row][i % block][i / block] so that
 * neighbouring work-items read neighbouring addresses; then a barrier.
 */
static void search_load_ref_tile(__global const DENOISE_RING_T *ref_plane,
                                 uint channel_stride, int ring_channel,
                                 int width, int height, int x_base, int y_base, int rw,
                                 int rh, int block, __local float *ref_tile)
{
    int lx  = get_local_id(0);
    int ly  = get_local_id(1);
    int nbx = rw / block;

    for (int ry = ly; ry < rh; ry += TILE) {
        int py = min(y_base + ry, height - 1);
        for (int rx = lx; rx < rw; rx += TILE) {
            int px = min(x_base + rx, width - 1);
            ref_tile[ry * rw + (rx % block) * nbx + rx / block] =
                DENOISE_RING_SAMPLE(ref_plane, py * width + px);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/*
 * Whether the patch at (cx, cy) is not a candidate of the reference patch at
 * (x0, y0) of frame slot ref_slot: outside the plane, or the reference
 * itself where that one is entry 0 (ref_first), t being the candidate's
 * slot; it reads the kernel's width, height, patch, ref_first, ref_slot, x0
 * and y0. A macro: written as a function returning its negation, the
 * work-group kernels ran 3 to 4 % slower on an H100 (nlmeans_gpu,
 * 2026-11-24).
 */
#define SEARCH_NOT_CANDIDATE(cx, cy, t)                                     \
    ((cx) < 0 || (cy) < 0 || (cx) > width - patch || (cy) > height - patch || \
     (ref_first && (t) == ref_slot && (cx) == x0 && (cy) == y0))

/*
 * One work-item per reference patch, reading patches from global memory.
 * Reference patches with gx < skip_nx and gy < skip_ny are left to a
 * work-group search.
 */
#ifndef SKIP_patch_search
__kernel void patch_search(__global const DENOISE_RING_T *frames,
                           int channels,
                           uint channel_stride,
                           int ring_channel,
                           float4 channel_weights,
                           int width,
                           int height,
                           int first_slot,
                           int nb_frames,
                           int ring,
                           int ref_slot,
                           int patch,
                           int step,
                           int block,
                           int radius,
                           int nx,
                           int ny,
                           int skip_nx,
                           int skip_ny,
                           int gy_first,
                           int ref_first,
                           __global uint *positions,
                           __global float *distances)
{
    int gx = get_global_id(0);
    int gy = gy_first + get_global_id(1);
    uint plane_size = (uint)width * height;
    int x0, y0, xs, xe, ys, ye;
    uint ref_pos;
    float dist[NB];
    uint pos[NB];

    if (gx >= nx || gy >= ny || (gx < skip_nx && gy < skip_ny))
        return;

    x0 = search_grid_pos(gx, step, width, patch);
    y0 = search_grid_pos(gy, step, height, patch);
    ref_pos = ref_slot * plane_size + y0 * width + x0;
    xs = max(0, x0 - radius);
    xe = min(width - patch, x0 + radius);
    ys = max(0, y0 - radius);
    ye = min(height - patch, y0 + radius);

    search_init(dist, pos, ref_pos, ref_first);
    for (int i = 0; i < nb_frames; i++) {
        int t = (first_slot + i) % ring;

        for (int cy = ys; cy <= ye; cy++) {
            for (int cx = xs; cx <= xe; cx++) {
                uint cpos = t * plane_size + cy * width + cx;
                float d;

                if (ref_first && cpos == ref_pos)
                    continue;
                d = search_distance(frames + ref_pos, frames + cpos, width,
                                    patch, block, channels, channel_stride,
                                    ring_channel, channel_weights, dist[NB - 1]);
                if (d < dist[NB - 1])
                    search_insert(dist, pos, d, cpos);
            }
        }
    }
    search_store(dist, pos, (gy - gy_first) * nx + gx, positions, distances);
}
#endif

/*
 * The reference patches that the work-group kernels leave, those of the
 * grid's last column and row where they are moved to the frame's edge
 * (gx >= regular_nx or gy >= regular_ny): a few hundred patches, too few
 * to fill a GPU with one work-item each, so EDGE_LANES work-items share
 * each one. Lane l scans the candidates l, l + EDGE_LANES, .. of the scan
 * order into a table of its own, exactly as patch_search scans them all;
 * then each entry's place among the lanes' entries, ordered by distance
 * and then scan index, is its rank: its place in the one table of
 * patch_search (which keeps, sorted, the NB least candidates in that
 * order), so that the output is the same bits.
 *
 * Work-groups of EDGE_LANES x 1; group e is the edge patch e: the last
 * column's, gy from gy_first, if regular_nx < nx (edge_column of them),
 * then the last row's, gx from 0, if that row is in the band.
 */
#define EDGE_LANES SEARCH_EDGE_LANES

/* Whether (d1, k1) comes before (d2, k2): by distance, then scan index. */
static int edge_before(float d1, uint k1, float d2, uint k2)
{
    return d1 < d2 || (d1 == d2 && k1 < k2);
}

/* How many entries of a lane's sorted table come before (d, k). */
static int edge_count_before(__local const float *dist, __local const uint *key,
                             float d, uint k)
{
    int lo = 0, hi = NB;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (edge_before(dist[mid], key[mid], d, k))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

#ifndef SKIP_patch_search_edge
__kernel __attribute__((reqd_work_group_size(EDGE_LANES, 1, 1)))
void patch_search_edge(__global const DENOISE_RING_T *frames,
                       int channels,
                       uint channel_stride,
                       int ring_channel,
                       float4 channel_weights,
                       int width,
                       int height,
                       int first_slot,
                       int nb_frames,
                       int ring,
                       int ref_slot,
                       int patch,
                       int step,
                       int block,
                       int radius,
                       int nx,
                       int ny,
                       int edge_column,
                       int edge_row,
                       int gy_first,
                       int ref_first,
                       __global uint *positions,
                       __global float *distances)
{
    __local float lane_dist[EDGE_LANES * NB];
    __local uint  lane_key[EDGE_LANES * NB];
    int lane = get_local_id(0);
    int e    = get_group_id(1);
    int gx   = e < edge_column ? nx - 1 : e - edge_column;
    int gy   = e < edge_column ? gy_first + e : edge_row;
    uint plane_size = (uint)width * height;
    int x0 = search_grid_pos(gx, step, width, patch);
    int y0 = search_grid_pos(gy, step, height, patch);
    uint ref_pos = ref_slot * plane_size + y0 * width + x0;
    int xs = max(0, x0 - radius), xe = min(width - patch, x0 + radius);
    int ys = max(0, y0 - radius), ye = min(height - patch, y0 + radius);
    uint sw = xe - xs + 1, frame_size = sw * (ye - ys + 1);
    uint total = frame_size * nb_frames;
    int r = (gy - gy_first) * nx + gx;
    float dist[NB];
    uint key[NB];

    /* scan indices from total on mark unused entries, unique per lane */
#pragma unroll
    for (int k = 0; k < NB; k++) {
        dist[k] = INFINITY;
        key[k]  = total + lane * NB + k;
    }
    for (uint k = lane; k < total; k += EDGE_LANES) {
        uint rem = k % frame_size;
        int t    = (first_slot + (int)(k / frame_size)) % ring;
        uint cpos = t * plane_size + (ys + rem / sw) * width + xs + rem % sw;
        float d;

        if (ref_first && cpos == ref_pos)
            continue;
        d = search_distance(frames + ref_pos, frames + cpos, width, patch,
                            block, channels, channel_stride, ring_channel,
                            channel_weights, dist[NB - 1]);
        if (d < dist[NB - 1])
            search_insert(dist, key, d, k);
    }
#pragma unroll
    for (int k = 0; k < NB; k++) {
        lane_dist[lane * NB + k] = dist[k];
        lane_key[lane * NB + k]  = key[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);

    /* each entry's rank among all; with ref_first, entry 0 is the reference */
    for (int k = 0; k < NB; k++) {
        float d  = lane_dist[lane * NB + k];
        uint sk  = lane_key[lane * NB + k];
        int rank = k + ref_first;
        uint cpos = ref_pos;

        for (int l = 0; l < EDGE_LANES && rank < NB; l++)
            if (l != lane)
                rank += edge_count_before(lane_dist + l * NB, lane_key + l * NB,
                                          d, sk);
        if (rank >= NB)
            break;      /* so are the lane's later entries */
        if (sk < total) {
            uint rem = sk % frame_size;
            int t    = (first_slot + (int)(sk / frame_size)) % ring;
            cpos = t * plane_size + (ys + rem / sw) * width + xs + rem % sw;
        }
        positions[r * NB + rank] = cpos;
        distances[r * NB + rank] = d;
    }
    if (ref_first && lane == 0) {
        positions[r * NB] = ref_pos;
        distances[r * NB] = 0.0f;
    }
}
#endif

/*
 * The work-group searches: TILE x TILE reference patches of the regular
 * grid (x = gx * step) per work-group. For 'unroll' offsets of the search
 * window at a time, (dx0 .. dx0 + unroll - 1, dy), the work-group first
 * sums the squared differences of pieces of its region that several
 * patches cover into local memory, once, spread over all its work-items;
 * then each work-item adds up the pieces of its patch, row by row. A
 * patch's pieces lie in 'sums' as a rectangle of sums_down rows of
 * sums_across pieces, sums_w apart. Local memory, in floats: ref_tile
 * rw * rh (channel 0 of the reference's region, with rw = (TILE - 1) *
 * step + patch and rh likewise), then the pieces. Three kinds of pieces:
 *
 * - SEARCH_PIECES_BLOCKS: pieces of 'block' samples of each row, shared by
 *   every patch that contains them (with 8x8 patches and step 4, each piece
 *   serves up to four patches), for any samples and 1 to 3 channels, the
 *   reference samples of channels past the first read from global memory
 *   so that the local memory does not grow with the channels.
 *   SEARCH_UNROLL offsets a pass; pieces SEARCH_UNROLL * (rw / block) *
 *   rh.
 * - SEARCH_PIECES_SQUARES: square blocks of 'block' x 'block' samples, each
 *   shared by every patch that contains it (a patch of 8 on a step of 4
 *   adds 4 blocks, not 16 row pieces), for planes of integer samples in the
 *   8-bit scale and one channel of weight 1 (8-bit frames, no colour
 *   transform): every squared difference is then an integer below 2^16 and
 *   every patch distance an integer below 2^24 (patches of at most 16x16),
 *   so floats sum them exactly in any order and the distances are those of
 *   the blocks' row order. At most SQUARES_UNROLL offsets a pass (fewer
 *   passes over the window's width save more than fewer offsets: for the
 *   default window of 21, 2 passes of 11 offsets are faster than 3 of 7 or
 *   of 8); each work-item keeps the candidate samples of a row in registers
 *   across the offsets. Pieces unroll * (rw / block) * (rh / block), within
 *   the blocks' buffer where unroll <= SEARCH_UNROLL * block (8 with blocks
 *   of 2, 11 with blocks of 4).
 * - SEARCH_PIECES_ROWS: whole rows of patches of at most ROWS_MAX_PATCH
 *   samples of one channel, the row distance of every row of the region at
 *   each of its TILE reference columns, since a row serves every patch of
 *   that column that covers it (8 / step of them). A row distance is
 *   summed exactly as the blocks sum it (its 'block'-sample sums in order,
 *   each times the channel's weight), so the distances are the same bits,
 *   on any samples. It also fits steps prime to the patch size (bm3d_gpu's
 *   `ref`: step 3), whose one-sample blocks take the blocks more local
 *   memory than GPUs have. At most SEARCH_ROWS_UNROLL offsets a pass;
 *   pieces SEARCH_ROWS_UNROLL * rh * TILE.
 */
#define SEARCH_PIECES_BLOCKS  0
#define SEARCH_PIECES_SQUARES 1
#define SEARCH_PIECES_ROWS    2

#define BLOCKS_CHUNK      4     /* samples of a block whose candidates the
                                   blocks search holds at once */
#define SQUARES_UNROLL    11
#define SQUARES_MAX_BLOCK 8
#define ROWS_MAX_PATCH    8
#define ROWS_UNROLL       SEARCH_ROWS_UNROLL

/* The blocks' first stage: sums[(u * rh + ry) * nbx + bx] for the
 * region's rh rows of nbx blocks, the work-items taking them in turn. */
static DENOISE_INLINE void search_sum_blocks(__global const DENOISE_RING_T *plane,
                                             __global const DENOISE_RING_T *ref_plane,
                                             int channels,
                                             uint channel_stride,
                                             int ring_channel,
                                             float4 channel_weights,
                                             int width,
                                             int height,
                                             int x_base,
                                             int y_base,
                                             int dx0,
                                             int dy,
                                             int rw,
                                             int rh,
                                             int nbx,
                                             int block,
                                             __local const float *ref_tile,
                                             __local float *sums)
{
    int lid = get_local_id(1) * TILE + get_local_id(0);
    int stride_bx = (TILE * TILE) % nbx;
    int stride_ry = (TILE * TILE) / nbx;

    for (int bx = lid % nbx, ry = lid / nbx; ry < rh;) {
        int row_offset = clamp(y_base + ry + dy, 0, height - 1) * width;
        int ref_offset = min(y_base + ry, height - 1) * width;
        __local const float *ref_row = ref_tile + ry * rw;
        float total[UNROLL];

        /* channel 0 from the reference tile, the others (joint colour)
         * straight from global memory */
#pragma unroll
        for (int c = 0; c < SEARCH_CHANNELS && c < channels; c++) {
            __global const DENOISE_RING_T *row   = plane + c * channel_stride + row_offset;
            __global const DENOISE_RING_T *ref_c = ref_plane + c * channel_stride + ref_offset;
            float weight = search_channel_weight(channel_weights, c);
            float sum[UNROLL];

#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                sum[u] = 0.0f;
            /* the candidate samples of BLOCKS_CHUNK samples of the block
             * at once, each read once for the UNROLL offsets */
            for (int i0 = 0; i0 < block; i0 += BLOCKS_CHUNK) {
                int px0 = x_base + bx * block + i0 + dx0;
                float cand[BLOCKS_CHUNK + UNROLL - 1];

#pragma unroll
                for (int k = 0; k < BLOCKS_CHUNK + UNROLL - 1; k++)
                    if (k < block - i0 + UNROLL - 1)
                        cand[k] = DENOISE_RING_SAMPLE(row, clamp(px0 + k, 0, width - 1));
#pragma unroll
                for (int i = 0; i < BLOCKS_CHUNK; i++) {
                    if (i0 + i < block) {
                        int rx  = bx * block + i0 + i;
                        float r = c ? DENOISE_RING_SAMPLE(ref_c, min(x_base + rx, width - 1)) :
                                      ref_row[(i0 + i) * nbx + bx];
#pragma unroll
                        for (int u = 0; u < UNROLL; u++) {
                            float d = r - cand[i + u];
                            sum[u] = fma(d, d, sum[u]);
                        }
                    }
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; u++)
                total[u] = c ? total[u] + weight * sum[u] : weight * sum[u];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++)
            sums[(u * rh + ry) * nbx + bx] = total[u];

        bx += stride_bx;
        ry += stride_ry;
        if (bx >= nbx) {
            bx -= nbx;
            ry++;
        }
    }
}

/* The squares' first stage: sums[(u * nby + by) * nbx + bx] for the
 * region's nbx x nby blocks, the work-items taking them in turn. */
static DENOISE_INLINE void search_sum_squares(__global const DENOISE_RING_T *plane,
                                              uint channel_stride,
                                              int ring_channel,
                                              int width,
                                              int height,
                                              int x_base,
                                              int y_base,
                                              int dx0,
                                              int dy,
                                              int rw,
                                              int nbx,
                                              int nby,
                                              int block,
                                              __local const float *ref_tile,
                                              __local float *sums,
                                              const int unroll)
{
    int lid = get_local_id(1) * TILE + get_local_id(0);
    int stride_bx = (TILE * TILE) % nbx;
    int stride_by = (TILE * TILE) / nbx;

    for (int bx = lid % nbx, by = lid / nbx; by < nby;) {
        float sum[SQUARES_UNROLL];
        int px0 = x_base + bx * block + dx0;

#pragma unroll
        for (int u = 0; u < unroll; u++)
            sum[u] = 0.0f;
        for (int j = 0; j < block; j++) {
            int ry = by * block + j;
            __global const DENOISE_RING_T *row =
                plane + clamp(y_base + ry + dy, 0, height - 1) * width;
            __local const float *ref_row = ref_tile + ry * rw + bx;
            float cand[SQUARES_MAX_BLOCK + SQUARES_UNROLL - 1];

#pragma unroll
            for (int k = 0; k < SQUARES_MAX_BLOCK + SQUARES_UNROLL - 1; k++)
                if (k < block + unroll - 1)
                    cand[k] = DENOISE_RING_SAMPLE(row, clamp(px0 + k, 0, width - 1));
#pragma unroll
            for (int k = 0; k < SQUARES_MAX_BLOCK; k++) {
                if (k < block) {
                    float r = ref_row[k * nbx];
#pragma unroll
                    for (int u = 0; u < unroll; u++) {
                        float d = r - cand[k + u];
                        sum[u] = fma(d, d, sum[u]);
                    }
                }
            }
        }
#pragma unroll
        for (int u = 0; u < unroll; u++)
            sums[(u * nby + by) * nbx + bx] = sum[u];

        bx += stride_bx;
        by += stride_by;
        if (bx >= nbx) {
            bx -= nbx;
            by++;
        }
    }
}

/* The rows' first stage: sums[(u * rh + ry) * TILE + tx] for the row ry of
 * the region in the patch of reference column tx. */
static DENOISE_INLINE void search_sum_rows(__global const DENOISE_RING_T *plane,
                                           uint channel_stride,
                                           int ring_channel,
                                           int width,
                                           int height,
                                           int x_base,
                                           int y_base,
                                           int dx0,
                                           int dy,
                                           int rw,
                                           int rh,
                                           int nbx,
                                           int patch,
                                           int step,
                                           int block,
                                           float weight,
                                           __local const float *ref_tile,
                                           __local float *sums,
                                           const int unroll)
{
    int lid = get_local_id(1) * TILE + get_local_id(0);

    for (int item = lid; item < TILE * rh; item += TILE * TILE) {
        int tx = item % TILE, ry = item / TILE;
        __global const DENOISE_RING_T *row =
            plane + clamp(y_base + ry + dy, 0, height - 1) * width;
        __local const float *ref_row = ref_tile + ry * rw;
        int rx0 = tx * step;
        int px0 = x_base + rx0 + dx0;
        float cand[ROWS_MAX_PATCH + ROWS_UNROLL - 1];
        float sum[ROWS_UNROLL], h[ROWS_UNROLL];

#pragma unroll
        for (int k = 0; k < ROWS_MAX_PATCH + ROWS_UNROLL - 1; k++)
            if (k < patch + unroll - 1)
                cand[k] = DENOISE_RING_SAMPLE(row, clamp(px0 + k, 0, width - 1));
#pragma unroll
        for (int u = 0; u < unroll; u++)
            sum[u] = h[u] = 0.0f;
#pragma unroll
        for (int k = 0; k < ROWS_MAX_PATCH; k++) {
            if (k < patch) {
                int rx  = rx0 + k;
                float r = ref_row[(rx % block) * nbx + rx / block];
#pragma unroll
                for (int u = 0; u < unroll; u++) {
                    float d = r - cand[k + u];
                    sum[u] = fma(d, d, sum[u]);
                }
                /* the end of a block: its sum into the row */
                if ((k + 1) % block == 0) {
#pragma unroll
                    for (int u = 0; u < unroll; u++) {
                        h[u] += weight * sum[u];
                        sum[u] = 0.0f;
                    }
                }
            }
        }
#pragma unroll
        for (int u = 0; u < unroll; u++)
            sums[(u * rh + ry) * TILE + tx] = h[u];
    }
}

static DENOISE_INLINE void search_shared(__global const DENOISE_RING_T *frames,
                                         int channels,
                                         uint channel_stride,
                                         int ring_channel,
                                         float4 channel_weights,
                                         int width,
                                         int height,
                                         int first_slot,
                                         int nb_frames,
                                         int ring,
                                         int ref_slot,
                                         int patch,
                                         int step,
                                         int block,
                                         int radius,
                                         int nx,
                                         int ny,
                                         int regular_nx,
                                         int regular_ny,
                                         int gy_first,
                                         int ref_first,
                                         __global uint *positions,
                                         __global float *distances,
                                         __local float *ref_tile,
                                         __local float *sums,
                                         const int unroll,
                                         const int keys,
                                         const int pieces)
{
    int lx  = get_local_id(0);
    int ly  = get_local_id(1);
    int gx  = get_group_id(0) * TILE + lx;
    int gy  = gy_first + get_group_id(1) * TILE + ly;
    int x_base = get_group_id(0) * TILE * step;
    int y_base = (gy_first + get_group_id(1) * TILE) * step;
    int rw  = (TILE - 1) * step + patch;
    int rh  = (TILE - 1) * step + patch;
    int nbx = rw / block;
    int nby = rh / block;
    int blocks_per_step  = step / block;
    int blocks_per_patch = patch / block;
    int squares = pieces == SEARCH_PIECES_SQUARES;
    int rows    = pieces == SEARCH_PIECES_ROWS;
    int sums_w      = rows ? TILE : nbx;
    int sums_h      = squares ? nby : rh;
    int sums_x      = rows ? lx : lx * blocks_per_step;
    int sums_y      = squares ? ly * blocks_per_step : ly * step;
    int sums_across = rows ? 1 : blocks_per_patch;
    int sums_down   = squares ? blocks_per_patch : patch;
    int active = gx < regular_nx && gy < min(regular_ny, ny);
    int x0 = gx * step, y0 = gy * step;
    uint plane_size = (uint)width * height;
    __global const DENOISE_RING_T *ref_plane = frames + ref_slot * plane_size;
    float weight = search_channel_weight(channel_weights, 0);
    int side = 2 * radius + 1, shift = search_key_shift(patch);
    float dist[NB];
    uint pos[NB];   /* with keys: the keys */

    search_load_ref_tile(ref_plane, channel_stride, ring_channel, width, height,
                         x_base, y_base, rw, rh, block, ref_tile);

    if (keys)
        search_keys_init(pos, ref_first);
    else
        search_init(dist, pos, ref_slot * plane_size + y0 * width + x0, ref_first);

    for (int i = 0; i < nb_frames; i++) {
        int t = (first_slot + i) % ring;
        __global const DENOISE_RING_T *plane = frames + t * plane_size;

        for (int dy = -radius; dy <= radius; dy++) {
            for (int dx0 = -radius; dx0 <= radius; dx0 += unroll) {
                if (rows)
                    search_sum_rows(plane, channel_stride, ring_channel, width,
                                    height, x_base, y_base, dx0, dy, rw, rh, nbx,
                                    patch, step, block, weight, ref_tile, sums,
                                    unroll);
                else if (squares)
                    search_sum_squares(plane, channel_stride, ring_channel, width,
                                       height, x_base, y_base, dx0, dy, rw, nbx,
                                       nby, block, ref_tile, sums, unroll);
                else
                    search_sum_blocks(plane, ref_plane, channels, channel_stride,
                                      ring_channel, channel_weights, width,
                                      height, x_base, y_base, dx0, dy, rw, rh,
                                      nbx, block, ref_tile, sums);
                barrier(CLK_LOCAL_MEM_FENCE);

                /* each patch: its pieces along each row, then the rows (in
                 * the squares, exact in any order); a row starts from its
                 * first piece, not from 0.0f + it, the same bits (no piece
                 * is -0.0f) without an addition the compiler must keep */
                for (int u = 0; u < unroll && active; u++) {
                    int cx = x0 + dx0 + u, cy = y0 + dy;
                    __local const float *b = sums + (u * sums_h + sums_y) * sums_w +
                                             sums_x;
                    float ssd = 0.0f;

                    if (dx0 + u > radius ||
                        SEARCH_NOT_CANDIDATE(cx, cy, t))
                        continue;
                    for (int j = 0; j < sums_down; j++) {
                        float row = b[j * sums_w];

                        for (int k = 1; k < sums_across; k++)
                            row += b[j * sums_w + k];
                        ssd += row;
                    }
                    search_offer(dist, pos, keys, shift, ssd,
                                 (i * side + dy + radius) * side + dx0 + u + radius,
                                 t * plane_size + cy * width + cx);
                }
                barrier(CLK_LOCAL_MEM_FENCE);
            }
        }
    }

    if (active && keys)
        search_keys_store(pos, shift, width, plane_size, first_slot, ring, ref_slot,
                          radius, x0, y0, (gy - gy_first) * nx + gx, positions,
                          distances);
    else if (active)
        search_store(dist, pos, (gy - gy_first) * nx + gx, positions, distances);
}

/*
 * An entry point of a work-group search: the body (search_shared, with
 * its kind of pieces and offsets a pass) with the
 * arguments, or with the patch, step and block given as constants (the
 * specialised entry points). The compiler then unrolls every loop over a
 * patch's samples, blocks and rows, and reduces the reference tile's
 * [i % block][i / block] addressing, which otherwise takes integer
 * divisions by a kernel argument in the inner loop
 * (on an H100, `ref` at 4608x3456: 76 -> 50 ms a search with
 * patch_search_rows_single, 43 ms with patch_search_rows_8x3). Separate
 * entry points rather than a branch on the arguments around the body: with
 * the latter, PoCL 3.1 wrote outside the tables.
 */
#define SEARCH_WG_KERNEL(name, body, patch_, step_, block_)                  \
__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))               \
void name(__global const DENOISE_RING_T *frames, int channels,             \
          uint channel_stride, int ring_channel, float4 channel_weights,    \
          int width, int height, int first_slot,                            \
          int nb_frames, int ring, int ref_slot, int patch, int step,       \
          int block, int radius, int nx, int ny, int regular_nx,            \
          int regular_ny, int gy_first, int ref_first,                      \
          __global uint *positions, __global float *distances,              \
          __local float *ref_tile, __local float *sums)                     \
{                                                                            \
    body(frames, channels, channel_stride, ring_channel, channel_weights,    \
         width, height, first_slot, nb_frames, ring, ref_slot, patch_,       \
         step_, block_, radius, nx, ny, regular_nx, regular_ny, gy_first,    \
         ref_first, positions, distances, ref_tile, sums);                   \
}

/* search_shared by blocks with SEARCH_UNROLL offsets a pass; by squares
 * with 7, 8, 9 or 11, the last two with keys too; by rows with
 * SEARCH_ROWS_UNROLL or 7, with or without keys */
#define SEARCH_BLOCKS(...)     search_shared(__VA_ARGS__, UNROLL, 0, SEARCH_PIECES_BLOCKS)
#define SEARCH_SQUARES_7(...)  search_shared(__VA_ARGS__, 7, 0, SEARCH_PIECES_SQUARES)
#define SEARCH_SQUARES_8(...)  search_shared(__VA_ARGS__, 8, 0, SEARCH_PIECES_SQUARES)
#define SEARCH_SQUARES_9(...)  search_shared(__VA_ARGS__, 9, 0, SEARCH_PIECES_SQUARES)
#define SEARCH_SQUARES_9_KEYS(...)  search_shared(__VA_ARGS__, 9, 1, SEARCH_PIECES_SQUARES)
#define SEARCH_SQUARES_11(...) search_shared(__VA_ARGS__, 11, 0, SEARCH_PIECES_SQUARES)
#define SEARCH_SQUARES_11_KEYS(...) search_shared(__VA_ARGS__, 11, 1, SEARCH_PIECES_SQUARES)
#define SEARCH_ROWS(...)       search_shared(__VA_ARGS__, ROWS_UNROLL, 0, SEARCH_PIECES_ROWS)
#define SEARCH_ROWS_KEYS(...)  search_shared(__VA_ARGS__, ROWS_UNROLL, 1, SEARCH_PIECES_ROWS)
#define SEARCH_ROWS_7(...)     search_shared(__VA_ARGS__, 7, 0, SEARCH_PIECES_ROWS)
#define SEARCH_ROWS_7_KEYS(...) search_shared(__VA_ARGS__, 7, 1, SEARCH_PIECES_ROWS)

#ifndef SKIP_patch_search_tiled
SEARCH_WG_KERNEL(patch_search_tiled,   SEARCH_BLOCKS,  patch, step, block)
#endif
#ifndef SKIP_patch_search_squares
SEARCH_WG_KERNEL(patch_search_squares, SEARCH_SQUARES_8, patch, step, block)
#endif
#ifndef SKIP_patch_search_rows
SEARCH_WG_KERNEL(patch_search_rows,    SEARCH_ROWS,    patch, step, block)
#endif
/* blocks of one sample: steps prime to the patch size (nlmeans_gpu's step 1) */
#ifndef SKIP_patch_search_rows_single
SEARCH_WG_KERNEL(patch_search_rows_single, SEARCH_ROWS, patch, step, 1)
#endif
/* 8x8 patches on a step of 4, blocks of 4: the defaults of nlmeans_gpu and of
 * bm3d_gpu's `fast` (windows of 21 and 17: _u11 and _u9, with keys on 8-bit
 * frames) */
#ifndef SKIP_patch_search_squares_8x4
SEARCH_WG_KERNEL(patch_search_squares_8x4, SEARCH_SQUARES_8, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_squares_8x4_u7
SEARCH_WG_KERNEL(patch_search_squares_8x4_u7, SEARCH_SQUARES_7, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_squares_8x4_u9
SEARCH_WG_KERNEL(patch_search_squares_8x4_u9, SEARCH_SQUARES_9, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_squares_8x4_u9_keys
SEARCH_WG_KERNEL(patch_search_squares_8x4_u9_keys, SEARCH_SQUARES_9_KEYS, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_squares_8x4_u11
SEARCH_WG_KERNEL(patch_search_squares_8x4_u11, SEARCH_SQUARES_11, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_squares_8x4_u11_keys
SEARCH_WG_KERNEL(patch_search_squares_8x4_u11_keys, SEARCH_SQUARES_11_KEYS, 8, 4, 4)
#endif
#ifndef SKIP_patch_search_tiled_8x4
SEARCH_WG_KERNEL(patch_search_tiled_8x4,   SEARCH_BLOCKS,  8, 4, 4)
#endif
/* 8x8 patches on a step of 3: bm3d_gpu's `ref` */
#ifndef SKIP_patch_search_rows_8x3
SEARCH_WG_KERNEL(patch_search_rows_8x3,    SEARCH_ROWS,    8, 3, 1)
#endif
/* 5x5 patches on a step of 1: nlmeans_gpu's p=5:step=1 (its window of 21 in
 * 3 passes of 7: _u7) */
#ifndef SKIP_patch_search_rows_5x1
SEARCH_WG_KERNEL(patch_search_rows_5x1,    SEARCH_ROWS,    5, 1, 1)
#endif
#ifndef SKIP_patch_search_rows_5x1_keys
SEARCH_WG_KERNEL(patch_search_rows_5x1_keys, SEARCH_ROWS_KEYS, 5, 1, 1)
#endif
#ifndef SKIP_patch_search_rows_5x1_u7
SEARCH_WG_KERNEL(patch_search_rows_5x1_u7, SEARCH_ROWS_7,  5, 1, 1)
#endif
#ifndef SKIP_patch_search_rows_5x1_u7_keys
SEARCH_WG_KERNEL(patch_search_rows_5x1_u7_keys, SEARCH_ROWS_7_KEYS, 5, 1, 1)
#endif
