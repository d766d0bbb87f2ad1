/*
 * cltrace: an LD_PRELOAD library that measures what a program does on its
 * OpenCL device, for the benchmarks:
 *   - the time the device spent in kernels, from profiling events: every
 *     command queue is created with CL_QUEUE_PROFILING_ENABLE and every
 *     kernel launch gets an event, read back when the queue is finished
 *     or, every COLLECT_EVERY launches, once the kernel is complete (so
 *     that the events held stay few: an event holds driver memory, and
 *     65,536 of them added 30 to 40 MB to ffmpeg's resident memory on an
 *     NVIDIA H200);
 *   - the memory objects (buffers and images) alive at once: their peak
 *     count and bytes.
 * At exit it writes one line to stderr, or to the file named by
 * CLTRACE_OUT:
 *   cltrace: kernels N kernel_ms T mem_peak_bytes B mem_peak_objects O
 * It changes nothing else, so it also measures filters that have no
 * profiling of their own (FFmpeg's nlmeans_opencl).
 * With CLTRACE_KERNELS=1 it also writes, for each kernel function, a line
 *   cltrace: kernel NAME launches N total_ms T mean_us M
 * to tell which kernel of a stage takes the time. With CLTRACE_OBJECTS=1
 * it writes the memory objects alive at the peak, largest first, those of
 * the same kind and size on one line:
 *   cltrace: peak_object buffer|image bytes B count N
 * to tell what the peak is made of. With CLTRACE_SETUP=1 it writes the
 * wall-clock time spent creating contexts and building programs:
 *   cltrace: setup contexts N context_ms T builds N build_ms T
 * to tell a command's start-up from its frames.
 *
 * For kernel work, two more variables act on every program build:
 *   CLTRACE_BUILD_OPTIONS  appended to the build options (for example
 *                          -cl-nv-verbose: NVIDIA's register and spill
 *                          report in the build log);
 *   CLTRACE_PROGRAMS=P     writes each program's build log, binary (PTX
 *                          on NVIDIA), kernel names and source to P.N.log,
 *                          P.N.bin, P.N.kernels and P.N.cl.
 *
 *   cc -O2 -shared -fPIC -o cltrace.so cltrace.c -ldl -lpthread
 *   LD_PRELOAD=./cltrace.so ffmpeg ...
 *
 * This file is part of the GPU denoise filters for FFmpeg (LGPL 2.1 or later).
 */

#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_PENDING 65536
#define COLLECT_EVERY 1024
#define MAX_OBJECTS 65536
#define MAX_NAMES   256

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cl_event pending[MAX_PENDING];
static int pending_name[MAX_PENDING];
static int nb_pending;
static uint64_t kernels, kernel_ns;

/* per kernel function, with CLTRACE_KERNELS=1 */
static struct { char name[64]; uint64_t launches, ns; } names[MAX_NAMES];
static int nb_names;

/* contexts created and programs built, and their wall-clock time */
static uint64_t contexts, context_ns, builds, build_ns;

typedef struct { cl_mem mem; size_t size; int image; } Object;
static Object objects[MAX_OBJECTS];
static int nb_objects, peak_objects;
static size_t live_bytes, peak_bytes;
/* the objects alive at the peak, with CLTRACE_OBJECTS=1 */
static Object at_peak[MAX_OBJECTS];
static int nb_at_peak, list_peak = -1;

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "cltrace: no %s in the OpenCL library\n", name);
        abort();
    }
    return f;
}

/* Whether the variable 'name' is set to a non-zero number. */
static int env_flag(const char *name)
{
    const char *value = getenv(name);

    return value && atoi(value);
}

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Add the time since 'start' to a count and a total, under the lock. */
static void add_time(uint64_t *count, uint64_t *total, uint64_t start)
{
    uint64_t t = now_ns() - start;

    pthread_mutex_lock(&lock);
    (*count)++;
    *total += t;
    pthread_mutex_unlock(&lock);
}

/* A pending kernel not yet complete (nor ended by an error). */
static int running(cl_event ev)
{
    cl_int status = CL_COMPLETE;

    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                   &status, NULL);
    return status > CL_COMPLETE;
}

/* Read the times of the finished kernels and release their events, the
 * others kept pending; with the lock held. */
static void collect(void)
{
    int kept = 0;

    for (int i = 0; i < nb_pending; i++) {
        cl_ulong start, end;
        if (running(pending[i])) {
            pending_name[kept] = pending_name[i];
            pending[kept++] = pending[i];
            continue;
        }
        if (clGetEventProfilingInfo(pending[i], CL_PROFILING_COMMAND_START,
                                    sizeof(start), &start, NULL) == CL_SUCCESS &&
            clGetEventProfilingInfo(pending[i], CL_PROFILING_COMMAND_END,
                                    sizeof(end), &end, NULL) == CL_SUCCESS &&
            end >= start) {
            kernel_ns += end - start;
            kernels++;
            if (pending_name[i] >= 0) {
                names[pending_name[i]].ns += end - start;
                names[pending_name[i]].launches++;
            }
        }
        clReleaseEvent(pending[i]);
    }
    nb_pending = kept;
}

static void track(cl_mem mem, size_t size, int image)
{
    if (!mem)
        return;
    pthread_mutex_lock(&lock);
    if (list_peak < 0)
        list_peak = env_flag("CLTRACE_OBJECTS");
    if (nb_objects < MAX_OBJECTS) {
        objects[nb_objects] = (Object) { mem, size, image };
        nb_objects++;
        live_bytes += size;
        if (live_bytes > peak_bytes) {
            peak_bytes = live_bytes;
            if (list_peak) {
                memcpy(at_peak, objects, nb_objects * sizeof(*objects));
                nb_at_peak = nb_objects;
            }
        }
        if (nb_objects > peak_objects)
            peak_objects = nb_objects;
    }
    pthread_mutex_unlock(&lock);
}

static void untrack(cl_mem mem)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nb_objects; i++) {
        if (objects[i].mem == mem) {
            live_bytes -= objects[i].size;
            objects[i] = objects[--nb_objects];
            break;
        }
    }
    pthread_mutex_unlock(&lock);
}

static size_t image_bytes(const cl_image_format *fmt, const cl_image_desc *desc)
{
    size_t channels = 4, depth = 1, layers = 1, bytes = 1;

    switch (fmt->image_channel_order) {
    case CL_R: case CL_A: case CL_INTENSITY: case CL_LUMINANCE: channels = 1; break;
    case CL_RG: case CL_RA:                                      channels = 2; break;
    case CL_RGB:                                                 channels = 3; break;
    }
    switch (fmt->image_channel_data_type) {
    case CL_SNORM_INT16: case CL_UNORM_INT16: case CL_SIGNED_INT16:
    case CL_UNSIGNED_INT16: case CL_HALF_FLOAT:                  bytes = 2; break;
    case CL_SIGNED_INT32: case CL_UNSIGNED_INT32: case CL_FLOAT: bytes = 4; break;
    }
    if (desc->image_type == CL_MEM_OBJECT_IMAGE3D)
        depth = desc->image_depth;
    if (desc->image_type == CL_MEM_OBJECT_IMAGE2D_ARRAY ||
        desc->image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY)
        layers = desc->image_array_size;
    return desc->image_width * (desc->image_height ? desc->image_height : 1) *
           depth * layers * channels * bytes;
}

cl_command_queue clCreateCommandQueue(cl_context ctx, cl_device_id dev,
                                      cl_command_queue_properties props,
                                      cl_int *err)
{
    static cl_command_queue (*f)(cl_context, cl_device_id,
                                 cl_command_queue_properties, cl_int *);
    if (!f)
        f = next("clCreateCommandQueue");
    return f(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, err);
}

cl_command_queue clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
                                                    const cl_queue_properties *props,
                                                    cl_int *err)
{
    static cl_command_queue (*f)(cl_context, cl_device_id,
                                 const cl_queue_properties *, cl_int *);
    cl_queue_properties p[32];
    int n = 0, have = 0;

    if (!f)
        f = next("clCreateCommandQueueWithProperties");
    for (int i = 0; props && props[i] && n < 28; i += 2) {
        p[n++] = props[i];
        p[n++] = props[i + 1];
        if (props[i] == CL_QUEUE_PROPERTIES) {
            p[n - 1] |= CL_QUEUE_PROFILING_ENABLE;
            have = 1;
        }
    }
    if (!have) {
        p[n++] = CL_QUEUE_PROPERTIES;
        p[n++] = CL_QUEUE_PROFILING_ENABLE;
    }
    p[n] = 0;
    return f(ctx, dev, p, err);
}

/* The index of kernel k's function in names[], -1 when not traced; with the
 * lock held. */
static int name_index(cl_kernel k)
{
    static int traced = -1;
    char name[64] = "";

    if (traced < 0)
        traced = env_flag("CLTRACE_KERNELS");
    if (!traced ||
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(name), name, NULL) != CL_SUCCESS)
        return -1;
    for (int i = 0; i < nb_names; i++)
        if (!strcmp(names[i].name, name))
            return i;
    if (nb_names == MAX_NAMES)
        return -1;
    memcpy(names[nb_names].name, name, sizeof(name));
    return nb_names++;
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                              const size_t *offset, const size_t *global,
                              const size_t *local, cl_uint nb_wait,
                              const cl_event *wait, cl_event *event)
{
    static cl_int (*f)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                       const size_t *, const size_t *, cl_uint,
                       const cl_event *, cl_event *);
    cl_event ev = NULL;
    cl_int ret;

    if (!f)
        f = next("clEnqueueNDRangeKernel");
    ret = f(q, k, dim, offset, global, local, nb_wait, wait, &ev);
    if (ret == CL_SUCCESS && ev) {
        if (event) {
            *event = ev;
            clRetainEvent(ev);
        }
        pthread_mutex_lock(&lock);
        if (nb_pending == MAX_PENDING)
            clWaitForEvents(nb_pending, pending);
        if (nb_pending && nb_pending % COLLECT_EVERY == 0)
            collect();
        pending_name[nb_pending] = name_index(k);
        pending[nb_pending++] = ev;
        pthread_mutex_unlock(&lock);
    }
    return ret;
}

cl_int clFinish(cl_command_queue q)
{
    static cl_int (*f)(cl_command_queue);
    cl_int ret;

    if (!f)
        f = next("clFinish");
    ret = f(q);
    pthread_mutex_lock(&lock);
    if (nb_pending)
        clWaitForEvents(nb_pending, pending);
    collect();
    pthread_mutex_unlock(&lock);
    return ret;
}

/* P.n.<ext> opened for writing, or NULL. */
static FILE *open_output(const char *prefix, int n, const char *ext)
{
    char path[4096];

    snprintf(path, sizeof(path), "%s.%d.%s", prefix, n, ext);
    return fopen(path, "wb");
}

/* A string property of program p (kernel names, source), to free, or NULL
 * where it is empty or cannot be read. */
static char *program_string(cl_program p, cl_program_info param)
{
    size_t size = 0;
    char *str;

    if (clGetProgramInfo(p, param, 0, NULL, &size) != CL_SUCCESS || size <= 1 ||
        !(str = malloc(size)))
        return NULL;
    if (clGetProgramInfo(p, param, size, str, NULL) != CL_SUCCESS) {
        free(str);
        return NULL;
    }
    str[size - 1] = 0;
    return str;
}

/* The build log, binary, kernel names (one a line) and source of program
 * p, the n-th built, to P.n.log, P.n.bin, P.n.kernels and P.n.cl. */
static void save_program(cl_program p, cl_device_id dev, const char *prefix, int n)
{
    char *str = NULL;
    unsigned char *bin = NULL;
    size_t size = 0;
    FILE *f;

    if (clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        (str = malloc(size + 1)) &&
        clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, size, str, NULL) == CL_SUCCESS &&
        (f = open_output(prefix, n, "log"))) {
        fwrite(str, 1, strnlen(str, size), f);
        fclose(f);
    }
    free(str);
    /* one device per program in the filters */
    if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL) == CL_SUCCESS &&
        size && (bin = malloc(size)) &&
        clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) == CL_SUCCESS &&
        (f = open_output(prefix, n, "bin"))) {
        fwrite(bin, 1, size, f);
        fclose(f);
    }
    free(bin);
    if ((str = program_string(p, CL_PROGRAM_KERNEL_NAMES)) &&
        (f = open_output(prefix, n, "kernels"))) {
        for (char *c = str; *c; c++)
            fputc(*c == ';' ? '\n' : *c, f);
        fputc('\n', f);
        fclose(f);
    }
    free(str);
    if ((str = program_string(p, CL_PROGRAM_SOURCE)) &&
        (f = open_output(prefix, n, "cl"))) {
        fputs(str, f);
        fclose(f);
    }
    free(str);
}

cl_int clBuildProgram(cl_program p, cl_uint nb_devices, const cl_device_id *devices,
                      const char *options,
                      void (CL_CALLBACK *notify)(cl_program, void *), void *opaque)
{
    static cl_int (*f)(cl_program, cl_uint, const cl_device_id *, const char *,
                       void (CL_CALLBACK *)(cl_program, void *), void *);
    static int nb_built;
    const char *extra = getenv("CLTRACE_BUILD_OPTIONS");
    const char *prefix = getenv("CLTRACE_PROGRAMS");
    char opts[8192];
    cl_device_id dev = nb_devices ? devices[0] : NULL;
    uint64_t start = now_ns();
    cl_int ret;

    if (!f)
        f = next("clBuildProgram");
    if (extra) {
        snprintf(opts, sizeof(opts), "%s %s", options ? options : "", extra);
        options = opts;
    }
    ret = f(p, nb_devices, devices, options, notify, opaque);
    add_time(&builds, &build_ns, start);
    if (prefix) {
        if (!dev)
            clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof(dev), &dev, NULL);
        pthread_mutex_lock(&lock);
        save_program(p, dev, prefix, nb_built++);
        pthread_mutex_unlock(&lock);
    }
    return ret;
}

cl_context clCreateContext(const cl_context_properties *props, cl_uint nb_devices,
                           const cl_device_id *devices,
                           void (CL_CALLBACK *notify)(const char *, const void *,
                                                      size_t, void *),
                           void *opaque, cl_int *err)
{
    static cl_context (*f)(const cl_context_properties *, cl_uint, const cl_device_id *,
                           void (CL_CALLBACK *)(const char *, const void *, size_t, void *),
                           void *, cl_int *);
    uint64_t start = now_ns();
    cl_context ctx;

    if (!f)
        f = next("clCreateContext");
    ctx = f(props, nb_devices, devices, notify, opaque, err);
    add_time(&contexts, &context_ns, start);
    return ctx;
}

cl_mem clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size,
                      void *host, cl_int *err)
{
    static cl_mem (*f)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    cl_mem mem;

    if (!f)
        f = next("clCreateBuffer");
    mem = f(ctx, flags, size, host, err);
    track(mem, size, 0);
    return mem;
}

cl_mem clCreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
                     const cl_image_desc *desc, void *host, cl_int *err)
{
    static cl_mem (*f)(cl_context, cl_mem_flags, const cl_image_format *,
                       const cl_image_desc *, void *, cl_int *);
    cl_mem mem;

    if (!f)
        f = next("clCreateImage");
    mem = f(ctx, flags, fmt, desc, host, err);
    /* an image on a buffer shares that buffer's memory */
    track(mem, desc->buffer ? 0 : image_bytes(fmt, desc), 1);
    return mem;
}

cl_int clReleaseMemObject(cl_mem mem)
{
    static cl_int (*f)(cl_mem);
    cl_uint refs = 0;

    if (!f)
        f = next("clReleaseMemObject");
    if (clGetMemObjectInfo(mem, CL_MEM_REFERENCE_COUNT, sizeof(refs), &refs,
                           NULL) == CL_SUCCESS && refs == 1)
        untrack(mem);
    return f(mem);
}

static int larger_first(const void *a, const void *b)
{
    const Object *x = a, *y = b;

    if (x->size != y->size)
        return x->size < y->size ? 1 : -1;
    return x->image - y->image;
}

/* The objects alive at the peak, one line per kind and size. */
static void report_peak_objects(FILE *out)
{
    qsort(at_peak, nb_at_peak, sizeof(*at_peak), larger_first);
    for (int i = 0, n; i < nb_at_peak; i += n) {
        for (n = 1; i + n < nb_at_peak && at_peak[i + n].size == at_peak[i].size &&
                    at_peak[i + n].image == at_peak[i].image; n++)
            ;
        fprintf(out, "cltrace: peak_object %s bytes %zu count %d\n",
                at_peak[i].image ? "image" : "buffer", at_peak[i].size, n);
    }
}

__attribute__((destructor)) static void report(void)
{
    const char *path = getenv("CLTRACE_OUT");
    FILE *out = path ? fopen(path, "a") : NULL;

    /* kernels not followed by a clFinish are not counted: their context
     * may be gone by now */
    pthread_mutex_lock(&lock);
    fprintf(out ? out : stderr,
            "cltrace: kernels %" PRIu64 " kernel_ms %.3f mem_peak_bytes %zu "
            "mem_peak_objects %d\n", kernels, kernel_ns / 1e6, peak_bytes,
            peak_objects);
    for (int i = 0; i < nb_names; i++)
        fprintf(out ? out : stderr,
                "cltrace: kernel %s launches %" PRIu64 " total_ms %.3f mean_us %.2f\n",
                names[i].name, names[i].launches, names[i].ns / 1e6,
                names[i].launches ? names[i].ns / 1e3 / names[i].launches : 0.0);
    report_peak_objects(out ? out : stderr);
    if (env_flag("CLTRACE_SETUP"))
        fprintf(out ? out : stderr,
                "cltrace: setup contexts %" PRIu64 " context_ms %.3f builds %"
                PRIu64 " build_ms %.3f\n", contexts, context_ns / 1e6, builds,
                build_ns / 1e6);
    pthread_mutex_unlock(&lock);
    if (out)
        fclose(out);
}
