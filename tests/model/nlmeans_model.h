/*
 * Golden model of the nlmeans_gpu filter.
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

#ifndef NLMEANS_MODEL_H
#define NLMEANS_MODEL_H

/*
 * Options of one plane, with the meanings and the defaults of the filter
 * options of the same names: sigma 10, h 0, p 8, step 4, r 21, n 16,
 * flat 1.05.
 */
typedef struct NLMeansModelParams {
    float sigma;        /* noise standard deviation, 8-bit scale */
    float h;            /* filtering strength, 0: equal to sigma */
    int   patch;        /* patch size p */
    int   step;         /* step of the grid of reference patches */
    int   research;     /* research window size r */
    int   nb_neighbors; /* n, number of most similar patches kept */
    float flat;         /* flat-group threshold in units of sigma^2, 0: off */
} NLMeansModelParams;

/* Fill 'par' with the defaults of the filter. */
void nlmeans_model_default_params(NLMeansModelParams *par);

/*
 * Denoise one plane.
 *
 * frames:    nb_frames planes of width * height floats each, row-major with
 *            pitch width, on the 8-bit scale (0..255 whatever the bit depth)
 * ref_frame: index of the plane to denoise; candidates are searched in all
 *            nb_frames planes (the filter itself passes one frame)
 * dst:       width * height floats, the denoised reference plane on the
 *            8-bit scale, before quantisation
 *
 * Exits the program when memory runs out.
 */
void nlmeans_model_plane(const float *frames, int nb_frames, int ref_frame,
                         int width, int height, const NLMeansModelParams *par,
                         float *dst);

#endif /* NLMEANS_MODEL_H */
