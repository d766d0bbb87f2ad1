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
 * variance, smoothed over the frames and reset at scene cuts.
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
#define NOISE_MAX_BLOCKS (1 << 17)   ///< the grid's step grows until there are at most as many
#define NOISE_KEEP_NUM   1           ///< the flattest 1 / 50 of the blocks are kept,
#define NOISE_KEEP_DEN   50
#define NOISE_KEEP_LEAST 64          ///< and at least 64 of them
/** Share of the blocks changing intensity bin that makes a scene cut. */
#define NOISE_SCENE_CUT  0.3

const char ff_denoise_noise_defines[] =
    "#define NOISE_IBINS "    AV_STRINGIFY(DENOISE_NOISE_IBINS)    "\n"
    "#define NOISE_LOG2_MIN " AV_STRINGIFY(DENOISE_NOISE_LOG2_MIN) "\n"
    "#define NOISE_LSUB "     AV_STRINGIFY(DENOISE_NOISE_LSUB)     "\n"
    "#define NOISE_HSUB "     AV_STRINGIFY(DENOISE_NOISE_HSUB)     "\n"
    "#define NOISE_LBINS "    AV_STRINGIFY(DENOISE_NOISE_LBINS)    "\n"
    "#define NOISE_HBINS "    AV_STRINGIFY(DENOISE_NOISE_HBINS)    "\n"
    "#define NOISE_LOW_MAX "  AV_STRINGIFY(DENOISE_NOISE_LOW_MAX)  "\n"
    "#define NOISE_HIGH_MIN " AV_STRINGIFY(DENOISE_NOISE_HIGH_MIN) "\n"
    "#define NOISE_CLIP_MAX " AV_STRINGIFY(DENOISE_NOISE_CLIP_MAX) "\n";

static const char *const noise_kernel_names[DENOISE_NOISE_NB_KERNELS] = {
    [DENOISE_NOISE_KERNEL_BLOCKS]     = "noise_blocks",
    [DENOISE_NOISE_KERNEL_SELECT]     = "noise_select",
    [DENOISE_NOISE_KERNEL_ACCUMULATE] = "noise_accumulate",
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
    OpenCLFilterContext *ocf = avctx->priv;
    DenoiseNoise *n = &dn->noise;
    float dct[NOISE_BLOCK * NOISE_BLOCK];
    cl_uint zero = 0;
    cl_int cle;

    make_dct(dct);
    n->dct = clCreateBuffer(ocf->hwctx->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                            sizeof(dct), dct, &cle);
    if (!n->dct) {
        av_log(avctx, AV_LOG_ERROR, "Failed to create a buffer: %d.\n", cle);
        return AVERROR(ENOMEM);
    }
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
    /* noise_select clears it after each use */
    cle = clEnqueueFillBuffer(dn->queue, n->hist_low, &zero, sizeof(zero), 0,
                              DENOISE_NOISE_IBINS * DENOISE_NOISE_LBINS * sizeof(cl_uint),
                              0, NULL, NULL);
    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to clear a buffer: %d.\n", cle);
        return AVERROR(EIO);
    }
    return 0;
}

int ff_denoise_noise_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
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

void ff_denoise_noise_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
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
    av_freep(&n->stats_host);
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
    const OpenCLKernelArg blocks_args[] = {
        DENOISE_ARG(ring), DENOISE_ARG(offset), DENOISE_ARG(comp->width),
        DENOISE_ARG(n->step[c]), DENOISE_ARG(n->nbx[c]), DENOISE_ARG(n->nby[c]),
        DENOISE_ARG(top), DENOISE_ARG(n->dct), DENOISE_ARG(n->codes),
        DENOISE_ARG(n->hist_low),
    };
    const OpenCLKernelArg select_args[] = {
        DENOISE_ARG(n->hist_low), DENOISE_ARG(n->thresholds), DENOISE_ARG(n->stats),
        DENOISE_ARG(base), DENOISE_ARG(rows), DENOISE_ARG(num), DENOISE_ARG(den),
        DENOISE_ARG(least),
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
 * interpolated in its bin, and the number of blocks in *count; -1 if the
 * histogram is empty.
 */
static double histogram_median(const uint32_t *hist, uint64_t *count)
{
    uint64_t n = 0, cum = 0;
    double half;

    for (int b = 0; b < DENOISE_NOISE_HBINS; b++)
        n += hist[b];
    *count = n;
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
    uint64_t count;
    double median = histogram_median(hist, &count);

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

/* The time since the previous frame, in seconds, for the smoothing. */
static double frame_interval(AVFilterContext *avctx, DenoiseNoise *n,
                             const AVFrame *in)
{
    AVFilterLink *inlink = avctx->inputs[0];
    FilterLink *l = ff_filter_link(inlink);
    double dt = 0.0;

    if (in->pts != AV_NOPTS_VALUE && n->last_pts != AV_NOPTS_VALUE)
        dt = (in->pts - n->last_pts) * av_q2d(inlink->time_base);
    n->last_pts = in->pts;
    if (dt > 0.0 && dt <= 1.0)
        return dt;
    if (l->frame_rate.num > 0 && l->frame_rate.den > 0)
        return av_q2d(av_inv_q(l->frame_rate));
    return 1.0 / 25;
}

/*
 * Smooth the variances of this frame's components (< 0: none) with the
 * previous frames': an exponential average over time with the sigma_tau
 * time constant, restarted at a scene cut; keep the results for the slot.
 */
static void smooth(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                   const double *var, double dt, int cut, int qslot)
{
    DenoiseNoise *n = &dn->noise;
    double alpha = dn->sigma_tau > 0 ? 1.0 - exp(-dt / dn->sigma_tau) : 1.0;
    AVBPrint bp;

    av_bprint_init(&bp, 0, AV_BPRINT_SIZE_AUTOMATIC);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        if (!n->estimated[c])
            continue;
        if (var[c] >= 0)
            n->var[c] = cut || n->var[c] < 0 ? var[c] : n->var[c] + alpha * (var[c] - n->var[c]);
        n->frame_sigma[qslot][c] = var[c] >= 0 ? sqrt(var[c]) : -1.0;
        n->sigma[qslot][c] = n->var[c] >= 0 ? sqrt(n->var[c]) : 0.0;
        av_bprintf(&bp, " %d: %.3f (frame %.3f)", c, n->sigma[qslot][c],
                   n->frame_sigma[qslot][c]);
    }
    av_log(avctx, AV_LOG_VERBOSE, "Frame %"PRId64"%s, noise sigma of component%s\n",
           n->nb_frames, cut ? ", scene cut" : "", bp.str);
    av_bprint_finalize(&bp, NULL);
}

int ff_denoise_noise_estimate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                              const AVFrame *in, cl_mem *rings,
                              const int *slots, int qslot)
{
    DenoiseNoise *n = &dn->noise;
    size_t size = stats_size(n);
    double var[DENOISE_MAX_COMPONENTS];
    int first = -1, last = -1, cut = 0;
    cl_int cle;

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        int err;

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
        if (cle != CL_SUCCESS) {
            av_log(avctx, AV_LOG_ERROR, "Failed to read the noise statistics: %d.\n", cle);
            return AVERROR(EIO);
        }
        cut = scene_cut(n, n->stats_host + first * size);
    }
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++)
        var[c] = n->estimated[c] && n->nbx[c] ?
                 histogram_variance(n->stats_host + c * size + DENOISE_NOISE_IBINS) : -1.0;
    smooth(avctx, dn, var, frame_interval(avctx, n, in), cut, qslot);
    n->nb_frames++;
    return 0;
}

float ff_denoise_noise_sigma(const DenoiseOpenCLContext *dn, int c, int slot)
{
    return dn->noise.sigma[slot][c];
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
        if (err < 0)
            return err;
    }
    return 0;
}
