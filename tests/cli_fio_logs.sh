#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_logs.sh: fio's logs (write_bw_log, write_lat_log, write_iops_log, log_avg_msec;
# docs/fio.md) and per-clone reports (numjobs without group_reporting).
#
# A rate-limited job of two threads writes its logs: the files fio names (NAME_bw.N.log, ...,
# one per thread), fio 3.33's line layout, interval ends on the log_avg_msec grid, and values
# that add up exactly to each thread's I/Os and bytes in the per-clone fio JSON, whose jobs add
# up exactly to the group's total.  fio's own fio2gnuplot draws the logs.

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
check "the iops logs add up to 2048 I/Os exactly (log_avg_msec 1000: value = count)" \
	test "$(cat "$T"/jl/jf_iops.[12].log | awk -F', ' '{ s += $2 } END { print s }')" = 2048
check "the bw logs add up to 8 MiB exactly (KiB)" \
	test "$(cat "$T"/jl/jf_bw.[12].log | awk -F', ' '{ s += $2 } END { print s }')" = 8192
check "reads only: no write lines" sh -c "! grep -q ', 1, 0, 0\$' '$T'/jl/jf_iops.1.log"

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
else
	note "fio2gnuplot or gnuplot missing (Debian packages fio, gnuplot-nox): not drawn"
fi
finish
