/*
 * Golden model of the nlmeans_gpu filter, written from its specification,
 * doc/nlmeans_gpu-algorithm.md ("the doc" below), and from nothing else: not
 * from the OpenCL kernels, so that it does not share their mistakes. Each
 * step cites the section of the doc it implements; where the doc fixes a
 * float rounding, the code makes that rounding, in that order (built with
 * -ffp-contract=off: a * b + c is two roundings, as the doc requires).
 *
 * It is the improved patch-wise NL-means of Davy & Ehret (2020): for each
 * reference patch on a grid, the n most similar patches of a search window,
 * bias-corrected weights, flat groups replaced by their mean, and a
 * patch-wise aggregation weighted by a tent; the joint colour distance of
 * Goossens et al. (2010) and the opponent colours.
 *
 * Written for reading, not for speed.
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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nlmeans_model.h"

#define MAX_CHANNELS  3
#define MAX_NEIGHBORS 32    /* the filter's option n is 1 .. 32 */

void nlmeans_model_default_params(NLMeansModelParams *par)
{
    /* doc, "Parameters" */
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

static void *alloc_or_exit(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb, size);

    if (!p) {
        fprintf(stderr, "nlmeans_model: out of memory\n");
        exit(1);
    }
    return p;
}

static int min_int(int a, int b)
{
    return a < b ? a : b;
}

static int max_int(int a, int b)
{
    return a > b ? a : b;
}

static int gcd(int a, int b)
{
    while (b) {
        int r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* ---------------------------------------------------------------------- */
/* The channels to filter: nc channels of nb_frames planes each           */
/* ---------------------------------------------------------------------- */

typedef struct Stack {
    const float *const *planes; /* planes[c]: nb_frames planes of channel c */
    int nb_channels;
    int nb_frames;
    int width, height;
} Stack;

/* v_f,c(x, y) of the doc ("Notation and arithmetic") */
static float sample(const Stack *st, int c, int f, int x, int y)
{
    return st->planes[c][((size_t)f * st->height + y) * st->width + x];
}

/* ---------------------------------------------------------------------- */
/* Geometry: doc, "Components, planes and sizes" and "Grid of reference   */
/* patches"                                                               */
/* ---------------------------------------------------------------------- */

typedef struct Geometry {
    int width, height;
    int patch;      /* P = min(p, W, H) */
    int step;       /* s = min(step, P) */
    int radius;     /* R = floor(r / 2) */
    int block;      /* g = gcd(P, s) */
    int nx, ny;     /* grid size */
} Geometry;

static void plane_geometry(int width, int height, const NLMeansModelParams *par,
                           Geometry *geo)
{
    geo->width  = width;
    geo->height = height;
    /* a plane narrower or lower than the patch gets a smaller square patch */
    geo->patch  = min_int(par->patch, min_int(width, height));
    geo->step   = min_int(par->step, geo->patch);
    geo->radius = par->research / 2;
    geo->block  = gcd(geo->patch, geo->step);
    /* nx = ceil((W - P) / s) + 1, likewise ny */
    geo->nx = (width  - geo->patch + geo->step - 1) / geo->step + 1;
    geo->ny = (height - geo->patch + geo->step - 1) / geo->step + 1;
}

/* X(gx) = min(gx * s, W - P): the last column and row moved to the edge */
static int grid_position(int index, int step, int last)
{
    return min_int(index * step, last);
}

/* ---------------------------------------------------------------------- */
/* Float parameters: doc, "Weights", "Flat groups" and "Colour" (joint)   */
/* ---------------------------------------------------------------------- */

typedef struct Weighting {
    int   kernel;                /* enum NLMeansModelKernel */
    int   nb_neighbors;          /* n */
    float omega[MAX_CHANNELS];   /* channel weights of the distance */
    float bias;                  /* 2 sigma_0^2 */
    float inv_scale;             /* 1 / h'^2, or 1 / (3 h'^2) (bisquare) */
    float inv_area;              /* 1 / (nc P^2) */
    int   flat_test;             /* beta > 0 */
    float tau[MAX_CHANNELS];     /* flat thresholds beta sigma_c^2 */
} Weighting;

/*
 * omega_c = (sigma_0^2 + 1/12) / (sigma_c^2 + 1/12), each operation rounded
 * to float (doc, "Colour", Joint); omega_0 = 1 exactly.
 */
static float channel_weight(float sigma0, float sigmac)
{
    const float twelfth = 1.0f / 12.0f;
    float num = sigma0 * sigma0 + twelfth;
    float den = sigmac * sigmac + twelfth;

    return num / den;
}

static void weighting_params(const float *sigma, int nc, const Geometry *geo,
                             const NLMeansModelParams *par, Weighting *wp)
{
    /* doc, "Weights": the parameters are channel 0's */
    const float h = par->h > 0 ? par->h : sigma[0];
    float two_sigma = 2.0f * sigma[0];
    float scale;
    int c;

    wp->kernel       = par->kernel;
    wp->nb_neighbors = par->nb_neighbors;
    wp->bias         = two_sigma * sigma[0];
    if (par->kernel == NLMEANS_MODEL_BISQUARE) {
        float three_h = 3.0f * h;
        scale = three_h * h;
    } else {
        scale = h * h;
    }
    wp->inv_scale = scale > 0 ? 1.0f / scale : INFINITY;
    /* the integer nc P^2 converted to float, then one correctly rounded division */
    wp->inv_area  = 1.0f / (float)(nc * geo->patch * geo->patch);

    /* doc, "Flat groups": tau_c = fl(fl(beta * sigma_c) * sigma_c) */
    wp->flat_test = par->flat > 0;
    for (c = 0; c < nc; c++) {
        float beta_sigma = par->flat * sigma[c];

        wp->omega[c] = c ? channel_weight(sigma[0], sigma[c]) : 1.0f;
        wp->tau[c]   = beta_sigma * sigma[c];
    }
}

/* ---------------------------------------------------------------------- */
/* Search: doc, "Search" and "Temporal window"                            */
/* ---------------------------------------------------------------------- */

typedef struct Neighbor {
    float dist;     /* D, +infinity for an unused entry */
    int   f, x, y;  /* position of the patch: frame, top-left sample */
} Neighbor;

/*
 * D of the candidate (f, x, y) to the reference (t, x0, y0), summed exactly
 * in the doc's grouping: squared differences summed in runs of g samples
 * along a row (Q), the runs of the nc channels weighted and summed (B), the
 * runs of a row summed (row), the rows summed (D); each sum from 0.0f, in
 * order, in float.
 */
static float patch_distance(const Stack *st, const Geometry *geo,
                            const Weighting *wp, int t, int x0, int y0,
                            int f, int x, int y)
{
    const int P = geo->patch, g = geo->block;
    float dist = 0.0f;
    int i, j, k, c;

    for (j = 0; j < P; j++) {
        float row = 0.0f;

        for (k = 0; k < P; k += g) {
            float block = 0.0f;

            for (c = 0; c < st->nb_channels; c++) {
                float q = 0.0f;

                for (i = k; i < k + g; i++) {
                    float d = sample(st, c, t, x0 + i, y0 + j) -
                              sample(st, c, f, x + i, y + j);

                    q = fmaf(d, d, q);          /* fl(d * d + q), one rounding */
                }
                block += wp->omega[c] * q;      /* fl(omega_c * Q) */
            }
            row += block;
        }
        dist += row;
    }
    return dist;
}

/* All n entries at +infinity, at the reference's position (doc, "Search", Table). */
static void table_init(Neighbor *tab, int n, int t, int x0, int y0)
{
    int k;

    for (k = 0; k < n; k++) {
        tab[k].dist = INFINITY;
        tab[k].f    = t;
        tab[k].x    = x0;
        tab[k].y    = y0;
    }
}

/*
 * A candidate enters when D < the last entry's distance (strictly), after
 * every entry whose distance is <= D; the entries after it move down and
 * the last one drops out. Among equal distances the candidate scanned
 * first thus stays first.
 */
static void table_insert(Neighbor *tab, int n, float dist, int f, int x, int y)
{
    int k = n - 1;

    if (!(dist < tab[n - 1].dist))
        return;
    while (k > 0 && tab[k - 1].dist > dist) {
        tab[k] = tab[k - 1];
        k--;
    }
    tab[k].dist = dist;
    tab[k].f    = f;
    tab[k].x    = x;
    tab[k].y    = y;
}

/*
 * The n most similar patches to the reference (t, x0, y0): candidates
 * entirely inside the plane, within R of the reference in x and y (the
 * window clipped at the edges, not shifted), in every frame of the stack
 * (the temporal window lo .. hi), scanned frames first, then rows, then
 * columns, all increasing. The reference itself is an ordinary candidate.
 * Returns m, the number of used (finite) entries.
 */
static int search_neighbors(const Stack *st, const Geometry *geo,
                            const Weighting *wp, int t, int x0, int y0,
                            Neighbor *tab)
{
    const int n = wp->nb_neighbors, R = geo->radius;
    const int xmin = max_int(0, x0 - R), xmax = min_int(geo->width  - geo->patch, x0 + R);
    const int ymin = max_int(0, y0 - R), ymax = min_int(geo->height - geo->patch, y0 + R);
    int f, x, y, m = 0;

    table_init(tab, n, t, x0, y0);
    for (f = 0; f < st->nb_frames; f++)
        for (y = ymin; y <= ymax; y++)
            for (x = xmin; x <= xmax; x++)
                table_insert(tab, n, patch_distance(st, geo, wp, t, x0, y0, f, x, y),
                             f, x, y);
    while (m < n && isfinite(tab[m].dist))
        m++;
    return m;
}

/* ---------------------------------------------------------------------- */
/* Weights: doc, "Weights"                                                */
/* ---------------------------------------------------------------------- */

/* w_k of one entry: 0 unused, 1 below the bias, else the kernel of z. */
static float entry_weight(float dist, const Weighting *wp)
{
    float per_sample, excess, z;

    if (isinf(dist))
        return 0.0f;
    per_sample = dist * wp->inv_area;
    excess     = per_sample - wp->bias;
    if (!(excess > 0))
        return 1.0f;
    z = excess * wp->inv_scale;
    if (wp->kernel == NLMEANS_MODEL_BISQUARE) {
        float one_minus_z;

        if (!(z < 1.0f))
            return 0.0f;
        one_minus_z = 1.0f - z;
        return one_minus_z * one_minus_z;
    }
    return expf(-z);
}

/* w'_k = fl(w_k / Wsum), Wsum summed in order k = 0 .. n - 1 in float. */
static void normalised_weights(const Neighbor *tab, const Weighting *wp,
                               float *weight)
{
    const int n = wp->nb_neighbors;
    float wsum = 0.0f;
    int k;

    for (k = 0; k < n; k++) {
        weight[k] = entry_weight(tab[k].dist, wp);
        wsum += weight[k];
    }
    for (k = 0; k < n; k++)
        weight[k] = weight[k] / wsum;
}

/* ---------------------------------------------------------------------- */
/* Flat groups: doc, "Flat groups"                                        */
/* ---------------------------------------------------------------------- */

/*
 * The sum and the sum of squares of channel c of the patch at entry e: each
 * row's samples in order (squares fused into the sum), then the rows in
 * order.
 */
static void patch_sums(const Stack *st, const Geometry *geo, const Neighbor *e,
                       int c, float *sum, float *sum_sq)
{
    const int P = geo->patch;
    int i, j;

    *sum = *sum_sq = 0.0f;
    for (j = 0; j < P; j++) {
        float row = 0.0f, row_sq = 0.0f;

        for (i = 0; i < P; i++) {
            float v = sample(st, c, e->f, e->x + i, e->y + j);

            row   += v;
            row_sq = fmaf(v, v, row_sq);
        }
        *sum    += row;
        *sum_sq += row_sq;
    }
}

/*
 * Whether channel c of the group (the m used entries) is flat: from its
 * patches' sums, added in entry order in float, its mean mu and its
 * variance, the mean of the squares less mu times the mean; flat when
 * fl(fl(SumSq - fl(mu * Sum)) / Nf) <= tau_c. *mu receives the mean.
 */
static int channel_is_flat(const Stack *st, const Geometry *geo,
                           const Neighbor *tab, int m, int c, float tau,
                           float *mu)
{
    const int P = geo->patch;
    const float nf = (float)(m * P * P);  /* exact: at most 32 * 32^2 */
    float sum = 0.0f, sum_sq = 0.0f, mean;
    int k;

    for (k = 0; k < m; k++) {
        float s, q;

        patch_sums(st, geo, &tab[k], c, &s, &q);
        sum    += s;
        sum_sq += q;
    }
    mean = sum / nf;
    *mu = mean;
    return (sum_sq - mean * sum) / nf <= tau;
}

/*
 * The group is flat when every channel is; the channels are tested in
 * order, stopping at the first that is not. No test when beta = 0.
 */
static int group_is_flat(const Stack *st, const Geometry *geo,
                         const Weighting *wp, const Neighbor *tab, int m,
                         float *mu)
{
    int c;

    if (!wp->flat_test)
        return 0;
    for (c = 0; c < st->nb_channels; c++)
        if (!channel_is_flat(st, geo, tab, m, c, wp->tau[c], &mu[c]))
            return 0;
    return 1;
}

/* ---------------------------------------------------------------------- */
/* Aggregation: doc, "Aggregation"                                        */
/* ---------------------------------------------------------------------- */

/* T(i) = min(i + 1, P - i): the tent, largest at the patch centre */
static int tent(int i, int P)
{
    return min_int(i + 1, P - i);
}

/*
 * Estimate of the reference patch in channel c, est[j * P + i]: mu_c when
 * the group is flat, else the weighted sum over the n entries of the
 * patches' samples. The doc leaves the order and the precision of this sum
 * free (at least float's); the model sums in double, in entry order.
 */
static void estimate_patch(const Stack *st, const Geometry *geo,
                           const Neighbor *tab, const float *weight, int n,
                           int flat, float mu, int c, double *est)
{
    const int P = geo->patch;
    int i, j, k;

    for (j = 0; j < P; j++)
        for (i = 0; i < P; i++) {
            double e = 0.0;

            if (flat) {
                e = mu;
            } else {
                for (k = 0; k < n; k++)
                    e += (double)weight[k] *
                         sample(st, c, tab[k].f, tab[k].x + i, tab[k].y + j);
            }
            est[j * P + i] = e;
        }
}

/*
 * Add the estimate of the reference patch at (x0, y0) into num, and its
 * tent weights into den, at the patch's own place. den is the same for
 * every channel, so it is added with channel 0 only.
 */
static void scatter_patch(const Geometry *geo, const double *est, int x0, int y0,
                          double *num, double *den)
{
    const int P = geo->patch;
    int i, j;

    for (j = 0; j < P; j++)
        for (i = 0; i < P; i++) {
            const size_t o = (size_t)(y0 + j) * geo->width + x0 + i;
            const double b = tent(i, P) * tent(j, P);   /* an exact integer */

            num[o] += b * est[j * P + i];
            if (den)
                den[o] += b;
        }
}

/* ---------------------------------------------------------------------- */
/* The whole plane: every reference patch of the grid                     */
/* ---------------------------------------------------------------------- */

/*
 * Filter frame t of the stack: for each reference patch of the grid (in
 * grid order, rows then columns), search, weigh, test for flatness,
 * estimate and aggregate; then out_c = num_c / den (doc, "Aggregation"),
 * computed in double and rounded once to float.
 */
static void filter_stack(const Stack *st, int t, const float *sigma,
                         const NLMeansModelParams *par, float *const *dst)
{
    const int nc = st->nb_channels;
    const size_t area = (size_t)st->width * st->height;
    Geometry geo;
    Weighting wp;
    Neighbor tab[MAX_NEIGHBORS];
    float weight[MAX_NEIGHBORS], mu[MAX_CHANNELS];
    double *num[MAX_CHANNELS], *den, *est;
    int gx, gy, c, m, flat;
    size_t o;

    plane_geometry(st->width, st->height, par, &geo);
    weighting_params(sigma, nc, &geo, par, &wp);

    for (c = 0; c < nc; c++)
        num[c] = alloc_or_exit(area, sizeof(*num[c]));
    den = alloc_or_exit(area, sizeof(*den));
    est = alloc_or_exit((size_t)geo.patch * geo.patch, sizeof(*est));

    for (gy = 0; gy < geo.ny; gy++) {
        const int y0 = grid_position(gy, geo.step, geo.height - geo.patch);

        for (gx = 0; gx < geo.nx; gx++) {
            const int x0 = grid_position(gx, geo.step, geo.width - geo.patch);

            m = search_neighbors(st, &geo, &wp, t, x0, y0, tab);
            normalised_weights(tab, &wp, weight);
            flat = group_is_flat(st, &geo, &wp, tab, m, mu);
            for (c = 0; c < nc; c++) {
                estimate_patch(st, &geo, tab, weight, wp.nb_neighbors, flat,
                               mu[c], c, est);
                scatter_patch(&geo, est, x0, y0, num[c], c ? NULL : den);
            }
        }
    }

    /* every sample is covered by at least one reference patch: den >= 1 */
    for (c = 0; c < nc; c++)
        for (o = 0; o < area; o++)
            dst[c][o] = (float)(num[c][o] / den[o]);

    for (c = 0; c < nc; c++)
        free(num[c]);
    free(den);
    free(est);
}

/* ---------------------------------------------------------------------- */
/* Interface                                                              */
/* ---------------------------------------------------------------------- */

void nlmeans_model_channels(const float *const *frames, int nb_channels,
                            int nb_frames, int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst)
{
    /*
     * doc, "Colour", Joint: channel 0 has sigma, channels 1 and 2 csigma
     * when it is >= 0 (the chroma of YUV), else sigma.
     */
    const Stack st = { frames, nb_channels, nb_frames, width, height };
    float sigma[MAX_CHANNELS];
    int c;

    if (nb_channels < 1 || nb_channels > MAX_CHANNELS ||
        par->nb_neighbors < 1 || par->nb_neighbors > MAX_NEIGHBORS ||
        par->patch < 1 || par->step < 1 || par->research < 1) {
        fprintf(stderr, "nlmeans_model: unsupported parameters\n");
        exit(1);
    }
    for (c = 0; c < nb_channels; c++)
        sigma[c] = c && par->csigma >= 0 ? par->csigma : par->sigma;
    filter_stack(&st, ref_frame, sigma, par, dst);
}

void nlmeans_model_plane(const float *frames, int nb_frames, int ref_frame,
                         int width, int height, const NLMeansModelParams *par,
                         float *dst)
{
    const float *const planes[1] = { frames };
    float *const out[1] = { dst };

    nlmeans_model_channels(planes, 1, nb_frames, ref_frame, width, height,
                           par, out);
}

/* doc, "Colour", Opponent: R, G, B to Y, U, V, each operation in float */
static void opponent_forward(float r, float g, float b, float *yuv)
{
    const float third = 1.0f / 3.0f;
    float r_plus_g = r + g, r_plus_b = r + b, two_g = 2.0f * g;

    yuv[0] = (r_plus_g + b) * third;
    yuv[1] = (r - b) * 0.5f;
    yuv[2] = (r_plus_b - two_g) * 0.25f;
}

/* doc, "Colour", Opponent: the inverse, after the aggregation */
static void opponent_inverse(float y, float u, float v, float *rgb)
{
    const float two_thirds = 2.0f / 3.0f, four_thirds = 4.0f / 3.0f;
    float v_two_thirds = v * two_thirds, v_four_thirds = v * four_thirds;
    float m = y + v_two_thirds;

    rgb[0] = m + u;
    rgb[1] = y - v_four_thirds;
    rgb[2] = m - u;
}

void nlmeans_model_opponent(const float *const *frames, int nb_frames,
                            int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst)
{
    /*
     * the noise of the opponent channels, computed in double and rounded
     * to float: sigma sqrt(1/3), sigma sqrt(1/2), sigma sqrt(3/8)
     */
    const double factor[3] = { sqrt(1.0 / 3.0), sqrt(1.0 / 2.0), sqrt(3.0 / 8.0) };
    const size_t area = (size_t)width * height, total = area * nb_frames;
    float *opp[3], *out[3];
    size_t o;
    int c;

    for (c = 0; c < 3; c++) {
        opp[c] = alloc_or_exit(total, sizeof(*opp[c]));
        out[c] = alloc_or_exit(area, sizeof(*out[c]));
    }
    /* right after loading, in every frame of the window */
    for (o = 0; o < total; o++) {
        float yuv[3];

        opponent_forward(frames[0][o], frames[1][o], frames[2][o], yuv);
        for (c = 0; c < 3; c++)
            opp[c][o] = yuv[c];
    }
    /*
     * each channel on its own, with P and R from p and r, its own sigma,
     * h' = h when h > 0 else that sigma (nlmeans_model_plane() does so);
     * csigma does not apply
     */
    for (c = 0; c < 3; c++) {
        NLMeansModelParams pc = *par;

        pc.sigma  = (float)(par->sigma * factor[c]);
        pc.csigma = -1.0f;
        nlmeans_model_plane(opp[c], nb_frames, ref_frame, width, height, &pc,
                            out[c]);
    }
    for (o = 0; o < area; o++) {
        float rgb[3];

        opponent_inverse(out[0][o], out[1][o], out[2][o], rgb);
        for (c = 0; c < 3; c++)
            dst[c][o] = rgb[c];
    }
    for (c = 0; c < 3; c++) {
        free(opp[c]);
        free(out[c]);
    }
}
