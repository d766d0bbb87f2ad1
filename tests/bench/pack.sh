#!/bin/bash
#
# pack.sh FFMPEG TOOLS PHOTO_CACHE PACK PYTHON_VERSION: the folder that
# tests/bench/run_copied.sh needs on a machine with no network (make
# bench-pack): ffmpeg, awgn and cltrace.so, the scikit-image photographs
# (Debian's package, unpacked) and the wheels of the Python peers for that
# machine's python3 (PyPI; numpy, SciPy, CuPy, PyTorch and Triton are
# expected there already).

set -eu
FFMPEG=$1 TOOLS=$2 PHOTOS=$3 PACK=$4 PYVER=$5
HERE=$(cd "$(dirname "$0")" && pwd)

DATA=skimage-pkg/usr/lib/python3/dist-packages/skimage/data
mkdir -p "$PACK/tools" "$PACK/photos/$DATA" "$PACK/whl"
cp "$FFMPEG" "$PACK/ffmpeg"
cp "$TOOLS/awgn" "$TOOLS/cltrace.so" "$PACK/tools/"
# the photographs that the benchmark and the quality tests use, from Debian's
# python3-skimage (unpacked into PHOTO_CACHE if need be), laid out as
# skimage_data_dir() finds them: the pack stays under the 64 MiB that a
# device call carries
mkdir -p "$PHOTOS"
python3 - "$HERE" "$PHOTOS" "$PACK/photos/$DATA" <<'PY'
import os, shutil, sys
here, cache, dest = sys.argv[1:]
sys.path.insert(0, here)
import bench
from common import COLOUR_PHOTOS, PHOTOS
src = bench.skimage_data_dir(cache)
names = set(PHOTOS + COLOUR_PHOTOS + bench.PHOTOS_GRAY + bench.PHOTOS_COLOUR + bench.PHOTOS_VIDEO)
for name in sorted(names):
    shutil.copy(os.path.join(src, name + ".png"), dest)
PY
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$PACK/whl" \
    bm3d==4.0.3 bm4d==4.2.5 PyWavelets==1.9.0 bm3d-cupy==0.1.3 bm3d-triton==0.1.1
du -sh "$PACK"
