/*
 * vbm3d_ref: run the golden model of vbm3d_gpu on a sequence of PGM or PPM
 * images, one per frame.
 *
 * Build (from the top of the tree):
 *   cc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -o vbm3d_ref \
 *      tests/model/vbm3d_ref.c tests/model/vbm3d_model.c \
 *      tests/model/bm3d_model.c tests/model/ref_tool.c tests/tools/pnm.c -lm
 *
 * Usage:
 *   vbm3d_ref [options] in_0.pgm .. in_N-1.pgm -o out%d.pgm
 *   vbm3d_ref [options] [-color joint|planes] [-yuv] in_0.ppm .. -o out%d.ppm
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

#include "ref_tool.h"
#include "vbm3d_model.h"

static void usage(void)
{
    fprintf(stderr,
        "usage: vbm3d_ref [options] in_0.pgm .. in_N-1.pgm -o PATTERN\n"
        "       vbm3d_ref [options] in_0.ppm .. in_N-1.ppm -o PATTERN\n"
        "The inputs are the frames 0 .. N-1 of a sequence, in order: binary\n"
        "PGM (P5) or PPM (P6), all of one size, format and maxval (255 or\n"
        "65535); frames smaller than 8x8 are refused. Output frame i, of\n"
        "the format and maxval of the input, goes to the file named by the\n"
        "printf pattern with one %%d (flags 0 and a width allowed, %%%% for\n"
        "a %%), e.g. out%%03d.pgm, given i + START.\n"
        "options (doc/vbm3d_gpu-algorithm.md; defaults in brackets):\n"
        "  -o PATTERN          output files (required)\n"
        "  -basic PATTERN      also write the basic estimates\n"
        "  -start_number START number of the first output file      (0)\n"
        "  -sigma S            noise standard deviation, 8-bit scale  (10)\n"
        "  -shift N            low bits of 16-bit output left 0 (MSB formats) (0)\n"
        "  -past P             past frames in the window, 0..32       (4)\n"
        "  -future F           future frames in the window, 0..32     (4)\n"
        "  -estim E            final (both steps) or basic (step 1)   (final)\n"
        "  -bstep/-bstep2 N    grid step, 1..8                        (6/4)\n"
        "  -range/-range2 N    w1: search window in the reference\n"
        "                      frame, 1..199                          (7/7)\n"
        "  -prange/-prange2 N  w2: predictive window in the other\n"
        "                      frames, 1..199                         (5/5)\n"
        "  -perframe Q         q: best patches kept per frame, 1..32  (2)\n"
        "  -group/-group2 N    largest group, 1, 2, 4 .. 32           (8/8)\n"
        "  -thmse/-thmse2 T    largest mean squared distance     (2500/400)\n"
        "  -hdthr L            hard threshold in units of sigma       (2.7)\n"
        "  -mu2 M              Wiener regularisation, units of sigma^2 (1)\n"
        "  -kaiser B           Kaiser window parameter                (2.0)\n"
        "  -transform T        2-D transform of step 1: dct or bior   (dct)\n"
        "  -transform1d T      along groups: hadamard or haar         (hadamard)\n"
        "  -round R            1: each basic estimate rounded to integers\n"
        "                      (RGB: its opponent channels, U and V\n"
        "                      within -128 .. 127),\n"
        "                      0: kept in float (vbm3d_gpu's rule: 1 on 8-bit\n"
        "                      samples, a window of more than one frame, both\n"
        "                      steps)\n"
        "PPM only:\n"
        "  -color C            joint: groups found on the first channel serve\n"
        "                      all three (RGB as opponent channels);\n"
        "                      planes: each channel on its own      (joint)\n"
        "  -yuv                the channels are Y, U, V of a 4:4:4 frame, not\n"
        "                      R, G, B: no opponent transform, one sigma\n");
    exit(2);
}

/*
 * Whether 'pattern' holds exactly one conversion, %d with an optional 0
 * flag and width, and otherwise only %% escapes.
 */
static int valid_pattern(const char *pattern)
{
    const char *p;
    int nb_conv = 0;

    for (p = pattern; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        p++;
        while (*p >= '0' && *p <= '9')
            p++;
        if (*p != 'd')
            return 0;
        nb_conv++;
    }
    return nb_conv == 1;
}

/* The name of output number i; the caller frees it. */
static char *output_name(const char *pattern, int i)
{
    size_t size = strlen(pattern) + 32;
    char *name = malloc(size);

    if (!name) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    snprintf(name, size, pattern, i);
    return name;
}

/* Read every frame; all must match the first in size, format and maxval. */
static PNMImage *read_frames(char **names, int nb_frames)
{
    PNMImage *frames = calloc(nb_frames, sizeof(*frames));
    int f;

    if (!frames) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    for (f = 0; f < nb_frames; f++) {
        if (ref_read_pnm(names[f], &frames[f]) < 0)
            exit(1);
        if (frames[f].width != frames[0].width ||
            frames[f].height != frames[0].height ||
            frames[f].channels != frames[0].channels ||
            frames[f].maxval != frames[0].maxval) {
            fprintf(stderr, "%s: %dx%d, %d channels, maxval %d: not as %s\n",
                    names[f], frames[f].width, frames[f].height,
                    frames[f].channels, frames[f].maxval, names[0]);
            exit(1);
        }
    }
    return frames;
}

/* nb planes of 'size' floats, or exit. */
static float **alloc_planes(int nb, size_t size)
{
    float **planes = calloc(nb, sizeof(*planes));
    int f;

    for (f = 0; planes && f < nb; f++) {
        planes[f] = malloc(size * sizeof(*planes[f]));
        if (!planes[f])
            break;
    }
    if (!planes || f < nb) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return planes;
}

static void free_planes(float **planes, int nb)
{
    int f;

    for (f = 0; f < nb; f++)
        free(planes[f]);
    free(planes);
}

/*
 * Write frames planes[c][f], f = 0 .. nb_frames - 1 (rows of 'pitch'
 * floats), quantised as 'img' (whose samples are overwritten), to the names
 * of 'pattern'.
 */
static int write_frames(const char *pattern, int start, float **const *planes,
                        int nb_frames, int pitch, PNMImage *img)
{
    int f, c, ret = 0;

    for (f = 0; f < nb_frames && !ret; f++) {
        char *name = output_name(pattern, start + f);
        float *frame[3];

        for (c = 0; c < img->channels; c++)
            frame[c] = planes[c][f];
        ret = ref_write_planes(name, frame, pitch, img);
        free(name);
    }
    return ret;
}

static int parse_choice(const char *opt, const char *arg,
                        const char *no, const char *yes)
{
    if (!strcmp(arg, no))
        return 0;
    if (!strcmp(arg, yes))
        return 1;
    fprintf(stderr, "%s: '%s' is neither %s nor %s\n", opt, arg, no, yes);
    exit(2);
}

/* Step index of a per-step option: 1 when its name ends in '2', else 0. */
static int step_of(const char *opt)
{
    return opt[strlen(opt) - 1] == '2';
}

static int is_step_opt(const char *opt, const char *name)
{
    size_t len = strlen(name);

    return !strncmp(opt, name, len) && (!opt[len] || !strcmp(opt + len, "2"));
}

int main(int argc, char **argv)
{
    VBM3DModelParams par;
    const char *out_pattern = NULL, *basic_pattern = NULL, *err;
    char **in_names;
    PNMImage *in, out;
    int nb_frames = 0, joint = 1, yuv = 0, start = 0, nb_ch;
    int round_basic = -1;   /* -1: vbm3d_gpu's rule */
    float **noisy[3], **basic[3], **dst[3];
    size_t n;
    int a, c, f;

    vbm3d_model_defaults(&par);
    in_names = calloc(argc, sizeof(*in_names));
    if (!in_names) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }

    for (a = 1; a < argc; a++) {
        const char *opt = argv[a], *arg;

        if (opt[0] != '-' || !opt[1]) {
            in_names[nb_frames++] = argv[a];
            continue;
        }
        if (!strcmp(opt, "-yuv")) {
            yuv = 1;
            continue;
        }
        if (a + 1 >= argc)
            usage();
        arg = argv[++a];
        if (!strcmp(opt, "-o"))
            out_pattern = arg;
        else if (!strcmp(opt, "-basic"))
            basic_pattern = arg;
        else if (!strcmp(opt, "-start_number"))
            start = ref_parse_int(opt, arg, 0, 1000000000);
        else if (!strcmp(opt, "-shift"))
            ref_set_shift(ref_parse_int(opt, arg, 0, 8));
        else if (!strcmp(opt, "-sigma"))
            par.sigma = (float)ref_parse_num(opt, arg, 0, 255);
        else if (!strcmp(opt, "-past"))
            par.past = ref_parse_int(opt, arg, 0, VBM3D_MODEL_MAX_RADIUS);
        else if (!strcmp(opt, "-future"))
            par.future = ref_parse_int(opt, arg, 0, VBM3D_MODEL_MAX_RADIUS);
        else if (!strcmp(opt, "-estim"))
            par.estim = parse_choice(opt, arg, "final", "basic");
        else if (is_step_opt(opt, "-bstep"))
            par.steps[step_of(opt)].step = ref_parse_int(opt, arg, 1, 8);
        else if (is_step_opt(opt, "-range"))
            par.steps[step_of(opt)].w1 = ref_parse_int(opt, arg, 1, 199);
        else if (is_step_opt(opt, "-prange"))
            par.steps[step_of(opt)].w2 = ref_parse_int(opt, arg, 1, 199);
        else if (!strcmp(opt, "-perframe"))
            par.q = ref_parse_int(opt, arg, 1, 32);
        else if (is_step_opt(opt, "-group"))
            par.steps[step_of(opt)].group = ref_parse_int(opt, arg, 1, 32);
        else if (is_step_opt(opt, "-thmse"))
            par.steps[step_of(opt)].tau = (float)ref_parse_num(opt, arg, 0, 1e9);
        else if (!strcmp(opt, "-hdthr"))
            par.lambda = (float)ref_parse_num(opt, arg, 0, 100);
        else if (!strcmp(opt, "-mu2"))
            par.mu2 = (float)ref_parse_num(opt, arg, 0, 100);
        else if (!strcmp(opt, "-kaiser"))
            par.beta = (float)ref_parse_num(opt, arg, 0, 100);
        else if (!strcmp(opt, "-transform"))
            par.transform = parse_choice(opt, arg, "bior", "dct");
        else if (!strcmp(opt, "-transform1d"))
            par.haar = parse_choice(opt, arg, "hadamard", "haar");
        else if (!strcmp(opt, "-color"))
            joint = !parse_choice(opt, arg, "joint", "planes");
        else if (!strcmp(opt, "-round"))
            round_basic = ref_parse_int(opt, arg, 0, 1);
        else
            usage();
    }
    if (!nb_frames || !out_pattern)
        usage();
    if (!valid_pattern(out_pattern) ||
        (basic_pattern && !valid_pattern(basic_pattern))) {
        fprintf(stderr, "an output pattern needs exactly one %%d\n");
        return 2;
    }
    /* the parameters alone, before the size of the frames is known */
    err = vbm3d_model_check(&par, 8, 8);
    if (err) {
        fprintf(stderr, "%s\n", err);
        return 2;
    }

    in = read_frames(in_names, nb_frames);
    out = in[0];
    for (f = 0; f < nb_frames; f++)
        if (ref_pad_image(&in[f], 8) < 0)
            return 1;
    nb_ch = in[0].channels;
    if (yuv && nb_ch != 3) {
        fprintf(stderr, "%s: -yuv needs a PPM (P6)\n", in_names[0]);
        return 1;
    }
    err = vbm3d_model_check(&par, in[0].width, in[0].height);
    if (err) {
        fprintf(stderr, "%s: %dx%d: %s\n", in_names[0], in[0].width,
                in[0].height, err);
        return 1;
    }

    n = (size_t)in[0].width * in[0].height;
    for (c = 0; c < nb_ch; c++) {
        noisy[c] = alloc_planes(nb_frames, n);
        basic[c] = alloc_planes(nb_frames, n);
        dst[c]   = alloc_planes(nb_frames, n);
        for (f = 0; f < nb_frames; f++)
            ref_load_plane(&in[f], c, noisy[c][f]);
    }

    /* vbm3d_gpu's rule: its rings hold bytes (8-bit samples, RGB ones as
     * R, G, B, more than one frame), and step 2 runs */
    par.round_basic = round_basic >= 0 ? round_basic :
                      in[0].maxval == 255 && (par.past || par.future) &&
                      par.estim == 0;
    if (nb_ch == 3 && joint)
        vbm3d_model_color(noisy, nb_frames, in[0].width, in[0].height, !yuv,
                          &par, basic, dst);
    else
        for (c = 0; c < nb_ch; c++)
            vbm3d_model_planes(noisy[c], nb_frames, in[0].width,
                               in[0].height, &par, basic[c], dst[c]);

    out.data = in[0].data;  /* large enough: the padded frame's */
    if (write_frames(out_pattern, start, dst, nb_frames, in[0].width, &out) < 0)
        return 1;
    if (basic_pattern &&
        write_frames(basic_pattern, start, basic, nb_frames, in[0].width, &out) < 0)
        return 1;

    for (f = 0; f < nb_frames; f++)
        free(in[f].data);
    free(in);
    free(in_names);
    for (c = 0; c < nb_ch; c++) {
        free_planes(noisy[c], nb_frames);
        free_planes(basic[c], nb_frames);
        free_planes(dst[c], nb_frames);
    }
    return 0;
}
