/*
 * clfault: an LD_PRELOAD library that makes the OpenCL device fail the way
 * real devices do, for tests/faults.sh (and tests/memory.sh, which makes it
 * report small devices). CLFAULT holds a comma-separated list:
 *   noimage    the device reports no image support
 *   noint64    the device reports no 64-bit integer atomics
 *   memory=N   the device reports N MiB of global memory
 *   localmem=N the device reports N KiB of local memory
 *   workgroup=N the device and its kernels report work-groups of at most N
 *              work-items, and a launch of larger work-groups fails
 *              (CL_INVALID_WORK_GROUP_SIZE), as it would there
 *   kernelgroup=N the same for the kernels alone (a kernel's registers
 *              can hold its work-groups below the device's largest)
 *   edgegroup=N the same for patch_search_edge alone (then the searches
 *              leave the grid's edges to the per-patch search)
 *   build      every clBuildProgram fails (CL_BUILD_PROGRAM_FAILURE)
 *   buffer=N   the Nth clCreateBuffer and every later one fail
 *              (CL_MEM_OBJECT_ALLOCATION_FAILURE)
 *   image=N    the same for clCreateImage
 *   enqueue=N  the Nth kernel launch or buffer fill and every later one
 *              fail (CL_MEM_OBJECT_ALLOCATION_FAILURE): the memory of a
 *              device that allocates its buffers at their first use, as
 *              NVIDIA's does, running out
 * Everything else goes through to the real OpenCL library.
 *
 *   cc -O2 -shared -fPIC -o clfault.so clfault.c -ldl
 *
 * This file is part of the GPU denoise filters for FFmpeg (LGPL 2.1 or later).
 */

#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "clfault: no %s in the OpenCL library\n", name);
        abort();
    }
    return f;
}

/* The value of fault 'name' in CLFAULT: -1 if absent, else N of name=N (1 if
 * no value). */
static long fault(const char *name)
{
    const char *s = getenv("CLFAULT");
    size_t len = strlen(name);

    while (s && *s) {
        if (!strncmp(s, name, len) && (s[len] == ',' || s[len] == '=' || !s[len]))
            return s[len] == '=' ? strtol(s + len + 1, NULL, 10) : 1;
        s = strchr(s, ',');
        if (s)
            s++;
    }
    return -1;
}

/* Remove every word of 'words' (space separated) from the extension list. */
static void strip_extensions(char *list, const char *const *words)
{
    for (; *words; words++) {
        char *p;
        while ((p = strstr(list, *words))) {
            size_t len = strlen(*words);
            memmove(p, p + len, strlen(p + len) + 1);
        }
    }
}

cl_int clGetDeviceInfo(cl_device_id dev, cl_device_info param, size_t size,
                       void *value, size_t *size_ret)
{
    static cl_int (*f)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    static const char *const int64[] = {
        "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics", NULL
    };
    cl_int ret;

    if (!f)
        f = next("clGetDeviceInfo");
    ret = f(dev, param, size, value, size_ret);
    if (ret != CL_SUCCESS || !value)
        return ret;
    if (param == CL_DEVICE_IMAGE_SUPPORT && fault("noimage") > 0 &&
        size >= sizeof(cl_bool))
        *(cl_bool *)value = CL_FALSE;
    if (param == CL_DEVICE_EXTENSIONS && fault("noint64") > 0)
        strip_extensions(value, int64);
    if (param == CL_DEVICE_GLOBAL_MEM_SIZE && fault("memory") > 0 &&
        size >= sizeof(cl_ulong))
        *(cl_ulong *)value = (cl_ulong)fault("memory") << 20;
    if (param == CL_DEVICE_LOCAL_MEM_SIZE && fault("localmem") > 0 &&
        size >= sizeof(cl_ulong))
        *(cl_ulong *)value = (cl_ulong)fault("localmem") << 10;
    if (param == CL_DEVICE_MAX_WORK_GROUP_SIZE && fault("workgroup") > 0 &&
        size >= sizeof(size_t) && *(size_t *)value > (size_t)fault("workgroup"))
        *(size_t *)value = fault("workgroup");
    return ret;
}

/* Whether kernel is patch_search_edge (edgegroup=N). */
static int is_edge_search(cl_kernel kernel)
{
    static cl_int (*f)(cl_kernel, cl_kernel_info, size_t, void *, size_t *);
    char name[32] = "";

    if (!f)
        f = next("clGetKernelInfo");
    return f(kernel, CL_KERNEL_FUNCTION_NAME, sizeof(name) - 1, name, NULL) ==
           CL_SUCCESS && !strcmp(name, "patch_search_edge");
}

/* The most work-items a work-group of kernel may have: edgegroup=N for
 * patch_search_edge, else kernelgroup=N, or workgroup=N; -1 for no limit. */
static long kernel_group(cl_kernel kernel)
{
    if (fault("edgegroup") > 0 && is_edge_search(kernel))
        return fault("edgegroup");
    return fault("kernelgroup") > 0 ? fault("kernelgroup") : fault("workgroup");
}

cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id dev,
                                cl_kernel_work_group_info param, size_t size,
                                void *value, size_t *size_ret)
{
    static cl_int (*f)(cl_kernel, cl_device_id, cl_kernel_work_group_info,
                       size_t, void *, size_t *);
    cl_int ret;
    long limit;

    if (!f)
        f = next("clGetKernelWorkGroupInfo");
    ret = f(kernel, dev, param, size, value, size_ret);
    if (ret != CL_SUCCESS || !value || param != CL_KERNEL_WORK_GROUP_SIZE ||
        size < sizeof(size_t))
        return ret;
    limit = kernel_group(kernel);
    if (limit > 0 && *(size_t *)value > (size_t)limit)
        *(size_t *)value = limit;
    return ret;
}

/* Whether a launch's work-group is larger than this kernel may run. */
static int too_large(cl_kernel kernel, cl_uint dims, const size_t *local)
{
    size_t items = 1;
    long limit;

    if (!local || (limit = kernel_group(kernel)) <= 0)
        return 0;
    for (cl_uint d = 0; d < dims; d++)
        items *= local[d];
    return items > (size_t)limit;
}

cl_int clBuildProgram(cl_program program, cl_uint nb_devices,
                      const cl_device_id *devices, const char *options,
                      void (CL_CALLBACK *notify)(cl_program, void *), void *data)
{
    static cl_int (*f)(cl_program, cl_uint, const cl_device_id *, const char *,
                       void (CL_CALLBACK *)(cl_program, void *), void *);

    if (!f)
        f = next("clBuildProgram");
    if (fault("build") > 0)
        return CL_BUILD_PROGRAM_FAILURE;
    return f(program, nb_devices, devices, options, notify, data);
}

/* Whether this allocation of a kind (counted in *count) is to fail. */
static int refuse(const char *kind, long *count, cl_int *err)
{
    long n = fault(kind);

    ++*count;
    if (n > 0 && *count >= n) {
        if (err)
            *err = CL_MEM_OBJECT_ALLOCATION_FAILURE;
        return 1;
    }
    return 0;
}

cl_mem clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size,
                      void *host, cl_int *err)
{
    static cl_mem (*f)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    static long count;

    if (!f)
        f = next("clCreateBuffer");
    if (refuse("buffer", &count, err))
        return NULL;
    return f(ctx, flags, size, host, err);
}

cl_mem clCreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
                     const cl_image_desc *desc, void *host, cl_int *err)
{
    static cl_mem (*f)(cl_context, cl_mem_flags, const cl_image_format *,
                       const cl_image_desc *, void *, cl_int *);
    static long count;

    if (!f)
        f = next("clCreateImage");
    if (refuse("image", &count, err))
        return NULL;
    return f(ctx, flags, fmt, desc, host, err);
}

/* Whether this command is to fail (enqueue=N), counting kernel launches and
 * buffer fills together. */
static int refuse_command(void)
{
    static long count;

    return refuse("enqueue", &count, NULL);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dims,
                              const size_t *offset, const size_t *global,
                              const size_t *local, cl_uint nb_wait,
                              const cl_event *wait, cl_event *event)
{
    static cl_int (*f)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                       const size_t *, const size_t *, cl_uint, const cl_event *,
                       cl_event *);

    if (!f)
        f = next("clEnqueueNDRangeKernel");
    if (refuse_command())
        return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    if (too_large(k, dims, local))
        return CL_INVALID_WORK_GROUP_SIZE;
    return f(q, k, dims, offset, global, local, nb_wait, wait, event);
}

cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void *pattern,
                           size_t pattern_size, size_t offset, size_t size,
                           cl_uint nb_wait, const cl_event *wait, cl_event *event)
{
    static cl_int (*f)(cl_command_queue, cl_mem, const void *, size_t, size_t,
                       size_t, cl_uint, const cl_event *, cl_event *);

    if (!f)
        f = next("clEnqueueFillBuffer");
    if (refuse_command())
        return CL_MEM_OBJECT_ALLOCATION_FAILURE;
    return f(q, buf, pattern, pattern_size, offset, size, nb_wait, wait, event);
}
