#!/usr/bin/env bash
# llmio under MPI (docs/mpi.md), on one machine: -np 1 keeps the record and the totals of a run
# without MPI; the merged counts, bytes and histograms are the exact sums of the per-rank
# records (uneven shares too); file per process and --reorder; two hosts faked with
# LLMIO_HOSTNAME count each host's device bytes once; a failing or killed rank ends the run;
# ckpt and pretrain at tiny scale move exactly their bytes; a sweep is journaled once.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# the MPI layer stays in one place: nothing outside src/mpi includes mpi.h
SRC=$(cd "$(dirname "$0")/../src" && pwd)
outside=$(grep -rlE '#include <mpi\.h>' "$SRC" | grep -v "^$SRC/mpi/" || true)
check "mpi.h is included only in src/mpi${outside:+ (also: $outside)}" [ -z "$outside" ]

# shellcheck source=tests/mpi_lib.sh
. "$(dirname "$0")/mpi_lib.sh"

# -np 1: the record of a plain run, the same totals, and the mpi object beside it
llmio run --filename="$T/one" --size=1m --bs=64k --rw=write --json="$T/plain.json" --quiet
check "plain run" [ "$RC" -eq 0 ]
json_check "$T/plain.json" "no mpi object without mpirun" '"mpi" not in d'
mpi 1 run --filename="$T/one" --size=1m --bs=64k --rw=write --json="$T/np1.json" --quiet
check "-np 1 run (exit $RC)" [ "$RC" -eq 0 ]
python3 - "$T/plain.json" "$T/np1.json" <<'EOF' && pass "-np 1: same job keys and totals" || fail "-np 1: job keys or totals differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
def keys(o, p=""):
    out = set()
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("percentile", "clat_ns", "lat_ns", "slat_ns", "histogram", "warnings", "bins"):
                out.add(p + k)  # their inner keys depend on the latencies seen
                continue
            out.add(p + k)
            out |= keys(v, p + k + ".")
    return out
ja, jb = a["jobs"][0], b["jobs"][0]
ok = keys(ja) == keys(jb) and set(a) | {"mpi"} == set(b)
for op in ("read", "write"):
    ok = ok and ja[op]["io_bytes"] == jb[op]["io_bytes"] and ja[op]["total_ios"] == jb[op]["total_ios"]
ok = ok and b["mpi"]["ranks"] == 1 and b["mpi"]["per_rank"][0]["job"]["write"]["io_bytes"] == 1048576
if not ok:
    print(sorted(keys(ja) ^ keys(jb)), set(a) ^ set(b))
sys.exit(0 if ok else 1)
EOF

# merged = exact sum of the per-rank records; 5 blocks over 2 ranks: 3 + 2 (uneven)
SUMS='
import json, sys
d = json.load(open(sys.argv[1])); j = d["jobs"][0]; per = [p["job"] for p in d["mpi"]["per_rank"]]
def hist(job, op):
    h = {}
    for i, c in job["histogram"][op]["clat_ns"]:
        h[i] = h.get(i, 0) + c
    return h
ok = True
for op in ("read", "write"):
    ok = ok and j[op]["io_bytes"] == sum(p[op]["io_bytes"] for p in per)
    ok = ok and j[op]["total_ios"] == sum(p[op]["total_ios"] for p in per)
    merged = {}
    for p in per:
        for i, c in hist(p, op).items():
            merged[i] = merged.get(i, 0) + c
    ok = ok and hist(j, op) == merged
ok = ok and j["process_io"]["write_bytes"] == sum(p["process_io"]["write_bytes"] for p in per)
ok = ok and abs(j["cpu"]["proc_s"] - sum(p["cpu"]["proc_s"] for p in per)) < 1e-9
print([p["write"]["io_bytes"] for p in per])
sys.exit(0 if ok else 1)
'
mpi 2 run --filename="$T/shared" --size=320k --bs=64k --rw=write --json="$T/np2.json" --quiet
check "-np 2 shared file (exit $RC)" [ "$RC" -eq 0 ]
check "merged counts, bytes, histograms = sum of the ranks" python3 -c "$SUMS" "$T/np2.json"
json_check "$T/np2.json" "uneven shares: 3 and 2 blocks, one shared file of 5" \
	'[p["job"]["write"]["io_bytes"] for p in d["mpi"]["per_rank"]] == [196608, 131072] and j["write"]["io_bytes"] == 327680 and d["mpi"]["file_layout"] == "shared-file" and d["mpi"]["phase_s"] == j["job_runtime"] / 1000'
check "the shared file holds every region" [ "$(stat -c %s "$T/shared")" -eq 327680 ]
mpi 2 run --filename="$T/shared" --size=320k --bs=64k --rw=read
expect_out "the table names the ranks and the layout" "2 ranks on 1 hosts (shared-file)"

# file per process, IOR's names; then --reorder: rank 0 reads what rank 1 wrote
mpi 4 run --filename="$T/fpp" --size=1m --bs=64k --rw=write --mpi_layout=file-per-process \
	--json="$T/np4.json" --quiet
check "-np 4 file per process (exit $RC)" [ "$RC" -eq 0 ]
check "-np 4: merged = sum of the ranks" python3 -c "$SUMS" "$T/np4.json"
check "IOR's file names, a quarter each" [ "$(stat -c %s "$T"/fpp.0000000{0,1,2,3} | sort -u)" = 262144 ]
mpi 2 run --filename="$T/fpp" --size=512k --bs=64k --rw=read --mpi_layout=file-per-process \
	--reorder --json="$T/reorder.json" --quiet
check "--reorder read (exit $RC)" [ "$RC" -eq 0 ]
json_check "$T/reorder.json" "--reorder: each rank reads the other's file" \
	'[p["job"]["job options"]["filename"][-9:] for p in d["mpi"]["per_rank"]] == [".00000001", ".00000000"] and j["read"]["io_bytes"] == 524288'

# two hosts faked: ranks 0,1 on h0 and 2,3 on h1; the disk's bytes counted once per host
cat >"$T/host.sh" <<'EOF'
#!/bin/sh
LLMIO_HOSTNAME=h$((OMPI_COMM_WORLD_RANK / 2)) exec "$@"
EOF
chmod +x "$T/host.sh"
_show mpirun -np 4 host.sh llmio run ... --end_fsync=1
_run "${MPIRUN[@]}" -np 4 "$T/host.sh" "$LLMIO" run --filename="$T/hosts" --size=1m --bs=64k \
	--rw=write --end_fsync=1 --json="$T/hosts.json" --quiet
check "-np 4 on two fake hosts (exit $RC)" [ "$RC" -eq 0 ]
json_check "$T/hosts.json" "two hosts, two ranks each" \
	'd["mpi"]["hosts"] == 2 and [h["ranks"] for h in d["mpi"]["by_host"]] == [[0, 1], [2, 3]] and [p["host"] for p in d["mpi"]["per_rank"]] == ["h0", "h0", "h1", "h1"]'
json_check "$T/hosts.json" "device bytes: each host once (ranks 0 and 2), not once per rank" \
	'j["device"]["write_bytes"] == sum(d["mpi"]["per_rank"][r]["job"]["device"]["write_bytes"] for r in (0, 2)) == sum(h["device_write_bytes"] for h in d["mpi"]["by_host"])'
json_check "$T/hosts.json" "CPU per host = its ranks' sum" \
	'all(abs(h["proc_s"] - sum(d["mpi"]["per_rank"][r]["job"]["cpu"]["proc_s"] for r in h["ranks"])) < 1e-9 for h in d["mpi"]["by_host"])'

# fio's several jobs or files: each rank runs one job on one file, so they are refused
mpi 2 run --size=1m --name=a --rw=read --name=b --rw=write --quiet
check "several --name under mpirun: refused (exit $RC)" [ "$RC" -eq 2 ]
expect_err "says to give one" "several --name under mpirun"
mpi 2 run --filename="$T/l1:$T/l2" --size=1m --rw=write --quiet
check "a ':' list under mpirun: refused (exit $RC)" [ "$RC" -eq 2 ]
expect_err "says to give one --filename" "the ranks share one --filename"

# a failing rank (its file cannot be created) ends the whole run with its message
mkdir -p "$T/bad.00000001"
mpi 2 run --filename="$T/bad" --size=1m --bs=64k --rw=write --mpi_layout=file-per-process \
	--quiet
check "a failing rank ends the run, non-zero (exit $RC, 124 = hung)" [ "$RC" -ne 0 -a "$RC" -ne 124 ]
expect_err "the failing rank's message" "llmio: rank 1 on" "bad.00000001"

# a rank whose disk is full (a 4 MiB tmpfs under rank 1's file) ends the run with "no space"
MOUNTED=
on_exit() { [ -n "$MOUNTED" ] && umount "$MOUNTED"; }
mkdir "$T/tiny"
if [ "$(id -u)" -ne 0 ] || ! mount -t tmpfs -o size=4m tmpfs "$T/tiny" 2>/dev/null; then
	note "cannot mount a small tmpfs here: the no-space rank is not tested"
else
	MOUNTED=$T/tiny
	: >"$T/tiny/f" && ln -s "$T/tiny/f" "$T/nospace.00000001"
	mpi 2 run --filename="$T/nospace" --size=64m --bs=1m --rw=write \
		--mpi_layout=file-per-process --quiet
	check "a rank out of space ends the run, non-zero (exit $RC, 124 = hung)" \
		[ "$RC" -ne 0 -a "$RC" -ne 124 ]
	expect_err "the full rank's message" "llmio: rank 1 on" "no space"
fi

# a killed rank ends the others (they would otherwise read for 100 s)
_show "mpirun -np 2 llmio run --runtime=100s ... & (then one rank is killed)"
"${MPIRUN[@]}" -np 2 "$LLMIO" run --filename="$T/shared" --size=320k --bs=4k --rw=randread \
	--runtime=100s --time_based --quiet >"$T/stdout" 2>"$T/stderr" &
mpipid=$!
for _ in $(seq 100); do
	victim=$(pgrep -P "$mpipid" -x llmio | head -n 1)
	[ -n "$victim" ] && break
	sleep 0.1
done
sleep 1
[ -n "$victim" ] && kill -KILL "$victim"
reap "$mpipid" 60 "mpirun after a rank was killed"
check "a killed rank ends the run, non-zero (exit $REAPED)" [ "$REAPED" -ne 0 ]

# Ctrl-C: mpirun passes it to every rank; rank 0 still writes the merged, interrupted record
_show "mpirun -np 2 llmio run --runtime=100s ... & (then SIGINT to mpirun)"
"${MPIRUN[@]}" -np 2 "$LLMIO" run --filename="$T/shared" --size=320k --bs=4k --rw=randread \
	--runtime=100s --time_based --json="$T/int.json" --quiet >"$T/stdout" 2>"$T/stderr" &
mpipid=$!
# SIGINT only once both ranks catch it: their SigCgt masks hold SIGINT and SIGTERM (bits 2 and
# 15), which llmio sets just before its job; a signal before that would end a rank outright
catching() { # catching PID: the process has handlers for SIGINT and SIGTERM
	local m
	m=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$m" ] && [ $((16#$m & 0x4002)) -eq $((0x4002)) ]
}
ready=0
for _ in $(seq 600); do
	ranks=$(pgrep -P "$mpipid" -x llmio)
	ready=0
	for p in $ranks; do catching "$p" && ready=$((ready + 1)); done
	[ "$ready" -eq 2 ] && break
	sleep 0.1
done
check "Ctrl-C: both ranks catch SIGINT before it is sent" [ "$ready" -eq 2 ]
kill -INT "$mpipid"
reap "$mpipid" 60 "mpirun after Ctrl-C"
check "Ctrl-C: non-zero (exit $REAPED)" [ "$REAPED" -ne 0 ]
json_check "$T/int.json" "Ctrl-C: the merged record, marked interrupted, both ranks" \
	'j["interrupted"] and d["mpi"]["ranks"] == 2 and j["read"]["total_ios"] == sum(p["job"]["read"]["total_ios"] for p in d["mpi"]["per_rank"])'

# ckpt: 4 simulated ranks over 2 MPI ranks write exactly the shards one process writes
llmio run --workload ckpt --model Llama-3.2-1B --dp 4 --scale 0.0001 --directory "$T" \
	--json="$T/ckpt1.json" --quiet --keep
check "ckpt without MPI (exit $RC)" [ "$RC" -eq 0 ]
mpi 2 run --workload ckpt --model Llama-3.2-1B --dp 4 --scale 0.0001 --directory "$T" \
	--json="$T/ckpt2.json" --quiet --keep
check "ckpt -np 2 (exit $RC)" [ "$RC" -eq 0 ]
shards=$(find "$T" -name 'ckpt-rank0000[0-3].pt' -printf '%s\n' | awk '{s += $1} END {print s}')
python3 - "$T/ckpt1.json" "$T/ckpt2.json" "$shards" <<'EOF' && pass "ckpt: exact shard bytes, MLPerf's figures over all ranks" || fail "ckpt bytes or figures"
import json, sys
one, two = (json.load(open(p))["runs"][0] for p in sys.argv[1:3])
shards = int(sys.argv[3])
def moved(run, ph, op):
    return sum(j[op]["io_bytes"] for p in run["phases"] if p["name"] == ph for j in p["jobs"])
m = {x["name"]: x["value"] for x in two["phases"][0]["metrics"]} if isinstance(two["phases"][0]["metrics"], list) else two["phases"][0]["metrics"]
ok = moved(two, "save", "write") == moved(one, "save", "write") == shards
ok = ok and moved(two, "save-restore", "read") == shards
ok = ok and m["ranks"] == 4 and abs(m["aggregate_GBps"] - shards / m["duration_s"] / 1e9) < 1e-6 * max(1, m["aggregate_GBps"])
per = two["mpi"]["streams"][0]["per_rank"]
ok = ok and sum(p["job"]["write"]["io_bytes"] for p in per) == shards and all(p["job"]["write"]["io_bytes"] for p in per)
print(shards, m)
sys.exit(0 if ok else 1)
EOF

# ckpt --reorder: 3 simulated ranks over 2 processes (2 + 1 shards); each reads the other's
mpi 2 run --workload ckpt --model Llama-3.2-1B --dp 3 --scale 0.0001 --directory "$T" \
	--reorder --json="$T/ckpt3.json" --quiet
check "ckpt -np 2 --reorder (exit $RC)" [ "$RC" -eq 0 ]
json_check "$T/ckpt3.json" "ckpt --reorder: rank 0 reads back what rank 1 wrote, and rank 1 rank 0's" \
	'(lambda s: [p["job"]["write"]["io_bytes"] for p in s[0]["per_rank"]] == [p["job"]["read"]["io_bytes"] for p in s[1]["per_rank"]][::-1] and s[0]["per_rank"][0]["job"]["write"]["io_bytes"] > s[0]["per_rank"][1]["job"]["write"]["io_bytes"])(d["runs"][0]["mpi"]["streams"])'

# pretrain: the dataset's files split over the ranks, each rank its own samples
mkdir -p "$T/pt1" "$T/pt2"
PT=(--workload pretrain --model Llama-3.2-1B --files 4 --samples_per_file 8 --seq_len 512
	--batch 2 --steps 3 --compute 1ms --ckpt_every 0 --readers 1)
llmio run "${PT[@]}" --directory "$T/pt1" --json="$T/pt1.json" --quiet
check "pretrain without MPI (exit $RC)" [ "$RC" -eq 0 ]
mpi 2 run "${PT[@]}" --directory "$T/pt2" --json="$T/pt2.json" --quiet
check "pretrain -np 2 (exit $RC)" [ "$RC" -eq 0 ]
python3 - "$T/pt1.json" "$T/pt2.json" <<'EOF' && pass "pretrain: each rank reads its steps x batch, the total exact" || fail "pretrain bytes"
import json, sys
one, two = (json.load(open(p))["runs"][0] for p in sys.argv[1:])
rd = lambda run: sum(j["read"]["io_bytes"] for p in run["phases"] for j in p["jobs"])
per = [sum(p["job"]["read"]["io_bytes"] for p in s["per_rank"] if p["rank"] == r) for r in (0, 1) for s in two["mpi"]["streams"][:1]]
print(rd(one), rd(two), per)
sys.exit(0 if rd(two) == 2 * rd(one) == sum(per) and per[0] == per[1] == rd(one) else 1)
EOF

# a sweep under MPI: one journal line per point, written by rank 0, with each rank's record
printf '[w]\nrw=write\nsize=256k\nbs=4k,16k\nfilename=%s\n' "$T/sweep.dat" >"$T/sw.ini"
mpi 2 sweep "$T/sw.ini" -o "$T/sw.jsonl" --quiet
check "sweep -np 2 (exit $RC)" [ "$RC" -eq 0 ]
check "one journal line per point" [ "$(wc -l <"$T/sw.jsonl")" -eq 2 ]
python3 - "$T/sw.jsonl" <<'EOF' && pass "journal records: the merged job and both ranks" || fail "journal records under MPI"
import json, sys
ok = True
for line in open(sys.argv[1]):
    d = json.loads(line); j = d["phases"][0]["jobs"][0]
    ok = ok and j["write"]["io_bytes"] == 262144 and len(d["mpi"]["per_rank"]) == 2
    ok = ok and sum(p["job"]["write"]["io_bytes"] for p in d["mpi"]["per_rank"]) == 262144
sys.exit(0 if ok else 1)
EOF

finish
