/*
 * awgn: add additive white Gaussian noise, or Poisson-Gaussian noise, to a
 * PGM (P5) or PPM (P6) image.
 *
 * Build:
 *   cc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -o awgn awgn.c pnm.c -lm
 *
 * Usage:
 *   awgn [-sigma S] [-gain A] [-seed N] in.pnm out.pnm
 *
 * Every sample v becomes clip(round(v + S * g)) with g drawn from N(0, 1),
 * one draw per sample in file order (channels interleaved for P6), rounded
 * to the nearest integer (halves away from zero) and clipped to 0..maxval.
 * S is on the 8-bit scale, as the sigma of the denoisers: for a maxval M
 * other than 255 the deviation is S * M / 255. Images of maxval 255 are the
 * intended input; any maxval up to 65535 is accepted.
 *
 * With -gain A (A > 0, on the 8-bit scale) the noise depends on the
 * intensity, as a camera's photon noise does: v, on the 8-bit scale, is
 * first replaced by A * P with P drawn from the Poisson distribution of
 * mean v / A, then the Gaussian noise of deviation S is added: the noise
 * variance is A * v + S^2 (8-bit scale). One Poisson draw per sample, then
 * one Gaussian draw, in file order.
 *
 * The noise is a function of the seed alone: xoshiro256** seeded through
 * splitmix64, uniform doubles from the top 53 bits, and Marsaglia's polar
 * method, which needs only log() and sqrt(); Poisson deviates by
 * multiplication of uniforms below a mean of 10 and above it by the
 * transformed rejection method PTRS (W. Hormann, "The transformed rejection
 * method for generating Poisson random variables", 1993), which also needs
 * lgamma().
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

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnm.h"

typedef struct Rng {
    uint64_t s[4];
    int      have_spare;
    double   spare;
} Rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* xoshiro256** by Blackman and Vigna. */
static uint64_t xoshiro256ss(Rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

static void rng_init(Rng *r, uint64_t seed)
{
    int i;

    for (i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
    r->have_spare = 0;
}

/* Uniform in [-1, 1), a multiple of 2^-52. */
static double uniform_pm1(Rng *r)
{
    return (double)(xoshiro256ss(r) >> 11) * (1.0 / 4503599627370496.0) - 1.0;
}

/* Standard normal deviate, Marsaglia's polar method. */
static double gaussian(Rng *r)
{
    double u, v, s, f;

    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    do {
        u = uniform_pm1(r);
        v = uniform_pm1(r);
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    f = sqrt(-2.0 * log(s) / s);
    r->spare      = v * f;
    r->have_spare = 1;
    return u * f;
}

/* Uniform in (0, 1), a multiple of 2^-53. */
static double uniform01(Rng *r)
{
    double u;

    do {
        u = (double)(xoshiro256ss(r) >> 11) * (1.0 / 9007199254740992.0);
    } while (u == 0.0);
    return u;
}

/* Poisson deviate of mean lambda >= 0. */
static double poisson(Rng *r, double lambda)
{
    double slam, loglam, a, b, inv_alpha, vr;

    if (lambda < 10.0) {
        double limit = exp(-lambda), p = uniform01(r);
        int k = 0;

        while (p > limit) {
            p *= uniform01(r);
            k++;
        }
        return k;
    }
    slam      = sqrt(lambda);
    loglam    = log(lambda);
    b         = 0.931 + 2.53 * slam;
    a         = -0.059 + 0.02483 * b;
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    vr        = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        double u  = uniform01(r) - 0.5;
        double v  = uniform01(r);
        double us = 0.5 - fabs(u);
        double k  = floor((2.0 * a / us + b) * u + lambda + 0.43);

        if (us >= 0.07 && v <= vr)
            return k;
        if (k < 0.0 || (us < 0.013 && v > us))
            continue;
        if (log(v) + log(inv_alpha) - log(a / (us * us) + b) <=
            -lambda + k * loglam - lgamma(k + 1.0))
            return k;
    }
}

static void usage(void)
{
    fprintf(stderr, "usage: awgn [-sigma S] [-gain A] [-seed N] in.pnm out.pnm\n"
                    "  -sigma S  standard deviation on the 8-bit scale (10)\n"
                    "  -gain A   Poisson noise of variance A * v first (8-bit scale)\n"
                    "  -seed N   64-bit seed of the generator (0)\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *in_name = NULL, *out_name = NULL;
    double sigma = 10.0, gain = 0.0, dev, scale;
    uint64_t seed = 0;
    PNMImage img;
    size_t n, i;
    int a;
    Rng rng;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-sigma") && a + 1 < argc) {
            char *end;

            sigma = strtod(argv[++a], &end);
            if (end == argv[a] || *end || !(sigma >= 0.0 && sigma <= 1e6))
                usage();
        } else if (!strcmp(argv[a], "-gain") && a + 1 < argc) {
            char *end;

            gain = strtod(argv[++a], &end);
            if (end == argv[a] || *end || !(gain >= 0.0 && gain <= 1e6))
                usage();
        } else if (!strcmp(argv[a], "-seed") && a + 1 < argc) {
            char *end;

            errno = 0;
            seed = strtoull(argv[++a], &end, 0);
            if (errno || end == argv[a] || *end)
                usage();
        } else if (argv[a][0] == '-' && argv[a][1]) {
            usage();
        } else if (!in_name) {
            in_name = argv[a];
        } else if (!out_name) {
            out_name = argv[a];
        } else {
            usage();
        }
    }
    if (!out_name)
        usage();

    if (pnm_read(in_name, &img) < 0)
        return 1;

    rng_init(&rng, seed);
    scale = img.maxval / 255.0;
    dev   = sigma * scale;
    n     = (size_t)img.width * img.height * img.channels;
    for (i = 0; i < n; i++) {
        double x = img.data[i];

        if (gain > 0.0)
            x = gain * scale * poisson(&rng, x / (gain * scale));
        x += dev * gaussian(&rng);

        x = x < 0.0 ? 0.0 : x > img.maxval ? img.maxval : floor(x + 0.5);
        img.data[i] = (unsigned)x;
    }

    if (pnm_write(out_name, &img) < 0)
        return 1;
    free(img.data);
    return 0;
}
