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

/* Weighting kernels of the patch distances, as the filter's 'kernel' option. */
enum NLMeansModelKernel {
    NLMEANS_MODEL_EXP,      /* exp(-x / h^2) */
    NLMEANS_MODEL_BISQUARE, /* (1 - x / (3 h^2))^2, 0 beyond */
};

/*
 * Options, with the meanings and the defaults of the filter options of the
 * same names: sigma 10, csigma -1, h 0, p 8, step 4, r 21, n 16, flat 1.05,
 * kernel exp.
 */
typedef struct NLMeansModelParams {
    float sigma;        /* noise standard deviation, 8-bit scale */
    float csigma;       /* noise of channels 1 and 2 of nlmeans_model_channels(),
                           -1: sigma (the filter's csigma on YUV frames; RGB
                           frames have sigma in every channel) */
    float h;            /* filtering strength, 0: equal to sigma */
    int   patch;        /* patch size p */
    int   step;         /* step of the grid of reference patches */
    int   research;     /* research window size r */
    int   nb_neighbors; /* n, number of most similar patches kept */
    float flat;         /* flat-group threshold in units of sigma^2, 0: off */
    int   kernel;       /* enum NLMeansModelKernel */
} NLMeansModelParams;

/* Fill 'par' with the defaults of the filter. */
void nlmeans_model_default_params(NLMeansModelParams *par);

/*
 * Denoise one plane (csigma is not used).
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

/*
 * Denoise nb_channels channels (1 to 3) of the same size together, as the
 * filter's color=joint does: one patch distance summed over the channels,
 * each channel's squared differences weighted by
 * (sigma^2 + 1/12) / (sigma_c^2 + 1/12), so one set of neighbours and
 * weights for all channels; a group is flat when every channel is.
 *
 * frames[c]: the nb_frames planes of channel c, laid out as in
 *            nlmeans_model_plane()
 * dst[c]:    the denoised reference plane of channel c
 *
 * With one channel, the same as nlmeans_model_plane().
 */
void nlmeans_model_channels(const float *const *frames, int nb_channels,
                            int nb_frames, int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst);

/*
 * Denoise the three channels R, G, B of an RGB frame as the filter's
 * color=opponent does: turned into opponent channels, each denoised on its
 * own with its noise (nlmeans_model_plane()), then back to R, G, B.
 * frames and dst as in nlmeans_model_channels(); csigma is not used.
 */
void nlmeans_model_opponent(const float *const *frames, int nb_frames,
                            int ref_frame, int width, int height,
                            const NLMeansModelParams *par, float *const *dst);

#endif /* NLMEANS_MODEL_H */
