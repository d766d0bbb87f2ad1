/*
 * BM3D filtering: one fused kernel per group (Davy & Ehret 2020, 4.4).
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
 * Built after patch_search.cl (NB: the size of its tables, the largest
 * group), with BM3D_HAAR defined to 1 for the Haar transform along the
 * groups, 0 for Walsh-Hadamard, BM3D_INT64_ATOMICS to 1 where the device
 * has 64-bit integer atomics, 0 for the 32-bit fallback, and the 2-D
 * transforms BM3D_FWD1, BM3D_INV1 (first step: DCT or Bior1.5) and
 * BM3D_FWD2, BM3D_INV2 (second step: DCT), each the bits of its 64 float
 * coefficients, m[r * 8 + c], with BM3D_DCT1 1 where the first step's is the
 * DCT.
 * doc/bm3d_gpu-algorithm.md is the exact contract with the golden model.
 * vbm3d_gpu adds vbm3d_search.cl after this file.
 *
 * One work-group of 64 work-items per group of 8x8 patches; work-item
 * (a, b) = (lid / 8, lid % 8) holds sample or coefficient (a, b) of every
 * patch of the group in registers. The 2-D transforms go through local
 * memory a line at a time (a work-item transforms a row or a column of a
 * patch in registers): the forward one's columns straight from the plane,
 * the inverse one's columns straight into the accumulators, so that each
 * sample crosses local memory four times a transform less. The 1-D
 * transform along the group stays in registers, and the result is added to
 * fixed-point accumulators with 64-bit integer atomics, so the output does
 * not depend on the order of the groups.
 */

#pragma OPENCL FP_CONTRACT OFF
#if BM3D_INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define K       8
#define KK      64

/* The noisy frames and the basic estimates are rings of DENOISE_RING_T
 * (denoise_common.cl); with uchar (vbm3d_gpu on 8-bit frames) the basic
 * estimate is rounded to integers. */
#define FIX_ONE 4294967296.0f   /* 2^32: fixed-point unit of the sums */

/*
 * Add v to the 64-bit fixed-point accumulator at index i. With 64-bit
 * atomics this is one atom_add; without them (BM3D_INT64_ATOMICS 0) the
 * accumulator is a pair of 32-bit words, low then high: the low words are
 * added atomically and each addition's own carry goes to the high word with
 * the high part of v, which gives the same sum modulo 2^64 in any order.
 */
static void bm3d_accumulate(__global long *acc, uint i, long v)
{
#if BM3D_INT64_ATOMICS
    atom_add(&acc[i], v);
#else
    __global uint *w = (__global uint *)acc + 2 * i;
    uint lo  = (uint)v;
    uint hi  = (uint)((ulong)v >> 32);
    uint old = atomic_add(&w[0], lo);

    atomic_add(&w[1], hi + (old + lo < old));
#endif
}

/* The accumulator at index i (see bm3d_accumulate). */
static long bm3d_read(__global const long *acc, uint i)
{
#if BM3D_INT64_ATOMICS
    return acc[i];
#else
    __global const uint *w = (__global const uint *)acc + 2 * i;
    return (long)(((ulong)w[1] << 32) | w[0]);
#endif
}

/*
 * A stack of patches in local memory: sample (a, b) of patch z at
 * BM3D_AT(z, a, b). Rows are padded to 9 samples, so that the work-items of
 * a warp, each on a row (or each on a column) of its own, read and write
 * distinct banks.
 */
#define ROW_PITCH   (K + 1)
#define PATCH_PITCH (K * ROW_PITCH)
#define BM3D_AT(z, a, b) ((z) * PATCH_PITCH + (a) * ROW_PITCH + (b))

/* The 2-D transforms of the two steps and their inverses: constants of
 * the program, which the compiler folds into the instructions. */
__constant uint bm3d_fwd1[KK] = { BM3D_FWD1 };
__constant uint bm3d_inv1[KK] = { BM3D_INV1 };
__constant uint bm3d_fwd2[KK] = { BM3D_FWD2 };
__constant uint bm3d_inv2[KK] = { BM3D_INV2 };

/* y[j] = sum over i = 0 .. 7 of m[j][i] * s[i]: the first product, then
 * each following term added by a fused multiply-add, in increasing i. */
static void bm3d_matrix_apply(__constant uint *m, const float *s, float *y)
{
#pragma unroll
    for (int j = 0; j < K; j++) {
        float t = as_float(m[j * K]) * s[0];
#pragma unroll
        for (int i = 1; i < K; i++)
            t = fma(as_float(m[j * K + i]), s[i], t);
        y[j] = t;
    }
}

/*
 * y = m s for the DCT (m its matrix F), by its symmetry: row j of F is
 * symmetric about the middle for even j and antisymmetric for odd j, so
 * y[j] is a 4-term sum, over u[i] = s[i] + s[7 - i] for even j and over
 * v[i] = s[i] - s[7 - i] for odd j, of F(j, i) times them (i < 4), in the
 * order of bm3d_matrix_apply().
 */
static void bm3d_dct_apply(__constant uint *m, const float *s, float *y)
{
    float u[K / 2], v[K / 2];

#pragma unroll
    for (int i = 0; i < K / 2; i++) {
        u[i] = s[i] + s[K - 1 - i];
        v[i] = s[i] - s[K - 1 - i];
    }
#pragma unroll
    for (int j = 0; j < K; j++) {
        const float *h = j & 1 ? v : u;
        float t = as_float(m[j * K]) * h[0];

#pragma unroll
        for (int i = 1; i < K / 2; i++)
            t = fma(as_float(m[j * K + i]), h[i], t);
        y[j] = t;
    }
}

/*
 * s = m y for the inverse DCT (m = F transposed), by the same symmetry:
 * for a < 4, e = sum over the even r of m(a, r) y[r] and o = the same over
 * the odd r, each in increasing r as in bm3d_matrix_apply(); then
 * s[a] = e + o and s[7 - a] = e - o.
 */
static void bm3d_idct_apply(__constant uint *m, const float *y, float *s)
{
#pragma unroll
    for (int a = 0; a < K / 2; a++) {
        float e = as_float(m[a * K]) * y[0];
        float o = as_float(m[a * K + 1]) * y[1];

#pragma unroll
        for (int r = 2; r < K; r += 2) {
            e = fma(as_float(m[a * K + r]), y[r], e);
            o = fma(as_float(m[a * K + r + 1]), y[r + 1], o);
        }
        s[a]         = e + o;
        s[K - 1 - a] = e - o;
    }
}

/* How a pass applies its matrix: any matrix by 8-term sums, or the DCT or
 * its inverse by their symmetry (half the multiplications). */
#define BM3D_PASS_MATRIX 0
#define BM3D_PASS_DCT    1
#define BM3D_PASS_IDCT   2

/* y = m s by the pass's kind (BM3D_PASS_*). */
static void bm3d_line_apply(__constant uint *m, const int kind, const float *s,
                            float *y)
{
    if (kind == BM3D_PASS_DCT)
        bm3d_dct_apply(m, s, y);
    else if (kind == BM3D_PASS_IDCT)
        bm3d_idct_apply(m, s, y);
    else
        bm3d_matrix_apply(m, s, y);
}

/* The row pass of the separable 2-D transform m over the n patches of
 * 'stack', in place; 'kind' is one of BM3D_PASS_*. A work-item takes lines
 * lid, lid + 64, ...: line l is row l % 8 of patch l / 8, read into
 * registers, transformed and written back (no other work-item touches it
 * during the pass). The column passes go through registers straight from
 * the plane (bm3d_load_columns()) or into the accumulators
 * (bm3d_transform_inverse_add()). */
static void bm3d_row_pass(__constant uint *m, __local float *stack, int n,
                          const int kind, int lid)
{
    for (int l = lid; l < n * K; l += KK) {
        int base = BM3D_AT(l / K, l % K, 0);
        float s[K], y[K];

#pragma unroll
        for (int i = 0; i < K; i++)
            s[i] = stack[base + i];
        bm3d_line_apply(m, kind, s, y);
#pragma unroll
        for (int i = 0; i < K; i++)
            stack[base + i] = y[i];
    }
}

/*
 * The first pass of the forward 2-D transform, along the columns, straight
 * from the plane: work-item lid takes lines lid, lid + 64, ...: column
 * l % 8 of patch l / 8 of the group's n patches (positions from table row
 * r), read from 'plane' (pitch 'width'), transformed and written to
 * 'stack'. With 'two' (the Wiener step's oracle) the same column of plane2
 * goes to stack2 in the same loop, so that the loads overlap. Samples are
 * read by denoise_ring_at(), channel 'channel', or by denoise_basic_at()
 * from plane where 'basic' and from plane2 always (rings of basic
 * estimates).
 */
static void bm3d_load_columns(__constant uint *m, const int kind,
                              __global const DENOISE_RING_T *plane,
                              __global const DENOISE_RING_T *plane2,
                              const int two, const int basic, uint stride,
                              int channel,
                              __global const uint *positions, int r, int n,
                              int width, int lid, __local float *stack,
                              __local float *stack2)
{
    for (int l = lid; l < n * K; l += KK) {
        int z = l / K, c = l % K;
        uint p = positions[r * NB + z] + c;
        float s[K], s2[K], y[K];

#pragma unroll
        for (int i = 0; i < K; i++) {
            s[i] = basic ? denoise_basic_at(plane + (p + i * width), stride,
                                            channel) :
                           denoise_ring_at(plane + (p + i * width), stride,
                                           channel);
            if (two)
                s2[i] = denoise_basic_at(plane2 + (p + i * width), stride,
                                         channel);
        }
        bm3d_line_apply(m, kind, s, y);
#pragma unroll
        for (int i = 0; i < K; i++)
            stack[BM3D_AT(z, i, c)] = y[i];
        if (two) {
            bm3d_line_apply(m, kind, s2, y);
#pragma unroll
            for (int i = 0; i < K; i++)
                stack2[BM3D_AT(z, i, c)] = y[i];
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Coefficient (a, b) = (lid / 8, lid % 8) of the n patches of 'stack' into
 * the registers x. */
static void bm3d_stack_read(__local const float *stack, int n, int lid,
                            float *x)
{
    int a = lid / K, b = lid % K;

#pragma unroll
    for (int z = 0; z < NB; z++)
        if (z < n)
            x[z] = stack[BM3D_AT(z, a, b)];
}

/*
 * The forward 2-D transform (fwd: the DCT where 'dct', else Bior1.5) of the
 * n patches of the group into the registers x of work-item (a, b): columns
 * first, read from 'plane' (bm3d_load_columns()), then rows. With 'two',
 * the same transform of plane2's patches into x2, stack2 holding them. The
 * caller puts a barrier between the reads of the stacks here and the next
 * writes to them.
 */
static void bm3d_transform_forward(__global const DENOISE_RING_T *plane,
                                   __global const DENOISE_RING_T *plane2,
                                   const int two, const int basic,
                                   uint stride, int channel,
                                   __global const uint *positions, int r,
                                   int n, int width, __constant uint *fwd,
                                   const int dct, int lid,
                                   __local float *stack,
                                   __local float *stack2, float *x, float *x2)
{
    const int kind = dct ? BM3D_PASS_DCT : BM3D_PASS_MATRIX;

    bm3d_load_columns(fwd, kind, plane, plane2, two, basic, stride, channel,
                      positions, r, n, width, lid, stack, stack2);
    bm3d_row_pass(fwd, stack, n, kind, lid);
    if (two)
        bm3d_row_pass(fwd, stack2, n, kind, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    bm3d_stack_read(stack, n, lid, x);
    if (two)
        bm3d_stack_read(stack2, n, lid, x2);
}

/*
 * The inverse 2-D transform of the registers x (rows, then columns; inv is
 * the inverse matrix, the transpose for the DCT, 'dct') and the
 * aggregation: each sample of patch z, times the window and the group's
 * weight, added at corner[z] (unless negative) in num. The last pass, along
 * the columns, adds its results as it makes them: work-item lid takes
 * column l % 8 of patch l / 8 for l = lid, lid + 64, ...
 */
static void bm3d_transform_inverse_add(__local float *stack,
                                       __constant uint *inv, int n,
                                       const int dct, int lid, const float *x,
                                       float weight, __constant float *kaiser,
                                       __local const int *corner,
                                       __global long *num, int width)
{
    int a = lid / K, b = lid % K;
    const int kind = dct ? BM3D_PASS_IDCT : BM3D_PASS_MATRIX;
    float kw[K];

#pragma unroll
    for (int z = 0; z < NB; z++)
        if (z < n)
            stack[BM3D_AT(z, a, b)] = x[z];
    barrier(CLK_LOCAL_MEM_FENCE);
    bm3d_row_pass(inv, stack, n, kind, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the column of a work-item is the same in each of its lines */
#pragma unroll
    for (int i = 0; i < K; i++)
        kw[i] = weight * kaiser[i * K + b];
    for (int l = lid; l < n * K; l += KK) {
        int z = l / K, p = corner[z];
        float s[K], y[K];

#pragma unroll
        for (int i = 0; i < K; i++)
            s[i] = stack[BM3D_AT(z, i, b)];
        bm3d_line_apply(inv, kind, s, y);
        if (p < 0)
            continue;
#pragma unroll
        for (int i = 0; i < K; i++)
            bm3d_accumulate(num, p + i * width + b,
                            convert_long_rte(kw[i] * y[i] * FIX_ONE));
    }
}

/*
 * The transforms along the group, on the first n (a power of two, at most
 * NB) entries of x. Each level is written out for its constant length, so
 * that the compiler keeps the group in registers: a loop over the levels,
 * whose lengths it cannot unroll, indexes x at run time and puts it in
 * memory.
 */

/* One level of the Walsh-Hadamard transform: butterflies at distance h. */
#define BM3D_HADAMARD_LEVEL(h)                                          \
    if (n > (h)) {                                                      \
        _Pragma("unroll")                                               \
        for (int z = 0; z < NB; z++) {                                  \
            if (!(z & (h)) && z + (h) < n) {                            \
                float u = x[z], v = x[z + (h)];                         \
                x[z]       = (u + v) * M_SQRT1_2_F;                     \
                x[z + (h)] = (u - v) * M_SQRT1_2_F;                     \
            }                                                           \
        }                                                               \
    }

/* Orthonormal Walsh-Hadamard transform along the group; its own inverse. */
static void bm3d_hadamard(float *x, int n)
{
#if NB > 1
    BM3D_HADAMARD_LEVEL(1)
#endif
#if NB > 2
    BM3D_HADAMARD_LEVEL(2)
#endif
#if NB > 4
    BM3D_HADAMARD_LEVEL(4)
#endif
#if NB > 8
    BM3D_HADAMARD_LEVEL(8)
#endif
#if NB > 16
    BM3D_HADAMARD_LEVEL(16)
#endif
}

/* One level of the Haar transform of length len (when len <= n): pairs
 * (x[2k], x[2k + 1]) become the sum x[k] and the difference x[len / 2 + k],
 * both times 1/sqrt(2); the inverse level undoes it. */
#define BM3D_HAAR_FORWARD_LEVEL(len)                                    \
    if (n >= (len)) {                                                   \
        float t[len];                                                   \
        _Pragma("unroll")                                               \
        for (int k = 0; k < (len) / 2; k++) {                           \
            t[k]             = (x[2 * k] + x[2 * k + 1]) * M_SQRT1_2_F; \
            t[(len) / 2 + k] = (x[2 * k] - x[2 * k + 1]) * M_SQRT1_2_F; \
        }                                                               \
        _Pragma("unroll")                                               \
        for (int k = 0; k < (len); k++)                                 \
            x[k] = t[k];                                                \
    }

#define BM3D_HAAR_INVERSE_LEVEL(len)                                    \
    if (n >= (len)) {                                                   \
        float t[len];                                                   \
        _Pragma("unroll")                                               \
        for (int k = 0; k < (len) / 2; k++) {                           \
            t[2 * k]     = (x[k] + x[(len) / 2 + k]) * M_SQRT1_2_F;     \
            t[2 * k + 1] = (x[k] - x[(len) / 2 + k]) * M_SQRT1_2_F;     \
        }                                                               \
        _Pragma("unroll")                                               \
        for (int k = 0; k < (len); k++)                                 \
            x[k] = t[k];                                                \
    }

/* Orthonormal Haar wavelet transform along the group, all levels, from
 * length n down to 2. */
static void bm3d_haar_forward(float *x, int n)
{
#if NB >= 32
    BM3D_HAAR_FORWARD_LEVEL(32)
#endif
#if NB >= 16
    BM3D_HAAR_FORWARD_LEVEL(16)
#endif
#if NB >= 8
    BM3D_HAAR_FORWARD_LEVEL(8)
#endif
#if NB >= 4
    BM3D_HAAR_FORWARD_LEVEL(4)
#endif
#if NB >= 2
    BM3D_HAAR_FORWARD_LEVEL(2)
#endif
}

static void bm3d_haar_inverse(float *x, int n)
{
#if NB >= 2
    BM3D_HAAR_INVERSE_LEVEL(2)
#endif
#if NB >= 4
    BM3D_HAAR_INVERSE_LEVEL(4)
#endif
#if NB >= 8
    BM3D_HAAR_INVERSE_LEVEL(8)
#endif
#if NB >= 16
    BM3D_HAAR_INVERSE_LEVEL(16)
#endif
#if NB >= 32
    BM3D_HAAR_INVERSE_LEVEL(32)
#endif
}

/* The transform along the group, chosen when the program is built. */
#if BM3D_HAAR
#define bm3d_group_forward bm3d_haar_forward
#define bm3d_group_inverse bm3d_haar_inverse
#else
#define bm3d_group_forward bm3d_hadamard
#define bm3d_group_inverse bm3d_hadamard
#endif

/* Size of the group: the leading entries within tau, at most 'group',
 * rounded down to a power of two (the reference, entry 0, always counts).
 * The table's distances are all loaded first, so that their latencies
 * overlap, instead of one load after the other's test. */
static int bm3d_group_size(__global const float *distances, int r, int group,
                           float tau)
{
    float d[NB];
    int count = 1, n = 1, stop = 0;

#pragma unroll
    for (int k = 1; k < NB; k++)
        d[k] = distances[r * NB + k];
#pragma unroll
    for (int k = 1; k < NB; k++) {
        stop  |= k >= group || !(d[k] * (1.0f / 64.0f) <= tau);
        count += !stop;
    }
    while (n * 2 <= count)
        n *= 2;
    return n;
}

/*
 * The Wiener step transforms its noisy and basic stacks at once, so that
 * the loads overlap, into two stacks of local memory, where the groups are
 * of at most 16 patches (on the H100: `fast`'s filter2 0.90 -> 0.81 ms at
 * 1080p); two stacks of 32 patches (`ref`, 18 KiB) cost more occupancy
 * than they save (3.29 -> 3.54 ms).
 */
#define BM3D_LOAD_BOTH (NB <= 16)

/*
 * Where the patch at p of the rings of 'ring' planes of plane_size samples
 * (the reference frame in ref_slot) goes in the accumulators, rings of
 * acc_ring planes where the reference frame's is acc_ref: the index of its
 * top-left sample, or -1 when its frame is not one of the nb_aggregated
 * frames from the reference one on.
 */
static int bm3d_acc_position(uint p, uint plane_size, int ring, int ref_slot,
                             int nb_aggregated, int acc_ref, int acc_ring)
{
    int slot = p / plane_size;
    /* frames after the reference one: d = 0 .. nb_aggregated - 1, and
     * acc_ref + d < 2 * acc_ring (no divisions) */
    int d = slot - ref_slot + (slot < ref_slot ? ring : 0);
    int acc = acc_ref + d;

    if (d >= nb_aggregated)
        return -1;
    acc -= acc >= acc_ring ? acc_ring : 0;
    return acc * plane_size + (p - slot * plane_size);
}

/*
 * One group: hard thresholding (wiener == 0) of the noisy stack, or Wiener
 * filtering (wiener == 1) of the noisy stack with the basic estimate's as
 * the oracle. 'noisy' and 'basic' are rings of 'ring' planes of plane_size
 * samples, and positions index them; the reference frame is in ref_slot.
 * Their samples are read as denoise_ring_at() and denoise_basic_at() read
 * them: with DENOISE_RING_RGB, opponent channel 'channel' of three rings of
 * bytes 'stride' samples apart (of R, G, B, and of opponent channels).
 * Every patch of the group lying in the nb_aggregated frames from the
 * reference one on is added at its position to num, and its weight at its
 * top-left sample to weights: rings of acc_ring planes where the reference
 * frame's is acc_ref.
 * 'wiener' is a constant of each kernel below, so that no barrier sits in a
 * branch. 'corner' holds each patch's accumulator index (a local int per
 * patch), computed once instead of by every work-item.
 */
static DENOISE_INLINE void bm3d_filter_group(__global const DENOISE_RING_T *noisy,
                                             __global const DENOISE_RING_T *basic,
                                             int width,
                                             int nx,
                                             __global const uint *positions,
                                             __global const float *distances,
                                             int group,
                                             float tau,
                                             float sigma,
                                             float threshold,
                                             const int wiener,
                                             __constant float *kaiser,
                                             __global long *num,
                                             __global long *weights,
                                             uint plane_size,
                                             int ring,
                                             int ref_slot,
                                             int nb_aggregated,
                                             int acc_ref,
                                             int acc_ring,
                                             uint stride,
                                             int channel,
                                             __local float *stack,
                                             __local float *partial,
                                             __local int *corner)
{
    int lid = get_local_id(0);
    int r   = get_group_id(1) * nx + get_group_id(0);
    int p   = -1;
    float x[NB], oracle[NB];
    float weight, sum = 0.0f;
    int n = bm3d_group_size(distances, r, group, tau);
    __constant uint *fwd = wiener ? bm3d_fwd2 : bm3d_fwd1;
    __constant uint *inv = wiener ? bm3d_inv2 : bm3d_inv1;
    const int dct = wiener || BM3D_DCT1;

    if (wiener && BM3D_LOAD_BOTH) {
        bm3d_transform_forward(noisy, basic, 1, 0, stride, channel, positions,
                               r, n, width, fwd, dct, lid, stack,
                               stack + NB * PATCH_PITCH, x, oracle);
    } else if (wiener) {
        /* the oracle first, through the same stack */
        bm3d_transform_forward(basic, NULL, 0, 1, stride, channel, positions,
                               r, n, width, fwd, dct, lid, stack, NULL,
                               oracle, NULL);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (wiener)
        bm3d_group_forward(oracle, n);
    if (!(wiener && BM3D_LOAD_BOTH))
        bm3d_transform_forward(noisy, NULL, 0, 0, stride, channel, positions,
                               r, n, width, fwd, dct, lid, stack, NULL, x,
                               NULL);
    bm3d_group_forward(x, n);

    /* PoCL's compiler (LLVM 15) does not unroll this loop for its early
     * exit, and says so in a warning at the program's first build; without
     * the exit (skipping instead) NVIDIA's code took 2.5 % longer for `ref`
     * on an H200 (doc/benchmarks.md, "Kernels always inlined") */
#pragma unroll
    for (int z = 0; z < NB; z++) {
        if (z >= n)
            break;
        if (wiener) {
            float b2 = oracle[z] * oracle[z];
            float w  = sigma > 0.0f ? b2 / (b2 + sigma * sigma) : 1.0f;
            x[z] = w * x[z];
            sum += w * w;
        } else if (fabs(x[z]) > threshold) {
            sum += 1.0f;
        } else {
            x[z] = 0.0f;
        }
    }

    /* the accumulator index of each patch, once (patch lid by work-item
     * lid), for after the barrier below */
    if (lid < n) {
        p = bm3d_acc_position(positions[r * NB + lid], plane_size, ring,
                              ref_slot, nb_aggregated, acc_ref, acc_ring);
        corner[lid] = p;
    }

    /* group weight: 1 / kept coefficients, or 1 / sum of squared Wiener
     * gains, summed over the work-items in row-major order */
    partial[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    sum = 0.0f;
    for (int i = 0; i < KK; i++)
        sum += partial[i];
    weight = wiener ? 1.0f / fmax(sum, 1e-3f) : 1.0f / fmax(sum, 1.0f);
    if (lid < n && p >= 0)
        bm3d_accumulate(weights, p, convert_long_rte(weight * FIX_ONE));

    bm3d_group_inverse(x, n);
    bm3d_transform_inverse_add(stack, inv, n, dct, lid, x, weight, kaiser,
                               corner, num, width);
}

#define BM3D_FILTER_KERNEL(name, wiener)                                       \
__kernel __attribute__((reqd_work_group_size(KK, 1, 1)))                       \
void name(__global const DENOISE_RING_T *noisy,                                \
          __global const DENOISE_RING_T *basic,                                \
          int width, int nx, __global const uint *positions,                   \
          __global const float *distances, int group, float tau, float sigma,  \
          float threshold, __constant float *kaiser, __global long *num,       \
          __global long *weights, uint plane_size, int ring, int ref_slot,     \
          int nb_aggregated, int acc_ref, int acc_ring, uint stride,           \
          int channel)                                                         \
{                                                                              \
    __local float stack[(1 + (wiener && BM3D_LOAD_BOTH)) * NB * PATCH_PITCH];  \
    __local float partial[KK];                                                 \
    __local int   corner[NB];                                                  \
                                                                               \
    bm3d_filter_group(noisy, basic, width, nx, positions, distances, group,    \
                      tau, sigma, threshold, wiener, kaiser, num, weights,     \
                      plane_size, ring, ref_slot, nb_aggregated, acc_ref,      \
                      acc_ring, stride, channel, stack, partial, corner);      \
}

/* The global size is exactly (nx * 64, ny): one work-group per group. */
BM3D_FILTER_KERNEL(bm3d_filter_ht, 0)
BM3D_FILTER_KERNEL(bm3d_filter_wiener, 1)

/*
 * num / den of the fixed-point accumulators, per sample, of the planes
 * starting src_offset samples into num and weights, into the plane starting
 * dst_offset samples into dst. den is the sum over the patches that cover
 * the sample of their weight times the window at the sample's place in the
 * patch, separably with the 1-D window k (kaiser[64 + i]): for a = 0 .. 7,
 * h = fma(k[b], W(x - b, y - a), h) for b = 0 .. 7 from h = 0, then
 * d = fma(k[a], h, d) from d = 0, where (x - b, y - a) lies in the plane.
 * With to_integers (the basic estimate of 8-bit frames) the result is
 * rounded to the nearest integer, ties to even, within 0 .. 255;
 * bm3d_normalise_u8 always rounds so, but within low .. low + 255, into a
 * plane of bytes that stores it minus low (low is -128 for the basic
 * estimate's opponent channels U and V of RGB, 0 otherwise).
 * A work-group of 16x8 work-items does 16x64 samples, NORM_R rows each (so
 * the global size is the plane's width by its height / NORM_R): it first
 * reads the weights of its samples and of the 7 columns to their left and 7
 * rows above them, as floats (0 outside the plane), into local memory, then
 * sums the rows, then the columns.
 */
#define NORM_W 16
#define NORM_H 8
#define NORM_R 8
#define NORM_OUT_H (NORM_H * NORM_R)
#define NORM_TILE_W (NORM_W + K - 1)
#define NORM_TILE_H (NORM_OUT_H + K - 1)

/*
 * The estimates of the work-item's column x, rows y0 + j * NORM_H, into
 * v[j]; returns how many of them lie in the plane (0 when x does not).
 */
static int bm3d_normalise_column(__global const long *num,
                                 __global const long *weights,
                                 uint src_offset, __constant float *kaiser,
                                 int width, int height, __local float *tile,
                                 __local float *rows, float *v)
{
    __constant float *k = kaiser + KK;
    int lx = get_local_id(0), ly = get_local_id(1);
    int lid = ly * NORM_W + lx;
    int x0 = get_group_id(0) * NORM_W - (K - 1);
    int y0 = get_group_id(1) * NORM_OUT_H - (K - 1);
    int x = get_global_id(0);
    int n = 0;

    for (int i = lid; i < NORM_TILE_H * NORM_TILE_W; i += NORM_W * NORM_H) {
        int tx = x0 + i % NORM_TILE_W, ty = y0 + i / NORM_TILE_W;

        tile[i] = tx >= 0 && ty >= 0 && tx < width && ty < height ?
                  convert_float(bm3d_read(weights,
                                          src_offset + ty * width + tx)) : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < NORM_TILE_H * NORM_W; i += NORM_W * NORM_H) {
        int c = i % NORM_W, r = i / NORM_W;
        float h = 0.0f;

#pragma unroll
        for (int b = 0; b < K; b++)
            h = fma(k[b], tile[r * NORM_TILE_W + c + K - 1 - b], h);
        rows[i] = h;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x >= width)
        return 0;
    for (int j = 0; j < NORM_R; j++, n++) {
        int oy = ly + j * NORM_H;
        int y  = get_group_id(1) * NORM_OUT_H + oy;
        float d = 0.0f;

        if (y >= height)
            break;
#pragma unroll
        for (int a = 0; a < K; a++)
            d = fma(k[a], rows[(oy + K - 1 - a) * NORM_W + lx], d);
        v[j] = convert_float(bm3d_read(num, src_offset + y * width + x)) / d;
    }
    return n;
}

/* The nearest integer to v, ties to even, within 0 .. 255. */
static float bm3d_to_integer(float v)
{
    return clamp(rint(v), 0.0f, 255.0f);
}

/* The nearest integer to v, ties to even, within low .. low + 255, minus
 * low. */
static uchar bm3d_to_byte(float v, int low)
{
    return (uchar)(convert_int(clamp(rint(v), (float)low, (float)(low + 255))) -
                   low);
}

#define BM3D_NORMALISE_KERNEL(name, type, last, store)                         \
__kernel __attribute__((reqd_work_group_size(NORM_W, NORM_H, 1)))              \
void name(__global const long *num, __global const long *weights,              \
          uint src_offset, __constant float *kaiser, __global type *dst,       \
          uint dst_offset, int width, int height, int last)                    \
{                                                                              \
    __local float tile[NORM_TILE_H * NORM_TILE_W];                             \
    __local float rows[NORM_TILE_H * NORM_W];                                  \
    float v[NORM_R];                                                           \
    int n = bm3d_normalise_column(num, weights, src_offset, kaiser, width,     \
                                  height, tile, rows, v);                      \
    uint i = dst_offset + (get_group_id(1) * NORM_OUT_H + get_local_id(1)) *   \
             width + get_global_id(0);                                         \
                                                                               \
    for (int j = 0; j < n; j++, i += NORM_H * width)                           \
        dst[i] = store;                                                        \
}

BM3D_NORMALISE_KERNEL(bm3d_normalise, float, to_integers,
                      to_integers ? bm3d_to_integer(v[j]) : v[j])
BM3D_NORMALISE_KERNEL(bm3d_normalise_u8, uchar, low,
                      bm3d_to_byte(v[j], low))
