/*
 * bm3d_ref: run the golden model of bm3d_gpu on PGM and PPM images.
 *
 * Build (from the top of the tree):
 *   cc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -o bm3d_ref \
 *      tests/model/bm3d_ref.c tests/model/bm3d_model.c \
 *      tests/model/ref_tool.c tests/tools/pnm.c -lm
 *
 * Usage:
 *   bm3d_ref [options] in.pgm out.pgm
 *   bm3d_ref [options] [-color joint|planes] [-yuv] in.ppm out.ppm
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bm3d_model.h"
#include "ref_tool.h"

static void usage(void)
{
    fprintf(stderr,
        "usage: bm3d_ref [options] in.pgm out.pgm\n"
        "       bm3d_ref [options] in.ppm out.ppm\n"
        "Binary PGM (P5) or PPM (P6) with maxval 255 or 65535; the output has\n"
        "the format and maxval of the input. Frames smaller than 8x8 are refused.\n"
        "options (doc/bm3d_gpu-algorithm.md; defaults: fast profile):\n"
        "  -sigma S            noise standard deviation, 8-bit scale  (10)\n"
        "  -shift N            low bits of 16-bit output left 0 (MSB formats) (0)\n"
        "  -profile P          fast or ref, sets the defaults below   (fast)\n"
        "  -estim E            final (both steps) or basic (step 1)   (final)\n"
        "  -basic F            also write the basic estimate to F\n"
        "  -step1/-step2 N     grid step, 1..8                 (fast 4/4, ref 3/3)\n"
        "  -window1/-window2 N research window size            (fast 21/17, ref 39/39)\n"
        "  -group1/-group2 N   largest group, 1, 2, 4 .. 32    (fast 16/16, ref 16/32)\n"
        "  -tau1/-tau2 T       largest mean squared distance   (3000/400)\n"
        "  -lambda L           hard threshold in units of sigma       (2.7)\n"
        "  -mu2 M              Wiener regularisation, units of sigma^2 (fast 1, ref 0.9)\n"
        "  -beta B             Kaiser window parameter                (2.0)\n"
        "  -transform T        2-D transform of step 1: dct or bior   (fast dct, ref bior)\n"
        "  -transform1d T      along groups: hadamard or haar         (haar)\n"
        "  -round R            1: the basic estimate rounded to integers before\n"
        "                      step 2, 0: kept in float (bm3d_gpu's rule: 1 on\n"
        "                      8-bit samples searched as they are, even step 2)\n"
        "PPM only:\n"
        "  -color C            joint: groups found on the first channel serve\n"
        "                      all three (RGB as opponent channels);\n"
        "                      planes: each channel on its own      (joint)\n"
        "  -yuv                the channels are Y, U, V of a 4:4:4 frame, not\n"
        "                      R, G, B: no opponent transform, one sigma\n");
    exit(2);
}

int main(int argc, char **argv)
{
    BM3DModelParams par;
    const char *pos_args[2];
    const char *profile = "fast", *basic_name = NULL, *err;
    PNMImage in, out;
    int nb_pos = 0, joint = 1, yuv = 0, nb_ch, out_width, out_height;
    int round_basic = -1;   /* -1: bm3d_gpu's rule */
    float *noisy[3], *basic[3], *dst[3];
    size_t n;
    int a, c;

    /* The profile first, whatever its place: the other options override it. */
    for (a = 1; a + 1 < argc; a++)
        if (!strcmp(argv[a], "-profile"))
            profile = argv[a + 1];
    if (bm3d_model_profile(&par, profile) < 0) {
        fprintf(stderr, "-profile: unknown profile '%s' (fast, ref)\n", profile);
        return 2;
    }

    for (a = 1; a < argc; a++) {
        const char *opt = argv[a];

        if (opt[0] != '-' || !opt[1]) {
            if (nb_pos == 2)
                usage();
            pos_args[nb_pos++] = opt;
            continue;
        }
        if (!strcmp(opt, "-yuv")) {
            yuv = 1;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        if (!strcmp(opt, "-shift"))
            ref_set_shift(ref_parse_int(opt, argv[++a], 0, 8));
        else if (!strcmp(opt, "-sigma"))
            par.sigma = (float)ref_parse_num(opt, argv[++a], 0, 255);
        else if (!strcmp(opt, "-profile"))
            a++;
        else if (!strcmp(opt, "-estim")) {
            const char *e = argv[++a];
            if (!strcmp(e, "final"))
                par.estim = 0;
            else if (!strcmp(e, "basic"))
                par.estim = 1;
            else
                usage();
        } else if (!strcmp(opt, "-color")) {
            const char *e = argv[++a];
            if (!strcmp(e, "joint"))
                joint = 1;
            else if (!strcmp(e, "planes"))
                joint = 0;
            else
                usage();
        } else if (!strcmp(opt, "-basic"))
            basic_name = argv[++a];
        else if (!strcmp(opt, "-step1") || !strcmp(opt, "-step2"))
            par.steps[opt[5] - '1'].step = ref_parse_int(opt, argv[++a], 1, 8);
        else if (!strcmp(opt, "-window1") || !strcmp(opt, "-window2"))
            par.steps[opt[7] - '1'].window = ref_parse_int(opt, argv[++a], 1, 199);
        else if (!strcmp(opt, "-group1") || !strcmp(opt, "-group2"))
            par.steps[opt[6] - '1'].group = ref_parse_int(opt, argv[++a], 1, 32);
        else if (!strcmp(opt, "-tau1") || !strcmp(opt, "-tau2"))
            par.steps[opt[4] - '1'].tau = (float)ref_parse_num(opt, argv[++a], 0, 1e9);
        else if (!strcmp(opt, "-lambda"))
            par.lambda = (float)ref_parse_num(opt, argv[++a], 0, 100);
        else if (!strcmp(opt, "-mu2"))
            par.mu2 = (float)ref_parse_num(opt, argv[++a], 0, 100);
        else if (!strcmp(opt, "-transform")) {
            const char *v = argv[++a];
            if (!v || (strcmp(v, "bior") && strcmp(v, "dct")))
                usage();
            par.transform = !strcmp(v, "dct");
        } else if (!strcmp(opt, "-transform1d")) {
            const char *v = argv[++a];
            if (!v || (strcmp(v, "hadamard") && strcmp(v, "haar")))
                usage();
            par.haar = !strcmp(v, "haar");
        } else if (!strcmp(opt, "-round"))
            round_basic = ref_parse_int(opt, argv[++a], 0, 1);
        else if (!strcmp(opt, "-beta"))
            par.beta = (float)ref_parse_num(opt, argv[++a], 0, 100);
        else
            usage();
    }
    if (nb_pos != 2)
        usage();
    /* the parameters alone, before the size of the frame is known */
    err = bm3d_model_check(&par, 8, 8);
    if (err) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }

    if (ref_read_pnm(pos_args[0], &in) < 0)
        return 1;
    out_width  = in.width;
    out_height = in.height;
    if (ref_pad_image(&in, 8) < 0)
        return 1;
    nb_ch = in.channels;
    if (yuv && nb_ch != 3) {
        fprintf(stderr, "%s: -yuv needs a PPM (P6)\n", pos_args[0]);
        return 1;
    }
    err = bm3d_model_check(&par, in.width, in.height);
    if (err) {
        fprintf(stderr, "%s: %dx%d: %s\n", pos_args[0], in.width, in.height, err);
        return 1;
    }

    out = in;
    out.width  = out_width;
    out.height = out_height;
    n = (size_t)in.width * in.height;
    out.data = malloc(n * nb_ch * sizeof(*out.data));
    if (!out.data) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (c = 0; c < nb_ch; c++) {
        noisy[c] = malloc(n * sizeof(*noisy[c]));
        basic[c] = malloc(n * sizeof(*basic[c]));
        dst[c]   = malloc(n * sizeof(*dst[c]));
        if (!noisy[c] || !basic[c] || !dst[c]) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        ref_load_plane(&in, c, noisy[c]);
    }

    /* bm3d_gpu's rule: 8-bit samples searched as they are, an even step 2 */
    par.round_basic = round_basic >= 0 ? round_basic :
                      in.maxval == 255 && !(nb_ch == 3 && joint && !yuv) &&
                      par.steps[1].step % 2 == 0;
    if (nb_ch == 3 && joint)
        bm3d_model_color(noisy, in.width, in.height, !yuv, &par, basic, dst);
    else
        for (c = 0; c < nb_ch; c++)
            bm3d_model_plane(noisy[c], in.width, in.height, &par,
                             basic[c], dst[c]);

    if (ref_write_planes(pos_args[1], dst, in.width, &out) < 0)
        return 1;
    if (basic_name && ref_write_planes(basic_name, basic, in.width, &out) < 0)
        return 1;

    free(in.data);
    free(out.data);
    for (c = 0; c < nb_ch; c++) {
        free(noisy[c]);
        free(basic[c]);
        free(dst[c]);
    }
    return 0;
}
