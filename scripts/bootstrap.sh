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
      libopenmpi-dev openmpi-bin # MPI: the optional layer of src/mpi (docs/mpi.md)
      libcurl4-openssl-dev libssl-dev curl s3fs
      python3-botocore # the s3 tests' second SigV4 signer: every request llmio signs, signed again
      libpmem2-dev # the pmem2 engine links libpmem2 (docs/engines.md, pmem2)
      libisal-dev # verify=crc32c: ISA-L's CRC-32C (docs/fio.md, verify)
      libxxhash-dev # the in-memory hash of string tables (src/base/hash.h)
      libmount-dev # the mount table under a target (src/job/target_facts.c)
      # the uring_cmd test guest (tests/qemu/run_guest.sh): an emulator with an NVMe device, a
      # kernel with its nvme modules to boot in it, and a static busybox for its initramfs
      qemu-system-x86 linux-image-amd64 busybox-static
      strace # the kernel's word on the syscalls made (tests: I/O priorities taken, net's bytes)
      iproute2 # the net engine's test brings up loopback in a network namespace of its own
      valgrind) # instructions per I/O (docs/performance.md, callgrind)
# the PyTorch offload test (tests/cli_torch_offload.sh) runs Debian's torch with /usr/bin/python3;
# without OpenBLAS its CPU matmuls are about 14x slower
pkgs+=(python3-torch libopenblas0-pthread)
# torch's headers: libllmio_torch.so, the CPU allocator the offload hooks hand torch (src/torch)
pkgs+=(libtorch-dev)
# and once more with tcmalloc loaded in glibc malloc's place (the hooks then leave the memory to
# it); bench/offload.sh's PRELOAD= compares allocators with it
pkgs+=(libtcmalloc-minimal4)
# shellcheck disable=SC2206 # tests add a package that cannot be installed, to reach the refusal
pkgs+=(${BOOTSTRAP_EXTRA_PKGS:-})
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Can apt fetch?  Decided from the sources apt itself reads (scripts/apt_sources.sh: not the
# disabled files beside them) by reaching one of them; without that (a GPU machine lent offline)
# apt-get would only hang.  BOOTSTRAP_APT_ETC: another apt configuration (the tests' fakes).
if [ ${#missing[@]} -gt 0 ]; then
	if ! why=$(scripts/apt_sources.sh --reachable "${BOOTSTRAP_APT_ETC:-/etc/apt}" 2>&1); then
		echo "bootstrap: ${missing[*]} not installed and $why, so apt-get cannot fetch them:" \
			"install them, or build where apt can fetch and carry the build" \
			"(scripts/gpu_pack.sh)" >&2
		exit 1
	fi
	echo "bootstrap: installing ${missing[*]}"
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	# a source that answers the probe but stalls mid-transfer must not hang the build either
	if ! timeout 600 $sudo apt-get update -qq; then
		echo "bootstrap: apt-get update failed or took over 10 minutes (above)" >&2
		exit 1
	fi
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The two S3 servers the s3 tests start on loopback, implementations that share no code (Node is
# on these machines; npm's registry is needed here only, never at test time), into .tools/, which
# git ignores: s3rver, and fauxqs (on fastify; 1.9.2 is its last release for Node 20).
if command -v npm >/dev/null && { [ ! -x .tools/node_modules/.bin/s3rver ] ||
	[ ! -f .tools/node_modules/fauxqs/dist/app.js ]; }; then
	echo "bootstrap: installing s3rver 3.7.1 and fauxqs 1.9.2 from npm into .tools/"
	# into a folder of its own, put in place whole: an install cut short (a lost connection,
	# a full disk) would leave servers without their dependencies, whose tests would then fail
	# instead of skipping
	tools_new=$(mktemp -d .tools.new.XXXXXX)
	if npm install --silent --no-audit --no-fund --prefix "$tools_new" s3rver@3.7.1 \
		fauxqs@1.9.2 >/dev/null && [ -x "$tools_new/node_modules/.bin/s3rver" ] &&
		[ -f "$tools_new/node_modules/fauxqs/dist/app.js" ]; then
		rm -rf .tools && mv "$tools_new" .tools
	else
		rm -rf "$tools_new"
		echo "bootstrap: the S3 servers are not installed; the s3 tests will skip"
	fi
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
fi
cmake --build "$build" -j"$(nproc)"
