/*
 * nlmeans_ref: run the golden model of nlmeans_gpu on PGM and PPM images.
 *
 * Build:
 *   cc -std=c99 -O2 -ffp-contract=off -Wall -Wextra -o nlmeans_ref \
 *      nlmeans_ref.c nlmeans_model.c ../tools/pnm.c -lm
 *
 * Usage:
 *   nlmeans_ref [options] in.pgm out.pgm
 *   nlmeans_ref [options] [-color joint|planes|opponent] [-yuv] in.ppm out.ppm
 *   nlmeans_ref [options] -frames f0.pgm,f1.pgm,... [-ref K] out.pgm
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

#include "nlmeans_model.h"
#include "ref_tool.h"
#include "../tools/pnm.h"

#define MAX_FRAMES  64

static void usage(void)
{
    fprintf(stderr,
        "usage: nlmeans_ref [options] in.pgm out.pgm\n"
        "       nlmeans_ref [options] [-color joint|planes|opponent] [-yuv] in.ppm out.ppm\n"
        "       nlmeans_ref [options] -frames f0.pgm,f1.pgm,... [-ref K] out.pgm\n"
        "Binary PGM (P5) or PPM (P6) with maxval 255 or 65535; the output has\n"
        "the format and maxval of the input.\n"
        "options (meanings and defaults of the nlmeans_gpu options):\n"
        "  -sigma S   noise standard deviation, 8-bit scale   (10)\n"
        "  -shift N   low bits of 16-bit output left 0 (MSB formats) (0)\n"
        "  -h H       filtering strength, 0: sigma            (0)\n"
        "  -p P       patch size                              (8)\n"
        "  -step S    step of the grid of reference patches   (4)\n"
        "  -r R       research window size                    (21)\n"
        "  -n N       number of most similar patches          (16)\n"
        "  -flat F    flat threshold in sigma^2 units, 0: off (1.05)\n"
        "  -kernel K  weighting kernel: exp or bisquare       (exp)\n"
        "  -frames L  comma-separated frame stack searched for neighbours\n"
        "  -ref K     index of the frame to denoise in -frames (middle)\n"
        "PPM only:\n"
        "  -color C   joint: one distance summed over the three channels;\n"
        "             planes: each channel on its own;\n"
        "             opponent: RGB as opponent channels, each on its own\n"
        "             (with -yuv as planes);\n"
        "             auto: opponent, or planes with -yuv      (auto)\n"
        "  -yuv       the channels are Y, U, V of a 4:4:4 frame, not R, G, B:\n"
        "             -csigma applies to U and V\n"
        "  -csigma S  noise of the chroma channels, -1: sigma (-1)\n");
    exit(2);
}

enum Color {
    COLOR_JOINT,
    COLOR_PLANES,
    COLOR_OPPONENT,
    COLOR_AUTO,
};

/*
 * Denoise the reference frame of the channel stacks 'frames' into 'dst':
 * the three channels together (joint), as opponent colours (RGB), or each
 * channel on its own with its noise (csigma for the chroma of YUV frames).
 */
static void denoise(float *const *frames, int nb_ch, int nb_frames, int ref,
                    int width, int height, int color, int yuv,
                    const NLMeansModelParams *par, float *const *dst)
{
    NLMeansModelParams pc = *par;
    int c;

    if (!yuv)
        pc.csigma = -1.0f;
    if (color == COLOR_AUTO)
        color = yuv ? COLOR_PLANES : COLOR_OPPONENT;
    if (nb_ch == 3 && color == COLOR_JOINT) {
        nlmeans_model_channels((const float *const *)frames, nb_ch, nb_frames,
                               ref, width, height, &pc, dst);
        return;
    }
    if (nb_ch == 3 && color == COLOR_OPPONENT && !yuv) {
        nlmeans_model_opponent((const float *const *)frames, nb_frames, ref,
                               width, height, &pc, dst);
        return;
    }
    for (c = 0; c < nb_ch; c++) {
        NLMeansModelParams plane = pc;

        if (c && pc.csigma >= 0)
            plane.sigma = pc.csigma;
        nlmeans_model_plane(frames[c], nb_frames, ref, width, height, &plane,
                            dst[c]);
    }
}

int main(int argc, char **argv)
{
    NLMeansModelParams par;
    const char *pos_args[2];
    char *frame_list = NULL;
    char *names[MAX_FRAMES];
    PNMImage frames_img[MAX_FRAMES], out;
    int nb_pos = 0, nb_frames = 0, ref = -1, color = COLOR_AUTO, yuv = 0;
    float *frames[3], *dst[3];
    size_t n, i;
    int a, c, t, nb_ch;

    nlmeans_model_default_params(&par);
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
        else if (!strcmp(opt, "-csigma"))
            par.csigma = (float)ref_parse_num(opt, argv[++a], -1, 255);
        else if (!strcmp(opt, "-h"))
            par.h = (float)ref_parse_num(opt, argv[++a], 0, 255);
        else if (!strcmp(opt, "-p"))
            par.patch = ref_parse_int(opt, argv[++a], 1, 32);
        else if (!strcmp(opt, "-step"))
            par.step = ref_parse_int(opt, argv[++a], 1, 32);
        else if (!strcmp(opt, "-r"))
            par.research = ref_parse_int(opt, argv[++a], 1, 99);
        else if (!strcmp(opt, "-n"))
            par.nb_neighbors = ref_parse_int(opt, argv[++a], 1, 32);
        else if (!strcmp(opt, "-flat"))
            par.flat = (float)ref_parse_num(opt, argv[++a], 0, 10);
        else if (!strcmp(opt, "-kernel")) {
            const char *v = argv[++a];
            if (!strcmp(v, "exp"))
                par.kernel = NLMEANS_MODEL_EXP;
            else if (!strcmp(v, "bisquare"))
                par.kernel = NLMEANS_MODEL_BISQUARE;
            else
                usage();
        } else if (!strcmp(opt, "-color")) {
            const char *v = argv[++a];
            if (!strcmp(v, "joint"))
                color = COLOR_JOINT;
            else if (!strcmp(v, "planes"))
                color = COLOR_PLANES;
            else if (!strcmp(v, "opponent"))
                color = COLOR_OPPONENT;
            else if (!strcmp(v, "auto"))
                color = COLOR_AUTO;
            else
                usage();
        } else if (!strcmp(opt, "-frames"))
            frame_list = argv[++a];
        else if (!strcmp(opt, "-ref"))
            ref = ref_parse_int(opt, argv[++a], 0, MAX_FRAMES - 1);
        else
            usage();
    }
    if (par.step > par.patch) {
        fprintf(stderr, "step (%d) must not exceed the patch size p (%d)\n",
                par.step, par.patch);
        return 2;
    }

    if (frame_list) {
        char *s = frame_list, *comma;

        if (nb_pos != 1)
            usage();
        for (;;) {
            if (nb_frames == MAX_FRAMES) {
                fprintf(stderr, "at most %d frames\n", MAX_FRAMES);
                return 2;
            }
            names[nb_frames++] = s;
            comma = strchr(s, ',');
            if (!comma)
                break;
            *comma = 0;
            s = comma + 1;
        }
        if (ref < 0)
            ref = (nb_frames - 1) / 2;
        if (ref >= nb_frames) {
            fprintf(stderr, "-ref %d: only %d frames\n", ref, nb_frames);
            return 2;
        }
    } else {
        if (nb_pos != 2 || ref > 0)
            usage();
        names[nb_frames++] = (char *)pos_args[0];
        ref = 0;
    }

    for (t = 0; t < nb_frames; t++) {
        if (ref_read_pnm(names[t], &frames_img[t]) < 0)
            return 1;
        if (frames_img[t].width    != frames_img[0].width  ||
            frames_img[t].height   != frames_img[0].height ||
            frames_img[t].channels != frames_img[0].channels ||
            frames_img[t].maxval   != frames_img[0].maxval) {
            fprintf(stderr, "%s: size, format or maxval differs from %s\n",
                    names[t], names[0]);
            return 1;
        }
    }
    nb_ch = frames_img[0].channels;
    if (yuv && nb_ch != 3) {
        fprintf(stderr, "%s: -yuv needs a PPM (P6)\n", names[0]);
        return 1;
    }

    out = frames_img[ref];
    n = (size_t)out.width * out.height;
    out.data = malloc(n * nb_ch * sizeof(*out.data));
    if (!out.data) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (c = 0; c < nb_ch; c++) {
        frames[c] = malloc(n * nb_frames * sizeof(*frames[c]));
        dst[c]    = malloc(n * sizeof(*dst[c]));
        if (!frames[c] || !dst[c]) {
            fprintf(stderr, "out of memory\n");
            return 1;
        }
        for (t = 0; t < nb_frames; t++)
            for (i = 0; i < n; i++)
                frames[c][t * n + i] = ref_to_8bit_scale(frames_img[t].data[i * nb_ch + c],
                                                     out.maxval);
    }

    denoise(frames, nb_ch, nb_frames, ref, out.width, out.height, color, yuv,
            &par, dst);

    for (c = 0; c < nb_ch; c++)
        for (i = 0; i < n; i++)
            out.data[i * nb_ch + c] = ref_quantise(dst[c][i], out.maxval);
    if (pnm_write(pos_args[nb_pos - 1], &out) < 0)
        return 1;

    for (t = 0; t < nb_frames; t++)
        free(frames_img[t].data);
    free(out.data);
    for (c = 0; c < nb_ch; c++) {
        free(frames[c]);
        free(dst[c]);
    }
    return 0;
}
