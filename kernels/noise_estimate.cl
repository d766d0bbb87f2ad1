/*
 * Noise estimation of the GPU denoisers (sigma=auto and sigma=curve).
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
 * The DCT-block method of N. Ponomarenko et al. (2007) as analysed and
 * extended to noise curves by M. Colom and A. Buades, "Analysis and
 * Extension of the Ponomarenko et al. Method, Estimating a Noise Curve
 * from a Single Image", IPOL 2013. Every 8x8 block of a grid is
 * transformed with the orthonormal 2-D DCT; the energy of its lowest
 * frequencies (1 <= i + j <= NOISE_LOW_MAX) tells how flat the block is,
 * that of its highest (i + j >= NOISE_HIGH_MIN) measures the noise. For
 * white Gaussian noise all coefficients are independent with the noise's
 * variance, so choosing the blocks of least low-frequency energy (the
 * flattest) does not bias their high-frequency energy; the noise variance
 * is then the median of that energy over the chosen blocks, divided by the
 * median of a chi-square variable (on the host).
 *
 * Three kernels per plane and frame:
 *  - noise_blocks: one work-item per block: its energies, mean and number
 *    of clipped samples; a histogram of the low-frequency energy per
 *    intensity bin of the block mean;
 *  - noise_select: one work-group: the threshold of the low-frequency
 *    energy that keeps the flattest blocks, over the whole plane and per
 *    intensity bin;
 *  - noise_accumulate: one work-item per block: histograms of the
 *    high-frequency energy of the blocks kept, over the plane and per bin.
 * Every count is an integer and every bin comes from a float's bits, so
 * that every device gives the same histograms, bit for bit.
 *
 * Compile-time constants (from the host, denoise_noise.h): NOISE_IBINS
 * intensity bins, NOISE_LBINS and NOISE_HBINS bins of the energies on a
 * log scale from 2^NOISE_LOG2_MIN with 2^NOISE_LSUB and 2^NOISE_HSUB bins per
 * octave, NOISE_LOW_MAX, NOISE_HIGH_MIN, NOISE_CLIP_MAX.
 */

#pragma OPENCL FP_CONTRACT OFF

#define NOISE_BLOCK 8

/*
 * The bin of x >= 0 among nb bins: 2^sub bins per octave from
 * 2^NOISE_LOG2_MIN, each octave cut into equal parts (the top 'sub' bits of
 * the mantissa); below and above the range, the first and last bins.
 */
static int noise_log_bin(float x, int sub, int nb)
{
    int b;

    if (!(x > 0.0f))
        return 0;
    b = (int)(as_uint(x) >> (23 - sub)) - ((127 + NOISE_LOG2_MIN) << sub);
    return clamp(b, 0, nb - 1);
}

/*
 * Coefficient r of the orthonormal 8-point DCT-II of the samples whose
 * mirrored sums (r even) or differences (r odd) are e: row r of the matrix
 * is symmetric or antisymmetric about its middle, so that half of it is
 * enough (v[a] + v[7 - a] or v[a] - v[7 - a] for a = 0 .. 3).
 */
static float noise_dct_half(__constant float *dct, int r, const float *e)
{
    __constant float *m = dct + r * NOISE_BLOCK;

    return ((m[0] * e[0] + m[1] * e[1]) + m[2] * e[2]) + m[3] * e[3];
}

/*
 * Block (bx, by) at (bx * step, by * step) of the plane that starts
 * 'offset' samples into 'plane'. A block with NOISE_CLIP_MAX samples or more
 * at 0 or at 'top' (the largest value of the format) is left out: clipping
 * removes noise. The others get their code: valid bit, intensity bin,
 * low- and high-frequency energy bins, and count in hist_low.
 */
__kernel void noise_blocks(__global const DENOISE_RING_T *plane,
                           uint offset,
                           int width,
                           int step,
                           int nbx,
                           int nby,
                           float top,
                           __constant float *dct,
                           __global uint *codes,
                           __global uint *hist_low)
{
    int bx = get_global_id(0);
    int by = get_global_id(1);
    const __global DENOISE_RING_T *p;
    float rows[NOISE_BLOCK][NOISE_BLOCK];
    float sum = 0.0f, low = 0.0f, high = 0.0f, mean;
    int clipped = 0, ibin, lbin, hbin;

    if (bx >= nbx || by >= nby)
        return;
    p = plane + offset + (by * step) * width + bx * step;

    /* 1-D DCT of each row: rows[y][j] (every loop unrolled, so that rows
     * stays in registers) */
#pragma unroll
    for (int y = 0; y < NOISE_BLOCK; y++) {
        float v[NOISE_BLOCK], e[2][NOISE_BLOCK / 2];
#pragma unroll
        for (int x = 0; x < NOISE_BLOCK; x++) {
            v[x] = p[y * width + x];
            sum += v[x];
            clipped += v[x] <= 0.0f || v[x] >= top;
        }
#pragma unroll
        for (int a = 0; a < NOISE_BLOCK / 2; a++) {
            e[0][a] = v[a] + v[NOISE_BLOCK - 1 - a];
            e[1][a] = v[a] - v[NOISE_BLOCK - 1 - a];
        }
#pragma unroll
        for (int j = 0; j < NOISE_BLOCK; j++)
            rows[y][j] = noise_dct_half(dct, j, e[j & 1]);
    }

    /* then down the columns, for the coefficients (i, j) that count */
#pragma unroll
    for (int j = 0; j < NOISE_BLOCK; j++) {
        float e[2][NOISE_BLOCK / 2];

#pragma unroll
        for (int a = 0; a < NOISE_BLOCK / 2; a++) {
            e[0][a] = rows[a][j] + rows[NOISE_BLOCK - 1 - a][j];
            e[1][a] = rows[a][j] - rows[NOISE_BLOCK - 1 - a][j];
        }
#pragma unroll
        for (int i = 0; i < NOISE_BLOCK; i++) {
            int f = i + j;
            float c;

            if ((f < 1 || f > NOISE_LOW_MAX) && f < NOISE_HIGH_MIN)
                continue;
            c = noise_dct_half(dct, i, e[i & 1]);
            if (f <= NOISE_LOW_MAX)
                low += c * c;
            else
                high += c * c;
        }
    }

    if (clipped >= NOISE_CLIP_MAX) {
        codes[by * nbx + bx] = 0;
        return;
    }
    mean = sum * (1.0f / (NOISE_BLOCK * NOISE_BLOCK));
    ibin = clamp((int)(mean * (NOISE_IBINS / 256.0f)), 0, NOISE_IBINS - 1);
    lbin = noise_log_bin(low,  NOISE_LSUB, NOISE_LBINS);
    hbin = noise_log_bin(high, NOISE_HSUB, NOISE_HBINS);
    codes[by * nbx + bx] = 0x80000000u | (uint)ibin << 24 | (uint)lbin << 12 | (uint)hbin;
    atomic_inc(&hist_low[ibin * NOISE_LBINS + lbin]);
}

/*
 * The number of blocks to keep out of n: n * num / den rounded up, at least
 * min(n, least).
 */
static int noise_kept(uint n, uint num, uint den, uint least)
{
    uint k = (n * num + den - 1) / den;

    return (int)max(k, min(n, least));
}

/*
 * One work-group. From hist_low, the histogram of the low-frequency energy
 * per intensity bin: in thresholds[b] the last energy bin of the blocks
 * kept in intensity bin b (b < NOISE_IBINS), the flattest n * num / den of
 * them, and in thresholds[NOISE_IBINS] the same over the whole plane; -1
 * where no block is kept. The number of blocks of each intensity bin goes
 * to stats[0 .. NOISE_IBINS - 1]. At least 'least' blocks are kept over
 * the plane, 'bin_least' in an intensity bin. hist_low is cleared for the next plane
 * and the 'rows' histograms of the high-frequency energy that follow in
 * stats, for noise_accumulate. The plane's part of stats starts 'base'
 * words in.
 */
__kernel void noise_select(__global uint *hist_low,
                           __global int *thresholds,
                           __global uint *stats,
                           uint base,
                           int rows,
                           uint num,
                           uint den,
                           uint least,
                           uint bin_least)
{
    /* the NOISE_IBINS rows of hist_low and their column sums, then their
     * running sums along each row, computed in parallel (Hillis and
     * Steele, between the two buffers) */
    __local uint cum[2][(NOISE_IBINS + 1) * NOISE_LBINS];
    __local int kept[NOISE_IBINS + 1];
    const int total = (NOISE_IBINS + 1) * NOISE_LBINS;
    int id = get_local_id(0);
    int size = get_local_size(0);
    int cur = 0;

    stats += base;
    for (int i = id; i < NOISE_IBINS * NOISE_LBINS; i += size) {
        cum[0][i] = hist_low[i];
        hist_low[i] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = id; j < NOISE_LBINS; j += size) {
        uint s = 0;
        for (int b = 0; b < NOISE_IBINS; b++)
            s += cum[0][b * NOISE_LBINS + j];
        cum[0][NOISE_IBINS * NOISE_LBINS + j] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < NOISE_LBINS; off *= 2) {
        for (int i = id; i < total; i += size)
            cum[cur ^ 1][i] = cum[cur][i] +
                              (i % NOISE_LBINS >= off ? cum[cur][i - off] : 0);
        barrier(CLK_LOCAL_MEM_FENCE);
        cur ^= 1;
    }

    /* row b < NOISE_IBINS: intensity bin b; row NOISE_IBINS: the plane */
    if (id <= NOISE_IBINS) {
        uint n = cum[cur][id * NOISE_LBINS + NOISE_LBINS - 1];

        kept[id] = noise_kept(n, num, den, id < NOISE_IBINS ? bin_least : least);
        if (!kept[id])
            thresholds[id] = -1;
        if (id < NOISE_IBINS)
            stats[id] = n;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the last bin kept: the first whose running sum reaches kept */
    for (int i = id; i < total; i += size) {
        int r = i / NOISE_LBINS, j = i % NOISE_LBINS;
        uint k = kept[r];

        if (k && cum[cur][i] >= k && (!j || cum[cur][i - 1] < k))
            thresholds[r] = j;
    }
    for (int i = id; i < rows * NOISE_HBINS; i += size)
        stats[NOISE_IBINS + i] = 0;
}

/*
 * Block (bx, by), if valid: counted in the histogram of its high-frequency
 * energy over the plane (row 0 after the NOISE_IBINS counts of stats) when
 * its low-frequency energy is within the plane's threshold, and with
 * 'per_bin' in that of its intensity bin (row 1 + bin) when within the
 * bin's threshold. The plane's part of stats starts 'base' words in.
 */
__kernel void noise_accumulate(__global const uint *codes,
                               int nbx,
                               int nby,
                               __global const int *thresholds,
                               int per_bin,
                               __global uint *stats,
                               uint base)
{
    int bx = get_global_id(0);
    int by = get_global_id(1);
    __global uint *rows = stats + base + NOISE_IBINS;
    uint code;
    int ibin, lbin, hbin;

    if (bx >= nbx || by >= nby)
        return;
    code = codes[by * nbx + bx];
    if (!(code & 0x80000000u))
        return;
    ibin = (code >> 24) & 0x7f;
    lbin = (code >> 12) & 0xfff;
    hbin = code & 0xfff;
    if (lbin <= thresholds[NOISE_IBINS])
        atomic_inc(&rows[hbin]);
    if (per_bin && lbin <= thresholds[ibin])
        atomic_inc(&rows[(1 + ibin) * NOISE_HBINS + hbin]);
}

/*
 * sigma=curve: a variance-stabilising transform or its inverse, in place,
 * on the plane that starts 'offset' floats into 'plane': v becomes the
 * linear interpolation of 'table' (NOISE_VST_POINTS values, from 'table_offset'
 * on) at (v - start) * scale, clamped to the table.
 */
__kernel void noise_vst(__global float *plane,
                        uint offset,
                        int width,
                        int height,
                        __global const float *table,
                        uint table_offset,
                        float start,
                        float scale)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    __global const float *t = table + table_offset;
    uint i = offset + y * width + x;
    float u;
    int k;

    if (x >= width || y >= height)
        return;
    u = clamp((plane[i] - start) * scale, 0.0f, (float)(NOISE_VST_POINTS - 1));
    k = min((int)u, NOISE_VST_POINTS - 2);
    plane[i] = t[k] + (u - k) * (t[k + 1] - t[k]);
}
