#!/usr/bin/env bash
# gpu_check.sh: the GPU datapaths measured side by side on a GPU machine.
#
# Builds llmio, runs the GPU conformance tests on the real GPU, then measures gds vs
# cuda-bounce vs host io_uring (all O_DIRECT) on one scratch file:
#   1 MiB sequential read and write at QD 8; 4 KiB and 16 KiB random read at QD 1 and 32.
# Everything lands under $OUT (default ./gpu-check-out): facts.txt (machine, GPU, driver,
# nvidia-fs, cufile.json, the libraries used), engines.txt, conformance.txt, one JSON per run,
# summary.txt (one line per run) and summary.json.
#
#   bench/gpu_check.sh [--dir DIR] [--size SIZE] [--runtime T] [--ramp T] [--llmio BIN] [--fake]
#     --dir      where the scratch file goes (default: ./gpu-check-scratch); use the NVMe
#                filesystem to be measured (GDS needs ext4/xfs on NVMe for true GDS mode)
#     --size     scratch file size (default 8g)
#     --runtime  seconds per run (default 10)
#     --ramp     seconds of unmeasured I/O before each run (default 1)
#     --llmio    use this llmio binary instead of building one (then no conformance build)
#     --fake     use the fake CUDA libraries of the build tree (tests/fake_cuda) instead of a
#                GPU: the whole script runs on a machine without one (a dry run; numbers mean
#                nothing)
#
# libcufile is taken from the nvidia-cufile Python package when LLMIO_CUFILE is unset and no
# system libcufile is found by llmio itself.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
OUT=${OUT:-$ROOT/gpu-check-out}
DIR=$ROOT/gpu-check-scratch
SIZE=8g
RUNTIME=10
RAMP=1
LLMIO=
FAKE=0

usage() { sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--ramp) RAMP=$2; shift 2 ;;
	--llmio) LLMIO=$2; shift 2 ;;
	--fake) FAKE=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "gpu_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
mkdir -p "$OUT" "$DIR" || { echo "gpu_check.sh: cannot create $OUT or $DIR" >&2; exit 1; }
log() { echo "gpu_check: $*" | tee -a "$OUT/log.txt"; }

# ---- build ----------------------------------------------------------------------------
if [ -z "$LLMIO" ]; then
	log "building llmio in build-gpu"
	if ! scripts/bootstrap.sh build-gpu -DCMAKE_BUILD_TYPE=Release >"$OUT/build.txt" 2>&1; then
		log "build failed: see $OUT/build.txt"
		exit 1
	fi
	LLMIO=$ROOT/build-gpu/llmio
fi
BUILD=$(cd "$(dirname "$LLMIO")" && pwd)

# ---- libraries ------------------------------------------------------------------------
if [ "$FAKE" = 1 ]; then
	export LLMIO_CUDART=$BUILD/tests/fake_cuda/libcudart.so.12
	export LLMIO_CUFILE=$BUILD/tests/fake_cuda/libcufile.so.0
	export LLMIO_FAKE_CUDA=1
	log "DRY RUN on the fake CUDA libraries ($BUILD/tests/fake_cuda): numbers mean nothing"
elif [ -z "${LLMIO_CUFILE:-}" ] && "$LLMIO" engines --brief | grep -A3 '^gds' |
	grep -qF 'libcufile (cuFile) not found'; then
	for py in python3 /usr/bin/python3; do
		d=$("$py" -c 'import nvidia.cufile, os; print(os.path.dirname(nvidia.cufile.__file__ or nvidia.cufile.__path__[0]))' 2>/dev/null) || continue
		for f in "$d/lib/libcufile.so.0" "$d/lib/libcufile.so"; do
			[ -f "$f" ] && { export LLMIO_CUFILE=$f; break 2; }
		done
	done
	log "libcufile from the nvidia-cufile package: ${LLMIO_CUFILE:-not found}"
fi

# ---- facts ----------------------------------------------------------------------------
{
	echo "date: $(date -u +%FT%TZ)"
	echo "host: $(hostname)  kernel: $(uname -r)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)  cores: $(nproc)"
	echo "llmio: $("$LLMIO" --version 2>&1)  git: $(git rev-parse --short HEAD 2>/dev/null)"
	echo "scratch: $DIR ($(df -hT "$DIR" | tail -1))"
	echo "LLMIO_CUDART=${LLMIO_CUDART:-}  LLMIO_CUFILE=${LLMIO_CUFILE:-}"
	echo "nvidia-fs module: $(cat /proc/driver/nvidia-fs/version 2>/dev/null || echo 'not loaded')"
	echo "cufile.json: ${CUFILE_ENV_PATH_JSON:-/etc/cufile.json}"
	grep -E '"(allow_compat_mode|force_compat_mode|use_pci_p2pdma|io_batchsize)"' \
		"${CUFILE_ENV_PATH_JSON:-/etc/cufile.json}" 2>/dev/null
	echo "--- nvidia-smi"
	nvidia-smi 2>&1 || echo "(nvidia-smi not available)"
	nvidia-smi topo -m 2>&1 || true
	echo "--- gdscheck"
	for g in /usr/local/cuda/gds/tools/gdscheck.py /usr/local/cuda/gds/tools/gdscheck; do
		[ -x "$g" ] && { "$g" -p 2>&1 | head -60; break; }
	done
} >"$OUT/facts.txt" 2>&1
"$LLMIO" engines >"$OUT/engines.txt" 2>&1
log "facts in $OUT/facts.txt; engines in $OUT/engines.txt"

# ---- conformance ----------------------------------------------------------------------
if [ -x "$BUILD/tests/test_gpu" ]; then
	mode=--real
	[ "$FAKE" = 1 ] && mode=
	LLMIO_TEST_DIR=$DIR timeout 600 "$BUILD/tests/test_gpu" $mode >"$OUT/conformance.txt" 2>&1
	rc=$?
	case $rc in
	0) log "GPU conformance: passed" ;;
	77) log "GPU conformance: SKIPPED: $(tail -1 "$OUT/conformance.txt")" ;;
	*) log "GPU conformance: FAILED (exit $rc): see $OUT/conformance.txt" ;;
	esac
else
	log "GPU conformance: no test_gpu next to $LLMIO (built without tests?)"
fi

# ---- the matrix -----------------------------------------------------------------------
engines=()
for e in gds cuda-bounce io_uring; do
	if "$LLMIO" engines --brief | grep -Eq "^$e +available"; then
		engines+=("$e")
	else
		log "engine $e cannot run: $("$LLMIO" engines --brief | grep -A3 "^$e " | grep -m1 'why:')"
	fi
done
# name rw bs iodepth
patterns=("seqread-1m-qd8 read 1m 8" "seqwrite-1m-qd8 write 1m 8"
	"randread-4k-qd1 randread 4k 1" "randread-4k-qd32 randread 4k 32"
	"randread-16k-qd1 randread 16k 1" "randread-16k-qd32 randread 16k 32")
F=$DIR/llmio-gpu-check
failed=0
for e in "${engines[@]}"; do
	for p in "${patterns[@]}"; do
		read -r name rw bs qd <<<"$p"
		j=$OUT/$e-$name.json
		log "run $e $name"
		if ! timeout $((${RUNTIME%%.*} * 3 + 300)) "$LLMIO" run --filename "$F" --size "$SIZE" \
			--ioengine "$e" --rw "$rw" --bs "$bs" --iodepth "$qd" --direct=1 \
			--runtime "$RUNTIME" --ramp_time "$RAMP" --json "$j" --quiet >>"$OUT/log.txt" 2>&1; then
			log "run $e $name FAILED (see log.txt)"
			failed=$((failed + 1))
		fi
	done
done

python3 - "$OUT" >"$OUT/summary.txt" <<'EOF'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, "*-*.json"))):
    if os.path.basename(f) == "summary.json":
        continue
    try:
        j = json.load(open(f))["jobs"][0]
    except Exception as e:  # a failed run left no usable JSON
        print("# %s: unreadable (%s)" % (f, e))
        continue
    op = j["write"] if j["write"]["total_ios"] else j["read"]
    name = os.path.basename(f)[:-5]
    rows.append({
        "run": name, "engine": j["job options"]["ioengine"], "gbps": op["bw_bytes"] / 1e9,
        "iops": op["iops"], "p50_us": op["clat_ns"]["percentile"]["50.000000"] / 1e3,
        "p99_us": op["clat_ns"]["percentile"]["99.000000"] / 1e3,
        "cores_busy": j.get("cpu", {}).get("cores_busy"),
        "gb_per_s_per_core": j.get("gb_per_s_per_core"), "notes": j.get("engine_notes", ""),
    })
print("%-34s %9s %11s %10s %10s %8s" % ("run", "GB/s", "IOPS", "p50 us", "p99 us", "cores"))
for r in rows:
    print("%-34s %9.3f %11.0f %10.1f %10.1f %8.2f" % (r["run"], r["gbps"], r["iops"],
          r["p50_us"], r["p99_us"], r["cores_busy"] or 0))
json.dump(rows, open(os.path.join(out, "summary.json"), "w"), indent=1)
EOF
grep -o 'compat (POSIX) mode[^;]*\|true GDS mode[^;]*' "$OUT"/gds-*.json 2>/dev/null | head -1 |
	sed 's/^[^:]*:/cuFile mode: /' >>"$OUT/facts.txt"
rm -f "$F"
cat "$OUT/summary.txt"
log "results in $OUT ($failed failed runs)"
[ "$failed" -eq 0 ]
