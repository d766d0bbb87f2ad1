/*
 * cmpimg: compare two PGM (P5) or PPM (P6) images sample by sample.
 *
 * Build:
 *   cc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -o cmpimg cmpimg.c pnm.c -lm
 *
 * Usage:
 *   cmpimg a.pnm b.pnm [-crop N] [-max D]
 *
 * The images must have the same type, size and maxval. Prints one line:
 *   maxdiff=%d differing=%d/%d meandiff=%.6f psnr=%.4f
 * (PSNR with the maxval as peak, "inf" for identical images).
 *   -crop N  ignore N samples along each edge
 *   -max D   exit with status 1 when maxdiff > D
 * Exit status: 0 (or 1 with -max), 2 on bad usage or unreadable input.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnm.h"

static void usage(void)
{
    fprintf(stderr, "usage: cmpimg a.pnm b.pnm [-crop N] [-max D]\n");
    exit(2);
}

static int parse_int(const char *arg)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(arg, &end, 10);
    if (errno || end == arg || *end || v < 0 || v > 1000000000)
        usage();
    return (int)v;
}

int main(int argc, char **argv)
{
    const char *names[2];
    PNMImage img[2];
    int nb_names = 0, crop = 0, max_allowed = -1;
    int maxdiff = 0, differing = 0, total = 0;
    double sum = 0.0, sum2 = 0.0, mean, mse, psnr;
    int a, x, y, c;

    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-crop") && a + 1 < argc)
            crop = parse_int(argv[++a]);
        else if (!strcmp(argv[a], "-max") && a + 1 < argc)
            max_allowed = parse_int(argv[++a]);
        else if (argv[a][0] == '-' && argv[a][1])
            usage();
        else if (nb_names < 2)
            names[nb_names++] = argv[a];
        else
            usage();
    }
    if (nb_names != 2)
        usage();

    if (pnm_read(names[0], &img[0]) < 0 || pnm_read(names[1], &img[1]) < 0)
        return 2;
    if (img[0].width != img[1].width || img[0].height != img[1].height ||
        img[0].channels != img[1].channels || img[0].maxval != img[1].maxval) {
        fprintf(stderr, "images differ in type, size or maxval: "
                "%dx%dx%d/%d vs %dx%dx%d/%d\n",
                img[0].width, img[0].height, img[0].channels, img[0].maxval,
                img[1].width, img[1].height, img[1].channels, img[1].maxval);
        return 2;
    }

    for (y = crop; y < img[0].height - crop; y++) {
        for (x = crop; x < img[0].width - crop; x++) {
            for (c = 0; c < img[0].channels; c++) {
                size_t i = ((size_t)y * img[0].width + x) * img[0].channels + c;
                int d = abs((int)img[0].data[i] - (int)img[1].data[i]);

                if (d > maxdiff)
                    maxdiff = d;
                differing += d != 0;
                sum  += d;
                sum2 += (double)d * d;
                total++;
            }
        }
    }
    mean = total ? sum / total : 0.0;
    mse  = total ? sum2 / total : 0.0;
    psnr = mse > 0.0 ? 10.0 * log10((double)img[0].maxval * img[0].maxval / mse)
                     : INFINITY;
    printf("maxdiff=%d differing=%d/%d meandiff=%.6f psnr=%.4f\n",
           maxdiff, differing, total, mean, psnr);

    free(img[0].data);
    free(img[1].data);
    return max_allowed >= 0 && maxdiff > max_allowed;
}
