#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_compat.sh: fio users at home (docs/fio.md).
#
# fio command lines and job files run through `llmio run` with fio's meaning: every fio option
# llmio takes changes what runs (exact I/O counts on the null engine, the echo of the
# configuration, the emitted fio file), fio options llmio does not do are refused by name with
# the llmio equivalent, a job file's sections run as fio's jobs (groups split by stonewall,
# jobs of a group at the same time, group_reporting), and the JSON has fio's layout: checked
# key by key against fio's own JSON of the same job, and read by fio's own json+ tool.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

J=$T/out.json
N=(--ioengine=null --size=8m --bs=4k) # 8 MiB / 4 KiB = 2048 I/Os, exact

echo "== a fio command line: names, output format, output file, percentile list"
expect_rc 0 "fio command line" run --name=seqmix --description="read, then write" "${N[@]}" \
	--rw=readwrite --rwmixwrite=25 --time_based --group_reporting --thread \
	--output-format=json --output "$J" --percentile_list=50:99.5
check "--output-format=json --output: nothing on stdout" test ! -s "$T/stdout"
json_check "$J" "jobname is --name, desc is --description" \
	'j["jobname"] == "seqmix" and j["desc"] == "read, then write" and j["groupid"] == 0'
json_check "$J" "rw=readwrite is the sequential mix (rw), rwmixwrite=25 is rwmixread=75" \
	'j["job options"]["rw"] == "rw" and j["read"]["total_ios"] + j["write"]["total_ios"] == 2048 and j["read"]["total_ios"] > j["write"]["total_ios"] > 0'
json_check "$J" "percentile_list: exactly those percentiles" \
	'sorted(j["read"]["clat_ns"]["percentile"]) == ["50.000000", "99.500000"]'
expect_rc 0 "default percentiles" run "${N[@]}" --output-format=json --output "$J"
json_check "$J" "fio's default percentile list" \
	'list(j["read"]["clat_ns"]["percentile"]) == ["%f" % p for p in (1,5,10,20,30,40,50,60,70,80,90,95,99,99.5,99.9,99.95,99.99)]'
json_check "$J" "fio's top level and a trim direction of zeros" \
	'd["fio version"].startswith("llmio-") and "time" in d and isinstance(d["disk_util"], list) and j["trim"]["total_ios"] == 0'
expect_rc 0 "--output-format=json to stdout" run "${N[@]}" --output-format=json
json_check "$T/stdout" "stdout is the JSON alone" 'j["read"]["total_ios"] == 2048'
expect_rc 0 "--output FILE with the normal format" run "${N[@]}" --output "$T/out.txt"
check "the table went to the file" grep -q IOPS "$T/out.txt"
check "nothing on stdout" test ! -s "$T/stdout"

echo "== output a person reads: 100 columns"
expect_rc 0 "a mixed run's table" run --filename "$T/w" --size=1m --rw=randrw --numjobs=2
check "the table fits 100 columns" test "$(awk '{ if (length > m) m = length } END { print m + 0 }' "$T/stdout")" -le 100
expect_rc 0 "run --help" run --help
check "run --help fits 100 columns" test "$(awk '{ if (length > m) m = length } END { print m + 0 }' "$T/stdout")" -le 100

echo "== fio options change what runs"
expect_rc 0 "loops=2" run "${N[@]}" --loops=2 --json "$J"
json_check "$J" "loops=2 moves the bytes twice" 'j["read"]["total_ios"] == 4096'
expect_rc 0 "number_ios=100" run "${N[@]}" --number_ios=100 --json "$J"
json_check "$J" "number_ios=100: 100 I/Os" 'j["read"]["total_ios"] == 100'
expect_rc 0 "time_based=0 ends with the bytes" run "${N[@]}" --runtime=600 --time_based=0 --json "$J"
json_check "$J" "time_based=0: 2048 I/Os, not 600 s" 'j["read"]["total_ios"] == 2048'
expect_rc 0 "rate_iops" run "${N[@]}" --rate_iops=100000 --numjobs=2 --number_ios=10 --json "$J"
json_check "$J" "rate_iops is per thread, as rate: rate = 100000 x 4k" \
	'j["job options"]["rate"] == 100000 * 4096'
expect_rc 0 "randrepeat=0" run "${N[@]}" --rw=randread --randrepeat=0 --number_ios=10 --json "$J"
json_check "$J" "randrepeat=0: a fresh seed, echoed" 'j["job options"]["randseed"] != 1'
expect_rc 0 "bssplit with one size" run "${N[@]}" --bssplit=8k/100 --json "$J"
json_check "$J" "bssplit=8k/100 is bs=8k" 'j["job options"]["bs"] == 8192 and j["read"]["total_ios"] == 1024'
mkdir -p "$T/d"
expect_rc 0 "filesize" run --directory "$T/d" --nrfiles=2 --filesize=256k --bs=4k --json "$J"
json_check "$J" "filesize x nrfiles is the target" 'j["target_bytes"] == 2 * 256 * 1024'
expect_rc 0 "buffered=0" run --filename "$T/f" --size=256k --buffered=0 --json "$J"
json_check "$J" "buffered=0 is direct=1" 'j["job options"]["direct"] is True'
expect_rc 0 "emit-fio of fio's options" run "${N[@]}" --rate_iops=50 --numjobs=2 --loops=3 --emit-fio
expect_out "the emitted file carries the conversions" "rate=204800" "loops=3"

echo "== refused by name, with llmio's equivalent"
expect_rc 2 "iodepth_low" run "${N[@]}" --iodepth_low=4
expect_err "names it and the equivalent" "--iodepth_low is a fio option llmio does not do" "--iodepth"
expect_rc 2 "write_hist_log" run "${N[@]}" --write_hist_log=x
expect_err "names the equivalent" "write_hist_log" "json+"
expect_rc 2 "terse" run "${N[@]}" --output-format=terse
expect_err "terse points to CSV" "--csv"
expect_rc 2 "an unknown format" run "${N[@]}" --output-format=xml
expect_err "names it" "xml"
expect_rc 2 "bs_unaligned=1" run "${N[@]}" --bs_unaligned=1
expect_err "names it and the nearest" "bs_unaligned" "bsrange"
expect_rc 2 "bssplit percentages that do not add up to 100" run "${N[@]}" --bssplit=4k/50:8k/40
expect_err "says so" "bssplit" "add up to 90, not 100"
expect_rc 2 "a bssplit size that is not a multiple of the smallest" run "${N[@]}" --bssplit=4k/50:6k/50
expect_err "names it" "6144 is not a multiple"
expect_rc 2 "thread=0" run "${N[@]}" --thread=0
expect_rc 2 "a bad percentile_list" run "${N[@]}" --percentile_list=50:101
expect_err "names it" "percentile_list"

echo "== a fio job file: [global], bare booleans, groups, group_reporting"
cat >"$T/jobs.fio" <<'JOBS'
; fio's syntax: [global] inherited, bare booleans, stonewall and group_reporting
[global]
ioengine=null
size=8m
bs=4k
time_based
runtime=2

[a]
rw=randread

[b]
rw=randwrite

[c]
stonewall
rw=read
number_ios=100
group_reporting

[d]
rw=write
number_ios=50
JOBS
expect_rc 0 "llmio run jobs.fio" run "$T/jobs.fio" --output-format=json --output "$J"
json_check "$J" "a, b in group 0; c and d reported together as group 1" \
	'[(x["jobname"], x["groupid"]) for x in d["jobs"]] == [("a", 0), ("b", 0), ("c", 1)]'
json_check "$J" "group_reporting adds c and d up" \
	'd["jobs"][2]["read"]["total_ios"] == 100 and d["jobs"][2]["write"]["total_ios"] == 50'
json_check "$J" "a and b ran at the same time (each started before the other ended)" \
	'd["jobs"][1]["read"]["total_ios"] == 0 and all(x["job_start"] < y["job_start"] + y["job_runtime"] for x, y in ((d["jobs"][0], d["jobs"][1]), (d["jobs"][1], d["jobs"][0])))'
json_check "$J" "c (after stonewall) started after a and b ended" \
	'all(d["jobs"][2]["job_start"] >= x["job_start"] + x["job_runtime"] - 1 for x in d["jobs"][:2])'
json_check "$J" "a ran its runtime: one-second samples, fio's statistics" \
	'j["read"]["iops_samples"] >= 1 and j["read"]["iops_min"] <= j["read"]["iops_mean"] <= j["read"]["iops_max"] + 1 and j["read"]["bw_samples"] == j["read"]["iops_samples"] and j["write"]["iops_samples"] >= 1 and j["write"]["iops_max"] == 0' 
expect_rc 0 "the normal output" run "$T/jobs.fio"
expect_out "per job and per group" "a: (groupid=0)" "b: (groupid=0)" "c: (groupid=1)"

printf '[global]\nioengine=null\nsize=1m\ndirect\n[x]\nbs=4k,8k\n' >"$T/sweep.ini"
expect_rc 0 "llmio sweep reads bare booleans too (the same reader)" sweep "$T/sweep.ini" \
	-o "$T/sweep.jsonl"
check "direct=1 in every point" python3 -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
pts = [r for r in recs if r.get("config")]
sys.exit(0 if len(pts) == 2 and all(r["config"]["direct"] == 1 for r in pts) else 1)' "$T/sweep.jsonl"
printf '[x]\nioengine=null\nsize=1m\nbs\n' >"$T/bare.fio"
expect_rc 2 "a bare non-boolean" run "$T/bare.fio"
printf '[x]\nioengine=null\nsize=1m\niodepth_low=4\n' >"$T/refused.fio"
expect_rc 2 "a fio option llmio does not do, in a job file" run "$T/refused.fio"
expect_err "names it and the equivalent" "refused.fio:4: iodepth_low" "instead"
printf '[x]\nioengine=null\nsize=1m\nbs=4k,8k\n' >"$T/pair.fio"
expect_rc 2 "fio's read,write pair" run "$T/pair.fio"
expect_err "says one value" "a fio job runs one"
expect_rc 2 "job options beside a job file" run "$T/jobs.fio" --bs=8k
expect_err "says where they go" "job options go into the file"

echo "== verify: a checksummed block, checked when read; a flipped byte is caught"
V=$T/v
for a in crc32c md5 sha256; do
	expect_rc 0 "write with verify=$a (and its read-back)" run --filename "$V" --size=256k \
		--bs=16k --rw=write --verify=$a --quiet
	expect_rc 0 "read with verify=$a" run --filename "$V" --size=256k --bs=16k --rw=randread \
		--verify=$a --quiet
done
python3 -c 'import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(100000); b = f.read(1); f.seek(100000); f.write(bytes([b[0] ^ 1]))' "$V"
expect_rc 1 "a byte flipped between the write and the read" run --filename "$V" --size=256k \
	--bs=16k --rw=read --verify=sha256 --quiet
expect_err "names the file, the block's offset, expected and found" "sha256 mismatch in $V" \
	"at offset 98304" "expected " "found "
expect_rc 2 "verify needs an engine that moves data" run "${N[@]}" --verify=crc32c
# the random map writes every block once: random writes in flight together verify
expect_rc 0 "verify with random writes in flight together (the random map)" run \
	--filename "$V" --size=256k --bs=16k --rw=randwrite --numjobs=2 --ioengine=libaio \
	--iodepth=16 --verify=md5 --quiet
expect_rc 2 "... not without it" run --filename "$V" --size=256k --bs=16k --rw=randwrite \
	--numjobs=2 --verify=md5 --norandommap=1
expect_err "names the random map" "random map" "norandommap=0"
expect_rc 2 "... nor past one pass of it" run --filename "$V" --size=256k --bs=16k \
	--rw=randwrite --ioengine=libaio --iodepth=16 --verify=md5 --loops=2
expect_err "says so" "once (one pass of the random map)"
cat >"$T/verify.fio" <<'JOBS'
[global]
filename=VFILE
size=256k
bs=4k
verify=crc32c

[write]
rw=randwrite
number_ios=32

[check]
stonewall
rw=read
JOBS
sed -i "s|VFILE|$T/vf|" "$T/verify.fio"
rm -f "$T/vf"
expect_rc 1 "a job file: random writes leave blocks unwritten, the read names one" run "$T/verify.fio"
expect_err "the unwritten block has no header" "block header"
printf '[w]\nfilename=%s\nsize=256k\nbs=4k\nverify=crc32c\nrw=write\n[r]\nstonewall\nfilename=%s\nsize=256k\nbs=4k\nverify=crc32c\nrw=randread\n' "$T/vf" "$T/vf" >"$T/vw.fio"
expect_rc 0 "a job file: write then read, verified" run "$T/vw.fio" --quiet

echo "== JSON key by key against fio's JSON of the same job, and fio's json+ reader"
if command -v fio >/dev/null; then
	run fio --name=k --ioengine=null --size=8m --bs=4k --rw=randrw --output-format=json+ \
		--output "$T/fio.json"
	expect_rc 0 "the same job in llmio" run --name=k --ioengine=null --size=8m --bs=4k \
		--rw=randrw --output-format=json+ --output "$J"
	if out=$(python3 "$(dirname "$0")/fio_json_keys.py" "$T/fio.json" "$J" 2>&1
	); then pass "every fio key llmio measures is there, with fio's type"; else fail "keys: $out"; fi
else
	note "fio is not installed: the key-by-key comparison is skipped"
fi
expect_rc 0 "json+ on a mixed job" run "${N[@]}" --rw=randrw --output-format=json+ --output "$J"
json_check "$J" "clat_ns.bins count every I/O" \
	'sum(j["read"]["clat_ns"]["bins"].values()) == j["read"]["total_ios"] and sum(j["write"]["clat_ns"]["bins"].values()) == j["write"]["total_ios"]'
if command -v fio_jsonplus_clat2csv >/dev/null && python3 -c 'import six' 2>/dev/null; then
	(cd "$T" && fio_jsonplus_clat2csv "$J" "$T/clat.csv" >/dev/null 2>&1 &&
		fio_jsonplus_clat2csv "$J" "$T/clat.csv" --validate >"$T/validate.out" 2>&1)
	check "fio_jsonplus_clat2csv reads and validates llmio's json+" grep -q validated "$T/validate.out"
else
	note "fio_jsonplus_clat2csv (Debian fio package) or python3-six missing: skipped"
fi

finish
