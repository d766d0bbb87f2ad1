/*
 * Pieces of the bm3d_gpu golden model shared with the vbm3d_gpu model:
 * transforms, group filtering, aggregation, distance and table rule of
 * doc/bm3d_gpu-algorithm.md. Not a public interface: only the models use it.
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

#ifndef BM3D_MODEL_INTERNAL_H
#define BM3D_MODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define BM3D_PATCH      8                           /* patch size */
#define BM3D_PATCH2     (BM3D_PATCH * BM3D_PATCH)   /* samples per patch */
#define BM3D_MAX_GROUP  32

/*
 * One entry of a table of most similar patches: the patch whose top-left
 * sample is pos = y * width + x in frame 'frame' (always 0 for a still
 * image), at distance 'dist' from the reference.
 */
typedef struct BM3DNeighbor {
    float  dist;    /* sum of squared differences with the reference */
    size_t pos;
    int    frame;
} BM3DNeighbor;

/* Constant tables of one step. */
typedef struct BM3DTables {
    float C[BM3D_PATCH][BM3D_PATCH];    /* 2-D transform matrix (DCT-II or
                                           Bior1.5), C[r][a] */
    float Ci[BM3D_PATCH][BM3D_PATCH];   /* its inverse, Ci[a][r] (for the
                                           DCT: C transposed) */
    float kaiser[BM3D_PATCH][BM3D_PATCH]; /* aggregation window, [a][b] */
    float kaiser1[BM3D_PATCH];            /* its 1-D factor, in float */
    int   dct;          /* C is the DCT, applied by its symmetry */
    int   haar;         /* Haar instead of Walsh-Hadamard along the group */
} BM3DTables;

/* calloc() that exits the program with a message when memory runs out. */
void *bm3d_alloc_or_die(size_t nmemb, size_t size);

/*
 * Tables of one step: 2-D transform Bior1.5 when 'bior', else the DCT;
 * Kaiser window of parameter beta; Haar along the group when 'haar', else
 * Walsh-Hadamard.
 */
void bm3d_init_tables(BM3DTables *t, float beta, int bior, int haar);

/*
 * Reference patches along one axis of 'size' samples: their number, and the
 * position of the g-th (multiples of the step, the last one moved back to
 * the edge); for 8x8 patches, and (_sized) for patches of 'patch' samples,
 * as patch_search.cl places them.
 */
int bm3d_grid_count(int size, int step);
int bm3d_grid_pos(int g, int step, int size);
int bm3d_grid_count_sized(int size, int step, int patch);
int bm3d_grid_pos_sized(int g, int step, int size, int patch);

/*
 * Sum of squared differences of the 8x8 patches at a and b (pitch 'width'):
 * per row, sums of 'block' consecutive squares summed along the row, then
 * the rows summed top to bottom, in float. block = 8 (or 1) is the plain
 * sequential sum of each row. _sized: patches of 'patch' samples.
 */
float bm3d_patch_distance(const float *a, const float *b, int width, int block);
float bm3d_patch_distance_sized(const float *a, const float *b, int width,
                                int patch, int block);

/*
 * The table rule: insert 'cand' into best[0 .. n - 1], sorted by increasing
 * distance, when its distance is strictly smaller than the last entry's; it
 * goes after the entries of equal distance and the last entry drops out.
 */
void bm3d_keep_best(BM3DNeighbor *best, int n, BM3DNeighbor cand);

/*
 * Group size of the table best[0 .. group - 1] (entry 0 the reference): the
 * largest power of two not above the length of the prefix whose entries
 * have dist / 64.0f <= tau.
 */
int bm3d_group_size(const BM3DNeighbor *best, int group, float tau);

/* The noise of the Wiener step: sigma * sqrtf(mu2), in float (sigma itself
 * when mu2 is 1). */
float bm3d_wiener_sigma(float sigma, float mu2);

/*
 * Filtering of one group best[0 .. n - 1] and its aggregation.
 *
 * planes[f]: the frame f of the channel (planes[0] for a still image), of
 * pitch 'width'; each patch z is read in planes[best[z].frame]. Every patch
 * estimate is added into num[f] / weights[f] of its own frame f =
 * best[z].frame, unless f < first_frame (such patches are dropped). stack
 * (and stack_b) hold BM3D_MAX_GROUP * 64 floats of scratch.
 *
 * Step 1: hard threshold thr = lambda * sigma. Step 2: Wiener filtering of
 * the noisy stack with the basic one as oracle and noise sigma (the
 * Wiener sigma, bm3d_wiener_sigma()).
 */
void bm3d_hard_threshold_group(const BM3DTables *t,
                               const float *const *noisy, int width,
                               const BM3DNeighbor *best, int n,
                               int first_frame, float thr, float *stack,
                               int64_t *const *num, int64_t *const *weights);
void bm3d_wiener_group(const BM3DTables *t, const float *const *noisy,
                       const float *const *basic, int width,
                       const BM3DNeighbor *best, int n, int first_frame,
                       float sigma, float *stack_u, float *stack_b,
                       int64_t *const *num, int64_t *const *weights);

/*
 * out = num / den per sample of a width x height plane, den the sum of the
 * patch weights of 'weights' that cover the sample, each times the window
 * K at the sample's place in the patch (bm3d_model.c, window_sum()).
 */
void bm3d_divide(const BM3DTables *t, const int64_t *num,
                 const int64_t *weights, int width, int height, float *out);

/* Each sample rounded to the nearest integer (ties to even) within 0 .. 255:
 * the basic estimate of 8-bit frames (BM3DModelParams.round_basic). */
void bm3d_round_to_integers(float *plane, size_t size);

/* The same within low .. low + 255 (bm3d_normalise_u8's rounding; low is
 * -128 for the opponent channels U and V of RGB's basic estimates). */
void bm3d_round_within(float *plane, size_t size, float low);

/*
 * Colour: the conversion of three planes of 'size' samples to opponent
 * channels and back, per sample, in float, with opponent.h ('out' may be
 * 'in'); opponent_sigma() of opponent.h gives their noise.
 */
void bm3d_planes_to_opponent(const float *const *rgb, size_t size,
                             float *const *out);
void bm3d_planes_to_rgb(const float *const *opp, size_t size,
                        float *const *out);

#endif /* BM3D_MODEL_INTERNAL_H */
