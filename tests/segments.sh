#!/bin/bash
#
# tools/denoise-segments, the segment farm on GNU parallel, with two job
# slots on this host: the joined output must decode to the frames of one
# pass over the whole video (frame MD5s and timestamps):
#
#  - vbm3d_gpu (4 frames of context before a segment, 2 after), segments
#    found by the input's timestamps (irregular, starting at 1 s), both job
#    slots on the OpenCL device (as device 0 and device 1 of --devices);
#    with one frame of context less (--context 3:2), the output must differ;
#  - nlmeans_gpu with a temporal window, yuv420p, segments decoded from the
#    start (--seek decode), through an sshlogin of this host (':'), where
#    each job takes a free device by a lock;
#  - a failing segment: an ffmpeg that fails on the third segment stops the
#    run with a non-zero status, a message naming the segment and no
#    output; run again (the same command), the segments done are not redone
#    and the output is one pass's;
#  - the work folder of another plan is refused.
#
# Environment: FFMPEG, FFPROBE (the binaries), OPENCL_DEVICE (optional
# P.D), PARALLEL (GNU parallel, default parallel).

. "$(dirname "$0")/lib.sh"
FFPROBE=${FFPROBE:-build/ffmpeg/ffprobe}
PARALLEL=${PARALLEL:-parallel}
SEGMENTS=$(cd "$(dirname "$0")/.." && pwd)/tools/denoise-segments
D=${OPENCL_DEVICE:-0.0}
export FFMPEG FFPROBE

if ! "$PARALLEL" --version 2> /dev/null | grep -q "GNU parallel"; then
    fail "GNU parallel ($PARALLEL) is missing: apt-get install parallel (make deps)"
    exit 1
fi

# clip FORMAT N OUT: noisy testsrc2, 48x32, pts 1000 + 40 n + (7 n^2 mod 13)
# ms (irregular, from 1 s), FFV1 in Matroska
clip() {
    ff -y -copyts \
        -f lavfi -i "testsrc2=s=48x32:r=25,trim=end_frame=$2,format=$1,noise=alls=25:allf=t:all_seed=3,format=$1,settb=1/1000,setpts=1000+N*40+mod(N*N*7\,13)" \
        -c:v ffv1 -enc_time_base 1/1000 -fps_mode passthrough "$3" 2> "$TMP/err"
}

# md5 FILE OUT: pts (in ms from the first frame) and MD5 of each frame
md5() {
    ff -i "$1" -fps_mode passthrough \
        -enc_time_base 1/1000 -f framemd5 - 2> "$TMP/err" | grep -v '^#' |
        awk -F', *' '{ print $3, $5, $6 }' > "$2"
}

# one_pass IN FILTER OUT: the frame MD5s of one pass
one_pass() {
    ff -y $DEV -i "$1" -vf "$2" \
        -fps_mode passthrough -enc_time_base demux -c:v ffv1 "$TMP/one.mkv" 2> "$TMP/err" &&
        md5 "$TMP/one.mkv" "$3"
}

# same NAME OUTPUT REF N: the joined output against one pass
same() {
    RUN=$((RUN + 1))
    if ! md5 "$2" "$TMP/got"; then
        fail "$1: cannot decode $2: $(tail -n 1 "$TMP/err")"
    elif [ "$(wc -l < "$TMP/got")" != "$4" ]; then
        fail "$1: $(wc -l < "$TMP/got") frames out of $4"
    elif ! cmp -s "$3" "$TMP/got"; then
        fail "$1: the joined output differs from one pass:"
        diff "$3" "$TMP/got" | head -n 6 | sed 's/^/    /'
    else
        ok "$1: $4 frames, the same as one pass"
    fi
}

# 1. vbm3d_gpu, seek by timestamps, two devices of this host
clip gray 16 "$TMP/in.mkv" || { fail "cannot make the input: $(tail -n 1 "$TMP/err")"; exit 1; }
F1="vbm3d_gpu=sigma=20:past=1:future=1"
one_pass "$TMP/in.mkv" "$F1" "$TMP/ref1" || { fail "one pass: $(tail -n 1 "$TMP/err")"; exit 1; }
RUN=$((RUN + 1))
if "$SEGMENTS" -i "$TMP/in.mkv" -o "$TMP/out1.mkv" --vf "$F1" --devices "$D,$D" -j 2 \
        --segment-frames 5 --keep > "$TMP/log" 2>&1; then
    grep -q "context 4 before and 2 after, seek by input" "$TMP/log" ||
        fail "vbm3d_gpu: not the plan expected: $(head -n 1 "$TMP/log")"
    same "vbm3d_gpu, 4 segments, 2 job slots" "$TMP/out1.mkv" "$TMP/ref1" 16
    RUN=$((RUN + 1))
    slots=$(awk -F'\t' 'NR > 1 { n = split($9, w, " "); print w[n] }' \
                "$TMP/out1.mkv.parts/joblog" | sort -u | tr -d '\n')
    devs=$(head -q -n 1 "$TMP"/out1.mkv.parts/seg-*.log | grep -c "opencl=dn:$D ")
    if [ "$slots" = 12 ] && [ "$devs" = 4 ]; then
        ok "vbm3d_gpu: job slots 1 and 2 used, each on device $D"
    else
        fail "vbm3d_gpu: job slots '$slots' (want 12), $devs of 4 segments on opencl=dn:$D"
    fi
else
    fail "vbm3d_gpu: denoise-segments failed:"
    tail -n 5 "$TMP/log" | sed 's/^/    /'
fi

# the same with one frame of context less before each segment than the
# rule: the seams show (the comparison can fail)
RUN=$((RUN + 1))
if ! "$SEGMENTS" -i "$TMP/in.mkv" -o "$TMP/out1b.mkv" --vf "$F1" -j 2 --context 3:2 \
        --segment-frames 5 > "$TMP/log" 2>&1; then
    fail "vbm3d_gpu --context 3:2: denoise-segments failed: $(tail -n 1 "$TMP/log")"
elif ! md5 "$TMP/out1b.mkv" "$TMP/got" || cmp -s "$TMP/ref1" "$TMP/got"; then
    fail "vbm3d_gpu --context 3:2 (one frame less than the rule): no difference from one pass"
else
    ok "vbm3d_gpu --context 3:2 (one frame less than the rule): frames $(diff "$TMP/ref1" "$TMP/got" | grep -c '^>') of 16 differ from one pass"
fi

# 2. nlmeans_gpu, decoded from the start, through an sshlogin of this host
clip yuv420p 14 "$TMP/in2.mkv" || { fail "cannot make the input: $(tail -n 1 "$TMP/err")"; exit 1; }
F2="nlmeans_gpu=sigma=20:past=2:future=1"
one_pass "$TMP/in2.mkv" "$F2" "$TMP/ref2" || { fail "one pass: $(tail -n 1 "$TMP/err")"; exit 1; }
RUN=$((RUN + 1))
if "$SEGMENTS" -i "$TMP/in2.mkv" -o "$TMP/out2.mkv" --vf "$F2" --devices "$D,$D" -j 2 \
        --sshlogin : --seek decode --segment-frames 4 > "$TMP/log" 2>&1; then
    grep -q "context 2 before and 1 after, seek by decode" "$TMP/log" ||
        fail "nlmeans_gpu: not the plan expected: $(head -n 1 "$TMP/log")"
    same "nlmeans_gpu, 4 segments, --seek decode, --sshlogin :" "$TMP/out2.mkv" "$TMP/ref2" 14
    RUN=$((RUN + 1))
    if [ -e "$TMP/out2.mkv.parts" ]; then
        fail "nlmeans_gpu: the work folder is left without --keep"
    else
        ok "nlmeans_gpu: the work folder removed after the join"
    fi
else
    fail "nlmeans_gpu: denoise-segments failed:"
    tail -n 5 "$TMP/log" | sed 's/^/    /'
fi

# 3. a failing segment, then the same command again
cat > "$TMP/ffmpeg" <<EOF
#!/bin/bash
echo "\$*" >> "$TMP/calls"
case "\$*" in
*seg-00002.part.mkv*) [ -e "$TMP/break" ] && { echo "broken on purpose" >&2; exit 3; } ;;
esac
exec "$(cd "$(dirname "$FFMPEG")" && pwd)/$(basename "$FFMPEG")" "\$@"
EOF
chmod +x "$TMP/ffmpeg"
touch "$TMP/break"
FARM=("$SEGMENTS" -i "$TMP/in.mkv" -o "$TMP/out3.mkv" --vf "$F1" -j 2 --segment-frames 3
      --ffmpeg "$TMP/ffmpeg" --devices "$D")
RUN=$((RUN + 1))
if "${FARM[@]}" > "$TMP/log" 2>&1; then
    fail "failing segment: denoise-segments succeeded"
else
    done1=$(cd "$TMP/out3.mkv.parts" 2> /dev/null && ls seg-?????.mkv 2> /dev/null | tr '\n' ' ')
    if ! grep -q "FAILED segment 3/6 (frames 6 to 8) with status 1" "$TMP/log" ||
       ! grep -q "broken on purpose" "$TMP/log" || [ -e "$TMP/out3.mkv" ] ||
       [ -e "$TMP/out3.mkv.parts/seg-00002.mkv" ] ||
       [ ! -e "$TMP/out3.mkv.parts/seg-00000.mkv" ]; then
        fail "failing segment: not the failure expected (segments done: $done1):"
        sed 's/^/    /' "$TMP/log" | tail -n 8
    else
        ok "failing segment: stopped, status non-zero, segment 3 named with its log; done: $done1"
    fi
    rm "$TMP/break"
    : > "$TMP/calls"
    RUN=$((RUN + 1))
    if ! "${FARM[@]}" > "$TMP/log" 2>&1; then
        fail "resume: denoise-segments failed:"
        tail -n 5 "$TMP/log" | sed 's/^/    /'
    else
        redone=""
        for s in $done1; do
            grep -q "${s%.mkv}.part.mkv" "$TMP/calls" && redone+=" $s"
        done
        runs=$(grep -c -- "-f matroska" "$TMP/calls")
        want=$((6 - $(wc -w <<< "$done1")))
        if [ -n "$redone" ] || [ "$runs" != "$want" ]; then
            fail "resume: segments redone:${redone:- none}; $runs ffmpeg runs for $want segments left"
        else
            ok "resume: the $want segments left run, none of those done before"
        fi
        same "resume" "$TMP/out3.mkv" "$TMP/ref1" 16
    fi
fi

# 4. the work folder of another plan
mkdir -p "$TMP/out4.mkv.parts"
echo '{"vf": "other"}' > "$TMP/out4.mkv.parts/plan.json"
RUN=$((RUN + 1))
if "$SEGMENTS" -i "$TMP/in.mkv" -o "$TMP/out4.mkv" --vf "$F1" > "$TMP/log" 2>&1; then
    fail "another plan: denoise-segments used the work folder of another plan"
elif ! grep -q "segments of another run.*--fresh" "$TMP/log"; then
    fail "another plan: not the message expected: $(tail -n 1 "$TMP/log")"
else
    ok "another plan: the work folder refused (use --fresh)"
fi

summary segments.sh
