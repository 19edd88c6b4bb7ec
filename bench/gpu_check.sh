#!/usr/bin/env bash
# shellcheck disable=SC2317 # facts and pack_up run through bash -c, a trap or step
# gpu_check.sh: the GPU datapaths measured side by side, in one bounded run on a GPU machine
# that has no network.  It builds nothing: scripts/gpu_pack.sh builds and packs llmio, its
# libraries and this script on a machine with network; carry that folder and run this copy.
#
#   gpu_check.sh [--dir DIR] [--size SIZE] [--runtime T] [--deadline S] [--llmio BIN] [--fake]
#     --dir       where the scratch file goes (default ./gpu-check-scratch): the NVMe
#                 filesystem to measure (true GDS needs ext4/xfs on NVMe and nvidia-fs)
#     --size      scratch file size (default 4g)
#     --runtime   seconds per matrix run (default 1)
#     --deadline  seconds for the whole run, packing included (default 330, under 6 minutes)
#     --llmio     the llmio binary (default: the one next to this script, as packed, or
#                 build-gpu-pack/llmio)
#     --quick     the headline runs, the random reads and the compat proof only (no
#                 sequential sweep): a second try when the first was cut
#     --fake      a dry run on the fake CUDA libraries packed beside test_gpu: everything runs
#                 without a GPU and the numbers mean nothing
#
# Steps, each under its own timeout and all under the deadline (what the deadline cuts is
# listed as skipped): machine facts; its own cufile.json (CUFILE_ENV_PATH_JSON: parallel I/O,
# queue depth, compat mode allowed, log and statistics on); `llmio engines` (probes isolated);
# conformance (test_gpu --real, then each GPU mode write+read); the scratch file laid out; the
# pinned host-to-device copy ceiling; the matrix (host io_uring, cuda-bounce, gds sync / batch /
# async with and without register=1: sequential read and write at 1 and 4 MiB, QD 8 and 32,
# numjobs 1 and 4; 4 and 16 KiB random reads at QD 1 and 32), most telling runs first; then
# one gds read with compat mode disallowed, which proves whether cuFile ran true GDS or compat.
#
# Under $OUT (default ./gpu-check-out) it leaves two files: gpu-check.tar.gz (everything: logs,
# facts, each run's JSON, cufile.log) and summary.txt (one line per run: GB/s, cores busy,
# GB/s per core, p50/p99/p99.9, copy vs storage time, the cuFile mode).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-$PWD/gpu-check-out}
DIR=$PWD/gpu-check-scratch
SIZE=4g
RUNTIME=1
DEADLINE=330
LLMIO=
FAKE=0
QUICK=0
# test hook: a command run as the first conformance step (cli_gpu_check.sh makes it hang)
STEP_HOOK=${GPU_CHECK_TEST_HOOK:-}

usage() { sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--dir) DIR=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--deadline) DEADLINE=$2; shift 2 ;;
	--llmio) LLMIO=$2; shift 2 ;;
	--fake) FAKE=1; shift ;;
	--quick) QUICK=1; shift ;;
	-h | --help) usage 0 ;;
	*) echo "gpu_check.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
START=$(date +%s)
END=$((START + DEADLINE))
RESERVE=10 # seconds kept for the summary and the archive
W=$OUT/work
rm -rf "$W"
mkdir -p "$W/runs" "$DIR" || { echo "gpu_check.sh: cannot create $W or $DIR" >&2; exit 1; }
log() { echo "gpu_check [$(($(date +%s) - START))s]: $*" | tee -a "$W/log.txt"; }

# ---- the bounded step -------------------------------------------------------------------
# step NAME TIMEOUT CMD...: CMD's output in $W/NAME.txt; its own timeout, cut to what the
# deadline leaves; one line in steps.txt (ok / failed rc / TIMEOUT / skipped).  Returns CMD's rc.
step() {
	local name=$1 limit=$2 left rc t0
	shift 2
	left=$((END - RESERVE - $(date +%s)))
	if [ "$left" -lt 2 ]; then
		echo "$name skipped (global deadline)" >>"$W/steps.txt"
		return 125
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	t0=$(date +%s)
	timeout -k 3 "$limit" "$@" >"$W/$name.txt" 2>&1
	rc=$?
	case $rc in
	0) echo "$name ok $(($(date +%s) - t0))s" >>"$W/steps.txt" ;;
	124 | 137) echo "$name TIMEOUT after ${limit}s" >>"$W/steps.txt"
		log "step $name cut by its ${limit}s timeout" ;;
	*) echo "$name failed rc=$rc $(($(date +%s) - t0))s" >>"$W/steps.txt" ;;
	esac
	return "$rc"
}

pack_up() {
	python3 - "$W" >"$OUT/summary.txt" 2>>"$W/log.txt" <<'EOF' || summary_fallback
import glob, json, os, re, sys
w = sys.argv[1]
print("# llmio gpu_check summary (details in gpu-check.tar.gz)")
for line in open(os.path.join(w, "facts-short.txt")) if os.path.exists(os.path.join(w, "facts-short.txt")) else []:
    print("# " + line.rstrip())
print("%-44s %8s %6s %8s %9s %9s %9s %9s %9s  %s" % ("run", "GB/s", "cores", "GB/s/c", "p50 us",
      "p99 us", "p99.9 us", "copy ms", "stor ms", "cuFile"))
for f in sorted(glob.glob(os.path.join(w, "runs", "*.json"))):
    name = os.path.basename(f)[:-5]
    try:
        j = json.load(open(f))["jobs"][0]
        op = j["write"] if j["write"]["total_ios"] else j["read"]
        pc = op["clat_ns"]["percentile"]
        notes = j.get("engine_notes", "")
        copy = re.search(r"copies took ([0-9.]+) ms", notes)
        stor = re.search(r"storage ([0-9.]+) ms", notes)
        rate = re.search(r"MiB, ([0-9.]+) GB/s\)", notes)
        mode = "compat" if "compat (POSIX) mode" in notes else ("GDS" if "true GDS" in notes else "-")
        cores = j.get("cpu", {}).get("cores_busy") or 0
        gbpc = j.get("gb_per_s_per_core") or 0
        print("%-44s %8.3f %6.2f %8.3f %9.1f %9.1f %9.1f %9s %9s  %s%s" % (
            name, op["bw_bytes"] / 1e9, cores, gbpc, pc["50.000000"] / 1e3, pc["99.000000"] / 1e3,
            pc["99.900000"] / 1e3, copy.group(1) if copy else "-", stor.group(1) if stor else "-",
            mode, (" copy %s GB/s" % rate.group(1)) if rate and name.startswith("pcie") else ""))
    except Exception as e:  # a failed or cut run left no usable JSON
        print("%-44s no result (%s)" % (name, e.__class__.__name__))
print("# steps")
for line in open(os.path.join(w, "steps.txt")):
    print("# " + line.rstrip())
EOF
	tar czf "$OUT/gpu-check.tar.gz" -C "$OUT" work 2>>"$OUT/summary.txt"
	rm -rf "$W"
}
summary_fallback() { { echo "# no python3: steps only"; cat "$W/steps.txt"; } >"$OUT/summary.txt"; }
trap 'log "interrupted"; pack_up; exit 1' INT TERM

# ---- the binary: packed, never built here -----------------------------------------------
if [ -z "$LLMIO" ]; then
	for c in "$HERE/llmio" "$HERE/../build-gpu-pack/llmio"; do
		[ -x "$c" ] && { LLMIO=$c; break; }
	done
fi
if [ -z "$LLMIO" ] || [ ! -x "$LLMIO" ]; then
	log "no llmio binary: run scripts/gpu_pack.sh on a machine with network and carry" \
		"build-gpu-pack (this script builds nothing)"
	pack_up
	exit 1
fi
PACK=$(cd "$(dirname "$LLMIO")" && pwd)
LLMIO=$PACK/$(basename "$LLMIO")
[ -d "$PACK/lib" ] && export LD_LIBRARY_PATH=$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ldd "$LLMIO" 2>&1 | grep -q 'not found'; then
	log "llmio cannot run here, missing: $(ldd "$LLMIO" | grep 'not found' | tr -s ' \n' ' ')"
	pack_up
	exit 1
fi
TEST_GPU=$PACK/tests/test_gpu

# ---- the libraries ----------------------------------------------------------------------
if [ "$FAKE" = 1 ]; then
	export LLMIO_CUDART=$PACK/tests/fake_cuda/libcudart.so.12
	export LLMIO_CUFILE=$PACK/tests/fake_cuda/libcufile.so.0
	export LLMIO_FAKE_CUDA=1 LLMIO_FAKE_STRICT=1
	log "DRY RUN on the fake CUDA libraries ($PACK/tests/fake_cuda): numbers mean nothing"
else
	# llmio searches the wheels of every python3 on PATH itself; this adds the site folders
	# of the Python that `python3` names (user site, a venv without bin/ on PATH)
	for lib in cufile:libcufile.so.0:LLMIO_CUFILE cuda_runtime:libcudart.so.13:LLMIO_CUDART \
		cuda_runtime:libcudart.so.12:LLMIO_CUDART; do
		IFS=: read -r wheel so var <<<"$lib"
		[ -n "${!var:-}" ] && continue
		"$LLMIO" engines --brief 2>/dev/null | grep -qF "lib${wheel#cuda_}" && continue
		for sp in $(timeout 10 python3 -c 'import site, sys
print("\n".join(site.getsitepackages() + [site.getusersitepackages(), sys.prefix]))' 2>/dev/null); do
			for f in "$sp/nvidia/$wheel/lib/$so" "$sp/nvidia/cu13/lib/$so"; do
				[ -f "$f" ] && { export "$var=$f"; break 2; }
			done
		done
	done
fi
log "libraries: LLMIO_CUDART=${LLMIO_CUDART:-search} LLMIO_CUFILE=${LLMIO_CUFILE:-search}"

# ---- cufile.json of our own -------------------------------------------------------------
cufile_json() { # cufile_json ALLOW_COMPAT
	cat <<EOF
{
	"logging": { "dir": "$W", "level": "ERROR" },
	"profile": { "cufile_stats": 3 },
	"execution": { "parallel_io": true, "max_io_queue_depth": 128, "max_io_threads": 8,
		"max_request_parallelism": 4, "min_io_threshold_size_kb": 8192 },
	"properties": { "allow_compat_mode": $1, "io_batchsize": 128,
		"max_direct_io_size_kb": 16384, "use_poll_mode": false }
}
EOF
}
cufile_json true >"$W/cufile.json"
cufile_json false >"$W/cufile-nocompat.json"
export CUFILE_ENV_PATH_JSON=$W/cufile.json CUFILE_LOGFILE_PATH=$W/cufile.log

# ---- facts ------------------------------------------------------------------------------
facts() {
	echo "date: $(date -u +%FT%TZ)  host: $(hostname)  kernel: $(uname -r)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)  cores: $(nproc)"
	echo "llmio: $("$LLMIO" --version 2>&1)"
	head -3 "$PACK/MANIFEST.txt" 2>/dev/null
	echo "scratch: $DIR"
	df -hT "$DIR" | tail -1
	findmnt -T "$DIR" 2>&1 | tail -1
	lsblk -o NAME,MODEL,SIZE,ROTA,TRAN,MOUNTPOINT 2>&1 | head -20
	echo "nvidia-fs: $(tr '\n' ' ' </proc/driver/nvidia-fs/version 2>/dev/null ||
		echo 'not loaded')$(test -d /sys/module/nvidia_fs || echo ' (/sys/module/nvidia_fs absent)')"
	echo "effective cufile.json: $CUFILE_ENV_PATH_JSON"
	cat "$CUFILE_ENV_PATH_JSON"
	echo "--- nvidia-smi"
	timeout 15 nvidia-smi --query-gpu=name,driver_version,pci.bus_id,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max,pcie.link.width.max,memory.total --format=csv 2>&1
	timeout 15 nvidia-smi -q -d MEMORY 2>&1 | grep -A4 -i bar1
	timeout 15 nvidia-smi topo -m 2>&1
	echo "--- gdscheck -p"
	for g in /usr/local/cuda*/gds/tools/gdscheck /usr/local/cuda*/gds/tools/gdscheck.py; do
		[ -x "$g" ] && { timeout 30 "$g" -p 2>&1 | head -80; break; }
	done
}
export LLMIO PACK DIR
export -f facts
step facts 60 bash -c facts
step engines 90 "$LLMIO" engines
grep -E '^(gds|cuda-bounce|io_uring) |uses:|why:' "$W/engines.txt" >"$W/facts-short.txt" 2>/dev/null
log "facts and engines recorded"
avail() { grep -Eq "^$1 +available" "$W/engines.txt"; }

# ---- conformance, every GPU mode under its own timeout ----------------------------------
[ -n "$STEP_HOOK" ] && step conformance-hook 5 bash -c "$STEP_HOOK"
if [ -x "$TEST_GPU" ]; then
	real=--real
	[ "$FAKE" = 1 ] && real=
	LLMIO_TEST_DIR=$DIR/llmio-gpu-test step conformance-test_gpu 90 "$TEST_GPU" $real
	log "test_gpu: $(tail -1 "$W/steps.txt")"
	rm -rf "$DIR/llmio-gpu-test"
fi
gmodes=()
avail gds && gmodes+=("gds mode=sync" "gds mode=batch" "gds mode=async" "gds mode=batch,register=1")
avail cuda-bounce && gmodes+=("cuda-bounce host=io_uring" "cuda-bounce host=psync")
C=$DIR/llmio-gpu-conform
for m in "${gmodes[@]}"; do
	read -r e o <<<"$m"
	n=conform-$e-${o//[=,]/-}
	eo=()
	for kv in ${o//,/ }; do eo+=("--$kv"); done
	step "$n-write" 20 "$LLMIO" run --filename "$C" --size 64m --bs 1m --ioengine "$e" "${eo[@]}" \
		--rw write --iodepth 8 --direct=1 --quiet &&
		step "$n-read" 20 "$LLMIO" run --filename "$C" --size 64m --bs 1m --ioengine "$e" \
			"${eo[@]}" --rw read --iodepth 8 --direct=1 --quiet
done
rm -f "$C"
log "conformance done: $(grep -c '^conform.* ok' "$W/steps.txt") steps ok"

# ---- the matrix -------------------------------------------------------------------------
F=$DIR/llmio-gpu-check
step layout 90 "$LLMIO" run --filename "$F" --size "$SIZE" --bs 4m --ioengine psync --rw write \
	--direct=1 --quiet
# r NAME ENGINE ENGINE_OPTS RW BS QD NUMJOBS [extra...]: one measured run -> runs/NAME.json
r() {
	local name=$1 e=$2 o=$3 rw=$4 bs=$5 qd=$6 nj=$7 eo=()
	shift 7
	for kv in ${o//,/ }; do eo+=("--$kv"); done
	step "run-$name" $((${RUNTIME%%.*} + 30)) "$LLMIO" run --filename "$F" --size "$SIZE" \
		--ioengine "$e" "${eo[@]}" --rw "$rw" --bs "$bs" --iodepth "$qd" --numjobs "$nj" \
		--direct=1 --runtime "$RUNTIME" --time_based --json "$W/runs/$name.json" --quiet \
		"$@"
}
# the pinned host-to-device ceiling: cuda-bounce from a file in the page cache, whose notes give
# the copies' GB/s (GPU time); the PCIe link is the limit, not storage
if avail cuda-bounce; then
	P=$DIR/llmio-gpu-pcie
	psize=512m
	[ "$FAKE" = 1 ] && psize=32m
	step pcie-fill 30 "$LLMIO" run --filename "$P" --size $psize --bs 4m --ioengine psync --rw write --quiet
	step run-pcie-h2d-4m-qd8 $((${RUNTIME%%.*} + 30)) "$LLMIO" run --filename "$P" --size $psize \
		--ioengine cuda-bounce --rw read --bs 4m --iodepth 8 --direct=0 --runtime "$RUNTIME" \
		--time_based --json "$W/runs/pcie-h2d-4m-qd8.json" --quiet
	rm -f "$P"
fi
# engine variants, most telling first
variants=()
avail io_uring && variants+=("io_uring -")
avail cuda-bounce && variants+=("cuda-bounce -")
avail gds && variants+=("gds mode=batch" "gds mode=batch,register=1" "gds mode=sync"
	"gds mode=async" "gds mode=sync,register=1" "gds mode=async,register=1")
tag() { local o=${2#-}; echo "$1${o:+-${o//[=,]/-}}"; }
for v in "${variants[@]}"; do # the headline first: 1 MiB sequential read, QD 32, one thread
	read -r e o <<<"$v"
	r "$(tag "$e" "$o")-read-1m-qd32-nj1" "$e" "${o#-}" read 1m 32 1
done
# ---- true GDS or compat, per file: the same read with compat mode disallowed ------------
if avail gds; then
	CUFILE_ENV_PATH_JSON=$W/cufile-nocompat.json step gds-nocompat 30 "$LLMIO" run \
		--filename "$F" --size "$SIZE" --ioengine gds --mode=sync --rw read --bs 1m \
		--direct=1 --runtime 1 --quiet
	case $? in
	0) v="true GDS: reads of $F work with allow_compat_mode=false" ;;
	125) v="not proved (the deadline cut the compat-disallowed pass)" ;;
	*) v="compat (POSIX) mode: with allow_compat_mode=false cuFile refuses $F ($(grep -m1 -i 'cufile\|error' "$W/gds-nocompat.txt"))" ;;
	esac
	echo "cuFile per file: $v" | tee -a "$W/facts-short.txt" >>"$W/log.txt"
fi
for v in "${variants[@]}"; do # the inference side
	read -r e o <<<"$v"
	for bs in 4k 16k; do for qd in 1 32; do
		r "$(tag "$e" "$o")-randread-$bs-qd$qd-nj1" "$e" "${o#-}" randread "$bs" "$qd" 1
	done; done
done
[ "$QUICK" = 1 ] && echo "sequential sweep skipped (--quick)" >>"$W/steps.txt"
[ "$QUICK" = 1 ] || for rw in read write; do for bs in 1m 4m; do for qd in 8 32; do for nj in 1 4; do
	for v in "${variants[@]}"; do
		read -r e o <<<"$v"
		n=$(tag "$e" "$o")-$rw-$bs-qd$qd-nj$nj
		[ -e "$W/runs/$n.json" ] || r "$n" "$e" "${o#-}" "$rw" "$bs" "$qd" "$nj"
	done
done; done; done; done

rm -f "$F"
log "done: $(grep -c ' ok ' "$W/steps.txt") steps ok, $(grep -c 'failed' "$W/steps.txt") failed," \
	"$(grep -c 'TIMEOUT' "$W/steps.txt") timed out, $(grep -c 'skipped' "$W/steps.txt") skipped"
pack_up
cat "$OUT/summary.txt"
exit 0
