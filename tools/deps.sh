#!/bin/sh
#
# deps.sh --install | --ensure | --check-opencl
#
#   --install       install the build and test prerequisites with apt-get
#   --ensure        install them only if some are missing (as root), or
#                   print the command to run
#   --check-opencl  fail unless an OpenCL platform is available

set -e

PACKAGES="build-essential nasm pkg-config opencl-headers ocl-icd-opencl-dev
pocl-opencl-icd clinfo python3 python3-venv xz-utils gnupg dpkg-dev ca-certificates
valgrind oclgrind git patch parallel texinfo"
INSTALL="apt-get install -y --no-install-recommends $(echo $PACKAGES)"

missing() {
    for cmd in cc make nasm pkg-config clinfo python3 xz gpg dpkg-source git patch oclgrind makeinfo; do
        command -v $cmd > /dev/null 2>&1 || { echo "$cmd"; return 0; }
    done
    # moreutils has a parallel of its own
    parallel --version 2> /dev/null | grep -q "GNU parallel" || { echo "GNU parallel"; return 0; }
    [ -f /usr/include/CL/cl.h ] || { echo "OpenCL headers"; return 0; }
    python3 -c 'import ensurepip' 2> /dev/null || { echo "python3-venv"; return 0; }
    ls /etc/OpenCL/vendors/*.icd > /dev/null 2>&1 || { echo "an OpenCL ICD"; return 0; }
    return 0
}

install() {
    if [ "$(id -u)" != 0 ]; then
        echo "deps: run as root: apt-get update && $INSTALL" >&2
        exit 1
    fi
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive $INSTALL
}

case "$1" in
--install)
    install
    ;;
--ensure)
    what=$(missing)
    if [ -n "$what" ]; then
        echo "deps: $what is missing"
        install
    fi
    ;;
--check-opencl)
    if ! clinfo -l 2> /dev/null | grep -q 'Platform #'; then
        echo "No OpenCL platform found: install one (for the CPU: apt-get install pocl-opencl-icd)." >&2
        exit 1
    fi
    ;;
*)
    echo "usage: $0 --install | --ensure | --check-opencl" >&2
    exit 2
    ;;
esac
