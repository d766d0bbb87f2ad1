/*
 * Helpers of the command-line tools of the golden models.
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

#include "ref_tool.h"

int ref_read_pnm(const char *name, PNMImage *img)
{
    FILE *f = pnm_open(name, "rb");
    int ret = -1;

    if (!f)
        return -1;
    if (pnm_read_header(f, img) < 0 ||
        (img->channels != 1 && img->channels != 3))
        fprintf(stderr, "%s: not a binary PGM (P5) or PPM (P6)\n", name);
    else if (img->maxval != 255 && img->maxval != 65535)
        fprintf(stderr, "%s: maxval %d, only 255 and 65535 are supported\n",
                name, img->maxval);
    else if (img->width < 1 || img->height < 1 ||
             (double)img->width * img->height * img->channels >
             PNM_MAX_SAMPLES)
        fprintf(stderr, "%s: bad size %dx%d\n", name, img->width, img->height);
    else
        ret = pnm_read_samples(f, name, img);
    fclose(f);
    return ret;
}

float ref_to_8bit_scale(unsigned v, int maxval)
{
    return (float)v * (255.0f / (float)maxval);
}

/* unused low bits of 16-bit samples (ref_set_shift) */
static int quantise_shift;

void ref_set_shift(int shift)
{
    quantise_shift = shift;
}

unsigned ref_quantise(float v, int maxval)
{
    float container = (float)maxval;
    float unit = (float)(1 << (maxval == 65535 ? quantise_shift : 0));
    float levels = floorf(container / unit);
    float q = v * (container / (255.0f * unit));

    q = q < 0.0f ? 0.0f : q > levels ? levels : q;
    return (unsigned)rintf(q) * (unsigned)unit;
}

void ref_load_plane(const PNMImage *img, int c, float *plane)
{
    size_t i, n = (size_t)img->width * img->height;

    for (i = 0; i < n; i++)
        plane[i] = ref_to_8bit_scale(img->data[i * img->channels + c],
                                     img->maxval);
}

int ref_write_planes(const char *name, float *const *planes, int pitch,
                     PNMImage *img)
{
    size_t i = 0;
    int x, y, c;

    for (y = 0; y < img->height; y++)
        for (x = 0; x < img->width; x++, i++)
            for (c = 0; c < img->channels; c++)
                img->data[i * img->channels + c] =
                    ref_quantise(planes[c][(size_t)y * pitch + x], img->maxval);
    return pnm_write(name, img);
}

int ref_mirror(int i, int size)
{
    int m = i % (2 * size);

    return m < size ? m : 2 * size - 1 - m;
}

int ref_pad_image(PNMImage *img, int min_size)
{
    int width  = img->width  < min_size ? min_size : img->width;
    int height = img->height < min_size ? min_size : img->height;
    unsigned *data;
    int x, y, c;

    if (width == img->width && height == img->height)
        return 0;
    data = malloc((size_t)width * height * img->channels * sizeof(*data));
    if (!data) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    for (y = 0; y < height; y++) {
        int sy = ref_mirror(y, img->height);
        for (x = 0; x < width; x++) {
            int sx = ref_mirror(x, img->width);
            for (c = 0; c < img->channels; c++)
                data[((size_t)y * width + x) * img->channels + c] =
                    img->data[((size_t)sy * img->width + sx) * img->channels + c];
        }
    }
    free(img->data);
    img->data   = data;
    img->width  = width;
    img->height = height;
    return 0;
}

double ref_parse_num(const char *opt, const char *arg, double min, double max)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(arg, &end);
    if (errno || end == arg || *end || !(v >= min && v <= max)) {
        fprintf(stderr, "%s: bad value '%s' (range %g..%g)\n", opt, arg, min, max);
        exit(2);
    }
    return v;
}

int ref_parse_int(const char *opt, const char *arg, int min, int max)
{
    double v = ref_parse_num(opt, arg, min, max);

    if (v != (int)v) {
        fprintf(stderr, "%s: '%s' is not an integer\n", opt, arg);
        exit(2);
    }
    return (int)v;
}
