/*
 * Helpers of the command-line tools of the golden models (bm3d_ref,
 * vbm3d_ref): images in and out, numeric options.
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

#ifndef REF_TOOL_H
#define REF_TOOL_H

#include "../tools/pnm.h"

/*
 * Read a binary PGM (P5) or PPM (P6) of maxval 255 or 65535. Returns 0, or
 * -1 after a message on stderr.
 */
int ref_read_pnm(const char *name, PNMImage *img);

/*
 * Sample to the 8-bit scale, as denoise_load_plane() does: the stored
 * integer times 255 / maxval, in float (exactly v for 8-bit samples).
 */
float ref_to_8bit_scale(unsigned v, int maxval);

/*
 * Back to samples, as denoise_quantise() with shift 0 and the image write
 * that follows it (which gives back the result exactly).
 */
unsigned ref_quantise(float v, int maxval);

/**
 * 16-bit samples are written with their 'shift' lowest bits 0, as the
 * filters write formats whose samples are the high bits of 16 (10 bits in
 * gbrp10msb: shift 6; p010: 6; 12 bits: 4): denoise_quantise() with that
 * shift. The option -shift of the models' tools.
 */
void ref_set_shift(int shift);

/* i mirrored into 0 .. size - 1 (about the last sample, then the first...),
 * as a small plane is padded (ref_pad_image()) */
int ref_mirror(int i, int size);

/*
 * Channel c of the interleaved samples of 'img' on the 8-bit scale, into
 * width * height floats.
 */
void ref_load_plane(const PNMImage *img, int c, float *plane);

/*
 * Write the img->channels planes of 'planes' (rows of 'pitch' floats, at
 * least img->width), quantised to the maxval of 'img' and interleaved into
 * img->data, to the file 'name'. Returns 0, or -1 after a message.
 */
int ref_write_planes(const char *name, float *const *planes, int pitch,
                     PNMImage *img);

/*
 * Extend 'img' to at least min_size x min_size samples by mirroring it
 * about its edges, as the filters load a plane smaller than their
 * block (doc/bm3d_gpu-algorithm.md, "Small planes"). Returns 0, or -1
 * after a message.
 */
int ref_pad_image(PNMImage *img, int min_size);

/*
 * The value of option 'opt', a number in min .. max (an integer for
 * ref_parse_int()); exits with status 2 and a message when it is not.
 */
double ref_parse_num(const char *opt, const char *arg, double min, double max);
int ref_parse_int(const char *opt, const char *arg, int min, int max);

#endif /* REF_TOOL_H */
