/*
 * Shared kernels of the GPU denoisers (nlmeans_gpu, bm3d_gpu, vbm3d_gpu).
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

/*
 * All filtering happens on float planes in the 8-bit scale (0..255 whatever
 * the bit depth of the frame), one float per sample, row-major with the
 * plane's width as pitch.  These kernels move samples between the OpenCL
 * images of a frame (one image per plane, one or two channels) and such
 * float planes.
 */

/* Keep a*b+c as two roundings everywhere, so that every device and the
 * golden model compute the same values. */
#pragma OPENCL FP_CONTRACT OFF

/* For a function that several kernels call with constants that its loops
 * are unrolled by (their specialisations): inlined into each, so that the
 * constants reach the loops on every compiler. PoCL's (LLVM) keeps such a
 * large function out of line otherwise: its loops then run not unrolled
 * (vbm3d_gpu 1.3 to 1.5 times slower there, for a first build up to 2 s
 * shorter) and its unroll pragmas fail with a warning at each program's
 * first build (vbm3d_gpu: 18). NVIDIA's compiler inlines every function
 * anyway: the same PTX. */
#define DENOISE_INLINE __attribute__((always_inline))

/* 1 where the filter keeps 8-bit frames as the bytes that their float
 * planes would hold (ff_denoise_opencl_init() defines it), and then
 * DENOISE_RING_T, the type of the samples of the rings of frames that its
 * kernels read, is uchar; float otherwise. */
#ifndef DENOISE_RING_BYTES
#define DENOISE_RING_BYTES 0
#endif
#if DENOISE_RING_BYTES
#define DENOISE_RING_T uchar
#else
#define DENOISE_RING_T float
#endif
/* 1 where the rings hold the R, G and B bytes of frames whose opponent
 * channels are filtered (vbm3d_gpu's RGB grouped jointly, nlmeans_gpu's
 * opponent colours), and vbm3d_gpu's basic estimates as bytes of opponent
 * channels (ff_denoise_opencl_init() defines it): see denoise_ring_at(),
 * denoise_basic_at() and DENOISE_RING_SAMPLE(). */
#ifndef DENOISE_RING_RGB
#define DENOISE_RING_RGB 0
#endif

/*
 * Opponent channel c of the RGB bytes r, g, b, the value
 * denoise_opponent_forward() would store: the sums of bytes in integers,
 * exact as in float, in fewer instructions (the searches' limit).
 */
static float denoise_opponent_of_bytes(int r, int g, int b, int c)
{
    return c == 0 ? convert_float(r + g + b) * (1.0f / 3.0f) :
           c == 1 ? convert_float(r - b) * 0.5f :
                    convert_float((r + b) - 2 * g) * 0.25f;
}

/*
 * The sample at p, in a ring of DENOISE_RING_T, as a float. With
 * DENOISE_RING_RGB the ring is the first of three, of R, G and B, 'stride'
 * samples apart (one buffer, of bytes), and the sample is their opponent
 * channel c, the value denoise_opponent_forward() would have stored;
 * otherwise stride and c are not used. (A pointer rather than a ring and an
 * index: the callers' addresses stay in their own arithmetic, which the
 * compiler folds into the loads.)
 */
static float denoise_ring_at(__global const DENOISE_RING_T *p, uint stride,
                             int c)
{
#if DENOISE_RING_RGB
    return denoise_opponent_of_bytes(p[0], p[stride], p[2 * stride], c);
#else
    return convert_float(*p);
#endif
}

/*
 * The sample at p, in a ring of basic estimates, as a float. With
 * DENOISE_RING_RGB the ring is the first of three, of the opponent channels
 * Y, U and V, 'stride' samples apart (one buffer, of bytes), each sample an
 * integer stored as Y, U + 128 or V + 128 (bm3d_normalise_u8), and the
 * sample is channel c's; otherwise as denoise_ring_at().
 */
static float denoise_basic_at(__global const DENOISE_RING_T *p, uint stride,
                              int c)
{
#if DENOISE_RING_RGB
    return convert_float((int)p[c * stride] - (c ? 128 : 0));
#else
    return convert_float(*p);
#endif
}
/*
 * Sample i of a ring at p, as the searches and nlmeans_gpu's kernels read
 * it: with DENOISE_RING_RGB, opponent channel 'ring_channel' of the R, G
 * and B rings 'channel_stride' samples apart (denoise_ring_at()), which
 * the caller has as arguments of those names; otherwise p[i] as it is
 * stored, converted where it is used. Those kernels then search one
 * channel at a time. (The index apart from the pointer, so that the
 * address is p + i as p[i] forms it: p + a + b, two additions, took
 * NVIDIA's compiler from 80 to 121 registers in a search kernel, 17 %
 * slower, on an H200.)
 */
#if DENOISE_RING_RGB
#define DENOISE_RING_SAMPLE(p, i) denoise_ring_at((p) + (i), channel_stride, ring_channel)
#else
#define DENOISE_RING_SAMPLE(p, i) ((p)[i])
#endif
/* (end of the rings' readers) */

__constant sampler_t denoise_sampler = CLK_NORMALIZED_COORDS_FALSE |
                                       CLK_ADDRESS_CLAMP_TO_EDGE   |
                                       CLK_FILTER_NEAREST;

static float denoise_pick_channel(float4 v, int channel)
{
    return channel == 0 ? v.x : channel == 1 ? v.y : channel == 2 ? v.z : v.w;
}

/*
 * Copy one channel of an image plane into a float plane in the 8-bit scale.
 * 'container' is the largest value of a sample's storage unit (255 or
 * 65535). The stored integer is recovered first, since devices convert
 * normalised samples to float in different ways (v / 255 or v * (1 / 255)),
 * so that every device and the golden model see the same values; the
 * value of a float format (container 1.0) is taken as it is. The plane
 * starts 'offset' floats into dst (a slot of a ring of planes). It may be
 * larger than the image (a small plane padded for the filter): the image is
 * then mirrored about its last column and row (and about its first and
 * last again, as often as needed), so that every sample of a small plane
 * has about the same weight in a block, as it would with a plane of the
 * block's size. A work-item copies IO_ROWS rows of a column.
 */
static int denoise_mirror(int i, int size)
{
    int m;

    if (i < size)
        return i;
    m = i % (2 * size);
    return m < size ? m : 2 * size - 1 - m;
}

/* Sample (x, y) of the plane (mirrored as above) as the image read
 * returns it: normalised, or the value of a float format. */
static float denoise_read_sample(__read_only image2d_t src, int channel,
                                 int x, int y, float container)
{
    return denoise_pick_channel(read_imagef(src, denoise_sampler,
                                            (int2)(denoise_mirror(x, get_image_width(src)),
                                                   denoise_mirror(y, get_image_height(src)))),
                                channel);
}

/* The stored integer of sample (x, y) of the plane (mirrored as above). */
static float denoise_load_sample(__read_only image2d_t src, int channel,
                                 int x, int y, float container)
{
    return rint(denoise_read_sample(src, channel, x, y, container) * container);
}

/* A loaded sample (the stored integer) as a float plane holds it, in the
 * 8-bit scale, or as a plane of bytes holds it (denoise_load_plane_u8). */
static float denoise_as_float(float stored, float container)
{
    return stored * (255.0f / container);
}

static uchar denoise_as_byte(float stored, float container)
{
    return convert_uchar_sat(stored);
}

#define DENOISE_LOAD_KERNEL(name, type, sample, convert)                       \
__kernel void name(__read_only image2d_t src, int channel, __global type *dst, \
                   int width, int height, float container, uint offset)        \
{                                                                              \
    int x = get_global_id(0);                                                  \
    int y0 = get_global_id(1) * IO_ROWS;                                       \
                                                                               \
    if (x >= width)                                                            \
        return;                                                                \
    for (int y = y0; y < min(y0 + IO_ROWS, height); y++)                       \
        dst[offset + y * width + x] =                                          \
            convert(sample(src, channel, x, y, container), container);         \
}

DENOISE_LOAD_KERNEL(denoise_load_plane, float, denoise_load_sample,
                    denoise_as_float)
/* into a plane of bytes, for 8-bit frames (container 255), whose float
 * planes hold the stored integers themselves: the same values in a quarter
 * of the memory */
DENOISE_LOAD_KERNEL(denoise_load_plane_u8, uchar, denoise_load_sample,
                    denoise_as_byte)
/* float formats (container 1.0): the value, times 255 */
DENOISE_LOAD_KERNEL(denoise_load_plane_float, float, denoise_read_sample,
                    denoise_as_float)

/* Quantise a value in the 8-bit scale to the samples the format can hold.
 * 'container' is the largest value of the storage unit (255 or 65535) and
 * 'shift' the number of unused low bits (6 for p010). The result is the
 * normalised value that the image write converts back exactly. */
static float denoise_quantise(float v, float container, int shift)
{
    float unit   = (float)(1 << shift);
    float levels = floor(container / unit);
    float q      = rint(clamp(v * (container / (255.0f * unit)), 0.0f, levels));

    return q * unit / container;
}

/* A value in the 8-bit scale as a float format holds it (container 1.0):
 * neither rounded nor clamped. */
static float denoise_unscale(float v, float container, int shift)
{
    return v * (container / 255.0f);
}

/*
 * Write an image of up to four channels. Channel c (0 to 2) takes its value
 * from plane c (rows of 'pitch' floats, at least 'width') when bit c of
 * 'mask' is set, or else is copied from the source image unchanged, as the
 * fourth channel (alpha) always is. A work-item writes IO_ROWS rows of a
 * column. 'encode' turns a value into the one the image write takes.
 * 'source' is the source image's argument and 'first' the sample before
 * the planes': DENOISE_STORE_FROM_SOURCE, or, where 'mask' sets every
 * channel of the image (at most three), DENOISE_STORE_NO_SOURCE (the
 * write kernels, so that the filter needs no longer the input frame once
 * it is loaded).
 */
#define DENOISE_STORE_KERNEL(name, encode, source, first)                      \
__kernel void name(__write_only image2d_t dst, source                          \
                   __global const float *plane0, __global const float *plane1, \
                   __global const float *plane2, int mask, int width,          \
                   int height, int pitch, float container, int shift)          \
{                                                                              \
    int x = get_global_id(0);                                                  \
    int y0 = get_global_id(1) * IO_ROWS;                                       \
                                                                               \
    if (x >= width)                                                            \
        return;                                                                \
    for (int y = y0; y < min(y0 + IO_ROWS, height); y++) {                     \
        float4 v = first;                                                      \
                                                                               \
        if (mask & 1)                                                          \
            v.x = encode(plane0[y * pitch + x], container, shift);             \
        if (mask & 2)                                                          \
            v.y = encode(plane1[y * pitch + x], container, shift);             \
        if (mask & 4)                                                          \
            v.z = encode(plane2[y * pitch + x], container, shift);             \
        write_imagef(dst, (int2)(x, y), v);                                    \
    }                                                                          \
}
#define DENOISE_STORE_SOURCE      __read_only image2d_t src,
#define DENOISE_STORE_FROM_SOURCE read_imagef(src, denoise_sampler, (int2)(x, y))
#define DENOISE_STORE_NO_SOURCE   (float4)(0.0f, 0.0f, 0.0f, 1.0f)

DENOISE_STORE_KERNEL(denoise_store_plane, denoise_quantise,
                     DENOISE_STORE_SOURCE, DENOISE_STORE_FROM_SOURCE)
DENOISE_STORE_KERNEL(denoise_store_plane_float, denoise_unscale,
                     DENOISE_STORE_SOURCE, DENOISE_STORE_FROM_SOURCE)
DENOISE_STORE_KERNEL(denoise_write_plane, denoise_quantise, ,
                     DENOISE_STORE_NO_SOURCE)
DENOISE_STORE_KERNEL(denoise_write_plane_float, denoise_unscale, ,
                     DENOISE_STORE_NO_SOURCE)

/*
 * RGB to opponent channels Y, U, V: Y = (R + G + B) / 3, U = (R - B) / 2,
 * V = (R + B - 2 G) / 4 (doc/bm3d_gpu-algorithm.md). The rows are
 * orthogonal, so independent noise of variance sigma^2 in R, G and B
 * becomes independent noise of variances sigma^2 / 3, sigma^2 / 2 and
 * 3 sigma^2 / 8. Channel c of them.
 */
static float denoise_opponent_channel(float r, float g, float b, int c)
{
    return c == 0 ? ((r + g) + b) * (1.0f / 3.0f) :
           c == 1 ? (r - b) * 0.5f : ((r + b) - 2.0f * g) * 0.25f;
}

/* Opponent channels back to R, G, B. */
static float3 denoise_opponent_to_rgb(float l, float u, float v)
{
    float base = l + v * (2.0f / 3.0f);

    return (float3)(base + u, l - v * (4.0f / 3.0f), base - u);
}

/* The planes, RGB, to opponent channels in place. The planes start
 * 'offset' samples into p0, p1, p2 (a slot of rings of planes). */
__kernel void denoise_opponent_forward(__global float *p0,
                                       __global float *p1,
                                       __global float *p2,
                                       int width,
                                       int height,
                                       uint offset)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    uint i = offset + y * width + x;
    float r, g, b;

    if (x >= width || y >= height)
        return;
    r = p0[i];
    g = p1[i];
    b = p2[i];
    p0[i] = denoise_opponent_channel(r, g, b, 0);
    p1[i] = denoise_opponent_channel(r, g, b, 1);
    p2[i] = denoise_opponent_channel(r, g, b, 2);
}

/* Opponent channels back to RGB, in place. */
__kernel void denoise_opponent_inverse(__global float *p0,
                                       __global float *p1,
                                       __global float *p2,
                                       int width,
                                       int height,
                                       uint offset)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    uint i = offset + y * width + x;
    float3 rgb;

    if (x >= width || y >= height)
        return;
    rgb   = denoise_opponent_to_rgb(p0[i], p1[i], p2[i]);
    p0[i] = rgb.x;
    p1[i] = rgb.y;
    p2[i] = rgb.z;
}
