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
      libcmocka-dev libinih-dev gnuplot-nox fio util-linux e2fsprogs python3)
# shellcheck disable=SC2206 # tests add a package that cannot be installed, to reach the refusal
pkgs+=(${BOOTSTRAP_EXTRA_PKGS:-})
# where apt would fetch from: without it (a GPU machine lent offline) apt-get would only hang
net_host=${BOOTSTRAP_NET_HOST:-deb.debian.org}
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	if ! timeout 5 bash -c "exec 3<>/dev/tcp/$net_host/80" 2>/dev/null; then
		echo "bootstrap: ${missing[*]} not installed and no network ($net_host:80 cannot be" \
			"reached), so apt-get cannot fetch them: install them, or build where there is" \
			"a network and carry the build (scripts/gpu_pack.sh)" >&2
		exit 1
	fi
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
