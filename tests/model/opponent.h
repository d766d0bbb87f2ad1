/*
 * Opponent colours of the golden models, as denoise_opponent_forward() and
 * denoise_opponent_inverse() of kernels/denoise_common.cl and
 * ff_denoise_opponent_sigma() compute them.
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

#ifndef OPPONENT_H
#define OPPONENT_H

#include <math.h>

/* R, G, B to Y = (R + G + B) / 3, U = (R - B) / 2, V = (R + B - 2 G) / 4,
 * in float, exactly as written. */
static inline void opponent_forward(float r, float g, float b, float *o)
{
    o[0] = ((r + g) + b) * (1.0f / 3.0f);
    o[1] = (r - b) * 0.5f;
    o[2] = ((r + b) - 2.0f * g) * 0.25f;
}

static inline void opponent_inverse(float y, float u, float v, float *rgb)
{
    const float m = y + v * (2.0f / 3.0f);

    rgb[0] = m + u;
    rgb[1] = y - v * (4.0f / 3.0f);
    rgb[2] = m - u;
}

/* Noise of opponent channel c when R, G and B have noise sigma. */
static inline float opponent_sigma(float sigma, int c)
{
    static const double gain[3] = { 1.0 / 3.0, 1.0 / 2.0, 3.0 / 8.0 };

    return (float)((double)sigma * sqrt(gain[c]));
}

#endif /* OPPONENT_H */
