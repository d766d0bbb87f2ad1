# FATE tests of the OpenCL denoisers (nlmeans_gpu, bm3d_gpu, vbm3d_gpu).
#
# They need an OpenCL device, so like the other hardware tests they are not
# part of 'make fate' but of 'make fate-hw'; 'make fate-gpu-denoise' runs
# them alone. OPENCL_DEVICE=P.D picks a device, as -init_hw_device
# opencl=ocl:P.D does.
#
# Each test denoises three frames of testsrc2 with seeded noise (eight for
# the temporal filters). bm3d_gpu and vbm3d_gpu are bit-exact on every
# device (fixed-point sums, correctly rounded divisions): their output is
# compared with the MD5 checksums of its frames. nlmeans_gpu's raw output is
# compared with a reference made on PoCL: at most one step of difference per
# sample (two for 16-bit samples), since float rounding of exp() may differ
# by a unit in the last place between OpenCL devices.

GPU_DENOISE_DEVICE = -init_hw_device opencl=ocl$(if $(OPENCL_DEVICE),:$(OPENCL_DEVICE)) -filter_hw_device ocl

# $(1): size as W:H (up to 96:72), $(2): 8-bit format the noise is added
# in, $(3): tested format. The input must be the same bytes on every FFmpeg
# release the tests run on (8.1, 7.1, 5.1), but swscale's YUV to RGB and
# limited-range luma to gray16le conversions differ between them: testsrc2
# draws gbrp itself, and gray16le comes by way of gray. $(4) (optional): a
# filter applied to the noisy 8-bit picture.
GPU_DENOISE_COMMA := ,
GPU_DENOISE_SRC = testsrc2=s=96x72:r=5:d=0.6,$(if $(filter gbrp,$(2)),,scale$(GPU_DENOISE_COMMA))format=$(2),noise=alls=25:allf=t,$(if $(4),$(4)$(GPU_DENOISE_COMMA))crop=$(1):0:0,$(if $(filter gray16le,$(3)),scale$(GPU_DENOISE_COMMA)format=gray$(GPU_DENOISE_COMMA))scale,format=$(3)

GPU_DENOISE_DEPS = OPENCL TESTSRC2_FILTER SCALE_FILTER FORMAT_FILTER NOISE_FILTER \
                   HWUPLOAD_FILTER HWDOWNLOAD_FILTER RAWVIDEO_ENCODER         \
                   RAWVIDEO_MUXER PIPE_PROTOCOL

# $(1): test name, $(2): filter, $(3): size, $(4): 8-bit format,
# $(5): tested format, $(6): filter options (':'-separated), $(7): bytes per sample
define GPU_DENOISE_TEST
FATE_GPU_DENOISE-$$(call ALLYES, $$(GPU_DENOISE_DEPS) $(shell echo $(2) | tr a-z A-Z)_FILTER) += fate-$(1)
fate-$(1): CMD = ffmpeg $$(GPU_DENOISE_DEVICE) -lavfi "$$(call GPU_DENOISE_SRC,$(3),$(4),$(5)),hwupload,$(2)=$(6),hwdownload,format=$(5)" -frames:v 3 -f rawvideo -
fate-$(1): CMP = oneoff
fate-$(1): CMP_UNIT = $(7)
fate-$(1): FUZZ = $(7)
fate-$(1): REF = $$(SRC_PATH)/tests/ref/fate/$(1)
endef

# $(1): test name, $(2): filter, $(3): size, $(4): 8-bit format,
# $(5): tested format, $(6): filter options (':'-separated), $(7): frames
# (3, or 8 from a longer source), $(8) (optional): a filter applied to the
# noisy 8-bit picture (lutyuv only: geq's p() differs in 5.1)
define GPU_DENOISE_MD5_TEST
FATE_GPU_DENOISE-$$(call ALLYES, $$(GPU_DENOISE_DEPS) FRAMEMD5_MUXER $(shell echo $(2) | tr a-z A-Z)_FILTER $(if $(8),LUTYUV_FILTER)) += fate-$(1)
fate-$(1): CMD = framemd5 $$(GPU_DENOISE_DEVICE) -lavfi "$$(if $$(filter 8,$(7)),$$(subst d=0.6,d=1.6,$$(call GPU_DENOISE_SRC,$(3),$(4),$(5),$(8))),$$(call GPU_DENOISE_SRC,$(3),$(4),$(5),$(8))),hwupload,$(2)=$(6),hwdownload,format=$(5)" -frames:v $(7)
endef

# nlmeans_gpu: one test per format family
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gray,nlmeans_gpu,64:48,yuv444p,gray,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gray16,nlmeans_gpu,64:48,yuv444p,gray16le,sigma=20,2))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv420p,nlmeans_gpu,64:48,yuv420p,yuv420p,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv422p,nlmeans_gpu,64:48,yuv422p,yuv422p,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p,nlmeans_gpu,64:48,yuv444p,yuv444p,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv420p16,nlmeans_gpu,64:48,yuv420p,yuv420p16le,sigma=20,2))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p16,nlmeans_gpu,64:48,yuv444p,yuv444p16le,sigma=20,2))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp,nlmeans_gpu,64:48,gbrp,gbrp,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp16,nlmeans_gpu,64:48,gbrp,gbrp16le,sigma=20,2))
# packed RGBA and alpha: the colour as gbrp's, alpha unchanged (tests/formats.sh)
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-rgba,nlmeans_gpu,64:48,gbrp,rgba,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p10msb,nlmeans_gpu,64:48,yuv444p,yuv444p10msble,sigma=20,2))
# one step of a 10-bit sample is 64 in its 16-bit container
fate-nlmeans-gpu-yuv444p10msb: FUZZ = 64

# odd and tiny sizes
# a 1x1 frame has a single 1x1 patch: the output must be the input, exactly
FATE_GPU_DENOISE-$(call ALLYES, $(GPU_DENOISE_DEPS) NLMEANS_GPU_FILTER FRAMECRC_MUXER) += fate-nlmeans-gpu-1x1
fate-nlmeans-gpu-1x1: CMD = framecrc $(GPU_DENOISE_DEVICE) -lavfi "$(call GPU_DENOISE_SRC,1:1,yuv444p,gray),hwupload,nlmeans_gpu=sigma=20,hwdownload,format=gray" -frames:v 3
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-7x5,nlmeans_gpu,7:5,yuv444p,gray,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-17x9,nlmeans_gpu,17:9,yuv444p,yuv444p,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-33x65,nlmeans_gpu,33:65,yuv444p,gray,sigma=20,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-34x66-yuv420p,nlmeans_gpu,34:66,yuv420p,yuv420p,sigma=20,1))

# extreme option values
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-p1,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:p=1:step=1,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-p32,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:p=32:step=32,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-p5s1,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:p=5:step=1,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-r1,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:r=1,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-r99,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:r=99,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-n1,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:n=1,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-n32,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:n=32,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-sigma0,nlmeans_gpu,33:65,yuv444p,gray,sigma=0,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-sigma255,nlmeans_gpu,33:65,yuv444p,gray,sigma=255,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-h255,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:h=255,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-flat0,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:flat=0,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-flat10,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:flat=10,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-planes0,nlmeans_gpu,34:66,yuv420p,yuv420p,sigma=20:planes=0,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-planes1,nlmeans_gpu,34:66,yuv420p,yuv420p,sigma=20:planes=1,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-csigma,nlmeans_gpu,34:66,yuv420p,yuv420p,sigma=20:csigma=5,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-chroma,nlmeans_gpu,34:66,yuv444p,yuv444p,sigma=20:pc=4:rc=5,1))

# the work-group search kernel (the default on GPUs), with odd sizes where
# the last row and column of patches fall back to the per-patch kernel
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-tiled,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:search=tiled,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-tiled-p5s1,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:p=5:step=1:search=tiled,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-tiled-yuv420p,nlmeans_gpu,96:72,yuv420p,yuv420p,sigma=20:search=tiled,1))

# colour: the 4:4:4 and RGB tests above use the default, color=auto
# (opponent colours for RGB, planes for YUV); per plane, joint (one search
# on the three channels), csigma, joint with the work-group search
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp-planes,nlmeans_gpu,64:48,gbrp,gbrp,sigma=20:color=planes,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp-joint,nlmeans_gpu,64:48,gbrp,gbrp,sigma=20:color=joint,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p-joint,nlmeans_gpu,64:48,yuv444p,yuv444p,sigma=20:color=joint,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p-planes,nlmeans_gpu,64:48,yuv444p,yuv444p,sigma=20:color=planes,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-csigma-444,nlmeans_gpu,64:48,yuv444p,yuv444p,sigma=20:csigma=5,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-tiled-gbrp,nlmeans_gpu,33:65,gbrp,gbrp,sigma=20:search=tiled:color=joint,1))
# opponent colours, each filtered on its own (on YUV frames the same as planes)
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp-opponent,nlmeans_gpu,64:48,gbrp,gbrp,sigma=20:color=opponent,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-gbrp16-opponent,nlmeans_gpu,64:48,gbrp,gbrp16le,sigma=20:color=opponent,2))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-yuv444p-opponent,nlmeans_gpu,64:48,yuv444p,yuv444p,sigma=20:color=opponent,1))
fate-nlmeans-gpu-yuv444p-opponent: REF = $(SRC_PATH)/tests/ref/fate/nlmeans-gpu-yuv444p-planes

# the bisquare weighting kernel
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-bisquare,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:kernel=bisquare,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-bisquare-gbrp,nlmeans_gpu,64:48,gbrp,gbrp,sigma=20:kernel=bisquare:color=joint,1))

# timeline and runtime commands
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-enable,nlmeans_gpu,33:65,yuv444p,gray,sigma=20:enable=eq(n\,1),1))
FATE_GPU_DENOISE-$(call ALLYES, $(GPU_DENOISE_DEPS) SENDCMD_FILTER NLMEANS_GPU_FILTER) += fate-nlmeans-gpu-sendcmd
fate-nlmeans-gpu-sendcmd: tests/data/filtergraphs/nlmeans-gpu-sendcmd
fate-nlmeans-gpu-sendcmd: CMD = ffmpeg $(GPU_DENOISE_DEVICE) -/filter_complex $(TARGET_PATH)/tests/data/filtergraphs/nlmeans-gpu-sendcmd -frames:v 3 -f rawvideo -
fate-nlmeans-gpu-sendcmd: CMP = oneoff
fate-nlmeans-gpu-sendcmd: CMP_UNIT = 1
fate-nlmeans-gpu-sendcmd: FUZZ = 1
fate-nlmeans-gpu-sendcmd: REF = $(SRC_PATH)/tests/ref/fate/nlmeans-gpu-sendcmd

# bm3d_gpu
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-gray,bm3d_gpu,64:48,yuv444p,gray,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-gray16,bm3d_gpu,64:48,yuv444p,gray16le,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-yuv420p,bm3d_gpu,64:48,yuv420p,yuv420p,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-yuv444p16,bm3d_gpu,64:48,yuv444p,yuv444p16le,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-gbrp,bm3d_gpu,64:48,gbrp,gbrp,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-gbrp-planes,bm3d_gpu,64:48,gbrp,gbrp,sigma=20:color=planes,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-bgra,bm3d_gpu,64:48,gbrp,bgra,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-yuva420p,bm3d_gpu,64:48,yuv420p,yuva420p,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-yuv444p,bm3d_gpu,64:48,yuv444p,yuv444p,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-8x8,bm3d_gpu,8:8,yuv444p,gray,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-17x9,bm3d_gpu,17:9,yuv444p,gray,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-33x65,bm3d_gpu,33:65,yuv444p,gray,sigma=20,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-ref,bm3d_gpu,33:65,yuv444p,gray,sigma=20:preset=ref,3))
# the 32-bit fallback of the accumulation must give the same bytes
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-int32,bm3d_gpu,33:65,yuv444p,gray,sigma=20:preset=ref:atomics=int32,3))
fate-bm3d-gpu-int32: REF = $(SRC_PATH)/tests/ref/fate/bm3d-gpu-ref
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-basic,bm3d_gpu,33:65,yuv444p,gray,sigma=20:estim=basic,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-bior,bm3d_gpu,64:48,yuv444p,gray,sigma=20:transform=bior,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-ref-hadamard,bm3d_gpu,33:65,yuv444p,gray,sigma=20:preset=ref:transform1d=hadamard,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-ref-dct,bm3d_gpu,33:65,yuv444p,gray,sigma=20:preset=ref:transform=dct,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-group1,bm3d_gpu,33:65,yuv444p,gray,sigma=20:group=1:group2=1,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-group32,bm3d_gpu,33:65,yuv444p,gray,sigma=20:group=32:group2=32,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-bstep1,bm3d_gpu,33:65,yuv444p,gray,sigma=20:bstep=1:bstep2=1,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-sigma0,bm3d_gpu,33:65,yuv444p,gray,sigma=0,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-sigma255,bm3d_gpu,33:65,yuv444p,gray,sigma=255,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-thmse0,bm3d_gpu,33:65,yuv444p,gray,sigma=20:thmse=0:thmse2=0,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-tiled,bm3d_gpu,33:65,yuv444p,gray,sigma=20:search=tiled,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-csigma,bm3d_gpu,64:48,yuv420p,yuv420p,sigma=20:csigma=5,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-csigma-444,bm3d_gpu,64:48,yuv444p,yuv444p,sigma=20:csigma=5,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-planes1,bm3d_gpu,64:48,yuv420p,yuv420p,sigma=20:planes=1,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-enable,bm3d_gpu,33:65,yuv444p,gray,sigma=20:enable=eq(n\,1),3))

# vbm3d_gpu and temporal nlmeans_gpu: eight frames, so that the window
# moves and is truncated at both ends; the same arguments as
# GPU_DENOISE_TEST
define GPU_DENOISE_VIDEO_TEST
FATE_GPU_DENOISE-$$(call ALLYES, $$(GPU_DENOISE_DEPS) $(shell echo $(2) | tr a-z A-Z)_FILTER) += fate-$(1)
fate-$(1): CMD = ffmpeg $$(GPU_DENOISE_DEVICE) -lavfi "$$(subst d=0.6,d=1.6,$$(call GPU_DENOISE_SRC,$(3),$(4),$(5))),hwupload,$(2)=$(6),hwdownload,format=$(5)" -frames:v 8 -f rawvideo -
fate-$(1): CMP = oneoff
fate-$(1): CMP_UNIT = $(7)
fate-$(1): FUZZ = $(7)
fate-$(1): REF = $$(SRC_PATH)/tests/ref/fate/$(1)
endef

# nlmeans_gpu with a temporal window
$(eval $(call GPU_DENOISE_VIDEO_TEST,nlmeans-gpu-temporal,nlmeans_gpu,64:48,yuv444p,gray,sigma=20:past=2:future=2,1))
$(eval $(call GPU_DENOISE_VIDEO_TEST,nlmeans-gpu-temporal-causal,nlmeans_gpu,64:48,yuv420p,yuv420p,sigma=20:past=3:causal=1,1))
$(eval $(call GPU_DENOISE_VIDEO_TEST,nlmeans-gpu-temporal-gbrp,nlmeans_gpu,48:40,gbrp,gbrp,sigma=20:past=1:future=1,1))
$(eval $(call GPU_DENOISE_VIDEO_TEST,nlmeans-gpu-temporal-joint,nlmeans_gpu,48:40,gbrp,gbrp,sigma=20:past=1:future=2:color=joint,1))

$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-gray,vbm3d_gpu,64:48,yuv444p,gray,sigma=20,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-yuv420p,vbm3d_gpu,64:48,yuv420p,yuv420p,sigma=20:past=2:future=2,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-causal,vbm3d_gpu,33:65,yuv444p,gray,sigma=20:causal=1,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-basic,vbm3d_gpu,33:65,yuv444p,gray,sigma=20:estim=basic:past=1:future=3,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-gbrp,vbm3d_gpu,48:40,gbrp,gbrp,sigma=20:past=2:future=1,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-argb,vbm3d_gpu,48:40,gbrp,argb,sigma=20:past=2:future=1,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-yuv444p16,vbm3d_gpu,48:40,yuv444p,yuv444p16le,sigma=20:perframe=3:group=16,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-enable,vbm3d_gpu,33:65,yuv444p,gray,sigma=20:past=1:future=1:enable=between(n\,2\,4),8))

# sigma=auto and sigma=curve: the noise of each frame estimated from integer
# histograms, the same on every device (bm3d_gpu and vbm3d_gpu stay
# bit-exact); one test per filter and mode, colour (estimated R, G and B
# turned into the opponent channels' noise), a fixed chroma sigma, and the
# estimates themselves as frame metadata
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-auto,nlmeans_gpu,64:48,yuv420p,yuv420p,sigma=auto,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-auto-gbrp,nlmeans_gpu,64:48,gbrp,gbrp,sigma=auto,1))
$(eval $(call GPU_DENOISE_TEST,nlmeans-gpu-curve,nlmeans_gpu,96:72,yuv444p,gray,sigma=curve,1))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-auto,bm3d_gpu,64:48,yuv420p,yuv420p,sigma=auto,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-auto-gbrp,bm3d_gpu,64:48,gbrp,gbrp,sigma=auto,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-auto-csigma,bm3d_gpu,64:48,yuv420p,yuv420p,sigma=auto:csigma=5,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-auto-gray16,bm3d_gpu,64:48,yuv444p,gray16le,sigma=auto,3))
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-curve,bm3d_gpu,96:72,yuv444p,gray,sigma=curve,3))
# bright samples only (200 to 255, the noise scaled with them): the
# inverse transform's last segment
$(eval $(call GPU_DENOISE_MD5_TEST,bm3d-gpu-curve-bright,bm3d_gpu,96:72,yuv444p,gray,sigma=curve,3,lutyuv=y=200+val*55/255))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-auto,vbm3d_gpu,64:48,yuv420p,yuv420p,sigma=auto:past=2:future=2,8))
$(eval $(call GPU_DENOISE_MD5_TEST,vbm3d-gpu-curve,vbm3d_gpu,96:72,yuv444p,gray,sigma=curve,8))

# $(1): test name, $(2): filter, $(3): size, $(4): 8-bit format,
# $(5): tested format, $(6): filter options, $(7): frames: the frame
# metadata printed by the metadata filter
define GPU_DENOISE_METADATA_TEST
FATE_GPU_DENOISE-$$(call ALLYES, $$(GPU_DENOISE_DEPS) METADATA_FILTER NULL_MUXER $(shell echo $(2) | tr a-z A-Z)_FILTER) += fate-$(1)
fate-$(1): CMD = ffmpeg $$(GPU_DENOISE_DEVICE) -lavfi "$$(if $$(filter 8,$(7)),$$(subst d=0.6,d=1.6,$$(call GPU_DENOISE_SRC,$(3),$(4),$(5))),$$(call GPU_DENOISE_SRC,$(3),$(4),$(5))),hwupload,$(2)=$(6),hwdownload,format=$(5),metadata=mode=print:file=pipe\\\\\\:1" -frames:v $(7) -f null -
endef

$(eval $(call GPU_DENOISE_METADATA_TEST,nlmeans-gpu-auto-metadata,nlmeans_gpu,64:48,yuv420p,yuv420p,sigma=auto,3))
$(eval $(call GPU_DENOISE_METADATA_TEST,bm3d-gpu-curve-metadata,bm3d_gpu,96:72,yuv444p,gray,sigma=curve,3))
$(eval $(call GPU_DENOISE_METADATA_TEST,vbm3d-gpu-auto-metadata,vbm3d_gpu,64:48,gbrp,gbrp,sigma=auto:past=1:future=1,8))

FATE_GPU_DENOISE += $(FATE_GPU_DENOISE-yes)

FATE_HW-$(CONFIG_FFMPEG) += $(FATE_GPU_DENOISE)
$(FATE_GPU_DENOISE): ffmpeg$(PROGSSUF)$(EXESUF)

fate-gpu-denoise: $(FATE_GPU_DENOISE)
