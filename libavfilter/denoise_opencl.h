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
 * Host code shared by the OpenCL denoisers (nlmeans_gpu, bm3d_gpu,
 * vbm3d_gpu): pixel format layout, program build with compile-time
 * constants, moving planes between OpenCL images and float buffers, and
 * per-stage kernel profiling.
 */

#ifndef AVFILTER_DENOISE_OPENCL_H
#define AVFILTER_DENOISE_OPENCL_H

#include "libavutil/pixfmt.h"

#include "avfilter.h"
#include "opencl.h"

#define DENOISE_MAX_COMPONENTS 4
#define DENOISE_MAX_STAGES     8
#define DENOISE_SEARCH_TILE    16   ///< side of the work-group search's tile
#define DENOISE_SEARCH_UNROLL  4    ///< its offsets per pass

enum DenoiseSearchMode {
    DENOISE_SEARCH_AUTO,    ///< work-group search on GPUs, per-patch on CPUs
    DENOISE_SEARCH_TILED,
    DENOISE_SEARCH_DIRECT,
};

/** Where one colour component of a frame lives, and its dimensions. */
typedef struct DenoiseComponent {
    int plane;      ///< image (plane) index in the OpenCL frame
    int channel;    ///< channel inside that image (0 or 1)
    int width;
    int height;
} DenoiseComponent;

typedef struct DenoiseLayout {
    enum AVPixelFormat sw_format;
    int nb_components;
    int nb_planes;
    DenoiseComponent comp[DENOISE_MAX_COMPONENTS];
    int plane_channels[DENOISE_MAX_COMPONENTS]; ///< channels per image
    int plane_width[DENOISE_MAX_COMPONENTS];
    int plane_height[DENOISE_MAX_COMPONENTS];
    float container;     ///< largest value of a sample's storage unit
    int shift;           ///< unused low bits of a sample (p010: 6)
    int is_rgb;
} DenoiseLayout;

/** Geometry of the patch search on one plane, and the kernel that runs it. */
typedef struct DenoiseSearch {
    int width, height;
    int patch;
    int step;
    int block;          ///< gcd(patch, step): granularity of shared sums
    int radius;
    int nx, ny;         ///< grid of reference patches
    int regular_nx;     ///< reference patches on the regular grid x = gx * step
    int regular_ny;
    int tiled;          ///< patch_search_tiled for the regular grid
    size_t tile_local[2]; ///< its local buffers, in bytes
} DenoiseSearch;

/**
 * The planes searched for the patches of one reference frame: nb_frames
 * consecutive slots (modulo ring) of a ring of planes, starting at
 * first_slot, in time order; the reference frame is in ref_slot.
 */
typedef struct DenoiseWindow {
    int first_slot;
    int nb_frames;
    int ring;
    int ref_slot;
    int nb_past;        ///< frames of the window before the reference frame
} DenoiseWindow;

/** A window of one frame, for spatial filtering. */
#define DENOISE_WINDOW_SINGLE ((DenoiseWindow) { 0, 1, 1, 0, 0 })

#define DENOISE_MAX_RING 32   ///< frames kept on the device, at most

/**
 * The callbacks of a filter run by ff_denoise_opencl_activate(). Frame
 * indices count the input frames from 0; frame i lives in slot i % ring of
 * the filter's rings of float planes.
 */
typedef struct DenoiseQueueOps {
    /** Set up for frames like 'first', and set the queue's ring and delay. */
    int (*init)(AVFilterContext *avctx, const AVFrame *first);
    /** Enqueue the loading of a new input frame into its slot. */
    int (*load)(AVFilterContext *avctx, const AVFrame *in, int slot);
    /**
     * Fill the float planes of the components set in *mask with the
     * estimate of frame t; frames up to 'last' are loaded (last >= t + delay,
     * except at the end of the stream, where it is the last frame).
     */
    int (*denoise)(AVFilterContext *avctx, int64_t t, int64_t last, int *mask);
    /**
     * Frame t goes out unfiltered (timeline): keep what later frames need.
     * May be NULL.
     */
    int (*skip)(AVFilterContext *avctx, int64_t t, int64_t last);
} DenoiseQueueOps;

/** The input frames waiting inside a filter, in slots of a ring. */
typedef struct DenoiseFrameQueue {
    int ring;                              ///< slots, set by init()
    int delay;                             ///< frames after t needed to output t
    AVFrame *frames[DENOISE_MAX_RING];     ///< frames not yet output
    uint8_t disabled[DENOISE_MAX_RING];    ///< timeline state of each
    int64_t nb_in;                         ///< frames received
    int64_t nb_out;                        ///< frames sent
    int width, height;                     ///< of the first frame
    enum AVPixelFormat sw_format;
} DenoiseFrameQueue;

#define DENOISE_MAX_CHANNELS 3

/**
 * The channels a patch distance is summed over (joint colour): nb planes
 * (or rings of planes) of the same size, 'stride' samples apart in one
 * buffer, the squared differences of channel c multiplied by weight[c].
 */
typedef struct DenoiseChannels {
    int nb;
    unsigned stride;
    float weight[DENOISE_MAX_CHANNELS];
} DenoiseChannels;

/** One channel: the distance is the plain sum of squared differences. */
#define DENOISE_CHANNELS_SINGLE ((DenoiseChannels) { 1, 0, { 1.0f, 1.0f, 1.0f } })

/** Shared state of a denoiser: kernels of the common program part. */
typedef struct DenoiseOpenCLContext {
    cl_command_queue queue;
    cl_kernel kernel_load;
    cl_kernel kernel_store;
    cl_kernel kernel_search;
    cl_kernel kernel_search_tiled;
    cl_kernel kernel_opponent[2];             ///< forward, inverse
    int initialised;                          ///< the filter's init succeeded
    int profile;                              ///< collect kernel times
    const char *stage_names[DENOISE_MAX_STAGES];
    double stage_ms[DENOISE_MAX_STAGES];      ///< this frame
    double stage_total_ms[DENOISE_MAX_STAGES];
    int64_t nb_frames_profiled;
    DenoiseFrameQueue fq;
} DenoiseOpenCLContext;

/** NULL-terminated list of the software formats the denoisers accept. */
extern const enum AVPixelFormat ff_denoise_opencl_formats[];

/**
 * Input link config_props for the denoisers: checks that the input carries
 * OpenCL frames of a supported software format, with a clear error listing
 * the supported formats otherwise.
 */
int ff_denoise_opencl_config_input(AVFilterLink *inlink);

/** Describe the planes and components of a supported software format. */
int ff_denoise_opencl_get_layout(void *log_ctx, enum AVPixelFormat sw_format,
                                 int width, int height, DenoiseLayout *layout);

/**
 * Build the program from a generated header of compile-time constants
 * (which must define NB_NEIGHBORS, the size of the search tables, and may
 * define SEARCH_CHANNELS, the most channels of a patch distance) followed
 * by the shared kernels and the filter's own sources, then create the
 * command queue and the shared kernels.
 */
int ff_denoise_opencl_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                           const char *defines, const char **sources,
                           int nb_sources);

void ff_denoise_opencl_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn);

/** Create a device buffer, with a clear message if the device refuses it. */
cl_mem ff_denoise_opencl_alloc(AVFilterContext *avctx, size_t size);

/**
 * Enqueue the conversion of one component of a frame to a float plane, in
 * slot 'slot' of the ring of planes dst.
 */
int ff_denoise_opencl_load(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                           const DenoiseLayout *layout, const AVFrame *frame,
                           int component, cl_mem dst, int slot);

/**
 * Enqueue the writing of every image of the output frame: components set in
 * 'mask' from their float planes, the others copied from the input frame.
 */
int ff_denoise_opencl_store(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            const DenoiseLayout *layout, AVFrame *out,
                            const AVFrame *in, cl_mem *planes, int mask);

/** Copy every image of a frame (pass-through when the filter is disabled). */
int ff_denoise_opencl_copy_frame(AVFilterContext *avctx,
                                 DenoiseOpenCLContext *dn,
                                 const DenoiseLayout *layout, AVFrame *out,
                                 const AVFrame *in);

/**
 * Enqueue a kernel over a 2-D range of at least width x height work-items,
 * rounded up to the work-group size local_w x local_h (0: a default), and
 * account its time to 'stage' when profiling.
 */
int ff_denoise_opencl_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          cl_kernel kernel, size_t width, size_t height,
                          size_t local_w, size_t local_h, int stage);

/** Local memory size of the device, in bytes. */
size_t ff_denoise_opencl_local_mem_size(AVFilterContext *avctx);

/** Largest work-group size the device can run the kernel with. */
size_t ff_denoise_opencl_max_work_group(AVFilterContext *avctx, cl_kernel kernel);

/**
 * Set up the search geometry of a plane: patches of 'patch' samples on a
 * grid of step 'step', candidates within 'radius'; choose the kernel.
 */
void ff_denoise_search_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            DenoiseSearch *ds, int width, int height,
                            int patch, int step, int radius,
                            enum DenoiseSearchMode mode);

/**
 * Enqueue the search of the most similar patches of every reference patch
 * of the window's reference frame among the planes of the window, in the
 * ring of planes 'frames'. With ref_first the reference patch is always
 * entry 0 of its table.
 */
int ff_denoise_search_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          const DenoiseSearch *ds, cl_mem frames,
                          const DenoiseWindow *win, int ref_first,
                          cl_mem positions, cl_mem distances, int stage);

/**
 * Like ff_denoise_search_run(), with distances summed over the channels
 * 'ch' of the frames (channel 0 at the start of 'frames').
 */
int ff_denoise_search_run_channels(AVFilterContext *avctx,
                                   DenoiseOpenCLContext *dn,
                                   const DenoiseSearch *ds, cl_mem frames,
                                   const DenoiseChannels *ch,
                                   const DenoiseWindow *win, int ref_first,
                                   cl_mem positions, cl_mem distances,
                                   int stage);

/**
 * The activate() of the denoisers: frames are queued in the ring, loaded on
 * arrival, and frame t goes out once frame t + delay has arrived or the
 * stream has ended, with the properties of input frame t: denoised by
 * ops->denoise() and stored from the float planes of the components it
 * sets, or copied when the timeline disabled the filter at that frame.
 */
int ff_denoise_opencl_activate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               const DenoiseLayout *layout, cl_mem *planes,
                               const DenoiseQueueOps *ops);

/**
 * The window of frame t in the queue's ring: 'past' frames before it and
 * 'future' after it, truncated to the frames 0 .. last.
 */
DenoiseWindow ff_denoise_opencl_window(const DenoiseFrameQueue *fq, int64_t t,
                                       int64_t last, int past, int future);

/** Free the frames still queued. */
void ff_denoise_opencl_queue_uninit(DenoiseOpenCLContext *dn);

/**
 * Enqueue the conversion of three planes of width x height, in place, from
 * R, G, B to the opponent channels (inverse = 0) or back (inverse = 1); the
 * planes are slot 'slot' of three rings of planes.
 */
int ff_denoise_opencl_opponent(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, int width, int height,
                               int slot, int inverse);

/** The noise of opponent channel c of RGB planes of noise sigma. */
float ff_denoise_opponent_sigma(float sigma, int c);

/** Wait for the queue; log the frame's stage times when profiling. */
int ff_denoise_opencl_finish(AVFilterContext *avctx, DenoiseOpenCLContext *dn);

#endif /* AVFILTER_DENOISE_OPENCL_H */
