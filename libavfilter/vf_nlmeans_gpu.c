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
 * aggregation with tent weights on a grid of step s. Colour as B. Goossens
 * et al., "A GPU-accelerated real-time NLMeans algorithm for denoising
 * color video sequences", 2010: on 4:4:4 and RGB frames one patch distance
 * summed over the three channels, each normalised by its noise variance,
 * so that one set of weights serves all three; and their bisquare
 * weighting kernel as an alternative to the exponential one. RGB frames
 * may instead be turned into opponent colours, each filtered on its own.
 */

#include "libavutil/avassert.h"
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

enum NLMeansColor {
    COLOR_JOINT,
    COLOR_PLANES,
    COLOR_OPPONENT,
    COLOR_AUTO,         ///< opponent for RGB, planes for YUV (best measured)
};

/* as enum NLMeansKernel of nlmeans_gpu.cl */
enum NLMeansKernel {
    KERNEL_EXP,
    KERNEL_BISQUARE,
};

/*
 * h'^2 / h^2 of the bisquare kernel: (1 - x / h'^2)^2 then has the same
 * integral over the excess distance x as exp(-x / h^2), h'^2 / 3 = h^2.
 */
#define BISQUARE_SCALE 3.0f

/*
 * Noise variance added to every channel's when the channels of a joint
 * distance are weighted: that of rounding to 8 bits, so that a channel
 * without noise does not get an infinite weight.
 */
#define ROUNDING_VARIANCE (1.0f / 12.0f)

typedef struct NLMeansGPUContext {
    OpenCLFilterContext ocf;
    DenoiseOpenCLContext dn;

    /* options (sigma, csigma and planes in dn) */
    float h;
    int   patch_size;
    int   patch_size_uv;
    int   research_size;
    int   research_size_uv;
    int   step;
    int   nb_neighbors;
    float flat;
    int   color;
    int   kernel_type;
    int   past;                 ///< frames searched before and after
    int   future;
    int   causal;

    int mode;                   ///< enum NLMeansColor of these frames
    DenoiseSearch search[DENOISE_MAX_COMPONENTS];
    cl_kernel kernel_nlmeans_patch_sums;
    cl_kernel kernel_nlmeans_patch_sums_p8;  ///< for 8x8 patches
    cl_kernel kernel_nlmeans_weights;
    cl_kernel kernel_nlmeans_aggregate;
    cl_kernel kernel_nlmeans_aggregate_8x4; ///< for 8x8 patches on a step of 4
    cl_mem src[DENOISE_MAX_COMPONENTS];     ///< rings of frames (bytes with dn.load_bytes)
    cl_mem dst[DENOISE_MAX_COMPONENTS];
    cl_mem stack;               ///< joint colour or dn.ring_rgb: the rings of the three channels
    /* The components are filtered one after the other, in order on one
     * queue: they share the buffers below, each sized for the largest. */
    cl_mem sums;                ///< patch sums of the planes searched (NULL with a window)
    cl_mem positions;           ///< per reference patch of a band: its neighbours,
    cl_mem weights;             ///< their weights
    cl_mem flat_means;          ///< and the flat means of its channels
} NLMeansGPUContext;

DENOISE_CHECK_CONTEXT(NLMeansGPUContext);

static float component_sigma(const NLMeansGPUContext *s, int c)
{
    return ff_denoise_opencl_sigma(&s->dn, c, s->mode == COLOR_OPPONENT);
}

/*
 * How the channels of these frames are filtered: joint colour needs three
 * filtered components of the same size (4:4:4 or RGB), searched with the
 * same patch size and window; opponent colours need RGB frames.
 */
static int colour_mode(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseLayout *l = &s->dn.layout;

    if (s->color == COLOR_PLANES || (s->color == COLOR_AUTO && !l->is_rgb) ||
        !ff_denoise_opencl_joint_possible(&s->dn))
        return COLOR_PLANES;
    if (s->color == COLOR_OPPONENT || s->color == COLOR_AUTO)
        return l->is_rgb ? COLOR_OPPONENT : COLOR_PLANES;
    /* pc and rc apply to the chroma of YUV frames only */
    if (!l->is_rgb &&
        ((s->patch_size_uv && s->patch_size_uv != s->patch_size) ||
         (s->research_size_uv && s->research_size_uv != s->research_size))) {
        av_log(avctx, AV_LOG_WARNING, "pc or rc differ from p and r: the "
               "channels are filtered one by one (color=planes).\n");
        return COLOR_PLANES;
    }
    return COLOR_JOINT;
}

/*
 * The number of channels searched together for component c: the three with
 * joint colour (from component 0, none for components 1 and 2), otherwise
 * c alone.
 */
static int nb_search_channels(const NLMeansGPUContext *s, int c)
{
    if (s->mode != COLOR_JOINT)
        return 1;
    return c ? 0 : 3;
}

/*
 * The channels searched together for component c, in rings of 'ring'
 * frames. The squared differences of channel i are divided by its noise
 * variance and multiplied by that of channel 0, so that the distance keeps
 * the scale of channel 0's noise, which the weights assume. With rings of
 * RGB bytes, opponent channel c of the three rings.
 */
static void search_channels(const NLMeansGPUContext *s, int c,
                            DenoiseChannels *ch)
{
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    float sigma0 = component_sigma(s, c);

    *ch = DENOISE_CHANNELS_SINGLE;
    if (s->dn.ring_rgb) {
        ch->stride       = s->dn.fq.ring * comp->width * comp->height;
        ch->ring_channel = c;
    }
    if (s->mode != COLOR_JOINT)
        return;
    ch->nb     = nb_search_channels(s, c);
    ch->stride = s->dn.fq.ring * comp->width * comp->height;
    for (int i = 0; i < ch->nb; i++) {
        float sigma = component_sigma(s, i);
        ch->weight[i] = (sigma0 * sigma0 + ROUNDING_VARIANCE) /
                        (sigma  * sigma  + ROUNDING_VARIANCE);
    }
}

/*
 * The rows of the grid whose patches cover sample row y, as
 * nlmeans_aggregate scans them.
 */
static int first_covering_row(const DenoiseSearch *ds, int y)
{
    return y >= ds->patch ? (y - ds->patch) / ds->step + 1 : 0;
}

static int last_covering_row(const DenoiseSearch *ds, int y)
{
    return FFMIN(ds->ny - 1, y / ds->step + 1);
}

/* Rows of the grid that a band must hold for every sample row to be
 * aggregated from one band. */
static int min_band_rows(const DenoiseSearch *ds)
{
    int rows = 1;

    for (int y = 0; y < ds->height; y++)
        rows = FFMAX(rows, last_covering_row(ds, y) - first_covering_row(ds, y) + 1);
    return rows;
}

static int set_plane_params(AVFilterContext *avctx, int c)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    int chroma   = ff_denoise_opencl_is_chroma(&s->dn.layout, c);
    int patch    = chroma && s->patch_size_uv    ? s->patch_size_uv    : s->patch_size;
    int research = chroma && s->research_size_uv ? s->research_size_uv : s->research_size;
    int reduced  = FFMIN3(patch, comp->width, comp->height);
    DenoiseSearch *ds = &s->search[c];
    /* the planes hold integers where they hold bytes (nlmeans_gpu_init()),
     * but not the opponent channels read from bytes of RGB; per reference
     * patch: its neighbours' positions and weights, and the flat means of
     * its channels */
    const DenoiseSearchParams par = {
        .width           = comp->width,
        .height          = comp->height,
        .patch           = reduced,
        .step            = FFMIN(s->step, reduced),
        .radius          = research / 2,
        .channels        = nb_search_channels(s, c),
        .integer_samples = s->dn.load_bytes && !s->dn.ring_rgb,
        .max_frames      = s->past + 1 + s->future,
        .ref_bytes       = s->nb_neighbors * (sizeof(cl_uint) + sizeof(cl_float)) +
                           nb_search_channels(s, c) * sizeof(cl_float),
    };
    int min_rows;

    if (reduced < patch)
        av_log(avctx, AV_LOG_VERBOSE, "Plane %d is %dx%d: patch size reduced "
               "from %d to %d.\n", c, comp->width, comp->height, patch, reduced);
    ff_denoise_opencl_search_init(avctx, &s->dn, ds, &par);
    min_rows = FFMIN(min_band_rows(ds), ds->ny);
    if (ds->band < min_rows) {
        av_log(avctx, AV_LOG_ERROR, "band=%d is too small for patches of %d "
               "on a step of %d: at least %d rows are needed.\n", ds->band,
               ds->patch, ds->step, min_rows);
        return AVERROR(EINVAL);
    }
    return 0;
}

/* The rings and output plane of component c, with rings of 'ring' frames. */
static int alloc_plane_buffers(AVFilterContext *avctx, int c, size_t ring)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    size_t samples = (size_t)comp->width * comp->height;
    size_t sample  = s->dn.load_bytes ? sizeof(cl_uchar) : sizeof(cl_float);
    /* the flat test reads rows of bytes as the aligned words that hold
     * them, up to the word after the last byte (nlmeans_row8()) */
    size_t tail    = s->dn.load_bytes ? sizeof(cl_uint) : 0;
    int nb_channels = nb_search_channels(s, c);

    s->dst[c] = ff_denoise_opencl_alloc(avctx, samples * sizeof(cl_float));
    if (!s->dst[c])
        return AVERROR(ENOMEM);
    if ((s->mode != COLOR_JOINT && !s->dn.ring_rgb) || c >= 3) {
        s->src[c] = ff_denoise_opencl_alloc(avctx, ring * samples * sample + tail);
        if (!s->src[c])
            return AVERROR(ENOMEM);
    }
    if (nb_channels > 1 || (s->dn.ring_rgb && c == 0)) {
        s->stack = ff_denoise_opencl_alloc(avctx, 3 * ring * samples * sample + tail);
        if (!s->stack)
            return AVERROR(ENOMEM);
    }
    return 0;
}

/*
 * The buffers that the components share, for the largest of them. Patch
 * sums are kept for a single frame only: with a window they would take two
 * floats per sample of each of its frames (1.1 GB for 4608x3456 gray and
 * nine frames), and the flat test sums the group's patches itself.
 */
static int alloc_shared_buffers(AVFilterContext *avctx, size_t ring)
{
    NLMeansGPUContext *s = avctx->priv;
    size_t planes = 0, refs = 0, channel_refs = 0;

    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        const DenoiseComponent *comp = &s->dn.layout.comp[c];
        const DenoiseSearch *ds = &s->search[c];
        int nb_channels = nb_search_channels(s, c);

        if (!ff_denoise_opencl_selected(&s->dn, c) || !nb_channels)
            continue;
        planes       = FFMAX(planes, nb_channels * (size_t)comp->width * comp->height);
        refs         = FFMAX(refs, (size_t)ds->nx * ds->band);
        channel_refs = FFMAX(channel_refs, nb_channels * (size_t)ds->nx * ds->band);
    }
    if (!refs)
        return 0;
    if (ring == 1) {
        s->sums = ff_denoise_opencl_alloc(avctx, planes * sizeof(cl_float2));
        if (!s->sums)
            return AVERROR(ENOMEM);
    }
    s->positions  = ff_denoise_opencl_alloc(avctx, refs * s->nb_neighbors * sizeof(cl_uint));
    s->weights    = ff_denoise_opencl_alloc(avctx, refs * s->nb_neighbors * sizeof(cl_float));
    s->flat_means = ff_denoise_opencl_alloc(avctx, channel_refs * sizeof(cl_float));
    if (!s->positions || !s->weights || !s->flat_means)
        return AVERROR(ENOMEM);
    return 0;
}

static int build_program(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;
    const char *sources[] = { ff_source_nlmeans_gpu_cl };
    AVBPrint defines;
    cl_int cle;
    int err;

    av_bprint_init(&defines, 0, AV_BPRINT_SIZE_AUTOMATIC);
    av_bprintf(&defines, "#define NB_NEIGHBORS %d\n", s->nb_neighbors);
    av_bprintf(&defines, "#define SEARCH_CHANNELS %d\n", s->mode == COLOR_JOINT ? 3 : 1);
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
    CL_CREATE_KERNEL(s, nlmeans_patch_sums);
    CL_CREATE_KERNEL(s, nlmeans_patch_sums_p8);
    CL_CREATE_KERNEL(s, nlmeans_weights);
    CL_CREATE_KERNEL(s, nlmeans_aggregate);
    CL_CREATE_KERNEL(s, nlmeans_aggregate_8x4);
    return 0;
fail:
    return err;
}

/* pc applies to the chroma planes of YUV frames: where there are some,
 * every sample of theirs must be covered too. */
static int check_chroma_step(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseLayout *l = &s->dn.layout;

    if (!s->patch_size_uv || s->step <= s->patch_size_uv)
        return 0;
    for (int c = 0; c < l->nb_components; c++) {
        if (ff_denoise_opencl_selected(&s->dn, c) &&
            ff_denoise_opencl_is_chroma(l, c)) {
            av_log(avctx, AV_LOG_ERROR, "step (%d) must not exceed the chroma "
                   "patch size pc (%d).\n", s->step, s->patch_size_uv);
            return AVERROR(EINVAL);
        }
    }
    return 0;
}

static av_cold int nlmeans_gpu_init(AVFilterContext *avctx, DenoiseQueueSize *size)
{
    NLMeansGPUContext *s = avctx->priv;
    int width = s->dn.width, height = s->dn.height;
    int err;

    err = check_chroma_step(avctx);
    if (err < 0)
        return err;

    s->mode = colour_mode(avctx);
    av_log(avctx, AV_LOG_VERBOSE, "%s.\n",
           s->mode == COLOR_JOINT    ? "Joint colour: one search on the three channels" :
           s->mode == COLOR_OPPONENT ? "Opponent colours, each filtered on its own" :
                                       "Each plane on its own");
    /* the window: past frames, the frame being output, future frames */
    size->delay = s->future;
    size->ring  = s->past + s->future + 1;
    /* 8-bit frames are kept as bytes, the integers that float planes
     * would hold, in a quarter of the memory, and searched faster (on an
     * H200, 10 % at 1080p, 15 % with a window of 9 frames), unless
     * sigma=curve's transform makes fractions of them; in opponent colours
     * the R, G and B bytes, whose opponent channels the kernels compute as
     * they read them (denoise_ring_at()) */
    s->dn.load_bytes = ff_denoise_opencl_bytes_possible(&s->dn);
    s->dn.ring_rgb   = s->dn.load_bytes && s->mode == COLOR_OPPONENT;
    /* neighbour positions and the channels' samples are 32-bit indices */
    if ((uint64_t)width * height * size->ring *
        (s->mode == COLOR_JOINT || s->dn.ring_rgb ? 3 : 1) > UINT32_MAX) {
        av_log(avctx, AV_LOG_ERROR, "Frames of %dx%d are too large%s.\n",
               width, height, size->ring > 1 ? " for this window" : "");
        return AVERROR(EINVAL);
    }

    /* the searches first: the program holds the search kernels they run */
    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        if (!ff_denoise_opencl_selected(&s->dn, c))
            continue;
        err = set_plane_params(avctx, c);
        if (err < 0)
            return err;
    }
    err = build_program(avctx);
    if (err < 0)
        return err;
    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        if (!ff_denoise_opencl_selected(&s->dn, c))
            continue;
        ff_denoise_opencl_search_ready(avctx, &s->dn, &s->search[c]);
        err = alloc_plane_buffers(avctx, c, size->ring);
        if (err < 0)
            return err;
    }
    return alloc_shared_buffers(avctx, size->ring);
}

/* The flat-group thresholds of the channels 'ch' of component c (-1: none). */
static cl_float4 flat_thresholds(const NLMeansGPUContext *s, int c,
                                 const DenoiseChannels *ch)
{
    cl_float4 flat = { .s = { -1.0f, -1.0f, -1.0f, -1.0f } };

    for (int i = 0; i < ch->nb && s->flat > 0; i++) {
        float sigma_i = component_sigma(s, c + i);
        flat.s[i] = s->flat * sigma_i * sigma_i;
    }
    return flat;
}

/*
 * Weights and flat test of the groups of component c in a band of 'rows'
 * rows of the grid, from the search's distances, over the channels 'ch' of
 * 'frames', whose patch sums are 'sums' (NULL: none kept).
 */
static int compute_weights(AVFilterContext *avctx, int c, cl_mem frames,
                           cl_mem sums, const DenoiseChannels *ch, int rows)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c];
    cl_uint stride = ch->stride;
    float sigma  = component_sigma(s, c);
    float h      = s->h > 0 ? s->h : sigma;
    float bias   = 2.0f * sigma * sigma;
    float scale  = s->kernel_type == KERNEL_BISQUARE ? BISQUARE_SCALE * h * h : h * h;
    float inv_scale = scale > 0 ? 1.0f / scale : INFINITY;
    cl_float4 flat = flat_thresholds(s, c, ch);
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(frames), DENOISE_ARG(ds->width), DENOISE_ARG(sums),
        DENOISE_ARG(ch->nb), DENOISE_ARG(stride), DENOISE_ARG(ch->ring_channel),
        DENOISE_ARG(ds->patch), DENOISE_ARG(ds->nx),
        DENOISE_ARG(rows), DENOISE_ARG(bias), DENOISE_ARG(inv_scale),
        DENOISE_ARG(s->kernel_type), DENOISE_ARG(flat),
        DENOISE_ARG(s->positions), DENOISE_ARG(s->weights),
        DENOISE_ARG(s->flat_means),
    };

    return ff_denoise_opencl_run(avctx, &s->dn, s->kernel_nlmeans_weights,
                                 args, FF_ARRAY_ELEMS(args), ds->nx, rows,
                                 0, 0, STAGE_WEIGHTS);
}

/*
 * The estimates of the samples of rows y_first to y_end - 1 of component c,
 * channel i into component c + i, from the tables of the band of grid rows
 * gy_first to gy_end - 1.
 */
static int aggregate(AVFilterContext *avctx, int c, cl_mem frames,
                     const DenoiseChannels *ch, int gy_first, int gy_end,
                     int y_first, int y_end)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseComponent *comp = &s->dn.layout.comp[c];
    const DenoiseSearch *ds = &s->search[c];
    cl_uint stride = ch->stride;
    int table_rows = gy_end - gy_first;
    /* an unused destination still needs a valid buffer */
    cl_mem dst1 = s->dst[ch->nb > 1 ? c + 1 : c];
    cl_mem dst2 = s->dst[ch->nb > 2 ? c + 2 : c];
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(frames), DENOISE_ARG(ch->nb), DENOISE_ARG(stride),
        DENOISE_ARG(ch->ring_channel),
        DENOISE_ARG(s->dst[c]), DENOISE_ARG(dst1), DENOISE_ARG(dst2),
        DENOISE_ARG(comp->width), DENOISE_ARG(comp->height),
        DENOISE_ARG(ds->patch), DENOISE_ARG(ds->step), DENOISE_ARG(ds->nx),
        DENOISE_ARG(ds->ny), DENOISE_ARG(gy_first), DENOISE_ARG(table_rows),
        DENOISE_ARG(y_first), DENOISE_ARG(y_end),
        DENOISE_ARG(s->positions), DENOISE_ARG(s->weights),
        DENOISE_ARG(s->flat_means),
    };

    return ff_denoise_opencl_run(avctx, &s->dn,
                                 ds->patch == 8 && ds->step == 4 ?
                                 s->kernel_nlmeans_aggregate_8x4 :
                                 s->kernel_nlmeans_aggregate,
                                 args, FF_ARRAY_ELEMS(args), comp->width,
                                 y_end - y_first, 0, 0, STAGE_AGGREGATE);
}

/* The planes searched for the groups of component c: its ring, or with
 * joint colour or rings of RGB bytes the rings of the three channels, one
 * after the other. */
static cl_mem search_planes(const NLMeansGPUContext *s, int c,
                            const DenoiseChannels *ch)
{
    return ch->nb > 1 || (s->dn.ring_rgb && c < 3) ? s->stack : s->src[c];
}

/*
 * The patch sums of the planes searched for component c, 'frames', of the
 * frame in a ring of one slot: one plane, or with joint colour three.
 */
static int compute_patch_sums(AVFilterContext *avctx, int c, cl_mem frames,
                              const DenoiseChannels *ch)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c];
    cl_kernel kernel = ds->patch == 8 ? s->kernel_nlmeans_patch_sums_p8 :
                                        s->kernel_nlmeans_patch_sums;

    av_assert0(s->dn.fq.ring == 1);
    for (cl_int plane = 0; plane < ch->nb; plane++) {
        cl_uint stride = ch->stride;
        const OpenCLKernelArg args[] = {
            DENOISE_ARG(frames), DENOISE_ARG(plane), DENOISE_ARG(ds->width),
            DENOISE_ARG(ds->height), DENOISE_ARG(ds->patch), DENOISE_ARG(stride),
            DENOISE_ARG(ch->ring_channel), DENOISE_ARG(s->sums),
        };
        /* DENOISE_IO_ROWS positions a work-item, work-groups of 16x8
         * (nlmeans_patch_sums_p8's) */
        int err = ff_denoise_opencl_run(avctx, &s->dn, kernel, args,
                                        FF_ARRAY_ELEMS(args),
                                        ds->width - ds->patch + 1,
                                        ff_denoise_opencl_io_rows(ds->height - ds->patch + 1),
                                        16, 8, STAGE_WEIGHTS);
        if (err < 0)
            return err;
    }
    return 0;
}

/*
 * Search, weights and aggregation of component c of frame t, or with joint
 * colour of the three channels from c = 0, band by band: each band of grid
 * rows starts at the first row that the next sample row not yet aggregated
 * needs, and gives the sample rows whose patches all lie in it.
 */
static int filter_component(AVFilterContext *avctx, int c,
                            const DenoiseChannels *ch, const DenoiseWindow *win)
{
    NLMeansGPUContext *s = avctx->priv;
    const DenoiseSearch *ds = &s->search[c];
    cl_mem frames = search_planes(s, c, ch);

    if (s->sums) {
        int err = compute_patch_sums(avctx, c, frames, ch);
        if (err < 0)
            return err;
    }
    for (int y = 0; y < ds->height;) {
        int gy_first = first_covering_row(ds, y);
        int gy_end   = ff_denoise_opencl_band_end(ds, gy_first);
        int y_end    = y;
        int err;

        while (y_end < ds->height && last_covering_row(ds, y_end) < gy_end)
            y_end++;
        /* set_plane_params() made bands large enough */
        av_assert0(y_end > y);
        err = ff_denoise_opencl_search(avctx, &s->dn, ds, frames, ch, win, 0,
                                       gy_first, s->positions,
                                       s->weights, STAGE_SEARCH);
        if (err < 0)
            return err;
        err = compute_weights(avctx, c, frames, s->sums, ch, gy_end - gy_first);
        if (err < 0)
            return err;
        err = aggregate(avctx, c, frames, ch, gy_first, gy_end, y, y_end);
        if (err < 0)
            return err;
        y = y_end;
    }
    return 0;
}

/*
 * Frame t, from the frames of its window: every selected component on its
 * own or, with joint colour, the first three together; or the three
 * opponent channels of an RGB frame, then back to RGB.
 */
static int denoise_frame(AVFilterContext *avctx, int64_t t, int64_t last,
                         int *mask)
{
    NLMeansGPUContext *s = avctx->priv;
    DenoiseWindow win = ff_denoise_opencl_window(&s->dn.fq, t, last, s->past,
                                                 s->future);

    for (int c = 0; c < s->dn.layout.nb_components; c++) {
        DenoiseChannels ch;
        int err;

        search_channels(s, c, &ch);
        if (!ff_denoise_opencl_selected(&s->dn, c) || !ch.nb)
            continue;
        err = filter_component(avctx, c, &ch, &win);
        if (err < 0)
            return err;
        *mask |= ((1 << ch.nb) - 1) << c;
    }
    if (s->mode == COLOR_OPPONENT)
        return ff_denoise_opencl_opponent(avctx, &s->dn, s->dst, 0, 1);
    return 0;
}

/*
 * A new frame into its slot: each selected component into its ring (with
 * joint colour or rings of RGB bytes the three channels into theirs in the
 * stack), RGB turned into opponent channels in opponent mode unless the
 * rings hold its bytes.
 */
static int load_frame(AVFilterContext *avctx, const AVFrame *in, int slot)
{
    NLMeansGPUContext *s = avctx->priv;
    cl_mem rings[DENOISE_MAX_COMPONENTS];
    int slots[DENOISE_MAX_COMPONENTS];

    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        int stacked = (s->mode == COLOR_JOINT || s->dn.ring_rgb) && c < 3;

        rings[c] = stacked ? s->stack : s->src[c];
        slots[c] = stacked ? c * s->dn.fq.ring + slot : slot;
    }
    return ff_denoise_opencl_load_frame(avctx, &s->dn, in, rings, slots,
                                        s->mode == COLOR_OPPONENT);
}

static const DenoiseQueueOps nlmeans_queue_ops = {
    .init    = nlmeans_gpu_init,
    .load    = load_frame,
    .denoise = denoise_frame,
};

static int nlmeans_gpu_config_input(AVFilterLink *inlink)
{
    NLMeansGPUContext *s = inlink->dst->priv;

    return ff_denoise_opencl_config_input(inlink, &s->dn);
}

static int nlmeans_gpu_config_output(AVFilterLink *outlink)
{
    NLMeansGPUContext *s = outlink->src->priv;

    return ff_denoise_opencl_config_output(outlink, &s->dn, &nlmeans_queue_ops);
}

static int nlmeans_gpu_process_command(AVFilterContext *avctx, const char *cmd,
                                       const char *arg, char *res, int res_len,
                                       int flags)
{
    NLMeansGPUContext *s = avctx->priv;

    return ff_denoise_opencl_process_command(avctx, &s->dn, cmd, arg, res,
                                             res_len, flags);
}

static int nlmeans_gpu_activate(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;

    return ff_denoise_opencl_activate(avctx, &s->dn, s->dst, &nlmeans_queue_ops);
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
    if (!(s->dn.planes & 0xf)) {
        av_log(avctx, AV_LOG_WARNING, "No plane selected: frames pass through.\n");
    }
    if (s->causal)
        s->future = 0;
    if (s->past || s->future)
        s->dn.memory_hint = "Fewer frames in time (past, future) need less "
                            "device memory.";
    return ff_denoise_opencl_init_filter(avctx, &s->dn);
}

static av_cold void nlmeans_gpu_uninit(AVFilterContext *avctx)
{
    NLMeansGPUContext *s = avctx->priv;
    cl_int cle;

    ff_denoise_opencl_uninit(avctx, &s->dn);
    CL_RELEASE_KERNEL(s->kernel_nlmeans_patch_sums);
    CL_RELEASE_KERNEL(s->kernel_nlmeans_patch_sums_p8);
    CL_RELEASE_KERNEL(s->kernel_nlmeans_weights);
    CL_RELEASE_KERNEL(s->kernel_nlmeans_aggregate);
    CL_RELEASE_KERNEL(s->kernel_nlmeans_aggregate_8x4);
    for (int c = 0; c < DENOISE_MAX_COMPONENTS; c++) {
        CL_RELEASE_MEMORY(s->src[c]);
        CL_RELEASE_MEMORY(s->dst[c]);
    }
    CL_RELEASE_MEMORY(s->stack);
    CL_RELEASE_MEMORY(s->sums);
    CL_RELEASE_MEMORY(s->positions);
    CL_RELEASE_MEMORY(s->weights);
    CL_RELEASE_MEMORY(s->flat_means);
    ff_opencl_filter_uninit(avctx);
}

#define OFFSET(x) offsetof(NLMeansGPUContext, x)
#define FLAGS  (AV_OPT_FLAG_FILTERING_PARAM | AV_OPT_FLAG_VIDEO_PARAM)
#define RFLAGS (FLAGS | AV_OPT_FLAG_RUNTIME_PARAM)
static const AVOption nlmeans_gpu_options[] = {
    DENOISE_OPENCL_SIGMA_OPTIONS(NLMeansGPUContext, RFLAGS),
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
    DENOISE_OPENCL_PLANES_OPTION(NLMeansGPUContext, FLAGS),
    { "flat", "flat-group threshold, in units of sigma^2 (0: disabled)",
      OFFSET(flat), AV_OPT_TYPE_FLOAT, { .dbl = 1.05 }, 0.0, 10.0, RFLAGS },
    { "color", "filtering of the channels of 4:4:4 and RGB frames",
      OFFSET(color), AV_OPT_TYPE_INT, { .i64 = COLOR_AUTO }, COLOR_JOINT, COLOR_AUTO, FLAGS, .unit = "color" },
        { "auto",     "opponent for RGB frames, planes for YUV frames", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_AUTO }, 0, 0, FLAGS, .unit = "color" },
        { "joint",    "one distance summed over the three channels, one set of weights for all three", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_JOINT },    0, 0, FLAGS, .unit = "color" },
        { "planes",   "each plane searched and weighted on its own", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_PLANES },   0, 0, FLAGS, .unit = "color" },
        { "opponent", "RGB turned into opponent colours, each filtered on its own (YUV: as planes)", 0, AV_OPT_TYPE_CONST, { .i64 = COLOR_OPPONENT }, 0, 0, FLAGS, .unit = "color" },
    { "kernel", "weighting kernel of the patch distances",
      OFFSET(kernel_type), AV_OPT_TYPE_INT, { .i64 = KERNEL_EXP }, KERNEL_EXP, KERNEL_BISQUARE, RFLAGS, .unit = "kernel" },
        { "exp",      "exp(-max(d^2 - 2 sigma^2, 0) / h^2)", 0, AV_OPT_TYPE_CONST, { .i64 = KERNEL_EXP },      0, 0, RFLAGS, .unit = "kernel" },
        { "bisquare", "(1 - max(d^2 - 2 sigma^2, 0) / (3 h^2))^2, 0 beyond", 0, AV_OPT_TYPE_CONST, { .i64 = KERNEL_BISQUARE }, 0, 0, RFLAGS, .unit = "kernel" },
    DENOISE_OPENCL_SEARCH_OPTION(NLMeansGPUContext, FLAGS),
    { "past", "number of past frames searched",
      OFFSET(past), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 15, FLAGS },
    { "future", "number of future frames searched (the output is delayed by as many frames)",
      OFFSET(future), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 15, FLAGS },
    { "causal", "search past frames only, whatever future says: no delay",
      OFFSET(causal), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, FLAGS },
    DENOISE_OPENCL_BAND_OPTION(NLMeansGPUContext, FLAGS),
    DENOISE_OPENCL_DEVICE_OPTION(NLMeansGPUContext, FLAGS),
    DENOISE_OPENCL_PROFILE_OPTION(NLMeansGPUContext, FLAGS),
    { NULL }
};

AVFILTER_DEFINE_CLASS(nlmeans_gpu);

static const AVFilterPad nlmeans_gpu_inputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &nlmeans_gpu_config_input,
    },
};

static const AVFilterPad nlmeans_gpu_outputs[] = {
    {
        .name         = "default",
        .type         = AVMEDIA_TYPE_VIDEO,
        .config_props = &nlmeans_gpu_config_output,
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
    .activate        = &nlmeans_gpu_activate,
    FILTER_INPUTS(nlmeans_gpu_inputs),
    FILTER_OUTPUTS(nlmeans_gpu_outputs),
    FILTER_QUERY_FUNC2(&ff_denoise_opencl_query_formats),
    .flags_internal  = FF_FILTER_FLAG_HWFRAME_AWARE,
    .process_command = &nlmeans_gpu_process_command,
};
