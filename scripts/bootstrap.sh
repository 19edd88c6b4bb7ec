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
      libopenmpi-dev openmpi-bin # MPI: the optional layer of src/dist (docs/mpi.md)
      libcurl4-openssl-dev libssl-dev curl s3fs)
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

# s3rver, the light S3 server the s3 tests start on loopback (Node is on these machines; npm's
# registry is needed here only, never at test time): into .tools/, which git ignores.
if command -v npm >/dev/null && [ ! -x .tools/node_modules/.bin/s3rver ]; then
	echo "bootstrap: installing s3rver 3.7.1 from npm into .tools/"
	npm install --silent --no-audit --no-fund --prefix .tools s3rver@3.7.1 >/dev/null ||
		echo "bootstrap: s3rver not installed; the s3 tests will skip"
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
