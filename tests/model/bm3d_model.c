/*
 * Golden model of the bm3d_gpu filter: BM3D (Dabov et al. 2007) as Davy &
 * Ehret (2020) implement it on GPUs, exactly as doc/bm3d_gpu-algorithm.md
 * specifies it, written for reading rather than for speed.
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
 * Every value up to the aggregation is computed in float, in the order
 * stated at each step, so that a kernel that follows the same order gets
 * bit-identical results: build with -ffp-contract=off (no fused
 * multiply-add; the kernels have FP_CONTRACT OFF) and on a target that
 * evaluates float expressions in float. Only the two constant tables are
 * computed in double and then rounded to float: the DCT matrix C and the
 * Kaiser window K.
 *
 * Conventions: a patch P(a, b) is the 8x8 block whose top-left sample is p:
 * a is the row (y offset), b the column (x offset), P(a, b) = u[p + a * width
 * + b]. The 2-D coefficients X(r, c) have r the vertical frequency (over a)
 * and c the horizontal one (over b); "row-major" means r outer, c inner. A
 * group is a stack of n patches, z = 0 .. n - 1, stored as 64 floats per
 * patch, X(z, r, c) at z * 64 + r * 8 + c.
 *
 * The aggregation is in 64-bit fixed point with 32 fraction bits, like the
 * kernels' integer atomics, so its sums do not depend on the order.
 *
 * Colour (joint grouping, CBM3D): the three channels share the groups found
 * on channel 0; RGB is filtered as opponent channels (bm3d_model_color()).
 *
 * The pieces that the video model (vbm3d_model.c) shares are declared in
 * bm3d_model_internal.h: a group's patches may lie in several frames
 * (BM3DNeighbor.frame) and aggregate into the accumulators of their own
 * frame; a still image is frame 0.
 */

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bm3d_model.h"
#include "bm3d_model_internal.h"
#include "opponent.h"

#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "float expressions must be evaluated in float (e.g. -msse2 -mfpmath=sse on x86)"
#endif

#define K          BM3D_PATCH
#define K2         BM3D_PATCH2
#define MAX_GROUP  BM3D_MAX_GROUP

static const double pi = 3.14159265358979323846;

int bm3d_model_profile(BM3DModelParams *par, const char *name)
{
    static const struct {
        const char *name;
        BM3DModelStep steps[2];
        int transform, haar;
        float mu2;
    } profiles[] = {
        /*          step window group tau                                  DCT Haar mu2 */
        { "fast", { { 4, 21, 16, 3000.0f }, { 4, 17, 16, 400.0f } },        1,  1,  1.0f },
        { "ref",  { { 3, 39, 16, 3000.0f }, { 3, 39, 32, 400.0f } },        0,  1,  0.9f },
    };
    size_t i;

    for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
        if (!strcmp(name, profiles[i].name)) {
            par->sigma    = 10.0f;
            par->lambda   = 2.7f;
            par->mu2      = profiles[i].mu2;
            par->beta     = 2.0f;
            par->transform = profiles[i].transform;
            par->haar      = profiles[i].haar;
            par->steps[0] = profiles[i].steps[0];
            par->steps[1] = profiles[i].steps[1];
            par->estim    = 0;
            par->round_basic = 0;
            return 0;
        }
    }
    return -1;
}

const char *bm3d_model_check(const BM3DModelParams *par, int width, int height)
{
    int s;

    if (width < K || height < K)
        return "frames smaller than 8x8 are refused";
    if (!(par->sigma >= 0.0f && par->sigma <= 255.0f))
        return "sigma must be in 0..255";
    if (!(par->lambda >= 0.0f && par->lambda <= 100.0f))
        return "lambda must be in 0..100";
    if (!(par->mu2 >= 0.0f && par->mu2 <= 100.0f))
        return "mu2 must be in 0..100";
    if (!(par->beta >= 0.0f && par->beta <= 100.0f))
        return "beta must be in 0..100";
    if (par->estim != 0 && par->estim != 1)
        return "estim must be 0 (final) or 1 (basic)";
    for (s = 0; s < 2; s++) {
        const BM3DModelStep *st = &par->steps[s];

        /* a step above the patch size would leave samples uncovered */
        if (st->step < 1 || st->step > K)
            return "step must be in 1..8";
        if (st->window < 1 || st->window > 199)
            return "window must be in 1..199";
        if (st->group < 1 || st->group > MAX_GROUP ||
            (st->group & (st->group - 1)))
            return "group must be a power of two in 1..32";
        if (!(st->tau >= 0.0f && st->tau <= 1e9f))
            return "tau must be in 0..1e9";
    }
    return NULL;
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

void *bm3d_alloc_or_die(size_t nmemb, size_t size)
{
    void *p = calloc(nmemb ? nmemb : 1, size);

    if (!p) {
        fprintf(stderr, "bm3d_model: out of memory\n");
        exit(1);
    }
    return p;
}

/*
 * Modified Bessel function of the first kind, order 0, in double: the
 * series sum over k >= 0 of ((x / 2)^k / k!)^2, summed until the terms no
 * longer change the sum.
 */
static double bessel_i0(double x)
{
    double q = x / 2.0, term = 1.0, sum = 1.0;
    int k;

    for (k = 1; k < 1000; k++) {
        double prev = sum;

        term *= q / k;
        sum  += term * term;
        if (sum == prev)
            break;
    }
    return sum;
}

/*
 * The constant tables, computed in double then rounded to float:
 * C(r, a) = alpha(r) cos(pi (2a + 1) r / 16), alpha(0) = sqrt(1/8),
 * alpha(r > 0) = sqrt(2/8) (orthonormal DCT-II); Kaiser window of length 8,
 * w(i) = I0(beta sqrt(1 - t^2)) / I0(beta) with t = 2.0 * i / 7.0 - 1.0,
 * and K(a, b) = (float)(w(a) * w(b)).
 */
/*
 * The 8-point Bior1.5 transform, three levels, periodic
 * (doc/bm3d_gpu-algorithm.md): at each level of length L,
 * lo[k] = sum over n of h[n] x[(2k + n - 4) mod L], hi[k] likewise with g;
 * output order lo3, hi3, hi2, hi1. In double.
 */
static void bior15_matrix(double F[K][K])
{
    static const double h[10] = { 3, -3, -22, 22, 128, 128, 22, -22, -3, 3 };
    static const double g[10] = { 0, 0, 0, 0, -128, 128, 0, 0, 0, 0 };
    int col, len, k, n, r;

    for (col = 0; col < K; col++) {
        double x[K] = { 0 }, out[K];

        x[col] = 1.0;
        for (len = K; len > 1; len /= 2) {
            double lo[K / 2], hi[K / 2];
            for (k = 0; k < len / 2; k++) {
                lo[k] = hi[k] = 0.0;
                for (n = 0; n < 10; n++) {
                    int i = ((2 * k + n - 4) % len + len) % len;
                    lo[k] += h[n] / (128.0 * sqrt(2.0)) * x[i];
                    hi[k] += g[n] / (128.0 * sqrt(2.0)) * x[i];
                }
            }
            for (k = 0; k < len / 2; k++) {
                out[len / 2 + k] = hi[k];
                x[k] = lo[k];
            }
        }
        out[0] = x[0];
        for (r = 0; r < K; r++)
            F[r][col] = out[r];
    }
}

/* Inverse of an 8x8 matrix in double (Gauss-Jordan, partial pivoting). */
static void invert8(double F[K][K], double I[K][K])
{
    double m[K][2 * K];
    int r, c, k, p;

    for (r = 0; r < K; r++)
        for (c = 0; c < 2 * K; c++)
            m[r][c] = c < K ? F[r][c] : (c - K == r);
    for (c = 0; c < K; c++) {
        p = c;
        for (r = c + 1; r < K; r++)
            if (fabs(m[r][c]) > fabs(m[p][c]))
                p = r;
        for (k = 0; k < 2 * K; k++) {
            double t = m[c][k];
            m[c][k] = m[p][k];
            m[p][k] = t;
        }
        for (r = 0; r < K; r++) {
            double f = m[r][c] / m[c][c];
            if (r == c)
                continue;
            for (k = 0; k < 2 * K; k++)
                m[r][k] -= f * m[c][k];
        }
    }
    for (r = 0; r < K; r++)
        for (c = 0; c < K; c++)
            I[r][c] = m[r][K + c] / m[r][r];
}

void bm3d_init_tables(BM3DTables *t, float beta, int bior, int haar)
{
    double F[K][K], I[K][K];
    double w[K];
    int r, a, b;

    if (bior) {
        bior15_matrix(F);
        invert8(F, I);
    } else {
        for (r = 0; r < K; r++) {
            double alpha = r ? sqrt(2.0 / K) : sqrt(1.0 / K);
            for (a = 0; a < K; a++)
                F[r][a] = alpha * cos(pi * (2 * a + 1) * r / 16.0);
        }
        for (r = 0; r < K; r++)
            for (a = 0; a < K; a++)
                I[a][r] = F[r][a];
    }
    for (r = 0; r < K; r++) {
        for (a = 0; a < K; a++) {
            t->C[r][a]  = (float)F[r][a];
            t->Ci[r][a] = (float)I[r][a];
        }
    }
    for (a = 0; a < K; a++) {
        double x = 2.0 * a / (K - 1.0) - 1.0;
        w[a] = bessel_i0(beta * sqrt(1.0 - x * x)) / bessel_i0(beta);
    }
    for (a = 0; a < K; a++)
        for (b = 0; b < K; b++)
            t->kaiser[a][b] = (float)(w[a] * w[b]);
    for (a = 0; a < K; a++)
        t->kaiser1[a] = (float)w[a];
    t->dct  = !bior;
    t->haar = haar;
}

/*
 * Grid position of reference patch g on one axis: multiples of the step,
 * the last one moved back so that the patch ends at the frame's edge.
 */
int bm3d_grid_pos_sized(int g, int step, int size, int patch)
{
    return imin(g * step, size - patch);
}

int bm3d_grid_pos(int g, int step, int size)
{
    return bm3d_grid_pos_sized(g, step, size, K);
}

/* ceil((size - patch) / step) + 1 positions: every sample is covered. */
int bm3d_grid_count_sized(int size, int step, int patch)
{
    return (size - patch + step - 1) / step + 1;
}

int bm3d_grid_count(int size, int step)
{
    return bm3d_grid_count_sized(size, step, K);
}

/*
 * Sum of squared differences of two patches, grouped as nlmeans_gpu sums
 * it (patch_distance() of nlmeans_model.c with patch 8): for each row, sums
 * of 'block' consecutive squares (block = gcd(8, step)), these summed along
 * the row, then the rows summed top to bottom; every sum starts at 0.0f and
 * d = a - b.
 */
float bm3d_patch_distance_sized(const float *a, const float *b, int width,
                                int patch, int block)
{
    float ssd = 0.0f;
    int i, j, k;

    for (j = 0; j < patch; j++) {
        float row = 0.0f;
        for (k = 0; k < patch; k += block) {
            float sum = 0.0f;
            for (i = k; i < k + block; i++) {
                float d = a[j * width + i] - b[j * width + i];
                sum = fmaf(d, d, sum);
            }
            row += sum;
        }
        ssd += row;
    }
    return ssd;
}

float bm3d_patch_distance(const float *a, const float *b, int width,
                          int block)
{
    return bm3d_patch_distance_sized(a, b, width, K, block);
}

/*
 * Insert a candidate into the table of the n best patches, sorted by
 * increasing distance. Strict comparisons: a candidate goes after the
 * entries of equal distance, which were found earlier in the scan (or are
 * the reference), and the entries after it keep their order.
 */
void bm3d_keep_best(BM3DNeighbor *best, int n, BM3DNeighbor cand)
{
    int k = n - 1;

    if (!(cand.dist < best[n - 1].dist))
        return;
    while (k > 0 && cand.dist < best[k - 1].dist) {
        best[k] = best[k - 1];
        k--;
    }
    best[k] = cand;
}

/*
 * Group size of a table whose entry 0 is the reference: the prefix of the
 * entries with dist / 64.0f <= tau (float), cut down to the largest power
 * of two not above its length (at least 1: the reference).
 */
int bm3d_group_size(const BM3DNeighbor *best, int group, float tau)
{
    int count = 0, n;

    while (count < group && best[count].dist / 64.0f <= tau)
        count++;
    for (n = 1; 2 * n <= count; n *= 2)
        ;
    return n;
}

/*
 * Block matching for the reference patch at (x0, y0) of 'plane': fills
 * best[0 .. group - 1] and returns the group size n.
 *
 * The table starts with the reference at distance 0 in slot 0 and the other
 * slots at distance +infinity (position: the reference's). The candidates
 * are the patches inside the plane whose top-left sample is within 'radius'
 * of the reference's in x and y, the reference itself excepted, scanned row
 * by row (y outer, x inner, increasing). The group size is
 * bm3d_group_size() of the table.
 */
static int match_group(const float *plane, int width, int height,
                       int x0, int y0, const BM3DModelStep *st, BM3DNeighbor *best)
{
    const int radius = st->window / 2;
    const int block  = gcd(K, st->step);
    const size_t ref_pos = (size_t)y0 * width + x0;
    const int xs = imax(0, x0 - radius);
    const int xe = imin(width - K, x0 + radius);
    const int ys = imax(0, y0 - radius);
    const int ye = imin(height - K, y0 + radius);
    int cx, cy, k;

    for (k = 0; k < st->group; k++) {
        best[k].dist  = INFINITY;
        best[k].pos   = ref_pos;
        best[k].frame = 0;
    }
    best[0].dist = 0.0f;

    for (cy = ys; cy <= ye; cy++) {
        for (cx = xs; cx <= xe; cx++) {
            BM3DNeighbor cand;

            cand.pos   = (size_t)cy * width + cx;
            cand.frame = 0;
            if (cand.pos == ref_pos)
                continue;
            cand.dist = bm3d_patch_distance(plane + ref_pos, plane + cand.pos,
                                            width, block);
            bm3d_keep_best(best, st->group, cand);
        }
    }
    return bm3d_group_size(best, st->group, st->tau);
}

/*
 * The 8-term sums of the 2-D transforms: sum over i < 8 of m[i] x[i * stride],
 * the first product, then each following term added by fmaf() (one
 * rounding), in increasing i.
 */
static float dot8(const float *m, const float *x, int stride)
{
    float s = m[0] * x[0];

    for (int i = 1; i < K; i++)
        s = fmaf(m[i], x[i * stride], s);
    return s;
}

/* The same over the 4 terms i = first, first + step, .. < 8 (step 1 or 2). */
static float dot4(const float *m, const float *x, int first, int step)
{
    float s = m[first] * x[first];

    for (int i = first + step; i < first + 4 * step; i += step)
        s = fmaf(m[i], x[i], s);
    return s;
}

/*
 * One line of the forward transform: y[j] = sum over i of C(j, i) x[i * stride].
 * Bior1.5: dot8(). The DCT, by its symmetry (row j of C is symmetric about
 * its middle for even j, antisymmetric for odd j): with u[i] = x[i] +
 * x[7 - i] and v[i] = x[i] - x[7 - i] for i < 4, y[j] = dot4 of C(j, 0..3)
 * with u for even j, with v for odd j.
 */
static void forward1d(const BM3DTables *t, const float *x, int stride, float *y)
{
    float uv[2][K / 2];

    if (!t->dct) {
        for (int j = 0; j < K; j++)
            y[j] = dot8(t->C[j], x, stride);
        return;
    }
    for (int i = 0; i < K / 2; i++) {
        uv[0][i] = x[i * stride] + x[(K - 1 - i) * stride];
        uv[1][i] = x[i * stride] - x[(K - 1 - i) * stride];
    }
    for (int j = 0; j < K; j++)
        y[j] = dot4(t->C[j], uv[j & 1], 0, 1);
}

/*
 * One line of the inverse transform: y[a] = sum over r of Ci(a, r) x[r * stride].
 * Bior1.5: dot8(). The DCT (Ci = C transposed), by the same symmetry: for
 * a < 4, e = dot4 of Ci(a, r) x[r] over the even r, o = the same over the odd
 * r; y[a] = e + o, y[7 - a] = e - o.
 */
static void inverse1d(const BM3DTables *t, const float *x, int stride, float *y)
{
    float v[K];

    if (!t->dct) {
        for (int a = 0; a < K; a++)
            y[a] = dot8(t->Ci[a], x, stride);
        return;
    }
    for (int r = 0; r < K; r++)
        v[r] = x[r * stride];
    for (int a = 0; a < K / 2; a++) {
        float e = dot4(t->Ci[a], v, 0, 2), o = dot4(t->Ci[a], v, 1, 2);

        y[a]         = e + o;
        y[K - 1 - a] = e - o;
    }
}

/*
 * Forward 2-D transform (C: DCT or Bior1.5) of the patch at 'src' (pitch
 * 'width') into X[r * 8 + c]. Columns first: T(r, b) = sum over a of
 * C(r, a) P(a, b); then rows: X(r, c) = sum over b of C(c, b) T(r, b);
 * each line by forward1d().
 */
static void dct2_forward(const BM3DTables *t, const float *src, int width,
                         float *X)
{
    float T[K][K], y[K];
    int r, b;

    for (b = 0; b < K; b++) {
        forward1d(t, src + b, width, y);
        for (r = 0; r < K; r++)
            T[r][b] = y[r];
    }
    for (r = 0; r < K; r++)
        forward1d(t, T[r], 1, X + r * K);
}

/*
 * Inverse 2-D transform (Ci, the transpose of C for the DCT) of
 * X[r * 8 + c] into P[a * 8 + b]. Rows first: T(r, b) = sum over c of
 * Ci(b, c) X(r, c); then columns: P(a, b) = sum over r of Ci(a, r) T(r, b);
 * each line by inverse1d().
 */
static void dct2_inverse(const BM3DTables *t, const float *X, float *P)
{
    float T[K][K], y[K];
    int r, a, b;

    for (r = 0; r < K; r++)
        inverse1d(t, X + r * K, 1, T[r]);
    for (b = 0; b < K; b++) {
        inverse1d(t, &T[0][b], K, y);
        for (a = 0; a < K; a++)
            P[a * K + b] = y[a];
    }
}

/*
 * Orthonormal Walsh-Hadamard transform (Sylvester order) along z of the n
 * stacked coefficient blocks, in place; it is its own inverse. Stages
 * h = 1, 2, 4, .. < n; at each stage, for every z with bit h clear and
 * every coefficient, with x = X(z), y = X(z + h) and the float constant
 * s = (float)(1.0 / sqrt(2.0)): X(z) = (x + y) * s, X(z + h) = (x - y) * s.
 */
static void hadamard(float *stack, int n)
{
    const float s = (float)(1.0 / sqrt(2.0));
    int h, z, i;

    for (h = 1; h < n; h *= 2) {
        for (z = 0; z < n; z++) {
            if (z & h)
                continue;
            for (i = 0; i < K2; i++) {
                float x = stack[z * K2 + i];
                float y = stack[(z + h) * K2 + i];
                stack[z * K2 + i]       = (x + y) * s;
                stack[(z + h) * K2 + i] = (x - y) * s;
            }
        }
    }
}

/*
 * Orthonormal Haar wavelet transform along z, all levels, in place: at each
 * level of length len = n, n / 2, .. 2, for k < len / 2 and every
 * coefficient, with x = X(2k), y = X(2k + 1): new X(k) = (x + y) * s and
 * new X(len / 2 + k) = (x - y) * s, s the float nearest 1/sqrt(2).
 */
static void haar_forward(float *stack, int n)
{
    const float s = (float)(1.0 / sqrt(2.0));
    float t[MAX_GROUP];
    int len, k, i;

    for (len = n; len >= 2; len /= 2) {
        for (i = 0; i < K2; i++) {
            for (k = 0; k < len / 2; k++) {
                float x = stack[2 * k * K2 + i], y = stack[(2 * k + 1) * K2 + i];
                t[k]           = (x + y) * s;
                t[len / 2 + k] = (x - y) * s;
            }
            for (k = 0; k < len; k++)
                stack[k * K2 + i] = t[k];
        }
    }
}

/* Its inverse: levels len = 2, 4, .. n, X(2k) = (a + d) * s and
 * X(2k + 1) = (a - d) * s with a = X(k), d = X(len / 2 + k). */
static void haar_inverse(float *stack, int n)
{
    const float s = (float)(1.0 / sqrt(2.0));
    float t[MAX_GROUP];
    int len, k, i;

    for (len = 2; len <= n; len *= 2) {
        for (i = 0; i < K2; i++) {
            for (k = 0; k < len / 2; k++) {
                float a = stack[k * K2 + i], d = stack[(len / 2 + k) * K2 + i];
                t[2 * k]     = (a + d) * s;
                t[2 * k + 1] = (a - d) * s;
            }
            for (k = 0; k < len; k++)
                stack[k * K2 + i] = t[k];
        }
    }
}

/*
 * 3-D transform of the group best[0 .. n - 1] into 'stack', patch z read in
 * planes[best[z].frame].
 */
static void transform_group(const BM3DTables *t, const float *const *planes,
                            int width, const BM3DNeighbor *best, int n,
                            float *stack)
{
    int z;

    for (z = 0; z < n; z++)
        dct2_forward(t, planes[best[z].frame] + best[z].pos, width,
                     stack + z * K2);
    if (t->haar)
        haar_forward(stack, n);
    else
        hadamard(stack, n);
}

/*
 * Inverse 3-D transform of 'stack' and aggregation of each patch estimate
 * at its own position, into num[f] and weights[f] of its own frame f =
 * best[z].frame, with weight w; patches of frames f < first_frame are
 * dropped. Per sample, in float: v = (w * K(a, b)) * est(a, b); then
 * num += llrint((double)v * 2^32) in 64-bit integers (round to nearest,
 * ties to even; the scaling by 2^32 is exact, in float as in double). Per
 * patch, at its top-left sample: weights += llrint((double)w * 2^32); the
 * window K(a, b) of the denominator is applied by bm3d_divide().
 */
static void aggregate_group(const BM3DTables *t, float *stack, int n, float w,
                            const BM3DNeighbor *best, int width,
                            int first_frame,
                            int64_t *const *num, int64_t *const *weights)
{
    float est[K2];
    int z, a, b;

    if (t->haar)
        haar_inverse(stack, n);
    else
        hadamard(stack, n);
    for (z = 0; z < n; z++) {
        const int f = best[z].frame;

        if (f < first_frame)
            continue;
        dct2_inverse(t, stack + z * K2, est);
        for (a = 0; a < K; a++) {
            for (b = 0; b < K; b++) {
                size_t q = best[z].pos + (size_t)a * width + b;
                float wk = w * t->kaiser[a][b];
                float v  = wk * est[a * K + b];

                num[f][q] += llrint((double)v * 4294967296.0);
            }
        }
        weights[f][best[z].pos] += llrint((double)w * 4294967296.0);
    }
}

/*
 * The denominator at sample (x, y): the weights of the patches that cover
 * it, each times the window at the sample's place in the patch, separably
 * with the 1-D window k = kaiser1, in float: d = 0, then for a = 0 .. 7
 * where y - a >= 0: h = 0, h = fmaf(k[b], (float)W(x - b, y - a), h) for
 * b = 0 .. 7 where x - b >= 0, then d = fmaf(k[a], h, d).
 */
static float window_sum(const BM3DTables *t, const int64_t *weights,
                        int width, int x, int y)
{
    float d = 0.0f;
    int a, b;

    for (a = 0; a < K && a <= y; a++) {
        const int64_t *row = weights + (size_t)(y - a) * width + x;
        float h = 0.0f;

        for (b = 0; b < K && b <= x; b++)
            h = fmaf(t->kaiser1[b], (float)row[-b], h);
        d = fmaf(t->kaiser1[a], h, d);
    }
    return d;
}

void bm3d_round_within(float *plane, size_t size, float low)
{
    size_t p;

    for (p = 0; p < size; p++)
        plane[p] = fminf(fmaxf(rintf(plane[p]), low), low + 255.0f);
}

void bm3d_round_to_integers(float *plane, size_t size)
{
    bm3d_round_within(plane, size, 0.0f);
}

/* out = (float)num / window_sum() per sample, in float. */
void bm3d_divide(const BM3DTables *t, const int64_t *num,
                 const int64_t *weights, int width, int height, float *out)
{
    int x, y;

    /* Every sample is covered by a reference patch (step <= 8), whose group
     * contains it with a positive weight. */
    for (y = 0; y < height; y++) {
        for (x = 0; x < width; x++) {
            size_t p = (size_t)y * width + x;

            out[p] = (float)num[p] / window_sum(t, weights, width, x, y);
        }
    }
}

/*
 * Step 1 for one group: hard thresholding of the 3-D spectrum. A coefficient
 * is kept when fabsf(c) > thr, with thr = lambda * sigma in float, else set
 * to 0; N_nz counts the kept ones; w = 1.0f / (float)max(N_nz, 1).
 */
void bm3d_hard_threshold_group(const BM3DTables *t,
                               const float *const *noisy, int width,
                               const BM3DNeighbor *best, int n,
                               int first_frame, float thr, float *stack,
                               int64_t *const *num, int64_t *const *weights)
{
    int i, nnz = 0;
    float w;

    transform_group(t, noisy, width, best, n, stack);
    for (i = 0; i < n * K2; i++) {
        if (fabsf(stack[i]) > thr)
            nnz++;
        else
            stack[i] = 0.0f;
    }
    w = 1.0f / (float)imax(nnz, 1);
    aggregate_group(t, stack, n, w, best, width, first_frame, num, weights);
}

float bm3d_wiener_sigma(float sigma, float mu2)
{
    return sigma * sqrtf(mu2);
}

/*
 * Step 2 for one group: empirical Wiener filtering. U, B: 3-D spectra of
 * the group in the noisy plane and in the basic estimate. Per coefficient,
 * in float: W = (B * B) / (B * B + s2) with s2 = sigma * sigma (W = 1 when
 * sigma == 0), estimate W * U. S(r, c) = sum over z = 0 .. n - 1 of W * W
 * (starting from 0.0f), S = sum of the S(r, c) in row-major order (r outer,
 * c inner, starting from 0.0f), w = 1.0f / max(S, 1e-3f).
 */
void bm3d_wiener_group(const BM3DTables *t, const float *const *noisy,
                       const float *const *basic, int width,
                       const BM3DNeighbor *best, int n, int first_frame,
                       float sigma, float *stack_u, float *stack_b,
                       int64_t *const *num, int64_t *const *weights)
{
    const float s2 = sigma * sigma;
    float sum = 0.0f, w;
    int i, z;

    transform_group(t, noisy, width, best, n, stack_u);
    transform_group(t, basic, width, best, n, stack_b);
    for (i = 0; i < K2; i++) {
        float sum_rc = 0.0f;
        for (z = 0; z < n; z++) {
            float bb = stack_b[z * K2 + i] * stack_b[z * K2 + i];
            float W  = sigma == 0.0f ? 1.0f : bb / (bb + s2);

            stack_u[z * K2 + i] = W * stack_u[z * K2 + i];
            sum_rc += W * W;
        }
        sum += sum_rc;
    }
    w = 1.0f / (sum > 1e-3f ? sum : 1e-3f);
    aggregate_group(t, stack_u, n, w, best, width, first_frame, num, weights);
}

/*
 * One step over the whole frame, for nb_ch channels of width x height that
 * share their groups (nb_ch = 1: one plane on its own).
 *
 * For each reference patch of the grid of step s (row by row), the group is
 * searched in channel 0 only: in noisy[0] for step 1, in basic[0] for step
 * 2 (match_group(), which also gives the group size n from channel 0's
 * distances). Every channel c is then filtered at those n positions with its
 * own sigma[c] (step 1: threshold lambda * sigma[c] in float; step 2: Wiener
 * with sigma[c] and the oracle basic[c]) into its own num[c] and
 * weights[c], which are cleared first. Finally out[c] = num[c] / den
 * (bm3d_divide()).
 */
static void run_step(const BM3DTables *t, int s, int nb_ch,
                     const float *const *noisy, const float *const *basic,
                     int width, int height, const BM3DModelParams *par,
                     const float *sigma, float *stack_u, float *stack_b,
                     int64_t *const *num, int64_t *const *weights,
                     float *const *out)
{
    const BM3DModelStep *st = &par->steps[s];
    const size_t plane_size = (size_t)width * height;
    const int nx = bm3d_grid_count(width,  st->step);
    const int ny = bm3d_grid_count(height, st->step);
    const float *search = s == 0 ? noisy[0] : basic[0];
    BM3DNeighbor best[MAX_GROUP];
    float thr[3], wiener_sigma[3];
    int gx, gy, c;

    for (c = 0; c < nb_ch; c++) {
        thr[c] = par->lambda * sigma[c];
        wiener_sigma[c] = bm3d_wiener_sigma(sigma[c], par->mu2);
        memset(num[c], 0, plane_size * sizeof(*num[c]));
        memset(weights[c], 0, plane_size * sizeof(*weights[c]));
    }
    for (gy = 0; gy < ny; gy++) {
        for (gx = 0; gx < nx; gx++) {
            const int x0 = bm3d_grid_pos(gx, st->step, width);
            const int y0 = bm3d_grid_pos(gy, st->step, height);
            const int n  = match_group(search, width, height, x0, y0, st, best);

            for (c = 0; c < nb_ch; c++) {
                if (s == 0)
                    bm3d_hard_threshold_group(t, noisy + c, width, best, n, 0,
                                              thr[c], stack_u, num + c,
                                              weights + c);
                else
                    bm3d_wiener_group(t, noisy + c, basic + c, width, best, n,
                                      0, wiener_sigma[c], stack_u, stack_b, num + c,
                                      weights + c);
            }
        }
    }
    for (c = 0; c < nb_ch; c++)
        bm3d_divide(t, num[c], weights[c], width, height, out[c]);
}

/*
 * Both steps (or step 1 only when par->estim == 1) for nb_ch channels that
 * share their groups, each with its own sigma[c]: basic[c] receives the
 * basic estimate and dst[c] the final one (a copy of the basic estimate when
 * par->estim == 1).
 */
static void denoise_channels(int nb_ch, const float *const *noisy,
                             int width, int height,
                             const BM3DModelParams *par, const float *sigma,
                             float *const *basic, float *const *dst)
{
    const char *err = bm3d_model_check(par, width, height);
    const size_t plane_size = (size_t)width * height;
    BM3DTables tables[2];
    float *stack_u, *stack_b;
    int64_t *num[3], *weights[3];
    int c;

    if (err) {
        fprintf(stderr, "bm3d_model: %dx%d: %s\n", width, height, err);
        exit(1);
    }
    bm3d_init_tables(&tables[0], par->beta, par->transform == 0, par->haar);
    bm3d_init_tables(&tables[1], par->beta, 0, par->haar);
    stack_u = bm3d_alloc_or_die(MAX_GROUP * K2, sizeof(*stack_u));
    stack_b = bm3d_alloc_or_die(MAX_GROUP * K2, sizeof(*stack_b));
    for (c = 0; c < nb_ch; c++) {
        num[c] = bm3d_alloc_or_die(plane_size, sizeof(*num[c]));
        weights[c] = bm3d_alloc_or_die(plane_size, sizeof(*weights[c]));
    }

    run_step(&tables[0], 0, nb_ch, noisy, NULL, width, height, par, sigma,
             stack_u, stack_b, num, weights, basic);
    if (par->round_basic && par->estim == 0)
        for (c = 0; c < nb_ch; c++)
            bm3d_round_to_integers(basic[c], plane_size);
    if (par->estim == 1) {
        for (c = 0; c < nb_ch; c++)
            memcpy(dst[c], basic[c], plane_size * sizeof(*dst[c]));
    } else {
        run_step(&tables[1], 1, nb_ch, noisy, (const float *const *)basic,
                 width, height, par, sigma, stack_u, stack_b, num, weights,
                 dst);
    }

    free(stack_u);
    free(stack_b);
    for (c = 0; c < nb_ch; c++) {
        free(num[c]);
        free(weights[c]);
    }
}

void bm3d_model_plane(const float *noisy, int width, int height,
                      const BM3DModelParams *par, float *basic, float *dst)
{
    denoise_channels(1, &noisy, width, height, par, &par->sigma, &basic, &dst);
}

/*
 * out[c] = opponent_forward(in[0], in[1], in[2])[c] per sample; 'out' may
 * be 'in'.
 */
void bm3d_planes_to_opponent(const float *const *in, size_t size,
                             float *const *out)
{
    size_t p;
    float o[3];

    for (p = 0; p < size; p++) {
        opponent_forward(in[0][p], in[1][p], in[2][p], o);
        out[0][p] = o[0];
        out[1][p] = o[1];
        out[2][p] = o[2];
    }
}

/*
 * out[c] = opponent_inverse(in[0], in[1], in[2])[c] per sample; 'out' may
 * be 'in'.
 */
void bm3d_planes_to_rgb(const float *const *in, size_t size,
                        float *const *out)
{
    size_t p;
    float rgb[3];

    for (p = 0; p < size; p++) {
        opponent_inverse(in[0][p], in[1][p], in[2][p], rgb);
        out[0][p] = rgb[0];
        out[1][p] = rgb[1];
        out[2][p] = rgb[2];
    }
}

void bm3d_model_color(float *const noisy[3], int width, int height,
                      int is_rgb, const BM3DModelParams *par,
                      float *const basic[3], float *const dst[3])
{
    const char *err = bm3d_model_check(par, width, height);
    const size_t plane_size = (size_t)width * height;
    const float *in[3];
    float *opp[3] = { NULL, NULL, NULL };
    float *bas[3], *fin[3];
    float sigma[3];
    int c;

    if (err) {
        fprintf(stderr, "bm3d_model: %dx%d: %s\n", width, height, err);
        exit(1);
    }
    for (c = 0; c < 3; c++) {
        bas[c] = bm3d_alloc_or_die(plane_size, sizeof(*bas[c]));
        if (is_rgb) {
            opp[c]   = bm3d_alloc_or_die(plane_size, sizeof(*opp[c]));
            in[c]    = opp[c];
            fin[c]   = bm3d_alloc_or_die(plane_size, sizeof(*fin[c]));
            sigma[c] = opponent_sigma(par->sigma, c);
        } else {
            in[c]    = noisy[c];
            fin[c]   = dst[c];
            sigma[c] = par->sigma;
        }
    }
    if (is_rgb)
        bm3d_planes_to_opponent((const float *const *)noisy, plane_size, opp);

    denoise_channels(3, in, width, height, par, sigma, bas, fin);

    if (is_rgb) {
        bm3d_planes_to_rgb((const float *const *)fin, plane_size, dst);
        if (basic)
            bm3d_planes_to_rgb((const float *const *)bas, plane_size, basic);
    } else if (basic) {
        for (c = 0; c < 3; c++)
            memcpy(basic[c], bas[c], plane_size * sizeof(*basic[c]));
    }

    for (c = 0; c < 3; c++) {
        free(bas[c]);
        if (is_rgb) {
            free(opp[c]);
            free(fin[c]);
        }
    }
}
