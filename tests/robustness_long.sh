#!/bin/bash
# The long robustness run (not in make check): ROBUST_CASES random cases of
# tests/robustness.py's seed, in chunks of ROBUST_CHUNK, ROBUST_JOBS at once.
# Each chunk's log goes to $ROBUST_DIR/chunk-FIRST.log; a chunk whose log
# holds its summary line is not run again, so the run can be stopped and
# resumed (for example across sessions of a machine that is not always up).
# At the end, the chunks' counts are added up; the exit status is non-zero
# when a case failed or a chunk is missing.
#
# Environment: FFMPEG, OPENCL_DEVICE, PYTHON, ROBUST_CASES (10000),
# ROBUST_CHUNK (500), ROBUST_JOBS (2), ROBUST_DIR (build/robustness-long),
# ROBUST_SEED (robustness.py's own seed when unset; a new seed wants a new
# ROBUST_DIR, since the chunks' logs do not record it),
# ROBUST_ONLY_SUM=1 to add up the logs without running anything.
set -u
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
cases=${ROBUST_CASES:-10000}
chunk=${ROBUST_CHUNK:-500}
jobs=${ROBUST_JOBS:-2}
dir=${ROBUST_DIR:-build/robustness-long}
seed_arg=()
[ -n "${ROBUST_SEED:-}" ] && seed_arg=(--seed "$ROBUST_SEED")
mkdir -p "$dir"

if [ "${ROBUST_ONLY_SUM:-0}" != 1 ]; then
    for ((first = 0; first < cases; first += chunk)); do
        log=$dir/chunk-$first.log
        n=$((cases - first < chunk ? cases - first : chunk))
        # chunk 0 also runs the regression cases, so its count is larger
        done_cases=$(sed -n 's/^robustness.py: \([0-9]*\) cases.*/\1/p' "$log" 2>/dev/null)
        if [ -n "$done_cases" ] && [ "$done_cases" -ge "$n" ]; then
            continue
        fi
        echo "robustness_long.sh: cases $first to $((first + n - 1)) -> $log"
        FFMPEG=$FFMPEG OPENCL_DEVICE=${OPENCL_DEVICE:-} "$PYTHON" tests/robustness.py \
            "${seed_arg[@]}" --first "$first" --cases "$n" --jobs "$jobs" \
            > "$log.part" 2>&1
        mv "$log.part" "$log"
        tail -1 "$log"
    done
fi

# add up: cases, failures, outcomes per filter
"$PYTHON" - "$dir" "$cases" "$chunk" <<'PY'
import glob, os, re, sys
d, cases, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
total = failed = extra = 0
per = {}
missing = []
fails = []
for first in range(0, cases, chunk):
    n = min(chunk, cases - first)
    path = os.path.join(d, "chunk-%d.log" % first)
    text = open(path).read() if os.path.exists(path) else ""
    m = re.search(r"^robustness.py: (\d+) cases, (\d+) failed", text, re.M)
    # chunk 0 also runs the regression cases: more than n cases
    if not m or int(m.group(1)) < n:
        missing.append("%d-%d" % (first, first + n - 1))
        continue
    total += n
    extra += int(m.group(1)) - n
    failed += int(m.group(2))
    for f, rest in re.findall(r"^  (\w+_gpu)\s+\d+ cases: (.*)$", text, re.M):
        for num, what in re.findall(r"(\d+) ([\w-]+)", rest):
            per.setdefault(f, {}).setdefault(what, 0)
            per[f][what] += int(num)
    fails += [l for l in text.splitlines() if l.startswith("FAIL")]
for f in sorted(per):
    print("  %-12s %s" % (f, ", ".join("%d %s" % (v, k) for k, v in sorted(per[f].items()))))
for l in fails:
    print("  " + l[:200])
if missing:
    print("chunks not run yet: %s" % " ".join(missing))
print("robustness_long.sh: %d of %d cases run (and %d regression cases), %d failed"
      % (total, cases, extra, failed))
sys.exit(1 if failed or missing else 0)
PY
