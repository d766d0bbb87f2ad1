/*
 * Golden model of the vbm3d_gpu filter.
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

#ifndef VBM3D_MODEL_H
#define VBM3D_MODEL_H

/* Parameters of one of the two steps (doc/vbm3d_gpu-algorithm.md). */
typedef struct VBM3DModelStep {
    int   step;         /* step of the grid of reference patches, 1..8 */
    int   w1;           /* search window in the reference frame; radius
                           w1 / 2 */
    int   w2;           /* predictive window in the other frames; radius
                           w2 / 2 */
    int   group;        /* largest group: a power of two, 1..32 */
    float tau;          /* largest distance, mean squared difference per
                           sample (8-bit scale) */
} VBM3DModelStep;

typedef struct VBM3DModelParams {
    float sigma;        /* noise standard deviation, 8-bit scale */
    float lambda;       /* hard threshold in units of sigma (step 1) */
    float mu2;          /* Wiener regularisation (step 2), as bm3d_model */
    float beta;         /* Kaiser window parameter */
    int   past;         /* P: past frames in the window of a frame */
    int   future;       /* F: future frames in the window of a frame */
    int   q;            /* best patches kept per frame, both steps, 1..32 */
    VBM3DModelStep steps[2]; /* [0]: step 1 (hard thresholding),
                                [1]: step 2 (Wiener filtering) */
    int   estim;        /* 0: both steps, 1: basic estimate only */
    int   transform;    /* 2-D transform of step 1: 0 Bior1.5, 1 DCT (the
                           default; step 2 always uses the DCT) */
    int   haar;         /* 1-D transform along the groups, both steps:
                           0 Walsh-Hadamard, 1 Haar */
    int   round_basic;  /* 1: each basic estimate rounded to integers
                           within 0 .. 255 as it is completed (vbm3d_gpu's
                           rings of bytes; opponent channels of RGB: their
                           R, G, B), 0: kept in float */
} VBM3DModelParams;

/* Largest P and F accepted. */
#define VBM3D_MODEL_MAX_RADIUS 32

/*
 * Fill every field of 'par' with the defaults of the table of
 * doc/vbm3d_gpu-algorithm.md; sigma is set to 10 and estim to 0.
 */
void vbm3d_model_defaults(VBM3DModelParams *par);

/*
 * NULL when the model accepts 'par' for frames of width x height, else a
 * message saying why not (frames smaller than 8x8 are refused).
 */
const char *vbm3d_model_check(const VBM3DModelParams *par,
                              int width, int height);

/*
 * Denoise a sequence of nb_frames planes, frames 0 .. nb_frames - 1 in
 * input order.
 *
 * noisy[f]: width * height floats, row-major with pitch width, on the 8-bit
 *           scale (0..255 whatever the bit depth). Not modified.
 * basic:    NULL, or nb_frames planes receiving the basic estimates (step 1)
 * dst[f]:   the final estimate of frame f (step 2), or the basic estimate
 *           when par->estim == 1
 * Outputs are before quantisation.
 *
 * Exits the program with a message when vbm3d_model_check() refuses the
 * parameters or when memory runs out.
 */
void vbm3d_model_planes(float *const *noisy, int nb_frames,
                        int width, int height, const VBM3DModelParams *par,
                        float *const *basic, float *const *dst);

/*
 * Denoise a sequence of frames of three channels of the same size with
 * joint grouping (doc/bm3d_gpu-algorithm.md, "Colour: joint grouping").
 *
 * noisy[c][f]: channel c of frame f, width * height floats, pitch width,
 *              8-bit scale; R, G, B when is_rgb, else Y, U, V of a 4:4:4
 *              frame. Not modified.
 * is_rgb:      1: the planes are turned into opponent channels, each
 *              filtered with its own sigma, and the estimates turned back
 *              into R, G, B (as bm3d_model_color()); 0: used as they are,
 *              all with sigma.
 * basic:       NULL, or basic[c][f] receiving the basic estimates (in R, G,
 *              B when is_rgb)
 * dst[c][f]:   the final estimates, or the basic ones when par->estim == 1
 * The groups are searched on channel 0 only (Y, or the opponent channel Y)
 * and serve all three. Outputs are before quantisation. Exits the program
 * like vbm3d_model_planes().
 */
void vbm3d_model_color(float **const noisy[3], int nb_frames,
                       int width, int height, int is_rgb,
                       const VBM3DModelParams *par,
                       float **const basic[3], float **const dst[3]);

#endif /* VBM3D_MODEL_H */
