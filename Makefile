# Top-level Makefile of the GPU denoise filters for FFmpeg.
#
#   make deps      install the prerequisites (Debian-like systems, as root)
#   make           build ffmpeg (and ffprobe) with the filters
#   make install   install under the configured prefix
#   make check     build and run every test on the default OpenCL device
#   make demo      denoise a noisy natural photograph, print PSNR before/after
#   make bench     quality and speed of the filters and their peers, with a
#                  report and a plot in doc/ (QUICK=1: minutes on PoCL)
#   make bench-pipeline  where a whole command's time goes, per stage
#   make patches   our changes as a git format-patch series on top of the
#                  FFmpeg release, in build/patches (PATCHES_DIR=...)
#   make check-patches  the series applies with git am to the release and
#                  gives exactly the tree that the build and FATE use
#   make check-gpu  what needs a real GPU (OPENCL_DEVICE=P.D; FFMPEG=,
#                  TESTBIN= for a copied ffmpeg and test tools)
#   make check-gpu-scripts  the rest of make check's tests of ffmpeg, there
#   make check-ffmpeg-7.1, check-ffmpeg-5.1  the patches and FATE tests
#                  against a minimal build of another FFmpeg series
#                  (SERIES_CHECK=check: every test)
#
# 'make', 'make check' and 'make demo' run ./configure with its defaults when
# it has not been run yet.  OPENCL_DEVICE=P.D selects an OpenCL device; without
# it, where there are several, the tests take the one the filters take.

SHELL := /bin/bash
PYTHON ?= python3
OPENCL_DEVICE ?=

CONFIG_MK ?= config.mk
-include $(CONFIG_MK)

BUILDDIR ?= $(CURDIR)/build
FFMPEG_TREE ?= $(BUILDDIR)/ffmpeg-src
FFMPEG_OBJDIR ?= $(BUILDDIR)/ffmpeg
FFMPEG = $(FFMPEG_OBJDIR)/ffmpeg
FFPROBE = $(FFMPEG_OBJDIR)/ffprobe

# The tests' OpenCL device: OPENCL_DEVICE, else none named where ffmpeg's
# -init_hw_device opencl takes the only device there is, else (it refuses
# to choose among several) the filters' own default, the first GPU
# (tools/test-device.sh); found once in each make that uses it, at its
# first use, by then with ffmpeg built
ifeq ($(OPENCL_DEVICE),)
OPENCL_DEVICE = $(eval OPENCL_DEVICE := $(shell tools/test-device.sh $(FFMPEG)))$(OPENCL_DEVICE)
endif
, := ,
TESTBIN = $(BUILDDIR)/tests
# NO_BUILD=yes: the tests run the ffmpeg that FFMPEG names as it is, and
# nothing of FFmpeg's build is made (a copied ffmpeg on a GPU machine)
FFMPEG_BUILT = $(if $(filter yes,$(NO_BUILD)),,ffmpeg)
export POCL_CACHE_DIR ?= $(BUILDDIR)/pocl-cache
export PHOTO_CACHE ?= $(BUILDDIR)/photos

TOOLS_CFLAGS = -std=c99 -O2 -ffp-contract=off -Wall -Wextra
TEST_TOOLS = $(TESTBIN)/nlmeans_ref $(TESTBIN)/bm3d_ref $(TESTBIN)/vbm3d_ref $(TESTBIN)/awgn $(TESTBIN)/cmpimg
PNM_SRC = tests/tools/pnm.c tests/tools/pnm.h
REF_TOOL_SRC = tests/model/ref_tool.c tests/model/ref_tool.h $(PNM_SRC)

.PHONY: all deps configured ffmpeg overlay install check check-fate check-model \
        check-quality check-bands check-memory check-programs check-errors check-formats check-doc check-texi check-headers check-frames check-seams check-segments check-robustness check-robustness-long check-faults-long check-model-long check-longrun check-gpu check-gpu-scripts check-asan check-valgrind check-vbm3d-model check-kernels check-reference demo bench bench-pack bench-pipeline bench-nlmeans-speed bench-noise-methods bench-python-bm3d fate-refs patches check-patches clean distclean

all: ffmpeg

deps:
	tools/deps.sh --install

configured:
	@test -f $(CONFIG_MK) || { tools/deps.sh --ensure && ./configure; }

# A filter added since the last ./configure needs FFmpeg's configure again.
overlay: configured
	tools/overlay.sh $(CURDIR) $(FFMPEG_TREE)
	tools/register.sh $(FFMPEG_TREE)
	tools/apply-patches.sh $(FFMPEG_TREE)
	@tools/register.sh --check $(FFMPEG_OBJDIR) || ./configure $(CONFIGURE_ARGS)

ffmpeg: overlay
	$(MAKE) -C $(FFMPEG_OBJDIR) ffmpeg $(if $(filter yes,$(MINIMAL)),,ffprobe)

install: ffmpeg
	$(MAKE) -C $(FFMPEG_OBJDIR) install

$(TESTBIN)/nlmeans_ref: tests/model/nlmeans_ref.c tests/model/nlmeans_model.c tests/model/nlmeans_model.h tests/model/opponent.h $(REF_TOOL_SRC)
	@mkdir -p $(TESTBIN)
	$(CC) $(TOOLS_CFLAGS) -o $@ tests/model/nlmeans_ref.c tests/model/nlmeans_model.c tests/model/ref_tool.c tests/tools/pnm.c -lm

$(TESTBIN)/bm3d_ref: tests/model/bm3d_ref.c tests/model/bm3d_model.c tests/model/bm3d_model.h tests/model/bm3d_model_internal.h tests/model/opponent.h $(REF_TOOL_SRC)
	@mkdir -p $(TESTBIN)
	$(CC) $(TOOLS_CFLAGS) -o $@ tests/model/bm3d_ref.c tests/model/bm3d_model.c tests/model/ref_tool.c tests/tools/pnm.c -lm

VBM3D_REF_SRC = tests/model/vbm3d_ref.c tests/model/vbm3d_model.c tests/model/bm3d_model.c
$(TESTBIN)/vbm3d_ref: $(VBM3D_REF_SRC) tests/model/vbm3d_model.h tests/model/bm3d_model.h tests/model/bm3d_model_internal.h tests/model/opponent.h $(REF_TOOL_SRC)
	@mkdir -p $(TESTBIN)
	$(CC) $(TOOLS_CFLAGS) -o $@ $(VBM3D_REF_SRC) tests/model/ref_tool.c tests/tools/pnm.c -lm

$(TESTBIN)/awgn $(TESTBIN)/cmpimg $(TESTBIN)/noise_methods: $(TESTBIN)/%: tests/tools/%.c $(PNM_SRC)
	@mkdir -p $(TESTBIN)
	$(CC) $(TOOLS_CFLAGS) -o $@ $< tests/tools/pnm.c -lm

$(TESTBIN)/cltrace.so: tests/tools/cltrace.c
	@mkdir -p $(TESTBIN)
	$(CC) -O2 -Wall -Wextra -shared -fPIC -o $@ $< -ldl -lpthread

$(TESTBIN)/clfault.so: tests/tools/clfault.c
	@mkdir -p $(TESTBIN)
	$(CC) -O2 -Wall -Wextra -shared -fPIC -o $@ $< -ldl

# check-patches needs the pristine release: not in the sanitizer build,
# whose tree is a copy of the overlaid one; the quality tests run the host
# code of the other tests on larger pictures for many minutes, and are left
# out of the sanitizer build too, to keep .ci/run under its hour; so are
# the checks of the kernels and of the models that run no ffmpeg (the test
# tools are not built with the sanitizers: the same programs again)
CHECK_PATCHES ?= yes
CHECK_QUALITY ?= yes
CHECK_TOOLS ?= yes
# $(call timed,TARGET): make TARGET, then print the seconds it took (the CI
# log's account of where make check's time goes); '+' hands the sub-make
# the jobserver (-j), which a make it cannot see in the recipe would not get
timed = +@echo "make $(1)"; start=$$(date +%s); $(MAKE) --no-print-directory $(1) && \
    echo "make $(1): $$(($$(date +%s) - start)) s"
check: ffmpeg $(TEST_TOOLS)
	tools/deps.sh --check-opencl
	@echo "make check: on OpenCL device $(or $(OPENCL_DEVICE),(ffmpeg's default$(,) the only one))"
	$(if $(filter yes,$(CHECK_PATCHES)),$(call timed,check-patches))
	$(call timed,check-fate)
	$(call timed,check-errors)
	$(call timed,check-formats)
	$(call timed,check-doc)
	$(call timed,check-frames)
	$(call timed,check-seams)
	$(if $(filter yes,$(MINIMAL)),@echo "skip check-segments: a minimal build has no ffprobe$(,) FFV1$(,) Matroska or concat demuxer",$(call timed,check-segments))
	$(call timed,check-robustness)
	$(if $(filter yes,$(CHECK_TOOLS)),$(call timed,check-kernels),@echo "skip check-kernels (CHECK_TOOLS=$(CHECK_TOOLS))")
	$(if $(filter yes,$(CHECK_TOOLS)),$(call timed,check-kernels-oclgrind),@echo "skip check-kernels-oclgrind (CHECK_TOOLS=$(CHECK_TOOLS))")
	$(call timed,check-model)
	$(call timed,check-bands)
	$(call timed,check-memory)
	$(call timed,check-programs)
	$(if $(filter yes,$(CHECK_QUALITY)),$(call timed,check-quality),@echo "skip check-quality (CHECK_QUALITY=$(CHECK_QUALITY))")
	@echo "make check: all tests passed"

# The whole test suite with the host code (FFmpeg and our filters) built with
# AddressSanitizer and UndefinedBehaviorSanitizer, in its own build directory
# from the same FFmpeg source; the kernels run on the OpenCL device as
# usual. Any report aborts ffmpeg (a crash for the tests). Run it after
# 'make check' (as .ci/run does), whose runs fill PoCL's kernel cache with
# every kernel these tests launch: PoCL 3.1 leaks when it compiles one, and
# LeakSanitizer would report that as ours (tests/lsan.supp says why it is
# not suppressed).
ASAN_DIR = $(BUILDDIR)/asan
SANITIZE = -fsanitize=address,undefined -fno-omit-frame-pointer
check-asan: ffmpeg
	test -f $(ASAN_DIR)/config.mk || ./configure --minimal --builddir=$(ASAN_DIR) \
	    --config-mk=$(ASAN_DIR)/config.mk --ffmpeg-source=$(FFMPEG_TREE) \
	    --extra-cflags="$(SANITIZE)" --extra-ldflags="$(SANITIZE)"
	ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 \
	LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1 \
	    $(MAKE) CONFIG_MK=$(ASAN_DIR)/config.mk CHECK_PATCHES=no CHECK_QUALITY=no CHECK_TOOLS=no check

# Valgrind memcheck of ffmpeg over short streams through each filter and two
# failure paths: no memcheck error, no definitely lost block (leaks made on
# PoCL's own threads suppressed by tests/valgrind.supp), the same bytes as
# without valgrind. About 3.5 minutes on PoCL with 2 cores and PoCL's
# kernel cache empty (each case's kernels compiled under valgrind's
# lightest tool first, two at a time: tests/valgrind.sh).
check-valgrind: ffmpeg $(TESTBIN)/clfault.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLFAULT_SO=$(TESTBIN)/clfault.so tests/valgrind.sh

check-fate: ffmpeg
	$(MAKE) -C $(FFMPEG_OBJDIR) -k fate-gpu-denoise OPENCL_DEVICE=$(OPENCL_DEVICE)

# make check-ffmpeg-7.1, check-ffmpeg-5.1: the patch series and the FATE
# tests and the documentation's build against a minimal build of another
# FFmpeg release series
# (./configure --ffmpeg-series), in its own build directory
# (SERIES_BUILDDIR); the main build is not touched. SERIES_CHECK=check runs
# every test of 'make check' there instead.
SERIES_CHECK ?= check-patches check-fate check-texi check-headers
SERIES_BUILDDIR = $(BUILDDIR)/series-$*
check-ffmpeg-%:
	test -f $(SERIES_BUILDDIR)/config.mk || ./configure --minimal --ffmpeg-series=$* \
	    --builddir=$(SERIES_BUILDDIR) --config-mk=$(SERIES_BUILDDIR)/config.mk
	$(MAKE) CONFIG_MK=$(SERIES_BUILDDIR)/config.mk $(SERIES_CHECK)

# What needs a real GPU (doc/reliability.md), run there, for example on the
# H100: make check-gpu OPENCL_DEVICE=1.0 FFMPEG=path/ffmpeg TESTBIN=path/tools
# with an ffmpeg and test tools built here and copied over (nothing is
# built): check_kernels on the device (the kernels alone against their C
# references, in the device's own work-groups and warps, where a missing
# barrier can show that PoCL hides), the FATE tests' frame checksums
# (tests/fate_md5.py), the golden models (with 100 random cases),
# nv12/p010/p016, nv16/nv24/p216/p416 and hwmap (tests/semiplanar.sh), the
# formats with alpha, ya8 and ya16 among them (tests/formats.sh), the
# device memory and the programs' kernels, and GPU_CASES random robustness
# cases.
GPU_CASES ?= 300
GPU_JOBS ?= 8
check-gpu:
	$(TESTBIN)/check_kernels $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))
	$(PYTHON) tests/fate_md5.py --ffmpeg $(FFMPEG) $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/golden.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) --random 100 \
	    --work $(BUILDDIR)/golden-gpu $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/semiplanar.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/formats.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLTRACE_SO=$(TESTBIN)/cltrace.so \
	    CLFAULT_SO=$(TESTBIN)/clfault.so tests/memory.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLTRACE_SO=$(TESTBIN)/cltrace.so tests/programs.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) $(PYTHON) tests/robustness.py -v --cases $(GPU_CASES) --jobs $(GPU_JOBS)
	@echo "make check-gpu: all tests passed"

# The rest of make check's tests that run ffmpeg, for a GPU machine beside
# check-gpu, with the same variables (nothing of FFmpeg's is built): the
# errors and device faults, the documentation's examples and options, the
# frames (hwupload's and software), runtime commands, timeline, seams and
# bands; the demo of check-doc needs the photographs (PHOTO_CACHE, as
# check-gpu's golden models) and TESTBIN's awgn. With -j5 (and -O for
# whole logs) the five run side by side.
GPU_SCRIPT_TARGETS = check-errors check-doc check-frames check-seams check-bands
check-gpu-scripts: $(addprefix gpu-script-,$(GPU_SCRIPT_TARGETS))
	@echo "make check-gpu-scripts: all tests passed"

gpu-script-%:
	$(call timed,$* NO_BUILD=yes)

check-errors: $(FFMPEG_BUILT) $(TESTBIN)/clfault.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/errors.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLFAULT_SO=$(TESTBIN)/clfault.so tests/faults.sh
	FFMPEG=$(FFMPEG) tests/devices.sh

# Formats with alpha (passed through), packed four-channel formats and the
# full-range yuvj formats against the planar formats of the same samples,
# float formats against 16-bit ones (tests/formats.sh); those the device
# cannot carry are skipped.
check-formats: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/formats.sh

# The documentation: its examples run, its options are the filters', the
# README's `make demo` figures are what the demo prints (on PoCL), the texi
# builds as FFmpeg builds it, the headers compile alone
check-doc: $(FFMPEG_BUILT) $(TESTBIN)/awgn
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/doc_examples.sh doc/*.texi
	FFMPEG=$(FFMPEG) $(PYTHON) tests/options_doc.py
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/demo.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) --work $(BUILDDIR)/demo \
	    --sigma 20 --readme README.md $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/equivalences.sh
	$(if $(filter yes,$(NO_BUILD)),,$(MAKE) check-texi)
	$(if $(filter yes,$(NO_BUILD)),,$(MAKE) check-headers)

# Our headers compile alone, as FFmpeg's 'make checkheaders' builds them
check-headers: ffmpeg
	$(MAKE) -C $(FFMPEG_OBJDIR) $(patsubst $(FFMPEG_TREE)/%,%.o,$(wildcard $(FFMPEG_TREE)/libavfilter/denoise_*.h))

# The documentation as FFmpeg builds it (HTML and man page), from the tree
# our sections are registered in
check-texi: overlay
	tests/texi.sh $(FFMPEG_TREE)

# The video model against the image model, and on a short sequence (no
# FFmpeg needed)
check-vbm3d-model: $(TESTBIN)/vbm3d_ref $(TESTBIN)/bm3d_ref $(TESTBIN)/awgn $(TESTBIN)/cmpimg
	tests/model/vbm3d_selfcheck.sh $(TESTBIN) $(BUILDDIR)/vbm3d-selfcheck

check-frames: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/frames.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) $(PYTHON) tests/sidedata.py
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) $(PYTHON) tests/instances.py
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/swframes.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) FRAMES=software tests/frames.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) FRAMES=software $(PYTHON) tests/sidedata.py
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/commands.sh
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/timeline.sh

# The seam rule of doc/*_gpu.texi ("Segments"): segments cut at random
# points (seeded; SEED=... for another draw) and filtered with the context
# the rule gives equal one pass, frame by frame, for every filter and mode;
# one frame of context less changes the output (under a minute on PoCL)
# Frames processed a band of reference patches at a time (the bounded
# device memory of large frames): the same bytes whatever the band
check-bands: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/bands.sh

check-programs: $(FFMPEG_BUILT) $(TESTBIN)/cltrace.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLTRACE_SO=$(TESTBIN)/cltrace.so \
	    tests/programs.sh

check-memory: $(FFMPEG_BUILT) $(TESTBIN)/cltrace.so $(TESTBIN)/clfault.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLTRACE_SO=$(TESTBIN)/cltrace.so \
	    CLFAULT_SO=$(TESTBIN)/clfault.so tests/memory.sh

check-seams: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) $(if $(SEED),SEED=$(SEED)) tests/seams.sh

# tools/denoise-segments, the segment farm on GNU parallel, with two job
# slots on this host: the joined output equals one pass; a failed segment
# stops the run, the same command then resumes without redoing the
# segments done (tests/segments.sh; seconds on PoCL)
check-segments: ffmpeg
	FFMPEG=$(FFMPEG) FFPROBE=$(FFPROBE) OPENCL_DEVICE=$(OPENCL_DEVICE) tests/segments.sh

# 10,000 frames of 320x240 through each filter, resident memory and OpenCL
# memory objects asserted flat after warm-up (long on PoCL: see
# doc/reliability.md; N=... for fewer frames)
check-longrun: $(FFMPEG_BUILT) $(TESTBIN)/cltrace.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLTRACE_SO=$(TESTBIN)/cltrace.so tests/longrun.sh

# Random filters, sizes, formats, options and frame counts (seeded; the
# short mode of tests/robustness.py: its regression cases and 60 cases)
check-robustness: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) $(PYTHON) tests/robustness.py --short

# The 10,000-case run of doc/reliability.md (hours on PoCL; not in make
# check). Resumable: chunks already logged under build/robustness-long are
# not run again.
check-robustness-long: $(FFMPEG_BUILT)
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) PYTHON=$(PYTHON) tests/robustness_long.sh

# tests/faults.sh with the device out of memory at every command of ten
# configurations, in turn (a few thousand runs; doc/reliability.md)
check-faults-long: $(FFMPEG_BUILT) $(TESTBIN)/clfault.so
	FFMPEG=$(FFMPEG) OPENCL_DEVICE=$(OPENCL_DEVICE) CLFAULT_SO=$(TESTBIN)/clfault.so FAULTS_LONG=1 tests/faults.sh

# The fixed cases of tests/golden.py and 16 random ones (seed 1); the
# long run draws GOLDEN_RANDOM cases of GOLDEN_SEED (doc/reliability.md)
GOLDEN_RANDOM ?= 1000
GOLDEN_SEED ?= 2
check-model: $(FFMPEG_BUILT) $(TEST_TOOLS) $(if $(filter yes,$(CHECK_TOOLS)),check-vbm3d-model)
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/golden.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) --random 16 \
	    --work $(BUILDDIR)/golden $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))

check-model-long: $(FFMPEG_BUILT) $(TEST_TOOLS)
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/golden.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) --no-fixed \
	    --random $(GOLDEN_RANDOM) --seed $(GOLDEN_SEED) \
	    --work $(BUILDDIR)/golden-long $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))

check-quality: $(FFMPEG_BUILT) $(TEST_TOOLS)
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/quality/nlmeans_quality.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    --report $(BUILDDIR)/quality/nlmeans_quality.md
	$(PYTHON) tests/quality/nlmeans_color_quality.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    --report $(BUILDDIR)/quality/nlmeans_color_quality.md
	$(PYTHON) tests/quality/bm3d_quality.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    --report $(BUILDDIR)/quality/bm3d_quality.md
	$(PYTHON) tests/quality/video_quality.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    --report $(BUILDDIR)/quality/video_quality.md
	$(PYTHON) tests/quality/noise_quality.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    --report $(BUILDDIR)/quality/noise_quality.md

SIGMA ?= 20
demo: ffmpeg $(TEST_TOOLS)
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/demo.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) \
	    --work $(BUILDDIR)/demo --sigma $(SIGMA) \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE))

# One-command benchmark (tests/bench/bench.py, doc/benchmarks.md): quality
# and speed of the three filters against every peer on the default OpenCL
# device (OPENCL_DEVICE=P.D for another); writes doc/bench/NAME.{csv,md,png}
# and the report into doc/benchmarks.md. QUICK=1: small inputs and a short
# search (under 10 minutes on 2 cores with PoCL). The Python peers come from
# PyPI into a virtual environment under the build folder (BENCH_PEERS: the
# CPU reference bm3d by default; bm3d-cupy and bm3d-triton need a CUDA GPU).
BENCH_NAME ?= $(if $(QUICK),quick,full)
BENCH_PEERS ?= bm3d
BENCH_VENV = $(BUILDDIR)/venv-bench
BENCH_PYPI = bm3d==4.0.3 matplotlib==3.11.2
bench: ffmpeg $(TESTBIN)/awgn $(TESTBIN)/cltrace.so $(BENCH_VENV)/installed
	@mkdir -p $(PHOTO_CACHE)
	BENCH_COMMAND="make bench$(if $(QUICK), QUICK=1)" $(BENCH_VENV)/bin/python3 tests/bench/bench.py \
	    --ffmpeg $(FFMPEG) --tools $(TESTBIN) --work $(BUILDDIR)/bench-work \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) $(if $(QUICK),--quick) \
	    --python-peers $(BENCH_PEERS) --name $(BENCH_NAME) --out doc/bench \
	    --doc doc/benchmarks.md --doc-png bench/$(BENCH_NAME).png

$(BENCH_VENV)/installed:
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python3 -m pip install -q $(BENCH_PYPI)
	touch $@

# A folder to copy to a machine with no network, for tests/bench/run_copied.sh
# (doc/benchmarks.md): ffmpeg, the tools, the photographs and the wheels of
# the Python peers for PACK_PYTHON (the version of python3 there).
PACK_DIR ?= $(BUILDDIR)/bench-pack
PACK_PYTHON ?= 3.12
bench-pack: ffmpeg $(TESTBIN)/awgn $(TESTBIN)/cltrace.so
	tests/bench/pack.sh $(FFMPEG) $(TESTBIN) $(PHOTO_CACHE) $(PACK_DIR) $(PACK_PYTHON)

$(TESTBIN)/clbandwidth: tests/tools/clbandwidth.c
	@mkdir -p $(TESTBIN)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lOpenCL

# The kernels one at a time against C references and the golden model's
# stage functions (tests/tools/check_kernels.c); the constants of the host
# (libavfilter/denoise_opencl.h) are extracted into a header, so that the
# kernels are built with the host's values
CHECK_KERNELS_SRC = tests/tools/check_kernels.c tests/model/bm3d_model.c \
    tests/model/ref_tool.c tests/tools/pnm.c
$(TESTBIN)/check_kernels_defs.h: libavfilter/denoise_opencl.h
	@mkdir -p $(TESTBIN)
	grep -E '^#define (DENOISE_SEARCH_|DENOISE_NOISE_|DENOISE_IO_)' $< > $@

$(TESTBIN)/check_kernels: $(CHECK_KERNELS_SRC) $(TESTBIN)/check_kernels_defs.h \
    tests/model/bm3d_model.h tests/model/bm3d_model_internal.h tests/model/opponent.h $(REF_TOOL_SRC) \
    tests/model/vbm3d_model.c tests/model/vbm3d_model.h
	$(CC) $(TOOLS_CFLAGS) -I$(TESTBIN) -o $@ $(CHECK_KERNELS_SRC) -lOpenCL -lm

# Each kernel alone on random inputs and edge sizes (checkasm-like; seconds
# on PoCL; in make check; CHECK_KERNELS_ARGS=--bench also times them,
# --seed N, --test NAME)
check-kernels: $(TESTBIN)/check_kernels
	$(TESTBIN)/check_kernels --kernels kernels $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) $(CHECK_KERNELS_ARGS)

# check_kernels on Oclgrind, Debian's OpenCL device simulator, which checks
# every access of the kernels to global, local and private memory against
# its buffer's or array's bounds, and (--data-races) every pair of
# work-items that touch one address without a barrier between them: an
# error in its log fails the check, even where every result was right
# (tests/kernels_oclgrind.sh: about 3 minutes on 2 cores with every check,
# two at once, the searches on their first 4 cases, as all their cases take
# 6 to more than 18 minutes a search there, the edge search on 4 of its 16
# planes of stripes; OCLGRIND_TESTS: the checks to run, by name, e.g.
# "patch_search_tiled_8x4"; SEARCH_CASES=0: every case of a search)
check-kernels-oclgrind: $(TESTBIN)/check_kernels
	TESTBIN=$(TESTBIN) tests/kernels_oclgrind.sh $(OCLGRIND_TESTS)

# Where the time of a whole command goes, per frame (read or decode, upload
# and download, kernels, whole command to -f null and to a file), beside the
# bus's bandwidth (tests/bench/pipeline.sh, doc/benchmarks.md)
bench-pipeline: ffmpeg $(TESTBIN)/clbandwidth
	FFMPEG=$(FFMPEG) DEVICE=$(OPENCL_DEVICE) CLBANDWIDTH=$(TESTBIN)/clbandwidth \
	    OUT=$(BUILDDIR)/bench-pipeline $(if $(QUICK),QUICK=1) tests/bench/pipeline.sh

# Speed of nlmeans_gpu and nlmeans_opencl (see doc/benchmarks.md)
bench-nlmeans-speed: ffmpeg
	FFMPEG=$(FFMPEG) DEVICE=$(OPENCL_DEVICE) OUT=$(BUILDDIR)/bench tests/bench/nlmeans_speed.sh

# The noise estimation methods compared (tests/bench/noise_methods.py,
# doc/benchmarks.md): the DCT-block method the filters use and the PCA one
bench-noise-methods: ffmpeg $(TESTBIN)/awgn $(TESTBIN)/noise_methods
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/bench/noise_methods.py --ffmpeg $(FFMPEG) --tools $(TESTBIN) \
	    --work $(BUILDDIR)/noise-methods

# bm3d_gpu `ref` against the Python bm3d reference on the whole photographs
# (issue 13's margins; the reference from PyPI in a virtual environment
# under $(BUILDDIR), skipped where it cannot be installed; about 10
# minutes on two cores, so not in make check)
check-reference: $(FFMPEG_BUILT) $(TEST_TOOLS)
	@mkdir -p $(PHOTO_CACHE)
	$(PYTHON) tests/quality/bm3d_reference.py --ffmpeg $(FFMPEG) \
	    --tools $(TESTBIN) --work $(BUILDDIR)/quality --venv $(BUILDDIR)/venv-bm3d \
	    $(if $(OPENCL_DEVICE),--device $(OPENCL_DEVICE)) \
	    $(if $(REFERENCE_ARGS),$(REFERENCE_ARGS)) \
	    --report $(BUILDDIR)/quality/bm3d_reference.md

# The Python bm3d reference on the quality test's images (PyPI, installed in
# a virtual environment under $(BUILDDIR); see doc/benchmarks.md)
bench-python-bm3d:
	$(PYTHON) tests/bench/python_bm3d.py --work $(BUILDDIR)/quality --venv $(BUILDDIR)/venv-bm3d

# Regenerate the FATE references on the current device and copy them back.
fate-refs: ffmpeg
	rm -f $(FFMPEG_TREE)/tests/ref/fate/*-gpu-*
	-$(MAKE) -C $(FFMPEG_OBJDIR) -k fate-gpu-denoise GEN=1 OPENCL_DEVICE=$(OPENCL_DEVICE)
	mkdir -p tests/ref/fate
	cp $(FFMPEG_TREE)/tests/ref/fate/*-gpu-* tests/ref/fate/

# Our changes as a git format-patch series on top of the FFmpeg release, for
# sending upstream (tools/make-patches.sh): patches/*.patch, the shared code,
# one commit per filter, FATE tests, documentation. The release is the one
# ./configure unpacked (FFMPEG_SOURCE=DIR|TARBALL for another); SIGNOFF=yes
# signs each commit off with your git identity.
PATCHES_DIR ?= $(BUILDDIR)/patches
MAKE_PATCHES = BUILDDIR=$(BUILDDIR) FFMPEG_TREE=$(FFMPEG_TREE) tools/make-patches.sh \
    $(if $(FFMPEG_SOURCE),--ffmpeg-source=$(FFMPEG_SOURCE)) \
    $(if $(filter yes,$(SIGNOFF)),--signoff)
patches:
	$(MAKE_PATCHES) $(PATCHES_DIR)

# The series applies with git am --whitespace=error-all to a fresh copy of
# the release and gives, byte for byte, the tree that the build and FATE use
# (seconds, no network)
check-patches:
	$(MAKE_PATCHES) --check

clean:
	rm -rf $(TESTBIN) $(BUILDDIR)/quality
	-$(MAKE) -C $(FFMPEG_OBJDIR) clean

distclean:
	rm -rf $(BUILDDIR) config.mk
