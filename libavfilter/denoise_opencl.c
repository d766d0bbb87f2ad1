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
#include "formats.h"
#include "opencl_source.h"
#include "video.h"

const enum AVPixelFormat ff_denoise_opencl_formats[] = {
    AV_PIX_FMT_GRAY8,     AV_PIX_FMT_GRAY16,
    AV_PIX_FMT_YUV420P,   AV_PIX_FMT_YUV422P,   AV_PIX_FMT_YUV444P,
    AV_PIX_FMT_YUV440P,   AV_PIX_FMT_YUV410P,   AV_PIX_FMT_YUV411P,
    AV_PIX_FMT_YUVJ420P,  AV_PIX_FMT_YUVJ422P,  AV_PIX_FMT_YUVJ444P,
    AV_PIX_FMT_YUV420P16, AV_PIX_FMT_YUV422P16, AV_PIX_FMT_YUV444P16,
    AV_PIX_FMT_NV12,      AV_PIX_FMT_NV16,      AV_PIX_FMT_NV24,
    AV_PIX_FMT_P010,
#ifdef AV_PIX_FMT_P012 /* not in 5.1 */
    AV_PIX_FMT_P012,
#endif
    AV_PIX_FMT_P016,
    AV_PIX_FMT_P210,      AV_PIX_FMT_P216,      AV_PIX_FMT_P410,
    AV_PIX_FMT_P416,
    AV_PIX_FMT_GBRP,      AV_PIX_FMT_GBRP16,
#ifdef AV_PIX_FMT_YUV444P10MSB /* 8.0 and later */
    AV_PIX_FMT_YUV444P10MSB, AV_PIX_FMT_YUV444P12MSB,
    AV_PIX_FMT_GBRP10MSB,    AV_PIX_FMT_GBRP12MSB,
#endif
    AV_PIX_FMT_YUVJ440P,  AV_PIX_FMT_YUVJ411P,
    /* with alpha, which passes through unchanged */
    AV_PIX_FMT_YA8,       AV_PIX_FMT_YA16,
    AV_PIX_FMT_YUVA420P,  AV_PIX_FMT_YUVA422P,  AV_PIX_FMT_YUVA444P,
    AV_PIX_FMT_YUVA420P16, AV_PIX_FMT_YUVA422P16, AV_PIX_FMT_YUVA444P16,
    AV_PIX_FMT_GBRAP,     AV_PIX_FMT_GBRAP16,
    AV_PIX_FMT_RGBA,      AV_PIX_FMT_BGRA,      AV_PIX_FMT_ARGB,
    AV_PIX_FMT_ABGR,      AV_PIX_FMT_RGBA64,    AV_PIX_FMT_BGRA64,
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 32, 100) /* 6.0 and later */
    AV_PIX_FMT_VUYA,
#endif
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(59, 42, 100) /* 8.0 and later */
    AV_PIX_FMT_AYUV,
#endif
    /* floats, nominally 0 to 1, written back neither rounded nor clamped
     * (not the half floats, which the hwcontext would take for 16-bit
     * integers) */
    AV_PIX_FMT_GRAYF32,   AV_PIX_FMT_GBRPF32,   AV_PIX_FMT_GBRAPF32,
#ifdef AV_PIX_FMT_YAF32 /* 8.0 and later */
    AV_PIX_FMT_YAF32,
#endif
    AV_PIX_FMT_NONE,
};

/* Whether fmt is in list, which ends with AV_PIX_FMT_NONE. */
static int format_listed(const enum AVPixelFormat *list, enum AVPixelFormat fmt)
{
    for (int i = 0; list[i] != AV_PIX_FMT_NONE; i++)
        if (list[i] == fmt)
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

/*
 * The channel of an OpenCL image that holds component c: its rank among the
 * components of its plane. The hwcontext orders the channels of an image
 * (CL_RG, CL_RGBA, CL_BGRA, CL_ARGB, CL_ABGR) so that a read returns them
 * in the order of the format's components, whatever their order in memory.
 */
static int image_channel(const AVPixFmtDescriptor *desc, int c)
{
    int rank = 0;

    for (int i = 0; i < c; i++)
        rank += desc->comp[i].plane == desc->comp[c].plane;
    return rank;
}

int ff_denoise_opencl_get_layout(void *log_ctx, enum AVPixelFormat sw_format,
                                 int width, int height, DenoiseLayout *layout)
{
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(sw_format);

    if (!desc || !format_listed(ff_denoise_opencl_formats, sw_format)) {
        log_supported_formats(log_ctx, sw_format);
        return AVERROR(ENOSYS);
    }

    memset(layout, 0, sizeof(*layout));
    layout->sw_format     = sw_format;
    layout->nb_components = desc->nb_components -
                            !!(desc->flags & AV_PIX_FMT_FLAG_ALPHA);
    layout->nb_planes     = av_pix_fmt_count_planes(sw_format);
    layout->is_rgb        = !!(desc->flags & AV_PIX_FMT_FLAG_RGB);
    layout->is_float      = !!(desc->flags & AV_PIX_FMT_FLAG_FLOAT);
    layout->shift         = desc->comp[0].shift;
    layout->container     = layout->is_float ? 1.0f :
                            desc->comp[0].depth + desc->comp[0].shift > 8 ?
                            65535.0f : 255.0f;

    /* The alpha component, last, is never filtered, but the size of its
     * image is still needed to copy it. */
    for (int c = 0; c < desc->nb_components; c++) {
        const AVComponentDescriptor *cd = &desc->comp[c];
        int chroma = ff_denoise_opencl_is_chroma(layout, c);
        DenoiseComponent *comp = &layout->comp[c];

        comp->plane   = cd->plane;
        comp->channel = image_channel(desc, c);
        comp->width   = chroma ? AV_CEIL_RSHIFT(width,  desc->log2_chroma_w) : width;
        comp->height  = chroma ? AV_CEIL_RSHIFT(height, desc->log2_chroma_h) : height;
        layout->plane_width[cd->plane]  = comp->width;
        layout->plane_height[cd->plane] = comp->height;
        layout->plane_pitch[cd->plane]  = comp->width;
    }
    return 0;
}

void ff_denoise_opencl_pad_components(DenoiseLayout *layout, int min_size)
{
    for (int c = 0; c < layout->nb_components; c++) {
        DenoiseComponent *comp = &layout->comp[c];

        comp->width  = FFMAX(comp->width,  min_size);
        comp->height = FFMAX(comp->height, min_size);
        layout->plane_pitch[comp->plane] = comp->width;
    }
}

/* Whether device_ref is an OpenCL device. */
static int is_opencl_device(const AVBufferRef *device_ref)
{
    return device_ref &&
           ((AVHWDeviceContext *)device_ref->data)->type == AV_HWDEVICE_TYPE_OPENCL;
}

/* The device's CL_DEVICE_TYPE bits (0 where it does not say). */
static cl_device_type device_type(cl_device_id device)
{
    cl_device_type type = 0;

    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
    return type;
}

static int has_image_support(cl_device_id device)
{
    cl_bool images = CL_FALSE;

    return clGetDeviceInfo(device, CL_DEVICE_IMAGE_SUPPORT, sizeof(images),
                           &images, NULL) == CL_SUCCESS && images;
}

static size_t device_max_work_group(cl_device_id device)
{
    size_t size = 0;

    if (clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(size),
                        &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

/* How well a device suits the filters, for the choice of a default one. */
enum DeviceRank {
    DEVICE_NONE,
    DEVICE_UNUSABLE,    ///< without images or work-groups of 128
    DEVICE_USABLE,
    DEVICE_USABLE_GPU,
};

static enum DeviceRank rank_device(cl_device_id device)
{
    if (!has_image_support(device) ||
        device_max_work_group(device) < DENOISE_LOCAL_W * DENOISE_LOCAL_H)
        return DEVICE_UNUSABLE;
    return device_type(device) & CL_DEVICE_TYPE_GPU ? DEVICE_USABLE_GPU : DEVICE_USABLE;
}

/* Rank the devices of platform p, the p-th, and name the best so far
 * "P.D" in name. */
static int rank_platform_devices(cl_platform_id platform, cl_uint p,
                                 enum DeviceRank *best, char *name, size_t size)
{
    cl_device_id *devices;
    cl_uint nb_devices = 0;

    /* as for av_hwdevice_ctx_create(): every device, a platform without
     * any skipped */
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, NULL,
                       &nb_devices) != CL_SUCCESS || !nb_devices)
        return 0;
    devices = av_malloc_array(nb_devices, sizeof(*devices));
    if (!devices)
        return AVERROR(ENOMEM);
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, nb_devices, devices,
                       NULL) != CL_SUCCESS)
        nb_devices = 0;
    for (cl_uint d = 0; d < nb_devices && *best < DEVICE_USABLE_GPU; d++) {
        enum DeviceRank rank = rank_device(devices[d]);

        if (rank > *best) {
            *best = rank;
            snprintf(name, size, "%u.%u", p, d);
        }
    }
    av_free(devices);
    return 0;
}

/*
 * The indices "P.D", as av_hwdevice_ctx_create() takes them, of the device
 * the filter creates when it is given none: the first GPU the filters can
 * run on, else the first device they can run on, else the first device
 * (whose set-up then says what it lacks).
 */
static int find_default_device(char *name, size_t size)
{
    enum DeviceRank best = DEVICE_NONE;
    cl_platform_id *platforms;
    cl_uint nb_platforms = 0;
    int err = 0;

    /* the ICD loader's error where it finds no platform too */
    if (clGetPlatformIDs(0, NULL, &nb_platforms) != CL_SUCCESS || !nb_platforms)
        return AVERROR(ENODEV);
    platforms = av_malloc_array(nb_platforms, sizeof(*platforms));
    if (!platforms)
        return AVERROR(ENOMEM);
    if (clGetPlatformIDs(nb_platforms, platforms, NULL) != CL_SUCCESS)
        err = AVERROR_EXTERNAL;
    for (cl_uint p = 0; !err && p < nb_platforms && best < DEVICE_USABLE_GPU; p++)
        err = rank_platform_devices(platforms[p], p, &best, name, size);
    av_free(platforms);
    if (err < 0)
        return err;
    return best == DEVICE_NONE ? AVERROR(ENODEV) : 0;
}

/*
 * The OpenCL device for software frames that the filter creates itself: the
 * device option's, else one derived from the device of another type it
 * was given, else, given none, its default one. An OpenCL device given
 * after this (FFmpeg 5.1's ffmpeg gives it after init) takes the default
 * one's place. Only the device option's failure fails the filter here; the
 * others are reported if software frames come.
 */
static av_cold int create_software_device(AVFilterContext *avctx,
                                          DenoiseOpenCLContext *dn)
{
    int err;

    if (dn->device) {
        err = av_hwdevice_ctx_create(&dn->sw_device_ref, AV_HWDEVICE_TYPE_OPENCL,
                                     dn->device, NULL, 0);
        if (err < 0)
            av_log(avctx, AV_LOG_ERROR, "Failed to create OpenCL device %s: %s.\n",
                   dn->device, av_err2str(err));
        return err;
    }
    if (is_opencl_device(avctx->hw_device_ctx))
        return 0;
    if (avctx->hw_device_ctx &&
        av_hwdevice_ctx_create_derived(&dn->sw_device_ref, AV_HWDEVICE_TYPE_OPENCL,
                                       avctx->hw_device_ctx, 0) >= 0)
        return 0;
    dn->sw_device_is_default = 1;
    dn->sw_device_err = find_default_device(dn->default_device,
                                            sizeof(dn->default_device));
    if (dn->sw_device_err >= 0)
        dn->sw_device_err = av_hwdevice_ctx_create(&dn->sw_device_ref,
                                                   AV_HWDEVICE_TYPE_OPENCL,
                                                   dn->default_device, NULL, 0);
    return 0;
}

av_cold int ff_denoise_opencl_init_filter(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    int err;

    if (dn->sigma < 0 && dn->sigma != DENOISE_SIGMA_AUTO && dn->sigma != DENOISE_SIGMA_CURVE) {
        av_log(avctx, AV_LOG_ERROR, "sigma must be from 0 to 255, auto (-1) or "
               "curve (-2).\n");
        return AVERROR(EINVAL);
    }
    err = create_software_device(avctx, dn);
    if (err < 0)
        return err;
    return ff_opencl_filter_init(avctx);
}

/*
 * The device software frames are filtered on: the device option's, else
 * the OpenCL device the filter was given, else the one it derived or its
 * default one; NULL where there is none.
 */
static AVBufferRef *software_device(const AVFilterContext *avctx,
                                    const DenoiseOpenCLContext *dn)
{
    if (dn->sw_device_ref && !dn->sw_device_is_default)
        return dn->sw_device_ref;
    if (is_opencl_device(avctx->hw_device_ctx))
        return avctx->hw_device_ctx;
    return dn->sw_device_ref;
}

int ff_denoise_opencl_query_formats(const AVFilterContext *avctx,
                                    AVFilterFormatsConfig **cfg_in,
                                    AVFilterFormatsConfig **cfg_out)
{
    const DenoiseOpenCLContext *dn = &((const DenoiseFilterContext *)avctx->priv)->dn;
    AVBufferRef *device_ref = software_device(avctx, dn);
    AVHWFramesConstraints *constraints = NULL;
    const enum AVPixelFormat *device_formats = NULL;
    AVFilterFormats *formats = NULL;
    int err;

    err = ff_add_format(&formats, AV_PIX_FMT_OPENCL);
    if (err < 0)
        return err;
    /* without a device, every software format is accepted so that
     * config_input() can say what is missing */
    if (device_ref) {
        constraints = av_hwdevice_get_hwframe_constraints(device_ref, NULL);
        device_formats = constraints ? constraints->valid_sw_formats : NULL;
    }
    for (int i = 0; ff_denoise_opencl_formats[i] != AV_PIX_FMT_NONE && err >= 0; i++) {
        enum AVPixelFormat fmt = ff_denoise_opencl_formats[i];
        if (!device_formats || format_listed(device_formats, fmt))
            err = ff_add_format(&formats, fmt);
    }
    av_hwframe_constraints_free(&constraints);
    if (err < 0) {
        ff_formats_unref(&formats);
        return err;
    }
    return ff_set_common_formats2(avctx, cfg_in, cfg_out, formats);
}

/* Name the device software frames are filtered on, and where it is from. */
static void log_software_device(AVFilterContext *avctx,
                                const DenoiseOpenCLContext *dn,
                                const AVBufferRef *device_ref)
{
    const AVOpenCLDeviceContext *hwctx = ((AVHWDeviceContext *)device_ref->data)->hwctx;
    char name[256] = "", device[96];
    const char *why = "";
    cl_device_type type = device_type(hwctx->device_id);

    clGetDeviceInfo(hwctx->device_id, CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
    if (device_ref != dn->sw_device_ref) {
        snprintf(device, sizeof(device), "the filter graph's OpenCL device");
    } else if (dn->sw_device_is_default || dn->device) {
        snprintf(device, sizeof(device), "OpenCL device %s",
                 dn->device ? dn->device : dn->default_device);
        why = dn->device ? ": the device option's" : ": the default, no device given";
    } else {
        snprintf(device, sizeof(device), "an OpenCL device derived from the "
                 "filter graph's %s device", av_hwdevice_get_type_name(
                 ((AVHWDeviceContext *)avctx->hw_device_ctx->data)->type));
    }
    av_log(avctx, AV_LOG_VERBOSE, "Software frames on %s, %s (%s)%s.\n",
           device, name,
           type & CL_DEVICE_TYPE_GPU ? "GPU" :
           type & CL_DEVICE_TYPE_CPU ? "CPU" : "neither GPU nor CPU", why);
}

/* The filter's OpenCL device, for software frames. */
static int set_device(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    OpenCLFilterContext *ocf = avctx->priv;
    AVBufferRef *device_ref = software_device(avctx, dn);

    if (!device_ref) {
        int err = dn->sw_device_err < 0 ? dn->sw_device_err : AVERROR(ENODEV);

        if (err == AVERROR(ENODEV))
            av_log(avctx, AV_LOG_ERROR, "Software frames need an OpenCL "
                   "device, and none was found.\n");
        else
            av_log(avctx, AV_LOG_ERROR, "Failed to create an OpenCL device "
                   "for software frames: %s.\n", av_err2str(err));
        return err;
    }
    log_software_device(avctx, dn, device_ref);
    av_buffer_unref(&ocf->device_ref);
    ocf->device_ref = av_buffer_ref(device_ref);
    if (!ocf->device_ref)
        return AVERROR(ENOMEM);
    ocf->device = (AVHWDeviceContext *)ocf->device_ref->data;
    ocf->hwctx  = ocf->device->hwctx;
    return 0;
}

int ff_denoise_opencl_config_input(AVFilterLink *inlink,
                                   DenoiseOpenCLContext *dn)
{
    AVFilterContext *avctx = inlink->dst;
    FilterLink *l = ff_filter_link(inlink);
    enum AVPixelFormat sw_format = inlink->format;
    int err;

    if (inlink->format == AV_PIX_FMT_OPENCL) {
        err = ff_opencl_filter_config_input(inlink);
        if (err < 0)
            return err;
        sw_format = ((AVHWFramesContext *)l->hw_frames_ctx->data)->sw_format;
    } else {
        err = set_device(avctx, dn);
        if (err < 0)
            return err;
    }
    dn->width  = inlink->w;
    dn->height = inlink->h;
    return ff_denoise_opencl_get_layout(avctx, sw_format, inlink->w, inlink->h,
                                        &dn->layout);
}

/*
 * 0 where the device's images hold frames of width x height (the OpenCL
 * frames of every format the filters take have no plane larger than the
 * frame), else an error naming the device's limit: the allocation of a
 * frame too large would fail only when the first frame comes, as a lack
 * of memory.
 */
static int check_image_size(AVFilterContext *avctx, int width, int height)
{
    OpenCLFilterContext *ocf = avctx->priv;
    size_t max_width = 0, max_height = 0;

    if (clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_IMAGE2D_MAX_WIDTH,
                        sizeof(max_width), &max_width, NULL) != CL_SUCCESS ||
        clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_IMAGE2D_MAX_HEIGHT,
                        sizeof(max_height), &max_height, NULL) != CL_SUCCESS)
        return 0;
    if ((size_t)width <= max_width && (size_t)height <= max_height)
        return 0;
    av_log(avctx, AV_LOG_ERROR, "Frames of %dx%d are larger than the OpenCL "
           "device's images, at most %zux%zu: scale or crop them to fit.\n",
           width, height, max_width, max_height);
    return AVERROR(EINVAL);
}

/* The OpenCL frames that software frames are uploaded into and downloaded
 * from. */
static int config_software_output(AVFilterLink *outlink,
                                  DenoiseOpenCLContext *dn)
{
    AVFilterContext *avctx = outlink->src;
    OpenCLFilterContext *ocf = avctx->priv;
    AVHWFramesContext *frames;
    int err;

    err = check_image_size(avctx, dn->width, dn->height);
    if (err < 0)
        return err;
    dn->sw_frames_ref = av_hwframe_ctx_alloc(ocf->device_ref);
    if (!dn->sw_frames_ref)
        return AVERROR(ENOMEM);
    frames = (AVHWFramesContext *)dn->sw_frames_ref->data;
    frames->format    = AV_PIX_FMT_OPENCL;
    frames->sw_format = dn->layout.sw_format;
    frames->width     = dn->width;
    frames->height    = dn->height;
    err = av_hwframe_ctx_init(dn->sw_frames_ref);
    if (err < 0) {
        av_log(avctx, AV_LOG_ERROR, "Failed to create OpenCL frames of "
               "%dx%d %s: %s.\n", dn->width, dn->height,
               av_get_pix_fmt_name(dn->layout.sw_format), av_err2str(err));
        return err;
    }
    outlink->w = dn->width;
    outlink->h = dn->height;
    return 0;
}

/* err, after logging the filter's memory hint if err is the first lack of
 * memory. */
static int memory_advice(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                         int err)
{
    if (err == AVERROR(ENOMEM) && dn->memory_hint && !dn->memory_hint_logged) {
        av_log(avctx, AV_LOG_ERROR, "%s\n", dn->memory_hint);
        dn->memory_hint_logged = 1;
    }
    return err;
}

int ff_denoise_opencl_config_output(AVFilterLink *outlink,
                                    DenoiseOpenCLContext *dn,
                                    const DenoiseQueueOps *ops)
{
    AVFilterContext *avctx = outlink->src;
    DenoiseQueueSize size = { 0 };
    int err;

    if (dn->initialised) {
        av_log(avctx, AV_LOG_ERROR, "The filter cannot be configured twice.\n");
        return AVERROR(EINVAL);
    }
    if (outlink->format == AV_PIX_FMT_OPENCL)
        err = ff_opencl_filter_config_output(outlink);
    else
        err = config_software_output(outlink, dn);
    if (err < 0)
        return err;
    err = ops->init(avctx, &size);
    if (err < 0)
        return memory_advice(avctx, dn, err);
    av_assert0(size.ring >= size.delay + 1 && size.ring <= DENOISE_MAX_RING);
    dn->fq.ring  = size.ring;
    dn->fq.delay = size.delay;
    dn->initialised = 1;
    return 0;
}

int ff_denoise_opencl_selected(const DenoiseOpenCLContext *dn, int c)
{
    return c < dn->layout.nb_components && (dn->planes & (1 << c));
}

int ff_denoise_opencl_joint_possible(const DenoiseOpenCLContext *dn)
{
    const DenoiseLayout *l = &dn->layout;

    if (l->nb_components < 3)
        return 0;
    for (int c = 0; c < 3; c++)
        if (!ff_denoise_opencl_selected(dn, c) ||
            l->comp[c].width  != l->comp[0].width ||
            l->comp[c].height != l->comp[0].height)
            return 0;
    return 1;
}

int ff_denoise_opencl_bytes_possible(const DenoiseOpenCLContext *dn)
{
    return dn->layout.container == 255.0f && dn->sigma != DENOISE_SIGMA_CURVE;
}

float ff_denoise_opencl_opponent_sigma(float sigma, int c)
{
    static const double gain[3] = { 1.0 / 3.0, 1.0 / 2.0, 3.0 / 8.0 };

    return (float)((double)sigma * sqrt(gain[c]));
}

/*
 * The noise of opponent channel c of RGB planes of estimated noise: the
 * squares of the rows of the transform (denoise_opponent_forward) weigh the
 * variances of R, G and B.
 */
static float estimated_opponent_sigma(const DenoiseOpenCLContext *dn, int c)
{
    static const double weight[3][3] = {
        { 1.0 / 9,  1.0 / 9, 1.0 / 9  },
        { 1.0 / 4,  0.0,     1.0 / 4  },
        { 1.0 / 16, 1.0 / 4, 1.0 / 16 },
    };
    double var = 0.0;

    for (int k = 0; k < 3; k++) {
        double sigma = ff_denoise_noise_sigma(dn, k, dn->noise.slot);
        var += weight[c][k] * sigma * sigma;
    }
    return (float)sqrt(var);
}

float ff_denoise_opencl_sigma(const DenoiseOpenCLContext *dn, int c,
                              int opponent)
{
    int chroma = ff_denoise_opencl_is_chroma(&dn->layout, c);

    if (dn->noise.mode == DENOISE_NOISE_FIXED) {
        if (opponent)
            return ff_denoise_opencl_opponent_sigma(dn->sigma, c);
        return chroma && dn->csigma >= 0 ? dn->csigma : dn->sigma;
    }
    if (opponent)
        return estimated_opponent_sigma(dn, c);
    if (chroma && dn->csigma >= 0)
        return dn->csigma;
    return ff_denoise_noise_sigma(dn, c, dn->noise.slot);
}

int ff_denoise_opencl_process_command(AVFilterContext *avctx,
                                      DenoiseOpenCLContext *dn, const char *cmd,
                                      const char *arg, char *res, int res_len,
                                      int flags)
{
    float sigma = dn->sigma, csigma = dn->csigma;
    int err = ff_filter_process_command(avctx, cmd, arg, res, res_len, flags);

    if (err < 0 || !dn->initialised)
        return err;
    /* the estimation is set up, or not, with the filter */
    if ((dn->noise.mode == DENOISE_NOISE_FIXED && dn->sigma < 0) ||
        (dn->noise.mode != DENOISE_NOISE_FIXED &&
         (dn->sigma != sigma || (dn->csigma < 0) != (csigma < 0)))) {
        av_log(avctx, AV_LOG_ERROR, "sigma cannot change from or to auto or "
               "curve while filtering, nor, with auto or curve, csigma from or "
               "to -1.\n");
        dn->sigma  = sigma;
        dn->csigma = csigma;
        return AVERROR(EINVAL);
    }
    return 0;
}

void ff_denoise_opencl_use_frame(DenoiseOpenCLContext *dn, int64_t t)
{
    dn->noise.slot = t % dn->fq.ring;
}

int ff_denoise_opencl_frame_enabled(const DenoiseFrameQueue *fq, int64_t n)
{
    av_assert1(n >= fq->nb_out && n < fq->nb_in);
    return !fq->disabled[n % fq->ring];
}

/*
 * Divisions and square roots correctly rounded where the device can, since
 * some devices (NVIDIA) divide with an error of a few units in the last
 * place by default, and a result on a rounding boundary would then be
 * quantised differently from one device to another and from the golden
 * model.
 */
static const char *build_options(cl_device_id device)
{
    cl_device_fp_config fp = 0;

    clGetDeviceInfo(device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
    return fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT ?
           "-cl-fp32-correctly-rounded-divide-sqrt" : NULL;
}

static const char *const shared_kernel_names[DENOISE_NB_KERNELS] = {
    [DENOISE_KERNEL_LOAD]              = "denoise_load_plane",
    [DENOISE_KERNEL_LOAD_U8]           = "denoise_load_plane_u8",
    [DENOISE_KERNEL_LOAD_FLOAT]        = "denoise_load_plane_float",
    [DENOISE_KERNEL_STORE]             = "denoise_store_plane",
    [DENOISE_KERNEL_STORE_FLOAT]       = "denoise_store_plane_float",
    [DENOISE_KERNEL_WRITE]             = "denoise_write_plane",
    [DENOISE_KERNEL_WRITE_FLOAT]       = "denoise_write_plane_float",
    [DENOISE_KERNEL_SEARCH]            = "patch_search",
    [DENOISE_KERNEL_SEARCH_TILED]      = "patch_search_tiled",
    [DENOISE_KERNEL_SEARCH_TILED_8X4]  = "patch_search_tiled_8x4",
    [DENOISE_KERNEL_SEARCH_SQUARES]    = "patch_search_squares",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4] = "patch_search_squares_8x4",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4_U7] = "patch_search_squares_8x4_u7",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9] = "patch_search_squares_8x4_u9",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9_KEYS] = "patch_search_squares_8x4_u9_keys",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11] = "patch_search_squares_8x4_u11",
    [DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11_KEYS] = "patch_search_squares_8x4_u11_keys",
    [DENOISE_KERNEL_SEARCH_ROWS]       = "patch_search_rows",
    [DENOISE_KERNEL_SEARCH_ROWS_SINGLE] = "patch_search_rows_single",
    [DENOISE_KERNEL_SEARCH_ROWS_8X3]   = "patch_search_rows_8x3",
    [DENOISE_KERNEL_SEARCH_ROWS_5X1]   = "patch_search_rows_5x1",
    [DENOISE_KERNEL_SEARCH_ROWS_5X1_KEYS] = "patch_search_rows_5x1_keys",
    [DENOISE_KERNEL_SEARCH_ROWS_5X1_U7] = "patch_search_rows_5x1_u7",
    [DENOISE_KERNEL_SEARCH_ROWS_5X1_U7_KEYS] = "patch_search_rows_5x1_u7_keys",
    [DENOISE_KERNEL_SEARCH_EDGE]       = "patch_search_edge",
    [DENOISE_KERNEL_OPPONENT_FORWARD]  = "denoise_opponent_forward",
    [DENOISE_KERNEL_OPPONENT_INVERSE]  = "denoise_opponent_inverse",
};

/* Whether shared kernel i is in the program: a search kernel only where a
 * search set up before the program may run it. */
static int in_program(const DenoiseOpenCLContext *dn, int i)
{
    return i < DENOISE_KERNEL_SEARCH || i > DENOISE_KERNEL_SEARCH_EDGE ||
           dn->search_kernels & (UINT64_C(1) << i);
}

/* The program's lines that leave out the search kernels no search runs
 * (patch_search.cl compiles each unless SKIP_<its name> is defined). */
static void define_skipped_searches(const DenoiseOpenCLContext *dn, AVBPrint *bp)
{
    for (int i = DENOISE_KERNEL_SEARCH; i <= DENOISE_KERNEL_SEARCH_EDGE; i++)
        if (!in_program(dn, i))
            av_bprintf(bp, "#define SKIP_%s\n", shared_kernel_names[i]);
}

static int create_shared_kernels(AVFilterContext *avctx,
                                 DenoiseOpenCLContext *dn)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_int cle;

    for (int i = 0; i < DENOISE_NB_KERNELS; i++) {
        if (!in_program(dn, i))
            continue;
        dn->kernels[i] = clCreateKernel(ocf->program, shared_kernel_names[i], &cle);
        if (!dn->kernels[i]) {
            av_log(avctx, AV_LOG_ERROR, "Failed to create %s kernel: %d.\n",
                   shared_kernel_names[i], cle);
            return AVERROR(EIO);
        }
    }
    return 0;
}

av_cold int ff_denoise_opencl_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                                   const char *defines, const char **sources,
                                   int nb_sources)
{
    OpenCLFilterContext *ocf = avctx->priv;
    static const char search_defines[] =
        "#define SEARCH_TILE "   AV_STRINGIFY(DENOISE_SEARCH_TILE)   "\n"
        "#define SEARCH_UNROLL " AV_STRINGIFY(DENOISE_SEARCH_UNROLL) "\n"
        "#define SEARCH_ROWS_UNROLL " AV_STRINGIFY(DENOISE_SEARCH_ROWS_UNROLL) "\n"
        "#define SEARCH_EDGE_LANES " AV_STRINGIFY(DENOISE_SEARCH_EDGE_LANES) "\n"
        "#define IO_ROWS " AV_STRINGIFY(DENOISE_IO_ROWS) "\n";
    const char *src[16];
    cl_command_queue_properties props = dn->profile ? CL_QUEUE_PROFILING_ENABLE : 0;
    size_t max_group;
    AVBPrint skipped;
    cl_int cle;
    int err, n = 0;

    av_assert0(nb_sources + 9 <= FF_ARRAY_ELEMS(src));
    av_assert0(!dn->ring_rgb || dn->load_bytes);
    if (!has_image_support(ocf->hwctx->device_id)) {
        av_log(avctx, AV_LOG_ERROR, "The OpenCL device has no image support; "
               "the filter reads and writes OpenCL frames as images.\n");
        return AVERROR(ENOSYS);
    }
    max_group = device_max_work_group(ocf->hwctx->device_id);
    if (max_group < DENOISE_LOCAL_W * DENOISE_LOCAL_H) {
        av_log(avctx, AV_LOG_ERROR, "The OpenCL device runs work-groups of at "
               "most %zu work-items; the filter needs %d.\n", max_group,
               DENOISE_LOCAL_W * DENOISE_LOCAL_H);
        return AVERROR(ENOSYS);
    }
    av_bprint_init(&skipped, 0, AV_BPRINT_SIZE_UNLIMITED);
    define_skipped_searches(dn, &skipped);
    if (!av_bprint_is_complete(&skipped)) {
        av_bprint_finalize(&skipped, NULL);
        return AVERROR(ENOMEM);
    }
    src[n++] = defines;
    src[n++] = dn->load_bytes ? "#define DENOISE_RING_BYTES 1\n" : "";
    src[n++] = dn->ring_rgb ? "#define DENOISE_RING_RGB 1\n" : "";
    src[n++] = search_defines;
    src[n++] = skipped.str;
    src[n++] = ff_denoise_noise_defines;
    src[n++] = ff_source_denoise_common_cl;
    src[n++] = ff_source_patch_search_cl;
    /* the estimator's kernels where the noise is estimated (sigma cannot
     * change from or to auto or curve while filtering) */
    if (dn->sigma < 0)
        src[n++] = ff_source_noise_estimate_cl;
    for (int i = 0; i < nb_sources; i++)
        src[n++] = sources[i];

    err = ff_opencl_filter_load_program_with_options(avctx, src, n,
                                                     build_options(ocf->hwctx->device_id));
    av_bprint_finalize(&skipped, NULL);
    if (err < 0)
        return err;

    dn->queue = clCreateCommandQueue(ocf->hwctx->context, ocf->hwctx->device_id,
                                     props, &cle);
    CL_FAIL_ON_ERROR(AVERROR(EIO), "Failed to create OpenCL command queue: %d.\n", cle);

    err = create_shared_kernels(avctx, dn);
    if (err < 0)
        return err;
    return ff_denoise_noise_init(avctx, dn);
fail:
    return err;
}

/* Replace *frame by dst, with *frame's data transferred into it and its
 * properties, unless err (of dst's allocation) is already negative; 'what'
 * names the transfer in the error message. dst is freed on failure. */
static int transfer_frame(AVFilterContext *avctx, AVFrame *dst, int err,
                          AVFrame **frame, const char *what)
{
    if (err >= 0)
        err = av_hwframe_transfer_data(dst, *frame, 0);
    if (err >= 0)
        err = av_frame_copy_props(dst, *frame);
    if (err < 0) {
        av_log(avctx, AV_LOG_ERROR, "Failed to %s a frame: %s.\n", what,
               av_err2str(err));
        av_frame_free(&dst);
        return err;
    }
    av_frame_free(frame);
    *frame = dst;
    return 0;
}

/* A software frame into an OpenCL frame of the filter's frames context. */
static int upload_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                        AVFrame **frame)
{
    AVFrame *hw = av_frame_alloc();

    if (!hw)
        return AVERROR(ENOMEM);
    return transfer_frame(avctx, hw,
                          av_hwframe_get_buffer(dn->sw_frames_ref, hw, 0),
                          frame, "upload");
}

/* An OpenCL frame of the filter's frames context into a software frame. */
static int download_frame(AVFilterContext *avctx, AVFrame **frame)
{
    AVFilterLink *outlink = avctx->outputs[0];
    AVFrame *sw = ff_get_video_buffer(outlink, outlink->w, outlink->h);

    if (!sw)
        return AVERROR(ENOMEM);
    return transfer_frame(avctx, sw, 0, frame, "download");
}

/* Free the frame enqueued last, unsent (an error or the filter's end). */
static void drop_pending(DenoiseOpenCLContext *dn)
{
    DenoiseFrameQueue *fq = &dn->fq;

    if (fq->pending_done)
        clReleaseEvent(fq->pending_done);
    fq->pending_done = NULL;
    av_frame_free(&fq->pending);
    av_frame_free(&fq->pending_in);
}

static void log_average_stage_times(AVFilterContext *avctx,
                                    const DenoiseOpenCLContext *dn)
{
    for (int s = 0; s < DENOISE_MAX_STAGES; s++)
        if (dn->stage_names[s])
            av_log(avctx, AV_LOG_INFO, "%s: %.3f ms per frame on average\n",
                   dn->stage_names[s],
                   dn->stage_total_ms[s] / dn->nb_frames_profiled);
}

av_cold void ff_denoise_opencl_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    cl_int cle;

    if (dn->profile && dn->nb_frames_profiled)
        log_average_stage_times(avctx, dn);
    if (dn->queue)
        clFinish(dn->queue);
    drop_pending(dn);
    for (int i = 0; i < DENOISE_MAX_RING; i++) {
        if (dn->fq.loaded[i])
            clReleaseEvent(dn->fq.loaded[i]);
        av_frame_free(&dn->fq.frames[i]);
    }
    for (int i = 0; i < DENOISE_NB_KERNELS; i++)
        CL_RELEASE_KERNEL(dn->kernels[i]);
    ff_denoise_noise_uninit(avctx, dn);
    CL_RELEASE_QUEUE(dn->queue);
    av_buffer_unref(&dn->sw_frames_ref);
    av_buffer_unref(&dn->sw_device_ref);
}

/* What an OpenCL error code means, where it is a lack of memory. */
static const char *memory_error(cl_int cle)
{
    switch (cle) {
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
        return "out of device memory";
    case CL_OUT_OF_RESOURCES:
        return "out of device resources, such as memory";
    case CL_OUT_OF_HOST_MEMORY:
        return "out of host memory";
    }
    return NULL;
}

int ff_denoise_opencl_error(AVFilterContext *avctx, const char *what, cl_int cle)
{
    const char *memory = memory_error(cle);
    /* what the code means where a device's limits gave it */
    const char *text = cle == CL_INVALID_WORK_GROUP_SIZE ?
                       "a work-group larger than the device runs for this kernel" :
                       memory;

    av_log(avctx, AV_LOG_ERROR, "%s: %d%s%s%s.\n", what, cle,
           text ? " (" : "", text ? text : "", text ? ")" : "");
    return memory && cle != CL_OUT_OF_RESOURCES ? AVERROR(ENOMEM) : AVERROR(EIO);
}

static cl_mem create_buffer(AVFilterContext *avctx, cl_mem_flags flags,
                            size_t size, const void *data)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_ulong largest = 0;
    cl_int cle;
    cl_mem mem;
    char what[128];

    mem = clCreateBuffer(ocf->hwctx->context, flags, FFMAX(size, 1),
                         (void *)data, &cle);
    if (mem)
        return mem;
    if (cle == CL_INVALID_BUFFER_SIZE)
        clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_MAX_MEM_ALLOC_SIZE,
                        sizeof(largest), &largest, NULL);
    if (largest && size > largest)
        snprintf(what, sizeof(what), "The OpenCL device refused a buffer of %zu "
                 "bytes, over its largest of %"PRIu64" bytes", size, (uint64_t)largest);
    else
        snprintf(what, sizeof(what), "The OpenCL device refused a buffer of %zu bytes",
                 size);
    ff_denoise_opencl_error(avctx, what, cle);
    return NULL;
}

cl_mem ff_denoise_opencl_alloc(AVFilterContext *avctx, size_t size)
{
    return create_buffer(avctx, CL_MEM_READ_WRITE, size, NULL);
}

cl_mem ff_denoise_opencl_table(AVFilterContext *avctx, const void *data, size_t size)
{
    return create_buffer(avctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size, data);
}

static size_t local_mem_size(AVFilterContext *avctx)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_ulong size = 0;

    if (clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_LOCAL_MEM_SIZE,
                        sizeof(size), &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

static size_t max_work_group(AVFilterContext *avctx, cl_kernel kernel)
{
    OpenCLFilterContext *ocf = avctx->priv;
    size_t size = 0;

    if (clGetKernelWorkGroupInfo(kernel, ocf->hwctx->device_id,
                                 CL_KERNEL_WORK_GROUP_SIZE, sizeof(size),
                                 &size, NULL) != CL_SUCCESS)
        return 0;
    return size;
}

/* A search entry point and the offsets of the window it covers a pass. */
typedef struct SearchPasses {
    int kernel, unroll;
} SearchPasses;

/*
 * The entry point of 'entries' whose passes over the window's 2 * radius + 1
 * columns are fewest, then cover the fewest columns outside it; their local
 * memory holds max_unroll offsets a pass.
 */
static int fewest_passes(const SearchPasses *entries, int nb_entries, int radius,
                         int max_unroll)
{
    int width = 2 * radius + 1, best = 0, best_passes = INT_MAX, best_cost = INT_MAX;

    for (int i = 0; i < nb_entries; i++) {
        int passes = (width + entries[i].unroll - 1) / entries[i].unroll;
        int cost   = passes * entries[i].unroll;

        av_assert0(entries[i].unroll <= max_unroll);
        if (passes < best_passes || (passes == best_passes && cost < best_cost)) {
            best        = i;
            best_passes = passes;
            best_cost   = cost;
        }
    }
    return entries[best].kernel;
}

/*
 * The squares search for 8x8 patches on a step of 4: 7, 8, 9 or 11 offsets a
 * pass (for the default window of 21, 2 passes of 11: on an H100 6 % faster
 * than 3 of 7, 11 % than 3 of 8; for bm3d_gpu `fast`'s second window of 17,
 * 2 passes of 9). A pass's block sums use patch_search_tiled's local buffer,
 * which holds them for at most DENOISE_SEARCH_UNROLL * 4 offsets (blocks of
 * 4).
 */
static int squares_8x4_entry(int radius)
{
    static const SearchPasses entries[] = {
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4,     8 },
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4_U7,  7 },
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9,  9 },
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11, 11 },
    };

    return fewest_passes(entries, FF_ARRAY_ELEMS(entries), radius,
                         DENOISE_SEARCH_UNROLL * 4);
}

/*
 * The rows search for 5x5 patches on a step of 1: 8 or 7 offsets a pass (for
 * the default window of 21, 3 passes of 7: on an H100 its search 4.32 ->
 * 4.05 ms at 1080p). A pass's row sums take DENOISE_SEARCH_ROWS_UNROLL
 * offsets' local memory at most.
 */
static int rows_5x1_entry(int radius)
{
    static const SearchPasses entries[] = {
        { DENOISE_KERNEL_SEARCH_ROWS_5X1,    8 },
        { DENOISE_KERNEL_SEARCH_ROWS_5X1_U7, 7 },
    };

    return fewest_passes(entries, FF_ARRAY_ELEMS(entries), radius,
                         DENOISE_SEARCH_ROWS_UNROLL);
}

/*
 * The rows search's entry point for this patch and step: compiled for
 * bm3d_gpu `ref`'s 8x8 patches on a step of 3 and nlmeans_gpu's p=5:step=1
 * (on the H100 its search 7.13 -> 5.74 ms at 1080p), or for blocks of one
 * sample, or the generic one.
 */
static int rows_entry(int patch, int step, int block, int radius)
{
    if (patch == 8 && step == 3)
        return DENOISE_KERNEL_SEARCH_ROWS_8X3;
    if (patch == 5 && step == 1)
        return rows_5x1_entry(radius);
    return block == 1 ? DENOISE_KERNEL_SEARCH_ROWS_SINGLE : DENOISE_KERNEL_SEARCH_ROWS;
}

/*
 * The entry point of the same search with its table as 32-bit keys, or
 * 'entry' itself where there is none.
 */
static int keys_entry(int entry)
{
    static const int with_keys[][2] = {
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11, DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11_KEYS },
        { DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9,  DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9_KEYS },
        { DENOISE_KERNEL_SEARCH_ROWS_5X1,        DENOISE_KERNEL_SEARCH_ROWS_5X1_KEYS },
        { DENOISE_KERNEL_SEARCH_ROWS_5X1_U7,     DENOISE_KERNEL_SEARCH_ROWS_5X1_U7_KEYS },
    };

    for (int i = 0; i < FF_ARRAY_ELEMS(with_keys); i++)
        if (with_keys[i][0] == entry)
            return with_keys[i][1];
    return entry;
}

int ff_denoise_opencl_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          cl_kernel kernel, const OpenCLKernelArg *args,
                          int nb_args, size_t width, size_t height,
                          size_t local_w, size_t local_h, int stage)
{
    size_t local[2]  = { local_w ? local_w : DENOISE_LOCAL_W,
                         local_h ? local_h : DENOISE_LOCAL_H };
    size_t global[2] = { FFALIGN(width, local[0]), FFALIGN(height, local[1]) };
    cl_event event = NULL;
    cl_int cle;

    for (int i = 0; i < nb_args; i++) {
        cle = clSetKernelArg(kernel, i, args[i].arg_size, args[i].arg_val);
        if (cle != CL_SUCCESS) {
            av_log(avctx, AV_LOG_ERROR, "Failed to set kernel argument %d: "
                   "%d.\n", i, cle);
            return AVERROR(EIO);
        }
    }
    cle = clEnqueueNDRangeKernel(dn->queue, kernel, 2, NULL, global, local, 0,
                                 NULL, dn->profile ? &event : NULL);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to enqueue kernel", cle);
    if (event) {
        cle = clWaitForEvents(1, &event);
        if (cle == CL_SUCCESS && stage >= 0 && stage < DENOISE_MAX_STAGES)
            dn->stage_ms[stage] += ff_opencl_get_event_time(event) / 1e6;
        clReleaseEvent(event);
        if (cle != CL_SUCCESS)
            return ff_denoise_opencl_error(avctx, "Kernel failed", cle);
    }
    return 0;
}

int ff_denoise_opencl_opponent(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, int slot, int inverse)
{
    int width  = dn->layout.comp[0].width;
    int height = dn->layout.comp[0].height;
    cl_uint offset = (cl_uint)slot * width * height;
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(planes[0]), DENOISE_ARG(planes[1]), DENOISE_ARG(planes[2]),
        DENOISE_ARG(width), DENOISE_ARG(height), DENOISE_ARG(offset),
    };
    cl_kernel k = dn->kernels[inverse ? DENOISE_KERNEL_OPPONENT_INVERSE :
                                        DENOISE_KERNEL_OPPONENT_FORWARD];

    return ff_denoise_opencl_run(avctx, dn, k, args, FF_ARRAY_ELEMS(args),
                                 width, height, 0, 0, 0);
}

/* Log the kernel time of each stage of the frame enqueued last. */
static void log_frame_stage_times(AVFilterContext *avctx,
                                  DenoiseOpenCLContext *dn)
{
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

/*
 * A marker after the commands of a frame, whose event says when they are
 * done; the commands are submitted to the device. When profiling, the
 * kernels are already done (each launch waited for its own): log their
 * times.
 */
static int mark_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                      cl_event *done)
{
    cl_int cle = clEnqueueMarkerWithWaitList(dn->queue, 0, NULL, done);

    if (cle == CL_SUCCESS) {
        cle = clFlush(dn->queue);
        if (cle != CL_SUCCESS)
            clReleaseEvent(*done);
    }
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to submit the frame's commands", cle);
    if (dn->profile)
        log_frame_stage_times(avctx, dn);
    return 0;
}

/*
 * Send the frame enqueued last, once its commands are done. Returns 1 when
 * a frame was sent, 0 when none was pending.
 */
static int send_pending(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    DenoiseFrameQueue *fq = &dn->fq;
    AVFrame *out = fq->pending;
    cl_int cle;
    int err;

    if (!out)
        return 0;
    cle = clWaitForEvents(1, &fq->pending_done);
    if (cle != CL_SUCCESS) {
        /* the frame's own status tells why, where it failed in the queue */
        cl_int status = CL_SUCCESS;

        clGetEventInfo(fq->pending_done, CL_EVENT_COMMAND_EXECUTION_STATUS,
                       sizeof(status), &status, NULL);
        drop_pending(dn);
        return ff_denoise_opencl_error(avctx, "Failed to finish a frame",
                                       status < 0 ? status : cle);
    }
    fq->pending = NULL;
    drop_pending(dn);
    if (dn->sw_frames_ref) {
        err = download_frame(avctx, &out);
        if (err < 0) {
            av_frame_free(&out);
            return err;
        }
    }
    err = ff_filter_frame(avctx->outputs[0], out);
    return err < 0 ? err : 1;
}

/*
 * Enqueue the conversion of one component of a frame to a float plane, in
 * slot 'slot' of the ring of planes dst.
 */
static int load_component(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          const AVFrame *frame, int c, cl_mem dst, int slot)
{
    const DenoiseLayout *layout = &dn->layout;
    const DenoiseComponent *comp = &layout->comp[c];
    cl_mem src = (cl_mem)frame->data[comp->plane];
    cl_uint offset = (cl_uint)slot * comp->width * comp->height;
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(src), DENOISE_ARG(comp->channel), DENOISE_ARG(dst),
        DENOISE_ARG(comp->width), DENOISE_ARG(comp->height),
        DENOISE_ARG(layout->container), DENOISE_ARG(offset),
    };
    int kernel = dn->load_bytes      ? DENOISE_KERNEL_LOAD_U8    :
                 layout->is_float    ? DENOISE_KERNEL_LOAD_FLOAT :
                                       DENOISE_KERNEL_LOAD;

    av_assert0(!dn->load_bytes || ff_denoise_opencl_bytes_possible(dn));
    return ff_denoise_opencl_run(avctx, dn, dn->kernels[kernel],
                                 args, FF_ARRAY_ELEMS(args), comp->width,
                                 ff_denoise_opencl_io_rows(comp->height), 0, 0, 0);
}

int ff_denoise_opencl_load_frame(AVFilterContext *avctx,
                                 DenoiseOpenCLContext *dn, const AVFrame *in,
                                 cl_mem *rings, const int *slots, int opponent)
{
    for (int c = 0; c < dn->layout.nb_components; c++) {
        int err;

        if (!ff_denoise_opencl_selected(dn, c))
            continue;
        err = load_component(avctx, dn, in, c, rings[c], slots[c]);
        if (err < 0)
            return err;
    }
    if (dn->noise.mode != DENOISE_NOISE_FIXED) {
        int err = ff_denoise_noise_estimate(avctx, dn, in, rings, slots,
                                            dn->fq.nb_in % dn->fq.ring);
        if (err < 0)
            return err;
    }
    if (!opponent || dn->ring_rgb)
        return 0;
    av_assert0(slots[1] == slots[0] && slots[2] == slots[0]);
    return ff_denoise_opencl_opponent(avctx, dn, rings, slots[0], 0);
}

/* The channels of image p that selected components fill, as a mask. */
static int selected_channels(const DenoiseOpenCLContext *dn, int p)
{
    int mask = 0;

    for (int c = 0; c < dn->layout.nb_components; c++)
        if (dn->layout.comp[c].plane == p && ff_denoise_opencl_selected(dn, c))
            mask |= 1 << dn->layout.comp[c].channel;
    return mask;
}

/* The channels of an OpenCL image (0 where not known). */
static int image_channels(cl_mem image)
{
    cl_image_format format;

    if (clGetImageInfo(image, CL_IMAGE_FORMAT, sizeof(format), &format,
                       NULL) != CL_SUCCESS)
        return 0;
    switch (format.image_channel_order) {
    case CL_R:
    case CL_A:
    case CL_INTENSITY:
    case CL_LUMINANCE:
        return 1;
    case CL_RG:
    case CL_RA:
        return 2;
    case CL_RGB:
        return 3;
    case CL_RGBA:
    case CL_BGRA:
    case CL_ARGB:
        return 4;
    }
    return 0;
}

/*
 * Whether the output of frame 'in', filtered, writes every channel of its
 * images from the filter's planes: the filter then needs no more of its
 * images once they are loaded. Not where an image has a channel that no
 * selected component fills (alpha, the padding of packed RGB, a plane
 * left out by the option planes), which the output copies from it.
 */
static int output_writes_whole(const DenoiseOpenCLContext *dn, const AVFrame *in)
{
    for (int p = 0; p < FF_ARRAY_ELEMS(in->data) && in->data[p]; p++) {
        int channels = image_channels((cl_mem)in->data[p]);

        if (!channels || selected_channels(dn, p) != (1 << channels) - 1)
            return 0;
    }
    return 1;
}

static int copy_image(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                      AVFrame *out, const AVFrame *in, int plane)
{
    const DenoiseLayout *layout = &dn->layout;
    size_t origin[3] = { 0, 0, 0 };
    size_t region[3] = { layout->plane_width[plane], layout->plane_height[plane], 1 };
    cl_int cle;

    cle = clEnqueueCopyImage(dn->queue, (cl_mem)in->data[plane],
                             (cl_mem)out->data[plane], origin, origin, region,
                             0, NULL, NULL);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to copy a plane", cle);
    return 0;
}

/*
 * Enqueue the writing of image p of the output frame from the float planes
 * of its channels set in channel_mask, the others from the input frame.
 */
static int store_image(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                       AVFrame *out, const AVFrame *in, int p,
                       cl_mem *channel_planes, int channel_mask)
{
    const DenoiseLayout *layout = &dn->layout;
    cl_mem dst = (cl_mem)out->data[p];
    cl_mem src = (cl_mem)in->data[p];
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(dst), DENOISE_ARG(src), DENOISE_ARG(channel_planes[0]),
        DENOISE_ARG(channel_planes[1]), DENOISE_ARG(channel_planes[2]),
        DENOISE_ARG(channel_mask),
        DENOISE_ARG(layout->plane_width[p]), DENOISE_ARG(layout->plane_height[p]),
        DENOISE_ARG(layout->plane_pitch[p]),
        DENOISE_ARG(layout->container), DENOISE_ARG(layout->shift),
    };
    /* the write kernels take the same arguments but the source image */
    OpenCLKernelArg write_args[FF_ARRAY_ELEMS(args) - 1];
    const OpenCLKernelArg *run_args = args;
    int nb_args = FF_ARRAY_ELEMS(args);
    int kernel  = layout->is_float ? DENOISE_KERNEL_STORE_FLOAT : DENOISE_KERNEL_STORE;

    /* an input frame kept as its properties alone: every channel from the
     * planes */
    if (!src) {
        if (channel_mask != selected_channels(dn, p)) {
            av_log(avctx, AV_LOG_ERROR, "Image %d of a released input frame "
                   "is needed for channels 0x%x.\n", p,
                   selected_channels(dn, p) & ~channel_mask);
            return AVERROR_BUG;
        }
        write_args[0] = args[0];
        memcpy(write_args + 1, args + 2, sizeof(write_args) - sizeof(write_args[0]));
        run_args = write_args;
        nb_args--;
        kernel = layout->is_float ? DENOISE_KERNEL_WRITE_FLOAT : DENOISE_KERNEL_WRITE;
    }
    return ff_denoise_opencl_run(avctx, dn, dn->kernels[kernel], run_args, nb_args,
                                 layout->plane_width[p],
                                 ff_denoise_opencl_io_rows(layout->plane_height[p]),
                                 0, 0, 0);
}

/*
 * Enqueue the writing of every image of the output frame: components set in
 * 'mask' from their float planes, the others copied from the input frame.
 */
static int store_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                       AVFrame *out, const AVFrame *in, cl_mem *planes,
                       int mask)
{
    const DenoiseLayout *layout = &dn->layout;

    for (int p = 0; p < layout->nb_planes; p++) {
        cl_mem channel_planes[DENOISE_STORE_CHANNELS] = { NULL };
        cl_mem written = NULL;
        int channel_mask = 0;
        int err;

        for (int c = 0; c < layout->nb_components; c++) {
            const DenoiseComponent *comp = &layout->comp[c];
            if (comp->plane != p || !(mask & (1 << c)))
                continue;
            channel_planes[comp->channel] = planes[c];
            channel_mask |= 1 << comp->channel;
            written = planes[c];
        }
        /* an unused argument still needs a valid buffer */
        for (int ch = 0; ch < DENOISE_STORE_CHANNELS; ch++)
            if (!channel_planes[ch])
                channel_planes[ch] = written;
        if (channel_mask || !in->data[p])
            err = store_image(avctx, dn, out, in, p, channel_planes, channel_mask);
        else
            err = copy_image(avctx, dn, out, in, p);
        if (err < 0)
            return err;
    }
    return 0;
}

/* Copy every image of a frame (pass-through when the filter is disabled). */
static int copy_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                      AVFrame *out, const AVFrame *in)
{
    for (int p = 0; p < dn->layout.nb_planes; p++) {
        int err = copy_image(avctx, dn, out, in, p);
        if (err < 0)
            return err;
    }
    return 0;
}

/* The device memory for the tables of a band (DENOISE_TABLE_SHARE). */
static size_t table_budget(AVFilterContext *avctx)
{
    OpenCLFilterContext *ocf = avctx->priv;
    cl_ulong size = 0;

    clGetDeviceInfo(ocf->hwctx->device_id, CL_DEVICE_GLOBAL_MEM_SIZE,
                    sizeof(size), &size, NULL);
    return av_clip64(size / DENOISE_TABLE_SHARE, DENOISE_TABLE_MIN,
                     DENOISE_TABLE_MAX);
}

/*
 * Grid rows per band: the option's, or as many as the table budget holds,
 * a multiple of the work-group search's tile.
 */
static int band_rows(AVFilterContext *avctx, const DenoiseOpenCLContext *dn,
                     const DenoiseSearch *ds, size_t ref_bytes)
{
    size_t row_bytes = FFMAX((size_t)ds->nx * ref_bytes, 1);
    size_t rows = table_budget(avctx) / row_bytes;

    if (dn->band_rows > 0)
        return FFMIN(dn->band_rows, ds->ny);
    rows = FFMAX(rows / DENOISE_SEARCH_TILE * DENOISE_SEARCH_TILE, DENOISE_SEARCH_TILE);
    return FFMIN(rows, ds->ny);
}

/*
 * Whether patch_search_squares gives this search's distances exactly,
 * those of one channel: integer samples in the 8-bit scale,
 * patches of at most 16x16 (distances below 2^24), square blocks of 2 to 8
 * samples (its local buffer is that of patch_search_tiled, which holds it
 * from blocks of 2 on).
 */
static int squares_exact(const DenoiseSearch *ds)
{
    return ds->integer_samples && ds->patch <= 16 && ds->block >= 2 && ds->block <= 8;
}

/* Whether this device runs work-group searches: search=tiled, or by
 * default a GPU (on CPUs local memory is ordinary memory and barriers are
 * costly: the per-patch search is faster there). */
static int work_group_searches(AVFilterContext *avctx, const DenoiseOpenCLContext *dn)
{
    OpenCLFilterContext *ocf = avctx->priv;

    return dn->search_mode == DENOISE_SEARCH_TILED ||
           (dn->search_mode == DENOISE_SEARCH_AUTO &&
            !(device_type(ocf->hwctx->device_id) & CL_DEVICE_TYPE_CPU));
}

/*
 * Whether the tables of this search on windows of 'nb_frames' fit 32-bit
 * keys (search_key_shift() of patch_search.cl, the same rule): one channel
 * (of weight 1) of integer samples in the 8-bit scale, whose distances are
 * integers below 2^(32 - shift) (patches of at most 8x8), and fewer than
 * 2^shift - 1 candidates in the window.
 */
static int keys_fit(const DenoiseSearch *ds, int nb_frames)
{
    int shift = ds->patch <= 4 ? 12 : ds->patch <= 5 ? 11 : 10;
    int64_t side = 2 * ds->radius + 1;

    return ds->integer_samples && ds->channels == 1 && ds->patch <= 8 &&
           nb_frames * side * side < (1 << shift) - 1;
}

/*
 * The work-group search of this search, among those whose local memory
 * the device has: for one channel patch_search_squares where it gives the
 * distances exactly, else patch_search_rows where patch_search_tiled's
 * blocks are single samples, which it shares with no other patch (on the
 * H100, bm3d_gpu `ref` 1080p: 20 against 41 ms per search, the per-patch
 * kernel since the tiled one does not fit; nlmeans_gpu p=5:step=1: 14.8
 * against 15.4 ms in all), or where patch_search_tiled does not fit; else
 * patch_search_tiled (bm3d_gpu `fast`'s second search, blocks of 4: 1.6
 * against 2.6 ms with rows). Each in its specialised entry point where the
 * search is the one it is compiled for, in its variant of keys where the
 * largest window fits them (and so every window: one kernel a search).
 * Whether it runs a tile of work-items on the device is known once the
 * program is built.
 */
static void choose_entries(DenoiseSearch *ds, size_t local_mem)
{
    int tiled_fits = ds->tile_local[0] + ds->tile_local[1] + 1024 <= local_mem;
    int rows_fits  = ds->patch <= DENOISE_SEARCH_ROWS_MAX_PATCH &&
                     ds->tile_local[0] + ds->rows_local + 1024 <= local_mem;
    int special_8x4 = ds->patch == 8 && ds->step == 4;

    if (ds->channels == 1 && tiled_fits && squares_exact(ds))
        ds->squares_entry = special_8x4 ? squares_8x4_entry(ds->radius) :
                                          DENOISE_KERNEL_SEARCH_SQUARES;
    else if (ds->channels == 1 && rows_fits && (ds->block == 1 || !tiled_fits))
        ds->rows_entry = rows_entry(ds->patch, ds->step, ds->block, ds->radius);
    else if (tiled_fits)
        ds->tiled_entry = special_8x4 ? DENOISE_KERNEL_SEARCH_TILED_8X4 :
                                        DENOISE_KERNEL_SEARCH_TILED;
    if (keys_fit(ds, ds->max_frames)) {
        ds->squares_entry = keys_entry(ds->squares_entry);
        ds->rows_entry    = keys_entry(ds->rows_entry);
    }
}

/* A search's kernels into the program: the per-patch search, and its
 * work-group kernels with patch_search_edge for the grid's edges. */
static void mark_search_kernels(DenoiseOpenCLContext *dn, const DenoiseSearch *ds)
{
    const int entries[] = { ds->tiled_entry, ds->squares_entry, ds->rows_entry };

    dn->search_kernels |= UINT64_C(1) << DENOISE_KERNEL_SEARCH;
    for (int i = 0; i < FF_ARRAY_ELEMS(entries); i++)
        if (entries[i] >= 0)
            dn->search_kernels |= UINT64_C(1) << entries[i] |
                                  UINT64_C(1) << DENOISE_KERNEL_SEARCH_EDGE;
}

av_cold void ff_denoise_opencl_search_init(AVFilterContext *avctx,
                                           DenoiseOpenCLContext *dn, DenoiseSearch *ds,
                                           const DenoiseSearchParams *par)
{
    const size_t tile = DENOISE_SEARCH_TILE;
    const int patch = par->patch, step = par->step;
    size_t region;

    av_assert0(par->max_frames >= 1);
    ds->width      = par->width;
    ds->height     = par->height;
    ds->patch      = patch;
    ds->step       = step;
    ds->block      = av_gcd(patch, step);
    ds->radius     = par->radius;
    ds->channels   = par->channels;
    ds->integer_samples = par->integer_samples;
    ds->max_frames = par->max_frames;
    ds->nx         = (ds->width  - patch + step - 1) / step + 1;
    ds->ny         = (ds->height - patch + step - 1) / step + 1;
    ds->regular_nx = (ds->width  - patch) / step + 1;
    ds->regular_ny = (ds->height - patch) / step + 1;
    ds->band       = band_rows(avctx, dn, ds, par->ref_bytes);

    region = (tile - 1) * step + patch;
    ds->tile_local[0] = region * region * sizeof(cl_float);
    ds->tile_local[1] = DENOISE_SEARCH_UNROLL * (region / ds->block) * region *
                        sizeof(cl_float);
    ds->rows_local    = DENOISE_SEARCH_ROWS_UNROLL * region * tile * sizeof(cl_float);
    ds->tiled_entry = ds->squares_entry = ds->rows_entry = -1;
    if (par->own_kernels)
        return;
    if (work_group_searches(avctx, dn))
        choose_entries(ds, local_mem_size(avctx));
    mark_search_kernels(dn, ds);
}

/* Whether the search kernel 'entry' is in the program and runs a tile of
 * work-items on this device. */
static int runs_tile(AVFilterContext *avctx, const DenoiseOpenCLContext *dn, int entry)
{
    const size_t tile = DENOISE_SEARCH_TILE;

    return entry >= 0 && dn->kernels[entry] &&
           max_work_group(avctx, dn->kernels[entry]) >= tile * tile;
}

av_cold void ff_denoise_opencl_search_ready(AVFilterContext *avctx,
                                            DenoiseOpenCLContext *dn, DenoiseSearch *ds)
{
    int *entries[] = { &ds->tiled_entry, &ds->squares_entry, &ds->rows_entry };

    for (int i = 0; i < FF_ARRAY_ELEMS(entries); i++)
        if (!runs_tile(avctx, dn, *entries[i]))
            *entries[i] = -1;
    ds->edge_fit = dn->kernels[DENOISE_KERNEL_SEARCH_EDGE] &&
                   max_work_group(avctx, dn->kernels[DENOISE_KERNEL_SEARCH_EDGE]) >=
                   DENOISE_SEARCH_EDGE_LANES;
    ds->tiled = ds->tiled_entry >= 0 || ds->squares_entry >= 0 || ds->rows_entry >= 0;
    if (dn->search_mode == DENOISE_SEARCH_TILED && !ds->tiled)
        av_log(avctx, AV_LOG_WARNING, "The work-group search does not fit "
               "this device for patch %d, step %d: using the per-patch "
               "search.\n", ds->patch, ds->step);
    av_log(avctx, AV_LOG_VERBOSE, "%dx%d, patch %d, step %d: %s search, "
           "bands of %d of %d rows of patches.\n", ds->width, ds->height,
           ds->patch, ds->step, ds->tiled ? "work-group" : "per-patch",
           ds->band, ds->ny);
}

/*
 * The work-group kernel for this search on the channels 'ch' of the window
 * 'win' (choose_entries()), or -1 where none runs.
 */
static int tiled_kernel(const DenoiseSearch *ds, const DenoiseChannels *ch,
                        const DenoiseWindow *win)
{
    av_assert1(ch->nb == ds->channels && (ch->nb > 1 || ch->weight[0] == 1.0f));
    av_assert1(win->nb_frames <= ds->max_frames);
    if (ds->squares_entry >= 0)
        return ds->squares_entry;
    if (ds->rows_entry >= 0)
        return ds->rows_entry;
    return ds->tiled_entry;
}

/*
 * One search kernel over the reference patches of the band from gy_first to
 * gy_end, from limit_nx (or limit_ny) on with the per-patch kernel (kernel
 * -1), or below them with a work-group kernel, whose local buffers follow
 * the common arguments.
 */
static int run_search_kernel(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                             int kernel, const DenoiseSearch *ds, cl_mem frames,
                             const DenoiseChannels *ch,
                             const DenoiseWindow *win, int ref_first,
                             int limit_nx, int limit_ny, int gy_first,
                             int gy_end, cl_mem positions, cl_mem distances,
                             int stage)
{
    cl_float4 weights = { .s = { ch->weight[0], ch->weight[1], ch->weight[2], 0.0f } };
    cl_uint stride = ch->stride;
    size_t local2 = kernel == ds->rows_entry ? ds->rows_local : ds->tile_local[1];
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(frames), DENOISE_ARG(ch->nb), DENOISE_ARG(stride),
        DENOISE_ARG(ch->ring_channel), DENOISE_ARG(weights),
        DENOISE_ARG(ds->width), DENOISE_ARG(ds->height),
        DENOISE_ARG(win->first_slot), DENOISE_ARG(win->nb_frames),
        DENOISE_ARG(win->ring), DENOISE_ARG(win->ref_slot),
        DENOISE_ARG(ds->patch), DENOISE_ARG(ds->step), DENOISE_ARG(ds->block),
        DENOISE_ARG(ds->radius), DENOISE_ARG(ds->nx), DENOISE_ARG(gy_end),
        DENOISE_ARG(limit_nx), DENOISE_ARG(limit_ny), DENOISE_ARG(gy_first),
        DENOISE_ARG(ref_first), DENOISE_ARG(positions), DENOISE_ARG(distances),
        DENOISE_LOCAL_ARG(ds->tile_local[0]), DENOISE_LOCAL_ARG(local2),
    };

    av_assert0(ch->nb >= 1 && ch->nb <= DENOISE_MAX_CHANNELS);
    if (kernel >= 0)
        return ff_denoise_opencl_run(avctx, dn, dn->kernels[kernel],
                                     args, FF_ARRAY_ELEMS(args),
                                     ds->regular_nx, FFMIN(limit_ny, gy_end) - gy_first,
                                     DENOISE_SEARCH_TILE, DENOISE_SEARCH_TILE, stage);
    return ff_denoise_opencl_run(avctx, dn, dn->kernels[DENOISE_KERNEL_SEARCH],
                                 args, FF_ARRAY_ELEMS(args) - 2,
                                 ds->nx, gy_end - gy_first, 0, 0, stage);
}

/*
 * The reference patches of the band from gy_first to gy_end that the
 * work-group kernels leave, the grid's last column and row where they are
 * moved to the frame's edge, with patch_search_edge: several work-items
 * per patch. The per-patch kernel gives the same bits with one work-item
 * each, too few to fill a GPU: on an H100, 5.5 ms per search of bm3d_gpu
 * `ref` at 1080p, whatever the frame's size.
 */
static int run_edge_search(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                           const DenoiseSearch *ds, cl_mem frames,
                           const DenoiseChannels *ch,
                           const DenoiseWindow *win, int ref_first,
                           int gy_first, int gy_end, cl_mem positions,
                           cl_mem distances, int stage)
{
    cl_float4 weights = { .s = { ch->weight[0], ch->weight[1], ch->weight[2], 0.0f } };
    cl_uint stride = ch->stride;
    int last_row = ds->ny - 1;
    int edge_column = ds->regular_nx < ds->nx ?
                      FFMAX(0, FFMIN(gy_end, ds->regular_ny) - gy_first) : 0;
    int edge_row = ds->regular_ny < ds->ny && last_row >= gy_first &&
                   last_row < gy_end;
    int nb_edge = edge_column + (edge_row ? ds->nx : 0);
    const OpenCLKernelArg args[] = {
        DENOISE_ARG(frames), DENOISE_ARG(ch->nb), DENOISE_ARG(stride),
        DENOISE_ARG(ch->ring_channel), DENOISE_ARG(weights),
        DENOISE_ARG(ds->width), DENOISE_ARG(ds->height),
        DENOISE_ARG(win->first_slot), DENOISE_ARG(win->nb_frames),
        DENOISE_ARG(win->ring), DENOISE_ARG(win->ref_slot),
        DENOISE_ARG(ds->patch), DENOISE_ARG(ds->step), DENOISE_ARG(ds->block),
        DENOISE_ARG(ds->radius), DENOISE_ARG(ds->nx), DENOISE_ARG(gy_end),
        DENOISE_ARG(edge_column), DENOISE_ARG(last_row), DENOISE_ARG(gy_first),
        DENOISE_ARG(ref_first), DENOISE_ARG(positions), DENOISE_ARG(distances),
    };

    if (!nb_edge)
        return 0;
    return ff_denoise_opencl_run(avctx, dn, dn->kernels[DENOISE_KERNEL_SEARCH_EDGE],
                                 args, FF_ARRAY_ELEMS(args),
                                 DENOISE_SEARCH_EDGE_LANES, nb_edge,
                                 DENOISE_SEARCH_EDGE_LANES, 1, stage);
}

/*
 * The work-group kernel on the regular grid where one fits the device and
 * the search, patch_search_edge for the rest (the last row and column of
 * the grid, moved to the frame's edge), or the per-patch kernel where
 * patch_search_edge's work-groups do not fit.
 */
int ff_denoise_opencl_search(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                             const DenoiseSearch *ds, cl_mem frames,
                             const DenoiseChannels *ch,
                             const DenoiseWindow *win, int ref_first,
                             int gy_first, cl_mem positions,
                             cl_mem distances, int stage)
{
    int gy_end = ff_denoise_opencl_band_end(ds, gy_first);
    int kernel = ds->tiled ? tiled_kernel(ds, ch, win) : -1;
    int err;

    if (kernel < 0)
        return run_search_kernel(avctx, dn, -1, ds, frames, ch, win, ref_first,
                                 0, 0, gy_first, gy_end, positions, distances,
                                 stage);

    if (gy_first < ds->regular_ny) {
        err = run_search_kernel(avctx, dn, kernel, ds, frames, ch, win, ref_first,
                                ds->regular_nx, ds->regular_ny, gy_first,
                                gy_end, positions, distances, stage);
        if (err < 0)
            return err;
    }
    if (ds->edge_fit)
        return run_edge_search(avctx, dn, ds, frames, ch, win, ref_first,
                               gy_first, gy_end, positions, distances, stage);
    if (ds->regular_nx == ds->nx && ds->regular_ny >= gy_end)
        return 0;
    return run_search_kernel(avctx, dn, -1, ds, frames, ch, win, ref_first,
                             ds->regular_nx, ds->regular_ny, gy_first, gy_end,
                             positions, distances, stage);
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
        .t          = t,
    };
}

/*
 * The queued frames whose images the filter no longer needs once they are
 * loaded (output_writes_whole()) are kept as their properties alone, their
 * images back to their pool for the frames to come. Called before a new
 * frame is uploaded: the loadings waited for were enqueued before the
 * output frame last enqueued, whose predecessor is done, so the wait is
 * at most a loading's, and the frames held do not depend on the device's
 * pace.
 */
static int release_loaded_frames(AVFilterContext *avctx, DenoiseOpenCLContext *dn)
{
    DenoiseFrameQueue *fq = &dn->fq;

    for (int i = 0; i < fq->ring; i++) {
        AVFrame *props;
        cl_int cle;
        int err;

        if (!fq->loaded[i])
            continue;
        cle = clWaitForEvents(1, &fq->loaded[i]);
        clReleaseEvent(fq->loaded[i]);
        fq->loaded[i] = NULL;
        if (cle != CL_SUCCESS)
            return ff_denoise_opencl_error(avctx, "Failed to load a frame", cle);
        props = av_frame_alloc();
        if (!props)
            return AVERROR(ENOMEM);
        err = av_frame_copy_props(props, fq->frames[i]);
        if (err < 0) {
            av_frame_free(&props);
            return err;
        }
        av_frame_free(&fq->frames[i]);
        fq->frames[i] = props;
    }
    return 0;
}

/* The loading of the frame in 'slot', enqueued last, whose images
 * release_loaded_frames() releases once it is done. */
static int mark_loaded(AVFilterContext *avctx, DenoiseOpenCLContext *dn, int slot)
{
    cl_int cle = clEnqueueMarkerWithWaitList(dn->queue, 0, NULL,
                                             &dn->fq.loaded[slot]);

    if (cle == CL_SUCCESS)
        cle = clFlush(dn->queue);
    if (cle != CL_SUCCESS)
        return ff_denoise_opencl_error(avctx, "Failed to submit a frame's "
                                       "loading", cle);
    return 0;
}

/*
 * A new input frame: checked against the link's, uploaded if it is a
 * software frame, then loaded into its slot.
 */
static int queue_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                       AVFrame *in, const DenoiseQueueOps *ops)
{
    DenoiseFrameQueue *fq = &dn->fq;
    enum AVPixelFormat sw_format = in->format;
    int slot, err;

    if (in->hw_frames_ctx)
        sw_format = ((AVHWFramesContext *)in->hw_frames_ctx->data)->sw_format;
    if (in->width != dn->width || in->height != dn->height ||
        sw_format != dn->layout.sw_format ||
        !in->hw_frames_ctx != !!dn->sw_frames_ref) {
        av_log(avctx, AV_LOG_ERROR, "The frames changed from %dx%d %s to "
               "%dx%d %s: changes of size or format within a stream are not "
               "supported.\n", dn->width, dn->height,
               av_get_pix_fmt_name(dn->layout.sw_format), in->width, in->height,
               av_get_pix_fmt_name(sw_format));
        err = AVERROR(EINVAL);
        goto fail;
    }
    err = release_loaded_frames(avctx, dn);
    if (err < 0)
        goto fail;
    if (dn->sw_frames_ref) {
        err = upload_frame(avctx, dn, &in);
        if (err < 0)
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
    /* without a delay the frame is output before any release: no marker */
    if (fq->delay && !fq->disabled[slot] && output_writes_whole(dn, in))
        return mark_loaded(avctx, dn, slot);
    return 0;

fail:
    av_frame_free(&in);
    return err;
}

/*
 * Enqueue frame nb_out, denoised from the frames loaded so far, and send the
 * one enqueued before it. Returns 1 when a frame was sent, 0 when none was.
 */
static int output_frame(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                        cl_mem *planes, const DenoiseQueueOps *ops)
{
    DenoiseFrameQueue *fq = &dn->fq;
    AVFilterLink *outlink = avctx->outputs[0];
    int slot = fq->nb_out % fq->ring;
    AVFrame *in = fq->frames[slot];
    AVFrame *out;
    cl_event done;
    int err, sent, mask = 0;

    if (dn->sw_frames_ref) {
        out = av_frame_alloc();
        if (out && av_hwframe_get_buffer(dn->sw_frames_ref, out, 0) < 0)
            av_frame_free(&out);
    } else {
        out = ff_get_video_buffer(outlink, outlink->w, outlink->h);
    }
    if (!out)
        return AVERROR(ENOMEM);
    err = av_frame_copy_props(out, in);
    if (err >= 0 && dn->noise.mode != DENOISE_NOISE_FIXED)
        err = ff_denoise_noise_export(avctx, dn, out, slot);
    if (err < 0)
        goto fail;

    ff_denoise_opencl_use_frame(dn, fq->nb_out);
    if (fq->disabled[slot]) {
        err = ops->skip ? ops->skip(avctx, fq->nb_out, fq->nb_in - 1) : 0;
        if (err >= 0)
            err = copy_frame(avctx, dn, out, in);
    } else {
        err = ops->denoise(avctx, fq->nb_out, fq->nb_in - 1, &mask);
        if (err >= 0 && dn->noise.mode == DENOISE_NOISE_CURVE)
            err = ff_denoise_noise_inverse(avctx, dn, planes, mask, slot);
        if (err >= 0)
            err = store_frame(avctx, dn, out, in, planes, mask);
    }
    if (err < 0)
        goto fail;
    err = mark_frame(avctx, dn, &done);
    if (err < 0)
        goto fail;

    fq->frames[slot] = NULL;
    if (fq->loaded[slot])
        clReleaseEvent(fq->loaded[slot]);
    fq->loaded[slot] = NULL;
    fq->nb_out++;
    sent = send_pending(avctx, dn);
    fq->pending      = out;
    fq->pending_in   = in;
    fq->pending_done = done;
    return sent;

fail:
    clFinish(dn->queue);
    av_frame_free(&out);
    return err;
}

static int activate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                    cl_mem *planes, const DenoiseQueueOps *ops)
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
        /* one frame per activation: more may be queued behind it, or the
         * end of the stream (a filter before this one that ends with a
         * delay sends several at once) */
        ff_filter_set_ready(avctx, 100);
        ret = queue_frame(avctx, dn, in, ops);
        if (ret < 0)
            return ret;
        if (fq->nb_in - fq->nb_out > fq->delay) {
            ret = output_frame(avctx, dn, planes, ops);
            if (ret != 0)
                return FFMIN(ret, 0);
        }
    }

    if (ff_inlink_acknowledge_status(inlink, &status, &pts)) {
        /* the end of the stream: the window of the last frames is truncated */
        while (fq->nb_out < fq->nb_in) {
            ret = output_frame(avctx, dn, planes, ops);
            if (ret < 0)
                return ret;
        }
        ret = send_pending(avctx, dn);
        if (ret < 0)
            return ret;
        ff_outlink_set_status(outlink, status, pts);
        return 0;
    }

    FF_FILTER_FORWARD_WANTED(outlink, inlink);
    return FFERROR_NOT_READY;
}

int ff_denoise_opencl_activate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, const DenoiseQueueOps *ops)
{
    return memory_advice(avctx, dn, activate(avctx, dn, planes, ops));
}
