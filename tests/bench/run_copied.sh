#!/bin/bash
#
# Run the benchmark (tests/bench/bench.py) on a machine with no network,
# from a folder made here by `make bench-pack` and copied there with the
# repository (see doc/benchmarks.md):
#
#   PACK/ffmpeg              the ffmpeg built here (static FFmpeg libraries)
#   PACK/tools/awgn          the noise tool
#   PACK/tools/cltrace.so    the OpenCL timing and memory library
#   PACK/photos/             Debian's scikit-image photographs
#   PACK/whl/                wheels of the Python peers and their needs
#
#   tests/bench/run_copied.sh PACK DEVICE OUT NAME [bench.py options...]
#
# DEVICE is the OpenCL device P.D (`clinfo -l`; 1.0 where PoCL is platform
# 0); NAME names the outputs (OUT/NAME.csv, .md, .png, .json). The wheels are
# installed under /tmp/bench-site, for this run only; python3 must have
# numpy and, for the GPU peers, CuPy or PyTorch with Triton.

set -eu
PACK=$(cd "$1" && pwd) DEVICE=$2 OUT=$3 NAME=$4
shift 4
HERE=$(cd "$(dirname "$0")" && pwd)

if ls "$PACK"/whl/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/bench-site "$PACK"/whl/*.whl
    export PYTHONPATH=/tmp/bench-site${PYTHONPATH:+:$PYTHONPATH}
fi
export PHOTO_CACHE=$PACK/photos
mkdir -p "$OUT" /tmp/bench-work
export BENCH_COMMAND=${BENCH_COMMAND:-tests/bench/run_copied.sh PACK $DEVICE OUT $NAME $*}
exec python3 "$HERE/bench.py" --ffmpeg "$PACK/ffmpeg" --tools "$PACK/tools" \
    --work /tmp/bench-work --device "$DEVICE" --python python3 --out "$OUT" --name "$NAME" "$@"
