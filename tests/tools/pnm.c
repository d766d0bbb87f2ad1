/*
 * Binary PGM (P5) and PPM (P6) reading and writing for the test tools.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pnm.h"

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Return the first character that is neither white space nor in a comment. */
static int skip_space_and_comments(FILE *f)
{
    int c;

    for (;;) {
        c = getc(f);
        if (c == '#') {
            while (c != '\n' && c != '\r' && c != EOF)
                c = getc(f);
        } else if (!is_space(c)) {
            return c;
        }
    }
}

static int read_header_int(FILE *f, int *v)
{
    int c = skip_space_and_comments(f);
    long n = 0;

    if (c < '0' || c > '9')
        return -1;
    while (c >= '0' && c <= '9') {
        n = n * 10 + (c - '0');
        if (n > 1000000000)
            return -1;
        c = getc(f);
    }
    /* exactly one whitespace character ends a field */
    if (!is_space(c))
        return -1;
    *v = (int)n;
    return 0;
}

static size_t nb_samples(const PNMImage *img)
{
    return (size_t)img->width * img->height * img->channels;
}

FILE *pnm_open(const char *name, const char *mode)
{
    FILE *f = fopen(name, mode);

    if (!f)
        fprintf(stderr, "%s: %s\n", name, strerror(errno));
    return f;
}

int pnm_read_header(FILE *f, PNMImage *img)
{
    int magic;

    if (getc(f) != 'P' || ((magic = getc(f)) != '5' && magic != '6') ||
        read_header_int(f, &img->width)  < 0 ||
        read_header_int(f, &img->height) < 0 ||
        read_header_int(f, &img->maxval) < 0)
        return -1;
    img->channels = magic == '6' ? 3 : 1;
    return 0;
}

int pnm_read_samples(FILE *f, const char *name, PNMImage *img)
{
    int bytes = img->maxval > 255 ? 2 : 1;
    size_t n = nb_samples(img), i;
    unsigned char *buf = malloc(n * bytes);

    img->data = malloc(n * sizeof(*img->data));
    if (!buf || !img->data) {
        fprintf(stderr, "out of memory\n");
        goto fail;
    }
    if (fread(buf, bytes, n, f) != n) {
        fprintf(stderr, "%s: truncated\n", name);
        goto fail;
    }
    for (i = 0; i < n; i++)
        img->data[i] = bytes == 1 ? buf[i] : buf[2 * i] << 8 | buf[2 * i + 1];
    free(buf);
    return 0;

fail:
    free(buf);
    free(img->data);
    img->data = NULL;
    return -1;
}

int pnm_read(const char *name, PNMImage *img)
{
    FILE *f = pnm_open(name, "rb");
    int ret = -1;

    if (!f)
        return -1;
    if (pnm_read_header(f, img) < 0 ||
        img->maxval < 1 || img->maxval > 65535 ||
        img->width  < 1 || img->height < 1)
        fprintf(stderr, "%s: not a binary PGM (P5) or PPM (P6)\n", name);
    else if ((double)img->width * img->height * img->channels > PNM_MAX_SAMPLES)
        fprintf(stderr, "%s: too large\n", name);
    else
        ret = pnm_read_samples(f, name, img);
    fclose(f);
    return ret;
}

int pnm_write(const char *name, const PNMImage *img)
{
    FILE *f = pnm_open(name, "wb");
    size_t n = nb_samples(img), i;
    int ok;

    if (!f)
        return -1;
    fprintf(f, "P%c\n%d %d\n%d\n", img->channels == 3 ? '6' : '5',
            img->width, img->height, img->maxval);
    for (i = 0; i < n; i++) {
        if (img->maxval > 255)
            putc(img->data[i] >> 8, f);
        putc(img->data[i] & 0xff, f);
    }
    ok = !ferror(f);
    if (fclose(f) || !ok) {
        fprintf(stderr, "%s: write error\n", name);
        return -1;
    }
    return 0;
}
