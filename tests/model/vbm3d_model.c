/*
 * Golden model of the vbm3d_gpu filter: video BM3D (Dabov et al. 2007) with
 * the predictive search, exactly as doc/vbm3d_gpu-algorithm.md specifies
 * it, written for reading rather than for speed.
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

/*
 * Only the search is the video model's own: the transforms, the filtering
 * of a group, the aggregation, the distance and the table rule are those of
 * the image model (bm3d_model_internal.h), whose groups may hold patches of
 * several frames. Build with -ffp-contract=off, as bm3d_model.c.
 *
 * The whole sequence is in memory. Step 1 runs for every frame in
 * increasing order, then step 2 likewise: the same results as the filter's
 * interleaved order (step 2 of t after step 1 of t + F), since step 1 does
 * not depend on step 2 and step 2 reads only complete basic estimates.
 * The accumulators of frame f exist from the first reference frame whose
 * groups may reach it (f - F) until f is complete.
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bm3d_model.h"
#include "bm3d_model_internal.h"
#include "opponent.h"
#include "vbm3d_model.h"

#define K           BM3D_PATCH
#define MAX_GROUP   BM3D_MAX_GROUP
#define MAX_Q       BM3D_MAX_GROUP

/*
 * Distance of the video search: the per-row sums of the 8 squares in
 * increasing column order, the sum of bm3d_patch_distance() with block 8.
 */
#define SEARCH_BLOCK 8

/* A sequence of nb_ch channels of frames that share their groups. */
typedef struct Sequence {
    int nb_ch;                      /* 1, or 3 (joint grouping) */
    int nb_frames, width, height;
    const float *const *noisy[3];   /* noisy[c][f] */
    float *const *basic[3];         /* basic[c][f], written by step 1 */
    float *const *dst[3];           /* dst[c][f], the output */
    float sigma[3];                 /* noise of each channel */
    int is_rgb;                     /* opponent channels of RGB */
} Sequence;

/* The per-frame tables of the search of one reference patch. */
typedef struct Search {
    const float *const *planes; /* v_f: the searched plane of frame f */
    int width, height;
    int q;                      /* entries per table */
    BM3DNeighbor *tables;       /* q entries for each frame of a window */
} Search;

static int imin(int a, int b)
{
    return a < b ? a : b;
}

static int imax(int a, int b)
{
    return a > b ? a : b;
}

void vbm3d_model_defaults(VBM3DModelParams *par)
{
    static const VBM3DModelStep steps[2] = {
        /* step w1 w2 group tau */
        { 6, 7, 5, 8, 2500.0f },
        { 4, 7, 5, 8,  400.0f },
    };

    par->sigma     = 10.0f;
    par->lambda    = 2.7f;
    par->mu2       = 1.0f;
    par->beta      = 2.0f;
    par->past      = 4;
    par->future    = 4;
    par->q         = 2;
    par->steps[0]  = steps[0];
    par->steps[1]  = steps[1];
    par->estim     = 0;
    par->transform = 1;
    par->haar      = 0;
    par->round_basic = 0;
}

/* The image model's parameters with the same values, window = w1. */
static BM3DModelParams image_params(const VBM3DModelParams *par)
{
    BM3DModelParams b;
    int s;

    b.sigma     = par->sigma;
    b.lambda    = par->lambda;
    b.mu2       = par->mu2;
    b.beta      = par->beta;
    b.estim     = par->estim;
    b.transform = par->transform;
    b.haar      = par->haar;
    for (s = 0; s < 2; s++) {
        b.steps[s].step   = par->steps[s].step;
        b.steps[s].window = par->steps[s].w1;
        b.steps[s].group  = par->steps[s].group;
        b.steps[s].tau    = par->steps[s].tau;
    }
    return b;
}

const char *vbm3d_model_check(const VBM3DModelParams *par,
                              int width, int height)
{
    BM3DModelParams b = image_params(par);
    int s;

    for (s = 0; s < 2; s++) {
        if (par->steps[s].w1 < 1 || par->steps[s].w1 > 199)
            return "w1 must be in 1..199";
        if (par->steps[s].w2 < 1 || par->steps[s].w2 > 199)
            return "w2 must be in 1..199";
    }
    if (par->q < 1 || par->q > MAX_Q)
        return "q must be in 1..32";
    if (par->past < 0 || par->past > VBM3D_MODEL_MAX_RADIUS ||
        par->future < 0 || par->future > VBM3D_MODEL_MAX_RADIUS)
        return "past and future must be in 0..32";
    if (par->transform != 0 && par->transform != 1)
        return "transform must be 0 (bior) or 1 (dct)";
    if (par->haar != 0 && par->haar != 1)
        return "haar must be 0 (hadamard) or 1 (haar)";
    return bm3d_model_check(&b, width, height);
}

/* First and last frame of the window of frame t. */
static int window_lo(const VBM3DModelParams *par, int t)
{
    return imax(0, t - par->past);
}

static int window_hi(const VBM3DModelParams *par, int t, int nb_frames)
{
    return imin(nb_frames - 1, t + par->future);
}

/* Every entry at distance +infinity (position: frame f's top-left). */
static void table_clear(BM3DNeighbor *table, int q, int f)
{
    int k;

    for (k = 0; k < q; k++) {
        table[k].dist  = INFINITY;
        table[k].pos   = 0;
        table[k].frame = f;
    }
}

/* Whether an entry of finite distance of the table is at 'pos'. */
static int in_table(const BM3DNeighbor *table, int q, size_t pos)
{
    int k;

    for (k = 0; k < q && table[k].dist < INFINITY; k++)
        if (table[k].pos == pos)
            return 1;
    return 0;
}

/*
 * Scan the valid candidates (x, y) of frame f with |x - cx| <= radius and
 * |y - cy| <= radius, y outer, x inner, increasing, into the table of
 * frame f: a candidate already in the table is skipped, the others are
 * inserted with the table rule at their distance from the reference patch
 * 'ref' (of frame t, pitch width).
 */
static void scan_window(const Search *s, const float *ref, int f,
                        int cx, int cy, int radius, BM3DNeighbor *table)
{
    const float *plane = s->planes[f];
    const int xs = imax(0, cx - radius);
    const int xe = imin(s->width - K, cx + radius);
    const int ys = imax(0, cy - radius);
    const int ye = imin(s->height - K, cy + radius);
    int x, y;

    for (y = ys; y <= ye; y++) {
        for (x = xs; x <= xe; x++) {
            BM3DNeighbor cand;

            cand.pos   = (size_t)y * s->width + x;
            cand.frame = f;
            if (in_table(table, s->q, cand.pos))
                continue;
            cand.dist = bm3d_patch_distance(ref, plane + cand.pos, s->width,
                                            SEARCH_BLOCK);
            bm3d_keep_best(table, s->q, cand);
        }
    }
}

/*
 * Predictive search in frame f: its table starts empty, and the window of
 * radius r2 around each centre, the entries of finite distance of the
 * neighbouring frame's table 'prev' in table order, is scanned in turn.
 */
static void search_predictive(const Search *s, const float *ref, int f,
                              int radius, const BM3DNeighbor *prev,
                              BM3DNeighbor *table)
{
    int k;

    table_clear(table, s->q, f);
    for (k = 0; k < s->q && prev[k].dist < INFINITY; k++)
        scan_window(s, ref, f, (int)(prev[k].pos % s->width),
                    (int)(prev[k].pos / s->width), radius, table);
}

/*
 * The group table of group entries: entry 0 the reference at distance 0,
 * then inserted with the table rule the entries of finite distance of,
 * in this order, frame t's table (entries 1 .. q - 1), the tables of
 * frames t + 1 .. hi, then those of t - 1 down to lo, each in table order.
 * tables[i] is the table of frame lo + i. Returns the group size.
 */
static int merge_tables(const BM3DNeighbor *tables, int q, int lo, int hi,
                        int t, const VBM3DModelStep *st, BM3DNeighbor *best)
{
    const BM3DNeighbor *own = tables + (size_t)(t - lo) * q;
    int f, k;

    table_clear(best, st->group, t);
    best[0] = own[0];
    for (k = 1; k < q && own[k].dist < INFINITY; k++)
        bm3d_keep_best(best, st->group, own[k]);
    for (f = t + 1; f <= hi; f++) {
        const BM3DNeighbor *table = tables + (size_t)(f - lo) * q;
        for (k = 0; k < q && table[k].dist < INFINITY; k++)
            bm3d_keep_best(best, st->group, table[k]);
    }
    for (f = t - 1; f >= lo; f--) {
        const BM3DNeighbor *table = tables + (size_t)(f - lo) * q;
        for (k = 0; k < q && table[k].dist < INFINITY; k++)
            bm3d_keep_best(best, st->group, table[k]);
    }
    return bm3d_group_size(best, st->group, st->tau);
}

/*
 * Predictive block matching for the reference patch at (x0, y0) of frame t,
 * whose window is lo .. hi, in the planes s->planes: fills
 * best[0 .. group - 1] and returns the group size n.
 */
static int match_group(Search *s, int t, int lo, int hi, int x0, int y0,
                       const VBM3DModelStep *st, BM3DNeighbor *best)
{
    const size_t ref_pos = (size_t)y0 * s->width + x0;
    const float *ref = s->planes[t] + ref_pos;
    BM3DNeighbor *own = s->tables + (size_t)(t - lo) * s->q;
    int f;

    /* frame t: the reference in entry 0 is in the table, so the scan
     * skips (x0, y0) */
    table_clear(own, s->q, t);
    own[0].dist = 0.0f;
    own[0].pos  = ref_pos;
    scan_window(s, ref, t, x0, y0, st->w1 / 2, own);

    for (f = t + 1; f <= hi; f++)
        search_predictive(s, ref, f, st->w2 / 2,
                          s->tables + (size_t)(f - 1 - lo) * s->q,
                          s->tables + (size_t)(f - lo) * s->q);
    for (f = t - 1; f >= lo; f--)
        search_predictive(s, ref, f, st->w2 / 2,
                          s->tables + (size_t)(f + 1 - lo) * s->q,
                          s->tables + (size_t)(f - lo) * s->q);

    return merge_tables(s->tables, s->q, lo, hi, t, st, best);
}

/* Give every channel's frames f0 .. f1 their (cleared) accumulators. */
static void open_accumulators(const Sequence *seq, int f0, int f1,
                              int64_t **const *num, int64_t **const *weights)
{
    const size_t plane_size = (size_t)seq->width * seq->height;
    int c, f;

    for (c = 0; c < seq->nb_ch; c++) {
        for (f = f0; f <= f1; f++) {
            if (num[c][f])
                continue;
            num[c][f] = bm3d_alloc_or_die(plane_size, sizeof(*num[c][f]));
            weights[c][f] = bm3d_alloc_or_die(plane_size,
                                              sizeof(*weights[c][f]));
        }
    }
}

/* Frame f is complete: out = num / den (bm3d_divide()), and its
 * accumulators go. */
static void close_frame(const BM3DTables *tables, const Sequence *seq, int f,
                        int64_t **const *num, int64_t **const *weights,
                        float *const *const *out)
{
    int c;

    for (c = 0; c < seq->nb_ch; c++) {
        bm3d_divide(tables, num[c][f], weights[c][f], seq->width,
                    seq->height, out[c][f]);
        free(num[c][f]);
        free(weights[c][f]);
        num[c][f] = weights[c][f] = NULL;
    }
}

/*
 * The basic estimate of frame t, out[c][t], rounded to integers within
 * 0 .. 255, as vbm3d_gpu's rings of bytes hold it; the opponent channels U
 * and V of RGB within -128 .. 127 (stored plus 128, bm3d_normalise_u8).
 */
static void round_basic(const Sequence *seq, float *const *const out[3], int t)
{
    const size_t size = (size_t)seq->width * seq->height;
    int c;

    if (!seq->is_rgb) {
        for (c = 0; c < seq->nb_ch; c++)
            bm3d_round_to_integers(out[c][t], size);
        return;
    }
    bm3d_round_to_integers(out[0][t], size);
    for (c = 1; c < 3; c++)
        bm3d_round_within(out[c][t], size, -128.0f);
}

/*
 * One step (s = 0: hard thresholding into seq->basic, s = 1: Wiener
 * filtering into seq->dst) over the whole sequence. For each reference
 * frame t in increasing order and each reference patch of its grid (row by
 * row), the group is searched in channel 0 (noisy frames for step 1,
 * basic estimates for step 2) over the window of t; every channel c is
 * filtered at those positions with its own sigma and aggregated into the
 * accumulators of the frames f >= t. Frame t is then complete.
 */
static void run_step(const BM3DTables *tables, int s, const Sequence *seq,
                     const VBM3DModelParams *par, Search *search,
                     float *stack_u, float *stack_b)
{
    const VBM3DModelStep *st = &par->steps[s];
    const int nx = bm3d_grid_count(seq->width,  st->step);
    const int ny = bm3d_grid_count(seq->height, st->step);
    float *const *const *out = s == 0 ? seq->basic : seq->dst;
    int64_t **num[3], **weights[3];
    BM3DNeighbor best[MAX_GROUP];
    float thr[3], wiener_sigma[3];
    int t, gx, gy, c;

    search->planes = s == 0 ? seq->noisy[0]
                            : (const float *const *)seq->basic[0];
    for (c = 0; c < seq->nb_ch; c++) {
        thr[c] = par->lambda * seq->sigma[c];
        wiener_sigma[c] = bm3d_wiener_sigma(seq->sigma[c], par->mu2);
        num[c] = bm3d_alloc_or_die(seq->nb_frames, sizeof(*num[c]));
        weights[c] = bm3d_alloc_or_die(seq->nb_frames, sizeof(*weights[c]));
    }

    for (t = 0; t < seq->nb_frames; t++) {
        const int lo = window_lo(par, t);
        const int hi = window_hi(par, t, seq->nb_frames);

        open_accumulators(seq, t, hi, num, weights);
        for (gy = 0; gy < ny; gy++) {
            for (gx = 0; gx < nx; gx++) {
                const int x0 = bm3d_grid_pos(gx, st->step, seq->width);
                const int y0 = bm3d_grid_pos(gy, st->step, seq->height);
                const int n  = match_group(search, t, lo, hi, x0, y0, st, best);

                for (c = 0; c < seq->nb_ch; c++) {
                    if (s == 0)
                        bm3d_hard_threshold_group(tables, seq->noisy[c],
                                                  seq->width, best, n, t,
                                                  thr[c], stack_u,
                                                  num[c], weights[c]);
                    else
                        bm3d_wiener_group(tables, seq->noisy[c],
                                          (const float *const *)seq->basic[c],
                                          seq->width, best, n, t,
                                          wiener_sigma[c], stack_u, stack_b,
                                          num[c], weights[c]);
                }
            }
        }
        /* the groups that reach frame t come from frames t - F .. t */
        close_frame(tables, seq, t, num, weights, out);
        if (s == 0 && par->round_basic)
            round_basic(seq, out, t);
    }

    for (c = 0; c < seq->nb_ch; c++) {
        free(num[c]);
        free(weights[c]);
    }
}

/* Both steps (or step 1 only when par->estim == 1) over the sequence. */
static void denoise_sequence(const Sequence *seq, const VBM3DModelParams *par)
{
    const char *err = vbm3d_model_check(par, seq->width, seq->height);
    const size_t plane_size = (size_t)seq->width * seq->height;
    const int window = par->past + par->future + 1;
    BM3DTables tables[2];
    Search search;
    float *stack_u, *stack_b;
    int c, f;

    if (err || seq->nb_frames < 1) {
        fprintf(stderr, "vbm3d_model: %dx%d, %d frames: %s\n", seq->width,
                seq->height, seq->nb_frames, err ? err : "no frames");
        exit(1);
    }
    bm3d_init_tables(&tables[0], par->beta, par->transform == 0, par->haar);
    bm3d_init_tables(&tables[1], par->beta, 0, par->haar);
    stack_u = bm3d_alloc_or_die(MAX_GROUP * BM3D_PATCH2, sizeof(*stack_u));
    stack_b = bm3d_alloc_or_die(MAX_GROUP * BM3D_PATCH2, sizeof(*stack_b));
    search.width  = seq->width;
    search.height = seq->height;
    search.q      = par->q;
    search.tables = bm3d_alloc_or_die((size_t)window * par->q,
                                      sizeof(*search.tables));

    run_step(&tables[0], 0, seq, par, &search, stack_u, stack_b);
    if (par->estim == 1) {
        for (c = 0; c < seq->nb_ch; c++)
            for (f = 0; f < seq->nb_frames; f++)
                memcpy(seq->dst[c][f], seq->basic[c][f],
                       plane_size * sizeof(*seq->dst[c][f]));
    } else {
        run_step(&tables[1], 1, seq, par, &search, stack_u, stack_b);
    }

    free(stack_u);
    free(stack_b);
    free(search.tables);
}

/* nb planes of 'size' floats. */
static float **alloc_planes(int nb, size_t size)
{
    float **planes = bm3d_alloc_or_die(nb, sizeof(*planes));
    int f;

    for (f = 0; f < nb; f++)
        planes[f] = bm3d_alloc_or_die(size, sizeof(*planes[f]));
    return planes;
}

static void free_planes(float **planes, int nb)
{
    int f;

    if (!planes)
        return;
    for (f = 0; f < nb; f++)
        free(planes[f]);
    free(planes);
}

void vbm3d_model_planes(float *const *noisy, int nb_frames,
                        int width, int height, const VBM3DModelParams *par,
                        float *const *basic, float *const *dst)
{
    float **own_basic = NULL;
    Sequence seq = { 0 };

    if (!basic) {
        own_basic = alloc_planes(nb_frames, (size_t)width * height);
        basic = own_basic;
    }
    seq.nb_ch     = 1;
    seq.nb_frames = nb_frames;
    seq.width     = width;
    seq.height    = height;
    seq.noisy[0]  = (const float *const *)noisy;
    seq.basic[0]  = basic;
    seq.dst[0]    = dst;
    seq.sigma[0]  = par->sigma;

    denoise_sequence(&seq, par);

    free_planes(own_basic, nb_frames);
}

/*
 * Frame f of three sequences of planes, in[c][f], converted into out[c][f]
 * by 'convert' (bm3d_planes_to_opponent or bm3d_planes_to_rgb).
 */
static void convert_frames(void (*convert)(const float *const *, size_t,
                                           float *const *),
                           float *const *const *in, int nb_frames,
                           size_t size, float *const *const *out)
{
    int f, c;

    for (f = 0; f < nb_frames; f++) {
        const float *src[3];
        float *dst[3];

        for (c = 0; c < 3; c++) {
            src[c] = in[c][f];
            dst[c] = out[c][f];
        }
        convert(src, size, dst);
    }
}

void vbm3d_model_color(float **const noisy[3], int nb_frames,
                       int width, int height, int is_rgb,
                       const VBM3DModelParams *par,
                       float **const basic[3], float **const dst[3])
{
    const size_t plane_size = (size_t)width * height;
    float **opp[3] = { NULL, NULL, NULL }, **fin[3] = { NULL, NULL, NULL };
    float **bas[3];
    Sequence seq = { 0 };
    int c, f;

    seq.nb_ch     = 3;
    seq.nb_frames = nb_frames;
    seq.width     = width;
    seq.height    = height;
    seq.is_rgb    = is_rgb;
    for (c = 0; c < 3; c++) {
        bas[c] = alloc_planes(nb_frames, plane_size);
        if (is_rgb) {
            opp[c] = alloc_planes(nb_frames, plane_size);
            fin[c] = alloc_planes(nb_frames, plane_size);
        }
        seq.noisy[c] = (const float *const *)(is_rgb ? opp[c] : noisy[c]);
        seq.basic[c] = bas[c];
        seq.dst[c]   = is_rgb ? fin[c] : dst[c];
        seq.sigma[c] = is_rgb ? opponent_sigma(par->sigma, c)
                              : par->sigma;
    }
    if (is_rgb)
        convert_frames(bm3d_planes_to_opponent, (float *const *const *)noisy,
                       nb_frames, plane_size, (float *const *const *)opp);

    denoise_sequence(&seq, par);

    if (is_rgb) {
        convert_frames(bm3d_planes_to_rgb, (float *const *const *)fin,
                       nb_frames, plane_size, (float *const *const *)dst);
        if (basic)
            convert_frames(bm3d_planes_to_rgb, (float *const *const *)bas,
                           nb_frames, plane_size,
                           (float *const *const *)basic);
    } else if (basic) {
        for (c = 0; c < 3; c++)
            for (f = 0; f < nb_frames; f++)
                memcpy(basic[c][f], bas[c][f], plane_size * sizeof(*bas[c][f]));
    }

    for (c = 0; c < 3; c++) {
        free_planes(bas[c], nb_frames);
        free_planes(opp[c], nb_frames);
        free_planes(fin[c], nb_frames);
    }
}
