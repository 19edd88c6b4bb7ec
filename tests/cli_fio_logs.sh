#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_logs.sh: fio's logs (write_bw_log, write_lat_log, write_iops_log, log_avg_msec,
# log_offset; docs/fio.md) and per-clone reports (numjobs without group_reporting).
#
# A rate-limited job of two threads writes its logs: the files fio names (NAME_bw.N.log, ...,
# one per thread), fio 3.33's line layout, interval ends on the log_avg_msec grid, and values
# that add up exactly to each thread's I/Os and bytes in the per-clone fio JSON, whose jobs add
# up exactly to the group's total.  Without log_avg_msec (fio's default 0) one line per I/O:
# as many lines as the clone's I/Os, bs columns adding up to its bytes, on psync, null and
# libaio, past the buffer a thread keeps, in the files and columns fio 3.33 writes for the
# same job.  fio's own fio2gnuplot draws the logs.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

J=$T/out.json
L=$T/logs
mkdir -p "$L"
# two threads, 200 I/Os per second each for 2 s: about 800 I/Os, intervals of 500 ms
BASE=(--name=lg --ioengine=psync --filename="$T/data" --size=4m --bs=4k --rw=randrw
	--rate_iops=200 --numjobs=2 --runtime=2 --time_based --output-format=json --output "$J")
JOB=("${BASE[@]}" --log_avg_msec=500 --write_bw_log=b --write_lat_log=l --write_iops_log=i)

echo "== the logs fio writes, one per thread"
(cd "$L" && expect_rc 0 "a run with the three logs" run "${JOB[@]}")
for f in b_bw i_iops l_clat l_lat l_slat; do
	for n in 1 2; do
		check "$f.$n.log written" test -f "$L/$f.$n.log"
	done
done
check "no third thread" test ! -e "$L/b_bw.3.log"
check "psync has no submission latency: slat logs empty, as fio's" test ! -s "$L/l_slat.1.log"

echo "== per-clone fio JSON: one job per thread, adding up to the whole"
json_check "$J" "numjobs=2 without group_reporting: two jobs" 'len(d["jobs"]) == 2'
json_check "$J" "each clone did I/O of both directions" \
	'all(x["read"]["total_ios"] > 0 and x["write"]["total_ios"] > 0 for x in d["jobs"])'

# logs FILE... -> python check of every log against the JSON
check_logs() {
	python3 - "$J" "$L" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
L = sys.argv[2]
step = 500
line = re.compile(r"^(\d+), (\d+), ([01]), 0, 0$")
bad = []
for n in (1, 2):
    clone = d["jobs"][n - 1]
    rows = {}
    for kind in ("bw", "iops", "clat", "lat"):
        name = {"bw": "b_bw", "iops": "i_iops", "clat": "l_clat", "lat": "l_lat"}[kind]
        rows[kind] = []
        for ln in open("%s/%s.%d.log" % (L, name, n)):
            m = line.match(ln.rstrip("\n"))
            if not m:
                bad.append("%s.%d: not fio's layout: %r" % (name, n, ln))
                continue
            rows[kind].append(tuple(int(x) for x in m.groups()))
    for kind, r in rows.items():
        for dd in (0, 1):
            t = [x[0] for x in r if x[2] == dd]
            if not t:
                bad.append("%s.%d dir %d: no lines" % (kind, n, dd))
            if t != sorted(t):
                bad.append("%s.%d dir %d: times not monotonic" % (kind, n, dd))
            if any(x % step for x in t[:-1]):
                bad.append("%s.%d dir %d: interval ends off the 500 ms grid: %s" % (kind, n, dd, t))
    for dd, key in ((0, "read"), (1, "write")):
        ios = sum(x[1] for x in rows["iops"] if x[2] == dd) * step // 1000
        kib = sum(x[1] for x in rows["bw"] if x[2] == dd) * step // 1000
        if ios != clone[key]["total_ios"]:
            bad.append("iops.%d %s: %d I/Os in the log, %d in the JSON" % (n, key, ios, clone[key]["total_ios"]))
        if kib * 1024 != clone[key]["io_bytes"]:
            bad.append("bw.%d %s: %d KiB in the log, %d B in the JSON" % (n, key, kib, clone[key]["io_bytes"]))
        c = clone[key]["clat_ns"]
        for x in rows["clat"]:
            if x[2] == dd and not (c["min"] <= x[1] <= c["max"]):
                bad.append("clat.%d %s: mean %d outside [%d, %d]" % (n, key, x[1], c["min"], c["max"]))
for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}
check "logs: fio's layout, grid times, sums equal to each clone's I/Os and bytes" check_logs
expect_rc 0 "the same job, group_reporting" run "${BASE[@]}" --group_reporting
json_check "$J" "group_reporting: one job" 'len(d["jobs"]) == 1'

echo "== per-clone sums are exact (null engine, exact counts)"
expect_rc 0 "numjobs=3 without group_reporting" run --ioengine=null --size=12m --bs=4k \
	--numjobs=3 --output-format=json --output "$J"
json_check "$J" "three jobs, adding up to 12 MiB exactly" \
	'len(d["jobs"]) == 3 and sum(x["read"]["io_bytes"] for x in d["jobs"]) == 12 << 20'
expect_rc 0 "numjobs=3 with group_reporting" run --ioengine=null --size=12m --bs=4k \
	--numjobs=3 --group_reporting --output-format=json --output "$J"
json_check "$J" "one job of 12 MiB" 'len(d["jobs"]) == 1 and j["read"]["io_bytes"] == 12 << 20'

echo "== a job file's logs: exact I/O counts"
mkdir -p "$T/jl" # apart: fio2gnuplot below reads every log in $L
cat > "$T/jl/jobs.fio" <<'F'
[global]
ioengine=null
bs=4k
write_iops_log=jf
write_bw_log=jf
[n]
size=8m
numjobs=2
F
(cd "$T/jl" && expect_rc 0 "a job file with logs (null engine, 2048 I/Os)" run jobs.fio)
check "one iops log per thread" test -s "$T/jl/jf_iops.1.log" -a -s "$T/jl/jf_iops.2.log"
# no log_avg_msec: fio's default 0, one line per I/O
check "one line per I/O: 2048 lines in the iops logs, each of value 1" \
	test "$(cat "$T"/jl/jf_iops.[12].log | awk -F', ' '$2 == 1 { s++ } END { print s }')" = 2048
check "the bw logs' bs column adds up to 8 MiB exactly" \
	test "$(cat "$T"/jl/jf_bw.[12].log | awk -F', ' '{ s += $4 } END { print s }')" = 8388608
check "reads only: no write lines" sh -c "! grep -q '^[0-9]*, 1, 1, ' '$T'/jl/jf_iops.1.log"
sed -i 's/^bs=4k$/bs=4k\nlog_avg_msec=1000/' "$T/jl/jobs.fio"
(cd "$T/jl" && expect_rc 0 "the job file with log_avg_msec=1000" run jobs.fio)
check "averaged: the iops logs add up to 2048 I/Os exactly (value = count per second)" \
	test "$(cat "$T"/jl/jf_iops.[12].log | awk -F', ' '{ s += $2 } END { print s }')" = 2048
check "averaged: the bw logs add up to 8 MiB exactly (KiB)" \
	test "$(cat "$T"/jl/jf_bw.[12].log | awk -F', ' '{ s += $2 } END { print s }')" = 8192

echo "== per-I/O logs (log_avg_msec=0, fio's default): one line per I/O, exact"
P=$T/pio
mkdir -p "$P"
PJ=$T/pio.json
# check_per_io DIR JSON NAME SIZE SLAT: every clone's lat/clat/bw/iops logs against its JSON
check_per_io() {
	python3 - "$@" <<'PY'
import json, re, sys
L, J, name, size, slat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
d = json.load(open(J))
line = re.compile(r"^(\d+), (\d+), ([01]), (\d+), (\d+), 0$")  # log_offset=1
bad = []
for n, clone in enumerate(d["jobs"], 1):
    rows = {}
    for kind in ("bw", "iops", "slat", "clat", "lat"):
        rows[kind] = []
        for ln in open("%s/%s_%s.%d.log" % (L, name, kind, n)):
            m = line.match(ln.rstrip("\n"))
            if not m:
                bad.append("%s.%d: not fio's per-I/O layout: %r" % (kind, n, ln))
                continue
            rows[kind].append(tuple(int(x) for x in m.groups()))
    if (len(rows["slat"]) > 0) != (slat == "1"):
        bad.append("slat.%d: %d lines" % (n, len(rows["slat"])))
    for kind in ("bw", "iops", "clat", "lat"):
        r = rows[kind]
        if [x[0] for x in r] != sorted(x[0] for x in r):
            bad.append("%s.%d: times not in completion order" % (kind, n))
        for x in r:
            if x[4] % 4096 or x[4] + x[3] > size:
                bad.append("%s.%d: offset %d outside the file" % (kind, n, x[4]))
        for dd, key in ((0, "read"), (1, "write")):
            mine = [x for x in r if x[2] == dd]
            if len(mine) != clone[key]["total_ios"]:
                bad.append("%s.%d %s: %d lines, %d I/Os in the JSON" % (kind, n, key, len(mine), clone[key]["total_ios"]))
            if sum(x[3] for x in mine) != clone[key]["io_bytes"]:
                bad.append("%s.%d %s: bs adds up to %d, io_bytes %d" % (kind, n, key, sum(x[3] for x in mine), clone[key]["io_bytes"]))
    if any(x[1] != 1 for x in rows["iops"]):
        bad.append("iops.%d: a value other than 1" % n)
    for dd, key in ((0, "read"), (1, "write")):
        c = clone[key]["clat_ns"]
        # the JSON's min/max come from a histogram of bounded relative error (1 %)
        for x in rows["clat"]:
            if x[2] == dd and not (c["min"] * 0.98 <= x[1] <= c["max"] * 1.02 + 1):
                bad.append("clat.%d %s: %d outside [%d, %d]" % (n, key, x[1], c["min"], c["max"]))
    # lat = slat + clat, line by line, and bw = bs x 10^6 / clat as fio computes it
    sl = rows["slat"] or [(0, 0)] * len(rows["clat"])
    for a, b, c, w in zip(rows["clat"], rows["lat"], sl, rows["bw"]):
        if b[1] != a[1] + c[1]:
            bad.append("lat.%d: %d != clat %d + slat %d" % (n, b[1], a[1], c[1]))
        if w[1] != (a[3] * 1000000 // a[1] if a[1] else 0):
            bad.append("bw.%d: %d for %d B in %d ns" % (n, w[1], a[3], a[1]))
for b in bad[:20]:
    print(b)
sys.exit(1 if bad else 0)
PY
}
PIO=(--filename="$T/data" --size=1m --bs=4k --rw=randrw --numjobs=2 --io_size=512k
	--write_bw_log=p --write_lat_log=p --write_iops_log=p --log_offset=1 --output-format=json
	--output "$PJ")
# rate-limited, so that the I/Os spread over several ms (fio2gnuplot divides by zero on a
# log whose lines all fall in its first ms, fio's own included)
(cd "$P" && expect_rc 0 "psync, two clones, per-I/O logs with offsets" run --ioengine=psync \
	--rate_iops=1000 "${PIO[@]}")
check "psync: line counts and bs sums equal each clone's I/Os and bytes" \
	check_per_io "$P" "$PJ" p 1048576 0
mkdir -p "$T/pg" && mv "$P"/p_bw.*.log "$T/pg" # for fio2gnuplot below
rm -f "$P"/*.log
(cd "$P" && expect_rc 0 "null engine, the same job" run --ioengine=null "${PIO[@]}")
check "null: line counts and bs sums exact (an asynchronous engine: slat lines)" \
	check_per_io "$P" "$PJ" p 1048576 1
if "$LLMIO" engines 2> /dev/null | grep -q '^libaio *available'; then
	rm -f "$P"/*.log
	(cd "$P" && expect_rc 0 "libaio, iodepth 4" run --ioengine=libaio --iodepth=4 "${PIO[@]}")
	check "libaio: exact, with slat lines (lat = slat + clat)" \
		check_per_io "$P" "$PJ" p 1048576 1
fi

echo "== per-I/O logs past a thread's buffer (2^18 I/Os): written out during the run, all kept"
mkdir -p "$T/big"
(cd "$T/big" && expect_rc 0 "null engine, 300000 I/Os, one thread" run --ioengine=null \
	--size=300000k --bs=1k --write_iops_log=big --output-format=json --output "$PJ")
check "300000 lines, not one lost" test "$(wc -l < "$T/big/big_iops.1.log")" = 300000
check "in completion order" sh -c "cut -d, -f1 '$T/big/big_iops.1.log' | sort -nc"
json_check "$PJ" "as many I/Os in the JSON" 'j["read"]["total_ios"] == 300000'

echo "== fio 3.33 writes the same files and columns"
if command -v fio > /dev/null; then
	# shape FILE...: per file, its columns, the iops values, directions and priorities seen
	shape() {
		for f in "$@"; do
			awk -F', ' -v f="${f##*/}" '{ print f, NF, (f ~ /iops/ ? $2 : "-"), $3, $NF }' \
				"$f" | sort -u
		done
	}
	for o in 0 1; do
		for who in fio ours; do
			mkdir -p "$T/$who$o"
			args=(--name=c --filename="$T/data" --size=1m --bs=4k --rw=randrw
				--io_size=256k --ioengine=psync --write_bw_log=s --write_lat_log=s
				--write_iops_log=s --log_offset=$o)
			if [ $who = fio ]; then
				(cd "$T/$who$o" && fio "${args[@]}" --output=/dev/null)
			else
				(cd "$T/$who$o" && "$LLMIO" run "${args[@]}" > /dev/null)
			fi
			(cd "$T/$who$o" && ls > ../$who$o.files && shape *.log > ../$who$o.shape)
		done
		check "log_offset=$o: the same log files as fio" diff "$T/fio$o.files" "$T/ours$o.files"
		check "log_offset=$o: the same columns, iops values, directions, priorities as fio" \
			diff "$T/fio$o.shape" "$T/ours$o.shape"
	done
else
	note "fio missing (Debian package fio): not compared"
fi

echo "== refused and checked"
expect_rc 2 "log_avg_msec out of range" run --ioengine=null --size=1m --log_avg_msec=4000000
(cd "$L" && expect_rc 1 "a log that cannot be written" run --ioengine=null --size=1m \
	--write_bw_log=nodir/x)
mkdir -p "$T/wl"
(cd "$L" && expect_rc 2 "a recipe's logs would go unwritten: refused" run --workload ckpt \
	--model gpt2 --directory "$T/wl" --write_bw_log=w)
expect_err "says so" "not recipes or replay"
check "no log written" test ! -e "$L/w_bw.1.log"
printf '[global]\nioengine=null\nsize=1m\n[a]\nwrite_iops_log=s\n' > "$T/s.fio"
expect_rc 2 "a sweep point's logs: refused" sweep "$T/s.fio" --dry-run
expect_err "names the file, line and key" "s.fio:5: write_iops_log" "llmio run"

echo "== fio2gnuplot draws llmio's logs"
if command -v fio2gnuplot > /dev/null && command -v gnuplot > /dev/null; then
	mkdir -p "$L/g"
	(cd "$L" && check "fio2gnuplot -b -g" fio2gnuplot -b -g -d g)
	check "fio2gnuplot rendered the bandwidth of each thread" \
		test -s "$L/g/b_bw.1-2Draw.png" -a -s "$L/g/b_bw.2-2Draw.png"
	(cd "$L" && check "fio2gnuplot -i" fio2gnuplot -i -d g)
	mkdir -p "$T/pg/g"
	(cd "$T/pg" && check "fio2gnuplot -b -g on per-I/O logs" fio2gnuplot -b -g -d g)
	check "fio2gnuplot rendered the per-I/O bandwidth" test -s "$T/pg/g/p_bw.1-2Draw.png"
else
	note "fio2gnuplot or gnuplot missing (Debian packages fio, gnuplot-nox): not drawn"
fi
finish
