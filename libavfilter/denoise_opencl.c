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

#include <math.h>
#include <string.h>

#include "libavutil/avassert.h"
#include "libavutil/bprint.h"
#include "libavutil/common.h"
#include "libavutil/hwcontext.h"
#include "libavutil/mathematics.h"
#include "libavutil/mem.h"
#include "libavutil/pixdesc.h"

#include "denoise_opencl.h"
#include "filters.h"
#include "opencl_source.h"
#include "video.h"

const enum AVPixelFormat ff_denoise_opencl_formats[] = {
    AV_PIX_FMT_GRAY8,     AV_PIX_FMT_GRAY16,
    AV_PIX_FMT_YUV420P,   AV_PIX_FMT_YUV422P,   AV_PIX_FMT_YUV444P,
    AV_PIX_FMT_YUV440P,   AV_PIX_FMT_YUV410P,   AV_PIX_FMT_YUV411P,
    AV_PIX_FMT_YUVJ420P,  AV_PIX_FMT_YUVJ422P,  AV_PIX_FMT_YUVJ444P,
    AV_PIX_FMT_YUV420P16, AV_PIX_FMT_YUV422P16, AV_PIX_FMT_YUV444P16,
    AV_PIX_FMT_NV12,      AV_PIX_FMT_NV16,      AV_PIX_FMT_NV24,
    AV_PIX_FMT_P010,      AV_PIX_FMT_P012,      AV_PIX_FMT_P016,
    AV_PIX_FMT_P210,      AV_PIX_FMT_P216,      AV_PIX_FMT_P410,
    AV_PIX_FMT_P416,
    AV_PIX_FMT_GBRP,      AV_PIX_FMT_GBRP16,
#ifdef AV_PIX_FMT_YUV444P10MSB
    AV_PIX_FMT_YUV444P10MSB, AV_PIX_FMT_YUV444P12MSB,
    AV_PIX_FMT_GBRP10MSB,    AV_PIX_FMT_GBRP12MSB,
#endif
    AV_PIX_FMT_NONE,
};

static int is_supported(enum AVPixelFormat fmt)
{
    for (int i = 0; ff_denoise_opencl_formats[i] != AV_PIX_FMT_NONE; i++)
        if (ff_denoise_opencl_formats[i] == fmt)
            return 1;
    return 0;
}

static void log_supported_formats(void *log_ctx, enum AVPixelFormat fmt)
{
    AVBPrint bp;

    av_bprint_init(&bp, 0, AV_BPRINT_SIZE_AUTOMATIC);
    for (int i = 0; ff_denoise_opencl_formats[i] != AV_PIX_FMT_NONE; i++)
        av_bprintf(&bp, "%s%s", i ? ", " : "",
                   av_get_pix_fmt_name(ff_denoise_opencl_formats[i]));
    av_log(log_ctx, AV_LOG_ERROR,
           "Unsupported input format %s. Supported formats: %s.\n",
           av_get_pix_fmt_name(fmt), bp.str);
    av_bprint_finalize(&bp, NULL);
}

int ff_denoise_opencl_get_layout(void *log_ctx, enum AVPixelFormat sw_format,
                                 int width, int height, DenoiseLayout *layout)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(sw_format);

    if (!desc || !is_supported(sw_format)) {
        log_supported_formats(log_ctx, sw_format);
        return AVERROR(ENOSYS);
    }

    memset(layout, 0, sizeof(*layout));
    layout->sw_format     = sw_format;
    layout->nb_components = desc->nb_components;
    layout->nb_planes     = av_pix_fmt_count_planes(sw_format);
    layout->is_rgb        = !!(desc->flags & AV_PIX_FMT_FLAG_RGB);
    layout->shift         = desc->comp[0].shift;
    layout->container     = desc->comp[0].depth + desc->comp[0].shift > 8 ?
                            65535.0f : 255.0f;

    for (int c = 0; c < desc->nb_components; c++) {
        const AVComponentDescriptor *cd = &desc->comp[c];
        int chroma = (c == 1 || c == 2) && !layout->is_rgb;
        DenoiseComponent *comp = &layout->comp[c];
        int bytes = cd->depth + cd->shift > 8 ? 2 : 1;

        comp->plane   = cd->plane;
        comp->channel = cd->offset / bytes;
        comp->width   = chroma ? AV_CEIL_RSHIFT(width,  desc->log2_chroma_w) : width;
        comp->height  = chroma ? AV_CEIL_RSHIFT(height, desc->log2_chroma_h) : height;
        av_assert0(comp->channel < 2);
        layout->plane_channels[cd->plane] = FFMAX(layout->plane_channels[cd->plane],
                                                  comp->channel + 1);
        layout->plane_width[cd->plane]  = comp->width;
        layout->plane_height[cd->plane] = comp->height;
    }
    return 0;
}

int ff_denoise_opencl_config_input(AVFilterLink *inlink)
{
    AVFilterContext *avctx = inlink->dst;
    FilterLink *l = ff_filter_link(inlink);
    AVHWFramesContext *frames;
    DenoiseLayout layout;
    int err;

    err = ff_opencl_filter_config_input(inlink);
    if (err < 0)
        return err;

    frames = (AVHWFramesContext *)l->hw_frames_ctx->data;
    return ff_denoise_opencl_get_layout(avctx, frames->sw_format,
                                        inlink->w, inlink->h, &layout);
}

static void log_build_failure(AVFilterContext *avctx, cl_program program,
                              cl_device_id device)
{
    size_t length = 0;
    char *log;

    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL,
                              &length) != CL_SUCCESS || !length)
        return;
    log = av_malloc(length);
    if (log && clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG,
                                     length, log, NULL) == CL_SUCCESS)
        av_log(avctx, AV_LOG_ERROR, "Build log:\n%s\n", log);
    av_free(log);
}

/*
 * Like ff_opencl_filter_load_program(), with build options: divisions and
 * square roots correctly rounded where the device can, since some devices
 * (NVIDIA) divide with an error of a few units in the last place by
 * default, and a result on a rounding boundary would then be quantised
 * differently from one device to another and from the golden model.
 */
static int build_program(AVFilterContext *avctx, const char **src, int nb_src)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_device_id device = ocf->hwctx->device_id;
    cl_device_fp_config fp = 0;
    const char *options = "";
    cl_int cle;

    clGetDeviceInfo(device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
    if (fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT)
        options = "-cl-fp32-correctly-rounded-divide-sqrt";

    ocf->program = clCreateProgramWithSource(ocf->hwctx->context, nb_src, src,
                                             NULL, &cle);
    if (!ocf->program) {
        av_log(avctx, AV_LOG_ERROR, "Failed to create program: %d.\n", cle);
        return AVERROR(EIO);
    }
    cle = clBuildProgram(ocf->program, 1, &device, options, NULL, NULL);
    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to build program: %d.\n", cle);
        if (cle == CL_BUILD_PROGRAM_FAILURE)
            log_build_failure(avctx, ocf->program, device);
        clReleaseProgram(ocf->program);
        ocf->program = NULL;
        return AVERROR(EIO);
    }
    return 0;
}

static int has_image_support(cl_device_id device)
{
    cl_bool images = CL_FALSE;

    return clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof(images),
                           &images, NULL) == CL_SUCCESS && images;
}

int ff_denoise_opencl_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                           const char *defines, const char **sources,
                           int nb_sources)
{
    OpenCLFilterContext *ocf = avctx->priv;
    static const char search_defines[] =
        "#define SEARCH_TILE "   AV_STRINGIFY(DENOISE_SEARCH_TILE)   "\n"
        "#define SEARCH_UNROLL " AV_STRINGIFY(DENOISE_SEARCH_UNROLL) "\n";
    const char *src[16];
    cl_command_queue_properties props = dn->profile ? CL_QUEUE_PROFILING_ENABLE : 0;
    cl_int cle;
    int err, n = 0;

    av_assert0(nb_sources + 4 <= FF_ARRAY_ELEMS(src));
    if (!has_image_support(ocf->hwctx->device_id)) {
        av_log(avctx, AV_LOG_ERROR, "The OpenCL device has no image support; "
               "the filter reads and writes OpenCL frames as images.\n");
        return AVERROR(ENOSYS);
    }
    src[n++] = defines;
    src[n++] = search_defines;
    src[n++] = ff_source_denoise_common_cl;
    src[n++] = ff_source_patch_search_cl;
    for (int i = 0; i < nb_sources; i++)
        src[n++] = sources[i];

    err = build_program(avctx, src, n);
    if (err < 0)
        return err;

    dn->queue = clCreateCommandQueue(ocf->hwctx->context, ocf->hwctx->device_id,
                                     props, &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create OpenCL command queue: %d.\n", cle);

    dn->kernel_load = clCreateKernel(ocf->program, "denoise_load_plane", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel denoise_load_plane: %d.\n", cle);
    dn->kernel_store = clCreateKernel(ocf->program, "denoise_store_plane", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel denoise_store_plane: %d.\n", cle);
    dn->kernel_search = clCreateKernel(ocf->program, "patch_search", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel patch_search: %d.\n", cle);
    dn->kernel_search_tiled = clCreateKernel(ocf->program, "patch_search_tiled", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel patch_search_tiled: %d.\n", cle);
    dn->kernel_opponent[0] = clCreateKernel(ocf->program, "denoise_opponent_forward", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel denoise_opponent_forward: %d.\n", cle);
    dn->kernel_opponent[1] = clCreateKernel(ocf->program, "denoise_opponent_inverse", &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create kernel denoise_opponent_inverse: %d.\n", cle);
    return 0;

fail:
    ff_denoise_opencl_uninit(avctx, dn);
    return err;
}

void ff_denoise_opencl_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    cl_int cle;

    if (dn->profile && dn->nb_frames_profiled) {
        for (int s = 0; s < DENOISE_MAX_STAGES; s++)
            if (dn->stage_names[s])
                av_log(avctx, AV_LOG_INFO, "%s: %.3f ms per frame on average\n",
                       dn->stage_names[s],
                       dn->stage_total_ms[s] / dn->nb_frames_profiled);
    }
    if (dn->queue)
        clFinish(dn->queue);
    CL_RELEASE_KERNEL(dn->kernel_load);
    CL_RELEASE_KERNEL(dn->kernel_store);
    CL_RELEASE_KERNEL(dn->kernel_search);
    CL_RELEASE_KERNEL(dn->kernel_search_tiled);
    CL_RELEASE_KERNEL(dn->kernel_opponent[0]);
    CL_RELEASE_KERNEL(dn->kernel_opponent[1]);
    CL_RELEASE_QUEUE(dn->queue);
    dn->kernel_load         = NULL;
    dn->kernel_store        = NULL;
    dn->kernel_search       = NULL;
    dn->kernel_search_tiled = NULL;
    dn->kernel_opponent[0]  = NULL;
    dn->kernel_opponent[1]  = NULL;
    dn->queue               = NULL;
}

cl_mem ff_denoise_opencl_alloc(AVFilterContext *avctx, size_t size)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_int cle;
    cl_mem mem;

    mem = clCreateBuffer(ocf->hwctx->context, CL_MEM_READ_WRITE, FFMAX(size, 1),
                         NULL, &cle);
    if (!mem)
        av_log(avctx, AV_LOG_ERROR, "The OpenCL device refused a buffer of "
               "%zu bytes: %d.\n", size, cle);
    return mem;
}

size_t ff_denoise_opencl_local_mem_size(AVFilterContext *avctx)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_ulong size = 0;

    if (clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_LOCAL_MEM_SIZE,
                        sizeof(size), &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

size_t ff_denoise_opencl_max_work_group(AVFilterContext *avctx, cl_kernel kernel)
{
    OpenCLFilterContext *ocf = avctx->priv;
    size_t size = 0;

    if (clGetKernelWorkGroupInfo(kernel, ocf->hwctx->device_id,
                                 CL_KERNEL_WORK_GROUP_SIZE, sizeof(size),
                                 &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

int ff_denoise_opencl_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          cl_kernel kernel, size_t width, size_t height,
                          size_t local_w, size_t local_h, int stage)
{
    size_t local[2]  = { local_w ? local_w : 16, local_h ? local_h : 8 };
    size_t global[2] = { FFALIGN(width, local[0]), FFALIGN(height, local[1]) };
    cl_event event = NULL;
    cl_int cle;

    cle = clEnqueueNDRangeKernel(dn->queue, kernel, 2, NULL, global, local, 0,
                                 NULL, dn->profile ? &event : NULL);
    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to enqueue kernel: %d.\n", cle);
        return AVERROR(EIO);
    }
    if (event) {
        cle = clWaitForEvents(1, &event);
        if (cle == CL_SUCCESS && stage >= 0 && stage < DENOISE_MAX_STAGES)
            dn->stage_ms[stage] += ff_opencl_get_event_time(event) / 1e6;
        clReleaseEvent(event);
        if (cle != CL_SUCCESS) {
            av_log(avctx, AV_LOG_ERROR, "Kernel failed: %d.\n", cle);
            return AVERROR(EIO);
        }
    }
    return 0;
}

int ff_denoise_opencl_opponent(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, int width, int height,
                               int slot, int inverse)
{
    cl_kernel k = dn->kernel_opponent[!!inverse];
    cl_uint offset = (cl_uint)slot * width * height;
    cl_int cle;
    int err = 0;

    for (int c = 0; c < 3; c++) {
        CL_SET_KERNEL_ARG(k, c, cl_mem, &planes[c]);
    }
    CL_SET_KERNEL_ARG(k, 3, cl_int,  &width);
    CL_SET_KERNEL_ARG(k, 4, cl_int,  &height);
    CL_SET_KERNEL_ARG(k, 5, cl_uint, &offset);
    return ff_denoise_opencl_run(avctx, dn, k, width, height, 0, 0, 0);
fail:
    return err;
}

float ff_denoise_opponent_sigma(float sigma, int c)
{
    static const double gain[3] = { 1.0 / 3.0, 1.0 / 2.0, 3.0 / 8.0 };

    return (float)((double)sigma * sqrt(gain[c]));
}

int ff_denoise_opencl_finish(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    cl_int cle = clFinish(dn->queue);

    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to finish the OpenCL queue: %d.\n", cle);
        return AVERROR(EIO);
    }
    if (dn->profile) {
        AVBPrint bp;
        double total = 0;

        av_bprint_init(&bp, 0, AV_BPRINT_SIZE_AUTOMATIC);
        for (int s = 0; s < DENOISE_MAX_STAGES; s++) {
            if (!dn->stage_names[s])
                continue;
            av_bprintf(&bp, " %s %.3f ms", dn->stage_names[s], dn->stage_ms[s]);
            total += dn->stage_ms[s];
            dn->stage_total_ms[s] += dn->stage_ms[s];
            dn->stage_ms[s] = 0;
        }
        av_log(avctx, AV_LOG_INFO, "kernel time:%s, total %.3f ms\n", bp.str, total);
        av_bprint_finalize(&bp, NULL);
        dn->nb_frames_profiled++;
    }
    return 0;
}

int ff_denoise_opencl_load(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                           const DenoiseLayout *layout, const AVFrame *frame,
                           int component, cl_mem dst, int slot)
{
    const DenoiseComponent *comp = &layout->comp[component];
    cl_mem src = (cl_mem)frame->data[comp->plane];
    cl_uint offset = (cl_uint)slot * comp->width * comp->height;
    cl_int cle;
    int err;

    CL_SET_KERNEL_ARG(dn->kernel_load, 0, cl_mem, &src);
    CL_SET_KERNEL_ARG(dn->kernel_load, 1, cl_int, &comp->channel);
    CL_SET_KERNEL_ARG(dn->kernel_load, 2, cl_mem, &dst);
    CL_SET_KERNEL_ARG(dn->kernel_load, 3, cl_int, &comp->width);
    CL_SET_KERNEL_ARG(dn->kernel_load, 4, cl_int, &comp->height);
    CL_SET_KERNEL_ARG(dn->kernel_load, 5, cl_float, &layout->container);
    CL_SET_KERNEL_ARG(dn->kernel_load, 6, cl_uint, &offset);
    return ff_denoise_opencl_run(avctx, dn, dn->kernel_load,
                                 comp->width, comp->height, 0, 0, 0);
fail:
    return err;
}

static int copy_image(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                      const DenoiseLayout *layout, AVFrame *out,
                      const AVFrame *in, int plane)
{
    size_t origin[3] = { 0, 0, 0 };
    size_t region[3] = { layout->plane_width[plane], layout->plane_height[plane], 1 };
    cl_int cle;

    cle = clEnqueueCopyImage(dn->queue, (cl_mem)in->data[plane],
                             (cl_mem)out->data[plane], origin, origin, region,
                             0, NULL, NULL);
    if (cle != CL_SUCCESS) {
        av_log(avctx, AV_LOG_ERROR, "Failed to copy plane %d: %d.\n", plane, cle);
        return AVERROR(EIO);
    }
    return 0;
}

int ff_denoise_opencl_store(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            const DenoiseLayout *layout, AVFrame *out,
                            const AVFrame *in, cl_mem *planes, int mask)
{
    cl_int cle;
    int err;

    for (int p = 0; p < layout->nb_planes; p++) {
        cl_mem dst = (cl_mem)out->data[p];
        cl_mem src = (cl_mem)in->data[p];
        cl_mem channel_planes[2] = { NULL, NULL };
        int channel_mask = 0;

        for (int c = 0; c < layout->nb_components; c++) {
            const DenoiseComponent *comp = &layout->comp[c];
            if (comp->plane != p || !(mask & (1 << c)))
                continue;
            channel_planes[comp->channel] = planes[c];
            channel_mask |= 1 << comp->channel;
        }
        if (!channel_mask) {
            err = copy_image(avctx, dn, layout, out, in, p);
            if (err < 0)
                return err;
            continue;
        }
        /* an unused argument still needs a valid buffer */
        if (!channel_planes[0])
            channel_planes[0] = channel_planes[1];
        if (!channel_planes[1])
            channel_planes[1] = channel_planes[0];

        CL_SET_KERNEL_ARG(dn->kernel_store, 0, cl_mem, &dst);
        CL_SET_KERNEL_ARG(dn->kernel_store, 1, cl_mem, &src);
        CL_SET_KERNEL_ARG(dn->kernel_store, 2, cl_mem, &channel_planes[0]);
        CL_SET_KERNEL_ARG(dn->kernel_store, 3, cl_mem, &channel_planes[1]);
        CL_SET_KERNEL_ARG(dn->kernel_store, 4, cl_int, &channel_mask);
        CL_SET_KERNEL_ARG(dn->kernel_store, 5, cl_int, &layout->plane_width[p]);
        CL_SET_KERNEL_ARG(dn->kernel_store, 6, cl_int, &layout->plane_height[p]);
        CL_SET_KERNEL_ARG(dn->kernel_store, 7, cl_float, &layout->container);
        CL_SET_KERNEL_ARG(dn->kernel_store, 8, cl_int, &layout->shift);
        err = ff_denoise_opencl_run(avctx, dn, dn->kernel_store,
                                    layout->plane_width[p],
                                    layout->plane_height[p], 0, 0, 0);
        if (err < 0)
            return err;
    }
    return 0;
fail:
    return err;
}

int ff_denoise_opencl_copy_frame(AVFilterContext *avctx,
                                 DenoiseOpenCLContext *dn,
                                 const DenoiseLayout *layout, AVFrame *out,
                                 const AVFrame *in)
{
    for (int p = 0; p < layout->nb_planes; p++) {
        int err = copy_image(avctx, dn, layout, out, in, p);
        if (err < 0)
            return err;
    }
    return 0;
}

void ff_denoise_search_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            DenoiseSearch *ds, int width, int height,
                            int patch, int step, int radius,
                            enum DenoiseSearchMode mode)
{
    OpenCLFilterContext *ocf = avctx->priv;
    const size_t tile = DENOISE_SEARCH_TILE;
    size_t region, local_mem, max_wg;
    cl_device_type type = 0;
    int fits;

    ds->width      = width;
    ds->height     = height;
    ds->patch      = patch;
    ds->step       = step;
    ds->block      = av_gcd(patch, step);
    ds->radius     = radius;
    ds->nx         = (width  - patch + step - 1) / step + 1;
    ds->ny         = (height - patch + step - 1) / step + 1;
    ds->regular_nx = (width  - patch) / step + 1;
    ds->regular_ny = (height - patch) / step + 1;

    region    = (tile - 1) * step + patch;
    local_mem = ff_denoise_opencl_local_mem_size(avctx);
    max_wg    = ff_denoise_opencl_max_work_group(avctx, dn->kernel_search_tiled);
    ds->tile_local[0] = region * region * sizeof(cl_float);
    ds->tile_local[1] = DENOISE_SEARCH_UNROLL * (region / ds->block) * region *
                        sizeof(cl_float);
    fits = max_wg >= tile * tile &&
           ds->tile_local[0] + ds->tile_local[1] + 1024 <= local_mem;

    /* On CPUs local memory is ordinary memory and barriers are costly: the
     * per-patch search is faster there. */
    clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    switch (mode) {
    case DENOISE_SEARCH_TILED:
        ds->tiled = fits;
        if (!fits)
            av_log(avctx, AV_LOG_WARNING, "The work-group search does not fit "
                   "this device for patch %d, step %d: using the per-patch "
                   "search.\n", patch, step);
        break;
    case DENOISE_SEARCH_DIRECT:
        ds->tiled = 0;
        break;
    default:
        ds->tiled = fits && !(type & CL_DEVICE_TYPE_CPU);
    }
    av_log(avctx, AV_LOG_VERBOSE, "%dx%d, patch %d, step %d: %s search.\n",
           width, height, patch, step, ds->tiled ? "work-group" : "per-patch");
}

static int set_search_args(AVFilterContext *avctx, cl_kernel kernel,
                           const DenoiseSearch *ds, cl_mem frames,
                           const DenoiseChannels *ch,
                           const DenoiseWindow *win, int ref_first,
                           int limit_nx, int limit_ny, cl_mem positions,
                           cl_mem distances)
{
    cl_float4 weights = { .s = { ch->weight[0], ch->weight[1], ch->weight[2], 0.0f } };
    cl_uint stride = ch->stride;
    cl_int cle;
    int err = 0;

    av_assert0(ch->nb >= 1 && ch->nb <= DENOISE_MAX_CHANNELS);
    CL_SET_KERNEL_ARG(kernel,  0, cl_mem,    &frames);
    CL_SET_KERNEL_ARG(kernel,  1, cl_int,    &ch->nb);
    CL_SET_KERNEL_ARG(kernel,  2, cl_uint,   &stride);
    CL_SET_KERNEL_ARG(kernel,  3, cl_float4, &weights);
    CL_SET_KERNEL_ARG(kernel,  4, cl_int,    &ds->width);
    CL_SET_KERNEL_ARG(kernel,  5, cl_int,    &ds->height);
    CL_SET_KERNEL_ARG(kernel,  6, cl_int,    &win->first_slot);
    CL_SET_KERNEL_ARG(kernel,  7, cl_int,    &win->nb_frames);
    CL_SET_KERNEL_ARG(kernel,  8, cl_int,    &win->ring);
    CL_SET_KERNEL_ARG(kernel,  9, cl_int,    &win->ref_slot);
    CL_SET_KERNEL_ARG(kernel, 10, cl_int,    &ds->patch);
    CL_SET_KERNEL_ARG(kernel, 11, cl_int,    &ds->step);
    CL_SET_KERNEL_ARG(kernel, 12, cl_int,    &ds->block);
    CL_SET_KERNEL_ARG(kernel, 13, cl_int,    &ds->radius);
    CL_SET_KERNEL_ARG(kernel, 14, cl_int,    &ds->nx);
    CL_SET_KERNEL_ARG(kernel, 15, cl_int,    &ds->ny);
    CL_SET_KERNEL_ARG(kernel, 16, cl_int,    &limit_nx);
    CL_SET_KERNEL_ARG(kernel, 17, cl_int,    &limit_ny);
    CL_SET_KERNEL_ARG(kernel, 18, cl_int,    &ref_first);
    CL_SET_KERNEL_ARG(kernel, 19, cl_mem,    &positions);
    CL_SET_KERNEL_ARG(kernel, 20, cl_mem,    &distances);
fail:
    return err;
}

/*
 * The work-group kernel on the regular grid where it fits the device, the
 * per-patch kernel for the rest (the last row and column of the grid, moved
 * to the frame's edge).
 */
int ff_denoise_search_run_channels(AVFilterContext *avctx,
                                   DenoiseOpenCLContext *dn,
                                   const DenoiseSearch *ds, cl_mem frames,
                                   const DenoiseChannels *ch,
                                   const DenoiseWindow *win, int ref_first,
                                   cl_mem positions, cl_mem distances,
                                   int stage)
{
    cl_int cle;
    int err, skip_nx = 0, skip_ny = 0;

    if (ds->tiled) {
        cl_kernel k = dn->kernel_search_tiled;

        err = set_search_args(avctx, k, ds, frames, ch, win, ref_first,
                              ds->regular_nx, ds->regular_ny, positions,
                              distances);
        if (err < 0)
            return err;
        for (int i = 0; i < 2; i++) {
            cle = clSetKernelArg(k, 21 + i, ds->tile_local[i], NULL);
            CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to set local memory: %d.\n", cle);
        }
        err = ff_denoise_opencl_run(avctx, dn, k, ds->regular_nx, ds->regular_ny,
                                    DENOISE_SEARCH_TILE, DENOISE_SEARCH_TILE, stage);
        if (err < 0)
            return err;
        skip_nx = ds->regular_nx;
        skip_ny = ds->regular_ny;
        if (skip_nx == ds->nx && skip_ny == ds->ny)
            return 0;
    }
    err = set_search_args(avctx, dn->kernel_search, ds, frames, ch, win,
                          ref_first, skip_nx, skip_ny, positions, distances);
    if (err < 0)
        return err;
    return ff_denoise_opencl_run(avctx, dn, dn->kernel_search, ds->nx, ds->ny,
                                 0, 0, stage);
fail:
    return err;
}

int ff_denoise_search_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          const DenoiseSearch *ds, cl_mem frames,
                          const DenoiseWindow *win, int ref_first,
                          cl_mem positions, cl_mem distances, int stage)
{
    return ff_denoise_search_run_channels(avctx, dn, ds, frames,
                                          &DENOISE_CHANNELS_SINGLE, win,
                                          ref_first, positions, distances,
                                          stage);
}

DenoiseWindow ff_denoise_opencl_window(const DenoiseFrameQueue *fq, int64_t t,
                                       int64_t last, int past, int future)
{
    int64_t lo = FFMAX(0, t - past);
    int64_t hi = FFMIN(last, t + future);

    return (DenoiseWindow) {
        .first_slot = lo % fq->ring,
        .nb_frames  = hi - lo + 1,
        .ring       = fq->ring,
        .ref_slot   = t % fq->ring,
        .nb_past    = t - lo,
    };
}

void ff_denoise_opencl_queue_uninit(DenoiseOpenCLContext *dn)
{
    for (int i = 0; i < DENOISE_MAX_RING; i++)
        av_frame_free(&dn->fq.frames[i]);
}

/* A new input frame: set up on the first, then load it into its slot. */
static int queue_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                       AVFrame *in, const DenoiseQueueOps *ops)
{
    DenoiseFrameQueue *fq = &dn->fq;
    AVHWFramesContext *frames;
    int slot, err;

    if (!in->hw_frames_ctx) {
        av_log(avctx, AV_LOG_ERROR, "Input frames must be OpenCL frames.\n");
        av_frame_free(&in);
        return AVERROR(EINVAL);
    }
    frames = (AVHWFramesContext *)in->hw_frames_ctx->data;
    if (!dn->initialised) {
        err = ops->init(avctx, in);
        if (err < 0)
            goto fail;
        av_assert0(fq->ring >= fq->delay + 1 && fq->ring <= DENOISE_MAX_RING);
        fq->width     = in->width;
        fq->height    = in->height;
        fq->sw_format = frames->sw_format;
        dn->initialised = 1;
    } else if (in->width != fq->width || in->height != fq->height ||
               frames->sw_format != fq->sw_format) {
        av_log(avctx, AV_LOG_ERROR, "The frames changed from %dx%d %s to "
               "%dx%d %s: changes of size or format within a stream are not "
               "supported.\n", fq->width, fq->height,
               av_get_pix_fmt_name(fq->sw_format), in->width, in->height,
               av_get_pix_fmt_name(frames->sw_format));
        err = AVERROR(EINVAL);
        goto fail;
    }

    slot = fq->nb_in % fq->ring;
    av_assert0(!fq->frames[slot]);
    err = ops->load(avctx, in, slot);
    if (err < 0)
        goto fail;
    fq->frames[slot]   = in;
    fq->disabled[slot] = avctx->is_disabled;
    fq->nb_in++;
    return 0;

fail:
    av_frame_free(&in);
    return err;
}

/* Send frame nb_out, denoised from the frames loaded so far. */
static int output_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                        const DenoiseLayout *layout, cl_mem *planes,
                        const DenoiseQueueOps *ops)
{
    DenoiseFrameQueue *fq = &dn->fq;
    AVFilterLink *outlink = avctx->outputs[0];
    int slot = fq->nb_out % fq->ring;
    AVFrame *in = fq->frames[slot];
    AVFrame *out;
    int err, mask = 0;

    out = ff_get_video_buffer(outlink, outlink->w, outlink->h);
    if (!out)
        return AVERROR(ENOMEM);
    err = av_frame_copy_props(out, in);
    if (err < 0)
        goto fail;

    if (fq->disabled[slot]) {
        err = ops->skip ? ops->skip(avctx, fq->nb_out, fq->nb_in - 1) : 0;
        if (err >= 0)
            err = ff_denoise_opencl_copy_frame(avctx, dn, layout, out, in);
    } else {
        err = ops->denoise(avctx, fq->nb_out, fq->nb_in - 1, &mask);
        if (err >= 0)
            err = ff_denoise_opencl_store(avctx, dn, layout, out, in, planes, mask);
    }
    if (err < 0)
        goto fail;
    err = ff_denoise_opencl_finish(avctx, dn);
    if (err < 0)
        goto fail;

    av_frame_free(&fq->frames[slot]);
    fq->nb_out++;
    return ff_filter_frame(outlink, out);

fail:
    clFinish(dn->queue);
    av_frame_free(&out);
    return err;
}

int ff_denoise_opencl_activate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               const DenoiseLayout *layout, cl_mem *planes,
                               const DenoiseQueueOps *ops)
{
    AVFilterLink *inlink  = avctx->inputs[0];
    AVFilterLink *outlink = avctx->outputs[0];
    DenoiseFrameQueue *fq = &dn->fq;
    AVFrame *in;
    int64_t pts;
    int ret, status;

    FF_FILTER_FORWARD_STATUS_BACK(outlink, inlink);

    ret = ff_inlink_consume_frame(inlink, &in);
    if (ret < 0)
        return ret;
    if (ret > 0) {
        ret = queue_frame(avctx, dn, in, ops);
        if (ret < 0)
            return ret;
        if (fq->nb_in - fq->nb_out > fq->delay)
            return output_frame(avctx, dn, layout, planes, ops);
    }

    if (ff_inlink_acknowledge_status(inlink, &status, &pts)) {
        /* the end of the stream: the window of the last frames is truncated */
        while (fq->nb_out < fq->nb_in) {
            ret = output_frame(avctx, dn, layout, planes, ops);
            if (ret < 0)
                return ret;
        }
        ff_outlink_set_status(outlink, status, pts);
        return 0;
    }

    FF_FILTER_FORWARD_WANTED(outlink, inlink);
    return FFERROR_NOT_READY;
}
