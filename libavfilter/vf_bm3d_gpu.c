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

#include "libavutil/avassert.h"
#include "libavutil/bprint.h"
#include "libavutil/common.h"
#include "libavutil/hwcontext.h"
#include "libavutil/intfloat.h"
#include "libavutil/mathematics.h"
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
#define NORMALISE_ROWS 8    ///< rows of samples per work-item of bm3d_normalise

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
    TRANSFORM_PRESET = -1,
    TRANSFORM_BIOR,
    TRANSFORM_DCT,
};

enum BM3DTransform1D {
    TRANSFORM1D_PRESET = -1,
    TRANSFORM1D_HADAMARD,
    TRANSFORM1D_HAAR,
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
    [PRESET_FAST]  = { { 4, 16, 21, 3000 }, { 4, 16, 17, 400 } },
    [PRESET_REF]   = { { 3, 16, 39, 3000 }, { 3, 32, 39, 400 } },
    [PRESET_VIDEO] = { { 6,  8,  7, 2500, 5 }, { 4, 8, 7, 400, 5 } },
};

/* The transforms of each preset and its Wiener regularisation: `ref` has
 * the transforms of the reference implementation (Bior1.5 in the first
 * step, Haar along the groups) and a Wiener step with mu2 = 0.9, nearer the
 * reference's output in gray at every sigma and as near in colour
 * (doc/benchmarks.md); `fast` has its Haar transform (with Walsh-Hadamard it
 * falls more than 0.3 dB behind `ref` on colour at sigma 20). */
static const struct {
    enum BM3DTransform transform;
    enum BM3DTransform1D transform1d;
    float mu2;
} preset_filters[3] = {
    [PRESET_FAST]  = { TRANSFORM_DCT,  TRANSFORM1D_HAAR,     1.0f },
    [PRESET_REF]   = { TRANSFORM_BIOR, TRANSFORM1D_HAAR,     0.9f },
    [PRESET_VIDEO] = { TRANSFORM_DCT,  TRANSFORM1D_HADAMARD, 1.0f },
};

typedef struct BM3DGPUContext {
    OpenCLFilterContext ocf;
    DenoiseOpenCLContext dn;

    /* options (sigma, csigma, planes, search and profile in dn) */
    int   preset;
    BM3DStep opt[2];       ///< -1 / -1.0: from the preset
    float hdthr;
    float mu2;             ///< Wiener regularisation; < 0: from the preset
    float beta;
    int   transform;       ///< 2-D transform of the first step
    int   haar;            ///< Haar instead of Walsh-Hadamard along groups
    int   estim;
    int   color;
    int   atomics;         ///< accumulation: 0 auto, 1 64-bit, 2 32-bit pairs
    int   past;            ///< frames before and after the reference frame
    int   future;
    int   causal;
    int   perframe;        ///< best patches kept per frame (vbm3d)

    int video;             ///< vbm3d_gpu: groups across frames
    BM3DStep par[2];       ///< effective parameters
    int nb_max;            ///< size of the search tables
    int int64_atomics;     ///< accumulate with 64-bit atomics
    DenoiseSearch search[DENOISE_MAX_COMPONENTS][2];
    cl_kernel kernel_bm3d_filter_ht;
    cl_kernel kernel_bm3d_filter_wiener;
    cl_kernel kernel_bm3d_normalise;
    cl_kernel kernel_bm3d_normalise_u8; ///< the basic estimate into a ring of bytes
    cl_kernel kernel_vbm3d_search;  ///< predictive search
    cl_kernel kernel_vbm3d_search_basic; ///< ... on RGB's basic estimates
    int joint;                      ///< group the three channels together
    int ring_bytes;                 ///< the noisy and basic rings hold bytes
    int64_t next_basic;             ///< next frame of the first step
    int acc_ring;                   ///< accumulator planes of both steps
    int round_basic;                ///< basic estimate rounded to integers
    int64_t next_clear[2];          ///< next frame of each step's accumulators to clear
    cl_mem kaiser;
    /* per component: rings of frames, except dst, the output planes */
    cl_mem src[DENOISE_MAX_COMPONENTS];
    cl_mem basic[DENOISE_MAX_COMPONENTS];
    cl_mem dst[DENOISE_MAX_COMPONENTS];
    /* accumulators of both steps, one ring of acc_ring planes: frame t's in
     * plane t % acc_ring, from the first group aggregated there until it is
     * normalised; num sums the weighted estimates per sample, weights the
     * group weights per patch position (the Kaiser window of the
     * denominator is applied by bm3d_normalise) */
    cl_mem num[DENOISE_MAX_COMPONENTS];
    cl_mem weights[DENOISE_MAX_COMPONENTS];
    cl_mem positions[DENOISE_MAX_COMPONENTS];
    cl_mem distances[DENOISE_MAX_COMPONENTS];
} BM3DGPUContext;

DENOISE_CHECK_CONTEXT(BM3DGPUContext);

/* The noise of channel c: sigma or csigma, or for RGB frames grouped
 * jointly the opponent channel's. */
static float channel_sigma(const BM3DGPUContext *s, int c)
{
    return ff_denoise_opencl_sigma(&s->dn, c, s->joint && s->dn.layout.is_rgb);
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

/* The 8x8 Kaiser window, computed in double and rounded to float, then the
 * 1-D window it is the outer product of (bm3d_normalise's), in float. */
static void make_kaiser(float beta, float *kaiser)
{
    double w[BLOCK];

    for (int i = 0; i < BLOCK; i++) {
        double t = 2.0 * i / (BLOCK - 1) - 1.0;
        w[i] = av_bessel_i0(beta * sqrt(1.0 - t * t)) / av_bessel_i0(beta);
    }
    for (int a = 0; a < BLOCK; a++)
        for (int b = 0; b < BLOCK; b++)
            kaiser[a * BLOCK + b] = w[a] * w[b];
    for (int a = 0; a < BLOCK; a++)
        kaiser[BLOCK * BLOCK + a] = w[a];
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
    if (s->transform == TRANSFORM_PRESET)
        s->transform = preset_filters[s->preset].transform;
    if (s->haar == TRANSFORM1D_PRESET)
        s->haar = preset_filters[s->preset].transform1d == TRANSFORM1D_HAAR;
    s->nb_max = FFMAX(s->par[0].group, s->par[1].group);
    if (s->causal)
        s->future = 0;
    return 0;
}

/* 64-bit atomics where the device has them and the atomics option allows. */
static int choose_atomics(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    char extensions[4096] = "";
    int available;

    clGetDeviceInfo(s->ocf.hwctx->device_id, CL_DEVICE_EXTENSIONS,
                    sizeof(extensions) - 1, extensions, NULL);
    available = !!strstr(extensions, "cl_khr_int64_base_atomics");
    if (s->atomics == ATOMICS_INT64 && !available) {
        av_log(avctx, AV_LOG_ERROR, "This OpenCL device has no 64-bit integer "
               "atomics (cl_khr_int64_base_atomics); use atomics=auto or int32.\n");
        return AVERROR(ENOSYS);
    }
    s->int64_atomics = available && s->atomics != ATOMICS_INT32;
    av_log(avctx, AV_LOG_VERBOSE, "Accumulating with %s atomics.\n",
           s->int64_atomics ? "64-bit" : "pairs of 32-bit");
    return 0;
}

/* "#define <name><step> " and the bits of the 64 coefficients of m. */
static void define_matrix(AVBPrint *defines, const char *name, int step,
                          const float *m)
{
    av_bprintf(defines, "#define %s%d", name, step);
    for (int i = 0; i < BLOCK * BLOCK; i++)
        av_bprintf(defines, "%s0x%08"PRIx32"u", i ? ", " : " ",
                   av_float2int(m[i]));
    av_bprintf(defines, "\n");
}

/* The 2-D transforms of both steps (step 2 always uses the DCT) and their
 * inverses, as constants of the program: BM3D_FWD1, BM3D_INV1, BM3D_FWD2,
 * BM3D_INV2, and BM3D_DCT1, whether step 1's is the DCT (which the kernels
 * apply by its symmetry). */
static void define_transforms(const BM3DGPUContext *s, AVBPrint *defines)
{
    float fwd[BLOCK * BLOCK], inv[BLOCK * BLOCK];

    for (int i = 0; i < 2; i++) {
        make_transform(i == 0 && s->transform == TRANSFORM_BIOR, fwd, inv);
        define_matrix(defines, "BM3D_FWD", i + 1, fwd);
        define_matrix(defines, "BM3D_INV", i + 1, inv);
    }
    av_bprintf(defines, "#define BM3D_DCT1 %d\n", s->transform != TRANSFORM_BIOR);
}

/* The program with its compile-time constants, and the filter's kernels. */
static int build_program(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    const char *sources[] = {
        ff_source_bm3d_gpu_cl,
#if CONFIG_VBM3D_GPU_FILTER
        ff_source_vbm3d_search_cl,
#endif
    };
    int nb_sources = s->video ? 2 : 1;
    AVBPrint defines;
    cl_int cle;
    int err;

    av_assert0(nb_sources <= FF_ARRAY_ELEMS(sources));
    av_bprint_init(&defines, 0, AV_BPRINT_SIZE_UNLIMITED);
    av_bprintf(&defines, "#define NB_NEIGHBORS %d\n", s->nb_max);
    av_bprintf(&defines, "#define BM3D_HAAR %d\n", s->haar);
    av_bprintf(&defines, "#define BM3D_INT64_ATOMICS %d\n", s->int64_atomics);
    define_transforms(s, &defines);
    if (s->video) {
        av_bprintf(&defines, "#define VBM3D_Q %d\n", s->perframe);
        av_bprintf(&defines, "#define VBM3D_R1MAX %d\n", window_radius(s, 0));
        av_bprintf(&defines, "#define VBM3D_R2MAX %d\n", window_radius(s, 1));
    }
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
    err = ff_denoise_opencl_init(avctx, &s->dn, defines.str, sources, nb_sources);
    av_bprint_finalize(&defines, NULL);
    if (err < 0)
        return err;

    CL_CREATE_KERNEL(s, bm3d_filter_ht);
    CL_CREATE_KERNEL(s, bm3d_filter_wiener);
    CL_CREATE_KERNEL(s, bm3d_normalise);
    if (s->ring_bytes)
        CL_CREATE_KERNEL(s, bm3d_normalise_u8);
    if (s->video)
        CL_CREATE_KERNEL(s, vbm3d_search);
    if (s->dn.ring_rgb)
        CL_CREATE_KERNEL(s, vbm3d_search_basic);
    return 0;
fail:
    return err;
}

/* The Kaiser windows, 2-D and 1-D, as a constant table. */
static int create_tables(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    float kaiser[BLOCK * BLOCK + BLOCK];

    make_kaiser(s->beta, kaiser);
    s->kaiser = ff_denoise_opencl_table(avctx, kaiser, sizeof(kaiser));
    return s->kaiser ? 0 : AVERROR(ENOMEM);
}

/* A second reference to a buffer, for two uses that never overlap. */
static cl_mem share_buffer(cl_mem buf)
{
    if (buf)
        clRetainMemObject(buf);
    return buf;
}

/* The components grouped together from component c: the three channels
 * with joint grouping, else c alone (0 when c is not filtered). */
static int group_members(const BM3DGPUContext *s, int c)
{
    if (s->joint)
        return c == 0 ? 3 : c < 3 ? 0 : ff_denoise_opencl_selected(&s->dn, c);
    return ff_denoise_opencl_selected(&s->dn, c);
}

/*
 * A ring of 'ring' frames of component c; with rings of RGB bytes, one
 * buffer holds the three channels' rings, one after the other, and the
 * other two components share component 0's.
 */
static cl_mem alloc_ring(AVFilterContext *avctx, int c, size_t ring,
                         cl_mem *rings)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    size_t samples = (size_t)comp->width * comp->height;

    if (s->dn.ring_rgb && c)
        return share_buffer(rings[0]);
    return ff_denoise_opencl_alloc(avctx, (s->dn.ring_rgb ? 3 : 1) * ring * samples *
                                   (s->ring_bytes ? sizeof(cl_uchar) : sizeof(cl_float)));
}

/*
 * The buffers of component c, with rings of 'ring' frames, and acc_ring
 * planes of accumulators, which the two steps share. With one frame in the
 * ring (bm3d_gpu) the output is written over the frame's noisy samples,
 * which the second step has finished reading by then.
 */
static int alloc_buffers(AVFilterContext *avctx, int c, size_t ring)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    size_t samples = (size_t)comp->width * comp->height;
    size_t refs = 0;
    int single = ring == 1;

    /* a ring of one frame takes the output in its float plane */
    av_assert0(!(single && s->ring_bytes));
    for (int i = 0; i < 2; i++)
        refs = FFMAX(refs, (size_t)s->search[c][i].nx * s->search[c][i].band);
    s->src[c] = alloc_ring(avctx, c, ring, s->src);
    s->dst[c] = single ? share_buffer(s->src[c]) :
                ff_denoise_opencl_alloc(avctx, samples * sizeof(cl_float));
    if (!s->src[c] || !s->dst[c])
        return AVERROR(ENOMEM);
    /* the groups of a component grouped jointly are its first channel's */
    if (group_members(s, c)) {
        s->positions[c] = ff_denoise_opencl_alloc(avctx, refs * s->nb_max * sizeof(cl_uint));
        s->distances[c] = ff_denoise_opencl_alloc(avctx, refs * s->nb_max * sizeof(cl_float));
        if (!s->positions[c] || !s->distances[c])
            return AVERROR(ENOMEM);
    }
    /* with estim=basic no second step reads basic estimates: no ring for
     * them (the first step's kernel gets a null buffer it never reads) */
    if (s->estim != ESTIMATE_BASIC) {
        s->basic[c] = alloc_ring(avctx, c, ring, s->basic);
        if (!s->basic[c])
            return AVERROR(ENOMEM);
    }
    s->num[c]     = ff_denoise_opencl_alloc(avctx, s->acc_ring * samples * sizeof(cl_long));
    s->weights[c] = ff_denoise_opencl_alloc(avctx, s->acc_ring * samples * sizeof(cl_long));
    if (!s->num[c] || !s->weights[c])
        return AVERROR(ENOMEM);
    return 0;
}

/* The search geometry of both steps of every selected component, before
 * the program is built. */
static void init_searches(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;

    /* Step 1 searches the noisy samples, integers on 8-bit frames (the
     * variance-stabilising transform of sigma=curve leaves fractions, and
     * so does the opponent transform of RGB grouped jointly). Step 2
     * searches the basic estimate, which bm3d_gpu rounds to integers there
     * when the second grid's step is even: its search then sums square
     * blocks exactly (patch_search_squares, with keys), which `fast` gains
     * from; `ref` (step 3) would only lose a little PSNR (doc/benchmarks.md).
     * vbm3d_gpu's basic estimate is rounded where its rings hold bytes
     * (bm3d_normalise_u8); its searches are its own. */
    int integer = s->dn.layout.container == 255 &&
                  !(s->joint && s->dn.layout.is_rgb) &&
                  s->dn.sigma != DENOISE_SIGMA_CURVE;

    s->round_basic = integer && !s->video && s->estim != ESTIMATE_BASIC &&
                     FFMIN(s->par[1].step, BLOCK) % 2 == 0;
    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        const DenoiseComponent *comp = &s->dn.layout.comp[c];

        if (!ff_denoise_opencl_selected(&s->dn, c))
            continue;
        for (int i = 0; i < 2; i++) {
            const DenoiseSearchParams par = {
                .width           = comp->width,
                .height          = comp->height,
                .patch           = BLOCK,
                .step            = FFMIN(s->par[i].step, BLOCK),
                .radius          = s->par[i].range / 2,
                .channels        = 1,
                .integer_samples = i ? s->round_basic : integer,
                .max_frames      = 1,
                .ref_bytes       = s->nb_max * (sizeof(cl_uint) + sizeof(cl_float)),
                /* vbm3d_gpu's searches are its own (vbm3d_search.cl) */
                .own_kernels     = s->video,
            };
            ff_denoise_opencl_search_init(avctx, &s->dn, &s->search[c][i], &par);
        }
    }
}

/* The searches' kernels and the buffers of every selected component, once
 * the program is built. */
static int setup_components(AVFilterContext *avctx, int ring)
{
    BM3DGPUContext *s = avctx->priv;

    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        int err;

        if (!ff_denoise_opencl_selected(&s->dn, c))
            continue;
        for (int i = 0; i < 2 && !s->video; i++)
            ff_denoise_opencl_search_ready(avctx, &s->dn, &s->search[c][i]);
        err = alloc_buffers(avctx, c, ring);
        if (err < 0)
            return err;
    }
    return 0;
}

static av_cold int bm3d_gpu_init(AVFilterContext *avctx, DenoiseQueueSize *size)
{
    BM3DGPUContext *s = avctx->priv;
    int width = s->dn.width, height = s->dn.height;
    int err;

    /* planes smaller than a block are filtered padded to one */
    ff_denoise_opencl_pad_components(&s->dn.layout, BLOCK);
    /* the frames of the window: ring - 1 - delay past frames, the frame
     * being output and the delay frames after it */
    size->delay = s->estim == ESTIMATE_BASIC ? s->future : 2 * s->future;
    size->ring  = s->past + size->delay + 1;
    /* the groups of frame t are aggregated in frames t to t + future. A
     * frame's plane of accumulators takes the first step's sums until its
     * basic estimate is normalised, then the second step's; the first step
     * runs future frames ahead of the second (denoise_frame()), so while
     * the second step of frame t runs, frames t .. t + 2 future hold sums
     * (the second step's up to t + future, the first step's after) */
    s->acc_ring = s->estim == ESTIMATE_BASIC ? s->future + 1 : 2 * s->future + 1;
    s->joint = s->color == COLOR_JOINT && ff_denoise_opencl_joint_possible(&s->dn);
    /* vbm3d_gpu keeps 8-bit frames as bytes in its noisy ring (the integers
     * its float planes would hold, in a quarter of the memory, and its
     * searches read them faster) and their basic estimates, rounded to
     * integers, in its basic ring, unless sigma=curve's transform makes
     * fractions of them or the ring is one frame, whose float plane then
     * takes the output. RGB grouped jointly keeps the R, G, B bytes, which
     * its kernels read as opponent channels, and its basic estimate as
     * opponent channels rounded to integers, U and V stored plus 128. */
    s->ring_bytes = s->video && size->ring > 1 &&
                    ff_denoise_opencl_bytes_possible(&s->dn);
    s->dn.load_bytes = s->ring_bytes;
    s->dn.ring_rgb   = s->ring_bytes && s->joint && s->dn.layout.is_rgb;
    /* positions index the ring of planes in 32 bits, accumulators in pairs
     * of 32-bit words; rings of RGB bytes are read three rings deep */
    if ((uint64_t)width * height * size->ring > UINT32_MAX / 2 ||
        (uint64_t)width * height * size->ring * (s->dn.ring_rgb ? 3 : 1) > UINT32_MAX) {
        av_log(avctx, AV_LOG_ERROR, "Frames of %dx%d are too large%s.\n",
               width, height, s->video ? " for this window" : "");
        return AVERROR(EINVAL);
    }
    av_log(avctx, AV_LOG_VERBOSE, "%s grouping.\n", s->joint ?
           (s->dn.layout.is_rgb ? "Joint (opponent colours)" : "Joint (luma)") : "Per-plane");

    init_searches(avctx);
    if ((err = choose_atomics(avctx)) < 0 ||
        (err = build_program(avctx)) < 0 ||
        (err = create_tables(avctx)) < 0)
        return err;
    return setup_components(avctx, size->ring);
}

static int zero_slot(AVFilterContext *avctx, BM3DGPUContext *s, cl_mem buf,
                     int c, int slot)
{
    size_t size = (size_t)s->dn.layout.comp[c].width * s->dn.layout.comp[c].height *
                  sizeof(cl_long);
    cl_long zero = 0;
    cl_int cle = clEnqueueFillBuffer(s->dn.queue, buf, &zero, sizeof(zero),
                                     slot * size, size, 0, NULL, NULL);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to clear a buffer", cle);
    return 0;
}

/* The accumulator plane of frame t, in the ring of acc_ring planes. */
static int acc_slot(const BM3DGPUContext *s, int64_t t)
{
    return t % s->acc_ring;
}

/*
 * Before step i's groups of reference frame t, which are aggregated in
 * frames t to t + future: the accumulator planes of those not cleared yet
 * for step i (the frames that had them before are normalised or passed
 * through; for the second step, the frame's own first-step sums, normalised
 * into its basic estimate).
 */
static int clear_accumulators(AVFilterContext *avctx, int i, int64_t t)
{
    BM3DGPUContext *s = avctx->priv;
    int64_t end = t + s->future + 1;
    int64_t u = FFMAX(s->next_clear[i], t);

    for (; u < end; u++) {
        for (int c = 0; c < s->dn.layout.nb_components; c++) {
            int slot = acc_slot(s, u), err;

            if (!ff_denoise_opencl_selected(&s->dn, c))
                continue;
            if ((err = zero_slot(avctx, s, s->num[c], c, slot)) < 0 ||
                (err = zero_slot(avctx, s, s->weights[c], c, slot)) < 0)
                return err;
        }
    }
    s->next_clear[i] = end;
    return 0;
}

/* The distance between the three channels' rings of component c where the
 * rings hold RGB bytes and the basic estimates' opponent channels as bytes
 * (denoise_ring_at(), denoise_basic_at()), else 0. */
static cl_uint ring_stride(const BM3DGPUContext *s, int c)
{
    const DenoiseComponent *comp = &s->dn.layout.comp[c];

    return s->dn.ring_rgb ? (cl_uint)s->dn.fq.ring * comp->width * comp->height : 0;
}

/* The plane of slot 'slot' of component c's ring, counted in planes from
 * the start of its buffer: with rings of RGB bytes, components 1 and 2 have
 * their rings after component 0's, in the same buffer. */
static int ring_plane(const BM3DGPUContext *s, int c, int slot)
{
    return slot + (s->dn.ring_rgb ? c * s->dn.fq.ring : 0);
}

/* Step i's search of the groups of component c on the ring 'guide', in the
 * band of grid rows from gy_first. */
static int search_step(AVFilterContext *avctx, int c, int i, cl_mem guide,
                       const DenoiseWindow *win, int gy_first)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c][i];
    int stage = i ? STAGE_SEARCH2 : STAGE_SEARCH1;
    int nb_future = win->nb_frames - 1 - win->nb_past;
    int radius1 = s->par[i].range / 2, radius2 = s->par[i].prange / 2;
    int gy_end = ff_denoise_opencl_band_end(ds, gy_first);
    cl_uint stride = ring_stride(s, c);
    /* RGB's basic estimates are read otherwise than its frames */
    cl_kernel kernel = i && s->dn.ring_rgb ? s->kernel_vbm3d_search_basic :
                                          s->kernel_vbm3d_search;
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(guide), DENOISE_ARG(stride), DENOISE_ARG(ds->width),
        DENOISE_ARG(ds->height),
        DENOISE_ARG(win->ring), DENOISE_ARG(win->ref_slot),
        DENOISE_ARG(win->nb_past), DENOISE_ARG(nb_future),
        DENOISE_ARG(ds->step), DENOISE_ARG(ds->nx), DENOISE_ARG(gy_end),
        DENOISE_ARG(gy_first), DENOISE_ARG(radius1), DENOISE_ARG(radius2),
        DENOISE_ARG(s->positions[c]), DENOISE_ARG(s->distances[c]),
    };

    if (!s->video)
        return ff_denoise_opencl_search(avctx, &s->dn, ds, guide,
                                        &DENOISE_CHANNELS_SINGLE, win, 1,
                                        gy_first, s->positions[c],
                                        s->distances[c], stage);
    /* work-groups of 16x4 reference blocks: on the H100, 2 % faster than
     * 16x8 (more work-groups, so the SMs end together) and than 8x8, 32x2
     * or 64x1 (their windows share less of the cache) */
    return ff_denoise_opencl_run(avctx, &s->dn, kernel, args,
                                 FF_ARRAY_ELEMS(args), ds->nx,
                                 gy_end - gy_first, 16, 4, stage);
}

/* The estimate that step i summed in slot 'slot' of component c's
 * accumulators (num / den, den from the patch weights), into slot dst_slot
 * of the ring dst; the basic estimate rounded to integers where round_basic
 * says, and rounded into bytes where the basic ring holds them (the
 * opponent channels U and V of RGB stored plus 128). */
static int normalise(AVFilterContext *avctx, int c, int i, int slot,
                     cl_mem dst, int dst_slot)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    int to_bytes = s->ring_bytes && dst == s->basic[c];
    cl_uint samples = comp->width * comp->height;
    cl_uint src_offset = slot * samples;
    cl_uint dst_offset = (to_bytes ? ring_plane(s, c, dst_slot) : dst_slot) *
                         samples;
    /* bm3d_normalise: rounding or not; bm3d_normalise_u8: the lowest value */
    cl_int last = to_bytes ? (s->dn.ring_rgb && c ? -128 : 0) :
                  i == 0 && s->round_basic;
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(s->num[c]), DENOISE_ARG(s->weights[c]),
        DENOISE_ARG(src_offset), DENOISE_ARG(s->kaiser), DENOISE_ARG(dst),
        DENOISE_ARG(dst_offset), DENOISE_ARG(comp->width),
        DENOISE_ARG(comp->height), DENOISE_ARG(last),
    };
    cl_kernel kernel = to_bytes ? s->kernel_bm3d_normalise_u8 :
                                  s->kernel_bm3d_normalise;

    return ff_denoise_opencl_run(avctx, &s->dn, kernel, args,
                                 FF_ARRAY_ELEMS(args), comp->width,
                                 (comp->height + NORMALISE_ROWS - 1) /
                                 NORMALISE_ROWS, 0, 0, STAGE_NORMALISE);
}

/*
 * Step i on component c with the groups of component g in the band of grid
 * rows from gy_first: hard thresholding of its noisy ring, or Wiener
 * filtering with its basic estimates as the oracle, aggregated into step
 * i's accumulators.
 */
static int filter_step(AVFilterContext *avctx, int c, int i, int g,
                       const DenoiseWindow *win, int gy_first)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    const DenoiseSearch *ds = &s->search[g][i];
    const BM3DStep *p = &s->par[i];
    cl_uint plane_size = comp->width * comp->height;
    /* the patches in frames from the reference one on are aggregated, into
     * the accumulator planes from the reference frame's */
    cl_int nb_aggregated = win->nb_frames - win->nb_past;
    cl_int acc_ref = acc_slot(s, win->t);
    float sigma = channel_sigma(s, c);
    float threshold = s->hdthr * sigma;
    /* the noise of the Wiener step: sigma^2 mu2 */
    float mu2 = s->mu2 >= 0.0f ? s->mu2 : preset_filters[s->preset].mu2;
    float noise = i ? sigma * sqrtf(mu2) : sigma;
    cl_uint stride = ring_stride(s, c);
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(s->src[c]), DENOISE_ARG(s->basic[c]),
        DENOISE_ARG(comp->width), DENOISE_ARG(ds->nx),
        DENOISE_ARG(s->positions[g]), DENOISE_ARG(s->distances[g]),
        DENOISE_ARG(p->group), DENOISE_ARG(p->thmse), DENOISE_ARG(noise),
        DENOISE_ARG(threshold), DENOISE_ARG(s->kaiser),
        DENOISE_ARG(s->num[c]), DENOISE_ARG(s->weights[c]),
        DENOISE_ARG(plane_size),
        DENOISE_ARG(win->ring), DENOISE_ARG(win->ref_slot),
        DENOISE_ARG(nb_aggregated), DENOISE_ARG(acc_ref),
        DENOISE_ARG(s->acc_ring), DENOISE_ARG(stride), DENOISE_ARG(c),
    };

    /* one work-group of BLOCK * BLOCK work-items per group */
    return ff_denoise_opencl_run(avctx, &s->dn, i ? s->kernel_bm3d_filter_wiener :
                                                    s->kernel_bm3d_filter_ht,
                                 args, FF_ARRAY_ELEMS(args),
                                 (size_t)ds->nx * BLOCK * BLOCK,
                                 ff_denoise_opencl_band_end(ds, gy_first) - gy_first,
                                 BLOCK * BLOCK, 1,
                                 i ? STAGE_FILTER2 : STAGE_FILTER1);
}

/*
 * Step i of the groups of component c0 and the components grouped with it
 * (n of them), band by band: the search of a band, then its filtering.
 */
static int run_step_groups(AVFilterContext *avctx, int i, int c0, int n,
                           const DenoiseWindow *win)
{
    BM3DGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c0][i];

    for (int gy = 0; gy < ds->ny; gy += ds->band) {
        int err = search_step(avctx, c0, i, i ? s->basic[c0] : s->src[c0],
                              win, gy);
        if (err < 0)
            return err;
        for (int c = c0; c < c0 + n; c++) {
            err = filter_step(avctx, c, i, c0, win, gy);
            if (err < 0)
                return err;
        }
    }
    return 0;
}

/* Step i for reference frame t on every selected component. */
static int run_step(AVFilterContext *avctx, int i, int64_t t, int64_t last)
{
    BM3DGPUContext *s = avctx->priv;
    DenoiseWindow win = ff_denoise_opencl_window(&s->dn.fq, t, last, s->past,
                                                 s->future);
    int err = 0;

    /* the noise of frame t, when estimated */
    ff_denoise_opencl_use_frame(&s->dn, t);
    err = clear_accumulators(avctx, i, t);
    if (err < 0)
        return err;
    for (int c0 = 0; c0 < s->dn.layout.nb_components; c0++) {
        int n = group_members(s, c0);

        if (!n)
            continue;
        err = run_step_groups(avctx, i, c0, n, &win);
        if (err < 0)
            return err;
        /* the estimates of frame t are complete: the final one into the
         * output planes, the basic one into its ring (with estim=basic,
         * finish_frame() normalises it into the output planes instead) */
        if (i == 0 && s->estim == ESTIMATE_BASIC)
            continue;
        for (int c = c0; c < c0 + n; c++) {
            err = normalise(avctx, c, i, acc_slot(s, t),
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
    int err;

    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        if (!ff_denoise_opencl_selected(&s->dn, c))
            continue;
        if (s->estim == ESTIMATE_BASIC) {
            err = normalise(avctx, c, 0, acc_slot(s, t), s->dst[c], 0);
            if (err < 0)
                return err;
        }
        *mask |= 1 << c;
    }
    if (s->joint && s->dn.layout.is_rgb)
        return ff_denoise_opencl_opponent(avctx, &s->dn, s->dst, 0, 1);
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

/* Whether the timeline enables one of the frames t + 1 .. t + future (up to
 * 'last'), whose final estimates gather frame t's second-step groups. */
static int later_frame_enabled(const BM3DGPUContext *s, int64_t t, int64_t last)
{
    for (int64_t u = t + 1; u <= FFMIN(last, t + s->future); u++)
        if (ff_denoise_opencl_frame_enabled(&s->dn.fq, u))
            return 1;
    return 0;
}

/*
 * Frame t passes through (timeline): the later frames still need its basic
 * estimate, and those of its window, unless every window is one frame; and
 * the enabled frames among its future frames its second-step groups, so
 * that they come out as without the timeline.
 */
static int skip_frame(AVFilterContext *avctx, int64_t t, int64_t last)
{
    BM3DGPUContext *s = avctx->priv;
    int err;

    if (!s->past && !s->future) {
        s->next_basic = t + 1;
        return 0;
    }
    err = run_first_steps(avctx, last_basic_needed(s, t, last), last);
    if (err >= 0 && s->estim != ESTIMATE_BASIC && later_frame_enabled(s, t, last))
        err = run_step(avctx, 1, t, last);
    return err;
}

/* A new frame in its slot: its planes (opponent channels for RGB grouped
 * jointly, unless the rings hold its RGB bytes: channel c's ring is then c
 * rings into the buffer). */
static int load_frame(AVFilterContext *avctx, const AVFrame *in, int slot)
{
    BM3DGPUContext *s = avctx->priv;
    int slots[DENOISE_MAX_COMPONENTS];

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++)
        slots[c] = ring_plane(s, c, slot);
    return ff_denoise_opencl_load_frame(avctx, &s->dn, in, s->src, slots,
                                        s->joint && s->dn.layout.is_rgb);
}

static const DenoiseQueueOps bm3d_queue_ops = {
    .init    = bm3d_gpu_init,
    .load    = load_frame,
    .denoise = denoise_frame,
    .skip    = skip_frame,
};

static int bm3d_gpu_config_input(AVFilterLink *inlink)
{
    BM3DGPUContext *s = inlink->dst->priv;

    return ff_denoise_opencl_config_input(inlink, &s->dn);
}

static int bm3d_gpu_config_output(AVFilterLink *outlink)
{
    BM3DGPUContext *s = outlink->src->priv;

    return ff_denoise_opencl_config_output(outlink, &s->dn, &bm3d_queue_ops);
}

static int bm3d_gpu_process_command(AVFilterContext *avctx, const char *cmd,
                                    const char *arg, char *res, int res_len,
                                    int flags)
{
    BM3DGPUContext *s = avctx->priv;

    return ff_denoise_opencl_process_command(avctx, &s->dn, cmd, arg, res,
                                             res_len, flags);
}

static int bm3d_gpu_activate(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;

    return ff_denoise_opencl_activate(avctx, &s->dn, s->dst, &bm3d_queue_ops);
}

/* Filter creation: bm3d_gpu (video = 0) or vbm3d_gpu (video = 1). */
static av_cold int init_filter(AVFilterContext *avctx, int video)
{
    BM3DGPUContext *s = avctx->priv;
    int err;

    if (video) {
        s->video  = 1;
        s->preset = PRESET_VIDEO;
        s->dn.memory_hint = "A shorter window (past, future), causal mode "
                            "(causal=1) or the basic estimate alone "
                            "(estim=basic) needs less device memory.";
    }
    err = resolve_parameters(avctx);
    if (err < 0)
        return err;
    return ff_denoise_opencl_init_filter(avctx, &s->dn);
}

static av_cold void bm3d_gpu_uninit(AVFilterContext *avctx)
{
    BM3DGPUContext *s = avctx->priv;
    cl_int cle;

    ff_denoise_opencl_uninit(avctx, &s->dn);
    CL_RELEASE_KERNEL(s->kernel_bm3d_filter_ht);
    CL_RELEASE_KERNEL(s->kernel_bm3d_filter_wiener);
    CL_RELEASE_KERNEL(s->kernel_bm3d_normalise);
    CL_RELEASE_KERNEL(s->kernel_bm3d_normalise_u8);
    CL_RELEASE_KERNEL(s->kernel_vbm3d_search);
    CL_RELEASE_KERNEL(s->kernel_vbm3d_search_basic);
    CL_RELEASE_MEMORY(s->kaiser);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        CL_RELEASE_MEMORY(s->src[c]);
        CL_RELEASE_MEMORY(s->basic[c]);
        CL_RELEASE_MEMORY(s->dst[c]);
        CL_RELEASE_MEMORY(s->positions[c]);
        CL_RELEASE_MEMORY(s->distances[c]);
        CL_RELEASE_MEMORY(s->num[c]);
        CL_RELEASE_MEMORY(s->weights[c]);
    }
    ff_opencl_filter_uninit(avctx);
}

#define OFFSET(x) offsetof(BM3DGPUContext, x)
#define FLAGS  (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)
#define RFLAGS (FLAGS | AV_OPT_FLAG_RUNTIME_PARAM)

/*
 * The block matching options of the two steps; the strings say where their
 * defaults come from (0 or -1 in the option: the preset's value).
 */
#define BM3D_STEP_OPTIONS(STEP, GROUP, RANGE, THMSE, STEP2, GROUP2, RANGE2, THMSE2)                  \
    { "bstep", "step of the grid of reference blocks, first step (0: " STEP ")",                    \
      OFFSET(opt[0].step), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 8, FLAGS },                            \
    { "group", "largest group, a power of two, first step (0: " GROUP ")",                          \
      OFFSET(opt[0].group), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 32, FLAGS },                          \
    { "range", "search window size, first step (0: " RANGE ")",                                     \
      OFFSET(opt[0].range), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },                          \
    { "thmse", "largest mean squared difference of a matching block, first step (-1: " THMSE ")",   \
      OFFSET(opt[0].thmse), AV_OPT_TYPE_FLOAT, { .dbl = -1 }, -1, 65025, FLAGS },                   \
    { "bstep2", "step of the grid of reference blocks, second step (0: " STEP2 ")",                 \
      OFFSET(opt[1].step), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 8, FLAGS },                            \
    { "group2", "largest group, a power of two, second step (0: " GROUP2 ")",                       \
      OFFSET(opt[1].group), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 32, FLAGS },                          \
    { "range2", "search window size, second step (0: " RANGE2 ")",                                  \
      OFFSET(opt[1].range), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },                          \
    { "thmse2", "largest mean squared difference of a matching block, second step (-1: " THMSE2 ")", \
      OFFSET(opt[1].thmse), AV_OPT_TYPE_FLOAT, { .dbl = -1 }, -1, 65025, FLAGS }

/* The denoising options of both filters, before their block options; the
 * strings say where the transforms' and mu2's defaults come from. */
#define BM3D_COMMON_OPTIONS(TRANSFORM, TRANSFORM1D, MU2)                                            \
    DENOISE_OPENCL_SIGMA_OPTIONS(BM3DGPUContext, RFLAGS),                                           \
    { "hdthr", "hard threshold of the first step, in units of sigma",                              \
      OFFSET(hdthr), AV_OPT_TYPE_FLOAT, { .dbl = 2.7 }, 0, 100, RFLAGS },                           \
    { "mu2", "Wiener regularisation of the second step, in units of sigma^2 (-1: " MU2 ")",         \
      OFFSET(mu2), AV_OPT_TYPE_FLOAT, { .dbl = -1 }, -1, 100, RFLAGS },                             \
    { "kaiser", "beta of the Kaiser window of the aggregation",                                     \
      OFFSET(beta), AV_OPT_TYPE_FLOAT, { .dbl = 2.0 }, 0, KAISER_MAX, FLAGS },                      \
    { "transform", "2-D transform of the first step, the second uses the DCT (-1: " TRANSFORM ")",  \
      OFFSET(transform), AV_OPT_TYPE_INT, { .i64 = TRANSFORM_PRESET }, TRANSFORM_PRESET, TRANSFORM_DCT, FLAGS, .unit = "transform" }, \
        { "dct",  "discrete cosine transform",     0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM_DCT },  0, 0, FLAGS, .unit = "transform" }, \
        { "bior", "Bior1.5 wavelet, three levels", 0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM_BIOR }, 0, 0, FLAGS, .unit = "transform" }, \
    { "transform1d", "1-D transform along the groups, both steps (-1: " TRANSFORM1D ")",            \
      OFFSET(haar), AV_OPT_TYPE_INT, { .i64 = TRANSFORM1D_PRESET }, TRANSFORM1D_PRESET, TRANSFORM1D_HAAR, FLAGS, .unit = "transform1d" }, \
        { "hadamard", "Walsh-Hadamard transform",     0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM1D_HADAMARD }, 0, 0, FLAGS, .unit = "transform1d" }, \
        { "haar",     "Haar wavelet, all levels",     0, AV_OPT_TYPE_CONST, { .i64 = TRANSFORM1D_HAAR },     0, 0, FLAGS, .unit = "transform1d" }, \
    { "estim", "estimate to output",                                                                \
      OFFSET(estim), AV_OPT_TYPE_INT, { .i64 = ESTIMATE_FINAL }, ESTIMATE_FINAL, ESTIMATE_BASIC, FLAGS, .unit = "estim" }, \
        { "final", "both steps: hard threshold, then Wiener filtering", 0, AV_OPT_TYPE_CONST, { .i64 = ESTIMATE_FINAL }, 0, 0, FLAGS, .unit = "estim" }, \
        { "basic", "the first step only",                               0, AV_OPT_TYPE_CONST, { .i64 = ESTIMATE_BASIC }, 0, 0, FLAGS, .unit = "estim" }, \
    DENOISE_OPENCL_PLANES_OPTION(BM3DGPUContext, FLAGS),                                            \
    { "color", "grouping of the channels of 4:4:4 and RGB frames",                                  \
      OFFSET(color), AV_OPT_TYPE_INT, { .i64 = COLOR_JOINT }, COLOR_JOINT, COLOR_PLANES, FLAGS, .unit = "color" }, \
        { "joint",  "groups found on luma (RGB: opponent colours) serve all three channels", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_JOINT },  0, 0, FLAGS, .unit = "color" }, \
        { "planes", "each plane grouped on its own", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_PLANES }, 0, 0, FLAGS, .unit = "color" }

/* The implementation switches of both filters, for testing and tuning. */
#define BM3D_TUNING_OPTIONS                                                                          \
    { "atomics", "integer atomics of the deterministic accumulation, for testing (same output)",   \
      OFFSET(atomics), AV_OPT_TYPE_INT, { .i64 = ATOMICS_AUTO }, ATOMICS_AUTO, ATOMICS_INT32, FLAGS, .unit = "atomics" }, \
        { "auto",  "64-bit where the device has them, else pairs of 32-bit", 0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_AUTO },  0, 0, FLAGS, .unit = "atomics" }, \
        { "int64", "64-bit integer atomics",                                 0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_INT64 }, 0, 0, FLAGS, .unit = "atomics" }, \
        { "int32", "pairs of 32-bit integer atomics",                        0, AV_OPT_TYPE_CONST, { .i64 = ATOMICS_INT32 }, 0, 0, FLAGS, .unit = "atomics" }, \
    DENOISE_OPENCL_BAND_OPTION(BM3DGPUContext, FLAGS),                                              \
    DENOISE_OPENCL_DEVICE_OPTION(BM3DGPUContext, FLAGS),                                            \
    DENOISE_OPENCL_PROFILE_OPTION(BM3DGPUContext, FLAGS)

static const AVFilterPad bm3d_gpu_inputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &bm3d_gpu_config_input,
    },
};

static const AVFilterPad bm3d_gpu_outputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &bm3d_gpu_config_output,
    },
};

#if CONFIG_BM3D_GPU_FILTER
static av_cold int bm3d_gpu_init_filter(AVFilterContext *avctx)
{
    return init_filter(avctx, 0);
}

static const AVOption bm3d_gpu_options[] = {
    BM3D_COMMON_OPTIONS("preset's, fast dct, ref bior", "haar", "fast 1, ref 0.9"),
    { "preset", "parameter set",
      OFFSET(preset), AV_OPT_TYPE_INT, { .i64 = PRESET_FAST }, PRESET_FAST, PRESET_REF, FLAGS, .unit = "preset" },
        { "fast", "step 4, 21x21 then 17x17 window, groups of 16, DCT, Haar", 0, AV_OPT_TYPE_CONST, { .i64 = PRESET_FAST }, 0, 0, FLAGS, .unit = "preset" },
        { "ref",  "Dabov et al.: step 3, 39x39 window, groups of 16 then 32, Bior1.5, Haar, mu2 0.9", 0, AV_OPT_TYPE_CONST, { .i64 = PRESET_REF }, 0, 0, FLAGS, .unit = "preset" },
    BM3D_STEP_OPTIONS("preset's, fast 4, ref 3", "preset's, fast 16, ref 16",
                      "preset's, fast 21, ref 39", "preset's, 3000",
                      "preset's, fast 4, ref 3", "preset's, fast 16, ref 32",
                      "preset's, fast 17, ref 39", "preset's, 400"),
    DENOISE_OPENCL_SEARCH_OPTION(BM3DGPUContext, FLAGS),
    BM3D_TUNING_OPTIONS,
    { NULL }
};

AVFILTER_DEFINE_CLASS(bm3d_gpu);

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
    FILTER_QUERY_FUNC2(&ff_denoise_opencl_query_formats),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &bm3d_gpu_process_command,
};
#endif

#if CONFIG_VBM3D_GPU_FILTER
static av_cold int vbm3d_gpu_init_filter(AVFilterContext *avctx)
{
    return init_filter(avctx, 1);
}

static const AVOption vbm3d_gpu_options[] = {
    BM3D_COMMON_OPTIONS("dct", "hadamard", "1"),
    BM3D_STEP_OPTIONS("6", "8", "7", "2500", "4", "8", "7", "400"),
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
    BM3D_TUNING_OPTIONS,
    { NULL }
};

AVFILTER_DEFINE_CLASS(vbm3d_gpu);

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
    FILTER_QUERY_FUNC2(&ff_denoise_opencl_query_formats),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &bm3d_gpu_process_command,
};
#endif
