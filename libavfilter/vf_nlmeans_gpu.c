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
#include "libavutil/mathematics.h"
#include "libavutil/mem.h"
#include "libavutil/opt.h"

#include "avfilter.h"
#include "denoise_opencl.h"
#include "filters.h"
#include "opencl.h"
#include "opencl_source.h"
#include "video.h"

enum NLMeansSearch {
    SEARCH_AUTO,
    SEARCH_TILED,
    SEARCH_DIRECT,
};

enum NLMeansStage {
    STAGE_IO,
    STAGE_SEARCH,
    STAGE_AGGREGATE,
};

#define TILE   16
#define UNROLL 4

typedef struct NLMeansPlaneParams {
    int patch;
    int step;
    int block;          ///< gcd(patch, step): granularity of shared sums
    int radius;
    int nx, ny;         ///< grid of reference patches
    int regular_nx;     ///< reference patches on the regular grid x = gx * step
    int regular_ny;
    int tiled;          ///< use nlmeans_search_tiled for the regular grid
    size_t tile_local[2]; ///< its local buffers, in bytes
} NLMeansPlaneParams;

typedef struct NLMeansGPUContext {
    OpenCLFilterContext ocf;
    DenoiseOpenCLContext dn;

    /* options */
    float sigma;
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

    int initialised;
    DenoiseLayout layout;
    NLMeansPlaneParams params[DENOISE_MAX_COMPONENTS];
    cl_kernel kernel_search;
    cl_kernel kernel_search_tiled;
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

/* Whether the work-group version of the search fits the device. */
static void choose_search_kernel(AVFilterContext *avctx, NLMeansPlaneParams *pp)
{
    NLMeansGPUContext *s = avctx->priv;
    size_t region = (size_t)(TILE - 1) * pp->step + pp->patch;
    size_t local_mem = ff_denoise_opencl_local_mem_size(avctx);
    size_t max_wg = ff_denoise_opencl_max_work_group(avctx, s->kernel_search_tiled);
    cl_device_type type = 0;
    int fits;

    pp->tile_local[0] = region * region * sizeof(cl_float);
    pp->tile_local[1] = UNROLL * (region / pp->block) * region * sizeof(cl_float);
    fits = max_wg >= TILE * TILE &&
           pp->tile_local[0] + pp->tile_local[1] + 1024 <= local_mem;
    /* On CPUs local memory is ordinary memory and barriers are costly: the
     * per-patch search is faster there. */
    clGetDeviceInfo(s->ocf.hwctx->device_id, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    switch (s->search_mode) {
    case SEARCH_TILED:
        pp->tiled = fits;
        if (!fits)
            av_log(avctx, AV_LOG_WARNING, "The work-group search does not fit "
                   "this device for patch %d, step %d: using the per-patch "
                   "search.\n", pp->patch, pp->step);
        break;
    case SEARCH_DIRECT:
        pp->tiled = 0;
        break;
    default:
        pp->tiled = fits && !(type & CL_DEVICE_TYPE_CPU);
    }
    av_log(avctx, AV_LOG_VERBOSE, "patch %d, step %d: %s search.\n", pp->patch,
           pp->step, pp->tiled ? "work-group" : "per-patch");
}

static void set_plane_params(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    NLMeansPlaneParams *pp = &s->params[c];
    int chroma   = is_chroma(s, c);
    int patch    = chroma && s->patch_size_uv    ? s->patch_size_uv    : s->patch_size;
    int research = chroma && s->research_size_uv ? s->research_size_uv : s->research_size;

    pp->patch = FFMIN3(patch, comp->width, comp->height);
    if (pp->patch < patch)
        av_log(avctx, AV_LOG_VERBOSE, "Plane %d is %dx%d: patch size reduced "
               "from %d to %d.\n", c, comp->width, comp->height, patch, pp->patch);
    pp->step   = FFMIN(s->step, pp->patch);
    pp->block  = av_gcd(pp->patch, pp->step);
    pp->radius = research / 2;
    pp->nx     = (comp->width  - pp->patch + pp->step - 1) / pp->step + 1;
    pp->ny     = (comp->height - pp->patch + pp->step - 1) / pp->step + 1;
    pp->regular_nx = (comp->width  - pp->patch) / pp->step + 1;
    pp->regular_ny = (comp->height - pp->patch) / pp->step + 1;
    choose_search_kernel(avctx, pp);
}

static int alloc_plane_buffers(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const NLMeansPlaneParams *pp = &s->params[c];
    size_t samples = (size_t)comp->width * comp->height;
    size_t refs    = (size_t)pp->nx * pp->ny;

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
    av_bprintf(&defines, "#define NLMEANS_TILE %d\n", TILE);
    av_bprintf(&defines, "#define NLMEANS_UNROLL %d\n", UNROLL);
    if (!av_bprint_is_complete(&defines)) {
        av_bprint_finalize(&defines, NULL);
        return AVERROR(ENOMEM);
    }
    s->dn.stage_names[STAGE_IO]        = "load/store";
    s->dn.stage_names[STAGE_SEARCH]    = "search";
    s->dn.stage_names[STAGE_AGGREGATE] = "aggregate";
    err = ff_denoise_opencl_init(avctx, &s->dn, defines.str, sources,
                                 FF_ARRAY_ELEMS(sources));
    av_bprint_finalize(&defines, NULL);
    if (err < 0)
        return err;

    s->kernel_search = clCreateKernel(s->ocf.program, "nlmeans_search", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel nlmeans_search: %d.\n", cle);
    s->kernel_search_tiled = clCreateKernel(s->ocf.program, "nlmeans_search_tiled", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel nlmeans_search_tiled: %d.\n", cle);
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
    s->initialised = 1;
    return 0;

fail:
    return err;
}

/* The common arguments of the two search kernels, then their own. */
static int set_search_args(AVFilterContext *avctx, cl_kernel kernel, int c,
                           int limit_nx, int limit_ny)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const NLMeansPlaneParams *pp = &s->params[c];
    float h      = s->h > 0 ? s->h : s->sigma;
    float bias   = 2.0f * s->sigma * s->sigma;
    float inv_h2 = h > 0 ? 1.0f / (h * h) : INFINITY;
    float flat   = s->flat > 0 ? s->flat * s->sigma * s->sigma : -1.0f;
    cl_int nb_frames = 1, ref_frame = 0;
    cl_int cle;
    int err = 0;

    CL_SET_KERNEL_ARG(kernel,  0, cl_mem,   &s->src[c]);
    CL_SET_KERNEL_ARG(kernel,  1, cl_int,   &comp->width);
    CL_SET_KERNEL_ARG(kernel,  2, cl_int,   &comp->height);
    CL_SET_KERNEL_ARG(kernel,  3, cl_int,   &nb_frames);
    CL_SET_KERNEL_ARG(kernel,  4, cl_int,   &ref_frame);
    CL_SET_KERNEL_ARG(kernel,  5, cl_int,   &pp->patch);
    CL_SET_KERNEL_ARG(kernel,  6, cl_int,   &pp->step);
    CL_SET_KERNEL_ARG(kernel,  7, cl_int,   &pp->block);
    CL_SET_KERNEL_ARG(kernel,  8, cl_int,   &pp->radius);
    CL_SET_KERNEL_ARG(kernel,  9, cl_int,   &pp->nx);
    CL_SET_KERNEL_ARG(kernel, 10, cl_int,   &pp->ny);
    CL_SET_KERNEL_ARG(kernel, 11, cl_int,   &limit_nx);
    CL_SET_KERNEL_ARG(kernel, 12, cl_int,   &limit_ny);
    CL_SET_KERNEL_ARG(kernel, 13, cl_float, &bias);
    CL_SET_KERNEL_ARG(kernel, 14, cl_float, &inv_h2);
    CL_SET_KERNEL_ARG(kernel, 15, cl_float, &flat);
    CL_SET_KERNEL_ARG(kernel, 16, cl_mem,   &s->positions[c]);
    CL_SET_KERNEL_ARG(kernel, 17, cl_mem,   &s->weights[c]);
    CL_SET_KERNEL_ARG(kernel, 18, cl_mem,   &s->flat_means[c]);
fail:
    return err;
}

/*
 * The n best neighbours of every reference patch: the work-group kernel on
 * the regular grid where it fits the device, the per-patch kernel for the
 * rest (the last row and column of the grid, moved to the frame's edge).
 */
static int search(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const NLMeansPlaneParams *pp = &s->params[c];
    cl_int cle;
    int err, skip_nx = 0, skip_ny = 0;

    if (pp->tiled) {
        cl_kernel k = s->kernel_search_tiled;

        err = set_search_args(avctx, k, c, pp->regular_nx, pp->regular_ny);
        if (err < 0)
            return err;
        for (int i = 0; i < 2; i++) {
            cle = clSetKernelArg(k, 19 + i, pp->tile_local[i], NULL);
            CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to set local memory: %d.\n", cle);
        }
        err = ff_denoise_opencl_run(avctx, &s->dn, k, pp->regular_nx, pp->regular_ny,
                                    TILE, TILE, STAGE_SEARCH);
        if (err < 0)
            return err;
        skip_nx = pp->regular_nx;
        skip_ny = pp->regular_ny;
        if (skip_nx == pp->nx && skip_ny == pp->ny)
            return 0;
    }
    err = set_search_args(avctx, s->kernel_search, c, skip_nx, skip_ny);
    if (err < 0)
        return err;
    return ff_denoise_opencl_run(avctx, &s->dn, s->kernel_search, pp->nx, pp->ny,
                                 0, 0, STAGE_SEARCH);
fail:
    return err;
}

static int denoise_component(AVFilterContext *avctx, const AVFrame *in, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->layout.comp[c];
    const NLMeansPlaneParams *pp = &s->params[c];
    cl_int cle;
    int err;

    err = ff_denoise_opencl_load(avctx, &s->dn, &s->layout, in, c, s->src[c]);
    if (err < 0)
        return err;

    err = search(avctx, c);
    if (err < 0)
        return err;

    CL_SET_KERNEL_ARG(s->kernel_aggregate,  0, cl_mem, &s->src[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  1, cl_mem, &s->dst[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  2, cl_int, &comp->width);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  3, cl_int, &comp->height);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  4, cl_int, &pp->patch);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  5, cl_int, &pp->step);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  6, cl_int, &pp->nx);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  7, cl_int, &pp->ny);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  8, cl_mem, &s->positions[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate,  9, cl_mem, &s->weights[c]);
    CL_SET_KERNEL_ARG(s->kernel_aggregate, 10, cl_mem, &s->flat_means[c]);
    return ff_denoise_opencl_run(avctx, &s->dn, s->kernel_aggregate,
                                 comp->width, comp->height, 0, 0, STAGE_AGGREGATE);
fail:
    return err;
}

static int nlmeans_gpu_filter_frame(AVFilterLink *inlink, AVFrame *in)
{
    AVFilterContext *avctx = inlink->dst;
    AVFilterLink *outlink  = avctx->outputs[0];
    NLMeansGPUContext *s   = avctx->priv;
    AVFrame *out = NULL;
    int err = 0, mask = 0;

    if (!in->hw_frames_ctx) {
        err = AVERROR(EINVAL);
        goto fail;
    }
    if (!s->initialised) {
        err = nlmeans_gpu_init(avctx, in);
        if (err < 0)
            goto fail;
    }

    out = ff_get_video_buffer(outlink, outlink->w, outlink->h);
    if (!out) {
        err = AVERROR(ENOMEM);
        goto fail;
    }
    err = av_frame_copy_props(out, in);
    if (err < 0)
        goto fail;

    if (avctx->is_disabled) {
        err = ff_denoise_opencl_copy_frame(avctx, &s->dn, &s->layout, out, in);
    } else {
        for (int c = 0; c < s->layout.nb_components && err >= 0; c++) {
            if (!component_selected(s, c))
                continue;
            err = denoise_component(avctx, in, c);
            mask |= 1 << c;
        }
        if (err >= 0)
            err = ff_denoise_opencl_store(avctx, &s->dn, &s->layout, out, in,
                                          s->dst, mask);
    }
    if (err < 0)
        goto fail;
    err = ff_denoise_opencl_finish(avctx, &s->dn);
    if (err < 0)
        goto fail;

    av_frame_free(&in);
    return ff_filter_frame(outlink, out);

fail:
    if (s->dn.queue)
        clFinish(s->dn.queue);
    av_frame_free(&in);
    av_frame_free(&out);
    return err;
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
    CL_RELEASE_KERNEL(s->kernel_search);
    CL_RELEASE_KERNEL(s->kernel_search_tiled);
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
      OFFSET(search_mode), AV_OPT_TYPE_INT, { .i64 = SEARCH_AUTO }, SEARCH_AUTO, SEARCH_DIRECT, FLAGS, .unit = "search" },
        { "auto",   "work-group search on GPUs, per-patch search on CPUs", 0, AV_OPT_TYPE_CONST, { .i64 = SEARCH_AUTO },   0, 0, FLAGS, .unit = "search" },
        { "tiled",  "work-group search sharing the sums of overlapping patches", 0, AV_OPT_TYPE_CONST, { .i64 = SEARCH_TILED },  0, 0, FLAGS, .unit = "search" },
        { "direct", "one work-item per reference patch", 0, AV_OPT_TYPE_CONST, { .i64 = SEARCH_DIRECT }, 0, 0, FLAGS, .unit = "search" },
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
