/*
 * Golden model of the bm3d_gpu filter.
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

#ifndef BM3D_MODEL_H
#define BM3D_MODEL_H

/* Parameters of one of the two steps (doc/bm3d_gpu-algorithm.md). */
typedef struct BM3DModelStep {
    int   step;         /* step of the grid of reference patches, 1..8 */
    int   window;       /* research window size; radius window / 2 */
    int   group;        /* largest group: a power of two, 1..32 */
    float tau;          /* largest distance, mean squared difference per
                           sample (8-bit scale) */
} BM3DModelStep;

typedef struct BM3DModelParams {
    float sigma;        /* noise standard deviation, 8-bit scale */
    float lambda;       /* hard threshold in units of sigma (step 1) */
    float mu2;          /* Wiener regularisation (step 2): its sigma is
                           sigma * sqrtf(mu2), in float */
    float beta;         /* Kaiser window parameter */
    BM3DModelStep steps[2]; /* [0]: step 1 (hard thresholding),
                               [1]: step 2 (Wiener filtering) */
    int   estim;        /* 0: both steps, 1: basic estimate only */
    int   transform;    /* 2-D transform of step 1: 0 Bior1.5, 1 DCT (the
                           default; step 2 always uses the DCT) */
    int   haar;         /* 1-D transform along the groups, both steps:
                           0 Walsh-Hadamard, 1 Haar */
    int   round_basic;  /* 1: the basic estimate is rounded to integers
                           (within 0 .. 255) before step 2, as bm3d_gpu
                           does on 8-bit frames searched on integers (not
                           RGB grouped jointly, not sigma=curve) when step
                           2's grid step is even; 0 (the profiles' value):
                           kept in float */
} BM3DModelParams;

/*
 * Fill every field of 'par' with the profile 'name', "fast" or "ref", of the
 * table of doc/bm3d_gpu-algorithm.md; sigma is set to 10, estim and
 * round_basic to 0.
 * Returns 0, or -1 (par untouched) for an unknown name.
 */
int bm3d_model_profile(BM3DModelParams *par, const char *name);

/*
 * NULL when the model accepts 'par' for a plane of width x height, else a
 * message saying why not (frames smaller than 8x8 are refused).
 */
const char *bm3d_model_check(const BM3DModelParams *par, int width, int height);

/*
 * Denoise one plane.
 *
 * noisy: width * height floats, row-major with pitch width, on the 8-bit
 *        scale (0..255 whatever the bit depth)
 * basic: width * height floats, the basic estimate (step 1)
 * dst:   width * height floats, the final estimate (step 2), or a copy of
 *        the basic estimate when par->estim == 1
 * Both outputs are before quantisation.
 *
 * Exits the program with a message when bm3d_model_check() refuses the
 * parameters or when memory runs out.
 */
void bm3d_model_plane(const float *noisy, int width, int height,
                      const BM3DModelParams *par, float *basic, float *dst);

/*
 * Denoise a frame of three channels of the same size with joint grouping
 * (doc/bm3d_gpu-algorithm.md, "Colour: joint grouping"; CBM3D).
 *
 * noisy:  three planes of width * height floats, pitch width, 8-bit scale;
 *         R, G, B when is_rgb, else Y, U, V of a 4:4:4 frame. Not modified.
 * is_rgb: 1: the planes are turned into opponent channels (in float, the
 *         expressions of the document), each filtered with its own sigma,
 *         (float)((double)sigma * sqrt(1/3, 1/2, 3/8)), and the estimates
 *         turned back into R, G, B; 0: used as they are, all with sigma.
 * basic:  NULL, or three planes receiving the basic estimate (in R, G, B
 *         when is_rgb)
 * dst:    three planes receiving the final estimate, or the basic estimate
 *         when par->estim == 1
 * The groups are searched on channel 0 only (Y, or the opponent channel
 * Y) and serve all three. Outputs are before quantisation. Exits the
 * program like bm3d_model_plane().
 */
void bm3d_model_color(float *const noisy[3], int width, int height,
                      int is_rgb, const BM3DModelParams *par,
                      float *const basic[3], float *const dst[3]);

#endif /* BM3D_MODEL_H */
