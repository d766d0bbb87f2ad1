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
 * Two-step BM3D and VBM3D (K. Dabov et al., 2007) on OpenCL frames, after
 * A. Davy and T. Ehret, "GPU acceleration of NL-means, BM3D and VBM3D",
 * 2020: block matching (in the frame, or the predictive search through the
 * neighbouring frames for vbm3d_gpu), then one fused kernel per group (3-D
 * transform, hard threshold or Wiener shrinkage, inverse, aggregation).
 * doc/bm3d_gpu-algorithm.md and doc/vbm3d_gpu-algorithm.md in the project's
 * repository are the exact definitions.
 */

#include <math.h>

#include "libavutil/bprint.h"
#include "libavutil/common.h"
#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"

#include "config_components.h"

#include "avfilter.h"
#include "denoise_opencl.h"
#include "filters.h"
#include "opencl.h"
#include "opencl_source.h"
#include "video.h"

#define BLOCK 8

/*
 * Largest Kaiser beta: the window's corner weight is 1 / I0(beta)^2, and the
 * smallest contribution to the fixed-point sums (doc/bm3d_gpu-algorithm.md)
 * must stay far above their unit, 2^-32: at beta 5 it is 2800 units, at 11.5
 * it rounds to 0 and the frame's corners have no weight left.
 */
#define KAISER_MAX 5

enum BM3DStage {
    STAGE_IO,
    STAGE_SEARCH1,      ///< block matching of step 1, then of step 2
    STAGE_SEARCH2,
    STAGE_FILTER1,      ///< hard thresholding, then Wiener filtering
    STAGE_FILTER2,
    STAGE_NORMALISE,
};

enum BM3DPreset {
    PRESET_FAST,
    PRESET_REF,
    PRESET_VIDEO,       ///< the parameters of vbm3d_gpu
};

enum BM3DEstimate {
    ESTIMATE_FINAL,
    ESTIMATE_BASIC,
};

enum BM3DTransform {
    TRANSFORM_BIOR,
    TRANSFORM_DCT,
};

enum BM3DAtomics {
    ATOMICS_AUTO,
    ATOMICS_INT64,
    ATOMICS_INT32,
};

enum BM3DColor {
    COLOR_JOINT,
    COLOR_PLANES,
};

/** Parameters of one step. */
typedef struct BM3DStep {
    int step;
    int group;
    int range;          ///< search window (in the reference frame)
    float thmse;
    int prange;         ///< predictive window in the other frames (vbm3d)
} BM3DStep;

static const BM3DStep presets[3][2] = {
    [PRESET_FAST]  = { { 4,  8, 21, 2500 }, { 4,  8, 21, 400 } },
    [PRESET_REF]   = { { 3, 16, 39, 2500 }, { 3, 32, 39, 400 } },
    [PRESET_VIDEO] = { { 6,  8,  7, 2500, 5 }, { 4, 8, 7, 400, 5 } },
};

typedef struct BM3DGPUContext {
    OpenCLFilterContext ocf;
    DenoiseOpenCLContext dn;

    /* options */
    float sigma;
    float csigma;
    int   preset;
    BM3DStep opt[2];       ///< -1 / -1.0: from the preset
    float hdthr;
    float beta;
    int   transform;       ///< 2-D transform of the first step
    int   haar;            ///< Haar instead of Walsh-Hadamard along groups
    int   estim;
    int   planes;
    int   color;
    int   search_mode;
    int   atomics;         ///< accumulation: 0 auto, 1 64-bit, 2 32-bit pairs
    int   past;            ///< frames before and after the reference frame
    int   future;
    int   causal;
    int   perframe;        ///< best patches kept per frame (vbm3d)

    int video;             ///< vbm3d_gpu: groups across frames
    BM3DStep par[2];       ///< effective parameters
    int nb_max;            ///< size of the search tables
    DenoiseLayout layout;
    DenoiseSearch search[DENOISE_MAX_COMPONENTS][2];
    cl_kernel kernel_filter[2];     ///< hard threshold, Wiener
    cl_kernel kernel_normalise;
    cl_kernel kernel_search_video;  ///< predictive search
    int joint;                      ///< group the three channels together
    int64_t next_basic;             ///< next frame of the first step
    cl_mem fwd[2];         ///< 2-D transform of each step
    cl_mem inv[2];         ///< and its inverse
    cl_mem kaiser;
    /* per component: rings of frames, except dst, the output planes */
    cl_mem src[DENOISE_MAX_COMPONENTS];
    cl_mem basic[DENOISE_MAX_COMPONENTS];
    cl_mem dst[DENOISE_MAX_COMPONENTS];
    cl_mem num[2][DENOISE_MAX_COMPONENTS];  ///< accumulators of each step
    cl_mem den[2][DENOISE_MAX_COMPONENTS];
    cl_mem positions[DENOISE_MAX_COMPONENTS];
    cl_mem distances[DENOISE_MAX_COMPONENTS];
} BM3DGPUContext;

static int component_selected(const BM3DGPUContext *s, int c)
{
    return c < s->layout.nb_components && (s->planes & (1 << c));
}

/* Joint grouping: three filtered channels of the same size (4:4:4 or RGB). */
static int use_joint_grouping(const BM3DGPUContext *s)
{
    const DenoiseLayout *l = &s->layout;

    if (s->color != COLOR_JOINT || l->nb_components < 3)
        return 0;
    for (int c = 0; c < 3; c++)
        if (!component_selected(s, c) || l->comp[c].width != l->comp[0].width ||
            l->comp[c].height != l->comp[0].height)
            return 0;
    return 1;
}

/* The noise of channel c: sigma or csigma, or for RGB frames grouped
 * jointly the opponent channel's. */
static float channel_sigma(const BM3DGPUContext *s, int c)
{
    if (s->layout.is_rgb)
        return s->joint ? ff_denoise_opponent_sigma(s->sigma, c) : s->sigma;
    return (c == 1 || c == 2) && s->csigma >= 0 ? s->csigma : s->sigma;
}

/* Modified Bessel function of the first kind, order 0 (power series). */
static double bessel_i0(double x)
{
    double sum = 1.0, term = 1.0;

    for (int k = 1; k < 50; k++) {
        term *= (x / (2.0 * k)) * (x / (2.0 * k));
        sum  += term;
    }
    return sum;
}

/* The orthonormal 8-point DCT-II matrix, F[r][a]. */
static void make_dct(double F[BLOCK][BLOCK])
{
    for (int r = 0; r < BLOCK; r++) {
        double alpha = r ? sqrt(2.0 / BLOCK) : sqrt(1.0 / BLOCK);
        for (int a = 0; a < BLOCK; a++)
            F[r][a] = alpha * cos(M_PI * (2 * a + 1) * r / (2.0 * BLOCK));
    }
}

/*
 * The 8-point Bior1.5 wavelet transform, three levels, periodic: at each
 * level, of length L, lo[k] = sum h[n] x[(2k + n - 4) mod L] and hi[k] the
 * same with g; the coefficients are ordered lo3, hi3, hi2, hi1.
 */
static void make_bior15(double F[BLOCK][BLOCK])
{
    static const double h[10] = { 3, -3, -22, 22, 128, 128, 22, -22, -3, 3 };
    static const double g[10] = { 0, 0, 0, 0, -128, 128, 0, 0, 0, 0 };

    for (int col = 0; col < BLOCK; col++) {
        double x[BLOCK] = { 0 }, out[BLOCK];

        x[col] = 1.0;
        for (int len = BLOCK; len > 1; len /= 2) {
            double lo[BLOCK / 2], hi[BLOCK / 2];
            for (int k = 0; k < len / 2; k++) {
                lo[k] = hi[k] = 0.0;
                for (int n = 0; n < 10; n++) {
                    int i = ((2 * k + n - 4) % len + len) % len;
                    lo[k] += h[n] / (128.0 * M_SQRT2) * x[i];
                    hi[k] += g[n] / (128.0 * M_SQRT2) * x[i];
                }
            }
            for (int k = 0; k < len / 2; k++) {
                out[len / 2 + k] = hi[k];
                x[k] = lo[k];
            }
        }
        out[0] = x[0];
        for (int r = 0; r < BLOCK; r++)
            F[r][col] = out[r];
    }
}

/* I = F^-1, by Gauss-Jordan elimination with partial pivoting. */
static void invert(double F[BLOCK][BLOCK], double I[BLOCK][BLOCK])
{
    double m[BLOCK][2 * BLOCK];

    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c < 2 * BLOCK; c++)
            m[r][c] = c < BLOCK ? F[r][c] : (c - BLOCK == r);
    for (int c = 0; c < BLOCK; c++) {
        int p = c;
        for (int r = c + 1; r < BLOCK; r++)
            if (fabs(m[r][c]) > fabs(m[p][c]))
                p = r;
        for (int k = 0; k < 2 * BLOCK; k++)
            FFSWAP(double, m[c][k], m[p][k]);
        for (int r = 0; r < BLOCK; r++) {
            double f = m[r][c] / m[c][c];
            if (r == c)
                continue;
            for (int k = 0; k < 2 * BLOCK; k++)
                m[r][k] -= f * m[c][k];
        }
    }
    for (int r = 0; r < BLOCK; r++)
        for (int c = 0; c < BLOCK; c++)
            I[r][c] = m[r][BLOCK + c] / m[r][r];
}

/*
 * The transform of a step and its inverse, computed in double and rounded
 * to float, as the golden model does; the DCT's inverse is its transpose.
 */
static void make_transform(int bior, float *fwd, float *inv)
{
    double F[BLOCK][BLOCK], I[BLOCK][BLOCK];

    if (bior) {
        make_bior15(F);
        invert(F, I);
    } else {
        make_dct(F);
        for (int r = 0; r < BLOCK; r++)
            for (int c = 0; c < BLOCK; c++)
                I[r][c] = F[c][r];
    }
    for (int r = 0; r < BLOCK; r++) {
        for (int c = 0; c < BLOCK; c++) {
            fwd[r * BLOCK + c] = F[r][c];
            inv[r * BLOCK + c] = I[r][c];
        }
    }
}

/* The 8x8 Kaiser window, computed in double and rounded to float. */
static void make_kaiser(float beta, float *kaiser)
{
    double w[BLOCK];

    for (int i = 0; i < BLOCK; i++) {
        double t = 2.0 * i / (BLOCK - 1) - 1.0;
        w[i] = bessel_i0(beta * sqrt(1.0 - t * t)) / bessel_i0(beta);
    }
    for (int a = 0; a < BLOCK; a++)
        for (int b = 0; b < BLOCK; b++)
            kaiser[a * BLOCK + b] = w[a] * w[b];
}

/*
 * The radius up to which the predictive search scans the windows of the
 * reference frame (predictive = 0) or of the other frames (1) a row of
 * candidates at a time: the larger of both steps', 0 when above 3 (the
 * kernel's VBM3D_RMAX; larger windows are scanned one candidate at a time).
 */
static int window_radius(const BM3DGPUContext *s, int predictive)
{
    int r = 0;

    for (int i = 0; i < 2; i++)
        r = FFMAX(r, (predictive ? s->par[i].prange : s->par[i].range) / 2);
    return r <= 3 ? r : 0;
}

static int is_power_of_two(int v)
{
    return v > 0 && !(v & (v - 1));
}

static int resolve_parameters(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;

    for (int i = 0; i < 2; i++) {
        const BM3DStep *p = &presets[s->preset][i];
        BM3DStep *e = &s->par[i];

        e->step  = s->opt[i].step  > 0 ? s->opt[i].step  : p->step;
        e->group = s->opt[i].group > 0 ? s->opt[i].group : p->group;
        e->range = s->opt[i].range > 0 ? s->opt[i].range : p->range;
        e->thmse = s->opt[i].thmse >= 0 ? s->opt[i].thmse : p->thmse;
        e->prange = s->opt[i].prange > 0 ? s->opt[i].prange : p->prange;
        if (!is_power_of_two(e->group)) {
            av_log(avctx, AV_LOG_ERROR, "group%s (%d) must be a power of two "
                   "from 1 to 32.\n", i ? "2" : "", e->group);
            return AVERROR(EINVAL);
        }
    }
    s->nb_max = FFMAX(s->par[0].group, s->par[1].group);
    if (s->causal)
        s->future = 0;
    return 0;
}

static int alloc_buffers(AVFilterContext *avctx, int c)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    size_t samples = (size_t)comp->width * comp->height;
    size_t ring = s->dn.fq.ring;
    size_t refs = 0;

    for (int i = 0; i < 2; i++)
        refs = FFMAX(refs, (size_t)s->search[c][i].nx * s->search[c][i].ny);
    s->src[c]       = ff_denoise_opencl_alloc(avctx, ring * samples * sizeof(cl_float));
    s->basic[c]     = ff_denoise_opencl_alloc(avctx, ring * samples * sizeof(cl_float));
    s->dst[c]       = ff_denoise_opencl_alloc(avctx, samples * sizeof(cl_float));
    s->positions[c] = ff_denoise_opencl_alloc(avctx, refs * s->nb_max * sizeof(cl_uint));
    s->distances[c] = ff_denoise_opencl_alloc(avctx, refs * s->nb_max * sizeof(cl_float));
    if (!s->src[c] || !s->basic[c] || !s->dst[c] || !s->positions[c] ||
        !s->distances[c])
        return AVERROR(ENOMEM);
    for (int i = 0; i < 2; i++) {
        s->num[i][c] = ff_denoise_opencl_alloc(avctx, ring * samples * sizeof(cl_long));
        s->den[i][c] = ff_denoise_opencl_alloc(avctx, ring * samples * sizeof(cl_long));
        if (!s->num[i][c] || !s->den[i][c])
            return AVERROR(ENOMEM);
    }
    return 0;
}

static cl_mem constant_buffer(AVFilterContext *avctx, const float *data, size_t size)
{
    BM3DGPUContext *s = avctx->priv;
    cl_int cle;
    cl_mem mem = clCreateBuffer(s->ocf.hwctx->context,
                                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                size, (void *)data, &cle);
    if (!mem)
        av_log(avctx, AV_LOG_ERROR, "Failed to create a table: %d.\n", cle);
    return mem;
}

/* The 2-D transforms of both steps (step 2 always uses the DCT) and the
 * Kaiser window. */
static int create_tables(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    float fwd[BLOCK * BLOCK], inv[BLOCK * BLOCK], kaiser[BLOCK * BLOCK];

    for (int i = 0; i < 2; i++) {
        make_transform(i == 0 && s->transform == TRANSFORM_BIOR, fwd, inv);
        s->fwd[i] = constant_buffer(avctx, fwd, sizeof(fwd));
        s->inv[i] = constant_buffer(avctx, inv, sizeof(inv));
        if (!s->fwd[i] || !s->inv[i])
            return AVERROR(EIO);
    }
    make_kaiser(s->beta, kaiser);
    s->kaiser = constant_buffer(avctx, kaiser, sizeof(kaiser));
    return s->kaiser ? 0 : AVERROR(EIO);
}

static int bm3d_gpu_init(AVFilterContext *avctx, const AVFrame *frame)
{
    BM3DGPUContext *s = avctx->priv;
    AVHWFramesContext *frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    const char *sources[] = { ff_source_bm3d_gpu_cl };
    cl_device_id device = s->ocf.hwctx->device_id;
    char extensions[4096] = "";
    int int64_atomics;
    AVBPrint defines;
    cl_int cle;
    int err;

    err = ff_denoise_opencl_get_layout(avctx, frames->sw_format, frame->width,
                                       frame->height, &s->layout);
    if (err < 0)
        return err;
    for (int c = 0; c < s->layout.nb_components; c++) {
        const DenoiseComponent *comp = &s->layout.comp[c];
        if (component_selected(s, c) && (comp->width < BLOCK || comp->height < BLOCK)) {
            av_log(avctx, AV_LOG_ERROR, "Plane %d is %dx%d: %s needs "
                   "planes of at least %dx%d samples.\n", c, comp->width,
                   comp->height, avctx->filter->name, BLOCK, BLOCK);
            return AVERROR(EINVAL);
        }
    }
    /* the frames of the window: ring - 1 - delay past frames, the frame
     * being output and the delay frames after it */
    s->dn.fq.delay = s->estim == ESTIMATE_BASIC ? s->future : 2 * s->future;
    s->dn.fq.ring  = s->past + s->dn.fq.delay + 1;
    /* positions index the ring of planes in 32 bits, accumulators in pairs
     * of 32-bit words */
    if ((uint64_t)frame->width * frame->height * s->dn.fq.ring > UINT32_MAX / 2) {
        av_log(avctx, AV_LOG_ERROR, "Frames of %dx%d are too large%s.\n",
               frame->width, frame->height, s->video ? " for this window" : "");
        return AVERROR(EINVAL);
    }
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof(extensions) - 1,
                    extensions, NULL);
    int64_atomics = !!strstr(extensions, "cl_khr_int64_base_atomics");
    if (s->atomics == ATOMICS_INT64 && !int64_atomics) {
        av_log(avctx, AV_LOG_ERROR, "This OpenCL device has no 64-bit integer "
               "atomics (cl_khr_int64_base_atomics); use atomics=auto or int32.\n");
        return AVERROR(ENOSYS);
    }
    if (s->atomics == ATOMICS_INT32)
        int64_atomics = 0;
    av_log(avctx, AV_LOG_VERBOSE, "Accumulating with %s atomics.\n",
           int64_atomics ? "64-bit" : "pairs of 32-bit");

    av_bprint_init(&defines, 0, AV_BPRINT_SIZE_AUTOMATIC);
    av_bprintf(&defines, "#define NB_NEIGHBORS %d\n", s->nb_max);
    av_bprintf(&defines, "#define BM3D_HAAR %d\n", s->haar);
    av_bprintf(&defines, "#define BM3D_INT64_ATOMICS %d\n", int64_atomics);
    av_bprintf(&defines, "#define VBM3D_Q %d\n", s->video ? s->perframe : 1);
    av_bprintf(&defines, "#define VBM3D_R1MAX %d\n", window_radius(s, 0));
    av_bprintf(&defines, "#define VBM3D_R2MAX %d\n", window_radius(s, 1));
    if (!av_bprint_is_complete(&defines)) {
        av_bprint_finalize(&defines, NULL);
        return AVERROR(ENOMEM);
    }
    s->dn.stage_names[STAGE_IO]        = "load/store";
    s->dn.stage_names[STAGE_SEARCH1]   = "search1";
    s->dn.stage_names[STAGE_FILTER1]   = "filter1";
    s->dn.stage_names[STAGE_SEARCH2]   = "search2";
    s->dn.stage_names[STAGE_FILTER2]   = "filter2";
    s->dn.stage_names[STAGE_NORMALISE] = "normalise";
    err = ff_denoise_opencl_init(avctx, &s->dn, defines.str, sources,
                                 FF_ARRAY_ELEMS(sources));
    av_bprint_finalize(&defines, NULL);
    if (err < 0)
        return err;

    s->kernel_filter[0] = clCreateKernel(s->ocf.program, "bm3d_filter_ht", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel bm3d_filter_ht: %d.\n", cle);
    s->kernel_filter[1] = clCreateKernel(s->ocf.program, "bm3d_filter_wiener", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel bm3d_filter_wiener: %d.\n", cle);
    s->kernel_normalise = clCreateKernel(s->ocf.program, "bm3d_normalise", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel bm3d_normalise: %d.\n", cle);
    if (s->video) {
        s->kernel_search_video = clCreateKernel(s->ocf.program, "vbm3d_search", &cle);
        CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel vbm3d_search: %d.\n", cle);
    }
    s->joint = use_joint_grouping(s);
    av_log(avctx, AV_LOG_VERBOSE, "%s grouping.\n", s->joint ?
           (s->layout.is_rgb ? "Joint (opponent colours)" : "Joint (luma)") : "Per-plane");
    err = create_tables(avctx);
    if (err < 0)
        goto fail;

    for (int c = 0; c < s->layout.nb_components; c++) {
        const DenoiseComponent *comp = &s->layout.comp[c];
        if (!component_selected(s, c))
            continue;
        for (int i = 0; i < 2; i++)
            ff_denoise_search_init(avctx, &s->dn, &s->search[c][i], comp->width,
                                   comp->height, BLOCK, FFMIN(s->par[i].step, BLOCK),
                                   s->par[i].range / 2, s->search_mode);
        err = alloc_buffers(avctx, c);
        if (err < 0)
            goto fail;
    }
    return 0;
fail:
    return err;
}

static int zero_slot(AVFilterContext *avctx, BM3DGPUContext *s, cl_mem buf,
                     int c, int slot)
{
    size_t size = (size_t)s->layout.comp[c].width * s->layout.comp[c].height *
                  sizeof(cl_long);
    cl_long zero = 0;
    cl_int cle = clEnqueueFillBuffer(s->dn.queue, buf, &zero, sizeof(zero),
                                     slot * size, size, 0, NULL, NULL);
    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to clear a buffer: %d.\n", cle);
        return AVERROR(EIO);
    }
    return 0;
}

/* The slots of the frames of the window from the reference frame on: the
 * patches of a group lying there are aggregated. */
static cl_uint aggregation_slots(const DenoiseWindow *win)
{
    cl_uint slots = 0;

    for (int i = win->nb_past; i < win->nb_frames; i++)
        slots |= 1U << ((win->first_slot + i) % win->ring);
    return slots;
}

/* Step i's search of the groups of component c on the ring 'guide'. */
static int search_step(AVFilterContext *avctx, int c, int i, cl_mem guide,
                       const DenoiseWindow *win)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c][i];
    int stage = i ? STAGE_SEARCH2 : STAGE_SEARCH1;
    int nb_future = win->nb_frames - 1 - win->nb_past;
    int radius1 = s->par[i].range / 2, radius2 = s->par[i].prange / 2;
    cl_kernel k = s->kernel_search_video;
    cl_int cle;
    int err = 0;

    if (!s->video)
        return ff_denoise_search_run(avctx, &s->dn, ds, guide, win, 1,
                                     s->positions[c], s->distances[c], stage);

    CL_SET_KERNEL_ARG(k,  0, cl_mem, &guide);
    CL_SET_KERNEL_ARG(k,  1, cl_int, &ds->width);
    CL_SET_KERNEL_ARG(k,  2, cl_int, &ds->height);
    CL_SET_KERNEL_ARG(k,  3, cl_int, &win->ring);
    CL_SET_KERNEL_ARG(k,  4, cl_int, &win->ref_slot);
    CL_SET_KERNEL_ARG(k,  5, cl_int, &win->nb_past);
    CL_SET_KERNEL_ARG(k,  6, cl_int, &nb_future);
    CL_SET_KERNEL_ARG(k,  7, cl_int, &ds->step);
    CL_SET_KERNEL_ARG(k,  8, cl_int, &ds->nx);
    CL_SET_KERNEL_ARG(k,  9, cl_int, &ds->ny);
    CL_SET_KERNEL_ARG(k, 10, cl_int, &radius1);
    CL_SET_KERNEL_ARG(k, 11, cl_int, &radius2);
    CL_SET_KERNEL_ARG(k, 12, cl_mem, &s->positions[c]);
    CL_SET_KERNEL_ARG(k, 13, cl_mem, &s->distances[c]);
    return ff_denoise_opencl_run(avctx, &s->dn, k, ds->nx, ds->ny, 0, 0, stage);
fail:
    return err;
}

/* num / den of slot 'slot' of step i's accumulators of component c, into
 * slot dst_slot of the ring dst. */
static int normalise(AVFilterContext *avctx, int c, int i, int slot,
                     cl_mem dst, int dst_slot)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    cl_uint samples = comp->width * comp->height;
    cl_uint src_offset = slot * samples, dst_offset = dst_slot * samples;
    cl_kernel k = s->kernel_normalise;
    cl_int cle;
    int err = 0;

    CL_SET_KERNEL_ARG(k, 0, cl_mem,  &s->num[i][c]);
    CL_SET_KERNEL_ARG(k, 1, cl_mem,  &s->den[i][c]);
    CL_SET_KERNEL_ARG(k, 2, cl_uint, &src_offset);
    CL_SET_KERNEL_ARG(k, 3, cl_mem,  &dst);
    CL_SET_KERNEL_ARG(k, 4, cl_uint, &dst_offset);
    CL_SET_KERNEL_ARG(k, 5, cl_int,  &comp->width);
    CL_SET_KERNEL_ARG(k, 6, cl_int,  &comp->height);
    return ff_denoise_opencl_run(avctx, &s->dn, k, comp->width, comp->height,
                                 0, 0, STAGE_NORMALISE);
fail:
    return err;
}

/*
 * Step i on component c with the groups of component g: hard thresholding
 * of its noisy ring, or Wiener filtering with its basic estimates as the
 * oracle, aggregated into step i's accumulators.
 */
static int filter_step(AVFilterContext *avctx, int c, int i, int g,
                       const DenoiseWindow *win)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const DenoiseSearch *ds = &s->search[g][i];
    const BM3DStep *p = &s->par[i];
    cl_uint plane_size = comp->width * comp->height;
    cl_uint agg_slots = aggregation_slots(win);
    cl_kernel k = s->kernel_filter[i];
    float sigma = channel_sigma(s, c);
    float threshold = s->hdthr * sigma;
    size_t global[2] = { (size_t)ds->nx * 64, ds->ny };
    size_t local[2]  = { 64, 1 };
    cl_event event = NULL;
    cl_int cle;
    int err = 0;

    CL_SET_KERNEL_ARG(k,  0, cl_mem,   &s->src[c]);
    CL_SET_KERNEL_ARG(k,  1, cl_mem,   &s->basic[c]);
    CL_SET_KERNEL_ARG(k,  2, cl_int,   &comp->width);
    CL_SET_KERNEL_ARG(k,  3, cl_int,   &ds->nx);
    CL_SET_KERNEL_ARG(k,  4, cl_mem,   &s->positions[g]);
    CL_SET_KERNEL_ARG(k,  5, cl_mem,   &s->distances[g]);
    CL_SET_KERNEL_ARG(k,  6, cl_int,   &p->group);
    CL_SET_KERNEL_ARG(k,  7, cl_float, &p->thmse);
    CL_SET_KERNEL_ARG(k,  8, cl_float, &sigma);
    CL_SET_KERNEL_ARG(k,  9, cl_float, &threshold);
    CL_SET_KERNEL_ARG(k, 10, cl_mem,   &s->fwd[i]);
    CL_SET_KERNEL_ARG(k, 11, cl_mem,   &s->inv[i]);
    CL_SET_KERNEL_ARG(k, 12, cl_mem,   &s->kaiser);
    CL_SET_KERNEL_ARG(k, 13, cl_mem,   &s->num[i][c]);
    CL_SET_KERNEL_ARG(k, 14, cl_mem,   &s->den[i][c]);
    CL_SET_KERNEL_ARG(k, 15, cl_uint,  &plane_size);
    CL_SET_KERNEL_ARG(k, 16, cl_uint,  &agg_slots);
    cle = clEnqueueNDRangeKernel(s->dn.queue, k, 2, NULL, global, local, 0,
                                 NULL, s->dn.profile ? &event : NULL);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to enqueue the BM3D filter: %d.\n", cle);
    if (event) {
        clWaitForEvents(1, &event);
        s->dn.stage_ms[i ? STAGE_FILTER2 : STAGE_FILTER1] +=
            ff_opencl_get_event_time(event) / 1e6;
        clReleaseEvent(event);
    }
    return 0;
fail:
    return err;
}

/* The components grouped together from component c: the three channels
 * with joint grouping, else c alone (0 when c is not filtered). */
static int group_members(const BM3DGPUContext *s, int c)
{
    if (s->joint)
        return c == 0 ? 3 : c < 3 ? 0 : component_selected(s, c);
    return component_selected(s, c);
}

/* Step i for reference frame t on every selected component. */
static int run_step(AVFilterContext *avctx, int i, int64_t t, int64_t last)
{
    BM3DGPUContext *s = avctx->priv;
    DenoiseWindow win = ff_denoise_opencl_window(&s->dn.fq, t, last, s->past,
                                                 s->future);
    int err;

    for (int c0 = 0; c0 < s->layout.nb_components; c0++) {
        int n = group_members(s, c0);

        if (!n)
            continue;
        err = search_step(avctx, c0, i, i ? s->basic[c0] : s->src[c0], &win);
        if (err < 0)
            return err;
        for (int c = c0; c < c0 + n; c++) {
            err = filter_step(avctx, c, i, c0, &win);
            if (err < 0)
                return err;
            /* the estimate of frame t is complete */
            err = normalise(avctx, c, i, win.ref_slot,
                            i ? s->dst[c] : s->basic[c], i ? 0 : win.ref_slot);
            if (err < 0)
                return err;
        }
    }
    return 0;
}

/* Step 1 of every frame up to 'end' not done yet. */
static int run_first_steps(AVFilterContext *avctx, int64_t end, int64_t last)
{
    BM3DGPUContext *s = avctx->priv;

    for (; s->next_basic <= end; s->next_basic++) {
        int err = run_step(avctx, 0, s->next_basic, last);
        if (err < 0)
            return err;
    }
    return 0;
}

/* The frame t whose estimate is complete: its planes, in dst. */
static int finish_frame(AVFilterContext *avctx, int64_t t, int *mask)
{
    BM3DGPUContext *s = avctx->priv;
    int slot = t % s->dn.fq.ring;
    int err;

    for (int c = 0; c < s->layout.nb_components; c++) {
        if (!component_selected(s, c))
            continue;
        if (s->estim == ESTIMATE_BASIC) {
            err = normalise(avctx, c, 0, slot, s->dst[c], 0);
            if (err < 0)
                return err;
        }
        *mask |= 1 << c;
    }
    if (s->joint && s->layout.is_rgb)
        return ff_denoise_opencl_opponent(avctx, &s->dn, s->dst,
                                          s->layout.comp[0].width,
                                          s->layout.comp[0].height, 0, 1);
    return 0;
}

/* The last frame whose basic estimate frame t needs: the last of its window
 * for the second step, or t itself with estim=basic. */
static int64_t last_basic_needed(const BM3DGPUContext *s, int64_t t, int64_t last)
{
    return s->estim == ESTIMATE_BASIC ? t : FFMIN(last, t + s->future);
}

/*
 * Frame t: the basic estimates its second step needs (those of its window,
 * or its own alone with estim=basic), then its second step.
 */
static int denoise_frame(AVFilterContext *avctx, int64_t t, int64_t last,
                         int *mask)
{
    BM3DGPUContext *s = avctx->priv;
    int err;

    err = run_first_steps(avctx, last_basic_needed(s, t, last), last);
    if (err >= 0 && s->estim != ESTIMATE_BASIC)
        err = run_step(avctx, 1, t, last);
    if (err < 0)
        return err;
    return finish_frame(avctx, t, mask);
}

/* Frame t passes through (timeline): the later frames still need its basic
 * estimate, and those of its window, unless every window is one frame. */
static int skip_frame(AVFilterContext *avctx, int64_t t, int64_t last)
{
    BM3DGPUContext *s = avctx->priv;

    if (!s->past && !s->future) {
        s->next_basic = t + 1;
        return 0;
    }
    return run_first_steps(avctx, last_basic_needed(s, t, last), last);
}

/* A new frame in its slot: its planes (opponent channels for RGB grouped
 * jointly), and cleared accumulators. */
static int load_frame(AVFilterContext *avctx, const AVFrame *in, int slot)
{
    BM3DGPUContext *s = avctx->priv;
    int err;

    for (int c = 0; c < s->layout.nb_components; c++) {
        if (!component_selected(s, c))
            continue;
        if ((err = ff_denoise_opencl_load(avctx, &s->dn, &s->layout, in, c,
                                          s->src[c], slot)) < 0 ||
            (err = zero_slot(avctx, s, s->num[0][c], c, slot)) < 0 ||
            (err = zero_slot(avctx, s, s->den[0][c], c, slot)) < 0 ||
            (err = zero_slot(avctx, s, s->num[1][c], c, slot)) < 0 ||
            (err = zero_slot(avctx, s, s->den[1][c], c, slot)) < 0)
            return err;
    }
    if (s->joint && s->layout.is_rgb)
        return ff_denoise_opencl_opponent(avctx, &s->dn, s->src,
                                          s->layout.comp[0].width,
                                          s->layout.comp[0].height, slot, 0);
    return 0;
}

static const DenoiseQueueOps bm3d_queue_ops = {
    .init    = bm3d_gpu_init,
    .load    = load_frame,
    .denoise = denoise_frame,
    .skip    = skip_frame,
};

static int bm3d_gpu_activate(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;

    return ff_denoise_opencl_activate(avctx, &s->dn, &s->layout, s->dst,
                                      &bm3d_queue_ops);
}

static av_cold int bm3d_gpu_init_filter(AVFilterContext *avctx)
{
    int err = resolve_parameters(avctx);

    if (err < 0)
        return err;
    return ff_opencl_filter_init(avctx);
}

static av_cold int vbm3d_gpu_init_filter(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;

    s->video  = 1;
    s->preset = PRESET_VIDEO;
    return bm3d_gpu_init_filter(avctx);
}

static av_cold void bm3d_gpu_uninit(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    cl_int cle;

    ff_denoise_opencl_queue_uninit(&s->dn);
    ff_denoise_opencl_uninit(avctx, &s->dn);
    CL_RELEASE_KERNEL(s->kernel_filter[0]);
    CL_RELEASE_KERNEL(s->kernel_filter[1]);
    CL_RELEASE_KERNEL(s->kernel_normalise);
    CL_RELEASE_KERNEL(s->kernel_search_video);
    for (int i = 0; i < 2; i++) {
        CL_RELEASE_MEMORY(s->fwd[i]);
        CL_RELEASE_MEMORY(s->inv[i]);
    }
    CL_RELEASE_MEMORY(s->kaiser);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        CL_RELEASE_MEMORY(s->src[c]);
        CL_RELEASE_MEMORY(s->basic[c]);
        CL_RELEASE_MEMORY(s->dst[c]);
        CL_RELEASE_MEMORY(s->positions[c]);
        CL_RELEASE_MEMORY(s->distances[c]);
        for (int i = 0; i < 2; i++) {
            CL_RELEASE_MEMORY(s->num[i][c]);
            CL_RELEASE_MEMORY(s->den[i][c]);
        }
    }
    ff_opencl_filter_uninit(avctx);
}

#define OFFSET(x) offsetof(BM3DGPUContext, x)
#define FLAGS  (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)
#define RFLAGS (FLAGS | AV_OPT_FLAG_RUNTIME_PARAM)

/* The options of both filters; 'DEFAULTS' names where the step parameters'
 * defaults come from. */
#define BM3D_STEP_OPTIONS(DEFAULTS)                                                                  \
    { "bstep", "step of the grid of reference blocks, first step (0: " DEFAULTS ")",                \
      OFFSET(opt[0].step), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 8, FLAGS },                            \
    { "group", "largest group, a power of two, first step (0: " DEFAULTS ")",                       \
      OFFSET(opt[0].group), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 32, FLAGS },                          \
    { "range", "search window size, first step (0: " DEFAULTS ")",                                  \
      OFFSET(opt[0].range), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },                          \
    { "thmse", "largest mean squared difference of a matching block, first step (-1: " DEFAULTS ")", \
      OFFSET(opt[0].thmse), AV_OPT_TYPE_FLOAT, { .dbl = -1 }, -1, 65025, FLAGS },                   \
    { "bstep2", "step of the grid of reference blocks, second step (0: " DEFAULTS ")",              \
      OFFSET(opt[1].step), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 8, FLAGS },                            \
    { "group2", "largest group, a power of two, second step (0: " DEFAULTS ")",                     \
      OFFSET(opt[1].group), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 32, FLAGS },                          \
    { "range2", "search window size, second step (0: " DEFAULTS ")",                                \
      OFFSET(opt[1].range), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },                          \
    { "thmse2", "largest mean squared difference of a matching block, second step (-1: " DEFAULTS ")", \
      OFFSET(opt[1].thmse), AV_OPT_TYPE_FLOAT, { .dbl = -1 }, -1, 65025, FLAGS }

#define BM3D_COMMON_OPTIONS                                                                          \
    { "sigma", "noise standard deviation, on the 8-bit scale whatever the bit depth",               \
      OFFSET(sigma), AV_OPT_TYPE_FLOAT, { .dbl = 10.0 }, 0.0, 255.0, RFLAGS },                      \
    { "csigma", "noise standard deviation of the chroma planes (-1: same as sigma)",                \
      OFFSET(csigma), AV_OPT_TYPE_FLOAT, { .dbl = -1.0 }, -1.0, 255.0, RFLAGS },                    \
    { "hdthr", "hard threshold of the first step, in units of sigma",                              \
      OFFSET(hdthr), AV_OPT_TYPE_FLOAT, { .dbl = 2.7 }, 0, 100, RFLAGS },                           \
    { "kaiser", "beta of the Kaiser window of the aggregation",                                     \
      OFFSET(beta), AV_OPT_TYPE_FLOAT, { .dbl = 2.0 }, 0, KAISER_MAX, FLAGS },                      \
    { "transform", "2-D transform of the first step (the second uses the DCT)",                     \
      OFFSET(transform), AV_OPT_TYPE_INT, { .i64 = TRANSFORM_DCT }, TRANSFORM_BIOR, TRANSFORM_DCT, FLAGS, .unit = "transform" }, \
        { "dct",  "discrete cosine transform",     0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM_DCT },  0, 0, FLAGS, .unit = "transform" }, \
        { "bior", "Bior1.5 wavelet, three levels", 0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM_BIOR }, 0, 0, FLAGS, .unit = "transform" }, \
    { "transform1d", "1-D transform along the groups, both steps",                                  \
      OFFSET(haar), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 1, FLAGS, .unit = "transform1d" },            \
        { "hadamard", "Walsh-Hadamard transform",     0, AV_OPT_TYPE_CONST, { .i64 = 0 }, 0, 0, FLAGS, .unit = "transform1d" }, \
        { "haar",     "Haar wavelet, all levels",     0, AV_OPT_TYPE_CONST, { .i64 = 1 }, 0, 0, FLAGS, .unit = "transform1d" }, \
    { "estim", "estimate to output",                                                                \
      OFFSET(estim), AV_OPT_TYPE_INT, { .i64 = ESTIMATE_FINAL }, ESTIMATE_FINAL, ESTIMATE_BASIC, FLAGS, .unit = "estim" }, \
        { "final", "both steps: hard threshold, then Wiener filtering", 0, AV_OPT_TYPE_CONST, { .i64 = ESTIMATE_FINAL }, 0, 0, FLAGS, .unit = "estim" }, \
        { "basic", "the first step only",                               0, AV_OPT_TYPE_CONST, { .i64 = ESTIMATE_BASIC }, 0, 0, FLAGS, .unit = "estim" }, \
    { "planes", "bit mask of the planes to filter",                                                 \
      OFFSET(planes), AV_OPT_TYPE_INT, { .i64 = 0xf }, 0, 0xf, FLAGS },                             \
    { "color", "grouping of the channels of 4:4:4 and RGB frames",                                  \
      OFFSET(color), AV_OPT_TYPE_INT, { .i64 = COLOR_JOINT }, COLOR_JOINT, COLOR_PLANES, FLAGS, .unit = "color" }, \
        { "joint",  "groups found on luma (RGB: opponent colours) serve all three channels", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_JOINT },  0, 0, FLAGS, .unit = "color" }, \
        { "planes", "each plane grouped on its own", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_PLANES }, 0, 0, FLAGS, .unit = "color" }, \
    { "atomics", "integer atomics of the deterministic accumulation",                               \
      OFFSET(atomics), AV_OPT_TYPE_INT, { .i64 = ATOMICS_AUTO }, ATOMICS_AUTO, ATOMICS_INT32, FLAGS, .unit = "atomics" }, \
        { "auto",  "64-bit where the device has them, else pairs of 32-bit", 0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_AUTO },  0, 0, FLAGS, .unit = "atomics" }, \
        { "int64", "64-bit integer atomics",                                 0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_INT64 }, 0, 0, FLAGS, .unit = "atomics" }, \
        { "int32", "pairs of 32-bit integer atomics (same output)",          0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_INT32 }, 0, 0, FLAGS, .unit = "atomics" }, \
    { "profile", "log the kernel time of each stage for every frame",                               \
      OFFSET(dn.profile), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS }

static const AVOption bm3d_gpu_options[] = {
    BM3D_COMMON_OPTIONS,
    { "preset", "parameter set",
      OFFSET(preset), AV_OPT_TYPE_INT, { .i64 = PRESET_FAST }, PRESET_FAST, PRESET_REF, FLAGS, .unit = "preset" },
        { "fast", "Davy & Ehret: step 4, 21x21 window, groups of 8", 0, AV_OPT_TYPE_CONST, { .i64 = PRESET_FAST }, 0, 0, FLAGS, .unit = "preset" },
        { "ref",  "Dabov et al.: step 3, 39x39 window, groups of 16 then 32", 0, AV_OPT_TYPE_CONST, { .i64 = PRESET_REF }, 0, 0, FLAGS, .unit = "preset" },
    BM3D_STEP_OPTIONS("from the preset"),
    { "search", "block matching kernel",
      OFFSET(search_mode), AV_OPT_TYPE_INT, { .i64 = DENOISE_SEARCH_AUTO }, DENOISE_SEARCH_AUTO, DENOISE_SEARCH_DIRECT, FLAGS, .unit = "search" },
        { "auto",   "work-group search on GPUs, per-block search on CPUs", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_AUTO },   0, 0, FLAGS, .unit = "search" },
        { "tiled",  "work-group search sharing the sums of overlapping blocks", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_TILED },  0, 0, FLAGS, .unit = "search" },
        { "direct", "one work-item per reference block", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_DIRECT }, 0, 0, FLAGS, .unit = "search" },
    { NULL }
};

static const AVOption vbm3d_gpu_options[] = {
    BM3D_COMMON_OPTIONS,
    BM3D_STEP_OPTIONS("6, 8, 7, 2500, then 4, 8, 7, 400"),
    { "prange", "predictive search window in the other frames, first step (0: 5)",
      OFFSET(opt[0].prange), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },
    { "prange2", "predictive search window in the other frames, second step (0: 5)",
      OFFSET(opt[1].prange), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },
    { "perframe", "most similar blocks kept per frame",
      OFFSET(perframe), AV_OPT_TYPE_INT, { .i64 = 2 }, 1, 8, FLAGS },
    { "past", "number of past frames searched",
      OFFSET(past), AV_OPT_TYPE_INT, { .i64 = 4 }, 0, 15, FLAGS },
    { "future", "number of future frames searched (the output is delayed by twice as many frames)",
      OFFSET(future), AV_OPT_TYPE_INT, { .i64 = 4 }, 0, 8, FLAGS },
    { "causal", "search past frames only, whatever future says: no delay",
      OFFSET(causal), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS },
    { NULL }
};

AVFILTER_DEFINE_CLASS(bm3d_gpu);
AVFILTER_DEFINE_CLASS(vbm3d_gpu);

static const AVFilterPad bm3d_gpu_inputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &ff_denoise_opencl_config_input,
    },
};

static const AVFilterPad bm3d_gpu_outputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &ff_opencl_filter_config_output,
    },
};

#if CONFIG_BM3D_GPU_FILTER
const FFFilter ff_vf_bm3d_gpu = {
    .p.name          = "bm3d_gpu",
    .p.description   = NULL_IF_CONFIG_SMALL("Block-matching and 3-D filtering denoiser through OpenCL"),
    .p.priv_class    = &bm3d_gpu_class,
    .p.flags         = AVFILTER_FLAG_HWDEVICE | AVFILTER_FLAG_SUPPORT_TIMELINE_INTERNAL,
    .priv_size       = sizeof(BM3DGPUContext),
    .init            = &bm3d_gpu_init_filter,
    .uninit          = &bm3d_gpu_uninit,
    .activate        = &bm3d_gpu_activate,
    FILTER_INPUTS(bm3d_gpu_inputs),
    FILTER_OUTPUTS(bm3d_gpu_outputs),
    FILTER_SINGLE_PIXFMT(AV_PIX_FMT_OPENCL),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &ff_filter_process_command,
};
#endif

#if CONFIG_VBM3D_GPU_FILTER
const FFFilter ff_vf_vbm3d_gpu = {
    .p.name          = "vbm3d_gpu",
    .p.description   = NULL_IF_CONFIG_SMALL("Video block-matching and 3-D filtering denoiser through OpenCL"),
    .p.priv_class    = &vbm3d_gpu_class,
    .p.flags         = AVFILTER_FLAG_HWDEVICE | AVFILTER_FLAG_SUPPORT_TIMELINE_INTERNAL,
    .priv_size       = sizeof(BM3DGPUContext),
    .init            = &vbm3d_gpu_init_filter,
    .uninit          = &bm3d_gpu_uninit,
    .activate        = &bm3d_gpu_activate,
    FILTER_INPUTS(bm3d_gpu_inputs),
    FILTER_OUTPUTS(bm3d_gpu_outputs),
    FILTER_SINGLE_PIXFMT(AV_PIX_FMT_OPENCL),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &ff_filter_process_command,
};
#endif
