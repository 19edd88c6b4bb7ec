#!/bin/bash
# cli_advise.sh: `llmio advise` and the report's tables on fixture journals whose answers are
# known (tests/data/make_journals.py writes them and says why), torn lines, bad input.
# No charts here (--no-charts): tests/cli_report.sh covers gnuplot.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

DATA=$(cd "$(dirname "$0")/data" && pwd)
SWEEP=$DATA/sweep.jsonl
THIN=$DATA/thin.jsonl

echo "== advise picks the known best datapath per phase"
expect_rc 0 "advise fixture" advise "$SWEEP"
expect_out "table header" "phase" "served by" "best datapath" "settings" "metric" "vs runner-up" \
	"evidence"
check "inference: io_uring sqpoll=1" grep -Eq '^inference +\| device +\| io_uring sqpoll=1 ' "$T/stdout"
check "training: libaio" grep -Eq '^pre-training / fine-tuning +\| device +\| libaio ' "$T/stdout"
check "checkpointing: libaio" grep -Eq '^checkpointing +\| device +\| libaio ' "$T/stdout"
check "model loading: io_uring" grep -Eq '^model loading +\| device +\| io_uring ' "$T/stdout"
check "no page-cache rows: every fixture point is O_DIRECT" \
	test -z "$(grep -E '^[a-zA-Z /-]+ \*? *\| page cache' "$T/stdout")"
expect_out "ratios over the runner-up" "1.17x lower p99 than io_uring" "1.33x GB/s over io_uring" \
	"1.19x GB/s over libaio"
expect_out "study comparison" "agrees: io_uring sqpoll=1 is best here"
expect_rc 0 "advise --json" advise "$SWEEP" --json
cp "$T/stdout" "$T/a.json"
json_check "$T/a.json" "JSON: best per phase" \
	'[(x["phase"], x["best"]["datapath"], x["verdict"]) for x in d["phases"][:4]] == [("inference", "io_uring sqpoll=1", "decided"), ("pre-training / fine-tuning", "libaio", "decided"), ("checkpointing", "libaio", "decided"), ("model loading", "io_uring", "decided")]'
json_check "$T/a.json" "JSON: every answer is for the device class, the best points served by it" \
	'all(x["service_class"] == "device" for x in d["phases"]) and all(x["best"]["service"] == "device" for x in d["phases"][:4])'
json_check "$T/a.json" "JSON: inference at QD 4 (QD 1 is below adequate IOPS), p99 bucket of 120 us" \
	'd["phases"][0]["best"]["iodepth"] == 4 and abs(d["phases"][0]["best"]["p99_ns"] - 120320) < 1'
json_check "$T/a.json" "JSON: evidence = the 3 repeats' config hashes, all in the journal" \
	'len(d["phases"][0]["best"]["evidence"]) == 3 and all(h in open("'"$SWEEP"'").read() for h in d["phases"][0]["best"]["evidence"])'
json_check "$T/a.json" "JSON: ratio and spread" \
	'abs(d["phases"][2]["ratio"] - 2.0 / 1.5) < 1e-9 and abs(d["phases"][2]["best"]["spread_pct"] - 5.0) < 1e-6'

echo "== passthrough is one of the study's paths for small random reads"
# the fixture with its io_uring sqpoll=1 points turned into uring_cmd iopoll=1 ones
sed -e '/sqpoll=1/{s/"ioengine":"io_uring"/"ioengine":"uring_cmd"/g;s/sqpoll=1/iopoll=1/g}' \
	"$SWEEP" >"$T/passthrough.jsonl"
expect_rc 0 "advise the passthrough fixture" advise "$T/passthrough.jsonl"
check "inference: uring_cmd iopoll=1" \
	grep -Eq '^inference +\| device +\| uring_cmd iopoll=1 ' "$T/stdout"
expect_out "and it agrees with the study" "agrees: uring_cmd iopoll=1 is best here"

echo "== a thin journal: too thin, and what to try next"
expect_rc 0 "advise thin fixture" advise "$THIN"
expect_out "too thin said, with reasons and next steps" "too thin" \
	"only one datapath measured (psync)" "fewer than 3 repeats" "try:" "--repeat 3"
expect_rc 0 "advise thin --json" advise "$THIN" --json
cp "$T/stdout" "$T/t.json"
json_check "$T/t.json" "JSON: verdicts of the thin journal" \
	'[x["verdict"] for x in d["phases"][:4]] == ["too thin", "too thin", "no data", "too thin"]'

echo "== like with like: page-cache points never rank against device-bound ones"
CLASSES=$DATA/classes.jsonl
expect_rc 0 "advise the page-cache fixture" advise "$CLASSES"
check "model loading, device: io_uring (not mmap at 12.7 GB/s from the page cache)" \
	grep -Eq '^model loading +\| device +\| io_uring ' "$T/stdout"
check "pre-training, device: io_uring" grep -Eq '^pre-training / fine-tuning +\| device +\| io_uring ' "$T/stdout"
check "model loading, page cache: mmap, labelled" \
	grep -Eq '^model loading +\| page cache +\| mmap ' "$T/stdout"
check "the device answer comes first" test "$(grep -nE '^model loading +\| device' "$T/stdout" | head -n 1 | cut -d: -f1)" -lt \
	"$(grep -nE '^model loading +\| page cache' "$T/stdout" | head -n 1 | cut -d: -f1)"
check "mmap and buffered psync are no device runner-up" \
	test -z "$(grep -E '^(model loading|pre-training / fine-tuning) +\| device .*over (mmap|psync) ' "$T/stdout")"
expect_out "the classes are explained" "ranked only among" "themselves, never against device-bound ones"
expect_rc 0 "advise the page-cache fixture --json" advise "$CLASSES" --json
cp "$T/stdout" "$T/c.json"
json_check "$T/c.json" "JSON: model loading device -> io_uring, page-cache -> mmap over psync" \
	'[(x["service_class"], x["best"]["datapath"], x["runner_up"]["datapath"]) for x in d["phases"] if x["phase"] == "model loading"] == [("device", "io_uring", "libaio"), ("page-cache", "mmap", "psync")]'
json_check "$T/c.json" "JSON: the older mmap record's verdict derived from its device counters" \
	'[x["best"]["service"] for x in d["phases"] if x["phase"] == "model loading"] == ["device", "page-cache"] and [x["best"]["service_reason"] for x in d["phases"] if x["phase"] == "model loading"][1].startswith("device read 0.5% of")'
json_check "$T/c.json" "JSON: no study agreement claimed for page-cache answers" \
	'all("agrees_with_study" not in x for x in d["phases"] if x["service_class"] != "device")'

echo "== every pattern the study sweeps feeds an advisor class"
json_check "$T/c.json" "JSON: randrw, randwrite, randread 1m, small read, small write each decided" \
	'{x["phase"]: (x["best"]["rw"], x["best"]["datapath"]) for x in d["phases"] if x["service_class"] == "device" and "best" in x and x["phase"] not in ("pre-training / fine-tuning", "model loading")} == {"KV-cache offload": ("randrw", "libaio"), "activation / KV spill": ("randwrite", "io_uring"), "shuffled sample loading": ("randread", "io_uring"), "dataset streaming": ("read", "io_uring"), "dataset preparation": ("write", "libaio")}'

echo "== report marks page-cache points"
expect_rc 0 "report the page-cache fixture" report "$CLASSES" -o "$T/pc" --no-charts
check "overview counts them" grep -qF 'Not device-bound: 2 points served by the page cache' "$T/pc/report.md"
check "All points says who served each" grep -qE '^\| job \| run \| mmap \| read \| 1m \| 1 \| 1 \| 0 \| page-cache \|' "$T/pc/report.md"
check "O_DIRECT points served by the device" grep -qE '^\| job \| run \| io_uring \| read \| 1m \| 8 \| 1 \| 1 \| device \|' "$T/pc/report.md"
check "chart tables name the page-cache series" grep -qF 'mmap (page cache)' "$T/pc/report.md"
check "the same in the HTML" grep -qF 'mmap (page cache)' "$T/pc/index.html"
check "advice table in the report has the page-cache row" \
	grep -qF '| model loading | page cache | mmap |' "$T/pc/report.md"

echo "== values out of range in a journal are refused, never cast"
python3 - "$SWEEP" "$T/range.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
out = []
for n, line in enumerate(lines):
    r = json.loads(line)
    c = r.get("config", {})
    if c.get("ioengine") == "io_uring" and c.get("rw") == "read" and c.get("iodepth") == 8 and "sqpoll" not in c:
        jo = r["phases"][0]["jobs"][0]["job options"]
        if r["sweep"]["repeat"] == 0:
            jo["bs"] = 1e300       # the issue's reproducer
            r["phases"][0]["jobs"][0]["read"]["bw_bytes"] = 1e12  # would win if it were read
        elif r["sweep"]["repeat"] == 1:
            jo["iodepth"] = -5
    out.append(json.dumps(r))
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
expect_rc 0 "advise a journal with bs 1e300 and iodepth -5" advise "$T/range.jsonl"
expect_err "the bad records are skipped, named with their line and value" \
	"record skipped: bs 1e+300 is not a whole number" "record skipped: iodepth -5 is not a whole number"
check "no recommendation of bs=0 or a wrapped iodepth" \
	test -z "$(grep -E 'bs=0 |iodepth=4294967' "$T/stdout")"
expect_out "the rest of the journal still advises" "model loading"
expect_rc 0 "report the same journal" report "$T/range.jsonl" -o "$T/range" --no-charts
check "skipped records counted as invalid lines" grep -qF '2 torn or invalid lines skipped' "$T/range/report.md"

echo "== report tables (no charts) hold the expected numbers"
expect_rc 0 "report --no-charts" report "$SWEEP" -o "$T/r" --no-charts
check "report.md and index.html written" test -s "$T/r/report.md" -a -s "$T/r/index.html"
check "no chart files without charts" test -z "$(ls "$T/r" | grep -Ev '^(report.md|index.html)$')"
check "GB/s by QD (medians: 0.98x, 1x, 1.03x repeats)" \
	grep -qF '| 16 | 0.041 | 0.492 | 0.573 | 0.614 |' "$T/r/report.md"
check "IOPS by block size at QD 16" grep -qF '| 64 | - | 48000 | 56000 | - |' "$T/r/report.md"
check "same numbers in the HTML" \
	grep -qF '<tr><td>16</td><td>0.041</td><td>0.492</td><td>0.573</td><td>0.614</td></tr>' \
	"$T/r/index.html"
# psync randread 4k QD 1: the three repeats alone say p99 100, 100, 3000 us; merged, the
# 29700th of 30000 I/Os lies in the bucket of 1 ms: [999424, 1007616) ns, midpoint 1003.5 us.
check "merged-histogram p99 (hand-computed 1003.5 us)" \
	grep -qE '^\| psync \| 1 \| 30000 \| 30\.1 \| 39\.2 \| 1003\.5 \|' "$T/r/report.md"
EXPECT=$(python3 - "$SWEEP" <<'PY'
import json, sys
def low(i):
    if i < 128: return i
    i -= 128; e = 7 + (i >> 6); return (64 + (i & 63)) << (e - 6)
def val(i):
    if i < 128: return i
    return low(i) + (1 << (7 + ((i - 128) >> 6) - 6)) // 2
b, mn, mx = {}, None, 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    c = r["config"]
    if r.get("workload") != "job" or c.get("ioengine") != "psync" or c.get("bs") != 4096 or c.get("iodepth") != 1:
        continue
    for j in r["phases"][0]["jobs"]:
        for i, n in j["histogram"]["read"]["clat_ns"]:
            b[i] = b.get(i, 0) + n
        mn = j["read"]["clat_ns"]["min"] if mn is None else min(mn, j["read"]["clat_ns"]["min"])
        mx = max(mx, j["read"]["clat_ns"]["max"])
n = sum(b.values()); rank = -(-99 * n // 100); seen = 0
for i in sorted(b):
    seen += b[i]
    if seen >= rank:
        print("%.1f" % (min(max(val(i), mn), mx) / 1e3)); break
PY
)
check "merged p99 matches an independent merge of the raw buckets ($EXPECT us)" \
	test "$EXPECT" = "1003.5"
check "failed point listed" grep -qF 'iopoll needs a device with poll queues' "$T/r/report.md"
check "advisor table in the report" grep -qF '| inference | device | io_uring sqpoll=1 |' "$T/r/report.md"

echo "== torn lines are reported with their line number and ignored"
cp "$SWEEP" "$T/torn.jsonl"
head -c 700 "$SWEEP" >>"$T/torn.jsonl" # a record cut short: no newline
expect_rc 0 "advise with a torn last line" advise "$T/torn.jsonl" --json
expect_err "torn last line warned" "line 89 is incomplete"
cp "$T/stdout" "$T/torn.json"
json_check "$T/torn.json" "torn line not parsed as data" 'd["records"] == 88'
{ head -n 3 "$SWEEP"; echo '{"record": "point", "config_hash": '; tail -n +4 "$SWEEP"; } >"$T/mid.jsonl"
expect_rc 0 "report with a broken line in the middle" report "$T/mid.jsonl" -o "$T/m" --no-charts
expect_err "broken middle line warned" "line 4 is not valid JSON"
check "88 records still read" grep -qF '88 records' "$T/m/report.md"

echo "== bad input"
expect_rc 2 "missing journal" advise "$T/nope.jsonl"
expect_err "names the file" "nope.jsonl"
printf 'hello\nworld\n' >"$T/text.jsonl"
expect_rc 2 "not a journal" report "$T/text.jsonl" -o "$T/x" --no-charts
check "nothing written for a bad journal" test ! -e "$T/x"
no_outputs "no temporary directory left" "$T/x"
mkdir "$T/mine" && echo keep >"$T/mine/notes.txt"
expect_rc 2 "refuses a directory that is not a report" report "$SWEEP" -o "$T/mine" --no-charts
check "user's directory untouched" grep -q keep "$T/mine/notes.txt"
expect_rc 2 "two journals" advise "$SWEEP" "$THIN"
expect_rc 2 "unknown option" report "$SWEEP" --frobnicate
expect_rc 0 "advise --help" advise --help
expect_out "help names the rules" "too thin" "docs/report.md"
finish
