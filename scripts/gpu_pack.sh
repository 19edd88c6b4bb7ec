#!/usr/bin/env bash
# gpu_pack.sh: build llmio here and gather what bench/gpu_check.sh needs on a GPU machine that
# has no network and must build nothing: the binaries, the fake CUDA libraries (for its dry
# run), the runtime libraries they link (liburing, libaio, libcjson, libinih, libcmocka,
# libblkid; libaio.so.1 itself, which newer distributions rename) and the scripts, in one
# folder that the device tool can carry (under 64 MiB).
#
#   scripts/gpu_pack.sh [--build DIR] [--out DIR] [--no-build]
#     --build     the build folder (default build-gpu, Release; configured if absent)
#     --out       the pack (default build-gpu-pack; ignored by git, so name it in `carry`)
#     --no-build  pack what DIR holds without building
# On the GPU machine:  OUT=... build-gpu-pack/gpu_check.sh --dir /mnt/nvme/scratch
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=build-gpu
PACK=build-gpu-pack
BUILD_IT=1
LIMIT=$((64 * 1024 * 1024))

while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--out) PACK=$2; shift 2 ;;
	--no-build) BUILD_IT=0; shift ;;
	-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu_pack.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ "$BUILD_IT" = 1 ]; then
	scripts/bootstrap.sh "$BUILD" -DCMAKE_BUILD_TYPE=Release
fi
for f in llmio tests/test_gpu tests/fake_cuda/libcudart.so.12 tests/fake_cuda/libcufile.so.0; do
	[ -e "$BUILD/$f" ] || { echo "gpu_pack.sh: $BUILD/$f is missing: build first" >&2; exit 1; }
done

rm -rf "$PACK"
mkdir -p "$PACK/lib" "$PACK/tests/fake_cuda"
cp "$BUILD/llmio" "$PACK/"
cp "$BUILD/tests/test_gpu" "$PACK/tests/"
# the fakes keep their layout: test_gpu finds them next to itself, with nosym/ and nobatch/
cp -a "$BUILD"/tests/fake_cuda/*.so* "$PACK/tests/fake_cuda/"
for d in nosym nobatch; do
	[ -d "$BUILD/tests/fake_cuda/$d" ] && mkdir -p "$PACK/tests/fake_cuda/$d" &&
		cp -a "$BUILD/tests/fake_cuda/$d"/*.so* "$PACK/tests/fake_cuda/$d/"
done
cp bench/gpu_check.sh "$PACK/"

# Every library the binaries need except the C library's own (the GPU machine has those and
# its libcudart/libcufile need the system's): copied under the name the binary asks for.
skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libgcc_s|libresolv)'
ldd "$PACK/llmio" "$PACK/tests/test_gpu" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
	sort -u | while read -r name path; do
	if [[ $name =~ $skip ]]; then
		continue
	fi
	cp -L "$path" "$PACK/lib/$name"
done
# libaio.so.1 itself: distributions that renamed it (libaio.so.1t64) still provide it as that
# (awk reads ldd's output to its end: ldd prints in more than one write, and a reader gone
# after the first makes ldd exit 1 with no message, which pipefail turned into ours)
aio=$(ldd "$PACK/llmio" | awk '$1 ~ /^libaio\.so/ && $3 ~ /^\// && !aio { aio = $3 } END { print aio }')
[ -n "$aio" ] && [ ! -e "$PACK/lib/libaio.so.1" ] && cp -L "$aio" "$PACK/lib/libaio.so.1"

{
	echo "built: $(date -u +%FT%TZ) on $(hostname)"
	echo "git: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "glibc: $(ldd --version | head -1)"
	echo "libraries:"
	ls -l "$PACK/lib"
} >"$PACK/MANIFEST.txt"

# the binaries must run from the pack with its lib/ alone
if LD_LIBRARY_PATH="$PACK/lib" ldd "$PACK/llmio" | grep -q 'not found'; then
	echo "gpu_pack.sh: $PACK/llmio misses a library:" >&2
	LD_LIBRARY_PATH="$PACK/lib" ldd "$PACK/llmio" | grep 'not found' >&2
	exit 1
fi
size=$(du -sb "$PACK" | cut -f1)
if [ "$size" -ge "$LIMIT" ]; then
	echo "gpu_pack.sh: $PACK is $size bytes, over the 64 MiB the device tool carries" >&2
	exit 1
fi
echo "gpu_pack.sh: $PACK ready ($((size / 1024)) KiB): carry it, then run $PACK/gpu_check.sh"
