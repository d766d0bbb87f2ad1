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
 * Improved patch-wise NL-means on OpenCL frames, after A. Davy and
 * T. Ehret, "GPU acceleration of NL-means, BM3D and VBM3D", J. Real-Time
 * Image Processing, 2020: the n most similar patches of a search window,
 * bias-corrected weights, flat groups replaced by their mean, and patch-wise
 * aggregation with tent weights on a grid of step s.
 */

#include "libavutil/bprint.h"
#include "libavutil/common.h"
#include "libavutil/hwcontext.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"

#include "avfilter.h"
#include "denoise_opencl.h"
#include "filters.h"
#include "opencl.h"
#include "opencl_source.h"
#include "video.h"

enum NLMeansStage {
    STAGE_IO,
    STAGE_SEARCH,
    STAGE_WEIGHTS,
    STAGE_AGGREGATE,
};

typedef struct NLMeansGPUContext {
    OpenCLFilterContext ocf;
    DenoiseOpenCLContext dn;

    /* options */
    float sigma;
    float csigma;
    float h;
    int   patch_size;
    int   patch_size_uv;
    int   research_size;
    int   research_size_uv;
    int   step;
    int   nb_neighbors;
    int   planes;
    float flat;
    int   search_mode;

    DenoiseLayout layout;
    DenoiseSearch search[DENOISE_MAX_COMPONENTS];
    cl_kernel kernel_weights;
    cl_kernel kernel_aggregate;
    cl_mem src[DENOISE_MAX_COMPONENTS];
    cl_mem dst[DENOISE_MAX_COMPONENTS];
    cl_mem positions[DENOISE_MAX_COMPONENTS];
    cl_mem weights[DENOISE_MAX_COMPONENTS];
    cl_mem flat_means[DENOISE_MAX_COMPONENTS];
} NLMeansGPUContext;

static int component_selected(const NLMeansGPUContext *s, int c)
{
    return c < s->layout.nb_components && (s->planes & (1 << c));
}

static int is_chroma(const NLMeansGPUContext *s, int c)
{
    return !s->layout.is_rgb && (c == 1 || c == 2);
}

static void set_plane_params(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    int chroma   = is_chroma(s, c);
    int patch    = chroma && s->patch_size_uv    ? s->patch_size_uv    : s->patch_size;
    int research = chroma && s->research_size_uv ? s->research_size_uv : s->research_size;
    int reduced  = FFMIN3(patch, comp->width, comp->height);

    if (reduced < patch)
        av_log(avctx, AV_LOG_VERBOSE, "Plane %d is %dx%d: patch size reduced "
               "from %d to %d.\n", c, comp->width, comp->height, patch, reduced);
    ff_denoise_search_init(avctx, &s->dn, &s->search[c], comp->width,
                           comp->height, reduced, FFMIN(s->step, reduced),
                           research / 2, s->search_mode);
}

static int alloc_plane_buffers(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const DenoiseSearch *ds = &s->search[c];
    size_t samples = (size_t)comp->width * comp->height;
    size_t refs    = (size_t)ds->nx * ds->ny;

    s->src[c]        = ff_denoise_opencl_alloc(avctx, samples * sizeof(cl_float));
    s->dst[c]        = ff_denoise_opencl_alloc(avctx, samples * sizeof(cl_float));
    s->positions[c]  = ff_denoise_opencl_alloc(avctx, refs * s->nb_neighbors * sizeof(cl_uint));
    s->weights[c]    = ff_denoise_opencl_alloc(avctx, refs * s->nb_neighbors * sizeof(cl_float));
    s->flat_means[c] = ff_denoise_opencl_alloc(avctx, refs * sizeof(cl_float));
    if (!s->src[c] || !s->dst[c] || !s->positions[c] || !s->weights[c] ||
        !s->flat_means[c])
        return AVERROR(ENOMEM);
    return 0;
}

static int nlmeans_gpu_init(AVFilterContext *avctx, const AVFrame *frame)
{
    NLMeansGPUContext *s = avctx->priv;
    AVHWFramesContext *frames = (AVHWFramesContext *)frame->hw_frames_ctx->data;
    const char *sources[] = { ff_source_nlmeans_gpu_cl };
    AVBPrint defines;
    cl_int cle;
    int err;

    err = ff_denoise_opencl_get_layout(avctx, frames->sw_format, frame->width,
                                       frame->height, &s->layout);
    if (err < 0)
        return err;
    /* neighbour positions are 32-bit sample indices */
    if ((uint64_t)frame->width * frame->height > UINT32_MAX) {
        av_log(avctx, AV_LOG_ERROR, "Frames of %dx%d are too large.\n",
               frame->width, frame->height);
        return AVERROR(EINVAL);
    }

    av_bprint_init(&defines, 0, AV_BPRINT_SIZE_AUTOMATIC);
    av_bprintf(&defines, "#define NB_NEIGHBORS %d\n", s->nb_neighbors);
    if (!av_bprint_is_complete(&defines)) {
        av_bprint_finalize(&defines, NULL);
        return AVERROR(ENOMEM);
    }
    s->dn.stage_names[STAGE_IO]        = "load/store";
    s->dn.stage_names[STAGE_SEARCH]    = "search";
    s->dn.stage_names[STAGE_WEIGHTS]   = "weights";
    s->dn.stage_names[STAGE_AGGREGATE] = "aggregate";
    err = ff_denoise_opencl_init(avctx, &s->dn, defines.str, sources,
                                 FF_ARRAY_ELEMS(sources));
    av_bprint_finalize(&defines, NULL);
    if (err < 0)
        return err;

    s->kernel_weights = clCreateKernel(s->ocf.program, "nlmeans_weights", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel nlmeans_weights: %d.\n", cle);
    s->kernel_aggregate = clCreateKernel(s->ocf.program, "nlmeans_aggregate", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel nlmeans_aggregate: %d.\n", cle);

    for (int c = 0; c < s->layout.nb_components; c++) {
        if (!component_selected(s, c))
            continue;
        set_plane_params(avctx, c);
        err = alloc_plane_buffers(avctx, c);
        if (err < 0)
            goto fail;
    }
    return 0;

fail:
    return err;
}

/* Weights and flat test of every group, from the search's distances. */
static int compute_weights(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c];
    cl_kernel k  = s->kernel_weights;
    float sigma  = is_chroma(s, c) && s->csigma >= 0 ? s->csigma : s->sigma;
    float h      = s->h > 0 ? s->h : sigma;
    float bias   = 2.0f * sigma * sigma;
    float inv_h2 = h > 0 ? 1.0f / (h * h) : INFINITY;
    float flat   = s->flat > 0 ? s->flat * sigma * sigma : -1.0f;
    cl_int cle;
    int err = 0;

    CL_SET_KERNEL_ARG(k,  0, cl_mem,   &s->src[c]);
    CL_SET_KERNEL_ARG(k,  1, cl_int,   &ds->width);
    CL_SET_KERNEL_ARG(k,  2, cl_int,   &ds->patch);
    CL_SET_KERNEL_ARG(k,  3, cl_int,   &ds->nx);
    CL_SET_KERNEL_ARG(k,  4, cl_int,   &ds->ny);
    CL_SET_KERNEL_ARG(k,  5, cl_float, &bias);
    CL_SET_KERNEL_ARG(k,  6, cl_float, &inv_h2);
    CL_SET_KERNEL_ARG(k,  7, cl_float, &flat);
    CL_SET_KERNEL_ARG(k,  8, cl_mem,   &s->positions[c]);
    CL_SET_KERNEL_ARG(k,  9, cl_mem,   &s->weights[c]);
    CL_SET_KERNEL_ARG(k, 10, cl_mem,   &s->flat_means[c]);
    return ff_denoise_opencl_run(avctx, &s->dn, k, ds->nx, ds->ny, 0, 0,
                                 STAGE_WEIGHTS);
fail:
    return err;
}

static int denoise_component(AVFilterContext *avctx, const AVFrame *in, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const DenoiseSearch *ds = &s->search[c];
    cl_int cle;
    int err;

    err = ff_denoise_opencl_load(avctx, &s->dn, &s->layout, in, c, s->src[c], 0);
    if (err < 0)
        return err;

    err = ff_denoise_search_run(avctx, &s->dn, ds, s->src[c],
                                &DENOISE_WINDOW_SINGLE, 0, s->positions[c],
                                s->weights[c], STAGE_SEARCH);
    if (err < 0)
        return err;
    err = compute_weights(avctx, c);
    if (err < 0)
        return err;

    CL_SET_KERNEL_ARG(s->kernel_aggregate,  0, cl_mem, &s->src[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  1, cl_mem, &s->dst[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  2, cl_int, &comp->width);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  3, cl_int, &comp->height);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  4, cl_int, &ds->patch);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  5, cl_int, &ds->step);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  6, cl_int, &ds->nx);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  7, cl_int, &ds->ny);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  8, cl_mem, &s->positions[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  9, cl_mem, &s->weights[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate, 10, cl_mem, &s->flat_means[c]);
    return ff_denoise_opencl_run(avctx, &s->dn, s->kernel_aggregate,
                                 comp->width, comp->height, 0, 0, STAGE_AGGREGATE);
fail:
    return err;
}

/* Every selected component, each on its own. */
static int denoise_frame(AVFilterContext *avctx, const AVFrame *in, int *mask)
{
    NLMeansGPUContext *s = avctx->priv;

    for (int c = 0; c < s->layout.nb_components; c++) {
        int err;

        if (!component_selected(s, c))
            continue;
        err = denoise_component(avctx, in, c);
        if (err < 0)
            return err;
        *mask |= 1 << c;
    }
    return 0;
}

static int nlmeans_gpu_filter_frame(AVFilterLink *inlink, AVFrame *in)
{
    NLMeansGPUContext *s = inlink->dst->priv;

    return ff_denoise_opencl_filter_frame(inlink, in, &s->dn, &s->layout, s->dst,
                                          nlmeans_gpu_init, denoise_frame);
}

static av_cold int nlmeans_gpu_init_filter(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;

    if (s->step > s->patch_size) {
        av_log(avctx, AV_LOG_ERROR, "step (%d) must not exceed the patch size "
               "p (%d): some samples would not be covered by any patch.\n",
               s->step, s->patch_size);
        return AVERROR(EINVAL);
    }
    if (s->patch_size_uv && s->step > s->patch_size_uv) {
        av_log(avctx, AV_LOG_ERROR, "step (%d) must not exceed the chroma patch "
               "size pc (%d).\n", s->step, s->patch_size_uv);
        return AVERROR(EINVAL);
    }
    if (!(s->planes & 0xf)) {
        av_log(avctx, AV_LOG_WARNING, "No plane selected: frames pass through.\n");
    }
    return ff_opencl_filter_init(avctx);
}

static av_cold void nlmeans_gpu_uninit(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;
    cl_int cle;

    ff_denoise_opencl_uninit(avctx, &s->dn);
    CL_RELEASE_KERNEL(s->kernel_weights);
    CL_RELEASE_KERNEL(s->kernel_aggregate);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        CL_RELEASE_MEMORY(s->src[c]);
        CL_RELEASE_MEMORY(s->dst[c]);
        CL_RELEASE_MEMORY(s->positions[c]);
        CL_RELEASE_MEMORY(s->weights[c]);
        CL_RELEASE_MEMORY(s->flat_means[c]);
    }
    ff_opencl_filter_uninit(avctx);
}

#define OFFSET(x) offsetof(NLMeansGPUContext, x)
#define FLAGS  (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)
#define RFLAGS (FLAGS | AV_OPT_FLAG_RUNTIME_PARAM)
static const AVOption nlmeans_gpu_options[] = {
    { "sigma", "noise standard deviation, on the 8-bit scale whatever the bit depth",
      OFFSET(sigma), AV_OPT_TYPE_FLOAT, { .dbl = 10.0 }, 0.0, 255.0, RFLAGS },
    { "csigma", "noise standard deviation of the chroma planes (-1: same as sigma)",
      OFFSET(csigma), AV_OPT_TYPE_FLOAT, { .dbl = -1.0 }, -1.0, 255.0, RFLAGS },
    { "h", "filtering strength (0: equal to sigma)",
      OFFSET(h), AV_OPT_TYPE_FLOAT, { .dbl = 0.0 }, 0.0, 255.0, RFLAGS },
    { "p", "patch size",
      OFFSET(patch_size), AV_OPT_TYPE_INT, { .i64 = 8 }, 1, 32, FLAGS },
    { "pc", "patch size for chroma planes (0: same as p)",
      OFFSET(patch_size_uv), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 32, FLAGS },
    { "r", "research window size",
      OFFSET(research_size), AV_OPT_TYPE_INT, { .i64 = 21 }, 1, 99, FLAGS },
    { "rc", "research window size for chroma planes (0: same as r)",
      OFFSET(research_size_uv), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 99, FLAGS },
    { "step", "step of the grid of reference patches",
      OFFSET(step), AV_OPT_TYPE_INT, { .i64 = 4 }, 1, 32, FLAGS },
    { "n", "number of most similar patches averaged",
      OFFSET(nb_neighbors), AV_OPT_TYPE_INT, { .i64 = 16 }, 1, 32, FLAGS },
    { "planes", "bit mask of the planes to filter",
      OFFSET(planes), AV_OPT_TYPE_INT, { .i64 = 0xf }, 0, 0xf, FLAGS },
    { "flat", "flat-group threshold, in units of sigma^2 (0: disabled)",
      OFFSET(flat), AV_OPT_TYPE_FLOAT, { .dbl = 1.05 }, 0.0, 10.0, RFLAGS },
    { "search", "patch search kernel",
      OFFSET(search_mode), AV_OPT_TYPE_INT, { .i64 = DENOISE_SEARCH_AUTO }, DENOISE_SEARCH_AUTO, DENOISE_SEARCH_DIRECT, FLAGS, .unit = "search" },
        { "auto",   "work-group search on GPUs, per-patch search on CPUs", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_AUTO },   0, 0, FLAGS, .unit = "search" },
        { "tiled",  "work-group search sharing the sums of overlapping patches", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_TILED },  0, 0, FLAGS, .unit = "search" },
        { "direct", "one work-item per reference patch", 0, AV_OPT_TYPE_CONST, { .i64 = DENOISE_SEARCH_DIRECT }, 0, 0, FLAGS, .unit = "search" },
    { "profile", "log the kernel time of each stage for every frame",
      OFFSET(dn.profile), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS },
    { NULL }
};

AVFILTER_DEFINE_CLASS(nlmeans_gpu);

static const AVFilterPad nlmeans_gpu_inputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .filter_frame = &nlmeans_gpu_filter_frame,
        .config_props = &ff_denoise_opencl_config_input,
    },
};

static const AVFilterPad nlmeans_gpu_outputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &ff_opencl_filter_config_output,
    },
};

const FFFilter ff_vf_nlmeans_gpu = {
    .p.name          = "nlmeans_gpu",
    .p.description   = NULL_IF_CONFIG_SMALL("Improved patch-wise non-local means denoiser through OpenCL"),
    .p.priv_class    = &nlmeans_gpu_class,
    .p.flags         = AVFILTER_FLAG_HWDEVICE | AVFILTER_FLAG_SUPPORT_TIMELINE_INTERNAL,
    .priv_size       = sizeof(NLMeansGPUContext),
    .init            = &nlmeans_gpu_init_filter,
    .uninit          = &nlmeans_gpu_uninit,
    FILTER_INPUTS(nlmeans_gpu_inputs),
    FILTER_OUTPUTS(nlmeans_gpu_outputs),
    FILTER_SINGLE_PIXFMT(AV_PIX_FMT_OPENCL),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &ff_filter_process_command,
};
