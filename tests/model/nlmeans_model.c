/*
 * Golden model of the nlmeans_gpu filter: improved patch-wise NL-means
 * (Davy & Ehret 2020, Algorithms 1 and 4), written for reading rather than
 * for speed.
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
 * It computes what kernels/nlmeans_gpu.cl computes, with the parameters that
 * libavfilter/vf_nlmeans_gpu.c derives from the options.
 *
 * Up to the weights, every value is computed in float in the order of the
 * kernel, so that the patch distances, and hence the ranking of the
 * neighbours, are bit-identical: build with -ffp-contract=off (the kernel
 * has FP_CONTRACT OFF) and on a target that evaluates float expressions in
 * float. The weights use expf(), which may differ from the device's exp()
 * by an ulp or so. The estimates and the aggregation are then computed in
 * double; the kernel uses float there, so results may differ by a rounding
 * step after quantisation, rarely.
 */

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nlmeans_model.h"
#include "opponent.h"

#define MAX_CHANNELS 3

/* Noise variance added to every channel's when they are weighted (that of
 * rounding to 8 bits), as ROUNDING_VARIANCE of the filter. */
#define ROUNDING_VARIANCE (1.0f / 12.0f)

/* h'^2 / h^2 of the bisquare kernel, as BISQUARE_SCALE of the filter. */
#define BISQUARE_SCALE 3.0f

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "float expressions must be evaluated in float (e.g. -msse2 -mfpmath=sse on x86)"
#endif

/* A neighbour of a reference patch: squared distance and top-left sample. */
typedef struct Neighbor {
    float  dist;
    size_t pos;     /* index in 'frames': t * width * height + y * width + x */
} Neighbor;

void nlmeans_model_default_params(NLMeansModelParams *par)
{
    par->sigma        = 10.0f;
    par->csigma       = -1.0f;
    par->h            = 0.0f;
    par->patch        = 8;
    par->step         = 4;
    par->research     = 21;
    par->nb_neighbors = 16;
    par->flat         = 1.05f;
    par->kernel       = NLMEANS_MODEL_EXP;
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

static void *alloc_or_die(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size);

    if (!p) {
        fprintf(stderr, "nlmeans_model: out of memory\n");
        exit(1);
    }
    return p;
}

/*
 * Position of grid point g on one axis: multiples of the step, the last one
 * moved back so that the patch ends at the frame's edge.
 */
static int grid_pos(int g, int step, int size, int patch)
{
    return imin(g * step, size - patch);
}

/*
 * Distance of two patches, at offsets a and b of every channel, grouped as
 * the kernels sum it: for each row, sums of g consecutive squares
 * (g = gcd(patch, step)), each multiplied by its channel's weight and added
 * over the channels in order, these summed along the row, then the rows
 * summed top to bottom. With one channel of weight 1 it is the plain sum of
 * squared differences.
 */
static float patch_distance(const float *const *channels, int nb_channels,
                            const float *weight, size_t a, size_t b,
                            int width, int patch, int g)
{
    float ssd = 0.0f;
    int c, i, j, k;

    for (j = 0; j < patch; j++) {
        float row = 0.0f;
        for (k = 0; k < patch; k += g) {
            float blocks = 0.0f;
            for (c = 0; c < nb_channels; c++) {
                const float *pa = channels[c] + a + (size_t)j * width;
                const float *pb = channels[c] + b + (size_t)j * width;
                float block = 0.0f;
                for (i = k; i < k + g; i++) {
                    float d = pa[i] - pb[i];
                    block += d * d;
                }
                blocks += weight[c] * block;
            }
            row += blocks;
        }
        ssd += row;
    }
    return ssd;
}

/*
 * Weight of a neighbour whose squared distance per sample exceeds the noise
 * bias by 'excess'; inv_scale is 1 / h^2 (exp) or 1 / (3 h^2) (bisquare).
 */
static float kernel_weight(float excess, float inv_scale, int kernel)
{
    float u;

    if (!(excess > 0.0f))
        return 1.0f;
    u = excess * inv_scale;
    if (kernel == NLMEANS_MODEL_BISQUARE)
        return u < 1.0f ? (1.0f - u) * (1.0f - u) : 0.0f;
    return expf(-u);
}

/*
 * Whether the variance of the samples of one channel of the group is at
 * most 'threshold', and their mean; in float, in the kernel's order.
 */
static int flat_channel(const float *plane, const Neighbor *best, int count,
                        int width, int patch, float threshold, float *mean_out)
{
    float n = (float)(count * patch * patch);
    float sum = 0.0f, var = 0.0f, mean;
    int i, j, k;

    for (k = 0; k < count; k++)
        for (j = 0; j < patch; j++)
            for (i = 0; i < patch; i++)
                sum += plane[best[k].pos + (size_t)j * width + i];
    mean = sum / n;
    for (k = 0; k < count; k++) {
        for (j = 0; j < patch; j++) {
            for (i = 0; i < patch; i++) {
                float d = plane[best[k].pos + (size_t)j * width + i] - mean;
                var += d * d;
            }
        }
    }
    *mean_out = mean;
    return var / n <= threshold;
}

/*
 * Insert a candidate into the table of the n best neighbours, sorted by
 * increasing distance. Strict comparisons: a candidate goes after the
 * entries of equal distance, which were found earlier in the scan, and the
 * entries after it keep their order.
 */
static void keep_best(Neighbor *best, int n, float dist, size_t pos)
{
    int k = n - 1;

    if (!(dist < best[n - 1].dist))
        return;
    while (k > 0 && dist < best[k - 1].dist) {
        best[k] = best[k - 1];
        k--;
    }
    best[k].dist = dist;
    best[k].pos  = pos;
}

void nlmeans_model_channels(const float *const *frames, int nb_channels,
                            int nb_frames, int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst)
{
    /* Parameters, derived as by the host code, in float like there. */
    const int   patch  = imin(par->patch, imin(width, height));
    const int   step   = imin(par->step, patch);
    const int   radius = par->research / 2;
    const int   nb     = par->nb_neighbors;
    const int   nx     = (width  - patch + step - 1) / step + 1;
    const int   ny     = (height - patch + step - 1) / step + 1;
    const float sigma  = par->sigma;
    const float h      = par->h > 0 ? par->h : sigma;
    const float bias   = 2.0f * sigma * sigma;
    const float scale  = par->kernel == NLMEANS_MODEL_BISQUARE ?
                         BISQUARE_SCALE * h * h : h * h;
    const float inv_scale = scale > 0 ? 1.0f / scale : INFINITY;
    const float inv_area  = 1.0f / (float)(nb_channels * patch * patch);
    const int   block  = gcd(patch, step);
    const size_t plane_size = (size_t)width * height;
    float weight_c[MAX_CHANNELS], flat_threshold[MAX_CHANNELS];

    Neighbor *best = alloc_or_die(nb, sizeof(*best));
    float *weight  = alloc_or_die(nb, sizeof(*weight));
    double *num    = alloc_or_die(nb_channels * plane_size, sizeof(*num));
    double *den    = alloc_or_die(plane_size, sizeof(*den));
    double *est    = alloc_or_die((size_t)nb_channels * patch * patch, sizeof(*est));
    size_t p;
    int gx, gy, t, cx, cy, c, i, j, k;

    /* Channel c's noise, its weight in the distance and its flat
     * threshold. */
    for (c = 0; c < nb_channels; c++) {
        float sigma_c = c && par->csigma >= 0 ? par->csigma : sigma;

        weight_c[c] = (sigma * sigma + ROUNDING_VARIANCE) /
                      (sigma_c * sigma_c + ROUNDING_VARIANCE);
        flat_threshold[c] = par->flat > 0 ? par->flat * sigma_c * sigma_c : -1.0f;
    }

    for (gy = 0; gy < ny; gy++) {
        for (gx = 0; gx < nx; gx++) {
            const int x0 = grid_pos(gx, step, width,  patch);
            const int y0 = grid_pos(gy, step, height, patch);
            const size_t ref_pos = ref_frame * plane_size + (size_t)y0 * width + x0;
            const int xs = imax(0, x0 - radius);
            const int xe = imin(width - patch, x0 + radius);
            const int ys = imax(0, y0 - radius);
            const int ye = imin(height - patch, y0 + radius);
            float wsum = 0.0f;
            float means[MAX_CHANNELS];
            int count = 0, flat = 0;

            /* 1. The nb most similar patches of the window, in all frames,
             *    on the distance summed over the channels. */
            for (k = 0; k < nb; k++) {
                best[k].dist = INFINITY;
                best[k].pos  = ref_pos;
            }
            for (t = 0; t < nb_frames; t++) {
                for (cy = ys; cy <= ye; cy++) {
                    for (cx = xs; cx <= xe; cx++) {
                        size_t cpos = t * plane_size + (size_t)cy * width + cx;
                        float dist  = patch_distance(frames, nb_channels,
                                                     weight_c, ref_pos, cpos,
                                                     width, patch, block);
                        keep_best(best, nb, dist, cpos);
                    }
                }
            }

            /* 2. Weights of the bias-corrected d^2 per sample:
             *    exp(-(d^2 - 2 sigma^2)+ / h^2) or the bisquare. */
            for (k = 0; k < nb && best[k].dist != INFINITY; k++) {
                weight[k] = kernel_weight(best[k].dist * inv_area - bias,
                                          inv_scale, par->kernel);
                wsum += weight[k];
                count++;
            }
            for (k = 0; k < count; k++)
                weight[k] = weight[k] / wsum;

            /* 3. Flat group: in every channel the variance of all its
             *    samples is at most flat * sigma_c^2; each channel's
             *    estimate is then its mean. */
            flat = flat_threshold[0] >= 0.0f;
            for (c = 0; c < nb_channels && flat; c++)
                flat = flat_channel(frames[c], best, count, width, patch,
                                    flat_threshold[c], &means[c]);

            /* 4. Estimate of the reference patch in every channel: the
             *    weighted mean of the neighbours, or the mean of a flat
             *    group. */
            for (c = 0; c < nb_channels; c++) {
                for (j = 0; j < patch; j++) {
                    for (i = 0; i < patch; i++) {
                        double e = 0.0;

                        if (flat) {
                            e = means[c];
                        } else {
                            for (k = 0; k < count; k++)
                                e += (double)weight[k] *
                                     frames[c][best[k].pos + (size_t)j * width + i];
                        }
                        est[((size_t)c * patch + j) * patch + i] = e;
                    }
                }
            }

            /* 5. Aggregation with a separable tent weight, largest at the
             *    patch centre. */
            for (j = 0; j < patch; j++) {
                for (i = 0; i < patch; i++) {
                    double b = (double)imin(j + 1, patch - j) * imin(i + 1, patch - i);
                    size_t q = (size_t)(y0 + j) * width + x0 + i;

                    for (c = 0; c < nb_channels; c++)
                        num[c * plane_size + q] += b * est[((size_t)c * patch + j) * patch + i];
                    den[q] += b;
                }
            }
        }
    }

    /* Every sample is covered by at least one patch of the grid. */
    for (c = 0; c < nb_channels; c++)
        for (p = 0; p < plane_size; p++)
            dst[c][p] = (float)(num[c * plane_size + p] / den[p]);

    free(best);
    free(weight);
    free(num);
    free(den);
    free(est);
}

void nlmeans_model_plane(const float *frames, int nb_frames, int ref_frame,
                         int width, int height, const NLMeansModelParams *par,
                         float *dst)
{
    nlmeans_model_channels(&frames, 1, nb_frames, ref_frame, width, height,
                           par, &dst);
}

void nlmeans_model_opponent(const float *const *frames, int nb_frames,
                            int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst)
{
    const size_t plane_size = (size_t)width * height;
    const size_t n = plane_size * nb_frames;
    float *opp[3];
    size_t p;
    int c;

    for (c = 0; c < 3; c++)
        opp[c] = alloc_or_die(n, sizeof(*opp[c]));
    for (p = 0; p < n; p++) {
        float o[3];

        opponent_forward(frames[0][p], frames[1][p], frames[2][p], o);
        for (c = 0; c < 3; c++)
            opp[c][p] = o[c];
    }
    for (c = 0; c < 3; c++) {
        NLMeansModelParams plane = *par;

        plane.sigma = opponent_sigma(par->sigma, c);
        nlmeans_model_plane(opp[c], nb_frames, ref_frame, width, height,
                            &plane, dst[c]);
    }
    for (p = 0; p < plane_size; p++) {
        float rgb[3];

        opponent_inverse(dst[0][p], dst[1][p], dst[2][p], rgb);
        for (c = 0; c < 3; c++)
            dst[c][p] = rgb[c];
    }
    for (c = 0; c < 3; c++)
        free(opp[c]);
}
