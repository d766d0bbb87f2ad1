/*
 * check_kernels: individual OpenCL kernels of the GPU denoisers, run alone
 * on random inputs and edge sizes against C references (the golden model's
 * stage functions where there is one), in the manner of dav1d's checkasm:
 * a failure names the kernel, the first index that differs, the value the
 * kernel gave and the one expected.
 *
 *   check_kernels [--device P.D] [--kernels DIR] [--seed N] [--test NAME]
 *                 [--bench] [--repeat N] [--search-cases N]
 *                 [--edge-stripes N]
 *
 * The program is built as libavfilter/vf_bm3d_gpu.c and
 * libavfilter/denoise_opencl.c build bm3d_gpu's: the filter's constants
 * (NB_NEIGHBORS, BM3D_HAAR, BM3D_INT64_ATOMICS), the search constants, the
 * noise estimator's constants (both from libavfilter/denoise_opencl.h,
 * extracted by the Makefile into check_kernels_defs.h), then
 * denoise_common.cl, patch_search.cl, noise_estimate.cl and bm3d_gpu.cl,
 * read from DIR (default "kernels"), with the same build option;
 * vbm3d_gpu's with VBM3D_Q, VBM3D_R1MAX and VBM3D_R2MAX too and
 * vbm3d_search.cl after bm3d_gpu.cl; nlmeans_gpu's likewise
 * (NB_NEIGHBORS, SEARCH_CHANNELS 1 or 3 as
 * libavfilter/vf_nlmeans_gpu.c, then nlmeans_gpu.cl). Kernel
 * arguments are set in the order and with the types of the host's
 * argument arrays, and launched over the same rounded-up 2-D ranges.
 *
 * Checks (each prints "ok   KERNEL: N cases" or "FAIL KERNEL: ..."):
 *   denoise_load_plane   8- and 16-bit images (10 and 12 bits in the high
 *                        bits of 16), one, two or four channels, planes larger
 *                        than the image (mirrored) against ref_tool.c's
 *                        ref_pad_image() and ref_load_plane()
 *   denoise_load_plane_u8  the same into bytes, 8-bit images
 *   denoise_store_plane  the same formats, channel masks (alpha, the
 *                        fourth channel, copied), padded pitches against
 *                        ref_tool.c's ref_quantise()
 *   denoise_write_plane  as denoise_store_plane with every channel written,
 *                        images of 1 and 2 channels, no source image
 *   denoise_load_plane_float and _store_plane_float  float images of 1, 2
 *                        and 4 channels, values beyond 0 .. 1 too: times
 *                        255 and times 1 / 255, bit for bit (and
 *                        _write_plane_float, 1 and 2 channels)
 *   denoise_opponent_forward  RGB to opponent channels and back, in a slot
 *   and _inverse         of rings of three planes, integer and float
 *                        samples, against opponent.h: bit for bit, the
 *                        other slots unchanged
 *   bm3d_normalise       random fixed-point sums against bm3d_divide(),
 *                        with 64-bit atomics (where the device has them)
 *                        and with pairs of 32-bit words; bm3d_normalise_u8
 *                        (into bytes) against the same, rounded, within
 *                        0 .. 255 or -128 .. 127 plus 128 (vbm3d_model.c's
 *                        round_basic()), the other bytes unchanged
 *   patch_search         small random planes (few levels, for ties,
 *                        constant planes, for ties at distance 0, or
 *                        fractional samples), steps, radii (for the
 *                        entries of keys, up to the largest window they
 *                        take), windows of frames in a ring, bands,
 *                        ref_first, skipped patches, and for the edge
 *                        search stripes whose best candidates one lane
 *                        holds, against bm3d_grid_pos(),
 *                        bm3d_patch_distance() and bm3d_keep_best()
 *   bm3d_filter_ht       one group per launch, group sizes 1 to NB, against
 *                        bm3d_group_size() and bm3d_hard_threshold_group():
 *                        the fixed-point accumulators bit for bit, with
 *                        both kinds of atomics, on rings of RGB bytes
 *                        (each opponent channel), and in programs of
 *                        groups of 32 and of 8, each with Haar and with
 *                        Walsh-Hadamard along the groups, and of 4 and 2
 *                        with Haar; sigma 0 included (a threshold of 0),
 *                        and entries at tau exactly
 *   bm3d_filter_wiener   the same groups with a basic estimate as the
 *                        oracle, sigma 0 included (gains of 1), against
 *                        bm3d_wiener_group(): bit for bit, both atomics
 *   nlmeans_weights      random tables (used entries, then +infinity) of
 *   and                  one channel (floats, bytes or RGB bytes) or joint
 *                        colour, patch sizes 1 to 8,
 *   nlmeans_patch_sums   sigma and h 0 or not, with and without the flat
 *   (and _p8, on 8x8)    test, against a C reference of
 *                        doc/nlmeans_gpu-algorithm.md ("Weights", "Flat
 *                        groups"): the patch sums of every position (and
 *                        none past the last patch), bisquare weights and
 *                        flat means bit for bit, exp weights within
 *                        NLM_EXP_ULPS (16) ulp
 *   nlmeans_aggregate    random tables (flat groups among them) over a ring
 *   (and _8x4)           of frames, one channel or joint colour, planes of
 *                        1x1 and odd sizes (patch and step cut), steps that
 *                        leave an extra edge row and column of patches,
 *                        band by band as the filter runs it, against a C
 *                        reference of doc/nlmeans_gpu-algorithm.md
 *                        ("Aggregation"): within its (n + K + 10) u Vmax
 *                        (the order of the float sums is free)
 *   vbm3d_search         moving random frames in a ring of P + 2F + 1 (of
 *                        floats; of bytes, of RGB bytes and, with
 *                        vbm3d_search_basic, of opponent bytes: integers),
 *                        windows truncated or not, causal or not, q 1, 2, 8,
 *                        groups of 8 to 32, windows scanned by rows or one
 *                        candidate at a time, bands, against the video
 *                        model's match_group(): every position and
 *                        distance of every group, bit for bit
 *   patch_search_tiled,  the work-group searches, each on the searches that
 *   patch_search_rows,   tiled_kernel() of denoise_opencl.c gives it
 *   patch_search_squares (squares: integer samples, blocks of 2 to 8;
 *   and the specialised  rows: steps prime to the patch; tiled: the other
 *   entry points         steps on fractional samples; _rows_single and
 *                        _squares_8x4 (8, 7, 9 and 11 offsets a pass:
 *                        _u7, _u9, _u11), _tiled_8x4, _rows_8x3, _rows_5x1
 *                        and _rows_5x1_u7 (5x5 patches; 8 and 7 offsets a
 *                        pass) the steps they are compiled for, on
 *                        windows of 5, 11, 17 and 21; _u9_keys, _u11_keys,
 *                        _rows_5x1_keys and _rows_5x1_u7_keys, tables of
 *                        keys, on integer samples),
 *                        sizes of one to three work-groups a side, against
 *                        the model as patch_search: the regular grid's
 *                        tables bit for bit, the rest left as it was
 *   patch_search,        the same with three channels, channel 0 of weight
 *   _tiled and _edge     1 and the others random, in nlmeans_gpu's program
 *   (3 channels)         of joint colour, against the contract of
 *                        search_distance() (search_distance_ref())
 *   patch_search,        the same program on one channel, as the filter
 *   _tiled and _edge     searches an alpha plane there
 *   (joint colour,
 *   1 channel)
 *   noise_select,        the noise estimation's integer stages against C
 *   noise_accumulate     references of their contracts (noise_estimate.cl):
 *                        random histograms (empty, sparse and full rows),
 *                        shares kept and least counts, work-groups of the
 *                        filters' size, 64 and NOISE_IBINS + 1: thresholds,
 *                        counts, cleared rows and histograms bit for bit;
 *                        random codes on and next to the thresholds, with
 *                        and without the per-bin histograms, a row of
 *                        counted codes past the grid that must not count
 *   noise_vst            the variance-stabilising table lookup of
 *                        sigma=curve, samples below, on, within and above
 *                        the table, its last segment included: bit for bit
 *   noise_blocks         the DCT blocks' codes and histogram counts against
 *                        a C reference of the contract, planes of floats and
 *                        of bytes, grid steps 8 to 16, flat, sloping,
 *                        clipped, bright and random areas, the DCT and random
 *                        matrices: bit for bit
 *   every kernel checked  with every check run (no --test), each kernel of
 *                        the programs built (CL_PROGRAM_KERNEL_NAMES) was
 *                        created by a check: a new kernel without one
 *                        fails, by name
 * Every buffer a kernel gets lies between two guard bands of at least 4 KiB
 * (new_buffer()): a launch that changes a band fails its check, naming the
 * argument and the byte, whether or not the output was right.
 * With --bench each kernel but the bm3d_filter_*, nlmeans_*, vbm3d_search
 * and work-group search ones is then timed on a larger input: the median
 * of --repeat launches (default 11), from OpenCL profiling events. --test
 * NAME runs the kernels whose name contains NAME (patch_search: all four
 * searches), --test 'NAME$' the kernel of that name alone.
 * --search-cases N runs the first N cases of each search's check alone (its
 * smallest planes: for a device as slow as a simulator).
 * --edge-stripes N runs the first N (default 16) of patch_search_edge's
 * planes of stripes (4: both windows, and ref_first, for a simulator,
 * where each takes seconds).
 * Two-channel images (CL_RG: nv12, p010) are skipped, and said so, where
 * the device has none (PoCL).
 *
 * Exit status: 0 when every check passed, 1 when one failed, 2 for a usage
 * or OpenCL error.
 *
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

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_kernels_defs.h"     /* DENOISE_SEARCH_*, DENOISE_NOISE_* */
#include "../model/bm3d_model_internal.h"
#include "../model/ref_tool.h"
/* the video model whole, for its search stage (match_group() is static) */
#include "../model/vbm3d_model.c"

#define STR(x)  #x
#define XSTR(x) STR(x)

/* The size of the search tables: bm3d_gpu's default preset (fast, groups
 * of 16 in both steps), NB_NEIGHBORS = max(group, group2). */
#define NB 16
#define MAX_REPEATS 1000

/* The search constants, as ff_denoise_opencl_init() writes them. */
static const char search_defines[] =
    "#define SEARCH_TILE "   XSTR(DENOISE_SEARCH_TILE)   "\n"
    "#define SEARCH_UNROLL " XSTR(DENOISE_SEARCH_UNROLL) "\n"
    "#define SEARCH_ROWS_UNROLL " XSTR(DENOISE_SEARCH_ROWS_UNROLL) "\n"
    "#define SEARCH_EDGE_LANES " XSTR(DENOISE_SEARCH_EDGE_LANES) "\n"
    "#define IO_ROWS " XSTR(DENOISE_IO_ROWS) "\n";

/* The noise estimator's, as ff_denoise_noise_defines (denoise_noise.c). */
static const char noise_defines[] =
    "#define NOISE_IBINS "    XSTR(DENOISE_NOISE_IBINS)    "\n"
    "#define NOISE_LOG2_MIN " XSTR(DENOISE_NOISE_LOG2_MIN) "\n"
    "#define NOISE_LSUB "     XSTR(DENOISE_NOISE_LSUB)     "\n"
    "#define NOISE_HSUB "     XSTR(DENOISE_NOISE_HSUB)     "\n"
    "#define NOISE_LBINS "    XSTR(DENOISE_NOISE_LBINS)    "\n"
    "#define NOISE_HBINS "    XSTR(DENOISE_NOISE_HBINS)    "\n"
    "#define NOISE_LOW_MAX "  XSTR(DENOISE_NOISE_LOW_MAX)  "\n"
    "#define NOISE_HIGH_MIN " XSTR(DENOISE_NOISE_HIGH_MIN) "\n"
    "#define NOISE_CLIP_MAX " XSTR(DENOISE_NOISE_CLIP_MAX) "\n"
    "#define NOISE_VST_POINTS " XSTR(DENOISE_NOISE_VST_POINTS) "\n";

/* The shared sources in the order of ff_denoise_opencl_init(), then the
 * filters' own: bm3d_gpu's (vbm3d_gpu's: and vbm3d_search.cl) and
 * nlmeans_gpu's. */
enum { SRC_BM3D = 3, SRC_VBM3D = 4, SRC_NLMEANS = 5 };

static const char *const source_names[] = {
    "denoise_common.cl", "patch_search.cl", "noise_estimate.cl", "bm3d_gpu.cl",
    "vbm3d_search.cl", "nlmeans_gpu.cl",
};

typedef struct Options {
    int platform, device;
    const char *kernels;
    uint64_t seed;
    const char *test;
    int bench;
    int repeat;
    int search_cases;   /* 0: all */
    int edge_stripes;   /* patch_search_edge's planes of stripes */
} Options;

static Options opt = { 0, 0, "kernels", 1, NULL, 0, 11, 0, 16 };
static cl_context ctx;
static cl_device_id dev;
static cl_command_queue queue;
static int failures;
static char guard_error[256];   /* the first write past a buffer in a check */

/* The kernels of the programs built, and those a check created: with every
 * check run, each of the former must be among the latter. */
#define MAX_KERNEL_NAMES 128
typedef struct NameSet {
    char *name[MAX_KERNEL_NAMES];
    int nb;
} NameSet;
static NameSet built_kernels, checked_kernels;

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "check_kernels: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

static void cl_check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS)
        die("%s failed: %d", what, err);
}

/* xorshift64*: the same inputs for the same seed on every host. */
static uint64_t rng_state;

static uint64_t rnd64(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static unsigned rnd(unsigned n)
{
    return (unsigned)((rnd64() >> 32) % n);
}

/* Uniform in [lo, hi). */
static float rndf(float lo, float hi)
{
    return lo + (hi - lo) * (float)((rnd64() >> 40) * (1.0 / (1 << 24)));
}

static void *alloc_or_die(size_t size)
{
    void *p = calloc(1, size ? size : 1);

    if (!p)
        die("out of memory");
    return p;
}

static int name_set_has(const NameSet *set, const char *name, size_t len)
{
    for (int i = 0; i < set->nb; i++)
        if (strlen(set->name[i]) == len && !strncmp(set->name[i], name, len))
            return 1;
    return 0;
}

/* Add the first 'len' characters of 'name' to the set, once. */
static void name_set_add(NameSet *set, const char *name, size_t len)
{
    if (name_set_has(set, name, len))
        return;
    if (set->nb == MAX_KERNEL_NAMES)
        die("more than %d kernel names", MAX_KERNEL_NAMES);
    set->name[set->nb] = alloc_or_die(len + 1);
    memcpy(set->name[set->nb++], name, len);
}

static int gcd(int a, int b)
{
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/*
 * Whether the command line's --test selects this kernel: a part of its
 * name, or its whole name followed by '$'.
 */
static int selected(const char *name)
{
    size_t len;

    if (!opt.test)
        return 1;
    len = strlen(opt.test);
    if (len && opt.test[len - 1] == '$')
        return strlen(name) == len - 1 && !strncmp(name, opt.test, len - 1);
    return strstr(name, opt.test) != NULL;
}

/*
 * The result of one kernel's check: its cases, and the first difference
 * found, reported once all its cases have run.
 */
typedef struct Check {
    const char *kernel;
    int cases;
    int failed;
    char what[512];
    char note[128];         /* what was skipped, on the ok line */
} Check;

static void check_begin(Check *c, const char *kernel)
{
    memset(c, 0, sizeof(*c));
    c->kernel = kernel;
    guard_error[0] = 0;
}

/* Record the first failure of a check: which case, and what differs. */
static void check_fail(Check *c, const char *fmt, ...)
{
    va_list ap;

    if (c->failed++)
        return;
    va_start(ap, fmt);
    vsnprintf(c->what, sizeof(c->what), fmt, ap);
    va_end(ap);
}

static void check_end(Check *c)
{
    if (guard_error[0]) {
        check_fail(c, "%s", guard_error);
        guard_error[0] = 0;
    }
    if (c->failed) {
        printf("FAIL %s: %s (%d of %d cases failed)\n", c->kernel, c->what,
               c->failed, c->cases);
        failures++;
    } else {
        printf("ok   %s: %d cases%s%s\n", c->kernel, c->cases,
               c->note[0] ? "; " : "", c->note);
    }
    fflush(stdout);
}

/* Compare two float arrays bit for bit (NaN and -0.0 included); returns
 * the first index that differs, or -1. */
static long first_float_diff(const float *got, const float *exp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &exp[i], sizeof(float)))
            return (long)i;
    return -1;
}

static char *read_source(const char *dir, const char *name)
{
    char path[4096];
    FILE *f;
    long size;
    char *s;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "rb");
    if (!f)
        die("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = alloc_or_die(size + 1);
    if (fread(s, 1, size, f) != (size_t)size)
        die("cannot read %s", path);
    fclose(f);
    return s;
}

/* ---------------------------------------------------------------------- */
/* OpenCL set-up, program and launches                                    */

static void open_device(void)
{
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    cl_uint nb_platforms = 0, nb_devices = 0;
    cl_bool images = CL_FALSE;
    char name[256] = "";
    cl_int err;

    cl_check(clGetPlatformIDs(16, platforms, &nb_platforms), "clGetPlatformIDs");
    if (opt.platform >= (int)nb_platforms)
        die("no platform %d", opt.platform);
    cl_check(clGetDeviceIDs(platforms[opt.platform], CL_DEVICE_TYPE_ALL, 16,
                            devices, &nb_devices), "clGetDeviceIDs");
    if (opt.device >= (int)nb_devices)
        die("no device %d.%d", opt.platform, opt.device);
    dev = devices[opt.device];
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_IMAGE_SUPPORT, sizeof(images), &images, NULL);
    if (!images)
        die("device %d.%d (%s) has no image support", opt.platform, opt.device, name);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_check(err, "clCreateContext");
    /* profiling always on: every launch is timed and waited for */
    queue = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
    cl_check(err, "clCreateCommandQueue");
    printf("device %d.%d: %s, seed %" PRIu64 "\n", opt.platform, opt.device,
           name, opt.seed);
}

/* Whether the device has 64-bit integer atomics (choose_atomics() of
 * vf_bm3d_gpu.c with atomics=auto). */
static int has_int64_atomics(void)
{
    char extensions[4096] = "";

    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof(extensions) - 1,
                    extensions, NULL);
    return !!strstr(extensions, "cl_khr_int64_base_atomics");
}

/* The program's kernels into built_kernels (CL_PROGRAM_KERNEL_NAMES: a
 * list separated by ';'). */
static void record_kernel_names(cl_program prog)
{
    size_t size = 0;
    char *names;

    cl_check(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &size),
             "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
    names = alloc_or_die(size + 1);
    cl_check(clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, size, names, NULL),
             "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
    for (const char *p = names; *p;) {
        size_t len = strcspn(p, ";");

        if (len)
            name_set_add(&built_kernels, p, len);
        p += len + (p[len] == ';');
    }
    free(names);
}

/*
 * A filter's program as ff_denoise_opencl_init() builds it (build_options()
 * included): the filter's defines, the search and noise constants, the
 * shared sources, then the filter's own (source_names[first .. last]).
 */
static cl_program build_sources(const char *defines, int first, int last)
{
    static char *sources[6];
    const char *src[9];
    cl_device_fp_config fp = 0;
    const char *options;
    cl_program prog;
    cl_int err;
    int n = 0;

    for (int i = 0; i < 3; i++)
        if (!sources[i])
            sources[i] = read_source(opt.kernels, source_names[i]);
    for (int i = first; i <= last; i++)
        if (!sources[i])
            sources[i] = read_source(opt.kernels, source_names[i]);
    src[n++] = defines;
    src[n++] = search_defines;
    src[n++] = noise_defines;
    for (int i = 0; i < 3; i++)
        src[n++] = sources[i];
    for (int i = first; i <= last; i++)
        src[n++] = sources[i];

    clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp, NULL);
    options = fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT ?
              "-cl-fp32-correctly-rounded-divide-sqrt" : NULL;
    prog = clCreateProgramWithSource(ctx, n, src, NULL, &err);
    cl_check(err, "clCreateProgramWithSource");
    err = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t size = 0;
        char *log;

        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size);
        log = alloc_or_die(size + 1);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, size, log, NULL);
        fprintf(stderr, "%s\n", log);
        die("program build failed: %d", err);
    }
    record_kernel_names(prog);
    return prog;
}

/* Room for a program's defines, its four transform matrices included. */
#define DEFINES_SIZE 8192

/*
 * Appends to 'defines' the 2-D transforms of both steps as
 * define_transforms() of vf_bm3d_gpu.c writes them (BM3D_FWD1, BM3D_INV1,
 * BM3D_FWD2, BM3D_INV2: the bits of the coefficients, and BM3D_DCT1), from
 * the model's tables: step 1 Bior1.5 when 'bior', else the DCT; step 2 the
 * DCT.
 */
static void append_transforms(char *defines, int bior)
{
    BM3DTables t;

    for (int step = 1; step <= 2; step++) {
        bm3d_init_tables(&t, 2.0f, step == 1 && bior, 1);
        for (int inv = 0; inv < 2; inv++) {
            const float *m = inv ? &t.Ci[0][0] : &t.C[0][0];
            size_t len = strlen(defines);

            len += snprintf(defines + len, DEFINES_SIZE - len, "#define BM3D_%s%d",
                            inv ? "INV" : "FWD", step);
            for (int i = 0; i < BM3D_PATCH2; i++) {
                uint32_t bits;

                memcpy(&bits, &m[i], sizeof(bits));
                len += snprintf(defines + len, DEFINES_SIZE - len,
                                "%s0x%08" PRIx32 "u", i ? ", " : " ", bits);
            }
            snprintf(defines + len, DEFINES_SIZE - len, "\n");
            if (len + 1 >= DEFINES_SIZE)
                die("program defines too long");
        }
    }
    snprintf(defines + strlen(defines), DEFINES_SIZE - strlen(defines),
             "#define BM3D_DCT1 %d\n", !bior);
}

/*
 * bm3d_gpu's program with NB_NEIGHBORS = nb, the Haar transform along the
 * groups (else Walsh-Hadamard, vbm3d_gpu's default), the given
 * accumulators and first-step transform (Bior1.5 when 'bior', else the
 * DCT), as build_program() of vf_bm3d_gpu.c builds it; with 'rgb' its
 * rings of RGB bytes (DENOISE_RING_BYTES 1, DENOISE_RING_RGB 1), as
 * vbm3d_gpu's program has them for RGB grouped jointly.
 */
static cl_program build_program(int nb, int haar, int int64_atomics, int bior,
                                int rgb)
{
    static char defines[DEFINES_SIZE];

    snprintf(defines, sizeof(defines),
             "#define NB_NEIGHBORS %d\n#define BM3D_HAAR %d\n"
             "#define BM3D_INT64_ATOMICS %d\n%s", nb, haar, int64_atomics,
             rgb ? "#define DENOISE_RING_BYTES 1\n#define DENOISE_RING_RGB 1\n" : "");
    append_transforms(defines, bior);
    return build_sources(defines, SRC_BM3D, SRC_BM3D);
}

/*
 * nlmeans_gpu's program with NB_NEIGHBORS = NB (its default n) and
 * SEARCH_CHANNELS 3 (joint colour) or 1, with rings of floats or (bytes)
 * of bytes, or (rgb, one search channel) of the R, G, B bytes of opponent
 * colours, as build_program() of vf_nlmeans_gpu.c builds it.
 */
static cl_program build_nlmeans_program(int search_channels, int bytes, int rgb)
{
    char defines[160];

    snprintf(defines, sizeof(defines),
             "#define NB_NEIGHBORS %d\n#define SEARCH_CHANNELS %d\n"
             "#define DENOISE_RING_BYTES %d\n#define DENOISE_RING_RGB %d\n", NB,
             search_channels, bytes || rgb, rgb);
    return build_sources(defines, SRC_NLMEANS, SRC_NLMEANS);
}

/* The programs of nlmeans_gpu's rings of bytes, 1 and 3 search channels,
 * and of RGB bytes, built at their first use: the searches' checks run each
 * case of integer samples on them too. */
static cl_program byte_programs[2], rgb_program;

static cl_program byte_search_program(int search_channels)
{
    cl_program *prog = &byte_programs[search_channels > 1];

    if (!*prog)
        *prog = build_nlmeans_program(search_channels, 1, 0);
    return *prog;
}

static cl_program rgb_search_program(void)
{
    if (!rgb_program)
        rgb_program = build_nlmeans_program(1, 1, 1);
    return rgb_program;
}

/* The rings of frames of vbm3d_gpu's program: floats, bytes (8-bit
 * frames), or the R, G, B bytes of RGB frames grouped jointly, whose basic
 * estimates are rings of bytes of opponent channels (RING_RGB_BASIC: the
 * program of RING_RGB, its second step's search). */
enum { RING_FLOAT, RING_BYTES, RING_RGB, RING_RGB_BASIC };

/*
 * vbm3d_gpu's program as build_program() of vf_bm3d_gpu.c builds it with
 * video = 1: NB_NEIGHBORS = nb (the larger group), Walsh-Hadamard along
 * the groups (its default), the device's accumulators, VBM3D_Q = q
 * (perframe), the row-scan radii r1max, r2max (window_radius()) and rings
 * of the given kind, then bm3d_gpu.cl and vbm3d_search.cl.
 */
static cl_program build_vbm3d_program(int nb, int q, int r1max, int r2max,
                                      int int64_atomics, int ring_kind)
{
    static char defines[DEFINES_SIZE];

    snprintf(defines, sizeof(defines),
             "#define NB_NEIGHBORS %d\n#define BM3D_HAAR %d\n"
             "#define BM3D_INT64_ATOMICS %d\n#define VBM3D_Q %d\n"
             "#define VBM3D_R1MAX %d\n#define VBM3D_R2MAX %d\n"
             "#define DENOISE_RING_BYTES %d\n#define DENOISE_RING_RGB %d\n", nb,
             0, int64_atomics, q, r1max, r2max,
             ring_kind != RING_FLOAT, ring_kind >= RING_RGB);
    append_transforms(defines, 0);
    return build_sources(defines, SRC_BM3D, SRC_VBM3D);
}

static cl_kernel get_kernel(cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);

    cl_check(err, name);
    name_set_add(&checked_kernels, name, strlen(name));
    return k;
}

/* One kernel argument, as OpenCLKernelArg: its size and value (NULL for
 * local memory). */
typedef struct Arg {
    size_t size;
    const void *value;
} Arg;

#define ARG(v) { sizeof(v), &(v) }

static void read_buffer_at(cl_mem b, size_t offset, size_t size, void *dst)
{
    cl_check(clEnqueueReadBuffer(queue, b, CL_TRUE, offset, size, dst, 0,
                                 NULL, NULL), "clEnqueueReadBuffer");
}

static void read_buffer(cl_mem b, size_t size, void *dst)
{
    read_buffer_at(b, 0, size, dst);
}

/*
 * Each buffer is the middle of a larger one, between two guard bands of
 * guard_bytes() filled with GUARD_FILL: the kernels get the middle (a
 * sub-buffer), and run_kernel() reads the bands of its buffer arguments
 * back after each launch, so that a write past either end of a buffer
 * fails the check that launched it, on any device.
 */
#define GUARD_FILL  0xa5
#define MAX_GUARDED 64

typedef struct GuardedBuffer {
    cl_mem buffer;          /* what the kernels get */
    cl_mem whole;           /* the buffer with its two bands */
    size_t size;
    size_t guard;           /* the bytes of each band */
} GuardedBuffer;

static GuardedBuffer guarded[MAX_GUARDED];

/* A band of at least 4 KiB where a sub-buffer may start (the device's
 * CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits). */
static size_t guard_bytes(void)
{
    cl_uint align_bits = 0;
    size_t bytes = 4096;

    clGetDeviceInfo(dev, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits),
                    &align_bits, NULL);
    while (bytes < align_bits / 8)
        bytes *= 2;
    return bytes;
}

static GuardedBuffer *find_guarded(cl_mem b)
{
    for (int i = 0; i < MAX_GUARDED; i++)
        if (guarded[i].buffer && guarded[i].buffer == b)
            return &guarded[i];
    return NULL;
}

static cl_mem new_buffer(size_t size, const void *init)
{
    size_t guard = guard_bytes(), bytes = size ? size : 1;
    cl_buffer_region middle = { guard, bytes };
    GuardedBuffer *g = NULL;
    unsigned char *fill;
    cl_int err;

    for (int i = 0; !g && i < MAX_GUARDED; i++)
        if (!guarded[i].buffer)
            g = &guarded[i];
    if (!g)
        die("more than %d buffers at once", MAX_GUARDED);
    fill = alloc_or_die(guard);
    memset(fill, GUARD_FILL, guard);
    g->size  = bytes;
    g->guard = guard;
    g->whole = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes + 2 * guard,
                              NULL, &err);
    cl_check(err, "clCreateBuffer");
    cl_check(clEnqueueWriteBuffer(queue, g->whole, CL_TRUE, 0, guard, fill,
                                  0, NULL, NULL), "clEnqueueWriteBuffer");
    cl_check(clEnqueueWriteBuffer(queue, g->whole, CL_TRUE, guard + bytes,
                                  guard, fill, 0, NULL, NULL),
             "clEnqueueWriteBuffer");
    if (init)
        cl_check(clEnqueueWriteBuffer(queue, g->whole, CL_TRUE, guard, size,
                                      init, 0, NULL, NULL),
                 "clEnqueueWriteBuffer");
    free(fill);
    g->buffer = clCreateSubBuffer(g->whole, CL_MEM_READ_WRITE,
                                  CL_BUFFER_CREATE_TYPE_REGION, &middle, &err);
    cl_check(err, "clCreateSubBuffer");
    return g->buffer;
}

/* Release a buffer of new_buffer() (and its bands) or an image. */
static void release_mem(cl_mem m)
{
    GuardedBuffer *g = find_guarded(m);

    clReleaseMemObject(m);
    if (g) {
        clReleaseMemObject(g->whole);
        memset(g, 0, sizeof(*g));
    }
}

/* Whether the bands of a buffer of new_buffer() still hold GUARD_FILL
 * only; if not, say into guard_error (unless it holds the check's first
 * such error already) the changed byte nearest to the buffer. */
static void check_guard(const GuardedBuffer *g, int arg)
{
    size_t guard = g->guard;
    unsigned char *band = alloc_or_die(guard);

    for (int side = 0; side < 2; side++) {
        size_t at = side ? guard + g->size : 0;

        read_buffer_at(g->whole, at, guard, band);
        for (size_t i = 0; i < guard; i++) {
            size_t k = side ? i : guard - 1 - i;

            if (band[k] == GUARD_FILL)
                continue;
            if (!guard_error[0])
                snprintf(guard_error, sizeof(guard_error),
                         "argument %d (a buffer of %zu bytes) written at "
                         "byte %s%zu, %s", arg, g->size, side ? "" : "-",
                         side ? g->size + k : guard - k,
                         side ? "past its end" : "before its start");
            break;
        }
    }
    free(band);
}

/*
 * Set the arguments and run the kernel over at least width x height
 * work-items, rounded up to the work-group local_w x local_h (0: 16 x 8),
 * as ff_denoise_opencl_run() does; wait for it and return its time in ns.
 */
static double run_kernel(cl_kernel k, const Arg *args, int nb_args,
                         size_t width, size_t height, size_t local_w,
                         size_t local_h)
{
    size_t local[2]  = { local_w ? local_w : 16, local_h ? local_h : 8 };
    size_t global[2] = { (width  + local[0] - 1) / local[0] * local[0],
                         (height + local[1] - 1) / local[1] * local[1] };
    cl_ulong start = 0, end = 0;
    cl_event ev;

    for (int i = 0; i < nb_args; i++)
        cl_check(clSetKernelArg(k, i, args[i].size, args[i].value), "clSetKernelArg");
    cl_check(clEnqueueNDRangeKernel(queue, k, 2, NULL, global, local, 0, NULL, &ev),
             "clEnqueueNDRangeKernel");
    cl_check(clWaitForEvents(1, &ev), "kernel");
    for (int i = 0; i < nb_args; i++) {
        const GuardedBuffer *g = args[i].size == sizeof(cl_mem) ?
                                 find_guarded(*(const cl_mem *)args[i].value) : NULL;
        if (g)
            check_guard(g, i);
    }
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL);
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL);
    clReleaseEvent(ev);
    return (double)(end - start);
}


/*
 * An image as FFmpeg's OpenCL frames hold a plane: one (CL_R) or two
 * (CL_RG, the chroma of nv12 and p010) channels of normalised 8- or 16-bit
 * integers, from interleaved samples.
 */
/* The channel order of images of 1, 2 or 4 channels (as FFmpeg's OpenCL
 * frames of gray, nv12 or rgba: the kernels see every four-channel order
 * as RGBA). */
static cl_channel_order channel_order(int channels)
{
    return channels == 4 ? CL_RGBA : channels == 2 ? CL_RG : CL_R;
}

/* The type of samples of 1, 2 or 4 bytes (4: float formats). */
static cl_channel_type channel_type(int bytes)
{
    return bytes == 4 ? CL_FLOAT : bytes == 2 ? CL_UNORM_INT16 : CL_UNORM_INT8;
}

static cl_mem new_image(int width, int height, int channels, int bytes,
                        const void *data)
{
    cl_image_format fmt = {
        channel_order(channels),
        channel_type(bytes),
    };
    cl_image_desc desc = { 0 };
    cl_int err;
    cl_mem img;

    desc.image_type   = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width  = width;
    desc.image_height = height;
    img = clCreateImage(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &fmt,
                        &desc, (void *)data, &err);
    cl_check(err, "clCreateImage");
    return img;
}

/*
 * Whether the device holds images of this many channels of 8 or 16 bits:
 * PoCL has no CL_RG, so that FFmpeg cannot map nv12 or p010 frames there,
 * and the two-channel cases are then skipped (and said so).
 */
static int image_supported(int channels, int bytes)
{
    cl_image_format f[256];
    cl_uint n = 0;
    cl_channel_order order = channel_order(channels);
    cl_channel_type type = channel_type(bytes);

    clGetSupportedImageFormats(ctx, CL_MEM_READ_WRITE, CL_MEM_OBJECT_IMAGE2D,
                               256, f, &n);
    for (cl_uint i = 0; i < n && i < 256; i++)
        if (f[i].image_channel_order == order && f[i].image_channel_data_type == type)
            return 1;
    return 0;
}

static void read_image(cl_mem img, int width, int height, void *dst)
{
    size_t origin[3] = { 0, 0, 0 };
    size_t region[3] = { width, height, 1 };

    cl_check(clEnqueueReadImage(queue, img, CL_TRUE, origin, region, 0, 0, dst,
                                0, NULL, NULL), "clEnqueueReadImage");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The median of opt.repeat launches of a kernel, in ms. */
static void bench(const char *name, const char *what, cl_kernel k,
                  const Arg *args, int nb_args, size_t w, size_t h)
{
    double t[MAX_REPEATS];

    run_kernel(k, args, nb_args, w, h, 0, 0);     /* warm-up (and compile) */
    for (int i = 0; i < opt.repeat; i++)
        t[i] = run_kernel(k, args, nb_args, w, h, 0, 0);
    qsort(t, opt.repeat, sizeof(*t), cmp_double);
    printf("bench %-20s %-36s %10.3f ms (median of %d)\n", name, what,
           t[opt.repeat / 2] / 1e6, opt.repeat);
    fflush(stdout);
}

/* ---------------------------------------------------------------------- */
/* The sample formats of the checks                                       */

/*
 * A format as DenoiseLayout describes it: bytes per sample, the largest
 * value of the storage unit ('container') and the unused low bits
 * ('shift'): gray8 / nv12, gray16 / yuv444p16, gbrp10msb / p010
 * (10 bits in the high bits of 16), gbrp12msb (12 bits).
 */
typedef struct Format {
    const char *name;
    int bytes;
    int container;
    int shift;
} Format;

static const Format formats[] = {
    { "8-bit",         1,   255, 0 },
    { "16-bit",        2, 65535, 0 },
    { "10-bit msb",    2, 65535, 6 },
    { "12-bit msb",    2, 65535, 4 },
};

/* Random samples of a format (its unused low bits 0), with the extremes
 * often, since clamping and scaling are exact there. */
static unsigned random_sample(const Format *f)
{
    unsigned top = (unsigned)f->container >> f->shift;
    unsigned r = rnd(16);
    unsigned v = r == 0 ? 0 : r == 1 ? top : rnd(top + 1);

    return v << f->shift;
}

static void store_sample(void *data, size_t i, int bytes, unsigned v)
{
    if (bytes == 1)
        ((uint8_t *)data)[i] = v;
    else
        ((uint16_t *)data)[i] = v;
}

static unsigned load_sample(const void *data, size_t i, int bytes)
{
    return bytes == 1 ? ((const uint8_t *)data)[i] : ((const uint16_t *)data)[i];
}

/* The image sizes of the load and store checks, and the side of the plane
 * each is padded to (0: the image's size), as
 * ff_denoise_opencl_pad_components() pads small planes to the 8x8 block
 * of bm3d_gpu (or larger, mirrored more than once). */
static const struct { int w, h, pad; } load_sizes[] = {
    { 1, 1, 0 }, { 1, 1, 8 }, { 7, 3, 0 }, { 7, 3, 8 }, { 7, 3, 16 },
    { 3, 7, 20 }, { 64, 48, 0 }, { 64, 48, 70 }, { 17, 2, 9 },
};

/* The rows of work-items of denoise_load_plane and denoise_store_plane
 * for a plane of h rows (DENOISE_IO_ROWS rows each). */
static size_t io_rows(int h)
{
    return (h + DENOISE_IO_ROWS - 1) / DENOISE_IO_ROWS;
}

/* ---------------------------------------------------------------------- */
/* denoise_load_plane                                                     */

/* A load kernel reading channel 'channel' of src into slot 1 (offset
 * 'plane') of dst, planes of pw x ph, as load_component() runs it. */
static void run_load(cl_kernel k, cl_mem src, int channel, cl_mem dst,
                     int pw, int ph, float container, cl_uint plane)
{
    const Arg args[] = {
        ARG(src), ARG(channel), ARG(dst), ARG(pw), ARG(ph),
        ARG(container), ARG(plane),
    };

    run_kernel(k, args, 7, pw, io_rows(ph), 0, 0);
}

/* The first difference of a ring of two loaded planes of pw x ph from the
 * expected one, as a failure of the case 'what' (image w x h). */
static void compare_loaded(Check *c, const char *what, const float *got,
                           const float *exp, int w, int h, int pw, int ph)
{
    size_t plane = (size_t)pw * ph;
    long i = first_float_diff(got, exp, 2 * plane);

    c->cases++;
    if (i >= 0)
        check_fail(c, "%s, image %dx%d, plane %dx%d: slot %ld, (%ld, %ld): "
                   "got %.9g, expected %.9g", what, w, h, pw, ph, i / (long)plane,
                   i % (long)plane % pw, i % (long)plane / pw, got[i], exp[i]);
}

/*
 * One case: channel 'channel' of a random image of 'channels' channels,
 * w x h, loaded into slot 1 of a ring of two planes of pw x ph, of floats,
 * or of bytes where 'to_bytes' (denoise_load_plane_u8, 8-bit formats).
 * Reference: the image padded by ref_pad_image() (the golden models'
 * mirror of a small plane) and converted by ref_load_plane() (the stored
 * integer times 255 / container, in float: on 8-bit formats the stored
 * integer, which a byte holds); slot 0 must stay untouched.
 */
static void load_case(Check *c, cl_kernel k, const Format *f, int channels,
                      int channel, int w, int h, int pad, int to_bytes)
{
    PNMImage img = { w, h, f->container, channels, NULL };
    int pw = w > pad ? w : pad, ph = h > pad ? h : pad;
    size_t n = (size_t)w * h * channels, plane = (size_t)pw * ph;
    void *data = alloc_or_die(n * f->bytes);
    float *got = alloc_or_die(2 * plane * sizeof(float));
    float *exp = alloc_or_die(2 * plane * sizeof(float));
    uint8_t *bytes = to_bytes ? alloc_or_die(2 * plane) : NULL;
    float container = (float)f->container;
    float sentinel = to_bytes ? 165.0f : -1234.5f;
    char what[96];
    cl_mem src, dst;

    img.data = alloc_or_die(n * sizeof(*img.data));
    for (size_t j = 0; j < n; j++) {
        img.data[j] = random_sample(f);
        store_sample(data, j, f->bytes, img.data[j]);
    }
    for (size_t j = 0; j < 2 * plane; j++)
        exp[j] = sentinel;                      /* in slot 0 */
    src = new_image(w, h, channels, f->bytes, data);
    if (to_bytes) {
        memset(bytes, (int)sentinel, 2 * plane);
        dst = new_buffer(2 * plane, bytes);
    } else {
        dst = new_buffer(2 * plane * sizeof(float), exp);
    }

    run_load(k, src, channel, dst, pw, ph, container, plane);
    if (to_bytes) {
        read_buffer(dst, 2 * plane, bytes);
        for (size_t j = 0; j < 2 * plane; j++)
            got[j] = bytes[j];
    } else {
        read_buffer(dst, 2 * plane * sizeof(float), got);
    }
    if (ref_pad_image(&img, pad) < 0)
        die("ref_pad_image");
    ref_load_plane(&img, channel, exp + plane);

    snprintf(what, sizeof(what), "%s, %d channel(s), channel %d", f->name,
             channels, channel);
    compare_loaded(c, what, got, exp, w, h, pw, ph);
    release_mem(src);
    release_mem(dst);
    free(img.data);
    free(data);
    free(got);
    free(exp);
    free(bytes);
}

/* Channels of the images of the load and store checks. */
static const int image_channels[] = { 1, 2, 4 };

/* denoise_load_plane on every format, or denoise_load_plane_u8 ('to_bytes')
 * on the 8-bit ones, from every channel of images of 1, 2 and 4. */
static void check_load(cl_program prog, int to_bytes)
{
    const char *name = to_bytes ? "denoise_load_plane_u8" : "denoise_load_plane";
    cl_kernel k = get_kernel(prog, name);
    Check c;

    check_begin(&c, name);
    for (int fi = 0; fi < 4; fi++) {
        if (to_bytes && formats[fi].container != 255)
            continue;
        for (int s = 0; s < (int)(sizeof(load_sizes) / sizeof(load_sizes[0])); s++)
            for (int i = 0; i < 3; i++) {
                int ch = image_channels[i];
                for (int channel = 0; channel < ch; channel++)
                    if (!image_supported(ch, formats[fi].bytes))
                        snprintf(c.note, sizeof(c.note), "%d-channel images "
                                 "of %d-byte samples not supported here: skipped",
                                 ch, formats[fi].bytes);
                    else
                        load_case(&c, k, &formats[fi], ch, channel,
                                  load_sizes[s].w, load_sizes[s].h,
                                  load_sizes[s].pad, to_bytes);
            }
    }
    check_end(&c);
    clReleaseKernel(k);
}

/* ---------------------------------------------------------------------- */
/* denoise_store_plane                                                    */

/* A random value of a filtered plane, in the 8-bit scale: out of range on
 * either side, exactly on a level or halfway between two (rounding ties),
 * or anywhere. */
static float random_plane_value(const Format *f)
{
    float unit = (float)(255.0 * (1 << f->shift) / f->container);

    switch (rnd(6)) {
    case 0:  return rndf(-40.0f, 0.0f);
    case 1:  return rndf(255.0f, 300.0f);
    case 2:  return (float)rnd(256);
    case 3:  return (rnd((unsigned)(255.0f / unit)) + 0.5f) * unit;
    default: return rndf(0.0f, 255.0f);
    }
}

/* Three float planes of 'plane' values drawn by value(f), and their
 * buffers: what a store kernel writes from. */
static void new_store_planes(float *p[3], cl_mem buf[3], size_t plane,
                             float (*value)(const Format *), const Format *f)
{
    for (int i = 0; i < 3; i++) {
        p[i] = alloc_or_die(plane * sizeof(float));
        for (size_t j = 0; j < plane; j++)
            p[i][j] = value(f);
        buf[i] = new_buffer(plane * sizeof(float), p[i]);
    }
}

static void free_store_planes(float *p[3], cl_mem buf[3])
{
    for (int i = 0; i < 3; i++) {
        release_mem(buf[i]);
        free(p[i]);
    }
}

/* A store kernel writing dst from src and the planes of 'mask' of buf[3],
 * as store_image() runs it: an unused plane argument gets a written one's
 * buffer; src NULL: a write kernel, which has no source image. */
static void run_store(cl_kernel k, cl_mem dst, cl_mem src, const cl_mem *buf,
                      int mask, int w, int h, int pitch, float container,
                      int shift)
{
    int used = mask & 1 ? 0 : mask & 2 ? 1 : 2;
    cl_mem plane0 = mask & 1 ? buf[0] : buf[used];
    cl_mem plane1 = mask & 2 ? buf[1] : buf[used];
    cl_mem plane2 = mask & 4 ? buf[2] : buf[used];
    const Arg args[] = {
        ARG(dst), ARG(src), ARG(plane0), ARG(plane1), ARG(plane2),
        ARG(mask), ARG(w), ARG(h), ARG(pitch), ARG(container), ARG(shift),
    };

    const Arg write_args[] = {
        ARG(dst), ARG(plane0), ARG(plane1), ARG(plane2),
        ARG(mask), ARG(w), ARG(h), ARG(pitch), ARG(container), ARG(shift),
    };

    if (src)
        run_kernel(k, args, 11, w, io_rows(h), 0, 0);
    else
        run_kernel(k, write_args, 10, w, io_rows(h), 0, 0);
}

/*
 * One case: an image of 'channels' channels, w x h, written from planes of
 * pitch 'pitch' for the channels of 'mask' (of the first three), the others
 * copied from a random source image. Reference: ref_quantise() with the
 * format's shift for the channels written, the source's samples for the
 * others (a fourth channel, alpha, always). 'write': k is a write kernel,
 * run without the source image (the mask sets every channel).
 */
static void store_case(Check *c, cl_kernel k, const Format *f, int channels,
                       int mask, int w, int h, int pitch, int write)
{
    size_t n = (size_t)w * h * channels, plane = (size_t)pitch * h;
    void *data = alloc_or_die(n * f->bytes);
    void *got  = alloc_or_die(n * f->bytes);
    float *p[3];
    float container = (float)f->container;
    cl_mem src, dst, buf[3];
    int shift = f->shift;

    for (size_t j = 0; j < n; j++)
        store_sample(data, j, f->bytes, random_sample(f));
    new_store_planes(p, buf, plane, random_plane_value, f);
    src = new_image(w, h, channels, f->bytes, data);
    memset(got, 0x5a, n * f->bytes);
    dst = new_image(w, h, channels, f->bytes, got);

    run_store(k, dst, write ? NULL : src, buf, mask, w, h, pitch, container, shift);
    read_image(dst, w, h, got);

    c->cases++;
    ref_set_shift(shift);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            for (int ch = 0; ch < channels; ch++) {
                size_t i = ((size_t)y * w + x) * channels + ch;
                unsigned g = load_sample(got, i, f->bytes);
                unsigned e = mask & (1 << ch) ?
                             ref_quantise(p[ch][(size_t)y * pitch + x], f->container) :
                             load_sample(data, i, f->bytes);
                if (g != e) {
                    check_fail(c, "%s, %d channel(s), mask %d, %dx%d, pitch %d: "
                               "(%d, %d) channel %d: got %u, expected %u "
                               "(plane value %.9g)", f->name, channels, mask,
                               w, h, pitch, x, y, ch, g, e,
                               mask & (1 << ch) ? p[ch][(size_t)y * pitch + x] : 0.0f);
                    goto done;
                }
            }
        }
    }
done:
    ref_set_shift(0);
    release_mem(src);
    release_mem(dst);
    free_store_planes(p, buf);
    free(data);
    free(got);
}

/* denoise_store_plane, or (write) denoise_write_plane on images of 1 and 2
 * channels, every channel written */
static void check_store(cl_program prog, int write)
{
    const char *name = write ? "denoise_write_plane" : "denoise_store_plane";
    cl_kernel k = get_kernel(prog, name);
    Check c;

    check_begin(&c, name);
    for (int fi = 0; fi < 4; fi++) {
        for (int s = 0; s < (int)(sizeof(load_sizes) / sizeof(load_sizes[0])); s++) {
            int w = load_sizes[s].w, h = load_sizes[s].h;
            /* the pitch of a padded plane is larger than the image */
            int pitch = w > load_sizes[s].pad ? w : load_sizes[s].pad;

            for (int i = 0; i < 3; i++) {
                int ch = image_channels[i];
                /* the colour channels: at most three, alpha never */
                int masks = 1 << (ch < 3 ? ch : 3);

                if (!image_supported(ch, formats[fi].bytes)) {
                    snprintf(c.note, sizeof(c.note), "%d-channel images of "
                             "%d-byte samples not supported here: skipped",
                             ch, formats[fi].bytes);
                    continue;
                }
                if (write && ch < 4)
                    store_case(&c, k, &formats[fi], ch, masks - 1, w, h, pitch, 1);
                for (int mask = 1; mask < masks && !write; mask++)
                    store_case(&c, k, &formats[fi], ch, mask, w, h, pitch, 0);
            }
        }
    }
    check_end(&c);
    clReleaseKernel(k);
}

/* ---------------------------------------------------------------------- */
/* denoise_load_plane_float, denoise_store_plane_float                    */

/* A random sample of a float format: nominally 0 to 1, but also beyond
 * (HDR, negative), exactly 0 and 1, and values of 8-bit samples. */
static float random_float_sample(void)
{
    switch (rnd(6)) {
    case 0:  return rnd(2) ? 0.0f : 1.0f;
    case 1:  return rndf(-0.5f, 0.0f);
    case 2:  return rndf(1.0f, 40.0f);
    case 3:  return (float)rnd(256) / 255.0f;
    default: return rndf(0.0f, 1.0f);
    }
}

/*
 * One case: channel 'channel' of a random float image of 'channels'
 * channels, w x h, loaded into slot 1 of a ring of two planes of pw x ph.
 * Reference: the sample (mirrored into a padded plane as ref_mirror()
 * does) times 255 in float, bit for bit; slot 0 untouched.
 */
static void load_float_case(Check *c, cl_kernel k, int channels, int channel,
                            int w, int h, int pad)
{
    int pw = w > pad ? w : pad, ph = h > pad ? h : pad;
    size_t n = (size_t)w * h * channels, plane = (size_t)pw * ph;
    float *data = alloc_or_die(n * sizeof(float));
    float *got  = alloc_or_die(2 * plane * sizeof(float));
    float *exp  = alloc_or_die(2 * plane * sizeof(float));
    char what[64];
    cl_mem src, dst;

    for (size_t j = 0; j < n; j++)
        data[j] = random_float_sample();
    for (size_t j = 0; j < 2 * plane; j++)
        exp[j] = -1234.5f;
    src = new_image(w, h, channels, 4, data);
    dst = new_buffer(2 * plane * sizeof(float), exp);
    run_load(k, src, channel, dst, pw, ph, 1.0f, plane);
    read_buffer(dst, 2 * plane * sizeof(float), got);
    for (int y = 0; y < ph; y++)
        for (int x = 0; x < pw; x++) {
            size_t s = ((size_t)ref_mirror(y, h) * w + ref_mirror(x, w)) * channels;
            exp[plane + (size_t)y * pw + x] = data[s + channel] * 255.0f;
        }

    snprintf(what, sizeof(what), "%d channel(s), channel %d", channels, channel);
    compare_loaded(c, what, got, exp, w, h, pw, ph);
    release_mem(src);
    release_mem(dst);
    free(data);
    free(got);
    free(exp);
}

/* A value of a filtered float plane: a float sample in the 8-bit scale. */
static float random_float_plane_value(const Format *f)
{
    (void)f;
    return random_float_sample() * 255.0f;
}

/*
 * One case: a float image of 'channels' channels, w x h, written from
 * planes of pitch 'pitch' for the channels of 'mask' (of the first three),
 * the others copied from a random source image. Reference: the plane's
 * value times (1 / 255) in float, neither rounded nor clamped, bit for bit;
 * the source's samples for the other channels (alpha always).
 */
static void store_float_case(Check *c, cl_kernel k, int channels, int mask,
                             int w, int h, int pitch, int write)
{
    size_t n = (size_t)w * h * channels, plane = (size_t)pitch * h;
    float *data = alloc_or_die(n * sizeof(float));
    float *got  = alloc_or_die(n * sizeof(float));
    float *p[3];
    float container = 1.0f;
    int shift = 0;
    cl_mem src, dst, buf[3];

    for (size_t j = 0; j < n; j++)
        data[j] = random_float_sample();
    new_store_planes(p, buf, plane, random_float_plane_value, NULL);
    src = new_image(w, h, channels, 4, data);
    memset(got, 0x5a, n * sizeof(float));
    dst = new_image(w, h, channels, 4, got);
    run_store(k, dst, write ? NULL : src, buf, mask, w, h, pitch, container, shift);
    read_image(dst, w, h, got);

    c->cases++;
    for (size_t i = 0; i < n; i++) {
        int ch = (int)(i % channels);
        size_t s = i / channels;
        float e = mask & (1 << ch) ?
                  p[ch][s / w * pitch + s % w] * (1.0f / 255.0f) : data[i];
        if (memcmp(&got[i], &e, sizeof(e))) {
            check_fail(c, "%d channel(s), mask %d, %dx%d, pitch %d: (%zu, %zu) "
                       "channel %d: got %.9g, expected %.9g", channels, mask,
                       w, h, pitch, s % w, s / w, ch, got[i], e);
            break;
        }
    }
    release_mem(src);
    release_mem(dst);
    free_store_planes(p, buf);
    free(data);
    free(got);
}

/* denoise_load_plane_float and denoise_store_plane_float on images of 1,
 * 2 and 4 float channels (where the device has them), denoise_write_plane_float
 * (store 2) on those of 1 and 2, every channel written. */
static void check_float_io(cl_program prog, int store)
{
    const char *name = store == 2 ? "denoise_write_plane_float" :
                       store ? "denoise_store_plane_float" : "denoise_load_plane_float";
    cl_kernel k = get_kernel(prog, name);
    Check c;

    check_begin(&c, name);
    for (int s = 0; s < (int)(sizeof(load_sizes) / sizeof(load_sizes[0])); s++)
        for (int i = 0; i < 3; i++) {
            int ch = image_channels[i];
            int w = load_sizes[s].w, h = load_sizes[s].h, pad = load_sizes[s].pad;

            if (!image_supported(ch, 4)) {
                snprintf(c.note, sizeof(c.note), "%d-channel float images "
                         "not supported here: skipped", ch);
                continue;
            }
            if (store == 2 && ch < 4)
                store_float_case(&c, k, ch, (1 << ch) - 1, w, h, w > pad ? w : pad, 1);
            else if (store == 1)
                for (int mask = 1; mask < 1 << (ch < 3 ? ch : 3); mask++)
                    store_float_case(&c, k, ch, mask, w, h, w > pad ? w : pad, 0);
            else if (!store)
                for (int channel = 0; channel < ch; channel++)
                    load_float_case(&c, k, ch, channel, w, h, pad);
        }
    check_end(&c);
    clReleaseKernel(k);
}

/* ---------------------------------------------------------------------- */
/* denoise_opponent_forward, denoise_opponent_inverse                     */

/*
 * One plane of w x h in slot 'slot' of rings of three planes (p0, p1, p2,
 * random samples: integers of 0 .. 255 or any float in -300 .. 300) through
 * the kernel k, forward (RGB to opponent channels) or not, against
 * opponent.h: the slot bit for bit, the other slots unchanged.
 */
static void opponent_case(Check *c, cl_kernel k, int forward, int w, int h,
                          int slot, int integers)
{
    const size_t plane = (size_t)w * h, ring = 3 * plane;
    float *exp[3], *got = alloc_or_die(ring * sizeof(float));
    cl_mem buf[3];
    cl_int width = w, height = h;
    cl_uint offset = slot * plane;

    for (int ch = 0; ch < 3; ch++) {
        exp[ch] = alloc_or_die(ring * sizeof(float));
        for (size_t i = 0; i < ring; i++)
            exp[ch][i] = integers ? (float)rnd(256) : rndf(-300.0f, 300.0f);
        buf[ch] = new_buffer(ring * sizeof(float), exp[ch]);
    }
    {
        const Arg args[] = {
            ARG(buf[0]), ARG(buf[1]), ARG(buf[2]), ARG(width), ARG(height),
            ARG(offset),
        };
        run_kernel(k, args, 6, w, h, 0, 0);
    }
    for (size_t i = offset; i < offset + plane; i++) {
        float in[3] = { exp[0][i], exp[1][i], exp[2][i] }, out[3];

        if (forward)
            opponent_forward(in[0], in[1], in[2], out);
        else
            opponent_inverse(in[0], in[1], in[2], out);
        for (int ch = 0; ch < 3; ch++)
            exp[ch][i] = out[ch];
    }
    c->cases++;
    for (int ch = 0; ch < 3; ch++) {
        long d;

        read_buffer(buf[ch], ring * sizeof(float), got);
        d = first_float_diff(got, exp[ch], ring);
        if (d >= 0) {
            check_fail(c, "%s samples, %dx%d in slot %d: plane %d, slot %ld, "
                       "(%ld, %ld): got %.9g, expected %.9g",
                       integers ? "integer" : "float", w, h, slot, ch,
                       d / (long)plane, d % (long)plane % w,
                       d % (long)plane / w, got[d], exp[ch][d]);
            break;
        }
    }
    for (int ch = 0; ch < 3; ch++) {
        release_mem(buf[ch]);
        free(exp[ch]);
    }
    free(got);
}

static void check_opponent(cl_program prog, int forward)
{
    const char *name = forward ? "denoise_opponent_forward" :
                                 "denoise_opponent_inverse";
    cl_kernel k = get_kernel(prog, name);
    Check c;

    check_begin(&c, name);
    for (int s = 0; s < (int)(sizeof(load_sizes) / sizeof(load_sizes[0])); s++)
        for (int integers = 0; integers < 2; integers++)
            opponent_case(&c, k, forward, load_sizes[s].w, load_sizes[s].h,
                          rnd(3), integers);
    clReleaseKernel(k);
    check_end(&c);
}

/* ---------------------------------------------------------------------- */
/* bm3d_normalise                                                         */

/*
 * A random fixed-point accumulator of 2^32 units (FIX_ONE): sums of
 * aggregation weights (positive) and of weighted samples (num, signed:
 * Wiener estimates may go below 0), over a wide range of magnitudes so that
 * the conversions to float round.
 */
static int64_t random_fixed(int positive)
{
    int bits = 20 + rnd(40);
    int64_t v = (int64_t)(rnd64() >> (64 - bits)) + 1;

    return !positive && rnd(8) == 0 ? -v : v;
}

/*
 * bm3d_normalise on random accumulators: patch weights at every position,
 * or (sparse) at one position in four and on the grid of step 8, which
 * covers every sample, as the reference patches do; num random, or of the
 * order of 64 weights times a sample value from -10 to 265 (so that the
 * rounding and the clamp both act). Kaiser window of a random beta
 * from 0 to 5 (the filters' range); rounded to integers (the basic estimate
 * of 8-bit frames) or not, at random. With 'bytes' (bm3d_normalise_u8, the
 * basic estimate into vbm3d_gpu's ring of bytes) always rounded, into a
 * plane of bytes, within 0 .. 255 or, at random, -128 .. 127 stored plus
 * 128 (RGB's opponent channels U and V, the samples then from -138 to 137).
 * With 'ties', exact halves: weights of 1 on the grid only, a Kaiser
 * window of beta 0 (all 1), so that den is 1, and num an integer plus a
 * half.
 */
static void normalise_case(Check *c, cl_kernel k, const char *variant,
                           int w, int h, int sparse, int ties, int bytes)
{
    size_t plane = (size_t)w * h;
    float beta = ties ? 0.0f : rndf(0.0f, 5.0f);
    cl_int to_integers = bytes || rnd(2);
    cl_int low = bytes && rnd(2) ? -128 : 0;
    /* the kernels' last argument: the lowest value, or whether to round */
    cl_int last = bytes ? low : to_integers;
    /* what the samples outside the output slot hold before and after */
    const float untouched = bytes ? 165.0f : -1234.5f;
    BM3DTables t;
    float kaiser[BM3D_PATCH2 + BM3D_PATCH];    /* create_tables() */
    int64_t *num = alloc_or_die(2 * plane * sizeof(*num));
    int64_t *weights = alloc_or_die(2 * plane * sizeof(*weights));
    float *got = alloc_or_die(3 * plane * sizeof(float));
    float *exp = alloc_or_die(3 * plane * sizeof(float));
    /* slot 1 of the accumulators into slot 2 of a ring of three planes */
    cl_uint src_offset = plane, dst_offset = 2 * plane;
    cl_mem bnum, bweights, bkaiser, dst;
    long i;

    bm3d_init_tables(&t, beta, 0, 1);
    for (size_t j = 0; j < 2 * plane; j++) {
        int x = j % plane % w, y = j % plane / w;
        int grid = x % 8 == 0 && y % 8 == 0;

        if (ties) {
            weights[j] = grid ? (int64_t)1 << 32 : 0;
            num[j] = (int64_t)((low - 10 + (int)rnd(276) + 0.5) * 4294967296.0);
            continue;
        }
        weights[j] = !sparse || grid || rnd(4) == 0 ? random_fixed(1) : 0;
        num[j] = rnd(2) ? random_fixed(0) :
                 (int64_t)((double)random_fixed(1) * 64 *
                           rndf(low - 10.0f, low + 265.0f));
    }
    for (size_t j = 0; j < 3 * plane; j++)
        exp[j] = untouched;
    bnum     = new_buffer(2 * plane * sizeof(*num), num);
    bweights = new_buffer(2 * plane * sizeof(*weights), weights);
    memcpy(kaiser, t.kaiser, sizeof(t.kaiser));
    memcpy(kaiser + BM3D_PATCH2, t.kaiser1, sizeof(t.kaiser1));
    bkaiser  = new_buffer(sizeof(kaiser), kaiser);
    if (bytes) {
        uint8_t *fill = alloc_or_die(3 * plane);

        memset(fill, (int)untouched, 3 * plane);
        dst = new_buffer(3 * plane, fill);
        free(fill);
    } else {
        dst = new_buffer(3 * plane * sizeof(float), exp);
    }
    {
        const Arg args[] = {
            ARG(bnum), ARG(bweights), ARG(src_offset), ARG(bkaiser), ARG(dst),
            ARG(dst_offset), ARG(w), ARG(h), ARG(last),
        };
        run_kernel(k, args, 9, w, (h + 7) / 8, 0, 0);  /* NORMALISE_ROWS */
    }
    if (bytes) {
        uint8_t *out = alloc_or_die(3 * plane);

        read_buffer(dst, 3 * plane, out);
        for (size_t j = 0; j < 3 * plane; j++)
            got[j] = out[j];
        free(out);
    } else {
        read_buffer(dst, 3 * plane * sizeof(float), got);
    }
    bm3d_divide(&t, num + plane, weights + plane, w, h, exp + 2 * plane);
    if (to_integers)
        bm3d_round_within(exp + 2 * plane, plane, low);
    for (size_t j = 2 * plane; j < 3 * plane; j++)
        exp[j] -= low;  /* bytes hold the value minus low (0 but for bytes) */

    c->cases++;
    i = first_float_diff(got, exp, 3 * plane);
    if (i >= 0)
        check_fail(c, "%s, %dx%d%s%s, beta %g: slot %ld, (%ld, %ld): got "
                   "%.9g, expected %.9g (num %" PRId64 ")", variant, w, h,
                   ties ? " ties" : sparse ? " sparse" : "",
                   bytes ? (low ? " to bytes from -128" : " to bytes") :
                   to_integers ? " to integers" : "",
                   beta, i / (long)plane,
                   i % (long)plane % w, i % (long)plane / w, got[i], exp[i],
                   i >= (long)(2 * plane) ? num[i - plane] : 0);
    release_mem(bnum);
    release_mem(bweights);
    release_mem(bkaiser);
    release_mem(dst);
    free(num);
    free(weights);
    free(got);
    free(exp);
}

/* bm3d_normalise's sizes: a work-group does 16x64 samples */
static const struct { int w, h; } small_sizes[] = {
    { 1, 1 }, { 7, 3 }, { 3, 7 }, { 16, 8 }, { 17, 9 }, { 64, 48 }, { 33, 17 },
    { 20, 131 },
};

static void check_normalise(cl_program *progs, const char *const *variants,
                            int nb_progs)
{
    Check c;

    check_begin(&c, "bm3d_normalise");
    for (int p = 0; p < nb_progs; p++) {
        for (int bytes = 0; bytes < 2; bytes++) {
            cl_kernel k = get_kernel(progs[p], bytes ? "bm3d_normalise_u8" :
                                                       "bm3d_normalise");

            for (int s = 0; s < (int)(sizeof(small_sizes) / sizeof(small_sizes[0])); s++)
                for (int mode = 0; mode < 3; mode++)   /* dense, sparse, ties */
                    normalise_case(&c, k, variants[p], small_sizes[s].w,
                                   small_sizes[s].h, mode == 1, mode == 2,
                                   bytes);
            clReleaseKernel(k);
        }
    }
    check_end(&c);
}

/* ---------------------------------------------------------------------- */
/* patch_search                                                           */

/* The search kernels, as DENOISE_KERNEL_SEARCH* of denoise_opencl.h. */
enum { SEARCH_PATCH, SEARCH_TILED, SEARCH_ROWS, SEARCH_SQUARES, SEARCH_EDGE,
       SEARCH_ROWS_SINGLE, SEARCH_SQUARES_8X4, SEARCH_SQUARES_8X4_U7,
       SEARCH_SQUARES_8X4_U9, SEARCH_SQUARES_8X4_U9_KEYS,
       SEARCH_SQUARES_8X4_U11, SEARCH_SQUARES_8X4_U11_KEYS, SEARCH_TILED_8X4,
       SEARCH_ROWS_8X3, SEARCH_ROWS_5X1, SEARCH_ROWS_5X1_KEYS, SEARCH_ROWS_5X1_U7,
       SEARCH_ROWS_5X1_U7_KEYS, SEARCH_NB };

/* Each entry point: its name, the kernel whose body and buffers it shares,
 * the steps it is compiled for (0: any, -1: steps prime to the patch size,
 * whose blocks are single samples), its patch size (0: 8) and whether its
 * tables are keys (keys_fit() of denoise_opencl.c: integer samples in the
 * 8-bit scale, windows of fewer than 2^shift - 1 candidates, which those of
 * check_search() are, the largest of them just so: keys_radius()). */
static const struct {
    const char *name;
    int base;
    int step;
    int patch;
    int keys;
} search_kernels[SEARCH_NB] = {
    [SEARCH_PATCH]       = { "patch_search",             SEARCH_PATCH,   0 },
    [SEARCH_TILED]       = { "patch_search_tiled",       SEARCH_TILED,   0 },
    [SEARCH_ROWS]        = { "patch_search_rows",        SEARCH_ROWS,    0 },
    [SEARCH_SQUARES]     = { "patch_search_squares",     SEARCH_SQUARES, 0 },
    [SEARCH_EDGE]        = { "patch_search_edge",        SEARCH_EDGE,    0 },
    [SEARCH_ROWS_SINGLE] = { "patch_search_rows_single", SEARCH_ROWS,   -1 },
    [SEARCH_SQUARES_8X4] = { "patch_search_squares_8x4", SEARCH_SQUARES, 4 },
    [SEARCH_SQUARES_8X4_U7] = { "patch_search_squares_8x4_u7", SEARCH_SQUARES, 4 },
    [SEARCH_SQUARES_8X4_U9] = { "patch_search_squares_8x4_u9", SEARCH_SQUARES, 4 },
    [SEARCH_SQUARES_8X4_U9_KEYS] = { "patch_search_squares_8x4_u9_keys", SEARCH_SQUARES, 4, 0, 1 },
    [SEARCH_SQUARES_8X4_U11] = { "patch_search_squares_8x4_u11", SEARCH_SQUARES, 4 },
    [SEARCH_SQUARES_8X4_U11_KEYS] = { "patch_search_squares_8x4_u11_keys", SEARCH_SQUARES, 4, 0, 1 },
    [SEARCH_TILED_8X4]   = { "patch_search_tiled_8x4",   SEARCH_TILED,   4 },
    [SEARCH_ROWS_8X3]    = { "patch_search_rows_8x3",    SEARCH_ROWS,    3 },
    [SEARCH_ROWS_5X1]    = { "patch_search_rows_5x1",    SEARCH_ROWS,    1, 5 },
    [SEARCH_ROWS_5X1_KEYS] = { "patch_search_rows_5x1_keys", SEARCH_ROWS, 1, 5, 1 },
    [SEARCH_ROWS_5X1_U7] = { "patch_search_rows_5x1_u7", SEARCH_ROWS, 1, 5 },
    [SEARCH_ROWS_5X1_U7_KEYS] = { "patch_search_rows_5x1_u7_keys", SEARCH_ROWS, 1, 5, 1 },
};

static int search_patch(int entry)
{
    return search_kernels[entry].patch ? search_kernels[entry].patch : BM3D_PATCH;
}

/* The largest radius whose window of nb_frames frames has its scan indices
 * within a key's low bits, as keys_fit() of denoise_opencl.c allows (its
 * shift is search_key_shift() of patch_search.cl): the keys' index bits
 * full. */
static int keys_radius(int patch, int nb_frames)
{
    int shift = patch <= 4 ? 12 : patch <= 5 ? 11 : 10;
    int radius = 0;

    while ((int64_t)nb_frames * (2 * radius + 3) * (2 * radius + 3) < (1 << shift) - 1)
        radius++;
    return radius;
}

/* Whether a search with this step is one the entry point is compiled for. */
static int search_applies(int entry, int step)
{
    int only = search_kernels[entry].step;

    return only < 0 ? gcd(search_patch(entry), step) == 1 : !only || step == only;
}

typedef struct SearchCase {
    int kernel;             /* SEARCH_* */
    int width, height;
    int patch, step, radius;
    int levels;             /* sample values 0 .. levels - 1, 0: fractional,
                               -L: L fractional values (16-bit levels) */
    int stripes;            /* integer samples, a random value per column plus
                               0 .. 3 per sample: every candidate of the
                               reference's column nearer than any other */
    int ring, first_slot, nb_frames, ref_slot;
    int ref_first;
    int band;               /* search grid rows 1 .. ny - 2 only */
    int skip;               /* leave the top-left patches (per tiled kernel) */
    int channels;           /* 0 or 1: one channel of weight 1; 3: joint
                               colour, channels ring planes apart */
    float weights[3];       /* with 3 channels, each one's weight */
} SearchCase;

/*
 * The distance of the patches at a and b as search_distance() of
 * patch_search.cl groups it: in each row, the squares of 'block'
 * consecutive samples summed, times the channel's weight and added over the
 * channels in order; these along the row, then the rows from the top. With
 * one channel of weight 1, bm3d_patch_distance_sized()'s.
 */
static float search_distance_ref(const SearchCase *sc, const float *a,
                                 const float *b, size_t stride, int block)
{
    const int w = sc->width, patch = sc->patch;
    const int channels = sc->channels > 1 ? sc->channels : 1;
    float ssd = 0.0f;

    if (channels == 1)
        return bm3d_patch_distance_sized(a, b, w, patch, block);
    for (int j = 0; j < patch; j++) {
        float row = 0.0f;

        for (int k = 0; k < patch; k += block) {
            float blocks = 0.0f;

            for (int c = 0; c < channels; c++) {
                const float *ac = a + c * stride + j * w;
                const float *bc = b + c * stride + j * w;
                float sum = 0.0f;

                for (int i = k; i < k + block; i++) {
                    float d = ac[i] - bc[i];
                    sum = fmaf(d, d, sum);
                }
                blocks += sc->weights[c] * sum;
            }
            row += blocks;
        }
        ssd += row;
    }
    return ssd;
}

/*
 * The model's search, for the kernel's contract (patch_search.cl): the
 * table of each reference patch starts with NB entries at +infinity at the
 * reference's position (the first at 0 with ref_first); the candidates
 * inside the plane within 'radius' of the reference, frame by frame of the
 * window, row by row, the reference itself excepted with ref_first, are
 * kept by bm3d_keep_best() with search_distance_ref()'s distance;
 * for the reference patches with gx < only_nx and gy < only_ny, but those
 * with gx < skip_nx and gy < skip_ny.
 */
static void search_reference(const SearchCase *sc, const float *frames,
                             int nx, int gy_first, int gy_end, int skip_nx,
                             int skip_ny, int only_nx, int only_ny,
                             uint32_t *pos, float *dist)
{
    const int w = sc->width, h = sc->height;
    const size_t plane = (size_t)w * h;
    const int patch = sc->patch, block = gcd(patch, sc->step);

    for (int gy = gy_first; gy < gy_end; gy++) {
        for (int gx = 0; gx < nx; gx++) {
            int x0 = bm3d_grid_pos_sized(gx, sc->step, w, patch);
            int y0 = bm3d_grid_pos_sized(gy, sc->step, h, patch);
            size_t ref_pos = sc->ref_slot * plane + (size_t)y0 * w + x0;
            int xs = x0 - sc->radius < 0 ? 0 : x0 - sc->radius;
            int ys = y0 - sc->radius < 0 ? 0 : y0 - sc->radius;
            int xe = x0 + sc->radius > w - patch ? w - patch : x0 + sc->radius;
            int ye = y0 + sc->radius > h - patch ? h - patch : y0 + sc->radius;
            size_t r = (size_t)(gy - gy_first) * nx + gx;
            BM3DNeighbor best[NB];

            if ((gx < skip_nx && gy < skip_ny) || gx >= only_nx || gy >= only_ny)
                continue;
            for (int k = 0; k < NB; k++) {
                best[k].dist  = INFINITY;
                best[k].pos   = ref_pos;
                best[k].frame = 0;
            }
            if (sc->ref_first)
                best[0].dist = 0.0f;
            for (int i = 0; i < sc->nb_frames; i++) {
                int t = (sc->first_slot + i) % sc->ring;

                for (int cy = ys; cy <= ye; cy++) {
                    for (int cx = xs; cx <= xe; cx++) {
                        BM3DNeighbor cand;

                        cand.pos   = t * plane + (size_t)cy * w + cx;
                        cand.frame = 0;
                        if (sc->ref_first && cand.pos == ref_pos)
                            continue;
                        cand.dist = search_distance_ref(sc, frames + ref_pos,
                                                        frames + cand.pos,
                                                        sc->ring * plane, block);
                        bm3d_keep_best(best, NB, cand);
                    }
                }
            }
            for (int k = 0; k < NB; k++) {
                pos[r * NB + k]  = (uint32_t)best[k].pos;
                dist[r * NB + k] = best[k].dist;
            }
        }
    }
}

/*
 * The local memory of a work-group search kernel, as
 * ff_denoise_opencl_search_init() and run_search_kernel() size it: the
 * reference tile, then the block sums (patch_search_tiled and _squares) or
 * the row sums (patch_search_rows).
 */
static void search_local_sizes(int kernel, int patch, int step, int block,
                               size_t *local0, size_t *local1)
{
    size_t region = (DENOISE_SEARCH_TILE - 1) * step + patch;

    *local0 = region * region * sizeof(float);
    *local1 = kernel == SEARCH_ROWS ?
              DENOISE_SEARCH_ROWS_UNROLL * region * DENOISE_SEARCH_TILE * sizeof(float) :
              DENOISE_SEARCH_UNROLL * (region / block) * region * sizeof(float);
}

/*
 * Whether the work-group kernel fits the device for this step, as the
 * filters' choose_entries() and ff_denoise_opencl_search_ready() of
 * denoise_opencl.c find it (the local memory, with 1024 bytes to spare;
 * work-groups of TILE^2).
 */
static int search_kernel_fits(cl_kernel k, int kernel, int patch, int step)
{
    const size_t tile2 = DENOISE_SEARCH_TILE * DENOISE_SEARCH_TILE;
    cl_ulong local_mem = 0;
    size_t max_wg = 0, l0, l1, lt0, lt1;
    int block = gcd(patch, step);

    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(local_mem), &local_mem, NULL);
    clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof(max_wg),
                             &max_wg, NULL);
    search_local_sizes(kernel, patch, step, block, &l0, &l1);
    search_local_sizes(SEARCH_TILED, patch, step, block, &lt0, &lt1);
    if (max_wg < tile2)
        return 0;
    /* patch_search_squares uses patch_search_tiled's buffers */
    if (kernel == SEARCH_SQUARES)
        l1 = lt1;
    return l0 + l1 + 1024 <= local_mem;
}

/*
 * One case of one search kernel. The per-patch kernel covers the whole
 * band (but the skipped patches); a work-group kernel (run_search_kernel()
 * with kernel >= 0) the regular grid only, gx < regular_nx and
 * gy < regular_ny, in work-groups of TILE x TILE, and is not run when the
 * band starts below it; patch_search_edge (run_edge_search()) the rest of
 * the band, the grid's last column and row where they are moved to the
 * edge, in work-groups of SEARCH_EDGE_LANES, one per patch. The entries of
 * the patches a kernel leaves must stay as they were.
 */
static void search_case(Check *c, cl_kernel k, cl_kernel kbytes,
                        cl_kernel krgb, const SearchCase *sc)
{
    const int w = sc->width, h = sc->height, patch = sc->patch;
    const size_t plane = (size_t)w * h;
    /* ff_denoise_opencl_search_init() */
    int step = sc->step, radius = sc->radius, block = gcd(patch, step);
    int nx = bm3d_grid_count_sized(w, step, patch);
    int ny = bm3d_grid_count_sized(h, step, patch);
    int regular_nx = (w - patch) / step + 1, regular_ny = (h - patch) / step + 1;
    int gy_first = sc->band && ny > 2 ? 1 : 0;
    int gy_end   = sc->band && ny > 2 ? ny - 1 : ny;
    int edge     = sc->kernel == SEARCH_EDGE;
    int skip_nx  = edge ? regular_nx : sc->skip ? (nx + 1) / 2 : 0;
    int skip_ny  = edge ? regular_ny : sc->skip ? (ny + 1) / 2 : 0;
    int tiled    = sc->kernel != SEARCH_PATCH && !edge;
    int only_nx  = tiled ? regular_nx : nx;
    int only_ny  = tiled ? (regular_ny < gy_end ? regular_ny : gy_end) : gy_end;
    /* run_edge_search(): the last column's patches of the band above the
     * last row, then the last row's if it is in the band */
    int edge_end    = regular_ny < gy_end ? regular_ny : gy_end;
    int edge_column = regular_nx < nx && edge_end > gy_first ? edge_end - gy_first : 0;
    int last_row    = ny - 1;
    int nb_edge     = edge_column + (regular_ny < ny && last_row >= gy_first &&
                                     last_row < gy_end ? nx : 0);
    size_t refs = (size_t)(gy_end - gy_first) * nx;
    /* DENOISE_CHANNELS_SINGLE, or joint colour: the channels' rings
     * stride samples apart */
    int channels = sc->channels > 1 ? sc->channels : 1;
    cl_uint stride = channels > 1 ? sc->ring * plane : 0;
    size_t samples = channels * sc->ring * plane;
    float *frames = alloc_or_die(samples * sizeof(float));
    uint32_t *pos_got = alloc_or_die(refs * NB * sizeof(uint32_t));
    uint32_t *pos_exp = alloc_or_die(refs * NB * sizeof(uint32_t));
    float *dist_got = alloc_or_die(refs * NB * sizeof(float));
    float *dist_exp = alloc_or_die(refs * NB * sizeof(float));
    uint8_t *frame_bytes = alloc_or_die(samples);
    cl_float4 weights = { .s = { 1.0f, 1.0f, 1.0f, 0.0f } };
    size_t local0, local1;
    /* integer samples of 0 .. 255: again from a ring of bytes; and with
     * krgb (one channel, the kernels of fractional samples), as opponent
     * channel opp_channel of rings of R, G, B bytes whose R ring holds
     * them, against the search of that channel's floats */
    int passes = kbytes && (sc->stripes || (sc->levels > 0 && sc->levels <= 256)) ? 2 : 1;
    int rgb_pass = krgb && channels == 1 && !sc->stripes && sc->levels > 0 &&
                   sc->levels <= 256 ? passes++ : -1;
    cl_int opp_channel = rnd(3);
    uint8_t *rgb_bytes = rgb_pass >= 0 ? alloc_or_die(3 * samples) : NULL;
    float *opponent = rgb_pass >= 0 ? alloc_or_die(samples * sizeof(float)) : NULL;

    for (int ch = 0; ch < 3 && channels > 1; ch++)
        weights.s[ch] = sc->weights[ch];
    for (size_t j = 0; j < samples; j++)
        frames[j] = sc->levels > 0 ? (float)rnd(sc->levels) :
                    sc->levels < 0 ? ref_to_8bit_scale(rnd(-sc->levels) * 4111, 65535) :
                    ref_to_8bit_scale(rnd(1024) << 6, 65535);
    if (sc->stripes) {
        int *column = alloc_or_die(w * sizeof(*column));

        for (int x = 0; x < w; x++)
            column[x] = 4 * rnd(60);
        for (size_t j = 0; j < samples; j++)
            frames[j] = (float)(column[j % plane % w] + rnd(4));
        free(column);
    }
    for (size_t j = 0; j < samples; j++)
        frame_bytes[j] = (uint8_t)frames[j];
    for (size_t j = 0; rgb_bytes && j < samples; j++) {
        float o[3];

        rgb_bytes[j] = frame_bytes[j];
        rgb_bytes[j + samples]     = (uint8_t)rnd(sc->levels);
        rgb_bytes[j + 2 * samples] = (uint8_t)rnd(sc->levels);
        opponent_forward(rgb_bytes[j], rgb_bytes[j + samples],
                         rgb_bytes[j + 2 * samples], o);
        opponent[j] = o[opp_channel];
    }
    /* entries the kernel must not write (skipped patches) */
    for (size_t j = 0; j < refs * NB; j++) {
        pos_exp[j]  = 0xdeadbeef;
        dist_exp[j] = -1.0f;
    }
    search_local_sizes(sc->kernel, patch, step, block, &local0, &local1);
    if (sc->kernel == SEARCH_SQUARES)
        search_local_sizes(SEARCH_TILED, patch, step, block, &local0, &local1);
    for (int pass = 0; pass < passes; pass++) {
        /* run_search_kernel(): the per-patch kernel with skip_nx, skip_ny,
         * a work-group kernel with regular_nx, regular_ny and its local
         * buffers */
        int limit_nx = edge ? edge_column : tiled ? regular_nx : skip_nx;
        int limit_ny = edge ? last_row : tiled ? regular_ny : skip_ny;
        int rgb   = pass == rgb_pass;
        int bytes = pass && !rgb;
        cl_kernel kp = rgb ? krgb : bytes ? kbytes : k;
        cl_mem bframes = rgb ? new_buffer(3 * samples, rgb_bytes) :
                         bytes ? new_buffer(samples, frame_bytes) :
                                 new_buffer(samples * sizeof(float), frames);
        cl_uint kstride = rgb ? (cl_uint)samples : stride;
        cl_int ring_channel = rgb ? opp_channel : 0;
        cl_mem bpos, bdist;
        int failed = 0;

        for (size_t j = 0; j < refs * NB; j++) {
            pos_got[j]  = 0xdeadbeef;
            dist_got[j] = -1.0f;
        }
        bpos  = new_buffer(refs * NB * sizeof(uint32_t), pos_got);
        bdist = new_buffer(refs * NB * sizeof(float), dist_got);
        {
            const Arg args[] = {
                ARG(bframes), ARG(channels), ARG(kstride), ARG(ring_channel),
                ARG(weights), ARG(w), ARG(h), ARG(sc->first_slot),
                ARG(sc->nb_frames), ARG(sc->ring), ARG(sc->ref_slot), ARG(patch),
                ARG(step), ARG(block), ARG(radius), ARG(nx), ARG(gy_end),
                ARG(limit_nx), ARG(limit_ny), ARG(gy_first), ARG(sc->ref_first),
                ARG(bpos), ARG(bdist), { local0, NULL }, { local1, NULL },
            };
            if (edge) {
                if (nb_edge)
                    run_kernel(kp, args, 23, DENOISE_SEARCH_EDGE_LANES, nb_edge,
                               DENOISE_SEARCH_EDGE_LANES, 1);
            } else if (!tiled)
                run_kernel(kp, args, 23, nx, gy_end - gy_first, 0, 0);
            else if (gy_first < regular_ny)
                run_kernel(kp, args, 25, regular_nx, only_ny - gy_first,
                           DENOISE_SEARCH_TILE, DENOISE_SEARCH_TILE);
        }
        read_buffer(bpos, refs * NB * sizeof(uint32_t), pos_got);
        read_buffer(bdist, refs * NB * sizeof(float), dist_got);
        if (!bytes)
            search_reference(sc, rgb ? opponent : frames, nx, gy_first, gy_end,
                             skip_nx, skip_ny, only_nx, only_ny, pos_exp,
                             dist_exp);

        c->cases++;
        for (size_t j = 0; j < refs * NB && !failed; j++) {
            if (pos_got[j] != pos_exp[j] || memcmp(&dist_got[j], &dist_exp[j], sizeof(float))) {
                size_t r = j / NB;

                check_fail(c, "%dx%d, step %d, radius %d, %s%s, %d frame(s), "
                           "ref_first %d, grid rows %d..%d, %s %dx%d: reference "
                           "(%d, %d) entry %d: got position %u distance %.9g, "
                           "expected position %u distance %.9g", w, h, step, radius,
                           sc->stripes ? "stripes" : sc->levels == 1 ? "constant samples" :
                           sc->levels > 0 ? "integer samples" : "fractional samples",
                           rgb ? (opp_channel == 0 ? " as opponent Y of rings of RGB bytes" :
                                  opp_channel == 1 ? " as opponent U of rings of RGB bytes" :
                                                     " as opponent V of rings of RGB bytes") :
                           bytes ? " in a ring of bytes" : "",
                           sc->nb_frames, sc->ref_first, gy_first, gy_end - 1,
                           tiled ? "regular" : "skip", tiled ? regular_nx : skip_nx,
                           tiled ? regular_ny : skip_ny, (int)(r % nx),
                           (int)(r / nx) + gy_first, (int)(j % NB), pos_got[j],
                           dist_got[j], pos_exp[j], dist_exp[j]);
                failed = 1;
            }
        }
        release_mem(bframes);
        release_mem(bpos);
        release_mem(bdist);
        if (failed)
            break;
    }
    free(frames);
    free(frame_bytes);
    free(rgb_bytes);
    free(opponent);
    free(pos_got);
    free(pos_exp);
    free(dist_got);
    free(dist_exp);
}

/*
 * The per-patch kernel on every step and sample kind; each work-group
 * kernel on the searches that tiled_kernel() of denoise_opencl.c gives it
 * (one channel of weight 1, patches of 8: bm3d_gpu's, and nlmeans_gpu's
 * p=8): patch_search_squares for integer samples (8-bit frames) on steps
 * of square blocks of 2 to 8 samples (bm3d_gpu `fast`, nlmeans_gpu's
 * default); patch_search_rows for steps prime to the patch (blocks of one
 * sample: bm3d_gpu `ref`'s step 3, nlmeans_gpu's step 1) and for steps of
 * blocks of 2 and 4 (where patch_search_tiled's local memory does not fit
 * the device), on any samples;
 * patch_search_tiled for the other steps on fractional samples (16-bit
 * frames, 16-bit levels for ties), and with ref_first 1 (bm3d_gpu) and 0
 * (nlmeans_gpu), windows of frames, bands. Sizes from one work-group to
 * two in each direction. With 'channels' 3 (a program of SEARCH_CHANNELS
 * 3), each case on three channels, channel 0 of weight 1 and the others of
 * random weights.
 */
static void check_search(cl_program prog, int entry, int channels, int joint)
{
    const int kernel = search_kernels[entry].base;
    static const struct { int w, h; } sizes[] = {
        { 8, 8 }, { 9, 8 }, { 13, 11 }, { 24, 17 }, { 40, 24 },
    };
    static const struct { int w, h; } tiled_sizes[] = {
        { 8, 8 }, { 13, 11 }, { 24, 27 }, { 45, 40 }, { 76, 30 },
    };
    static const int all_steps[] = { 1, 3, 4, 8 };
    static const int block_steps[] = { 2, 4, 8 };   /* blocks of 2 .. 8 */
    /* blocks of 1 (where patch_search_tiled's would not fit), then of 2
     * and 4 (where its local memory does not fit the device) */
    static const int rows_steps[]  = { 1, 3, 5, 2, 4 };
    /* and for the entries of keys, the largest window they take
     * (keys_radius()) */
    static const int radii[]  = { 2, 5, 8, 10 };
    const int nb_fixed = (int)(sizeof(radii) / sizeof(radii[0]));
    const int nb_radii = nb_fixed + search_kernels[entry].keys;
    static const int all_levels[]     = { 2, 6, 0 };
    static const int integer_levels[] = { 2, 6, 256 };
    static const int frac_levels[]    = { -3, 0, 0 };
    const int *steps  = kernel == SEARCH_PATCH || kernel == SEARCH_EDGE ? all_steps :
                        kernel == SEARCH_ROWS ? rows_steps : block_steps;
    const int *levels = kernel == SEARCH_SQUARES || search_kernels[entry].keys ?
                        integer_levels :
                        kernel == SEARCH_PATCH || kernel == SEARCH_ROWS ||
                        kernel == SEARCH_EDGE ? all_levels : frac_levels;
    int nb_steps = kernel == SEARCH_PATCH || kernel == SEARCH_EDGE ? 4 :
                   kernel == SEARCH_ROWS ? 5 : 3;
    int work_group = kernel != SEARCH_PATCH && kernel != SEARCH_EDGE;
    cl_kernel k = get_kernel(prog, search_kernels[entry].name);
    /* nlmeans_gpu's rings of bytes: the same kernel, reading bytes; and
     * of RGB bytes, for the kernels of fractional samples (opponent
     * channels), those of one channel */
    cl_kernel kbytes = get_kernel(byte_search_program(joint ? 3 : 1),
                                  search_kernels[entry].name);
    cl_kernel krgb = joint || kernel == SEARCH_SQUARES || search_kernels[entry].keys ?
                     NULL : get_kernel(rgb_search_program(), search_kernels[entry].name);
    Check c;
    int n = 0, runnable = 0;
    char joint_name[64];

    snprintf(joint_name, sizeof(joint_name), channels > 1 ? "%s (3 channels)" :
             "%s (joint colour, 1 channel)", search_kernels[entry].name);
    check_begin(&c, joint ? joint_name : search_kernels[entry].name);
    for (int s = 0; s < 5; s++) {
        for (int st = 0; st < nb_steps; st++) {
            for (int ri = 0; ri < nb_radii; ri++) {
                /* every combination of the other parameters, in turn */
                SearchCase sc = {
                    .kernel = kernel,
                    .width  = work_group ? tiled_sizes[s].w : sizes[s].w,
                    .height = work_group ? tiled_sizes[s].h : sizes[s].h,
                    .patch = search_patch(entry),
                    .step = steps[st],
                    .radius = ri < nb_fixed ? radii[ri] : 0,
                    /* now and then a constant plane: every distance 0,
                     * the tables in key order alone */
                    .levels = n % 11 == 5 ? 1 : levels[n % 3],
                    .ref_first = (n / 3) % 2,
                    .band = n % 5 == 1, .skip = !kernel && n % 7 == 3,
                    .channels = channels,
                    .weights = { 1.0f, 1.0f, 1.0f },
                };
                /* one frame, or a window of two in a ring of three that
                 * wraps around, the reference the first or the second */
                if (n % 4 < 2) {
                    sc.ring = 1;
                    sc.nb_frames = 1;
                } else {
                    sc.ring = 3;
                    sc.first_slot = 2;
                    sc.nb_frames = 2;
                    sc.ref_slot = n % 4 == 2 ? 2 : 0;
                }
                if (ri == nb_fixed)
                    sc.radius = keys_radius(sc.patch, sc.nb_frames);
                n++;
                if (!search_applies(entry, sc.step))
                    continue;
                if (work_group && !search_kernel_fits(k, kernel, sc.patch, sc.step)) {
                    snprintf(c.note, sizeof(c.note), "steps whose local "
                             "memory does not fit this device: skipped");
                    continue;
                }
                if (opt.search_cases && runnable++ >= opt.search_cases)
                    continue;
                /* joint colour: channel 0 of weight 1, as the filter's */
                for (int ch = 1; ch < channels; ch++)
                    sc.weights[ch] = rndf(0.25f, 4.0f);
                search_case(&c, k, kbytes, krgb, &sc);
            }
        }
    }
    /* patch_search_edge with one lane holding every best candidate: the
     * last column's patches at x 32 of a plane 40 wide, whose windows of
     * radius 31 are 32 = SEARCH_EDGE_LANES columns wide from x 1, so that
     * lane 31 scans the reference's column, on stripes (all of that
     * column's candidates nearer than any other); its whole table, entry
     * NB - 1 included, is the search's (without ref_first). Sixteen
     * planes: a wrong entry NB - 1 shows in some of them only (an early
     * exit at entry NB - 2's distance: 4 to 7 of 16 on PoCL); the first
     * four have both windows (one frame; two in a ring of three), each
     * without ref_first, and the two with it */
    for (int i = 0; kernel == SEARCH_EDGE && !opt.search_cases &&
                    i < opt.edge_stripes; i++) {
        SearchCase sc = {
            .kernel = kernel, .width = 40, .height = 30, .patch = BM3D_PATCH,
            .step = 3, .radius = 31, .stripes = 1, .ref_first = i % 4 == 3,
            .ring = 1, .nb_frames = 1, .channels = channels,
            .weights = { 1.0f, 1.0f, 1.0f },
        };

        if (i % 2) {
            sc.ring = 3;
            sc.first_slot = 2;
            sc.nb_frames = 2;
        }
        for (int ch = 1; ch < channels; ch++)
            sc.weights[ch] = rndf(0.25f, 4.0f);
        search_case(&c, k, kbytes, krgb, &sc);
    }
    check_end(&c);
    clReleaseKernel(k);
    clReleaseKernel(kbytes);
    if (krgb)
        clReleaseKernel(krgb);
}

/*
 * The searches of nlmeans_gpu's joint colour (its program of
 * SEARCH_CHANNELS 3): three channels, channel 0 of weight 1 and the others
 * random, through the kernels tiled_kernel() of denoise_opencl.c can give
 * it (the per-patch, tiled and edge searches); then one channel, as the
 * filter searches an alpha plane in that program (the channels of
 * DENOISE_CHANNELS_SINGLE: stride 0, weights 1).
 */
static void check_joint_search(void)
{
    static const int entries[] = { SEARCH_PATCH, SEARCH_TILED, SEARCH_EDGE };
    cl_program prog = NULL;

    for (int e = 0; e < 3; e++) {
        if (!selected(search_kernels[entries[e]].name))
            continue;
        if (!prog)
            prog = build_nlmeans_program(3, 0, 0);
        check_search(prog, entries[e], 3, 1);
        check_search(prog, entries[e], 1, 1);
    }
    if (prog)
        clReleaseProgram(prog);
}

/* ---------------------------------------------------------------------- */
/* bm3d_filter_ht, bm3d_filter_wiener                                     */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return x < y ? -1 : x > y;
}

/*
 * The frames of a group for filter_case(): a window of P past and F future
 * frames around frame t in a ring of P + 2F + 1 slots (frame f in slot
 * f % ring, as the filter's queue holds them), whose accumulators are a
 * ring of F + 1 planes, frame t's in plane acc_ref, as run_step() and
 * filter_step() of vbm3d_gpu give them; P = F = t = 0 for a still image
 * (bm3d_gpu).
 */
typedef struct FilterWindow {
    int past, future, t, acc_ref;
} FilterWindow;

static const FilterWindow filter_windows[] = {
    { 0, 0, 0, 0 }, { 1, 1, 1, 1 }, { 0, 0, 0, 0 }, { 2, 2, 3, 2 },
    { 3, 0, 3, 0 }, { 0, 3, 0, 1 },
};

/*
 * One group, alone in a launch (nx = 1, one band row): a table of NB
 * entries, the reference first (frame t) at distance 0, then random
 * patches of random frames of the window at increasing random distances
 * about 64 * tau, so that the group size (entries within tau, cut to a
 * power of two not above 'group') varies, or with 'full' all within
 * 64 * tau, so that the group is full; in every other group not full,
 * the first entry past 64 * tau is put at 64 * tau exactly, which counts
 * (distance / 64 <= tau). Reference: bm3d_group_size() and
 * bm3d_hard_threshold_group() of the model with its tables t
 * (bm3d_init_tables(): the DCT or Bior1.5, Haar along the group, Kaiser
 * beta 2, as make_transform() and make_kaiser() of vf_bm3d_gpu.c compute
 * them), threshold = hdthr * sigma in float, the patches of frames before
 * t left out; every accumulator plane must be equal, bit for bit.
 *
 * With 'wiener' the same group goes through bm3d_filter_wiener instead,
 * with a basic estimate (the same ramp with noise of a quarter of sigma,
 * so that the Wiener gains spread between 0 and 1) as the oracle;
 * reference: bm3d_wiener_group() with the same noise sigma (0 included:
 * gains of 1).
 *
 * With rgb_channel 0, 1 or 2 (a program of DENOISE_RING_RGB), the noisy
 * rings are of R, G and B bytes (ramps of their own, rounded), 'stride'
 * apart in one buffer, the basic ones of opponent channels Y, U + 128 and
 * V + 128 (the same, U and V within -128 .. 127), and the kernel filters
 * opponent channel rgb_channel; the model filters planes of that channel,
 * computed by opponent.h, and of the basic bytes.
 */
static void filter_case(Check *c, cl_kernel k, const char *variant,
                        const BM3DTables *t, int nb, int w, int h, int group,
                        float sigma, int wiener, int full,
                        const FilterWindow *fw, int rgb_channel)
{
    const size_t plane = (size_t)w * h;
    static unsigned boundary_case;
    const float hdthr = 2.7f, tau = 3000.0f;    /* the defaults */
    const int lo = fw->t - fw->past, hi = fw->t + fw->future;
    float threshold = hdthr * sigma;
    /* filter_step() */
    int nx = 1, ring = fw->past + 2 * fw->future + 1, ref_slot = fw->t % ring;
    int nb_aggregated = hi - fw->t + 1, acc_ref = fw->acc_ref;
    int acc_ring = fw->future + 1;
    size_t planes_size = ring * plane, acc_size = acc_ring * plane;
    float *noisy = alloc_or_die(planes_size * sizeof(float));
    float *basic = alloc_or_die(planes_size * sizeof(float));
    float stack[BM3D_MAX_GROUP * BM3D_PATCH2];
    float stack_b[BM3D_MAX_GROUP * BM3D_PATCH2];
    int64_t *num = alloc_or_die(acc_size * sizeof(int64_t));
    int64_t *weights = alloc_or_die(acc_size * sizeof(int64_t));
    int64_t *got_num = alloc_or_die(acc_size * sizeof(int64_t));
    int64_t *got_weights = alloc_or_die(acc_size * sizeof(int64_t));
    const float **planes = alloc_or_die((hi + 1) * sizeof(*planes));
    const float **basics = alloc_or_die((hi + 1) * sizeof(*basics));
    int64_t **nums = alloc_or_die((hi + 1) * sizeof(*nums));
    int64_t **weights_of = alloc_or_die((hi + 1) * sizeof(*weights_of));
    BM3DNeighbor best[BM3D_MAX_GROUP];
    uint32_t pos[BM3D_MAX_GROUP];
    float dist[BM3D_MAX_GROUP];
    const int rgb = rgb_channel >= 0;
    uint8_t *bytes = rgb ? alloc_or_die(6 * planes_size) : NULL;
    cl_uint plane_size = plane, stride = rgb ? planes_size : 0;
    cl_int channel = rgb ? rgb_channel : 0;
    cl_mem bnoisy, bbasic, bpos, bdist, bkaiser, bnum, bweights;
    int n;

    /* every slot: a smooth ramp plus noise, some coefficients above the
     * threshold, most below */
    for (size_t i = 0; i < planes_size && !rgb; i++) {
        int x = i % w, y = i / w % h;
        float ramp = (float)((x * 7 + y * 3) % 256);

        noisy[i] = ramp + rndf(-sigma, sigma);
        basic[i] = ramp + rndf(-0.25f * sigma, 0.25f * sigma);
    }
    /* RGB: noisy bytes (R, G, B), then basic ones (Y, U + 128, V + 128),
     * each three rings; the basic ones clamped as bm3d_normalise_u8 does */
    for (size_t i = 0; i < 3 * planes_size && rgb; i++) {
        int x = i % w, y = i / w % h, ch = i / planes_size;
        float ramp = (float)((x * 7 + y * 3 + 85 * ch) % 256);

        bytes[i] = fminf(fmaxf(rintf(ramp + rndf(-sigma, sigma)), 0.0f), 255.0f);
        bytes[3 * planes_size + i] =
            fminf(fmaxf(rintf(ramp + rndf(-0.25f * sigma, 0.25f * sigma)), 0.0f), 255.0f);
    }
    for (size_t i = 0; i < planes_size && rgb; i++) {
        const uint8_t *nb = bytes, *bb = bytes + 3 * planes_size;
        float o[3];

        opponent_forward(nb[i], nb[i + stride], nb[i + 2 * stride], o);
        noisy[i] = o[rgb_channel];
        basic[i] = (float)(bb[i + rgb_channel * stride] - (rgb_channel ? 128 : 0));
    }
    for (int f = lo; f <= hi; f++) {
        size_t acc = (size_t)((acc_ref + f - fw->t) % acc_ring) * plane;

        planes[f] = noisy + (f % ring) * plane;
        basics[f] = basic + (f % ring) * plane;
        /* frames before t are not aggregated: no accumulators */
        nums[f]       = f < fw->t ? NULL : num + acc;
        weights_of[f] = f < fw->t ? NULL : weights + acc;
    }
    for (int e = 0; e < nb; e++) {
        int x = rnd(w - BM3D_PATCH + 1), y = rnd(h - BM3D_PATCH + 1);
        int f = e ? lo + (int)rnd(hi - lo + 1) : fw->t;

        best[e].pos   = y * w + x;
        best[e].frame = f;
        pos[e]  = (f % ring) * plane + best[e].pos;
        dist[e] = rndf(0.0f, (full ? 1.0f : 1.5f) * 64.0f * tau);
    }
    dist[0] = 0.0f;
    qsort(dist + 1, nb - 1, sizeof(float), cmp_float);
    /* every other group not full: its first entry past tau moved onto it,
     * where it still counts */
    if (!full && boundary_case++ % 2) {
        for (int e = 1; e < nb; e++) {
            if (dist[e] > 64.0f * tau) {
                dist[e] = 64.0f * tau;
                break;
            }
        }
    }
    for (int e = 0; e < nb; e++)
        best[e].dist = dist[e];

    bnoisy   = rgb ? new_buffer(3 * planes_size, bytes) :
                     new_buffer(planes_size * sizeof(float), noisy);
    bbasic   = rgb ? new_buffer(3 * planes_size, bytes + 3 * planes_size) :
                     new_buffer(planes_size * sizeof(float), basic);
    bpos     = new_buffer(nb * sizeof(*pos), pos);
    bdist    = new_buffer(nb * sizeof(*dist), dist);
    bkaiser  = new_buffer(sizeof(t->kaiser), t->kaiser);
    bnum     = new_buffer(acc_size * sizeof(int64_t), num);     /* zeros */
    bweights = new_buffer(acc_size * sizeof(int64_t), weights);
    {
        /* filter_step(): 'threshold' is unused by the Wiener kernel, and
         * 'basic' by the hard-threshold one, which gets a null buffer, as
         * the filter gives it with estim=basic (no ring of basic
         * estimates) */
        cl_mem bb = wiener ? bbasic : NULL;
        const Arg args[] = {
            ARG(bnoisy), ARG(bb), ARG(w), ARG(nx), ARG(bpos), ARG(bdist),
            ARG(group), ARG(tau), ARG(sigma), ARG(threshold), ARG(bkaiser),
            ARG(bnum), ARG(bweights), ARG(plane_size), ARG(ring),
            ARG(ref_slot), ARG(nb_aggregated), ARG(acc_ref), ARG(acc_ring),
            ARG(stride), ARG(channel),
        };
        run_kernel(k, args, 21, (size_t)nx * BM3D_PATCH2, 1, BM3D_PATCH2, 1);
    }
    read_buffer(bnum, acc_size * sizeof(int64_t), got_num);
    read_buffer(bweights, acc_size * sizeof(int64_t), got_weights);

    n = bm3d_group_size(best, group, tau);
    if (wiener)
        bm3d_wiener_group(t, planes, basics, w, best, n, fw->t, sigma, stack,
                          stack_b, nums, weights_of);
    else
        bm3d_hard_threshold_group(t, planes, w, best, n, fw->t, threshold,
                                  stack, nums, weights_of);

    c->cases++;
    for (size_t i = 0; i < 2 * acc_size; i++) {
        const int64_t *g = i < acc_size ? got_num : got_weights;
        const int64_t *e = i < acc_size ? num : weights;
        size_t j = i % acc_size;

        if (g[j] != e[j]) {
            check_fail(c, "%s%s, %dx%d, group %d (size %d), sigma %g, frames "
                       "%d..%d, t %d: %s plane %d at (%d, %d): got %" PRId64
                       ", expected %" PRId64, variant, rgb ? (const char *[]){
                       " (Y)", " (U)", " (V)" }[rgb_channel] : "", w, h, group, n, sigma,
                       lo, hi, fw->t, i < acc_size ? "num" : "weights",
                       (int)(j / plane), (int)(j % plane % w),
                       (int)(j % plane / w), g[j], e[j]);
            break;
        }
    }
    release_mem(bnoisy);
    release_mem(bbasic);
    release_mem(bpos);
    release_mem(bdist);
    release_mem(bkaiser);
    release_mem(bnum);
    release_mem(bweights);
    free(noisy);
    free(basic);
    free(bytes);
    free(num);
    free(weights);
    free(got_num);
    free(got_weights);
    free(planes);
    free(basics);
    free(nums);
    free(weights_of);
}

/* One check of the programs: every size, group size and sigma, with the
 * model's tables t; with 'rgb' (a program of rings of RGB bytes) each
 * case on one of the three opponent channels in turn. */
static void filter_cases(Check *c, cl_program prog, const char *variant,
                         const BM3DTables *t, int nb, int wiener, int rgb)
{
    static const struct { int w, h; } sizes[] = { { 8, 8 }, { 19, 13 }, { 32, 24 } };
    /* sigma 0: a threshold of 0 (hdthr=0), where the coefficients that
     * are exactly 0 (the odd DCT ones of the ramps' constant rows) are not
     * kept and do not count in the group's weight */
    static const float sigmas[] = { 0.0f, 2.0f, 10.0f, 40.0f };
    int nb_sigmas = sizeof(sigmas) / sizeof(sigmas[0]);
    cl_kernel k = get_kernel(prog, wiener ? "bm3d_filter_wiener" : "bm3d_filter_ht");
    int i = 0;

    for (int s = 0; s < 3; s++)
        for (int group = 1; group <= nb; group *= 2)
            for (int si = 0; si < nb_sigmas; si++, i++)
                filter_case(c, k, variant, t, nb, sizes[s].w, sizes[s].h, group,
                            sigmas[si], wiener, (s + si) % 2,
                            &filter_windows[i % (sizeof(filter_windows) /
                                                  sizeof(filter_windows[0]))],
                            rgb ? i % 3 : -1);
    clReleaseKernel(k);
}

/* The programs progs, whose two steps use the DCT, Haar along the group
 * and kaiser=2 (the fast preset's tables); then a program whose first step
 * uses Bior1.5 (the ref preset's), the second still the DCT: the model's
 * tables must be those of the step the kernel filters; then a program of
 * rings of RGB bytes (the DCT); then groups of 32 (ref's second step) and
 * of 8 (vbm3d_gpu's defaults), each with Haar and with Walsh-Hadamard
 * along the groups, so that every level of both transforms runs, and
 * groups of 4 and 2 with Haar, whose program keeps a level only where NB
 * reaches its length (Walsh-Hadamard tests n at each level). */
static void check_filter(cl_program *progs, const char *const *variants,
                         int nb_progs, int wiener)
{
    static const struct {
        int nb, haar;
        const char *name;
    } groups[] = {
        { 32, 1, "groups of 32 (Haar)" },
        { 32, 0, "groups of 32 (Walsh-Hadamard)" },
        {  8, 1, "groups of 8 (Haar)" },
        {  8, 0, "groups of 8 (Walsh-Hadamard)" },
        {  4, 1, "groups of 4 (Haar)" },
        {  2, 1, "groups of 2 (Haar)" },
    };
    BM3DTables dct, bior;
    cl_program prog;
    Check c;

    bm3d_init_tables(&dct, 2.0f, 0, 1);
    bm3d_init_tables(&bior, 2.0f, 1, 1);
    check_begin(&c, wiener ? "bm3d_filter_wiener" : "bm3d_filter_ht");
    for (int p = 0; p < nb_progs; p++)
        filter_cases(&c, progs[p], variants[p], &dct, NB, wiener, 0);
    prog = build_program(NB, 1, has_int64_atomics(), 1, 0);
    filter_cases(&c, prog, "Bior1.5 first step", wiener ? &dct : &bior, NB,
                 wiener, 0);
    clReleaseProgram(prog);
    prog = build_program(NB, 1, has_int64_atomics(), 0, 1);
    filter_cases(&c, prog, "rings of RGB bytes", &dct, NB, wiener, 1);
    clReleaseProgram(prog);
    for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
        BM3DTables tables;

        bm3d_init_tables(&tables, 2.0f, 0, groups[g].haar);
        prog = build_program(groups[g].nb, groups[g].haar,
                             has_int64_atomics(), 0, 0);
        filter_cases(&c, prog, groups[g].name, &tables, groups[g].nb, wiener, 0);
        clReleaseProgram(prog);
    }
    check_end(&c);
}

/* ---------------------------------------------------------------------- */
/* nlmeans_weights                                                        */

/* The tolerance of the exponential weights, in units in the last place:
 * exp() of OpenCL is within 3 ulp (and 4 with the CL 1.2 embedded profile),
 * and the sum of the weights carries the differences into every
 * normalised weight. The bisquare weights and the flat means must be equal
 * bit for bit. */
#define NLM_EXP_ULPS 16

enum { NLM_EXP, NLM_BISQUARE };     /* NLMeansKernel of nlmeans_gpu.cl */

/* Distance in units in the last place of two finite floats of one sign
 * (the weights: 0 .. 1). */
static int64_t ulp_diff(float a, float b)
{
    int32_t ia, ib;

    memcpy(&ia, &a, sizeof(ia));
    memcpy(&ib, &b, sizeof(ib));
    return ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia;
}

/*
 * doc/nlmeans_gpu-algorithm.md, "Flat groups": the sum and the sum of
 * squares of the patch at every position of a plane where one fits, into
 * sums[2 p] and sums[2 p + 1]; the other positions are left alone.
 */
static void nlmeans_patch_sums_reference(const float *plane, int width,
                                         int height, int patch, float *sums)
{
    for (int y = 0; y + patch <= height; y++) {
        for (int x = 0; x + patch <= width; x++) {
            float sum = 0.0f, sum_sq = 0.0f;

            for (int j = 0; j < patch; j++) {
                float row = 0.0f, row_sq = 0.0f;

                for (int i = 0; i < patch; i++) {
                    float v = plane[(y + j) * width + x + i];

                    row   += v;
                    row_sq = fmaf(v, v, row_sq);
                }
                sum    += row;
                sum_sq += row_sq;
            }
            sums[2 * (y * width + x)]     = sum;
            sums[2 * (y * width + x) + 1] = sum_sq;
        }
    }
}

/*
 * doc/nlmeans_gpu-algorithm.md, "Weights" and "Flat groups", for 'refs'
 * tables of NB entries (used entries first, +infinity after), from the
 * patch sums 'sums' (pairs, channel c from pair c * stride): the
 * normalised weights into w_out, the flat means (NaN when the group is not
 * flat in every channel, or with flat_thr[0] < 0: no flat test) into
 * means_out[c * refs + r].
 */
static void nlmeans_weights_reference(const float *sums, int channels,
                                      size_t stride, int patch,
                                      int refs, float bias, float inv_scale,
                                      int kernel_type, const float *flat_thr,
                                      const uint32_t *pos, const float *dist,
                                      float *w_out, float *means_out)
{
    const float inv_area = 1.0f / (float)(channels * patch * patch);

    for (int r = 0; r < refs; r++) {
        const uint32_t *p = pos + (size_t)r * NB;
        const float *d = dist + (size_t)r * NB;
        float w[NB], wsum = 0.0f, mu[3];
        int m = 0, flat;

        for (int k = 0; k < NB; k++) {
            if (d[k] == INFINITY) {
                w[k] = 0.0f;
            } else {
                float e = d[k] * inv_area - bias;

                if (!(e > 0.0f)) {
                    w[k] = 1.0f;
                } else {
                    float z = e * inv_scale;

                    if (kernel_type == NLM_BISQUARE)
                        w[k] = z < 1.0f ? (1.0f - z) * (1.0f - z) : 0.0f;
                    else
                        w[k] = expf(-z);
                }
                m++;
            }
            wsum += w[k];
        }
        for (int k = 0; k < NB; k++)
            w_out[(size_t)r * NB + k] = w[k] / wsum;

        flat = flat_thr[0] >= 0.0f;
        for (int c = 0; c < channels && flat; c++) {
            const float *v = sums + 2 * c * stride;
            const float nf = (float)(m * patch * patch);
            float sum = 0.0f, sum_sq = 0.0f;

            for (int k = 0; k < m; k++) {
                sum    += v[2 * p[k]];
                sum_sq += v[2 * p[k] + 1];
            }
            mu[c] = sum / nf;
            flat = (sum_sq - mu[c] * sum) / nf <= flat_thr[c];
        }
        for (int c = 0; c < channels; c++)
            means_out[(size_t)c * refs + r] = flat ? mu[c] : NAN;
    }
}

typedef struct NLMCase {
    int channels;
    int kernel_type;
    int patch;
    float sigma, h;         /* h = 0: sigma */
    float beta;             /* flat threshold in sigma^2, 0: none */
    int nx, ny;
    int rgb;                /* 1 + the opponent channel read from rings of R,
                               G, B bytes (one channel), 0: floats */
    int bytes;              /* a ring of bytes (one channel) */
} NLMCase;

/* The word that vf_nlmeans_gpu.c allocates after a ring of bytes, which
 * the flat test may read (nlmeans_row8()); the bytes of the buffers here
 * end where those of the filter's ring do. */
#define NLM_BYTES_TAIL 4

/*
 * One case: nx x ny tables over a frame of 'channels' channels made of
 * four regions stacked, each a level of 100 plus uniform noise of an
 * amplitude per region and channel (in units of the channel's sigma, or
 * of 1 where sigma is 0): all low (flat groups), all about the flat
 * threshold, channel 1 alone high (the test stops at a later channel), all
 * high. With nc->rgb, R, G and B bytes are drawn so, rounded, and the
 * channel is their opponent channel nc->rgb - 1 (the kernels of a program
 * of rings of RGB bytes read them); with nc->bytes, the samples are
 * rounded to bytes, for a program of rings of bytes. Every table lies in one random region: its reference at distance
 * 0, then 0 to NB - 1 more entries at sorted random distances that put the
 * excess over the bias between -1 and 3 times the scale (weights 1, in the
 * kernel's slope and, for the bisquare, 0), then +infinity (unused). The
 * patch sums by 'ksums' as compute_patch_sums() of vf_nlmeans_gpu.c runs
 * it (the channels planes of a ring of two), the weights by 'kweights' with
 * compute_weights()'s arguments; 'ksums' NULL: no sums, as with a window,
 * and the weights kernel sums the patches itself.
 */
static void nlmeans_case(Check *c, cl_kernel kweights, cl_kernel ksums,
                         const NLMCase *nc, int64_t *max_ulps)
{
    static const float amps[4][3] = {
        { 0.3f, 0.3f, 0.3f }, { 1.75f, 1.75f, 1.75f },
        { 0.3f, 4.0f, 0.3f }, { 4.0f, 4.0f, 4.0f },
    };
    static const float sigma_ratio[3] = { 1.0f, 0.5f, 0.75f };
    const int patch = nc->patch, channels = nc->channels;
    /* planes of more than one work-group's tile of patch sums across too */
    const int region = patch + 3, width = patch + (nc->nx > 3 ? 33 : 9);
    const int height = 4 * region;
    const size_t plane = (size_t)width * height;
    const size_t stride = channels > 1 ? 2 * plane : plane;
    const int refs = nc->nx * nc->ny;
    float sigma = nc->sigma, sigmas[3];
    /* compute_weights() and flat_thresholds() */
    float h = nc->h > 0 ? nc->h : sigma;
    float bias = 2.0f * sigma * sigma;
    float scale = nc->kernel_type == NLM_BISQUARE ? 3.0f * h * h : h * h;
    float inv_scale = scale > 0 ? 1.0f / scale : INFINITY;
    cl_float4 flat = { .s = { -1.0f, -1.0f, -1.0f, -1.0f } };
    float *frames = alloc_or_die(channels * stride * sizeof(float));
    uint32_t *pos = alloc_or_die((size_t)refs * NB * sizeof(uint32_t));
    float *dist = alloc_or_die((size_t)refs * NB * sizeof(float));
    float *w_got = alloc_or_die((size_t)refs * NB * sizeof(float));
    float *w_exp = alloc_or_die((size_t)refs * NB * sizeof(float));
    float *m_got = alloc_or_die((size_t)channels * refs * sizeof(float));
    float *m_exp = alloc_or_die((size_t)channels * refs * sizeof(float));
    float *s_got = alloc_or_die(2 * channels * stride * sizeof(float));
    float *s_exp = alloc_or_die(2 * channels * stride * sizeof(float));
    cl_uint cstride = stride;
    cl_int ring_channel = nc->rgb ? nc->rgb - 1 : 0;
    int kernel_type = nc->kernel_type, nx = nc->nx, ny = nc->ny;
    uint8_t *rgb = nc->rgb ? alloc_or_die(3 * plane + NLM_BYTES_TAIL) : NULL;
    uint8_t *gray = nc->bytes ? alloc_or_die(plane + NLM_BYTES_TAIL) : NULL;
    cl_mem bframes, bsums, bpos, bweights, bmeans, bsums_arg;

    for (int ch = 0; ch < channels; ch++) {
        sigmas[ch] = sigma * sigma_ratio[ch];
        if (nc->beta > 0)
            flat.s[ch] = nc->beta * sigmas[ch] * sigmas[ch];
    }
    for (int ch = 0; ch < channels; ch++) {
        for (int y = 0; y < height; y++) {
            /* sigma 0: the first region constant (flat for tau = 0) */
            float unit = sigmas[ch] > 0 ? sigmas[ch] : y < region ? 0.0f : 1.0f;
            float a = amps[y / region][ch] * unit;

            for (int x = 0; x < width; x++)
                frames[ch * stride + (size_t)y * width + x] = 100.0f + rndf(-a, a);
            for (int x = 0; nc->bytes && x < width; x++) {
                size_t j = (size_t)y * width + x;

                gray[j]   = (uint8_t)lrintf(frames[j]);
                frames[j] = gray[j];
            }
            for (int x = 0; rgb && x < width; x++) {
                size_t j = (size_t)y * width + x;
                float o[3];

                for (int q = 0; q < 3; q++)
                    rgb[q * plane + j] = (uint8_t)lrintf(100.0f + rndf(-a, a));
                opponent_forward(rgb[j], rgb[plane + j], rgb[2 * plane + j], o);
                frames[j] = o[ring_channel];
            }
        }
    }
    for (int r = 0; r < refs; r++) {
        uint32_t *p = pos + (size_t)r * NB;
        float *d = dist + (size_t)r * NB;
        int y0 = rnd(4) * region, m = 1 + rnd(NB);

        for (int e = 0; e < NB; e++) {
            p[e] = (y0 + rnd(region - patch + 1)) * width + rnd(width - patch + 1);
            if (e == 0)
                d[e] = 0.0f;
            else if (e >= m)
                d[e] = INFINITY;
            else if (scale > 0)
                d[e] = (float)(channels * patch * patch) *
                       (bias + rndf(-1.0f, 3.0f) * scale);
            else    /* h' = 0: identical patches, or any other */
                d[e] = rnd(3) ? rndf(0.0f, 50.0f) * channels * patch * patch : 0.0f;
            if (d[e] < 0.0f)
                d[e] = 0.0f;
            if (e >= m)
                p[e] = p[0];        /* as the search leaves them */
        }
        qsort(d + 1, m - 1, sizeof(float), cmp_float);
    }
    for (size_t j = 0; j < (size_t)channels * refs; j++)
        m_exp[j] = -1234.5f;
    for (size_t j = 0; j < 2 * channels * stride; j++)
        s_exp[j] = -1234.5f;
    bframes  = rgb  ? new_buffer(3 * plane + NLM_BYTES_TAIL, rgb) :
               gray ? new_buffer(plane + NLM_BYTES_TAIL, gray) :
                      new_buffer(channels * stride * sizeof(float), frames);
    bsums    = new_buffer(2 * channels * stride * sizeof(float), s_exp);
    bpos     = new_buffer((size_t)refs * NB * sizeof(uint32_t), pos);
    bweights = new_buffer((size_t)refs * NB * sizeof(float), dist);
    bmeans   = new_buffer((size_t)channels * refs * sizeof(float), m_exp);
    for (int ch = 0; ch < channels; ch++) {
        cl_int index = ch * (stride / plane);
        const Arg args[] = {
            ARG(bframes), ARG(index), ARG(width), ARG(height), ARG(patch),
            ARG(cstride), ARG(ring_channel), ARG(bsums),
        };
        if (ksums)
            run_kernel(ksums, args, 8, width - patch + 1,
                       io_rows(height - patch + 1), 16, 8);
        nlmeans_patch_sums_reference(frames + ch * stride, width, height,
                                     patch, s_exp + 2 * ch * stride);
    }
    bsums_arg = ksums ? bsums : NULL;
    {
        const Arg args[] = {
            ARG(bframes), ARG(width), ARG(bsums_arg), ARG(channels),
            ARG(cstride), ARG(ring_channel), ARG(patch), ARG(nx), ARG(ny),
            ARG(bias), ARG(inv_scale), ARG(kernel_type), ARG(flat), ARG(bpos),
            ARG(bweights), ARG(bmeans),
        };
        run_kernel(kweights, args, 16, nx, ny, 0, 0);
    }
    if (ksums)
        read_buffer(bsums, 2 * channels * stride * sizeof(float), s_got);
    read_buffer(bweights, (size_t)refs * NB * sizeof(float), w_got);
    read_buffer(bmeans, (size_t)channels * refs * sizeof(float), m_got);
    nlmeans_weights_reference(s_exp, channels, stride, patch, refs,
                              bias, inv_scale, kernel_type, flat.s, pos, dist,
                              w_exp, m_exp);

    c->cases++;
    if (ksums && memcmp(s_got, s_exp, 2 * channels * stride * sizeof(float))) {
        size_t j = 0;

        while (!memcmp(&s_got[j], &s_exp[j], sizeof(float)))
            j++;
        check_fail(c, "%d channel(s)%s, patch %d, %dx%d plane: patch sums of "
                   "channel %d at (%d, %d): %s %.9g, expected %.9g", channels,
                   rgb ? " of RGB bytes" : "", patch, width, height,
                   (int)(j / 2 / stride),
                   (int)(j / 2 % stride % width), (int)(j / 2 % stride / width),
                   j % 2 ? "sum of squares" : "sum", s_got[j], s_exp[j]);
        goto done;
    }
    for (size_t j = 0; j < (size_t)refs * NB; j++) {
        int64_t ulps = ulp_diff(w_got[j], w_exp[j]);
        int exact = kernel_type == NLM_BISQUARE || !(w_exp[j] > 0.0f);

        if (!exact && ulps > *max_ulps)
            *max_ulps = ulps;
        if (exact ? !!memcmp(&w_got[j], &w_exp[j], sizeof(float)) :
                    ulps > NLM_EXP_ULPS) {
            check_fail(c, "%d channel(s)%s, %s, patch %d, sigma %g, h %g, "
                       "flat %g, %dx%d: reference (%d, %d) entry %d (distance "
                       "%.9g): weight %.9g, expected %.9g (%s)", channels,
                       rgb ? " of RGB bytes" : "", kernel_type == NLM_BISQUARE ? "bisquare" : "exp", patch,
                       sigma, nc->h, nc->beta, nx, ny, (int)(j / NB % nx),
                       (int)(j / NB / nx), (int)(j % NB), dist[j], w_got[j],
                       w_exp[j], exact ? "bit for bit" :
                       "more than " XSTR(NLM_EXP_ULPS) " ulp apart");
            goto done;
        }
    }
    for (size_t j = 0; j < (size_t)channels * refs; j++) {
        if (isnan(m_got[j]) != isnan(m_exp[j]) ||
            (!isnan(m_exp[j]) && memcmp(&m_got[j], &m_exp[j], sizeof(float)))) {
            size_t r = j % refs;

            check_fail(c, "%d channel(s)%s, %s, patch %d, sigma %g, h %g, "
                       "flat %g, %dx%d: reference (%d, %d) channel %d: flat "
                       "mean %.9g, expected %.9g", channels,
                       rgb ? " of RGB bytes" : "", kernel_type == NLM_BISQUARE ? "bisquare" : "exp", patch,
                       sigma, nc->h, nc->beta, nx, ny, (int)(r % nx),
                       (int)(r / nx), (int)(j / refs), m_got[j], m_exp[j]);
            break;
        }
    }
done:
    release_mem(bframes);
    release_mem(bsums);
    release_mem(bpos);
    release_mem(bweights);
    release_mem(bmeans);
    free(s_got);
    free(s_exp);
    free(frames);
    free(rgb);
    free(gray);
    free(pos);
    free(dist);
    free(w_got);
    free(w_exp);
    free(m_got);
    free(m_exp);
}

/* One channel, and joint colour (three channels; and one channel in the
 * same program), and opponent channels of rings of RGB bytes; both patch
 * sums kernels, and none (the flat test summing the patches); patches of 1
 * to 8; sigma and h 0 (weights of 0 and 1 only) or not; with and without
 * the flat test; grids smaller and larger than a work-group. */
static void check_nlmeans_weights(void)
{
    static const int patches[] = { 1, 3, 5, 8 };
    static const struct { float sigma, h; } strengths[] = {
        { 0.0f, 0.0f }, { 0.0f, 5.0f }, { 5.0f, 0.0f }, { 10.0f, 12.0f },
        { 2.5f, 0.0f },
    };
    static const struct { int nx, ny; } grids[] = { { 1, 1 }, { 3, 2 }, { 17, 9 } };
    /* (SEARCH_CHANNELS, channels); the last two, rings of RGB bytes and of
     * bytes */
    static const int layouts[5][2] = { { 1, 1 }, { 3, 3 }, { 3, 1 }, { 1, 1 }, { 1, 1 } };
    cl_program progs[2] = { build_nlmeans_program(1, 0, 0), build_nlmeans_program(3, 0, 0) };
    int64_t max_ulps = 0;
    Check c;
    int n = 0;

    check_begin(&c, "nlmeans_weights");
    for (int l = 0; l < 5; l++) {
        cl_program prog = l == 3 ? rgb_search_program() :
                          l == 4 ? byte_search_program(1) : progs[layouts[l][0] == 3];
        cl_kernel k = get_kernel(prog, "nlmeans_weights");
        cl_kernel ks = get_kernel(prog, "nlmeans_patch_sums");
        cl_kernel ks8 = get_kernel(prog, "nlmeans_patch_sums_p8");

        for (int kt = 0; kt < 2; kt++)
            for (int fl = 0; fl < 2; fl++)
                for (int pi = 0; pi < 4; pi++)
                    for (int si = 0; si < 5; si++, n++) {
                        NLMCase nc = {
                            .channels = layouts[l][1], .kernel_type = kt,
                            .patch = patches[pi], .sigma = strengths[si].sigma,
                            .h = strengths[si].h, .beta = fl ? 1.05f : 0.0f,
                            .nx = grids[n % 3].nx, .ny = grids[n % 3].ny,
                            .rgb = l == 3 ? 1 + n % 3 : 0, .bytes = l == 4,
                        };
                        nlmeans_case(&c, k, ks, &nc, &max_ulps);
                        nlmeans_case(&c, k, NULL, &nc, &max_ulps);
                        /* and the entry point for 8x8 patches */
                        if (nc.patch == 8)
                            nlmeans_case(&c, k, ks8, &nc, &max_ulps);
                    }
        clReleaseKernel(k);
        clReleaseKernel(ks);
        clReleaseKernel(ks8);
    }
    snprintf(c.note, sizeof(c.note), "exp weights within " XSTR(NLM_EXP_ULPS)
             " ulp (at most %" PRId64 " here), the rest bit for bit", max_ulps);
    check_end(&c);
    clReleaseProgram(progs[0]);
    clReleaseProgram(progs[1]);
}

/* ---------------------------------------------------------------------- */
/* nlmeans_aggregate                                                      */

/*
 * The tolerance of the aggregation, doc/nlmeans_gpu-algorithm.md ("What is
 * exact and what is not"): the estimates and the aggregation are fixed
 * only up to the order of their float sums, and two conforming
 * implementations differ by at most (n + K + 10) u Vmax at a sample
 * covered by K patches (n the table size, u = 2^-24, Vmax the largest
 * magnitude of a sample or flat mean). The reference below sums in the
 * filter's documented gather order, so on a device that rounds as the
 * contract says the outputs are equal bit for bit; the ok line says how
 * many were.
 */
static float nlmeans_aggregate_tolerance(int covering, float vmax)
{
    return (float)((NB + covering + 10) * 0x1p-24 * vmax);
}

/* T(i) of the aggregation's tent: largest at the patch centre. */
static int nlmeans_tent(int i, int patch)
{
    return i + 1 < patch - i ? i + 1 : patch - i;
}

/*
 * doc/nlmeans_gpu-algorithm.md, "Aggregation", for the tables of the whole
 * grid (r = gy * nx + gx; flat means at means[c * nx * ny + r], NaN when
 * the group is not flat): every output sample from the reference patches
 * covering it, found by scanning the whole grid, in order of increasing
 * gy then gx, each estimate summed over the n entries in order; the
 * number of covering patches into covering[].
 */
static void nlmeans_aggregate_reference(const float *frames, int channels,
                                        size_t stride, int width, int height,
                                        int patch, int step, int nx, int ny,
                                        const uint32_t *pos,
                                        const float *weights,
                                        const float *means, float *const *out,
                                        int *covering)
{
    const size_t refs = (size_t)nx * ny;

    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            float num[3] = { 0.0f, 0.0f, 0.0f }, den = 0.0f;
            int count = 0;

            for (int gy = 0; gy < ny; gy++) {
                int j = y - (gy * step < height - patch ? gy * step : height - patch);

                if (j < 0 || j >= patch)
                    continue;
                for (int gx = 0; gx < nx; gx++) {
                    int i = x - (gx * step < width - patch ? gx * step : width - patch);
                    size_t r = (size_t)gy * nx + gx;
                    int flat = !isnan(means[r]);
                    float b;

                    if (i < 0 || i >= patch)
                        continue;
                    b = (float)(nlmeans_tent(i, patch) * nlmeans_tent(j, patch));
                    for (int c = 0; c < channels; c++) {
                        float e = 0.0f;

                        if (flat) {
                            e = means[c * refs + r];
                        } else {
                            for (int k = 0; k < NB; k++)
                                e += weights[r * NB + k] *
                                     frames[c * stride + pos[r * NB + k] +
                                            (size_t)j * width + i];
                        }
                        num[c] += b * e;
                    }
                    den += b;
                    count++;
                }
            }
            for (int c = 0; c < channels; c++)
                out[c][(size_t)y * width + x] = num[c] / den;
            covering[(size_t)y * width + x] = count;
        }
    }
}

typedef struct AggCase {
    int channels;
    int width, height;
    int patch, step;        /* the options p and step, before the cuts */
    int band;               /* grid rows per band, 0: the smallest allowed */
    int ring;
    int opponent;           /* samples of either sign */
    int rgb;                /* 1 + the opponent channel read from rings of R,
                               G, B bytes (one channel), 0: floats */
} AggCase;

/* The rows of the grid whose patches cover sample row y, as
 * first_covering_row() and last_covering_row() of vf_nlmeans_gpu.c. */
static int agg_first_row(int y, int patch, int step)
{
    return y >= patch ? (y - patch) / step + 1 : 0;
}

static int agg_last_row(int y, int step, int ny)
{
    return y / step + 1 < ny - 1 ? y / step + 1 : ny - 1;
}

/*
 * One case: random frames in a ring, random tables for the whole grid
 * (entry 0 the reference patch, weight 1 before normalisation; 0 to NB - 1
 * more entries at random positions of any frame of the ring with random
 * weights, zeros included; the unused entries at weight 0 on the
 * reference's position, as nlmeans_weights and the search leave them),
 * normalised in float as nlmeans_weights does; a group in four flat, with
 * random means. The frame is then aggregated band by band as
 * filter_component() of vf_nlmeans_gpu.c does it, each band's tables
 * copied into buffers of its own, and compared with the reference.
 */
static void aggregate_case(Check *c, cl_kernel k, const AggCase *ac,
                           int64_t *exact, int64_t *samples, double *max_ratio)
{
    const int w = ac->width, h = ac->height, channels = ac->channels;
    /* set_plane_params(): patch and step cut to the plane */
    int patch = ac->patch < w ? ac->patch : w;
    int step, nx, ny, band, min_rows = 1;
    const size_t plane = (size_t)w * h;
    /* DenoiseChannels.stride: the rings of the channels, one after the other */
    cl_uint stride;
    cl_int ring_channel = ac->rgb ? ac->rgb - 1 : 0;
    size_t refs;
    float *frames, *got[3], *exp[3], *weights, *means, vmax = 0.0f;
    uint8_t *rgb = NULL;
    uint32_t *pos;
    int *covering;
    cl_mem bframes, bdst[3];
    float lo = ac->opponent ? -128.0f : 0.0f, hi = ac->opponent ? 128.0f : 255.0f;

    patch = patch < h ? patch : h;
    step  = ac->step < patch ? ac->step : patch;
    nx = (w - patch + step - 1) / step + 1;
    ny = (h - patch + step - 1) / step + 1;
    refs = (size_t)nx * ny;
    for (int y = 0; y < h; y++) {
        int rows = agg_last_row(y, step, ny) - agg_first_row(y, patch, step) + 1;
        min_rows = rows > min_rows ? rows : min_rows;
    }
    min_rows = min_rows < ny ? min_rows : ny;
    band = ac->band ? (ac->band < ny ? ac->band : ny) : min_rows;
    band = band > min_rows ? band : min_rows;
    stride = ac->ring * plane;

    frames   = alloc_or_die(channels * ac->ring * plane * sizeof(float));
    pos      = alloc_or_die(refs * NB * sizeof(uint32_t));
    weights  = alloc_or_die(refs * NB * sizeof(float));
    means    = alloc_or_die(channels * refs * sizeof(float));
    covering = alloc_or_die(plane * sizeof(int));
    if (ac->rgb) {
        rgb = alloc_or_die(3 * stride);
        for (size_t j = 0; j < 3 * stride; j++)
            rgb[j] = (uint8_t)rnd(256);
    }
    for (size_t j = 0; j < channels * ac->ring * plane; j++) {
        float o[3];

        frames[j] = rndf(lo, hi);
        if (rgb) {
            opponent_forward(rgb[j], rgb[stride + j], rgb[2 * stride + j], o);
            frames[j] = o[ring_channel];
        }
        vmax = fabsf(frames[j]) > vmax ? fabsf(frames[j]) : vmax;
    }
    for (size_t r = 0; r < refs; r++) {
        int gx = r % nx, gy = r / nx, m = 1 + rnd(NB);
        int x0 = gx * step < w - patch ? gx * step : w - patch;
        int y0 = gy * step < h - patch ? gy * step : h - patch;
        uint32_t *p = pos + r * NB;
        float *wt = weights + r * NB, wsum = 0.0f;
        int flat = rnd(4) == 0;

        for (int e = 0; e < NB; e++) {
            if (e == 0)
                p[e] = rnd(ac->ring) * plane + (size_t)y0 * w + x0;
            else if (e < m)
                p[e] = rnd(ac->ring) * plane + (size_t)rnd(h - patch + 1) * w +
                       rnd(w - patch + 1);
            else
                p[e] = p[0];
            wt[e] = e == 0 ? 1.0f : e >= m ? 0.0f : rnd(5) ? rndf(0.0f, 1.0f) :
                    rnd(2) ? 1.0f : 0.0f;
            wsum += wt[e];
        }
        for (int e = 0; e < NB; e++)
            wt[e] /= wsum;
        for (int ch = 0; ch < channels; ch++) {
            means[ch * refs + r] = flat ? rndf(lo, hi) : NAN;
            if (flat && fabsf(means[ch * refs + r]) > vmax)
                vmax = fabsf(means[ch * refs + r]);
        }
    }
    bframes = rgb ? new_buffer(3 * stride, rgb) :
                    new_buffer(channels * ac->ring * plane * sizeof(float), frames);
    for (int ch = 0; ch < 3; ch++) {
        got[ch] = alloc_or_die(plane * sizeof(float));
        exp[ch] = alloc_or_die(plane * sizeof(float));
        for (size_t j = 0; j < plane; j++)
            got[ch][j] = -1234.5f;          /* every sample must be written */
        bdst[ch] = ch < channels ? new_buffer(plane * sizeof(float), got[ch]) : bdst[0];
    }

    /* filter_component(): the bands */
    for (int y = 0; y < h;) {
        int gy_first = agg_first_row(y, patch, step);
        int gy_end = gy_first + band < ny ? gy_first + band : ny;
        int table_rows = gy_end - gy_first, y_end = y;
        /* alloc_plane_buffers(): tables of 'band' rows, the last band's
         * rows first (the rest NaN, position 0) */
        size_t band_refs = (size_t)nx * table_rows, size = (size_t)nx * band;
        uint32_t *band_pos = alloc_or_die(size * NB * sizeof(uint32_t));
        float *band_weights = alloc_or_die(size * NB * sizeof(float));
        float *band_means = alloc_or_die(channels * size * sizeof(float));
        cl_mem bpos, bweights, bmeans;

        while (y_end < h && agg_last_row(y_end, step, ny) < gy_end)
            y_end++;
        if (y_end == y)
            die("nlmeans_aggregate: band of %d rows too small", band);
        for (size_t j = 0; j < size * NB; j++)
            band_weights[j] = NAN;
        for (size_t j = 0; j < channels * size; j++)
            band_means[j] = NAN;
        memcpy(band_pos, pos + (size_t)gy_first * nx * NB,
               band_refs * NB * sizeof(uint32_t));
        memcpy(band_weights, weights + (size_t)gy_first * nx * NB,
               band_refs * NB * sizeof(float));
        for (int ch = 0; ch < channels; ch++)
            memcpy(band_means + ch * band_refs,
                   means + ch * refs + (size_t)gy_first * nx,
                   band_refs * sizeof(float));
        bpos     = new_buffer(size * NB * sizeof(uint32_t), band_pos);
        bweights = new_buffer(size * NB * sizeof(float), band_weights);
        bmeans   = new_buffer(channels * size * sizeof(float), band_means);
        {
            /* aggregate(): an unused destination gets dst0 */
            const Arg args[] = {
                ARG(bframes), ARG(channels), ARG(stride), ARG(ring_channel),
                ARG(bdst[0]), ARG(bdst[1]), ARG(bdst[2]), ARG(w), ARG(h),
                ARG(patch), ARG(step), ARG(nx), ARG(ny), ARG(gy_first),
                ARG(table_rows), ARG(y), ARG(y_end), ARG(bpos), ARG(bweights),
                ARG(bmeans),
            };
            run_kernel(k, args, 20, w, y_end - y, 0, 0);
        }
        release_mem(bpos);
        release_mem(bweights);
        release_mem(bmeans);
        free(band_pos);
        free(band_weights);
        free(band_means);
        y = y_end;
    }
    for (int ch = 0; ch < channels; ch++)
        read_buffer(bdst[ch], plane * sizeof(float), got[ch]);
    nlmeans_aggregate_reference(frames, channels, stride, w, h, patch, step,
                                nx, ny, pos, weights, means, exp, covering);

    c->cases++;
    for (size_t j = 0; j < plane; j++) {
        for (int ch = 0; ch < channels; ch++) {
            float tol = nlmeans_aggregate_tolerance(covering[j], vmax);
            float diff = fabsf(got[ch][j] - exp[ch][j]);

            (*samples)++;
            *exact += !memcmp(&got[ch][j], &exp[ch][j], sizeof(float));
            if (diff / tol > *max_ratio)
                *max_ratio = diff / tol;
            if (!(diff <= tol)) {
                check_fail(c, "%d channel(s)%s, %dx%d, patch %d, step %d, bands "
                           "of %d of %d grid rows, ring %d: (%d, %d) channel "
                           "%d: got %.9g, expected %.9g (%d patches; more than "
                           "%.3g apart)", channels, rgb ? " of RGB bytes" : "",
                           w, h, patch, step, band,
                           ny, ac->ring, (int)(j % w), (int)(j / w), ch,
                           got[ch][j], exp[ch][j], covering[j], tol);
                goto done;
            }
        }
    }
done:
    release_mem(bframes);
    for (int ch = 0; ch < channels; ch++)
        release_mem(bdst[ch]);
    for (int ch = 0; ch < 3; ch++) {
        free(got[ch]);
        free(exp[ch]);
    }
    free(frames);
    free(rgb);
    free(pos);
    free(weights);
    free(means);
    free(covering);
}

/* One channel, and joint colour (three channels; and one channel in the
 * same program), and opponent channels of rings of RGB bytes; plane sizes
 * from 1x1 up, odd, smaller than the patch (cut), steps dividing the patch
 * or not (an extra row and column of patches at the edges), the smallest
 * bands and larger ones, a ring of one or three frames, samples of one
 * sign or of both (opponent). */
static void check_nlmeans_aggregate(void)
{
    static const struct { int w, h, patch, step; } geometries[] = {
        { 1, 1, 8, 4 }, { 5, 3, 8, 4 }, { 7, 9, 3, 2 }, { 13, 11, 8, 4 },
        { 17, 9, 5, 1 }, { 19, 14, 8, 3 }, { 24, 21, 4, 4 }, { 33, 20, 8, 5 },
        { 40, 37, 8, 4 },
    };
    /* (SEARCH_CHANNELS, channels); the last, rings of RGB bytes */
    static const int layouts[4][2] = { { 1, 1 }, { 3, 3 }, { 3, 1 }, { 1, 1 } };
    cl_program progs[2] = { build_nlmeans_program(1, 0, 0), build_nlmeans_program(3, 0, 0) };
    int64_t exact = 0, samples = 0;
    double max_ratio = 0.0;
    Check c;
    int n = 0;

    check_begin(&c, "nlmeans_aggregate");
    for (int l = 0; l < 4; l++) {
        cl_program prog = l == 3 ? rgb_search_program() : progs[layouts[l][0] == 3];
        cl_kernel k = get_kernel(prog, "nlmeans_aggregate");
        cl_kernel k84 = get_kernel(prog, "nlmeans_aggregate_8x4");

        for (int g = 0; g < (int)(sizeof(geometries) / sizeof(geometries[0])); g++) {
            for (int b = 0; b < 2; b++, n++) {
                AggCase ac = {
                    .channels = layouts[l][1],
                    .width = geometries[g].w, .height = geometries[g].h,
                    .patch = geometries[g].patch, .step = geometries[g].step,
                    .band = b ? 0 : 1000, .ring = n % 3 ? 1 : 3,
                    .opponent = n % 5 == 2 || l == 3,
                    .rgb = l == 3 ? 1 + n % 3 : 0,
                };
                aggregate_case(&c, k, &ac, &exact, &samples, &max_ratio);
                /* and the entry point for 8x8 patches on a step of 4, where
                 * the plane leaves them uncut (aggregate()'s choice) */
                if (ac.patch == 8 && ac.step == 4 && ac.width >= 8 && ac.height >= 8)
                    aggregate_case(&c, k84, &ac, &exact, &samples, &max_ratio);
            }
        }
        clReleaseKernel(k);
        clReleaseKernel(k84);
    }
    snprintf(c.note, sizeof(c.note), "within (n + K + 10) 2^-24 Vmax (at most "
             "%.2g of it here); %" PRId64 " of %" PRId64 " samples bit for bit",
             max_ratio, exact, samples);
    check_end(&c);
    clReleaseProgram(progs[0]);
    clReleaseProgram(progs[1]);
}

/* ---------------------------------------------------------------------- */
/* vbm3d_search                                                           */

typedef struct VBM3DCase {
    int width, height;
    int step, radius1, radius2;
    int levels;             /* sample values 0 .. levels - 1, 0: fractional;
                               1: one constant plane in every frame */
    int past, future;       /* P and F: a ring of P + 2F + 1 frames */
    int t, last;            /* the reference frame, the stream's last one */
    int band;               /* search grid rows 1 .. ny - 2 only */
} VBM3DCase;

/*
 * One case: a ring of P + 2F + 1 frames, frame f in slot f % ring (as
 * the filter's queue holds them), each a random texture moved by (2, 1)
 * samples per frame with a little noise, so that the predictive search
 * follows the motion; a ring of floats, of bytes, or of R, G and B bytes
 * (three textures; the model searches their opponent Y, as the kernel reads
 * them), or of the opponent channels' bytes of basic estimates (three
 * textures, searched by vbm3d_search_basic on the first, Y); the window of frame t as ff_denoise_opencl_window()
 * gives it (truncated at the stream's start and end). Reference: the model's
 * match_group() with q, the radii and groups of nb, on the planes of the
 * window's frames: every entry of every group, its position in the ring
 * (slot of its frame * plane + y * width + x; the reference's where the
 * distance is +infinity, as search_init() leaves it) and its distance, bit
 * for bit.
 */
static void vbm3d_case(Check *c, cl_kernel k, int nb, int q, const VBM3DCase *vc,
                       int ring_kind)
{
    const int w = vc->width, h = vc->height, margin = 2 * (vc->past + vc->future) + 2;
    const int bw = w + 2 * margin, bh = h + 2 * margin;
    const size_t plane = (size_t)w * h;
    int ring = vc->past + 2 * vc->future + 1, step = vc->step;
    int lo = vc->t - vc->past > 0 ? vc->t - vc->past : 0;
    int hi = vc->t + vc->future < vc->last ? vc->t + vc->future : vc->last;
    /* ff_denoise_opencl_window() and search_step() */
    int ref_slot = vc->t % ring, nb_past = vc->t - lo, nb_future = hi - vc->t;
    int nx = bm3d_grid_count(w, step), ny = bm3d_grid_count(h, step);
    int gy_first = vc->band && ny > 2 ? 1 : 0;
    int gy_end   = vc->band && ny > 2 ? ny - 1 : ny;
    size_t refs = (size_t)(gy_end - gy_first) * nx;
    const int nb_ch = ring_kind >= RING_RGB ? 3 : 1;
    float *base = alloc_or_die((size_t)nb_ch * bw * bh * sizeof(float));
    float *chans = alloc_or_die(nb_ch * ring * plane * sizeof(float));
    float *frames = alloc_or_die(ring * plane * sizeof(float));
    uint8_t *bytes = alloc_or_die(nb_ch * ring * plane);
    const float **planes = alloc_or_die((vc->last + 1) * sizeof(*planes));
    uint32_t *pos_got = alloc_or_die(refs * nb * sizeof(uint32_t));
    uint32_t *pos_exp = alloc_or_die(refs * nb * sizeof(uint32_t));
    float *dist_got = alloc_or_die(refs * nb * sizeof(float));
    float *dist_exp = alloc_or_die(refs * nb * sizeof(float));
    VBM3DModelStep st = { step, 2 * vc->radius1 + 1, 2 * vc->radius2 + 1, nb,
                          2500.0f };
    Search s = { NULL, w, h, q, NULL };
    cl_uint stride = ring_kind >= RING_RGB ? ring * plane : 0;
    cl_mem bframes, bpos, bdist;

    if (ring_kind != RING_FLOAT && !vc->levels)
        die("vbm3d_case: rings of bytes need integer samples");
    for (size_t j = 0; j < (size_t)nb_ch * bw * bh; j++)
        base[j] = vc->levels ? (float)rnd(vc->levels) :
                  ref_to_8bit_scale(rnd(1024) << 6, 65535);
    /* every slot of the ring: the window's frames, and older ones */
    for (int ch = 0; ch < nb_ch; ch++) {
        for (int i = 0; i < ring; i++) {
            int f = lo + i, dx = 2 * (f - lo), dy = f - lo;

            for (int y = 0; y < h; y++) {
                for (int x = 0; x < w; x++) {
                    float v = base[((size_t)ch * bh + y + dy) * bw + x + dx];

                    /* (levels 1: every frame the same constant plane) */
                    if (rnd(4) == 0 && vc->levels != 1)
                        v += vc->levels ? (float)rnd(2) : rndf(-1.0f, 1.0f);
                    chans[(ch * ring + f % ring) * plane + (size_t)y * w + x] = v;
                }
            }
        }
    }
    for (size_t j = 0; j < (size_t)nb_ch * ring * plane; j++)
        bytes[j] = (uint8_t)chans[j];
    for (size_t j = 0; j < ring * plane; j++) {
        float o[3];

        if (ring_kind == RING_RGB)
            opponent_forward(chans[j], chans[j + stride], chans[j + 2 * stride], o);
        frames[j] = ring_kind == RING_RGB ? o[0] : chans[j];
    }
    for (int f = lo; f <= vc->last && f < lo + ring; f++)
        planes[f] = frames + (f % ring) * plane;
    bframes = ring_kind == RING_FLOAT ? new_buffer(ring * plane * sizeof(float), frames) :
              new_buffer(nb_ch * ring * plane, bytes);
    bpos    = new_buffer(refs * nb * sizeof(uint32_t), NULL);
    bdist   = new_buffer(refs * nb * sizeof(float), NULL);
    {
        /* search_step() with video = 1 */
        const Arg args[] = {
            ARG(bframes), ARG(stride), ARG(w), ARG(h), ARG(ring),
            ARG(ref_slot), ARG(nb_past), ARG(nb_future), ARG(step), ARG(nx),
            ARG(gy_end), ARG(gy_first), ARG(vc->radius1), ARG(vc->radius2),
            ARG(bpos), ARG(bdist),
        };
        run_kernel(k, args, 16, nx, gy_end - gy_first, 0, 0);
    }
    read_buffer(bpos, refs * nb * sizeof(uint32_t), pos_got);
    read_buffer(bdist, refs * nb * sizeof(float), dist_got);

    s.planes = planes;
    s.tables = alloc_or_die((size_t)(hi - lo + 1) * q * sizeof(*s.tables));
    for (int gy = gy_first; gy < gy_end; gy++) {
        for (int gx = 0; gx < nx; gx++) {
            int x0 = bm3d_grid_pos(gx, step, w), y0 = bm3d_grid_pos(gy, step, h);
            size_t r = (size_t)(gy - gy_first) * nx + gx;
            uint32_t ref_pos = ref_slot * plane + (size_t)y0 * w + x0;
            BM3DNeighbor best[BM3D_MAX_GROUP];

            match_group(&s, vc->t, lo, hi, x0, y0, &st, best);
            for (int e = 0; e < nb; e++) {
                pos_exp[r * nb + e]  = best[e].dist == INFINITY ? ref_pos :
                                       (best[e].frame % ring) * plane + best[e].pos;
                dist_exp[r * nb + e] = best[e].dist;
            }
        }
    }

    c->cases++;
    for (size_t j = 0; j < refs * nb; j++) {
        if (pos_got[j] != pos_exp[j] || memcmp(&dist_got[j], &dist_exp[j], sizeof(float))) {
            size_t r = j / nb;

            check_fail(c, "ring of %s, groups of %d, q %d, %dx%d, step %d, "
                       "radii %d %d, %s, frames %d..%d of %d, t %d (ring %d), "
                       "grid rows %d..%d: reference (%d, %d) entry %d: got "
                       "position %u distance %.9g, expected position %u "
                       "distance %.9g", ring_kind == RING_RGB_BASIC ?
                       "opponent bytes (basic estimates)" :
                       ring_kind == RING_RGB ? "RGB bytes" :
                       ring_kind == RING_BYTES ? "bytes" : "floats", nb, q, w,
                       h, step, vc->radius1, vc->radius2,
                       vc->levels == 1 ? "constant samples" :
                       vc->levels ? "integer samples" :
                       "fractional samples", lo, hi, vc->last + 1, vc->t, ring,
                       gy_first, gy_end - 1, (int)(r % nx),
                       (int)(r / nx) + gy_first, (int)(j % nb), pos_got[j],
                       dist_got[j], pos_exp[j], dist_exp[j]);
            break;
        }
    }
    release_mem(bframes);
    release_mem(bpos);
    release_mem(bdist);
    free(s.tables);
    free(base);
    free(chans);
    free(frames);
    free(bytes);
    free(planes);
    free(pos_got);
    free(pos_exp);
    free(dist_got);
    free(dist_exp);
}

/*
 * vbm3d_gpu's program with its defaults (groups of 8, q = 2, windows of 7
 * and 5: rows of candidates up to radii 3 and 2), with larger windows
 * (radii above VBM3D_RMAX: one candidate at a time), groups of 16 and
 * q = 1, and with q = 8, groups of 32 and windows smaller than the
 * row-scan radii; each with the radii of both its steps (those of the
 * other step smaller), on windows of frames truncated or not, causal or
 * not, wrapping around the ring.
 */
static void check_vbm3d_search(void)
{
    static const struct {
        int nb, q, r1max, r2max;
        int radii[2][2];
    } programs[] = {
        {  8, 2, 3, 2, { { 3, 2 }, { 2, 1 } } },
        { 16, 1, 0, 0, { { 5, 4 }, { 2, 1 } } },
        { 32, 8, 1, 3, { { 1, 3 }, { 0, 0 } } },
    };
    static const struct { int w, h; } sizes[] = {
        { 8, 8 }, { 9, 8 }, { 13, 11 }, { 24, 17 }, { 40, 24 },
    };
    /* (P, F, t, last) */
    static const int windows[5][4] = {
        { 0, 0, 0, 0 }, { 4, 4, 6, 20 }, { 4, 4, 1, 3 }, { 2, 1, 5, 5 },
        { 3, 0, 7, 7 },
    };
    static const int steps[]  = { 3, 4, 6 };
    static const int levels[] = { 2, 6, 0 };
    Check c;

    check_begin(&c, "vbm3d_search");
    for (int p = 0; p < 3; p++) {
        for (int kind = RING_FLOAT; kind <= RING_RGB_BASIC; kind++) {
            cl_program prog = build_vbm3d_program(programs[p].nb, programs[p].q,
                                                  programs[p].r1max,
                                                  programs[p].r2max,
                                                  has_int64_atomics(), kind);
            cl_kernel k = get_kernel(prog, kind == RING_RGB_BASIC ?
                                           "vbm3d_search_basic" :
                                           "vbm3d_search");

            for (int s = 0; s < 5; s++) {
                for (int ri = 0; ri < 2; ri++) {
                    for (int wi = 0; wi < 2; wi++) {
                        /* the same cases for each kind of ring */
                        int n = ((p * 5 + s) * 2 + ri) * 2 + wi;
                        const int *win = windows[(n + wi) % 5];
                        VBM3DCase vc = {
                            .width = sizes[s].w, .height = sizes[s].h,
                            .step = steps[n % 3],
                            .radius1 = programs[p].radii[ri][0],
                            .radius2 = programs[p].radii[ri][1],
                            /* now and then constant planes: ties at
                             * distance 0 */
                            .levels = n % 7 == 3 ? 1 : levels[n % 3],
                            .past = win[0], .future = win[1], .t = win[2],
                            .last = win[3], .band = n % 5 == 1,
                        };

                        /* bytes hold integers: 0 .. 250 instead of
                         * fractions */
                        if (kind != RING_FLOAT && !vc.levels)
                            vc.levels = 250;
                        vbm3d_case(&c, k, programs[p].nb, programs[p].q, &vc,
                                   kind);
                    }
                }
            }
            clReleaseKernel(k);
            clReleaseProgram(prog);
        }
    }
    check_end(&c);
}

/* ---------------------------------------------------------------------- */
/* noise_select, noise_accumulate, noise_vst                              */

#define NIB DENOISE_NOISE_IBINS
#define NLB DENOISE_NOISE_LBINS
#define NHB DENOISE_NOISE_HBINS
#define NVP DENOISE_NOISE_VST_POINTS

/*
 * noise_select's contract (noise_estimate.cl): row r of hist_low is
 * intensity bin r, row NIB their sum over the plane; in each, the blocks
 * kept are max(ceil(n num / den), min(n, least)) (bin_least for the
 * intensity bins) out of its n, 32-bit unsigned arithmetic, and the
 * threshold is the first energy bin whose running sum reaches that number,
 * -1 where none is kept. The counts n of the intensity bins go to
 * stats[base ..], the 'rows' histograms after them are cleared, and so is
 * hist_low; nothing else of stats changes.
 */
static void noise_select_reference(const uint32_t *hist, uint32_t base, int rows,
                                   uint32_t num, uint32_t den, uint32_t least,
                                   uint32_t bin_least, int32_t *thresholds,
                                   uint32_t *stats)
{
    for (int r = 0; r <= NIB; r++) {
        uint32_t row[NLB], n = 0, kept, at_least;

        for (int j = 0; j < NLB; j++) {
            row[j] = 0;
            for (int b = 0; b < NIB; b++)
                if (r == NIB || b == r)
                    row[j] += hist[b * NLB + j];
            n += row[j];
        }
        kept = (n * num + den - 1) / den;
        at_least = r < NIB ? bin_least : least;
        if (at_least > n)
            at_least = n;
        if (kept < at_least)
            kept = at_least;
        thresholds[r] = -1;
        for (uint32_t j = 0, cum = 0; kept && j < NLB; j++) {
            cum += row[j];
            if (cum >= kept) {
                thresholds[r] = j;
                break;
            }
        }
        if (r < NIB)
            stats[base + r] = n;
    }
    for (int i = 0; i < rows * NHB; i++)
        stats[base + NIB + i] = 0;
}

/* A histogram of low-frequency energies: empty rows, sparse rows of small
 * counts (running sums that land exactly on the number kept), full rows;
 * with 'small' empty and sparse rows only (a small plane, where the least
 * numbers of blocks, not the share, set what is kept over the plane). */
static void random_low_histogram(uint32_t *hist, int small)
{
    for (int b = 0; b < NIB; b++) {
        int kind = small ? rnd(2) : rnd(4);

        for (int j = 0; j < NLB; j++) {
            uint32_t *h = &hist[b * NLB + j];

            switch (kind) {
            case 0:  *h = 0; break;
            case 1:  *h = rnd(8) ? 0 : rnd(4); break;
            case 2:  *h = rnd(3); break;
            default: *h = rnd(40) ? rnd(2) : rnd(5000); break;
            }
        }
    }
}

static void noise_select_case(Check *c, cl_kernel k, size_t size)
{
    const size_t stats_words = 128 + NIB + (1 + NIB) * NHB;
    static const uint32_t dens[] = { 50, 1, 3, 7, 100 };
    uint32_t hist[NIB * NLB], got_hist[NIB * NLB];
    uint32_t *stats = alloc_or_die(stats_words * 4), *exp = alloc_or_die(stats_words * 4);
    uint32_t *got = alloc_or_die(stats_words * 4);
    int32_t exp_thr[NIB + 1], got_thr[NIB + 1];
    uint32_t den = dens[rnd(5)], num = den == 50 && rnd(2) ? 1 : 1 + rnd(den);
    uint32_t least = rnd(2) ? 64 : rnd(300), bin_least = rnd(2) ? 16 : rnd(40);
    uint32_t base = rnd(2) ? 0 : rnd(128);
    int rows = rnd(2) ? 1 : 1 + NIB;
    cl_mem bhist, bthr, bstats;

    random_low_histogram(hist, rnd(4) == 0);
    for (size_t i = 0; i < stats_words; i++)
        stats[i] = (uint32_t)rnd64();
    memcpy(exp, stats, stats_words * 4);
    noise_select_reference(hist, base, rows, num, den, least, bin_least, exp_thr, exp);
    for (int r = 0; r <= NIB; r++)
        got_thr[r] = -7;
    bhist  = new_buffer(sizeof(hist), hist);
    bthr   = new_buffer(sizeof(got_thr), got_thr);
    bstats = new_buffer(stats_words * 4, stats);
    {
        const Arg args[] = { ARG(bhist), ARG(bthr), ARG(bstats), ARG(base), ARG(rows),
                             ARG(num), ARG(den), ARG(least), ARG(bin_least) };
        run_kernel(k, args, 9, size, 1, size, 1);
    }
    read_buffer(bhist, sizeof(got_hist), got_hist);
    read_buffer(bthr, sizeof(got_thr), got_thr);
    read_buffer(bstats, stats_words * 4, got);
    c->cases++;
    for (int r = 0; r <= NIB; r++)
        if (got_thr[r] != exp_thr[r]) {
            check_fail(c, "work-group of %zu, keep %u/%u, at least %u (%u a bin): threshold "
                       "of row %d: got %d, expected %d", size, num, den, least, bin_least,
                       r, got_thr[r], exp_thr[r]);
            goto done;
        }
    for (size_t i = 0; i < stats_words; i++)
        if (got[i] != exp[i]) {
            check_fail(c, "work-group of %zu, base %u, %d rows: stats[%zu]: got %u, "
                       "expected %u", size, base, rows, i, got[i], exp[i]);
            goto done;
        }
    for (int i = 0; i < NIB * NLB; i++)
        if (got_hist[i]) {
            check_fail(c, "work-group of %zu: hist_low[%d] not cleared (%u)", size, i,
                       got_hist[i]);
            break;
        }
done:
    release_mem(bhist);
    release_mem(bthr);
    release_mem(bstats);
    free(stats);
    free(exp);
    free(got);
}

/* An energy bin next to threshold t, or on it. */
static uint32_t near_bin(int32_t t)
{
    int v = t + (int)rnd(3) - 1;

    return v < 0 ? 0 : v > NLB - 1 ? NLB - 1 : (uint32_t)v;
}

/*
 * noise_accumulate's contract: each valid code (top bit) of the nbx x nby
 * grid adds one to row 0's bin hbin after the NIB counts of stats[base ..]
 * when its lbin is within the plane's threshold (thresholds[NIB]), and with
 * per_bin to row 1 + ibin's when within its bin's threshold; nothing else
 * changes.
 */
static void noise_accumulate_case(Check *c, cl_kernel k)
{
    int nbx = 1 + rnd(40), nby = 1 + rnd(24), per_bin = rnd(2);
    uint32_t base = rnd(2) ? 0 : rnd(64);
    const size_t words = 64 + NIB + (1 + NIB) * NHB;
    /* a row of codes more past the grid, each counted if read */
    size_t nb_codes = (size_t)nbx * (nby + 1);
    uint32_t *codes = alloc_or_die(nb_codes * 4);
    uint32_t *stats = alloc_or_die(words * 4), *exp = alloc_or_die(words * 4);
    uint32_t *got = alloc_or_die(words * 4);
    int32_t thr[NIB + 1];
    cl_mem bcodes, bthr, bstats;

    for (int r = 0; r <= NIB; r++)
        thr[r] = rnd(5) ? (int32_t)rnd(NLB) : -1;
    for (int i = 0; i < nbx * nby; i++) {
        uint32_t ibin = rnd(NIB), lbin = rnd(NLB), hbin = rnd(NHB);

        /* energies on or next to the thresholds, to try the comparisons */
        if (rnd(2) && thr[NIB] >= 0)
            lbin = near_bin(thr[NIB]);
        else if (rnd(2) && thr[ibin] >= 0)
            lbin = near_bin(thr[ibin]);
        codes[i] = rnd(5) ? 0x80000000u | ibin << 24 | lbin << 12 | hbin
                          : (uint32_t)rnd64() & 0x7fffffffu;
    }
    for (size_t i = (size_t)nbx * nby; i < nb_codes; i++)
        codes[i] = 0x80000000u;
    for (size_t i = 0; i < words; i++)
        stats[i] = rnd(1000);
    memcpy(exp, stats, words * 4);
    for (int i = 0; i < nbx * nby; i++) {
        uint32_t code = codes[i], *rows = exp + base + NIB;
        int ibin = code >> 24 & 0x7f, lbin = code >> 12 & 0xfff, hbin = code & 0xfff;

        if (!(code & 0x80000000u))
            continue;
        if (lbin <= thr[NIB])
            rows[hbin]++;
        if (per_bin && lbin <= thr[ibin])
            rows[(1 + ibin) * NHB + hbin]++;
    }
    bcodes = new_buffer(nb_codes * 4, codes);
    bthr   = new_buffer(sizeof(thr), thr);
    bstats = new_buffer(words * 4, stats);
    {
        const Arg args[] = { ARG(bcodes), ARG(nbx), ARG(nby), ARG(bthr), ARG(per_bin),
                             ARG(bstats), ARG(base) };
        run_kernel(k, args, 7, nbx, nby, 0, 0);
    }
    read_buffer(bstats, words * 4, got);
    c->cases++;
    for (size_t i = 0; i < words; i++)
        if (got[i] != exp[i]) {
            check_fail(c, "%dx%d blocks, per_bin %d, base %u: stats[%zu]: got %u, expected %u",
                       nbx, nby, per_bin, base, i, got[i], exp[i]);
            break;
        }
    release_mem(bcodes);
    release_mem(bthr);
    release_mem(bstats);
    free(codes);
    free(stats);
    free(exp);
    free(got);
}

/*
 * noise_vst's contract: each sample v of the width x height plane at
 * 'offset' becomes t[k] + (u - k) (t[k + 1] - t[k]), u = (v - start) scale
 * clamped to [0, NVP - 1], k = min(floor(u), NVP - 2), t the table at
 * table_offset; float operations one by one (no contraction), bit for bit.
 */
static void noise_vst_case(Check *c, cl_kernel k)
{
    int width = 1 + rnd(50), height = 1 + rnd(20);
    cl_uint offset = rnd(2) ? 0 : rnd(100), table_offset = rnd(2) ? 0 : rnd(3 * NVP);
    size_t n = offset + (size_t)width * height, tn = table_offset + NVP;
    float start = rndf(-20.0f, 20.0f), scale = rndf(0.2f, 3.0f);
    float *plane = alloc_or_die(n * 4), *exp = alloc_or_die(n * 4), *got = alloc_or_die(n * 4);
    float *table = alloc_or_die(tn * 4), *t = table + table_offset, v = rndf(-5.0f, 5.0f);
    cl_mem bplane, btable;
    long d;

    for (size_t i = 0; i < tn; i++)
        table[i] = rndf(-100.0f, 100.0f);
    for (int i = 0; i < NVP; i++)
        t[i] = v += rndf(0.0f, 2.0f);
    for (size_t i = 0; i < n; i++) {
        switch (rnd(5)) {
        /* below the table, above it, on one of its points, at its top */
        case 0:  plane[i] = start - rndf(0.0f, 30.0f); break;
        case 1:  plane[i] = start + (NVP - 1) / scale + rndf(0.0f, 30.0f); break;
        case 2:  plane[i] = start + (float)rnd(NVP) / scale; break;
        case 3:  plane[i] = start + (NVP - 1 - rndf(0.0f, 1.5f)) / scale; break;
        default: plane[i] = start + rndf(0.0f, NVP - 1) / scale; break;
        }
    }
    memcpy(exp, plane, n * 4);
    for (size_t i = offset; i < n; i++) {
        float u = (exp[i] - start) * scale;
        int j;

        u = u < 0.0f ? 0.0f : u > (float)(NVP - 1) ? (float)(NVP - 1) : u;
        j = (int)u < NVP - 2 ? (int)u : NVP - 2;
        exp[i] = t[j] + (u - j) * (t[j + 1] - t[j]);
    }
    bplane = new_buffer(n * 4, plane);
    btable = new_buffer(tn * 4, table);
    {
        const Arg args[] = { ARG(bplane), ARG(offset), ARG(width), ARG(height), ARG(btable),
                             ARG(table_offset), ARG(start), ARG(scale) };
        run_kernel(k, args, 8, width, height, 0, 0);
    }
    read_buffer(bplane, n * 4, got);
    c->cases++;
    if ((d = first_float_diff(got, exp, n)) >= 0)
        check_fail(c, "%dx%d at %u, start %g, scale %g: sample %ld (input %.9g): got %.9g, "
                   "expected %.9g", width, height, offset, start, scale, d, plane[d], got[d],
                   exp[d]);
    release_mem(bplane);
    release_mem(btable);
    free(plane);
    free(exp);
    free(got);
    free(table);
}

/*
 * noise_blocks' contract: block (bx, by) of the plane at 'offset' starts at
 * (bx step, by step); its 2-D DCT is the 8-point transform of each row, then
 * of each column, every coefficient r as ((m[0] e[0] + m[1] e[1]) + m[2]
 * e[2]) + m[3] e[3], m row r of 'dct' and e the mirrored sums (r even) or
 * differences (r odd); its low energy sums the squares of coefficients (i,
 * j) with 1 <= i + j <= NOISE_LOW_MAX, its high energy those with i + j >=
 * NOISE_HIGH_MIN, columns j outer, rows i inner, and its mean the samples'
 * sum in row order times 1/64. A block with NOISE_CLIP_MAX samples or more
 * <= 0 or >= top has code 0; the others have the valid bit, intensity bin
 * (int)(mean NOISE_IBINS / 256) clamped, the energies' log bins, and add
 * one to hist_low's row ibin at lbin. Float operations one by one, bit for
 * bit.
 */
static int noise_log_bin_reference(float x, int sub, int nb)
{
    uint32_t bits;
    int b;

    if (!(x > 0.0f))
        return 0;
    memcpy(&bits, &x, sizeof(bits));
    b = (int)(bits >> (23 - sub)) - ((127 + DENOISE_NOISE_LOG2_MIN) * (1 << sub));
    return b < 0 ? 0 : b > nb - 1 ? nb - 1 : b;
}

static float noise_dct_half_reference(const float *dct, int r, const float *e)
{
    const float *m = dct + r * 8;

    return ((m[0] * e[0] + m[1] * e[1]) + m[2] * e[2]) + m[3] * e[3];
}

static uint32_t noise_block_reference(const float *p, int width, const float *dct,
                                      float top)
{
    float rows[8][8], sum = 0.0f, low = 0.0f, high = 0.0f, mean;
    int clipped = 0, ibin, lbin, hbin;

    for (int y = 0; y < 8; y++) {
        float v[8], e[2][4];

        for (int x = 0; x < 8; x++) {
            v[x] = p[y * width + x];
            sum += v[x];
            clipped += v[x] <= 0.0f || v[x] >= top;
        }
        for (int a = 0; a < 4; a++) {
            e[0][a] = v[a] + v[7 - a];
            e[1][a] = v[a] - v[7 - a];
        }
        for (int j = 0; j < 8; j++)
            rows[y][j] = noise_dct_half_reference(dct, j, e[j & 1]);
    }
    for (int j = 0; j < 8; j++) {
        float e[2][4];

        for (int a = 0; a < 4; a++) {
            e[0][a] = rows[a][j] + rows[7 - a][j];
            e[1][a] = rows[a][j] - rows[7 - a][j];
        }
        for (int i = 0; i < 8; i++) {
            int f = i + j;
            float c;

            if ((f < 1 || f > DENOISE_NOISE_LOW_MAX) && f < DENOISE_NOISE_HIGH_MIN)
                continue;
            c = noise_dct_half_reference(dct, i, e[i & 1]);
            if (f <= DENOISE_NOISE_LOW_MAX)
                low += c * c;
            else
                high += c * c;
        }
    }
    if (clipped >= DENOISE_NOISE_CLIP_MAX)
        return 0;
    mean = sum * (1.0f / 64.0f);
    ibin = (int)(mean * (NIB / 256.0f));
    ibin = ibin < 0 ? 0 : ibin > NIB - 1 ? NIB - 1 : ibin;
    lbin = noise_log_bin_reference(low,  DENOISE_NOISE_LSUB, NLB);
    hbin = noise_log_bin_reference(high, DENOISE_NOISE_HSUB, NHB);
    return 0x80000000u | (uint32_t)ibin << 24 | (uint32_t)lbin << 12 | (uint32_t)hbin;
}

/* The orthonormal 8-point DCT-II as make_dct() of denoise_noise.c rounds
 * it, or (when 'random') any matrix, which shows an index taken wrong. */
static void noise_dct_matrix(float *dct, int random)
{
    for (int r = 0; r < 8; r++)
        for (int a = 0; a < 8; a++)
            dct[r * 8 + a] = random ? rndf(-0.6f, 0.6f) :
                             (float)((r ? sqrt(2.0 / 8) : sqrt(1.0 / 8)) *
                                     cos(3.14159265358979323846 * (2 * a + 1) * r / 16.0));
}

/*
 * A plane of the kind the noise estimate sees: flat areas with noise of a
 * random level, ramps, areas at 0 and at the top (clipped blocks, and
 * blocks just under NOISE_CLIP_MAX clipped samples), bright noisy areas
 * that none of their samples clip (kind 6: the last intensity bin, means
 * from 240), integers where the ring holds bytes.
 */
static float noise_plane_sample(int x, int y, int kind, float level, float top,
                                int bytes)
{
    float v;

    switch (kind) {
    case 0:  v = 128.0f + level * (rndf(-1.0f, 1.0f) + rndf(-1.0f, 1.0f)); break;
    case 1:  v = (x + y) * 2.0f + level * rndf(-1.0f, 1.0f); break;
    case 2:  v = rnd(3) ? 0.0f : rndf(0.0f, 20.0f); break;
    case 3:  v = rnd(3) ? top + rnd(2) : top - rndf(0.0f, 20.0f); break;
    case 6:  v = 246.0f + rndf(-6.0f, 6.0f); break;
    default: v = rndf(0.0f, 255.0f); break;
    }
    if (bytes)
        return v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : (float)(int)(v + 0.5f);
    return v;
}

static void noise_blocks_case(Check *c, cl_kernel k, int bytes)
{
    static const int steps[] = { 8, 8, 11, 16 };
    int step = steps[rnd(4)], nbx = 1 + rnd(12), nby = 1 + rnd(9);
    int width = (nbx - 1) * step + 8 + rnd(5), height = (nby - 1) * step + 8 + rnd(3);
    cl_uint offset = rnd(2) ? 0 : rnd(300);
    size_t n = offset + (size_t)width * height;
    float top = bytes || rnd(2) ? 255.0f - 1e-3f : 200.0f;
    float level = rnd(3) ? rndf(0.0f, 30.0f) : 0.0f, dct[64];
    int kind = rnd(7);
    float *plane = alloc_or_die(n * sizeof(float));
    uint8_t *plane8 = alloc_or_die(n);
    uint32_t *exp = alloc_or_die((size_t)nbx * nby * 4), *got = alloc_or_die((size_t)nbx * nby * 4);
    uint32_t hist[NIB * NLB], exp_hist[NIB * NLB];
    cl_mem bplane, bdct, bcodes, bhist;

    noise_dct_matrix(dct, rnd(4) == 0);
    for (size_t i = 0; i < n; i++) {
        int x = (i - offset) % width, y = (i - offset) / width;

        /* kind 5: each 8x8 area a kind of its own */
        plane[i] = noise_plane_sample(x, y, kind == 5 ? (x / 8 * 7 + y / 8) % 5 : kind,
                                      level, top, bytes);
        plane8[i] = (uint8_t)plane[i];
    }
    for (int i = 0; i < NIB * NLB; i++)
        exp_hist[i] = hist[i] = rnd(4) ? 0 : rnd(100);
    for (int by = 0; by < nby; by++)
        for (int bx = 0; bx < nbx; bx++) {
            uint32_t code = noise_block_reference(plane + offset + (size_t)by * step * width +
                                                  bx * step, width, dct, top);

            exp[by * nbx + bx] = code;
            if (code)
                exp_hist[(code >> 24 & 0x7f) * NLB + (code >> 12 & 0xfff)]++;
        }
    memset(got, 0xaa, (size_t)nbx * nby * 4);
    bplane = bytes ? new_buffer(n, plane8) : new_buffer(n * sizeof(float), plane);
    bdct   = new_buffer(sizeof(dct), dct);
    bcodes = new_buffer((size_t)nbx * nby * 4, got);
    bhist  = new_buffer(sizeof(hist), hist);
    {
        const Arg args[] = { ARG(bplane), ARG(offset), ARG(width), ARG(step), ARG(nbx),
                             ARG(nby), ARG(top), ARG(bdct), ARG(bcodes), ARG(bhist) };
        run_kernel(k, args, 10, nbx, nby, 0, 0);
    }
    read_buffer(bcodes, (size_t)nbx * nby * 4, got);
    read_buffer(bhist, sizeof(hist), hist);
    c->cases++;
    for (int i = 0; i < nbx * nby; i++)
        if (got[i] != exp[i]) {
            check_fail(c, "%s plane %dx%d at %u, step %d, kind %d, top %g: block (%d, %d): "
                       "code 0x%08x, expected 0x%08x", bytes ? "byte" : "float", width,
                       height, offset, step, kind, top, i % nbx, i / nbx, got[i], exp[i]);
            goto done;
        }
    for (int i = 0; i < NIB * NLB; i++)
        if (hist[i] != exp_hist[i]) {
            check_fail(c, "%s plane %dx%d, kind %d: hist_low[%d]: got %u, expected %u",
                       bytes ? "byte" : "float", width, height, kind, i, hist[i],
                       exp_hist[i]);
            break;
        }
done:
    release_mem(bplane);
    release_mem(bdct);
    release_mem(bcodes);
    release_mem(bhist);
    free(plane);
    free(plane8);
    free(exp);
    free(got);
}

static void check_noise(cl_program prog)
{
    cl_kernel ksel = get_kernel(prog, "noise_select");
    cl_kernel kacc = get_kernel(prog, "noise_accumulate");
    cl_kernel kvst = get_kernel(prog, "noise_vst");
    size_t max_size = 0, sizes[3];
    Check c;

    /* the filters' work-group (the kernel's largest, at most 256), and
     * smaller ones down to the least it works with */
    cl_check(clGetKernelWorkGroupInfo(ksel, dev, CL_KERNEL_WORK_GROUP_SIZE,
                                      sizeof(max_size), &max_size, NULL),
             "clGetKernelWorkGroupInfo");
    sizes[0] = max_size < 256 ? max_size : 256;
    sizes[1] = NIB + 1;
    sizes[2] = 64 < sizes[0] ? 64 : sizes[0];
    if (selected("noise_select")) {
        check_begin(&c, "noise_select");
        for (int i = 0; i < 90; i++)
            noise_select_case(&c, ksel, sizes[i % 3]);
        check_end(&c);
    }
    if (selected("noise_accumulate")) {
        check_begin(&c, "noise_accumulate");
        for (int i = 0; i < 60; i++)
            noise_accumulate_case(&c, kacc);
        check_end(&c);
    }
    if (selected("noise_vst")) {
        check_begin(&c, "noise_vst");
        for (int i = 0; i < 60; i++)
            noise_vst_case(&c, kvst);
        check_end(&c);
    }
    if (selected("noise_blocks")) {
        /* the filters' programs hold it with a ring of floats, and of bytes
         * (vbm3d_gpu on 8-bit frames) */
        cl_program prog8 = build_sources("#define NB_NEIGHBORS " XSTR(NB) "\n"
                                         "#define DENOISE_RING_BYTES 1\n",
                                         SRC_BM3D, SRC_BM3D - 1);
        cl_kernel kblk[2] = { get_kernel(prog, "noise_blocks"),
                              get_kernel(prog8, "noise_blocks") };

        check_begin(&c, "noise_blocks");
        for (int i = 0; i < 80; i++)
            noise_blocks_case(&c, kblk[i & 1], i & 1);
        check_end(&c);
        clReleaseKernel(kblk[0]);
        clReleaseKernel(kblk[1]);
        clReleaseProgram(prog8);
    }
    clReleaseKernel(ksel);
    clReleaseKernel(kacc);
    clReleaseKernel(kvst);
}

/* ---------------------------------------------------------------------- */
/* Benchmarks                                                             */

static void bench_all(cl_program prog)
{
    const int w = 1920, h = 1080, sw = 320, sh = 240;
    size_t plane = (size_t)w * h;
    uint8_t *img8 = alloc_or_die(plane);
    float *fplane = alloc_or_die(plane * sizeof(float));
    int64_t *acc = alloc_or_die(plane * sizeof(int64_t));
    float container = 255.0f;
    cl_uint offset = 0;
    int channel = 0, mask = 1, shift = 0;
    cl_mem img, out, buf, num, pos, dist;

    for (size_t i = 0; i < plane; i++) {
        img8[i]   = rnd(256);
        fplane[i] = img8[i];
        acc[i]    = ((int64_t)rnd(256) << 32) + 1;
    }
    img = new_image(w, h, 1, 1, img8);
    out = new_image(w, h, 1, 1, img8);
    buf = new_buffer(plane * sizeof(float), fplane);
    num = new_buffer(plane * sizeof(int64_t), acc);

    if (selected("denoise_load_plane")) {
        cl_kernel k = get_kernel(prog, "denoise_load_plane");
        const Arg args[] = {
            ARG(img), ARG(channel), ARG(buf), ARG(w), ARG(h), ARG(container),
            ARG(offset),
        };
        bench("denoise_load_plane", "1920x1080 8-bit", k, args, 7, w, io_rows(h));
        clReleaseKernel(k);
    }
    if (selected("denoise_store_plane")) {
        cl_kernel k = get_kernel(prog, "denoise_store_plane");
        const Arg args[] = {
            ARG(out), ARG(img), ARG(buf), ARG(buf), ARG(buf), ARG(mask),
            ARG(w), ARG(h), ARG(w), ARG(container), ARG(shift),
        };
        bench("denoise_store_plane", "1920x1080 8-bit", k, args, 11, w, io_rows(h));
        clReleaseKernel(k);
    }
    if (selected("bm3d_normalise")) {
        cl_kernel k = get_kernel(prog, "bm3d_normalise");
        const Arg args[] = {
            ARG(num), ARG(num), ARG(offset), ARG(buf), ARG(offset), ARG(w), ARG(h),
        };
        bench("bm3d_normalise", "1920x1080", k, args, 7, w, h);
        clReleaseKernel(k);
    }
    if (selected("patch_search")) {
        /* bm3d_gpu's fast preset: step 4, 21x21 window (radius 10) */
        cl_kernel k = get_kernel(prog, "patch_search");
        int channels = 1, zero = 0, one = 1, patch = 8, step = 4, block = 4;
        int radius = 10, nx = bm3d_grid_count(sw, step), ny = bm3d_grid_count(sh, step);
        cl_uint stride = 0;
        cl_float4 weights = { .s = { 1.0f, 1.0f, 1.0f, 0.0f } };

        pos  = new_buffer((size_t)nx * ny * NB * sizeof(uint32_t), NULL);
        dist = new_buffer((size_t)nx * ny * NB * sizeof(float), NULL);
        {
            const Arg args[] = {
                ARG(buf), ARG(channels), ARG(stride), ARG(zero), ARG(weights),
                ARG(sw), ARG(sh), ARG(zero), ARG(one), ARG(one), ARG(zero),
                ARG(patch), ARG(step), ARG(block), ARG(radius), ARG(nx), ARG(ny),
                ARG(zero), ARG(zero), ARG(zero), ARG(one), ARG(pos), ARG(dist),
            };
            bench("patch_search", "320x240 step 4 radius 10 NB 16", k, args,
                  23, nx, ny);
        }
        release_mem(pos);
        release_mem(dist);
        clReleaseKernel(k);
    }
    release_mem(img);
    release_mem(out);
    release_mem(buf);
    release_mem(num);
    free(img8);
    free(fplane);
    free(acc);
}

/* ---------------------------------------------------------------------- */

static void usage(void)
{
    fprintf(stderr,
            "usage: check_kernels [--device P.D] [--kernels DIR] [--seed N]\n"
            "                     [--test NAME] [--bench] [--repeat N]\n"
            "                     [--search-cases N] [--edge-stripes N]\n");
    exit(2);
}

/*
 * Every kernel of the programs built has a check: a kernel added to a .cl
 * file without one fails here, by name (only when every check runs).
 */
static void check_every_kernel(void)
{
    Check c;

    check_begin(&c, "every kernel checked");
    for (int i = 0; i < built_kernels.nb; i++) {
        const char *name = built_kernels.name[i];

        c.cases++;
        if (!name_set_has(&checked_kernels, name, strlen(name)))
            check_fail(&c, "%s, in a program built, has no check", name);
    }
    check_end(&c);
}

int main(int argc, char **argv)
{
    cl_program progs[2];
    const char *variants[2];
    int nb_progs = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

        if (!strcmp(a, "--bench")) {
            opt.bench = 1;
        } else if (!v) {
            usage();
        } else if (!strcmp(a, "--device")) {
            if (sscanf(v, "%d.%d", &opt.platform, &opt.device) != 2 ||
                opt.platform < 0 || opt.device < 0)
                usage();
            i++;
        } else if (!strcmp(a, "--kernels")) {
            opt.kernels = v;
            i++;
        } else if (!strcmp(a, "--seed")) {
            opt.seed = strtoull(v, NULL, 0);
            i++;
        } else if (!strcmp(a, "--test")) {
            opt.test = v;
            i++;
        } else if (!strcmp(a, "--repeat")) {
            opt.repeat = atoi(v);
            if (opt.repeat < 1 || opt.repeat > MAX_REPEATS)
                usage();
            i++;
        } else if (!strcmp(a, "--search-cases")) {
            opt.search_cases = atoi(v);
            if (opt.search_cases < 1)
                usage();
            i++;
        } else if (!strcmp(a, "--edge-stripes")) {
            opt.edge_stripes = atoi(v);
            if (opt.edge_stripes < 0 || opt.edge_stripes > 16)
                usage();
            i++;
        } else {
            usage();
        }
    }
    /* xorshift needs a non-zero state */
    rng_state = opt.seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
    if (!rng_state)
        rng_state = 1;

    open_device();
    /* the accumulators the filter chooses (atomics=auto), then the other
     * variant where the device has 64-bit atomics (atomics=int32) */
    variants[nb_progs] = has_int64_atomics() ? "64-bit atomics" : "32-bit pairs";
    progs[nb_progs++]  = build_program(NB, 1, has_int64_atomics(), 0, 0);
    if (has_int64_atomics() &&
        (selected("bm3d_normalise") || selected("bm3d_filter_ht") ||
         selected("bm3d_filter_wiener"))) {
        variants[nb_progs] = "32-bit pairs";
        progs[nb_progs++]  = build_program(NB, 1, 0, 0, 0);
    }

    if (selected("denoise_load_plane"))
        check_load(progs[0], 0);
    if (selected("denoise_load_plane_u8"))
        check_load(progs[0], 1);
    if (selected("denoise_store_plane"))
        check_store(progs[0], 0);
    if (selected("denoise_write_plane"))
        check_store(progs[0], 1);
    if (selected("denoise_load_plane_float"))
        check_float_io(progs[0], 0);
    if (selected("denoise_store_plane_float"))
        check_float_io(progs[0], 1);
    if (selected("denoise_write_plane_float"))
        check_float_io(progs[0], 2);
    if (selected("bm3d_normalise"))
        check_normalise(progs, variants, nb_progs);
    if (selected("patch_search"))
        check_search(progs[0], SEARCH_PATCH, 1, 0);
    if (selected("bm3d_filter_ht"))
        check_filter(progs, variants, nb_progs, 0);
    if (selected("bm3d_filter_wiener"))
        check_filter(progs, variants, nb_progs, 1);
    if (selected("nlmeans_weights"))
        check_nlmeans_weights();
    if (selected("nlmeans_aggregate"))
        check_nlmeans_aggregate();
    if (selected("vbm3d_search"))
        check_vbm3d_search();
    /* after the others, whose inputs for a seed they leave as they were */
    for (int i = SEARCH_TILED; i < SEARCH_NB; i++)
        if (selected(search_kernels[i].name))
            check_search(progs[0], i, 1, 0);
    check_noise(progs[0]);
    if (selected("denoise_opponent_forward"))
        check_opponent(progs[0], 1);
    if (selected("denoise_opponent_inverse"))
        check_opponent(progs[0], 0);
    check_joint_search();
    if (!opt.test)
        check_every_kernel();
    if (opt.bench)
        bench_all(progs[0]);

    for (int p = 0; p < nb_progs; p++)
        clReleaseProgram(progs[p]);
    for (int p = 0; p < 2; p++)
        if (byte_programs[p])
            clReleaseProgram(byte_programs[p]);
    if (rgb_program)
        clReleaseProgram(rgb_program);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    if (failures) {
        printf("%d kernel(s) failed\n", failures);
        return 1;
    }
    return 0;
}
