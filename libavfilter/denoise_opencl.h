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
 * vbm3d_gpu): their common options, pixel format layout and component
 * selection, program build with compile-time constants, kernel launches
 * with per-stage profiling, moving planes between OpenCL images and float
 * buffers (opponent colours included), the patch search, and the frame
 * queue of the temporal filters.
 */

#ifndef AVFILTER_DENOISE_OPENCL_H
#define AVFILTER_DENOISE_OPENCL_H

#include <assert.h>
#include <stddef.h>

#include "libavutil/opt.h"
#include "libavutil/pixfmt.h"

#include "avfilter.h"
#include "opencl.h"

#define DENOISE_MAX_COMPONENTS 4
/** Channels of an image that denoise_store_plane writes (alpha: copied). */
#define DENOISE_STORE_CHANNELS 3
#define DENOISE_MAX_STAGES     8
#define DENOISE_SEARCH_TILE    16   ///< side of the work-group search's tile
#define DENOISE_SEARCH_UNROLL  4    ///< its offsets per pass
#define DENOISE_SEARCH_ROWS_MAX_PATCH 8 ///< patch_search_rows's largest patch
#define DENOISE_SEARCH_ROWS_UNROLL 8    ///< its most offsets per pass (4: 20 % slower on the H100)
#define DENOISE_SEARCH_EDGE_LANES  32   ///< work-items per patch of patch_search_edge
/**
 * Work-group of the kernels launched without one of their own (16 x 8),
 * the largest a device must run: bm3d_gpu's filtering and vbm3d_gpu's search
 * take 64 work-items, the work-group searches more only where they fit.
 */
#define DENOISE_LOCAL_W            16
#define DENOISE_LOCAL_H            8
/**
 * Rows of a plane per work-item of denoise_load_plane and denoise_store_plane
 * (on the H100, a 1080p plane loads in 11 instead of 17 us with 4: fewer,
 * longer work-groups).
 */
#define DENOISE_IO_ROWS            4

/**
 * Device memory for the tables of the reference patches (neighbours, their
 * distances or weights) of one band of the grid: a large frame is searched
 * and filtered band by band, with the same result. The budget is a share of
 * the device's memory within these bounds: every band is a kernel launch
 * of its own, and launches of less than a few waves of work-groups leave a
 * large GPU idle at their end, so bands are only as small as the device
 * needs.
 */
#define DENOISE_TABLE_SHARE    32           ///< 1 / share of the device memory
#define DENOISE_TABLE_MIN      (32 << 20)
#define DENOISE_TABLE_MAX      (1 << 30)

/** Profiling stages of the shared layer, after the filters' own. */
#define DENOISE_STAGE_VST   (DENOISE_MAX_STAGES - 2)
#define DENOISE_STAGE_NOISE (DENOISE_MAX_STAGES - 1)

enum DenoiseSearchMode {
    DENOISE_SEARCH_AUTO,    ///< work-group search on GPUs, per-patch on CPUs
    DENOISE_SEARCH_TILED,
    DENOISE_SEARCH_DIRECT,
};

/**
 * Where one colour component of a frame lives, and the dimensions of its
 * float planes: those of the image, or larger where the filter pads small
 * planes (ff_denoise_opencl_pad_components()).
 */
typedef struct DenoiseComponent {
    int plane;      ///< image (plane) index in the OpenCL frame
    int channel;    ///< channel inside that image (0 to 2)
    int width;
    int height;
} DenoiseComponent;

typedef struct DenoiseLayout {
    enum AVPixelFormat sw_format;
    int nb_components;   ///< the colour components: alpha is not filtered
    int nb_planes;
    DenoiseComponent comp[DENOISE_MAX_COMPONENTS];
    int plane_width[DENOISE_MAX_COMPONENTS];  ///< image sizes
    int plane_height[DENOISE_MAX_COMPONENTS];
    int plane_pitch[DENOISE_MAX_COMPONENTS];  ///< row of its float planes
    float container;     ///< largest value of a sample's storage unit (1.0
                         ///< for float formats)
    int shift;           ///< unused low bits of a sample (p010: 6)
    int is_rgb;
    int is_float;        ///< float samples, nominally 0 to 1
} DenoiseLayout;

/** Geometry of the patch search on one plane, and the kernel that runs it. */
typedef struct DenoiseSearch {
    int width, height;
    int patch;
    int step;
    int block;          ///< gcd(patch, step): granularity of shared sums
    int radius;
    int channels;       ///< channels searched together (DenoiseChannels.nb)
    int max_frames;     ///< the most frames of a window searched at once
    int nx, ny;         ///< grid of reference patches
    int regular_nx;     ///< reference patches on the regular grid x = gx * step
    int regular_ny;
    int tiled;          ///< a work-group search for the regular grid
    /**
     * The entry point (enum DenoiseKernel) of each work-group search for
     * this one: the generic kernel, or its specialisation for this patch
     * and step where there is one, whose tables are 32-bit keys
     * (patch_search.cl) where every window fits them; -1 where that search
     * does not apply, does not fit the device or, once the program is
     * built, does not run a tile there.
     */
    int tiled_entry, squares_entry, rows_entry;
    size_t tile_local[2]; ///< patch_search_tiled's local buffers, in bytes
    size_t rows_local;  ///< patch_search_rows's second local buffer
    int band;           ///< rows of the grid per band (tables hold band * nx)
    /**
     * Set when the searched planes hold integers in the 8-bit
     * scale (8-bit samples, no colour transform): one-channel distances are
     * then exact in any order, and patch_search_squares may sum them.
     */
    int integer_samples;
    int edge_fit;       ///< patch_search_edge runs its work-groups on this device
} DenoiseSearch;

/** A plane's search as a filter sets it up: ff_denoise_opencl_search_init(). */
typedef struct DenoiseSearchParams {
    int width, height;  ///< the plane
    int patch;          ///< patches of patch x patch samples
    int step;           ///< on a grid of this step
    int radius;         ///< candidates within this distance, in samples
    int channels;       ///< DenoiseSearch.channels
    int integer_samples; ///< DenoiseSearch.integer_samples
    int max_frames;     ///< DenoiseSearch.max_frames (1: single frames)
    size_t ref_bytes;   ///< bytes of the tables per reference patch
    /**
     * The filter searches with its own kernels in this geometry
     * (vbm3d_gpu): the program needs none of the shared search kernels.
     */
    int own_kernels;
} DenoiseSearchParams;

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
    int64_t t;          ///< the reference frame's number
} DenoiseWindow;

/** A window of one frame, for spatial filtering. */
#define DENOISE_WINDOW_SINGLE ((DenoiseWindow) { 0, 1, 1, 0, 0, 0 })

#define DENOISE_MAX_RING 32   ///< frames kept on the device, at most

/** What the frame queue of a filter needs, as its set-up returns it. */
typedef struct DenoiseQueueSize {
    int ring;           ///< slots of the rings of planes, 1 .. DENOISE_MAX_RING
    int delay;          ///< frames after t needed to output t, below ring
} DenoiseQueueSize;

/**
 * The callbacks of a filter run by ff_denoise_opencl_activate(). Frame
 * indices count the input frames from 0; frame i lives in slot i % ring of
 * the filter's rings of float planes.
 */
typedef struct DenoiseQueueOps {
    /**
     * Set up for the frames of the input link (dn->layout describes them):
     * program, kernels and buffers; return the queue's ring and delay in
     * *size.
     */
    int (*init)(AVFilterContext *avctx, DenoiseQueueSize *size);
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
    int ring;                              ///< slots
    int delay;                             ///< frames after t needed to output t
    /**
     * Frames not yet output. A frame that the filter filters whole (every
     * channel of its images, timeline enabled) is kept as its properties
     * alone once it is loaded: its images go back to their pool.
     */
    AVFrame *frames[DENOISE_MAX_RING];
    uint8_t disabled[DENOISE_MAX_RING];    ///< timeline state of each
    /** The loading of each frame whose images are released once it is done. */
    cl_event loaded[DENOISE_MAX_RING];
    int64_t nb_in;                         ///< frames received
    int64_t nb_out;                        ///< frames enqueued for output
    /**
     * The last frame enqueued for output, sent once its commands are done,
     * when the next one is enqueued: its kernels run on the device while
     * the next frames are uploaded and the previous one downloaded.
     */
    AVFrame *pending;
    AVFrame *pending_in;                   ///< its input, which they read
    cl_event pending_done;                 ///< completion of its commands
} DenoiseFrameQueue;

#define DENOISE_MAX_CHANNELS 3

/**
 * The channels a patch distance is summed over (joint colour): nb planes
 * (or rings of planes) of the same size, 'stride' samples apart in one
 * buffer, the squared differences of channel c multiplied by weight[c].
 * In a program built with DENOISE_RING_RGB (denoise_common.cl), one
 * channel, opponent channel ring_channel of the rings of R, G and B bytes
 * that start 'stride' samples apart.
 */
typedef struct DenoiseChannels {
    int nb;
    unsigned stride;
    float weight[DENOISE_MAX_CHANNELS];
    int ring_channel;
} DenoiseChannels;

/** One channel: the distance is the plain sum of squared differences. */
#define DENOISE_CHANNELS_SINGLE ((DenoiseChannels) { 1, 0, { 1.0f, 1.0f, 1.0f }, 0 })

/** The special values of the sigma option. */
#define DENOISE_SIGMA_AUTO  -1
#define DENOISE_SIGMA_CURVE -2

enum DenoiseNoiseMode {
    DENOISE_NOISE_FIXED,    ///< sigma and csigma as given
    DENOISE_NOISE_AUTO,     ///< one standard deviation per plane, estimated
    DENOISE_NOISE_CURVE,    ///< a standard deviation per intensity, estimated
};

/*
 * The noise estimator (denoise_noise.c, kernels/noise_estimate.cl): 8x8
 * blocks whose 2-D DCT's low frequencies 1 <= i + j <= LOW_MAX choose the
 * flattest and whose high frequencies i + j >= HIGH_MIN measure the noise;
 * histograms of those energies on a log scale, per intensity bin of the
 * block mean.
 */
#define DENOISE_NOISE_IBINS     16      ///< intensity bins over 0..255
#define DENOISE_NOISE_LOG2_MIN  -6      ///< the energy histograms start at 2^-6
#define DENOISE_NOISE_OCTAVES   27      ///< and end at 2^21
#define DENOISE_NOISE_LSUB      3       ///< log2 of the bins per octave, low frequencies
#define DENOISE_NOISE_HSUB      5       ///< and high frequencies
#define DENOISE_NOISE_LBINS     (DENOISE_NOISE_OCTAVES << DENOISE_NOISE_LSUB)
#define DENOISE_NOISE_HBINS     (DENOISE_NOISE_OCTAVES << DENOISE_NOISE_HSUB)
#define DENOISE_NOISE_LOW_MAX   3
#define DENOISE_NOISE_HIGH_MIN  9
#define DENOISE_NOISE_CLIP_MAX  4       ///< blocks with as many clipped samples are left out
/** Per plane: block counts per intensity bin, then the high-frequency histograms. */
#define DENOISE_NOISE_STATS     (DENOISE_NOISE_IBINS + (1 + DENOISE_NOISE_IBINS) * DENOISE_NOISE_HBINS)
/** Points of the tables of the variance-stabilising transform and its inverse. */
#define DENOISE_NOISE_VST_POINTS 257

enum DenoiseNoiseKernel {
    DENOISE_NOISE_KERNEL_BLOCKS,
    DENOISE_NOISE_KERNEL_SELECT,
    DENOISE_NOISE_KERNEL_ACCUMULATE,
    DENOISE_NOISE_KERNEL_VST,
    DENOISE_NOISE_NB_KERNELS,
};

/** The state of the noise estimation of a filter. */
typedef struct DenoiseNoise {
    int mode;                                 ///< enum DenoiseNoiseMode
    int estimated[DENOISE_MAX_COMPONENTS];    ///< components whose noise is estimated
    int step[DENOISE_MAX_COMPONENTS];         ///< of the grid of blocks
    int nbx[DENOISE_MAX_COMPONENTS];          ///< blocks across and down
    int nby[DENOISE_MAX_COMPONENTS];
    size_t select_size;                       ///< work-group of noise_select
    cl_kernel kernels[DENOISE_NOISE_NB_KERNELS];
    cl_mem dct;                               ///< the 8x8 DCT
    cl_mem codes;                             ///< per block
    cl_mem hist_low;
    cl_mem thresholds;
    cl_mem stats;                             ///< DENOISE_NOISE_STATS per plane
    uint32_t *stats_host;

    /* smoothing over the frames, in their order */
    int64_t nb_frames;                        ///< frames estimated
    int64_t last_pts;
    double  var[DENOISE_MAX_COMPONENTS];      ///< smoothed variance (< 0: none yet)
    double  counts[DENOISE_NOISE_IBINS];      ///< last frame's share of blocks per intensity bin
    double  bin_var[DENOISE_MAX_COMPONENTS][DENOISE_NOISE_IBINS]; ///< sigma=curve: per bin

    /* sigma=curve: the variance-stabilising transform of each component,
     * tables of DENOISE_NOISE_VST_POINTS values */
    cl_mem vst_forward;                       ///< of the frame being loaded, per component
    cl_mem vst_inverse;                       ///< per slot and component
    float *tables;                            ///< host copy of both, the same layout
    float inverse_start[DENOISE_MAX_RING][DENOISE_MAX_COMPONENTS]; ///< value of the first point
    float inverse_scale[DENOISE_MAX_RING][DENOISE_MAX_COMPONENTS]; ///< points per unit
    float curve[DENOISE_MAX_RING][DENOISE_MAX_COMPONENTS][DENOISE_NOISE_IBINS]; ///< sigma per bin, -1: none

    /* per slot of the frame queue, for the frame in it */
    float frame_sigma[DENOISE_MAX_RING][DENOISE_MAX_COMPONENTS]; ///< its own estimate
    float sigma[DENOISE_MAX_RING][DENOISE_MAX_COMPONENTS];       ///< smoothed: the one used
    int slot;                                 ///< of the frame being denoised
} DenoiseNoise;

/** The kernels of the shared program part. */
enum DenoiseKernel {
    DENOISE_KERNEL_LOAD,
    DENOISE_KERNEL_LOAD_U8,
    DENOISE_KERNEL_LOAD_FLOAT,
    DENOISE_KERNEL_STORE,
    DENOISE_KERNEL_STORE_FLOAT,
    DENOISE_KERNEL_WRITE,
    DENOISE_KERNEL_WRITE_FLOAT,
    DENOISE_KERNEL_SEARCH,
    DENOISE_KERNEL_SEARCH_TILED,
    DENOISE_KERNEL_SEARCH_TILED_8X4,
    DENOISE_KERNEL_SEARCH_SQUARES,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4_U7,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4_U9_KEYS,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11,
    DENOISE_KERNEL_SEARCH_SQUARES_8X4_U11_KEYS,
    DENOISE_KERNEL_SEARCH_ROWS,
    DENOISE_KERNEL_SEARCH_ROWS_SINGLE,
    DENOISE_KERNEL_SEARCH_ROWS_8X3,
    DENOISE_KERNEL_SEARCH_ROWS_5X1,
    DENOISE_KERNEL_SEARCH_ROWS_5X1_KEYS,
    DENOISE_KERNEL_SEARCH_ROWS_5X1_U7,
    DENOISE_KERNEL_SEARCH_ROWS_5X1_U7_KEYS,
    DENOISE_KERNEL_SEARCH_EDGE,
    DENOISE_KERNEL_OPPONENT_FORWARD,
    DENOISE_KERNEL_OPPONENT_INVERSE,
    DENOISE_NB_KERNELS,
};

/**
 * Shared state of a denoiser, in the filter's private context after its
 * OpenCLFilterContext (DenoiseFilterContext): the common options, the
 * device for software frames, the frames' layout, the shared kernels,
 * profiling and the frame queue.
 */
typedef struct DenoiseOpenCLContext {
    /* options common to the filters (DENOISE_OPENCL_*_OPTION*) */
    float sigma;                              ///< or DENOISE_SIGMA_AUTO, _CURVE
    float csigma;
    float sigma_tau;                          ///< time constant of the estimate's smoothing
    int   planes;
    int   search_mode;                        ///< enum DenoiseSearchMode
    int   band_rows;                          ///< grid rows per band, 0: auto
    int   profile;                            ///< collect kernel times
    char *device;                             ///< OpenCL device for software frames, "P.D"

    /**
     * The OpenCL device for software frames that the filter created: the
     * device option's, one derived from a given device of another type, or
     * the default one (sw_device_is_default, named default_device: it
     * serves only where no OpenCL device is given). NULL: an OpenCL device
     * was given, or the default one could not be created (sw_device_err).
     */
    AVBufferRef *sw_device_ref;
    int sw_device_is_default;
    int sw_device_err;
    char default_device[24];                  ///< "P.D"

    DenoiseLayout layout;                     ///< of the input frames
    int width, height;                        ///< of the input frames
    /**
     * Software frames in and out: they are uploaded into and downloaded
     * from OpenCL frames of this context (NULL: OpenCL frames in and out).
     */
    AVBufferRef *sw_frames_ref;
    /**
     * ff_denoise_opencl_load_frame() loads the samples as bytes (8-bit
     * frames, sigma given or estimated but not curve, no opponent
     * transform: the integers the float planes would hold) instead of
     * floats; ff_denoise_opencl_init() then builds the program with
     * DENOISE_RING_BYTES 1 (rings of uchar), so that the noise estimator
     * reads them too.
     * Set before ff_denoise_opencl_init(), where
     * ff_denoise_opencl_bytes_possible().
     */
    int load_bytes;
    /**
     * With load_bytes, set where the rings of components 0 to 2 hold the
     * R, G and B bytes of frames whose opponent channels the kernels read
     * (denoise_ring_at()): ff_denoise_opencl_init() then builds the program
     * with DENOISE_RING_RGB 1, and ff_denoise_opencl_load_frame() leaves
     * the bytes as they are.
     */
    int ring_rgb;
    /**
     * The search kernels (bits 1 << enum DenoiseKernel) that the searches
     * set up so far may run, the only ones the program compiles: with
     * every search kernel a filter's first start took 2 to 3 times longer
     * on an H200, 5 to 12 s (doc/benchmarks.md, "Start-up").
     */
    uint64_t search_kernels;
    cl_command_queue queue;
    cl_kernel kernels[DENOISE_NB_KERNELS]; ///< NULL: not in the program
    int initialised;                          ///< the filter's set-up succeeded
    /**
     * What the user can change for the filter to need less device memory,
     * logged once after the first failure for its lack (NULL: nothing).
     */
    const char *memory_hint;
    int memory_hint_logged;
    const char *stage_names[DENOISE_MAX_STAGES];
    double stage_ms[DENOISE_MAX_STAGES];      ///< this frame
    double stage_total_ms[DENOISE_MAX_STAGES];
    int64_t nb_frames_profiled;
    DenoiseFrameQueue fq;
    DenoiseNoise noise;
} DenoiseOpenCLContext;

/**
 * The first members of every denoiser's private context, in this order, so
 * that the shared code reaches them from the filter context alone, as
 * ff_opencl_filter_*() reach ocf (DENOISE_CHECK_CONTEXT checks the order).
 */
typedef struct DenoiseFilterContext {
    OpenCLFilterContext  ocf;
    DenoiseOpenCLContext dn;
} DenoiseFilterContext;

#define DENOISE_CHECK_CONTEXT(type)                                             \
    static_assert(offsetof(type, ocf) == 0 &&                                   \
                  offsetof(type, dn) == offsetof(DenoiseFilterContext, dn),     \
                  #type " begins with the members of DenoiseFilterContext")

/*
 * AVOptions common to the filters, for a private context 'type' with a
 * DenoiseOpenCLContext named dn: the noise, the planes
 * filtered, and the implementation switches for testing and tuning.
 */
#define DENOISE_OPENCL_SIGMA_OPTIONS(type, runtime_flags)                                          \
    { "sigma", "noise standard deviation, on the 8-bit scale whatever the bit depth, or estimated", \
      offsetof(type, dn.sigma), AV_OPT_TYPE_FLOAT, { .dbl = 10.0 }, DENOISE_SIGMA_CURVE, 255.0,    \
      runtime_flags, .unit = "sigma" },                                                            \
        { "auto",  "estimated from each frame, one value per plane", 0, AV_OPT_TYPE_CONST,         \
          { .i64 = DENOISE_SIGMA_AUTO },  0, 0, runtime_flags, .unit = "sigma" },                  \
        { "curve", "estimated from each frame as a function of intensity", 0, AV_OPT_TYPE_CONST,   \
          { .i64 = DENOISE_SIGMA_CURVE }, 0, 0, runtime_flags, .unit = "sigma" },                  \
    { "csigma", "noise standard deviation of the chroma planes (-1: same as sigma)",               \
      offsetof(type, dn.csigma), AV_OPT_TYPE_FLOAT, { .dbl = -1.0 }, -1.0, 255.0, runtime_flags }, \
    { "sigma_tau", "time constant in seconds of the smoothing of estimated sigmas (0: none)",      \
      offsetof(type, dn.sigma_tau), AV_OPT_TYPE_FLOAT, { .dbl = 0.25 }, 0.0, 100.0,                \
      (runtime_flags) & ~AV_OPT_FLAG_RUNTIME_PARAM }

#define DENOISE_OPENCL_PLANES_OPTION(type, flags)                                                   \
    { "planes", "bit mask of the components to filter (alpha is copied)",                        \
      offsetof(type, dn.planes), AV_OPT_TYPE_INT, { .i64 = 0xf }, 0, 0xf, flags }

#define DENOISE_OPENCL_SEARCH_OPTION(type, flags)                                                   \
    { "search", "patch search kernel, for testing and tuning (same output)",                       \
      offsetof(type, dn.search_mode), AV_OPT_TYPE_INT, { .i64 = DENOISE_SEARCH_AUTO },             \
      DENOISE_SEARCH_AUTO, DENOISE_SEARCH_DIRECT, flags, .unit = "search" },                       \
        { "auto",   "work-group search on GPUs, per-patch search on CPUs", 0, AV_OPT_TYPE_CONST,   \
          { .i64 = DENOISE_SEARCH_AUTO },   0, 0, flags, .unit = "search" },                       \
        { "tiled",  "work-group search sharing the sums of overlapping patches", 0, AV_OPT_TYPE_CONST, \
          { .i64 = DENOISE_SEARCH_TILED },  0, 0, flags, .unit = "search" },                       \
        { "direct", "one work-item per reference patch", 0, AV_OPT_TYPE_CONST,                     \
          { .i64 = DENOISE_SEARCH_DIRECT }, 0, 0, flags, .unit = "search" }

#define DENOISE_OPENCL_BAND_OPTION(type, flags)                                                     \
    { "band", "rows of reference patches filtered at once, for testing and tuning "                \
      "(same output; 0: as many as 1/32 of the device memory holds)",                                        \
      offsetof(type, dn.band_rows), AV_OPT_TYPE_INT, { .i64 = 0 }, 0, 1 << 16, flags }

#define DENOISE_OPENCL_DEVICE_OPTION(type, flags)                                   \
    { "device", "OpenCL device for software frames, as P.D (platform.device); "    \
      "unset: the graph's, else the first GPU, else the first device",            \
      offsetof(type, dn.device), AV_OPT_TYPE_STRING, { .str = NULL }, 0, 0, flags }

#define DENOISE_OPENCL_PROFILE_OPTION(type, flags)                                                  \
    { "profile", "log the kernel time of each stage for every frame, for tuning",                  \
      offsetof(type, dn.profile), AV_OPT_TYPE_BOOL, { .i64 = 0 }, 0, 1, flags }

/**
 * The init of the denoisers, after their own checks: sigma must be a value
 * or auto or curve; with the device
 * option and no device given to the filter, create that OpenCL device and
 * give it to the filter (as -filter_hw_device would: for graphs without a
 * device, such as ffprobe's lavfi input), then ff_opencl_filter_init().
 */
int ff_denoise_opencl_init_filter(AVFilterContext *avctx, DenoiseOpenCLContext *dn);

/** NULL-terminated list of the software formats the denoisers accept. */
extern const enum AVPixelFormat ff_denoise_opencl_formats[];

/**
 * The query_formats of the denoisers: OpenCL frames, or, where the filter
 * has an OpenCL device, the software formats of ff_denoise_opencl_formats
 * that the device can carry; the output has the input's format.
 */
int ff_denoise_opencl_query_formats(const AVFilterContext *avctx,
                                    AVFilterFormatsConfig **cfg_in,
                                    AVFilterFormatsConfig **cfg_out);

/**
 * The input link's config_props for the denoisers: checks that the input
 * carries OpenCL frames of a supported software format, or software frames
 * of a supported format and that the filter has an OpenCL device, with a
 * clear error otherwise, and describes them in dn->layout.
 */
int ff_denoise_opencl_config_input(AVFilterLink *inlink,
                                   DenoiseOpenCLContext *dn);

/**
 * The output link's config_props for the denoisers: creates the output
 * frames context (for software frames, the context they are uploaded
 * into), then sets the filter up with ops->init() and sizes the frame
 * queue with what it returns.
 */
int ff_denoise_opencl_config_output(AVFilterLink *outlink,
                                    DenoiseOpenCLContext *dn,
                                    const DenoiseQueueOps *ops);

/**
 * Make the float planes of every component at least min_size x min_size:
 * a smaller image is loaded with its last column and row repeated (the
 * load samples the image clamped to its edge) and only its own samples are
 * stored back.
 */
void ff_denoise_opencl_pad_components(DenoiseLayout *layout, int min_size);

/** Describe the planes and components of a supported software format. */
int ff_denoise_opencl_get_layout(void *log_ctx, enum AVPixelFormat sw_format,
                                 int width, int height, DenoiseLayout *layout);

/** Whether component c of frames of this layout is a chroma component. */
static inline int ff_denoise_opencl_is_chroma(const DenoiseLayout *layout, int c)
{
    return !layout->is_rgb && (c == 1 || c == 2);
}

/** Whether component c exists and the planes option selects it. */
int ff_denoise_opencl_selected(const DenoiseOpenCLContext *dn, int c);

/**
 * Whether the first three components are selected and of the same size
 * (4:4:4 or RGB), so that they can be searched or grouped jointly.
 */
int ff_denoise_opencl_joint_possible(const DenoiseOpenCLContext *dn);

/**
 * Whether the frames' samples load as the integers of bytes (8-bit frames,
 * no sigma=curve transform), so that load_bytes may be set; a colour
 * transform of the filter's own makes fractions of them too.
 */
int ff_denoise_opencl_bytes_possible(const DenoiseOpenCLContext *dn);

/**
 * The noise of component c: sigma, csigma on the chroma of YUV frames when
 * set, or with opponent set the noise of opponent channel c of RGB planes
 * of noise sigma.
 */
float ff_denoise_opencl_sigma(const DenoiseOpenCLContext *dn, int c,
                              int opponent);

/** The noise of opponent channel c of RGB planes of noise sigma. */
float ff_denoise_opencl_opponent_sigma(float sigma, int c);

/**
 * The process_command of the denoisers: ff_filter_process_command(), except
 * that sigma cannot change from or to auto or curve once the filter is set
 * up, nor, with auto or curve, csigma from or to -1 (what is estimated is
 * decided then).
 */
int ff_denoise_opencl_process_command(AVFilterContext *avctx,
                                      DenoiseOpenCLContext *dn, const char *cmd,
                                      const char *arg, char *res, int res_len,
                                      int flags);

/**
 * The frame whose noise ff_denoise_opencl_sigma() gives from now on, when
 * it is estimated: frame t of the queue. ff_denoise_opencl_activate() sets
 * the frame it outputs; a filter that filters other frames first (the
 * first step of vbm3d_gpu) sets them itself.
 */
void ff_denoise_opencl_use_frame(DenoiseOpenCLContext *dn, int64_t t);

/**
 * Whether the timeline enables the filter at frame n of the queue, a frame
 * loaded and not yet output (fq->nb_out <= n < fq->nb_in).
 */
int ff_denoise_opencl_frame_enabled(const DenoiseFrameQueue *fq, int64_t n);

/*
 * Noise estimation (denoise_noise.c), with sigma=auto or curve: the noise
 * of each selected plane measured on the device when the frame is loaded,
 * smoothed over the frames, exported as frame metadata.
 */

/** The program's compile-time constants of the estimator's kernels. */
extern const char ff_denoise_noise_defines[];

/**
 * Set the estimator up from the options (called by ff_denoise_opencl_init()
 * once the program is built): its kernels and, when estimating, buffers.
 */
int ff_denoise_noise_init(AVFilterContext *avctx, DenoiseOpenCLContext *dn);

void ff_denoise_noise_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn);

/**
 * Estimate the noise of the estimated components of a frame just loaded,
 * component c in slot slots[c] of the ring of planes rings[c] (before any
 * opponent transform): on the device, then read back, smoothed with the
 * previous frames' (reset at a scene cut) and kept for the frame's slot of
 * the queue, 'qslot'.
 */
int ff_denoise_noise_estimate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                              const AVFrame *in, cl_mem *rings,
                              const int *slots, int qslot);

/**
 * The estimated noise of component c of the frame of slot 'slot'; with
 * sigma=curve that of its planes after the variance-stabilising transform.
 */
float ff_denoise_noise_sigma(const DenoiseOpenCLContext *dn, int c, int slot);

/**
 * With sigma=curve, enqueue the inverse variance-stabilising transform of
 * the denoised planes of the components set in 'mask' (planes[c], the
 * filter's output planes) of the frame of slot 'slot'.
 */
int ff_denoise_noise_inverse(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                             cl_mem *planes, int mask, int slot);

/**
 * Attach the estimates of the frame of slot 'slot' to its output frame as
 * metadata lavfi.<filter>.sigma.<component>, and with sigma=curve
 * lavfi.<filter>.curve.<component>.<intensity>.
 */
int ff_denoise_noise_export(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                            AVFrame *out, int slot);

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

/**
 * Wait for the queue, log the average stage times when profiling, free the
 * queued frames and release what ff_denoise_opencl_init() created; the
 * filter then releases its own objects and calls ff_opencl_filter_uninit().
 */
void ff_denoise_opencl_uninit(AVFilterContext *avctx, DenoiseOpenCLContext *dn);


/** Create a device buffer, with a clear message if the device refuses it. */
cl_mem ff_denoise_opencl_alloc(AVFilterContext *avctx, size_t size);

/** The same for a read-only table, holding a copy of 'data'. */
cl_mem ff_denoise_opencl_table(AVFilterContext *avctx, const void *data, size_t size);

/**
 * Log "'what': the OpenCL error code", with what the code means where it is
 * a lack of memory (a device that allocates its buffers at their first use,
 * as NVIDIA's does, reports it when a command is enqueued or run, not when
 * the buffer is created); return AVERROR(ENOMEM) for those, else
 * AVERROR(EIO).
 */
int ff_denoise_opencl_error(AVFilterContext *avctx, const char *what, cl_int cle);

/**
 * Set the arguments of a kernel from a list and enqueue it over a 2-D range
 * of at least width x height work-items, rounded up to the work-group size
 * local_w x local_h (0: a default); when profiling, wait for it and account
 * its time to 'stage'.
 */
int ff_denoise_opencl_run(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                          cl_kernel kernel, const OpenCLKernelArg *args,
                          int nb_args, size_t width, size_t height,
                          size_t local_w, size_t local_h, int stage);

/** An OpenCLKernelArg of a variable (an lvalue). */
#define DENOISE_ARG(v) { sizeof(v), &(v) }
/** An OpenCLKernelArg of local memory of 'size' bytes. */
#define DENOISE_LOCAL_ARG(size) { (size), NULL }

/**
 * Enqueue the loading of the selected components of a frame: component c
 * into slot slots[c] of the ring of planes rings[c]; their noise estimated
 * when sigma is auto or curve; with opponent, the first three then turned
 * from RGB into opponent channels (their slots must be equal), unless the
 * rings hold RGB bytes (ring_rgb), which the kernels turn as they read them.
 */
int ff_denoise_opencl_load_frame(AVFilterContext *avctx,
                                 DenoiseOpenCLContext *dn, const AVFrame *in,
                                 cl_mem *rings, const int *slots, int opponent);

/**
 * Enqueue the conversion of three planes, in place, from R, G, B to the
 * opponent channels (inverse = 0) or back (inverse = 1); the planes are
 * slot 'slot' of three rings of planes of the size of component 0.
 */
int ff_denoise_opencl_opponent(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, int slot, int inverse);

/**
 * Set up the search of a plane described by 'par', before
 * ff_denoise_opencl_init(): its grid of patches, the band of grid rows
 * whose tables are held at once, and the kernels it may run (one
 * work-group kernel at most, beside the per-patch and edge searches),
 * which the program then compiles.
 */
void ff_denoise_opencl_search_init(AVFilterContext *avctx,
                                   DenoiseOpenCLContext *dn, DenoiseSearch *ds,
                                   const DenoiseSearchParams *par);

/**
 * Choose the search's kernel among those built, after
 * ff_denoise_opencl_init(): a work-group search where one runs its tile on
 * this device (and search= allows it), else the per-patch search.
 */
void ff_denoise_opencl_search_ready(AVFilterContext *avctx,
                                    DenoiseOpenCLContext *dn, DenoiseSearch *ds);

/**
 * The rows of work-items of a kernel that takes DENOISE_IO_ROWS of 'rows'
 * rows a work-item (denoise_load_plane, denoise_store_plane,
 * nlmeans_patch_sums).
 */
static inline int ff_denoise_opencl_io_rows(int rows)
{
    return (rows + DENOISE_IO_ROWS - 1) / DENOISE_IO_ROWS;
}

/** The end (exclusive) of the band of grid rows starting at gy_first. */
static inline int ff_denoise_opencl_band_end(const DenoiseSearch *ds, int gy_first)
{
    return FFMIN(gy_first + ds->band, ds->ny);
}

/**
 * Enqueue the search of the most similar patches of the reference patches
 * of the window's reference frame in the band of grid rows from gy_first
 * (table r = (gy - gy_first) * nx + gx), among the planes of the window, in
 * the ring of planes 'frames', with distances summed over the channels 'ch'
 * of the frames (channel 0 at the start of 'frames'). With ref_first the
 * reference patch is always entry 0 of its table.
 */
int ff_denoise_opencl_search(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                             const DenoiseSearch *ds, cl_mem frames,
                             const DenoiseChannels *ch,
                             const DenoiseWindow *win, int ref_first,
                             int gy_first, cl_mem positions,
                             cl_mem distances, int stage);

/**
 * The activate() of the denoisers: frames are queued in the ring, loaded on
 * arrival, and frame t is enqueued for output once frame t + delay has
 * arrived or the stream has ended, with the properties of input frame t:
 * denoised by ops->denoise() and stored from the float planes of the
 * components it sets, or copied when the timeline disabled the filter at
 * that frame. It goes out when the next frame is enqueued, or at the end of
 * the stream, once its commands are done.
 */
int ff_denoise_opencl_activate(AVFilterContext *avctx, DenoiseOpenCLContext *dn,
                               cl_mem *planes, const DenoiseQueueOps *ops);

/**
 * The window of frame t in the queue's ring: 'past' frames before it and
 * 'future' after it, truncated to the frames 0 .. last.
 */
DenoiseWindow ff_denoise_opencl_window(const DenoiseFrameQueue *fq, int64_t t,
                                       int64_t last, int past, int future);

#endif /* AVFILTER_DENOISE_OPENCL_H */
