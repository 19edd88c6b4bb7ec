#!/usr/bin/env bash
# bench/s3.sh: GET throughput and client CPU-seconds per GB of llmio's s3 engine against curl and
# s3fs (FUSE, OS2G's baseline) on the same local s3rver and the same object, plus PUT with
# unsigned vs SHA-256-signed payloads and Content-MD5.  Loopback plain HTTP: the server is local,
# so its CPU is printed too (on loopback it is usually the bottleneck).
#
#   bench/s3.sh [LLMIO] [SIZE_MIB] [REPS]        (defaults build/llmio 1024 3)
#
# The servers keep their objects in memory (S3_BENCH_DATA, default /dev/shm: tmpfs), so that
# neither the disk nor the page cache is in the GET rows.  PUT_MIB (default 256) sizes the PUT
# rows (s3rver's PUT costs it 10-15 CPU-s per GB).  The GET table ends with the medians and
# their ratios to `curl -o /dev/null`: the issue's targets (llmio's client CPU-s/GB at most
# curl's, GB/s at least 0.95x curl's).  RECIPES=0 leaves out the recipe rows.
#
# Then the recipes (docs/object-storage.md, "Recipes"): `--workload load --engine all` loads
# RECIPE_MODEL (default gpt2) at RECIPE_SCALE (default 1) cold from the bucket (s3, s3-agent)
# and from the same shards as files in a staging directory (RECIPE_STAGING, default /var/tmp:
# a disk, where /tmp may be memory) with the file engines, REPS rounds: load time, GB/s and
# client CPU-s per GB for each strategy side by side (s3-agent: the agent process's share apart;
# the mmap strategy runs the mmap engine whatever the run's file engine, and has no object row).
#
# Every row: wall seconds, GB/s, client CPU seconds (user + system of the client's processes:
# llmio's cpu.proc_s; curl's rusage; s3fs's /proc/PID/stat delta + the reader's rusage), client
# CPU-s per GB, server CPU-s per GB, and system-wide softirq seconds (/proc/stat, all CPUs).
# Tools run interleaved, REPS rounds.  Needs s3rver (scripts/bootstrap.sh), curl, and for the
# s3fs rows s3fs + /dev/fuse (skipped with a note otherwise); the TLS rows run against a second
# s3rver with a self-signed certificate (openssl).  The s3-agent rows (the off-host client
# stand-in) count the application's and the agent process's CPU together as the client's, and
# print the split after the table; the cuda-bounce host=s3 row (objects into GPU memory) runs
# when the cuda-bounce engine is available (a GPU, or the fake CUDA libraries via LLMIO_CUDART).
set -euo pipefail
cd "$(dirname "$0")/.."
LLMIO=${1:-build/llmio}
MIB=${2:-1024}
PUT_MIB=${PUT_MIB:-256}
REPS=${3:-3}
S3RVER=${LLMIO_S3RVER:-.tools/node_modules/.bin/s3rver}
[ -x "$S3RVER" ] || { echo "s3rver not installed: run scripts/bootstrap.sh" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/llmio-s3bench.XXXXXX")
DATA=$(mktemp -d "${S3_BENCH_DATA:-/dev/shm}/llmio-s3bench-data.XXXXXX")
SRV=
TLS=
MNT=$W/mnt
STAGE=
cleanup() {
	[ -n "$STAGE" ] && rm -rf "$STAGE"
	[ -n "$TLS" ] && kill "$TLS" 2>/dev/null && wait "$TLS" 2>/dev/null
	mountpoint -q "$MNT" 2>/dev/null && fusermount -u "$MNT"
	[ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	rm -rf "$W" "$DATA"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$S3RVER" -d "$DATA/data" -a 127.0.0.1 -p "$PORT" --silent --configure-bucket bench >"$W/s3rver.log" 2>&1 &
SRV=$!
export AWS_ENDPOINT_URL=http://127.0.0.1:$PORT AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER
export AWS_REGION=us-east-1
for _ in $(seq 300); do curl -s -o /dev/null "$AWS_ENDPOINT_URL/" && break; sleep 0.1; done
SIGV4=(--aws-sigv4 aws:amz:us-east-1:s3 --user S3RVER:S3RVER -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
BYTES=$((MIB * 1048576))
head -c "$BYTES" /dev/urandom >"$W/obj"
curl -sS "${SIGV4[@]}" -T "$W/obj" "$AWS_ENDPOINT_URL/bench/obj" >/dev/null
rm -f "$W/obj"

ticks() { # ticks PID: utime + stime of a process, in clock ticks
	awk '{print $14 + $15}' "/proc/$1/stat"
}
softirq() { awk '/^cpu /{print $8}' /proc/stat; }
HZ=$(getconf CLK_TCK)

# row TOOL WALL_S CLIENT_S SRV_TICKS SOFTIRQ_TICKS [COPY_S HASH_S]: a table row; GET rows are
# also kept in $W/get.rows for the medians
row() {
	python3 - "$1" "$2" "$3" "$4" "$5" "${6:--}" "${7:--}" "$BYTES" "$HZ" "$W/get.rows" \
		"${PHASE:-get}" <<'PY'
import sys
tool, wall, client, srv, sirq, copy, hsh, nbytes, hz, rows, phase = sys.argv[1:12]
wall, client, gb = float(wall), float(client), int(nbytes) / 1e9
srv, sirq = int(srv) / int(hz), int(sirq) / int(hz)
f = lambda v: v if v == "-" else "%.3f" % float(v)
print("| %s | %.2f | %.3f | %.3f | %.2f | %s | %s | %.2f | %.3f |" % (
    tool, wall, gb / wall, client, client / gb, f(copy), f(hsh), srv / gb, sirq))
if phase == "get":
    open(rows, "a").write("%s\t%f\t%f\n" % (tool, client / gb, gb / wall))
PY
}
HEAD='| client | wall s | GB/s | client CPU s | client CPU-s/GB | of it copies s | of it hashing s | server CPU-s/GB | softirq s (all CPUs) |'
SEP='| --- | --- | --- | --- | --- | --- | --- | --- | --- |'

# measure TOOL CMD...: run CMD; the client CPU is its rusage (children)
measure() {
	local tool=$1 s0 q0 out; shift
	s0=$(ticks "$SRV"); q0=$(softirq)
	out=$(/usr/bin/time -f '%e %U %S' "$@" 2>&1 >/dev/null | tail -n 1)
	row "$tool" "$(echo "$out" | awk '{print $1}')" "$(echo "$out" | awk '{print $2 + $3}')" \
		$(($(ticks "$SRV") - s0)) $(($(softirq) - q0))
}

# llmio_row LABEL ARGS...: client CPU is the result's cpu.proc_s plus wire.agent_s (s3-agent's
# agent process; 0 for the others), and of it the copies (wire.copy_s) and the payload hashing
# (wire.hash_s); ENGINE (default s3) picks the engine
llmio_row() {
	local label=$1 s0 q0; shift
	s0=$(ticks "$SRV"); q0=$(softirq)
	"$LLMIO" run --engine "${ENGINE:-s3}" "$@" --json "$W/r.json" >/dev/null
	row "$label" "$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["job_runtime"]/1e3)' "$W/r.json")" \
		"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print(j["cpu"]["proc_s"] + j["wire"].get("agent_s", 0))' "$W/r.json")" \
		$(($(ticks "$SRV") - s0)) $(($(softirq) - q0)) \
		$(python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["jobs"][0]["wire"]; print(w["copy_s"], w["hash_s"])' "$W/r.json")
	if [ "${ENGINE:-s3}" = s3-agent ]; then
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1]))["jobs"][0]; print("application %.3f s, agent %.3f s" % (j["cpu"]["proc_s"], j["wire"]["agent_s"]))' "$W/r.json" >>"$W/agent.split"
	fi
}
SHM=/dev/shm/llmio-s3bench.$$
GPU=0
"$LLMIO" engines --brief 2>/dev/null | grep -q '^cuda-bounce .*available' && GPU=1

# the same server over TLS (self-signed, trusted through AWS_CA_BUNDLE), for the TLS rows
TLSURL=
if openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$W/tls.key" -out "$W/tls.crt" >/dev/null 2>&1; then
	TPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$S3RVER" -d "$DATA/tdata" -a 127.0.0.1 -p "$TPORT" --silent --configure-bucket bench \
		--key "$W/tls.key" --cert "$W/tls.crt" >"$W/s3tls.log" 2>&1 &
	TLS=$!
	TLSURL=https://127.0.0.1:$TPORT
	for _ in $(seq 300); do curl -s --cacert "$W/tls.crt" -o /dev/null "$TLSURL/" && break; sleep 0.1; done
	head -c "$BYTES" /dev/urandom >"$W/obj"
	curl -sS --cacert "$W/tls.crt" "${SIGV4[@]}" -T "$W/obj" "$TLSURL/bench/obj" >/dev/null
	rm -f "$W/obj"
fi

S3FS=0
if command -v s3fs >/dev/null && [ -c /dev/fuse ]; then
	mkdir -p "$MNT"
	echo "S3RVER:S3RVER" >"$W/passwd"
	chmod 600 "$W/passwd"
	if s3fs bench "$MNT" -o url="$AWS_ENDPOINT_URL",use_path_request_style,passwd_file="$W/passwd" \
		-o nonempty 2>"$W/s3fs.err"; then
		S3FS=1
	else
		echo "note: s3fs did not mount: $(cat "$W/s3fs.err")"
	fi
fi

echo "GET of one ${MIB} MiB object on loopback, plain HTTP ($(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg); server data on $(df --output=fstype "$DATA" | tail -n 1))"
echo
echo "$HEAD"
echo "$SEP"
for _ in $(seq "$REPS"); do
	measure curl curl -sS "${SIGV4[@]}" -o /dev/null "$AWS_ENDPOINT_URL/bench/obj"
	# curl -o /dev/null throws the bytes away; llmio copies them into the application's
	# buffer (wire.copy_s).  Into a tmpfs file, curl copies them into memory too.
	measure "curl -o tmpfs (into memory)" curl -sS "${SIGV4[@]}" -o "$SHM" \
		"$AWS_ENDPOINT_URL/bench/obj"
	rm -f "$SHM"
	llmio_row "llmio s3 bs=8m qd=1" --filename s3://bench/obj --rw read --bs 8m --iodepth 1
	llmio_row "llmio s3 bs=8m qd=4" --filename s3://bench/obj --rw read --bs 8m --iodepth 4
	# the wake-up batching off: the worker wakes per TCP segment, as curl does
	llmio_row "llmio s3 bs=8m qd=1 rcvlowat=0" --filename s3://bench/obj --rw read --bs 8m \
		--iodepth 1 --rcvlowat=0
	ENGINE=s3-agent llmio_row "llmio s3-agent (stand-in) bs=8m qd=4" --filename s3://bench/obj \
		--rw read --bs 8m --iodepth 4
	[ "$GPU" = 1 ] && ENGINE=cuda-bounce llmio_row "llmio cuda-bounce host=s3 qd=4 (to GPU)" \
		--filename s3://bench/obj --rw read --bs 8m --iodepth 4 --host=s3
	if [ -n "$TLSURL" ]; then
		SRV_SAVE=$SRV
		SRV=$TLS
		measure "curl, TLS" curl -sS --cacert "$W/tls.crt" "${SIGV4[@]}" -o /dev/null \
			"$TLSURL/bench/obj"
		AWS_ENDPOINT_URL=$TLSURL AWS_CA_BUNDLE=$W/tls.crt llmio_row "llmio s3 bs=8m qd=4, TLS" \
			--filename s3://bench/obj --rw read --bs 8m --iodepth 4
		SRV=$SRV_SAVE
	fi
	if [ "$S3FS" = 1 ]; then
		pid=$(pgrep -n -x s3fs)
		f0=$(ticks "$pid"); s0=$(ticks "$SRV"); q0=$(softirq)
		out=$(/usr/bin/time -f '%e %U %S' cat "$MNT/obj" 2>&1 >/dev/null | tail -n 1)
		row "s3fs + cat" "$(echo "$out" | awk '{print $1}')" \
			"$(echo "$out" | awk -v f=$(($(ticks "$pid") - f0)) -v hz="$HZ" '{print $2 + $3 + f / hz}')" \
			$(($(ticks "$SRV") - s0)) $(($(softirq) - q0))
		# s3fs caches nothing on disk here (no use_cache); evict the kernel's copy of this
		# one file (never the whole machine's page cache: others are working on it)
		python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$MNT/obj"
	fi
done
echo
echo "Medians of the $REPS rounds, against curl -o /dev/null (the issue's targets: client CPU-s/GB"
echo "at most 1.00x curl's, GB/s at least 0.95x):"
echo
python3 - "$W/get.rows" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    tool, cpu, rate = line.rstrip("\n").split("\t")
    rows.setdefault(tool, []).append((float(cpu), float(rate)))
med = {t: (statistics.median(c for c, _ in v), statistics.median(r for _, r in v))
       for t, v in rows.items()}
ref = med.get("curl")
print("| client | client CPU-s/GB | x curl's | GB/s | x curl's |")
print("| --- | --- | --- | --- | --- |")
for t, (c, r) in med.items():
    print("| %s | %.2f | %s | %.3f | %s |" % (t, c, "%.2f" % (c / ref[0]) if ref else "-", r,
                                              "%.2f" % (r / ref[1]) if ref else "-"))
PY
echo
echo "s3-agent rows, application and agent process CPU apart (the agent's is what a DPU would take off the host):"
sed 's/^/- /' "$W/agent.split"
echo
echo "PUT of one ${PUT_MIB} MiB object (multipart, 8 MiB parts, 4 in flight)"
echo
echo "$HEAD"
echo "$SEP"
BYTES=$((PUT_MIB * 1048576))
MIB=$PUT_MIB
export PHASE=put
for _ in $(seq "$REPS"); do
	llmio_row "llmio UNSIGNED-PAYLOAD" --filename s3://bench/put --rw write --bs 8m \
		--size "${MIB}m" --iodepth 4
	llmio_row "llmio sha256=1" --filename s3://bench/put --rw write --bs 8m --size "${MIB}m" \
		--iodepth 4 --sha256=1
	llmio_row "llmio sha256=1 md5=1" --filename s3://bench/put --rw write --bs 8m \
		--size "${MIB}m" --iodepth 4 --sha256=1 --md5=1
done

[ "${RECIPES:-1}" = 0 ] && exit 0
RECIPE_MODEL=${RECIPE_MODEL:-gpt2}
RECIPE_SCALE=${RECIPE_SCALE:-1}
STAGE=$(mktemp -d "${RECIPE_STAGING:-/var/tmp}/llmio-s3bench-stage.XXXXXX")
echo
echo "Recipe load: $RECIPE_MODEL at scale $RECIPE_SCALE, cold, from the bucket (object engines) and from"
echo "files in $STAGE (file engines; O_DIRECT where it works), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| round | strategy | engine | target | load s | GB/s | client CPU-s/GB | of it the agent's | wire or device bytes |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for rep in $(seq "$REPS"); do
	# --keep: the shards are uploaded in round 1 and read as they are after, as files are
	"$LLMIO" run --workload load --model "$RECIPE_MODEL" --scale "$RECIPE_SCALE" --cache cold \
		--engine all --directory s3://bench/recipe --staging "$STAGE" --keep --quiet \
		--json "$W/load.json" || true
	python3 - "$W/load.json" "$rep" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for ph in range(len(d["runs"][0]["phases"])):
    for r in d["runs"]:
        if ph >= len(r["phases"]) or not r["phases"][ph]["jobs"]:
            continue
        p, m = r["phases"][ph], r["phases"][ph]["metrics"]
        obj = "wire_rx_bytes" in m
        moved = m["wire_rx_bytes"] if obj else m["device_read_bytes"]
        gb = p["jobs"][0]["read"]["io_bytes"] / 1e9
        agent = "%.2f" % (m["agent_s"] / gb) if "agent_s" in m and gb else "-"
        print("| %s | %s | %s | %s | %.3f | %.3f | %.2f | %s | %.0f |" % (
            sys.argv[2], p["name"].split("-")[1], r["engine"], "bucket" if obj else "files",
            m["load_time_s"], m["GBps"], m["client_cpu_s_per_GB"], agent, moved))
PY
done
