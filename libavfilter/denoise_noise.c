/*
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

/**
 * @file
 * Noise estimation of the OpenCL denoisers (sigma=auto, sigma=curve): the
 * DCT-block method of N. Ponomarenko et al., "An automatic approach to
 * lossy compression of AVIRIS images" (2007), as analysed by M. Colom and
 * A. Buades, "Analysis and Extension of the Ponomarenko et al. Method,
 * Estimating a Noise Curve from a Single Image", IPOL 2013. The kernels
 * (noise_estimate.cl) give, per plane, histograms of the high-frequency
 * energy of the flattest 8x8 blocks; here their median becomes the noise
 * variance, smoothed over the frames and reset at scene cuts. With
 * sigma=curve, the same per intensity bin gives a noise curve, whose
 * variance-stabilising transform is applied to the planes when they are
 * loaded, and its exact unbiased inverse to the denoised planes.
 */

#include <math.h>
#include <string.h>

#include "libavutil/avassert.h"
#include "libavutil/bprint.h"
#include "libavutil/common.h"
#include "libavutil/dict.h"
#include "libavutil/frame.h"
#include "libavutil/mem.h"

#include "denoise_opencl.h"
#include "filters.h"

#define NOISE_BLOCK      8
#define NOISE_MAX_BLOCKS (1 << 16)   ///< the grid's step grows until there are at most as many
#define NOISE_KEEP_NUM   1           ///< the flattest 1 / 50 of the blocks are kept,
#define NOISE_KEEP_DEN   50
#define NOISE_KEEP_LEAST 64          ///< and at least 64 of them
/** Share of the blocks changing intensity bin that makes a scene cut. */
#define NOISE_SCENE_CUT  0.3
/** sigma=curve: blocks kept in an intensity bin for its estimate, at least */
#define NOISE_CURVE_LEAST 16
/** and at most a quarter of the bin's blocks */
#define NOISE_CURVE_SHARE 4
/** The smallest noise variance of a curve (the transform divides by it). */
#define NOISE_MIN_VAR    0.01
/** Nodes of the expectation over the noise for the inverse transform. */
#define NOISE_QUAD       61

const char ff_denoise_noise_defines[] =
    "#define NOISE_IBINS "    AV_STRINGIFY(DENOISE_NOISE_IBINS)    "\n"
    "#define NOISE_LOG2_MIN " AV_STRINGIFY(DENOISE_NOISE_LOG2_MIN) "\n"
    "#define NOISE_LSUB "     AV_STRINGIFY(DENOISE_NOISE_LSUB)     "\n"
    "#define NOISE_HSUB "     AV_STRINGIFY(DENOISE_NOISE_HSUB)     "\n"
    "#define NOISE_LBINS "    AV_STRINGIFY(DENOISE_NOISE_LBINS)    "\n"
    "#define NOISE_HBINS "    AV_STRINGIFY(DENOISE_NOISE_HBINS)    "\n"
    "#define NOISE_LOW_MAX "  AV_STRINGIFY(DENOISE_NOISE_LOW_MAX)  "\n"
    "#define NOISE_HIGH_MIN " AV_STRINGIFY(DENOISE_NOISE_HIGH_MIN) "\n"
    "#define NOISE_CLIP_MAX " AV_STRINGIFY(DENOISE_NOISE_CLIP_MAX) "\n"
    "#define NOISE_VST_POINTS " AV_STRINGIFY(DENOISE_NOISE_VST_POINTS) "\n";

static const char *const noise_kernel_names[DENOISE_NOISE_NB_KERNELS] = {
    [DENOISE_NOISE_KERNEL_BLOCKS]     = "noise_blocks",
    [DENOISE_NOISE_KERNEL_SELECT]     = "noise_select",
    [DENOISE_NOISE_KERNEL_ACCUMULATE] = "noise_accumulate",
    [DENOISE_NOISE_KERNEL_VST]        = "noise_vst",
};

/* The number of DCT coefficients (i, j) of a block with i + j >= HIGH_MIN. */
static int high_coefficients(void)
{
    int n = 0;

    for (int i = 0; i < NOISE_BLOCK; i++)
        for (int j = 0; j < NOISE_BLOCK; j++)
            n += i + j >= DENOISE_NOISE_HIGH_MIN;
    return n;
}

/*
 * The median of a chi-square variable of k degrees of freedom divided by
 * k, by the Wilson-Hilferty approximation (within 0.02 % for k = 21).
 */
static double chi2_median_ratio(int k)
{
    double t = 1.0 - 2.0 / (9.0 * k);

    return t * t * t;
}

/* Whether the noise of component c is estimated. */
static int is_estimated(const DenoiseOpenCLContext *dn, int c)
{
    return dn->noise.mode != DENOISE_NOISE_FIXED &&
           ff_denoise_opencl_selected(dn, c) &&
           !(ff_denoise_opencl_is_chroma(&dn->layout, c) && dn->csigma >= 0);
}

/*
 * The grid of blocks of a plane: every second sample, or every fourth or
 * eighth on large planes, so that there are at most NOISE_MAX_BLOCKS.
 */
static void block_grid(DenoiseNoise *n, int c, int width, int height)
{
    n->step[c] = 2;
    n->nbx[c] = n->nby[c] = 0;
    if (width < NOISE_BLOCK || height < NOISE_BLOCK)
        return;
    for (;;) {
        n->nbx[c] = (width  - NOISE_BLOCK) / n->step[c] + 1;
        n->nby[c] = (height - NOISE_BLOCK) / n->step[c] + 1;
        if ((int64_t)n->nbx[c] * n->nby[c] <= NOISE_MAX_BLOCKS ||
            n->step[c] == NOISE_BLOCK)
            return;
        n->step[c] *= 2;
    }
}

/* The orthonormal 8-point DCT-II, F[r * 8 + a], rounded to float. */
static void make_dct(float *F)
{
    for (int r = 0; r < NOISE_BLOCK; r++) {
        double alpha = r ? sqrt(2.0 / NOISE_BLOCK) : sqrt(1.0 / NOISE_BLOCK);
        for (int a = 0; a < NOISE_BLOCK; a++)
            F[r * NOISE_BLOCK + a] = alpha * cos(M_PI * (2 * a + 1) * r / (2.0 * NOISE_BLOCK));
    }
}

/* The rows of high-frequency histograms of a plane in stats. */
static int stats_rows(const DenoiseNoise *n)
{
    return n->mode == DENOISE_NOISE_CURVE ? 1 + DENOISE_NOISE_IBINS : 1;
}

static size_t stats_size(const DenoiseNoise *n)
{
    return DENOISE_NOISE_IBINS + (size_t)stats_rows(n) * DENOISE_NOISE_HBINS;
}

static int create_kernels(AVFilterContext *avctx, DenoiseNoise *n)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_int cle;

    for (int i = 0; i < DENOISE_NOISE_NB_KERNELS; i++) {
        n->kernels[i] = clCreateKernel(ocf->program, noise_kernel_names[i], &cle);
        if (!n->kernels[i]) {
            av_log(avctx, AV_LOG_ERROR, "Failed to create %s kernel: %d.\n",
                   noise_kernel_names[i], cle);
            return AVERROR(EIO);
        }
    }
    cle = clGetKernelWorkGroupInfo(n->kernels[DENOISE_NOISE_KERNEL_SELECT],
                                   ocf->hwctx->device_id, CL_KERNEL_WORK_GROUP_SIZE,
                                   sizeof(n->select_size), &n->select_size, NULL);
    if (cle != CL_SUCCESS || n->select_size < DENOISE_NOISE_IBINS + 1) {
        av_log(avctx, AV_LOG_ERROR, "The noise estimation needs work-groups "
               "of %d work-items.\n", DENOISE_NOISE_IBINS + 1);
        return AVERROR(ENOSYS);
    }
    n->select_size = FFMIN(n->select_size, 256);
    return 0;
}

static int create_buffers(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          size_t blocks)
{
    DenoiseNoise *n = &dn->noise;
    float dct[NOISE_BLOCK * NOISE_BLOCK];
    cl_uint zero = 0;
    cl_int cle;

    make_dct(dct);
    n->dct = ff_denoise_opencl_table(avctx, dct, sizeof(dct));
    if (!n->dct)
        return AVERROR(ENOMEM);
    n->codes      = ff_denoise_opencl_alloc(avctx, blocks * sizeof(cl_uint));
    n->hist_low   = ff_denoise_opencl_alloc(avctx, DENOISE_NOISE_IBINS *
                                            DENOISE_NOISE_LBINS * sizeof(cl_uint));
    n->thresholds = ff_denoise_opencl_alloc(avctx, (DENOISE_NOISE_IBINS + 1) * sizeof(cl_int));
    n->stats      = ff_denoise_opencl_alloc(avctx, DENOISE_MAX_COMPONENTS *
                                            stats_size(n) * sizeof(cl_uint));
    n->stats_host = av_malloc_array(DENOISE_MAX_COMPONENTS * stats_size(n),
                                    sizeof(*n->stats_host));
    if (!n->codes || !n->hist_low || !n->thresholds || !n->stats)
        return AVERROR(ENOMEM);
    if (!n->stats_host)
        return AVERROR(ENOMEM);
    if (n->mode == DENOISE_NOISE_CURVE) {
        size_t table = DENOISE_NOISE_VST_POINTS * sizeof(cl_float);

        n->vst_forward = ff_denoise_opencl_alloc(avctx, DENOISE_MAX_COMPONENTS * table);
        n->vst_inverse = ff_denoise_opencl_alloc(avctx, DENOISE_MAX_RING *
                                                 DENOISE_MAX_COMPONENTS * table);
        n->tables = av_malloc_array(DENOISE_MAX_COMPONENTS, 2 * table);
        if (!n->vst_forward || !n->vst_inverse)
            return AVERROR(ENOMEM);
        if (!n->tables)
            return AVERROR(ENOMEM);
        dn->stage_names[DENOISE_STAGE_VST] = "vst";
    }
    /* noise_select clears it after each use */
    cle = clEnqueueFillBuffer(dn->queue, n->hist_low, &zero, sizeof(zero), 0,
                              DENOISE_NOISE_IBINS * DENOISE_NOISE_LBINS * sizeof(cl_uint),
                              0, NULL, NULL);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to clear a buffer", cle);
    return 0;
}

av_cold int ff_denoise_noise_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    DenoiseNoise *n = &dn->noise;
    size_t blocks = 0;
    int err;

    n->mode = dn->sigma == DENOISE_SIGMA_CURVE ? DENOISE_NOISE_CURVE :
              dn->sigma < 0                    ? DENOISE_NOISE_AUTO  :
                                                 DENOISE_NOISE_FIXED;
    if (n->mode == DENOISE_NOISE_FIXED)
        return 0;

    n->last_pts = AV_NOPTS_VALUE;
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        const DenoiseComponent *comp = &dn->layout.comp[c];

        n->var[c] = -1.0;
        for (int b = 0; b < DENOISE_NOISE_IBINS; b++)
            n->bin_var[c][b] = -1.0;
        n->estimated[c] = is_estimated(dn, c);
        if (!n->estimated[c])
            continue;
        block_grid(n, c, comp->width, comp->height);
        blocks = FFMAX(blocks, (size_t)n->nbx[c] * n->nby[c]);
        av_log(avctx, AV_LOG_VERBOSE, "Noise of component %d estimated on "
               "%dx%d blocks of %dx%d, every %d samples.\n", c, n->nbx[c],
               n->nby[c], NOISE_BLOCK, NOISE_BLOCK, n->step[c]);
    }
    dn->stage_names[DENOISE_STAGE_NOISE] = "noise estimate";

    err = create_kernels(avctx, n);
    if (err < 0)
        return err;
    return create_buffers(avctx, dn, blocks);
}

av_cold void ff_denoise_noise_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    DenoiseNoise *n = &dn->noise;
    cl_int cle;

    for (int i = 0; i < DENOISE_NOISE_NB_KERNELS; i++)
        CL_RELEASE_KERNEL(n->kernels[i]);
    CL_RELEASE_MEMORY(n->dct);
    CL_RELEASE_MEMORY(n->codes);
    CL_RELEASE_MEMORY(n->hist_low);
    CL_RELEASE_MEMORY(n->thresholds);
    CL_RELEASE_MEMORY(n->stats);
    CL_RELEASE_MEMORY(n->vst_forward);
    CL_RELEASE_MEMORY(n->vst_inverse);
    av_freep(&n->stats_host);
    av_freep(&n->tables);
}

/*
 * The largest value of a sample of the frames, on the 8-bit scale as
 * denoise_load_plane computes it, less a margin below the step between
 * two values.
 */
static float top_value(const DenoiseLayout *layout)
{
    int unit = 1 << layout->shift;
    int top  = (int)(layout->container / unit) * unit;

    return (float)top * (255.0f / layout->container) - 1e-3f;
}

/*
 * Enqueue the three kernels of the estimation of component c, in slot
 * 'slot' of the ring of planes 'ring'; its histograms go 'base' words into
 * stats.
 */
static int run_kernels(AVFilterContext *avctx, DenoiseOpenCLContext *dn, int c,
                       cl_mem ring, int slot, cl_uint base)
{
    DenoiseNoise *n = &dn->noise;
    const DenoiseComponent *comp = &dn->layout.comp[c];
    cl_uint offset = (cl_uint)slot * comp->width * comp->height;
    float top = top_value(&dn->layout);
    int rows = stats_rows(n), per_bin = n->mode == DENOISE_NOISE_CURVE;
    cl_uint num = NOISE_KEEP_NUM, den = NOISE_KEEP_DEN, least = NOISE_KEEP_LEAST;
    cl_uint bin_least = NOISE_CURVE_LEAST;
    const OpenCLKernelArg blocks_args[] = {
        DENOISE_ARG(ring), DENOISE_ARG(offset), DENOISE_ARG(comp->width),
        DENOISE_ARG(n->step[c]), DENOISE_ARG(n->nbx[c]), DENOISE_ARG(n->nby[c]),
        DENOISE_ARG(top), DENOISE_ARG(n->dct), DENOISE_ARG(n->codes),
        DENOISE_ARG(n->hist_low),
    };
    const OpenCLKernelArg select_args[] = {
        DENOISE_ARG(n->hist_low), DENOISE_ARG(n->thresholds), DENOISE_ARG(n->stats),
        DENOISE_ARG(base), DENOISE_ARG(rows), DENOISE_ARG(num), DENOISE_ARG(den),
        DENOISE_ARG(least), DENOISE_ARG(bin_least),
    };
    const OpenCLKernelArg accumulate_args[] = {
        DENOISE_ARG(n->codes), DENOISE_ARG(n->nbx[c]), DENOISE_ARG(n->nby[c]),
        DENOISE_ARG(n->thresholds), DENOISE_ARG(per_bin), DENOISE_ARG(n->stats),
        DENOISE_ARG(base),
    };
    int err;

    err = ff_denoise_opencl_run(avctx, dn, n->kernels[DENOISE_NOISE_KERNEL_BLOCKS],
                                blocks_args, FF_ARRAY_ELEMS(blocks_args),
                                n->nbx[c], n->nby[c], 0, 0, DENOISE_STAGE_NOISE);
    if (err >= 0)
        err = ff_denoise_opencl_run(avctx, dn, n->kernels[DENOISE_NOISE_KERNEL_SELECT],
                                    select_args, FF_ARRAY_ELEMS(select_args),
                                    n->select_size, 1, n->select_size, 1,
                                    DENOISE_STAGE_NOISE);
    if (err >= 0)
        err = ff_denoise_opencl_run(avctx, dn, n->kernels[DENOISE_NOISE_KERNEL_ACCUMULATE],
                                    accumulate_args, FF_ARRAY_ELEMS(accumulate_args),
                                    n->nbx[c], n->nby[c], 0, 0, DENOISE_STAGE_NOISE);
    return err;
}

/*
 * The lower edge of bin b of an energy histogram with 2^sub bins per
 * octave from 2^DENOISE_NOISE_LOG2_MIN; bin 0 starts at 0.
 */
static double bin_edge(int b, int sub)
{
    if (b <= 0)
        return 0.0;
    return ldexp(1.0 + (double)(b & ((1 << sub) - 1)) / (1 << sub),
                 DENOISE_NOISE_LOG2_MIN + (b >> sub));
}

/*
 * The median of a histogram of the high-frequency energy, linearly
 * interpolated in its bin; -1 if the histogram is empty.
 */
static double histogram_median(const uint32_t *hist)
{
    uint64_t n = 0, cum = 0;
    double half;

    for (int b = 0; b < DENOISE_NOISE_HBINS; b++)
        n += hist[b];
    if (!n)
        return -1.0;
    half = n / 2.0;
    for (int b = 0; b < DENOISE_NOISE_HBINS; b++) {
        if (hist[b] && cum + hist[b] >= half) {
            double lo = bin_edge(b, DENOISE_NOISE_HSUB);
            double hi = bin_edge(b + 1, DENOISE_NOISE_HSUB);
            return lo + (half - cum) / hist[b] * (hi - lo);
        }
        cum += hist[b];
    }
    return -1.0;
}

/* The noise variance from a histogram of the kept blocks; -1 if empty. */
static double histogram_variance(const uint32_t *hist)
{
    int k = high_coefficients();
    double median = histogram_median(hist);

    return median < 0 ? -1.0 : median / (k * chi2_median_ratio(k));
}

/*
 * Whether the blocks of the frame, counted per intensity bin of their
 * mean, moved so much from the previous frame's that this is a new scene;
 * keeps this frame's shares for the next one.
 */
static int scene_cut(DenoiseNoise *n, const uint32_t *counts)
{
    uint64_t total = 0;
    double distance = 0.0;

    for (int b = 0; b < DENOISE_NOISE_IBINS; b++)
        total += counts[b];
    if (!total)
        return 0;
    for (int b = 0; b < DENOISE_NOISE_IBINS; b++) {
        double share = (double)counts[b] / total;
        distance += fabs(share - n->counts[b]);
        n->counts[b] = share;
    }
    return n->nb_frames > 0 && distance / 2 > NOISE_SCENE_CUT;
}

/*
 * sigma=curve: the noise variance of each intensity bin of component c
 * (stats of the component), -1 where too few blocks were kept, or more
 * than a quarter of the bin's, to tell texture from noise.
 */
static void bin_variances(const uint32_t *stats, double *var)
{
    for (int b = 0; b < DENOISE_NOISE_IBINS; b++) {
        const uint32_t *row = stats + DENOISE_NOISE_IBINS + (1 + b) * DENOISE_NOISE_HBINS;
        uint64_t kept = 0;

        for (int h = 0; h < DENOISE_NOISE_HBINS; h++)
            kept += row[h];
        var[b] = kept >= NOISE_CURVE_LEAST && NOISE_CURVE_SHARE * kept <= stats[b] ?
                 histogram_variance(row) : -1.0;
    }
}

static double bin_centre(int b)
{
    return (b + 0.5) * (256.0 / DENOISE_NOISE_IBINS);
}

/*
 * A noise curve: the variance of each intensity bin (< 0: none), the slope
 * of the variance against intensity above the bins that have one, and the
 * variance if none has.
 */
typedef struct NoiseCurve {
    double var[DENOISE_NOISE_IBINS];
    double slope;
    double fallback;
} NoiseCurve;

/*
 * The slope of the least-squares line through the bins' variances, each
 * weighted by the inverse of its square (their errors are relative), if
 * positive, else 0: the variance is then extended beyond the bins that
 * have one as the noise of light grows (photon noise, the Poisson-Gaussian
 * model of A. Foi et al., 2008), or kept constant. Below them it is kept
 * constant: a line going down to nothing there would stretch the darkest
 * intensities, where there may be no sample at all, without bound.
 */
static double curve_slope(const double *var)
{
    double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0, det;

    for (int b = 0; b < DENOISE_NOISE_IBINS; b++) {
        double x = bin_centre(b), w;

        if (var[b] <= 0)
            continue;
        w   = 1.0 / (var[b] * var[b]);
        s0 += w;
        s1 += w * x;
        s2 += w * x * x;
        t0 += w * var[b];
        t1 += w * x * var[b];
    }
    det = s0 * s2 - s1 * s1;
    if (!(det > 0))
        return 0.0;
    return FFMAX((s0 * t1 - s1 * t0) / det, 0.0);
}

/*
 * The noise variance at intensity x: linear between the centres of the
 * bins that have one, with the curve's slope above them, constant below.
 */
static double curve_variance(const NoiseCurve *cv, double x)
{
    int lo = -1, hi = -1;
    double t, var;

    for (int b = 0; b < DENOISE_NOISE_IBINS; b++) {
        if (cv->var[b] < 0)
            continue;
        if (bin_centre(b) <= x)
            lo = b;
        else if (hi < 0)
            hi = b;
    }
    if (lo < 0 && hi < 0)
        var = cv->fallback;
    else if (lo < 0)
        var = cv->var[hi];
    else if (hi < 0)
        var = cv->var[lo] + cv->slope * (x - bin_centre(lo));
    else {
        t   = (x - bin_centre(lo)) / (bin_centre(hi) - bin_centre(lo));
        var = cv->var[lo] + t * (cv->var[hi] - cv->var[lo]);
    }
    return FFMAX(var, NOISE_MIN_VAR);
}

/* The linear interpolation of a table of DENOISE_NOISE_VST_POINTS values at u. */
static double table_value(const float *table, double u)
{
    int k;

    u = av_clipd(u, 0, DENOISE_NOISE_VST_POINTS - 1);
    k = FFMIN((int)u, DENOISE_NOISE_VST_POINTS - 2);
    return table[k] + (u - k) * (table[k + 1] - table[k]);
}

/*
 * The variance-stabilising transform of a noise curve (the classical one
 * of which Anscombe's is the Poisson case): f(x) = s * integral from 0 to
 * x of dt / sigma(t), with s chosen so that f(255) = 255; the noise of f(v)
 * is then about s at every intensity. Returns s; 'forward' gets f at
 * x = 255 k / (points - 1).
 */
static double forward_table(const NoiseCurve *cv, float *forward)
{
    const int n = DENOISE_NOISE_VST_POINTS - 1, sub = 4;
    const double dx = 255.0 / n;
    double f[DENOISE_NOISE_VST_POINTS], s;

    f[0] = 0.0;
    for (int k = 1; k <= n; k++) {
        /* Simpson's rule on 'sub' pairs of sub-intervals */
        double h = dx / (2 * sub), x0 = (k - 1) * dx, sum = 0.0;

        for (int i = 0; i <= 2 * sub; i++) {
            double w = i == 0 || i == 2 * sub ? 1 : i & 1 ? 4 : 2;
            sum += w / sqrt(curve_variance(cv, x0 + i * h));
        }
        f[k] = f[k - 1] + sum * h / 3;
    }
    s = 255.0 / f[n];
    for (int k = 0; k <= n; k++)
        forward[k] = s * f[k];
    return s;
}

/*
 * The inverse of the transform, unbiased: the denoiser's output estimates
 * E[f(v)], not f(E[v]), so x is found from E[f(clip(x + sigma(x) g))], g
 * of law N(0, 1), the clipping to 0..255 of the frame included (M. Makitalo
 * and A. Foi, "Optimal inversion of the generalized Anscombe
 * transformation for Poisson-Gaussian noise", 2013). 'inverse' gets x at
 * y = *start + j / *scale.
 */
static void inverse_table(const NoiseCurve *cv, const float *forward,
                          float *inverse, float *start, float *scale)
{
    const int n = DENOISE_NOISE_VST_POINTS - 1;
    const double dx = 255.0 / n;
    double e[DENOISE_NOISE_VST_POINTS], node[NOISE_QUAD], weight[NOISE_QUAD];
    double wsum = 0.0, y0, step;

    for (int q = 0; q < NOISE_QUAD; q++) {
        node[q]   = -5.0 + 10.0 * q / (NOISE_QUAD - 1);
        weight[q] = exp(-0.5 * node[q] * node[q]);
        wsum     += weight[q];
    }
    for (int k = 0; k <= n; k++) {
        double x = k * dx, sd = sqrt(curve_variance(cv, x)), sum = 0.0;

        for (int q = 0; q < NOISE_QUAD; q++) {
            double v = av_clipd(x + sd * node[q], 0.0, 255.0);
            sum += weight[q] * table_value(forward, v / dx);
        }
        e[k] = sum / wsum;
        /* strictly increasing, to be inverted */
        if (k && e[k] <= e[k - 1])
            e[k] = e[k - 1] + 1e-6;
    }
    y0   = e[0];
    step = (e[n] - e[0]) / n;
    for (int j = 0, k = 0; j <= n; j++) {
        double y = y0 + j * step;

        while (k < n - 1 && e[k + 1] < y)
            k++;
        inverse[j] = av_clipd((k + (y - e[k]) / (e[k + 1] - e[k])) * dx, 0.0, 255.0);
    }
    *start = y0;
    *scale = 1.0 / step;
}

/*
 * The time since the previous frame, in seconds, for the smoothing: from
 * the timestamps, however long (after a pause the new frame's estimate
 * prevails), else one frame period of the link.
 */
static double frame_interval(AVFilterContext *avctx, DenoiseNoise *n,
                             const AVFrame *in)
{
    AVFilterLink *inlink = avctx->inputs[0];
    FilterLink *l = ff_filter_link(inlink);
    double dt = 0.0;

    if (in->pts != AV_NOPTS_VALUE && n->last_pts != AV_NOPTS_VALUE)
        dt = (in->pts - n->last_pts) * av_q2d(inlink->time_base);
    n->last_pts = in->pts;
    if (dt > 0.0)
        return dt;
    if (l->frame_rate.num > 0 && l->frame_rate.den > 0)
        return av_q2d(av_inv_q(l->frame_rate));
    return 1.0 / 25;
}

/*
 * One exponential average over time: the new value (< 0: none) weighs
 * alpha; a scene cut restarts it.
 */
static void smooth_value(double *avg, double v, double alpha, int cut)
{
    if (v >= 0)
        *avg = cut || *avg < 0 ? v : *avg + alpha * (v - *avg);
    else if (cut)
        *avg = -1.0;
}

/*
 * Smooth the variances of this frame's components (< 0: none), and with
 * sigma=curve those of their bins, with the previous frames': exponential
 * averages over time with the sigma_tau time constant, restarted at a
 * scene cut; keep the results for the slot.
 */
static void smooth(DenoiseOpenCLContext *dn, const double *var,
                   double (*bin_var)[DENOISE_NOISE_IBINS], double dt, int cut,
                   int qslot)
{
    DenoiseNoise *n = &dn->noise;
    double alpha = dn->sigma_tau > 0 ? 1.0 - exp(-dt / dn->sigma_tau) : 1.0;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        if (!n->estimated[c])
            continue;
        /* a frame without estimate (no block) keeps the previous one */
        if (var[c] >= 0 || n->var[c] < 0)
            smooth_value(&n->var[c], var[c], alpha, cut);
        for (int b = 0; b < DENOISE_NOISE_IBINS && n->mode == DENOISE_NOISE_CURVE; b++)
            smooth_value(&n->bin_var[c][b], bin_var[c][b], alpha, cut);
        n->frame_sigma[qslot][c] = var[c] >= 0 ? sqrt(var[c]) : -1.0;
        n->sigma[qslot][c] = n->var[c] >= 0 ? sqrt(n->var[c]) : 0.0;
    }
}

static void log_estimates(AVFilterContext *avctx, const DenoiseNoise *n,
                          int cut, int qslot)
{
    AVBPrint bp;

    av_bprint_init(&bp, 0, AV_BPRINT_SIZE_AUTOMATIC);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        if (!n->estimated[c])
            continue;
        av_bprintf(&bp, " %d: %.3f (this frame %.3f)", c, n->sigma[qslot][c],
                   n->frame_sigma[qslot][c]);
        if (n->mode == DENOISE_NOISE_CURVE)
            av_bprintf(&bp, " after the transform, curve (intensity:sigma)");
        for (int b = 0; b < DENOISE_NOISE_IBINS && n->mode == DENOISE_NOISE_CURVE; b++)
            if (n->curve[qslot][c][b] >= 0)
                av_bprintf(&bp, " %.0f:%.2f", bin_centre(b), n->curve[qslot][c][b]);
        av_bprintf(&bp, ";");
    }
    av_log(avctx, AV_LOG_VERBOSE, "Frame %"PRId64"%s, noise sigma of component%s\n",
           n->nb_frames, cut ? ", scene cut" : "", bp.str);
    av_bprint_finalize(&bp, NULL);
}

/*
 * A transform of sigma=curve, or its inverse, applied in place to
 * component c's plane, which starts 'offset' samples into 'plane'
 * (noise_vst): v becomes the table starting 'table_offset' values into
 * 'table', interpolated at (v - start) * scale.
 */
static int apply_table(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                       int c, cl_mem plane, cl_uint offset, cl_mem table,
                       cl_uint table_offset, float start, float scale)
{
    const DenoiseComponent *comp = &dn->layout.comp[c];
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(plane), DENOISE_ARG(offset), DENOISE_ARG(comp->width),
        DENOISE_ARG(comp->height), DENOISE_ARG(table),
        DENOISE_ARG(table_offset), DENOISE_ARG(start), DENOISE_ARG(scale),
    };
    cl_kernel kernel = dn->noise.kernels[DENOISE_NOISE_KERNEL_VST];

    return ff_denoise_opencl_run(avctx, dn, kernel, args, FF_ARRAY_ELEMS(args),
                                 comp->width, comp->height, 0, 0,
                                 DENOISE_STAGE_VST);
}

/*
 * sigma=curve: the transforms of the noise curves of the components just
 * estimated, written to the device (the inverse ones for the slot), and
 * the forward one applied to the planes; the noise of the transformed
 * planes becomes the sigma used.
 */
static int apply_curves(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                        cl_mem *rings, const int *slots, int qslot)
{
    DenoiseNoise *n = &dn->noise;
    const size_t points = DENOISE_NOISE_VST_POINTS;
    float *forward = n->tables, *inverse = n->tables + DENOISE_MAX_COMPONENTS * points;
    cl_int cle;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        NoiseCurve cv;

        if (!n->estimated[c] || !n->nbx[c])
            continue;
        memcpy(cv.var, n->bin_var[c], sizeof(cv.var));
        cv.slope    = curve_slope(cv.var);
        cv.fallback = n->var[c] >= 0 ? n->var[c] : NOISE_MIN_VAR;
        n->sigma[qslot][c] = forward_table(&cv, forward + c * points);
        inverse_table(&cv, forward + c * points, inverse + c * points,
                      &n->inverse_start[qslot][c], &n->inverse_scale[qslot][c]);
        for (int b = 0; b < DENOISE_NOISE_IBINS; b++)
            n->curve[qslot][c][b] = cv.var[b] >= 0 ? sqrt(cv.var[b]) : -1.0;
    }
    cle = clEnqueueWriteBuffer(dn->queue, n->vst_forward, CL_TRUE, 0,
                               DENOISE_MAX_COMPONENTS * points * sizeof(*forward),
                               forward, 0, NULL, NULL);
    if (cle == CL_SUCCESS)
        cle = clEnqueueWriteBuffer(dn->queue, n->vst_inverse, CL_TRUE,
                                   qslot * DENOISE_MAX_COMPONENTS * points * sizeof(*inverse),
                                   DENOISE_MAX_COMPONENTS * points * sizeof(*inverse),
                                   inverse, 0, NULL, NULL);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to write the noise transforms", cle);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        const DenoiseComponent *comp = &dn->layout.comp[c];
        int err;

        if (!n->estimated[c] || !n->nbx[c])
            continue;
        err = apply_table(avctx, dn, c, rings[c],
                          (cl_uint)slots[c] * comp->width * comp->height,
                          n->vst_forward, c * points, 0.0f, (points - 1) / 255.0f);
        if (err < 0)
            return err;
    }
    return 0;
}

int ff_denoise_noise_inverse(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                             cl_mem *planes, int mask, int slot)
{
    DenoiseNoise *n = &dn->noise;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        int err;

        if (!(mask & (1 << c)) || !n->estimated[c] || !n->nbx[c])
            continue;
        err = apply_table(avctx, dn, c, planes[c], 0, n->vst_inverse,
                          (slot * DENOISE_MAX_COMPONENTS + c) * DENOISE_NOISE_VST_POINTS,
                          n->inverse_start[slot][c], n->inverse_scale[slot][c]);
        if (err < 0)
            return err;
    }
    return 0;
}

int ff_denoise_noise_estimate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                              const AVFrame *in, cl_mem *rings,
                              const int *slots, int qslot)
{
    DenoiseNoise *n = &dn->noise;
    size_t size = stats_size(n);
    double var[DENOISE_MAX_COMPONENTS];
    double bin_var[DENOISE_MAX_COMPONENTS][DENOISE_NOISE_IBINS];
    int first = -1, last = -1, cut = 0, err = 0;
    cl_int cle;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        if (!n->estimated[c] || !n->nbx[c])
            continue;
        err = run_kernels(avctx, dn, c, rings[c], slots[c], c * size);
        if (err < 0)
            return err;
        first = first < 0 ? c : first;
        last  = c;
    }
    if (first >= 0) {
        cle = clEnqueueReadBuffer(dn->queue, n->stats, CL_TRUE,
                                  first * size * sizeof(cl_uint),
                                  (last - first + 1) * size * sizeof(cl_uint),
                                  n->stats_host + first * size, 0, NULL, NULL);
        if (cle != CL_SUCCESS)
            return ff_denoise_opencl_error(avctx, "Failed to read the noise statistics", cle);
        cut = scene_cut(n, n->stats_host + first * size);
    }
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        int has = n->estimated[c] && n->nbx[c];

        var[c] = has ? histogram_variance(n->stats_host + c * size + DENOISE_NOISE_IBINS) : -1.0;
        for (int b = 0; b < DENOISE_NOISE_IBINS; b++)
            bin_var[c][b] = -1.0;
        if (has && n->mode == DENOISE_NOISE_CURVE)
            bin_variances(n->stats_host + c * size, bin_var[c]);
    }
    smooth(dn, var, bin_var, frame_interval(avctx, n, in), cut, qslot);
    if (n->mode == DENOISE_NOISE_CURVE)
        err = apply_curves(avctx, dn, rings, slots, qslot);
    log_estimates(avctx, n, cut, qslot);
    n->nb_frames++;
    return err;
}

float ff_denoise_noise_sigma(const DenoiseOpenCLContext *dn, int c, int slot)
{
    return dn->noise.sigma[slot][c];
}

/*
 * sigma=curve: the curve of component c as metadata, one entry
 * lavfi.<filter>.curve.<component>.<intensity> per bin that has an
 * estimate, the intensity being the bin's centre.
 */
static int export_curve(AVFilterContext *avctx, const DenoiseNoise *n,
                        AVFrame *out, int slot, int c)
{
    for (int b = 0; b < DENOISE_NOISE_IBINS; b++) {
        char key[128], value[32];
        int err;

        if (n->curve[slot][c][b] < 0)
            continue;
        snprintf(key, sizeof(key), "lavfi.%s.curve.%d.%.0f", avctx->filter->name, c,
                 bin_centre(b));
        snprintf(value, sizeof(value), "%.3f", n->curve[slot][c][b]);
        err = av_dict_set(&out->metadata, key, value, 0);
        if (err < 0)
            return err;
    }
    return 0;
}

int ff_denoise_noise_export(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            AVFrame *out, int slot)
{
    const DenoiseNoise *n = &dn->noise;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        char key[128], value[32];
        int err;

        if (!n->estimated[c])
            continue;
        snprintf(key, sizeof(key), "lavfi.%s.sigma.%d", avctx->filter->name, c);
        snprintf(value, sizeof(value), "%.3f", n->sigma[slot][c]);
        err = av_dict_set(&out->metadata, key, value, 0);
        if (err >= 0 && n->mode == DENOISE_NOISE_CURVE)
            err = export_curve(avctx, n, out, slot, c);
        if (err < 0)
            return err;
    }
    return 0;
}
