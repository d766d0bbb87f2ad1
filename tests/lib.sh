# What the shell tests share; sourced by them:
#
#   . "$(dirname "$0")/lib.sh"
#
# Sets
#   FFMPEG      the ffmpeg binary ($FFMPEG, default build/ffmpeg/ffmpeg)
#   DEV         ffmpeg's options of the OpenCL device ($OPENCL_DEVICE, P.D,
#               or the default device) as the filters' device, named ocl;
#               dev_options [NAME [P.D]] gives them for another name or device
#   TESTS       the tests/ folder (absolute)
#   TMP         a temporary folder, removed at exit (kept with KEEP_TMP=1,
#               its path then on stderr); on_exit CMD runs CMD at exit too
#   RUN FAILED SKIPPED   counts of cases, failures and skipped cases
# and defines
#   ff [-t SECONDS] ARGS...   ffmpeg -nostdin -hide_banner -loglevel
#               ${FF_LOGLEVEL:-error} -y ARGS, stopped after SECONDS (status 124)
#   filter_help NAME          ffmpeg -h filter=NAME; status 1 without that filter
#   has_pix_fmt FORMAT        whether this ffmpeg knows the pixel format
#   is_crash STATUS           whether a status is a process killed by a signal
#   status_kind STATUS [ERRFILE]   ok, timeout, crash, report or error
#   check_error LABEL REGEX STATUS ERRFILE   a run that must fail cleanly
#   ok MSG, fail MSG, skip MSG   the lines of the cases ("ok   ", "FAIL ",
#               "skip "), fail and skip counted
#   show_tail N FILE          the last N lines of FILE, indented
#   wait_for_slot N           wait until fewer than N background jobs run
#   summary [-s] NAME [UNIT]  "NAME: RUN UNIT(cases), [SKIPPED skipped, ]
#               FAILED failed"; its status is the test's: 1 when a case failed

set -u
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FFMPEG=${FFMPEG:-build/ffmpeg/ffmpeg}
RUN=0
FAILED=0
SKIPPED=0

# dev_options [NAME [P.D]]: -init_hw_device and -filter_hw_device for the
# OpenCL device P.D (default $OPENCL_DEVICE; empty: the default device)
dev_options() {
    local name=${1:-ocl} d=${2-${OPENCL_DEVICE:-}}
    echo "-init_hw_device opencl=$name${d:+:$d} -filter_hw_device $name"
}
DEV=$(dev_options)

# at exit: the commands given to on_exit, in order, then TMP removed
_LIB_AT_EXIT=()
on_exit() {
    _LIB_AT_EXIT+=("$1")
}
_lib_exit() {
    local c
    for c in ${_LIB_AT_EXIT[@]+"${_LIB_AT_EXIT[@]}"}; do
        eval "$c"
    done
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        echo "kept $TMP" >&2
    else
        rm -rf "$TMP"
    fi
}
TMP=$(mktemp -d)
trap _lib_exit EXIT

# ff [-t SECONDS] ARGS...: ffmpeg without stdin, banner or messages below
# errors (FF_LOGLEVEL=info for more), stopped after SECONDS, overwriting
# its output files (-y): without stdin, ffmpeg leaves an existing file as it
# is and still exits with status 0, so that a test would read an earlier
# run's output
ff() {
    local limit=()
    if [ "${1:-}" = -t ]; then
        limit=(timeout "$2")
        shift 2
    fi
    ${limit[@]+"${limit[@]}"} "$FFMPEG" -nostdin -hide_banner -loglevel "${FF_LOGLEVEL:-error}" -y "$@"
}

# wait_for_slot N: wait until fewer than N background jobs of this shell
# run (to start the next of a pool of N)
wait_for_slot() {
    while [ "$(jobs -rp | wc -l)" -ge "$1" ]; do
        wait -n
    done
}

# has_pix_fmt FORMAT: whether this ffmpeg knows the pixel format FORMAT
has_pix_fmt() {
    "$FFMPEG" -hide_banner -pix_fmts 2> /dev/null | grep -q " $1 "
}

# filter_help NAME: what ffmpeg -h filter=NAME says; status 1 when this
# ffmpeg has no such filter
filter_help() {
    local text
    text=$("$FFMPEG" -hide_banner -h "filter=$1" 2> /dev/null) || return 1
    grep -q "^Filter $1\$" <<< "$text" || return 1
    echo "$text"
}

# is_crash STATUS: a shell reports a process killed by SIGILL, SIGABRT,
# SIGBUS, SIGFPE, SIGKILL or SIGSEGV as 128 + the signal number (ffmpeg's
# own failures exit with their error code modulo 256, also above 128, but
# not these)
is_crash() {
    case $1 in
    132|134|135|136|137|139) return 0 ;;
    esac
    return 1
}

# the first line of an assertion or sanitizer report (AddressSanitizer,
# LeakSanitizer, UBSan) on stderr
REPORT_RE="Assertion|Sanitizer|runtime error"

# status_kind STATUS [ERRFILE]: how a command ended: ok (status 0), timeout
# (124: timeout(1) stopped it), crash (killed by a signal), report (a
# non-zero status with an assertion or sanitizer report in ERRFILE), error
# (a clean non-zero exit)
status_kind() {
    if [ "$1" -eq 0 ]; then
        echo ok
    elif [ "$1" -eq 124 ]; then
        echo timeout
    elif is_crash "$1"; then
        echo crash
    elif [ -n "${2:-}" ] && grep -Eq "$REPORT_RE" "$2"; then
        echo report
    else
        echo error
    fi
}

ok() {
    echo "ok   $*"
}

fail() {
    echo "FAIL $*"
    FAILED=$((FAILED + 1))
}

skip() {
    echo "skip $*"
    SKIPPED=$((SKIPPED + 1))
}

# show_tail N FILE: its last N lines, indented
show_tail() {
    tail -n "$1" "$2" | sed 's/^/    /'
}

# check_error LABEL REGEX STATUS ERRFILE: the command that exited with
# STATUS, its stderr in ERRFILE, must have failed cleanly: a non-zero
# status, within its time limit, not by a signal, no assertion or sanitizer
# report, a line matching REGEX (extended) in ERRFILE, which the ok line
# quotes. Returns 1 (and counts a failure) otherwise.
check_error() {
    local label=$1 regex=$2 rc=$3 err=$4
    case $(status_kind "$rc" "$err") in
    ok)
        fail "$label: exit status 0" ;;
    timeout)
        fail "$label: timed out" ;;
    crash)
        fail "$label: killed by signal $((rc - 128)) (status $rc)"
        show_tail 5 "$err" ;;
    report)
        fail "$label: assertion or sanitizer report"
        show_tail 20 "$err" ;;
    *)
        if grep -Eq "$regex" "$err"; then
            ok "$label: exit $rc, $(grep -Em1 "$regex" "$err" | sed 's/^\[[^]]*\] //')"
            return 0
        fi
        fail "$label: no message matching '$regex'; stderr was:"
        show_tail 5 "$err" ;;
    esac
    return 1
}

# summary [-s] NAME [UNIT]: the last line of a test; -s: with the skipped
# cases. Its status is the test's.
summary() {
    local skipped=""
    if [ "$1" = -s ]; then
        skipped="$SKIPPED skipped, "
        shift
    fi
    echo "$1: $RUN ${2:-cases}, $skipped$FAILED failed"
    [ "$FAILED" -eq 0 ]
}
