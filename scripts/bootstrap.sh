#!/usr/bin/env bash
# Install what llmio needs from Debian's packages (only what is missing), then configure and
# build.  Idempotent: a second run installs nothing and rebuilds only what changed.
#   scripts/bootstrap.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true

# python3: the CLI tests read JSON with it; the rest: build, test and peer tools
pkgs=(build-essential cmake pkg-config clang liburing-dev libaio-dev libcjson-dev libblkid-dev
      libcmocka-dev libinih-dev gnuplot-nox fio util-linux e2fsprogs python3
      libopenmpi-dev openmpi-bin) # MPI: the optional layer of src/dist (docs/mpi.md)
# the PyTorch offload test (tests/cli_torch_offload.sh) runs Debian's torch with /usr/bin/python3;
# without OpenBLAS its CPU matmuls are about 14x slower
pkgs+=(python3-torch libopenblas0-pthread)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "bootstrap: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
