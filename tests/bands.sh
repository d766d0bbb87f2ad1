#!/bin/bash
#
# Bands: a frame is searched and filtered a band of reference patches at a
# time, so that its tables fit a fixed amount of device memory. Whatever the
# band's height, the output must be the bytes of one band over the whole
# frame (frame MD5s), for every filter, both search kernels, colour and
# temporal modes, and planes of several sizes (4:2:0 chroma); and the
# per-patch and work-group search kernels give the same bytes. The smallest
# band nlmeans_gpu accepts must be refused below it with a clear error.
#
# Environment: FFMPEG (the ffmpeg binary), OPENCL_DEVICE (optional P.D).

. "$(dirname "$0")/lib.sh"

# md5 OUT FORMAT SIZE FRAMES FILTER: frame MD5s of the filter on noisy testsrc2
md5() {
    local out=$1 fmt=$2 size=$3 n=$4 filter=$5
    rm -f "$out"
    ff -t 600 -y $DEV \
        -f lavfi -i "testsrc2=s=$size:r=5,trim=end_frame=$n,format=yuv444p,noise=alls=20:allf=t,format=$fmt" \
        -vf "$filter" -f framemd5 "$out" 2> "$TMP/err"
}

# same NAME FORMAT SIZE FRAMES FILTER BANDS...: each band against one band
same() {
    local name=$1 fmt=$2 size=$3 n=$4 filter=$5
    shift 5
    RUN=$((RUN + 1))
    if ! md5 "$TMP/whole" "$fmt" "$size" "$n" "$filter"; then
        fail "$name: $(tail -n 1 "$TMP/err")"
        return
    fi
    if [ "$(grep -vc '^#' "$TMP/whole")" != "$n" ]; then
        fail "$name: $(grep -vc '^#' "$TMP/whole") frames out of $n"
        return
    fi
    for band in "$@"; do
        if ! md5 "$TMP/band" "$fmt" "$size" "$n" "$filter:band=$band"; then
            fail "$name, band=$band: $(tail -n 1 "$TMP/err")"
            return
        fi
        if ! cmp -s <(grep -v '^#' "$TMP/whole") <(grep -v '^#' "$TMP/band"); then
            fail "$name: band=$band gives other bytes than one band"
            return
        fi
    done
    ok "$name: bands of $* rows, same bytes as one band"
}

# 100x76: nlmeans_gpu's default grid has 19 rows (step 4), p=5:step=1 72,
# bm3d_gpu's fast preset 19 and ref 24; the 4:2:0 chroma half as many.
S=100x76
same "nlmeans_gpu defaults" gray $S 2 "nlmeans_gpu=sigma=20" 3 4 7
same "nlmeans_gpu defaults, work-group search" gray $S 2 "nlmeans_gpu=sigma=20:search=tiled" 3 5
same "nlmeans_gpu p=5:step=1" gray $S 1 "nlmeans_gpu=sigma=20:p=5:step=1" 6 17
same "nlmeans_gpu p=5:step=1, work-group search" gray $S 1 "nlmeans_gpu=sigma=20:p=5:step=1:search=tiled" 6 20
same "nlmeans_gpu step=3 yuv420p" yuv420p $S 2 "nlmeans_gpu=sigma=20:step=3" 4 5
same "nlmeans_gpu joint colour" gbrp $S 2 "nlmeans_gpu=sigma=20:color=joint" 3 6
same "nlmeans_gpu opponent colour" gbrp $S 1 "nlmeans_gpu=sigma=20:color=opponent" 4
same "nlmeans_gpu temporal" gray $S 4 "nlmeans_gpu=sigma=20:past=1:future=1" 3 5
same "bm3d_gpu fast" gray $S 2 "bm3d_gpu=sigma=20" 1 2 5
same "bm3d_gpu fast, work-group search" gray $S 1 "bm3d_gpu=sigma=20:search=tiled" 1 3
same "bm3d_gpu ref" gray $S 1 "bm3d_gpu=sigma=20:preset=ref" 1 7
# (ref's grid has an edge row, 23, moved to the frame's edge: with band=23
# it is a band of its own, which patch_search_edge must still search)
same "bm3d_gpu ref, work-group search" gray $S 1 "bm3d_gpu=sigma=20:preset=ref:search=tiled" 2 17 23
same "bm3d_gpu yuv420p" yuv420p $S 1 "bm3d_gpu=sigma=20" 2 3
same "bm3d_gpu joint colour" gbrp $S 1 "bm3d_gpu=sigma=20" 1 4
same "vbm3d_gpu" gray $S 4 "vbm3d_gpu=sigma=20" 1 4
same "vbm3d_gpu yuv420p" yuv420p $S 3 "vbm3d_gpu=sigma=20" 2

# same_search NAME FORMAT SIZE FRAMES FILTER: the per-patch search
# (search=direct) and the work-group ones (search=tiled, which takes
# patch_search_squares where the samples are integers) give the same bytes,
# as the option's documentation says. With sigma=curve the samples are
# transformed and no longer integers: the squares kernel, which sums the
# distances in another order, must not be taken (it was, until 2026-11-24).
same_search() {
    local name=$1 fmt=$2 size=$3 n=$4 filter=$5
    RUN=$((RUN + 1))
    if ! md5 "$TMP/direct" "$fmt" "$size" "$n" "$filter:search=direct" ||
       ! md5 "$TMP/tiled" "$fmt" "$size" "$n" "$filter:search=tiled"; then
        fail "$name: $(tail -n 1 "$TMP/err")"
    elif [ "$(grep -vc '^#' "$TMP/direct")" != "$n" ]; then
        fail "$name: $(grep -vc '^#' "$TMP/direct") frames out of $n"
    elif ! cmp -s <(grep -v '^#' "$TMP/direct") <(grep -v '^#' "$TMP/tiled"); then
        fail "$name: search=tiled gives other bytes than search=direct"
    else
        ok "$name: search=direct and search=tiled, same bytes"
    fi
}
same_search "nlmeans_gpu" gray $S 2 "nlmeans_gpu=sigma=20"
same_search "nlmeans_gpu sigma=curve" gray 160x120 4 "nlmeans_gpu=sigma=curve"
# a window of 3 frames holds more candidates (3 x 21 x 21) than the 32-bit
# keys of 8x8 patches can number (1023): the keys must not be taken
same_search "nlmeans_gpu past=1:future=1" gray $S 3 "nlmeans_gpu=sigma=20:past=1:future=1"
# patches of 5 in windows of 4 frames: 4 x 21 x 21 = 1764 candidates, within
# the 2047 that their keys number (patch_search_rows_5x1_keys, chosen for
# every window since the largest fits; 5 frames do not: programs.sh)
same_search "nlmeans_gpu p=5:step=1:past=2:future=1" gray $S 4 \
    "nlmeans_gpu=sigma=20:p=5:step=1:past=2:future=1"
same_search "bm3d_gpu" gray $S 2 "bm3d_gpu=sigma=20"
same_search "bm3d_gpu sigma=curve" gray 160x120 4 "bm3d_gpu=sigma=curve"

# nlmeans_gpu aggregates a row of samples from one band: 8x8 patches on a
# step of 4 need 3 rows of patches per band.
RUN=$((RUN + 1))
if md5 "$TMP/small" gray $S 1 "nlmeans_gpu=sigma=20:band=2"; then
    fail "nlmeans_gpu band=2: accepted, although 3 rows are needed"
elif ! grep -q "band=2 is too small.*at least 3 rows" "$TMP/err"; then
    fail "nlmeans_gpu band=2: refused without the expected message: $(head -n 1 "$TMP/err")"
else
    ok "nlmeans_gpu band=2: refused, 3 rows needed"
fi

summary bands
