/*
 * noise_methods: estimate the noise standard deviation of a PGM image with
 * one of two published methods, to compare them (doc/benchmarks.md).
 *
 * Build:
 *   cc -std=c99 -O2 -Wall -Wextra -o noise_methods noise_methods.c pnm.c -lm
 *
 * Usage:
 *   noise_methods dct [-step S] [-keep P] in.pgm
 *   noise_methods pca [-patch N] [-step S] in.pgm
 *
 * dct: the DCT-block method of Ponomarenko et al. (2007) as analysed by
 * Colom and Buades (IPOL 2013), with the parameters of the filters'
 * estimator (libavfilter/denoise_noise.c), computed exactly in double: 8x8
 * blocks every S samples (2), the 2-D DCT, the fraction P (0.02, at least
 * 64 blocks) of the blocks with the least energy in the frequencies
 * 1 <= i + j <= 3, blocks with 4 samples or more at 0 or maxval left out;
 * the variance is the median over the kept blocks of the mean squared
 * coefficient of the frequencies i + j >= 9, divided by the median of a
 * chi-square variable of 21 degrees of freedom over 21.
 *
 * pca: the method of G. Chen, F. Zhu and P. A. Heng, "An Efficient
 * Statistical Method for Image Noise Level Estimation", ICCV 2015: the
 * covariance of all N x N patches (8) every S samples (3), its eigenvalues
 * in increasing order; the noise variance is the mean tau of the smallest
 * m of them for the largest m whose values above and below tau are as
 * many (their mean equals their median).
 *
 * Prints the estimate on the 8-bit scale (samples scaled by 255 / maxval).
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

#include "pnm.h"

#define B 8
#define LOW_MAX 3
#define HIGH_MIN 9
#define CLIP_MAX 4
#define LEAST 64
#define MAX_PATCH 12

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct Block {
    double low, high;
} Block;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int cmp_low(const void *a, const void *b)
{
    return cmp_double(&((const Block *)a)->low, &((const Block *)b)->low);
}

static double dct_method(const double *img, int w, int h, double top, int step, double keep)
{
    double D[B][B], med, t;
    int nbx = (w - B) / step + 1, nby = (h - B) / step + 1, n = 0, kept, nh = 0;
    Block *blocks;
    double *high;

    if (w < B || h < B)
        return -1;
    for (int r = 0; r < B; r++)
        for (int a = 0; a < B; a++)
            D[r][a] = (r ? sqrt(2.0 / B) : sqrt(1.0 / B)) * cos(M_PI * (2 * a + 1) * r / (2.0 * B));
    for (int i = 0; i < B; i++)
        for (int j = 0; j < B; j++)
            nh += i + j >= HIGH_MIN;
    blocks = malloc(sizeof(*blocks) * nbx * nby);
    high   = malloc(sizeof(*high) * nbx * nby);
    if (!blocks || !high)
        exit(1);
    for (int by = 0; by < nby; by++) {
        for (int bx = 0; bx < nbx; bx++) {
            double x[B][B], rows[B][B], low = 0, hi = 0;
            int clipped = 0;

            for (int y = 0; y < B; y++)
                for (int k = 0; k < B; k++) {
                    x[y][k] = img[(by * step + y) * w + bx * step + k];
                    clipped += x[y][k] <= 0 || x[y][k] >= top;
                }
            if (clipped >= CLIP_MAX)
                continue;
            for (int y = 0; y < B; y++)
                for (int j = 0; j < B; j++) {
                    rows[y][j] = 0;
                    for (int k = 0; k < B; k++)
                        rows[y][j] += D[j][k] * x[y][k];
                }
            for (int i = 0; i < B; i++)
                for (int j = 0; j < B; j++) {
                    double c = 0;

                    if ((i + j < 1 || i + j > LOW_MAX) && i + j < HIGH_MIN)
                        continue;
                    for (int y = 0; y < B; y++)
                        c += D[i][y] * rows[y][j];
                    if (i + j <= LOW_MAX)
                        low += c * c;
                    else
                        hi += c * c;
                }
            blocks[n].low  = low;
            blocks[n].high = hi / nh;
            n++;
        }
    }
    if (!n)
        return -1;
    qsort(blocks, n, sizeof(*blocks), cmp_low);
    kept = (int)ceil(keep * n);
    if (kept < LEAST)
        kept = n < LEAST ? n : LEAST;
    for (int i = 0; i < kept; i++)
        high[i] = blocks[i].high;
    qsort(high, kept, sizeof(*high), cmp_double);
    med = kept & 1 ? high[kept / 2] : 0.5 * (high[kept / 2 - 1] + high[kept / 2]);
    t = 1.0 - 2.0 / (9.0 * nh);
    free(blocks);
    free(high);
    return sqrt(med / (t * t * t));
}

/* Eigenvalues of a symmetric d x d matrix (destroyed), by Jacobi rotations. */
static void eigenvalues(double *a, int d, double *ev)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;

        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++)
                off += a[p * d + q] * a[p * d + q];
        if (off < 1e-20)
            break;
        for (int p = 0; p < d; p++)
            for (int q = p + 1; q < d; q++) {
                double apq = a[p * d + q], th, t, c, s;

                if (apq == 0)
                    continue;
                th = (a[q * d + q] - a[p * d + p]) / (2 * apq);
                t  = (th >= 0 ? 1 : -1) / (fabs(th) + sqrt(th * th + 1));
                c  = 1 / sqrt(t * t + 1);
                s  = t * c;
                for (int k = 0; k < d; k++) {
                    double kp = a[k * d + p], kq = a[k * d + q];
                    a[k * d + p] = c * kp - s * kq;
                    a[k * d + q] = s * kp + c * kq;
                }
                for (int k = 0; k < d; k++) {
                    double pk = a[p * d + k], qk = a[q * d + k];
                    a[p * d + k] = c * pk - s * qk;
                    a[q * d + k] = s * pk + c * qk;
                }
            }
    }
    for (int i = 0; i < d; i++)
        ev[i] = a[i * d + i];
}

static double pca_method(const double *img, int w, int h, int ps, int step)
{
    int d = ps * ps;
    double *cov = calloc(d * d, sizeof(double)), mean[MAX_PATCH * MAX_PATCH] = { 0 };
    double ev[MAX_PATCH * MAX_PATCH], v[MAX_PATCH * MAX_PATCH];
    long n = 0;

    if (!cov || w < ps || h < ps)
        exit(1);
    for (int y = 0; y + ps <= h; y += step)
        for (int x = 0; x + ps <= w; x += step) {
            for (int i = 0; i < ps; i++)
                for (int j = 0; j < ps; j++)
                    v[i * ps + j] = img[(y + i) * w + x + j];
            for (int a = 0; a < d; a++) {
                mean[a] += v[a];
                for (int b = a; b < d; b++)
                    cov[a * d + b] += v[a] * v[b];
            }
            n++;
        }
    for (int a = 0; a < d; a++)
        for (int b = a; b < d; b++) {
            cov[a * d + b] = cov[a * d + b] / n - mean[a] / n * (mean[b] / n);
            cov[b * d + a] = cov[a * d + b];
        }
    eigenvalues(cov, d, ev);
    free(cov);
    qsort(ev, d, sizeof(*ev), cmp_double);
    for (int m = d; m > 0; m--) {
        double tau = 0;
        int above = 0, below = 0;

        for (int i = 0; i < m; i++)
            tau += ev[i];
        tau /= m;
        for (int i = 0; i < m; i++) {
            above += ev[i] > tau;
            below += ev[i] < tau;
        }
        if (above == below)
            return sqrt(tau > 0 ? tau : 0);
    }
    return sqrt(ev[0] > 0 ? ev[0] : 0);
}

static void usage(void)
{
    fprintf(stderr, "usage: noise_methods dct [-step S] [-keep P] in.pgm\n"
                    "       noise_methods pca [-patch N] [-step S] in.pgm\n");
    exit(2);
}

int main(int argc, char **argv)
{
    int dct, step = -1, patch = 8;
    double keep = 0.02, *img, r;
    PNMImage im;

    if (argc < 3 || (strcmp(argv[1], "dct") && strcmp(argv[1], "pca")))
        usage();
    dct = !strcmp(argv[1], "dct");
    for (int a = 2; a < argc - 1; a += 2) {
        if (!strcmp(argv[a], "-step"))
            step = atoi(argv[a + 1]);
        else if (!strcmp(argv[a], "-keep"))
            keep = atof(argv[a + 1]);
        else if (!strcmp(argv[a], "-patch"))
            patch = atoi(argv[a + 1]);
        else
            usage();
    }
    if (step < 0)
        step = dct ? 2 : 3;
    if (step < 1 || patch < 2 || patch > MAX_PATCH || !(keep > 0 && keep <= 1))
        usage();
    if (pnm_read(argv[argc - 1], &im) < 0)
        return 1;
    if (im.channels != 1) {
        fprintf(stderr, "%s: not a PGM\n", argv[argc - 1]);
        return 1;
    }
    img = malloc(sizeof(*img) * im.width * im.height);
    if (!img)
        return 1;
    for (int i = 0; i < im.width * im.height; i++)
        img[i] = im.data[i] * 255.0 / im.maxval;
    r = dct ? dct_method(img, im.width, im.height, 255.0, step, keep)
            : pca_method(img, im.width, im.height, patch, step);
    printf("%.4f\n", r);
    free(img);
    free(im.data);
    return r < 0;
}
