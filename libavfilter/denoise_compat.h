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
 * The one place where the OpenCL denoisers meet the differences between
 * the FFmpeg releases they build against. The filters are written for
 * FFmpeg 8.1 and need nothing of this header there: tools/overlay.sh puts
 * it into the trees of older releases only, included at the end of
 * denoise_opencl.h, and writes the filter definitions' public fields
 * (.p.name ...) at the top level of AVFilter there. For 7.1 (libavfilter
 * 10) and 5.1 (libavfilter 8, libavutil 57) it supplies, from those
 * releases' own API, what the code uses and they lack. The conditions are
 * on library versions; only 8.1, 7.1 and 5.1 are tested.
 *
 * Pixel formats are tested for themselves where ff_denoise_opencl_formats
 * lists them: p012 (not in 5.1) and the MSB formats (8.0 and later).
 */

#ifndef AVFILTER_DENOISE_COMPAT_H
#define AVFILTER_DENOISE_COMPAT_H

#include "libavutil/version.h"

#include "version_major.h"
/* what it completes, for a standalone build (make checkheaders); included
 * at the end of denoise_opencl.h, it finds that header's guard set */
#include "denoise_opencl.h"

#if LIBAVFILTER_VERSION_MAJOR < 11
/* the filter definitions: AVFilter itself before 8.0 */
typedef AVFilter FFFilter;
#endif

#if LIBAVFILTER_VERSION_MAJOR < 10
/* 5.1: the filter internals that 7.0 moved to filters.h */
#include "formats.h"
#include "internal.h"

/* Links had no FilterLink part: hw_frames_ctx is in AVFilterLink. */
typedef AVFilterLink FilterLink;

static inline FilterLink *ff_filter_link(AVFilterLink *link)
{
    return link;
}

/* ffmpeg gives the -filter_hw_device device to every filter. */
#define AVFILTER_FLAG_HWDEVICE 0

/* query_formats had only the filter context, and set every link's formats. */
static inline int ff_set_common_formats2(const AVFilterContext *avctx,
                                         AVFilterFormatsConfig **cfg_in,
                                         AVFilterFormatsConfig **cfg_out,
                                         AVFilterFormats *formats)
{
    return ff_set_common_formats((AVFilterContext *)avctx, formats);
}

static inline int ff_denoise_compat_query_formats(AVFilterContext *avctx)
{
    return ff_denoise_opencl_query_formats(avctx, NULL, NULL);
}

/* the denoisers' one query function, whatever the argument */
#define FILTER_QUERY_FUNC2(func) FILTER_QUERY_FUNC(&ff_denoise_compat_query_formats)

/* tools/cl2c named the kernel sources ff_opencl_source_NAME */
#define ff_source_denoise_common_cl ff_opencl_source_denoise_common
#define ff_source_patch_search_cl   ff_opencl_source_patch_search
#define ff_source_nlmeans_gpu_cl    ff_opencl_source_nlmeans_gpu
#define ff_source_bm3d_gpu_cl       ff_opencl_source_bm3d_gpu
#define ff_source_vbm3d_search_cl   ff_opencl_source_vbm3d_search
#define ff_source_noise_estimate_cl ff_opencl_source_noise_estimate
#endif

#if LIBAVUTIL_VERSION_INT < AV_VERSION_INT(58, 12, 100)
/*
 * libavutil 58.12 added av_bessel_i0(); before it, the modified Bessel
 * function of the first kind of order 0 from its power series, which
 * converges quickly for the Kaiser window's arguments (KAISER_MAX at most).
 */
static inline double ff_denoise_bessel_i0(double x)
{
    double q = x * x / 4, term = 1, sum = 1;

    for (int k = 1; term > sum * 1e-17; k++) {
        term *= q / ((double)k * k);
        sum  += term;
    }
    return sum;
}
#define av_bessel_i0 ff_denoise_bessel_i0
#endif

#endif /* AVFILTER_DENOISE_COMPAT_H */
