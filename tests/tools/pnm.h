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

#ifndef PNM_H
#define PNM_H

#include <stdio.h>

/* Largest number of samples (width * height * channels) of an image. */
#define PNM_MAX_SAMPLES (1 << 28)

typedef struct PNMImage {
    int width, height, maxval;
    int channels;               /* 1 for P5, 3 for P6 */
    unsigned *data;             /* width * height * channels samples,
                                   channels interleaved */
} PNMImage;

/*
 * Errors are reported on stderr as "name: reason" (or "out of memory"),
 * except where said otherwise; the caller picks its exit status.
 */

/* fopen() name; on failure report "name: strerror(errno)", return NULL. */
FILE *pnm_open(const char *name, const char *mode);

/*
 * Read magic number, width, height and maxval, comments allowed before each
 * field, and set width, height, maxval and channels. Only the syntax is
 * checked: any value may be out of range. Returns 0, or -1 without a message
 * when the file does not start with a P5 or P6 header.
 */
int pnm_read_header(FILE *f, PNMImage *img);

/*
 * Read the samples that follow the header (one byte each for maxval up to
 * 255, else two, big-endian) into img->data, newly allocated. Returns 0 or
 * -1; name is only for the messages.
 */
int pnm_read_samples(FILE *f, const char *name, PNMImage *img);

/*
 * Read a whole file: a P5 or P6 of maxval 1..65535, width and height at
 * least 1 and at most PNM_MAX_SAMPLES samples. Returns 0 or -1.
 */
int pnm_read(const char *name, PNMImage *img);

/* Write img as a P5 (1 channel) or P6 (3 channels). Returns 0 or -1. */
int pnm_write(const char *name, const PNMImage *img);

#endif /* PNM_H */
