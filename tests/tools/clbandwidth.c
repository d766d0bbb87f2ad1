/*
 * clbandwidth: the bandwidth of copies between host memory and an OpenCL
 * device, as the stage benchmark (tests/bench/pipeline.sh) reports it
 * beside what a whole ffmpeg command achieves.
 *
 *   clbandwidth [-p PLATFORM] [-d DEVICE] [-w WIDTH] [-h HEIGHT] [-n REPEATS]
 *
 * For a frame of WIDTHxHEIGHT yuv420p (its luma plane as a one-channel
 * 8-bit image, its chroma planes as two more of a quarter of the size,
 * as FFmpeg's OpenCL hwcontext keeps them), and for a plain buffer of 64 MB,
 * prints the median over the repeats of GB/s for host to device and device
 * to host, from pageable memory (malloc) and from pinned memory
 * (CL_MEM_ALLOC_HOST_PTR, mapped). Each copy is timed from its enqueue to
 * its completion (clFinish), by the wall clock.
 *
 * This file is part of the GPU denoise filters' tests (LGPL 2.1 or later).
 */

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPEATS 200

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void check(cl_int err, const char *what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clbandwidth: %s failed: %d\n", what, err);
        exit(1);
    }
}

typedef struct Target {
    int is_image;
    int nb;                 /* images of a frame, or 1 buffer */
    cl_mem mem[3];
    size_t width[3], height[3];
    size_t bytes;
} Target;

/* One copy of the whole target from or to host memory at 'host'. */
static void copy(cl_command_queue q, const Target *t, unsigned char *host,
                 int to_device)
{
    size_t offset = 0;

    for (int i = 0; i < t->nb; i++) {
        size_t origin[3] = { 0, 0, 0 };
        size_t region[3] = { t->width[i], t->height[i], 1 };
        size_t size = t->width[i] * t->height[i];
        cl_int err;

        if (t->is_image && to_device)
            err = clEnqueueWriteImage(q, t->mem[i], CL_FALSE, origin, region,
                                      t->width[i], 0, host + offset, 0, NULL, NULL);
        else if (t->is_image)
            err = clEnqueueReadImage(q, t->mem[i], CL_FALSE, origin, region,
                                     t->width[i], 0, host + offset, 0, NULL, NULL);
        else if (to_device)
            err = clEnqueueWriteBuffer(q, t->mem[i], CL_FALSE, 0, size,
                                       host + offset, 0, NULL, NULL);
        else
            err = clEnqueueReadBuffer(q, t->mem[i], CL_FALSE, 0, size,
                                      host + offset, 0, NULL, NULL);
        check(err, "copy");
        offset += size;
    }
    check(clFinish(q), "clFinish");
}

static double measure(cl_command_queue q, const Target *t, unsigned char *host,
                      int to_device, int repeats)
{
    double gbs[MAX_REPEATS];

    copy(q, t, host, to_device);    /* warm-up */
    for (int r = 0; r < repeats; r++) {
        double t0 = now();
        copy(q, t, host, to_device);
        gbs[r] = t->bytes / (now() - t0) / 1e9;
    }
    return median(gbs, repeats);
}

static void report(cl_context ctx, cl_command_queue q, const Target *t,
                   const char *name, int repeats)
{
    cl_int err;
    unsigned char *pageable = malloc(t->bytes), *pinned;
    cl_mem pinned_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                       t->bytes, NULL, &err);

    check(err, "clCreateBuffer (pinned)");
    pinned = clEnqueueMapBuffer(q, pinned_buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE,
                                0, t->bytes, 0, NULL, NULL, &err);
    check(err, "clEnqueueMapBuffer");
    if (!pageable) {
        fprintf(stderr, "clbandwidth: out of memory\n");
        exit(1);
    }
    memset(pageable, 1, t->bytes);
    memset(pinned, 1, t->bytes);
    printf("| %s, %.1f MB | %.2f | %.2f | %.2f | %.2f |\n", name, t->bytes / 1e6,
           measure(q, t, pageable, 1, repeats), measure(q, t, pageable, 0, repeats),
           measure(q, t, pinned, 1, repeats), measure(q, t, pinned, 0, repeats));
    clEnqueueUnmapMemObject(q, pinned_buf, pinned, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(pinned_buf);
    free(pageable);
}

int main(int argc, char **argv)
{
    cl_uint platform_index = 0, device_index = 0, nb_platforms, nb_devices;
    cl_platform_id platforms[16];
    cl_device_id devices[16];
    size_t width = 1920, height = 1080;
    int repeats = 20, opt;
    char name[256] = "";
    cl_context ctx;
    cl_command_queue q;
    cl_int err;
    Target frame = { .is_image = 1, .nb = 3 }, buffer = { .is_image = 0, .nb = 1 };
    cl_image_format r8 = { CL_R, CL_UNORM_INT8 };

    while ((opt = getopt(argc, argv, "p:d:w:h:n:")) != -1) {
        switch (opt) {
        case 'p': platform_index = atoi(optarg); break;
        case 'd': device_index   = atoi(optarg); break;
        case 'w': width          = atoi(optarg); break;
        case 'h': height         = atoi(optarg); break;
        case 'n': repeats        = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-p platform] [-d device] [-w width] "
                    "[-h height] [-n repeats]\n", argv[0]);
            return 1;
        }
    }
    if (repeats < 1 || repeats > MAX_REPEATS || width < 2 || height < 2) {
        fprintf(stderr, "clbandwidth: bad arguments\n");
        return 1;
    }
    check(clGetPlatformIDs(16, platforms, &nb_platforms), "clGetPlatformIDs");
    if (platform_index >= nb_platforms) {
        fprintf(stderr, "clbandwidth: no platform %u\n", platform_index);
        return 1;
    }
    check(clGetDeviceIDs(platforms[platform_index], CL_DEVICE_TYPE_ALL, 16,
                         devices, &nb_devices), "clGetDeviceIDs");
    if (device_index >= nb_devices) {
        fprintf(stderr, "clbandwidth: no device %u\n", device_index);
        return 1;
    }
    clGetDeviceInfo(devices[device_index], CL_DEVICE_NAME, sizeof(name) - 1, name, NULL);
    ctx = clCreateContext(NULL, 1, &devices[device_index], NULL, NULL, &err);
    check(err, "clCreateContext");
    q = clCreateCommandQueue(ctx, devices[device_index], 0, &err);
    check(err, "clCreateCommandQueue");

    for (int i = 0; i < 3; i++) {
        frame.width[i]  = i ? width / 2 : width;
        frame.height[i] = i ? height / 2 : height;
        cl_image_desc desc = { .image_type   = CL_MEM_OBJECT_IMAGE2D,
                               .image_width  = frame.width[i],
                               .image_height = frame.height[i] };

        frame.mem[i] = clCreateImage(ctx, CL_MEM_READ_WRITE, &r8, &desc, NULL, &err);
        check(err, "clCreateImage2D");
        frame.bytes += frame.width[i] * frame.height[i];
    }
    buffer.width[0]  = 64 << 20;
    buffer.height[0] = 1;
    buffer.bytes     = buffer.width[0];
    buffer.mem[0] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, buffer.bytes, NULL, &err);
    check(err, "clCreateBuffer");

    printf("Copies on %s, GB/s (median of %d):\n\n", name, repeats);
    printf("| copy | pageable to device | pageable from device | pinned to device | pinned from device |\n");
    printf("|---|---|---|---|---|\n");
    {
        char what[96];
        snprintf(what, sizeof(what), "%zux%zu yuv420p frame (3 images)", width, height);
        report(ctx, q, &frame, what, repeats);
    }
    report(ctx, q, &buffer, "buffer", repeats);

    for (int i = 0; i < 3; i++)
        clReleaseMemObject(frame.mem[i]);
    clReleaseMemObject(buffer.mem[0]);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
