#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_report_charts.sh: how `llmio report` draws (docs/report.md): one colour per engine in
# every chart (another datapath or queue depth of the engine dashed), latency CDFs on a "nines"
# tail axis (p99 .. p99.99 visible), lines broken where a datapath was not measured instead of
# drawn across the missing point, and "Swept keys" naming only the keys that took two values.
# Checked in the gnuplot script (charts.gp) the report keeps beside its charts.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

command -v gnuplot >/dev/null || skip_all "gnuplot is not installed (scripts/bootstrap.sh installs gnuplot-nox)"
SWEEP=$(cd "$(dirname "$0")/data" && pwd)/sweep.jsonl
R=$T/rep

echo "== one colour per engine, in every chart"
expect_rc 0 "report" report "$SWEEP" -o "$R"
colours() {
	python3 - "$R/charts.gp" <<'PY'
import re, sys
seen = {}
bad = []
charts = 0
for ln in open(sys.argv[1]):
    m = re.search(r'lc rgb "(#[0-9a-f]{6})".* title "([a-z_0-9]+)', ln)
    if not m:
        continue
    colour, engine = m.groups()
    seen.setdefault(engine, set()).add(colour)
for e, c in seen.items():
    if len(c) != 1:
        bad.append("%s drawn in %s" % (e, sorted(c)))
owners = {}
for e, c in seen.items():
    owners.setdefault(min(c), []).append(e)
bad += ["%s share %s" % (v, k) for k, v in owners.items() if len(v) > 1]
if set(seen) != {"psync", "libaio", "io_uring"}:
    bad.append("engines coloured: %s" % sorted(seen))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
}
check "each engine one colour across every chart, engines apart" colours
check "a second datapath of an engine is dashed" \
	grep -q 'lc rgb "#[0-9a-f]*" dt 2 title "io_uring sqpoll=1"' "$R/charts.gp"
check "the CPU bars carry the engines' colours" \
	grep -q 'using 2:xtic(1) lc rgb' "$R/charts.gp"

echo "== latency CDF on a tail axis"
cdf() {
	awk '/^# ---- chart/ { c = 0 } /^set title "Latency CDF/ { c = 1 } c' "$R/charts.gp"
}
check "the CDF's y axis is logarithmic" sh -c "$(declare -f cdf); R='$R' cdf | grep -q '^set logscale y 10'"
check "labelled in nines up to 99.99" sh -c "$(declare -f cdf); R='$R' cdf | grep -q '\"99.9\" 1000, \"99.99\" 10000'"
tail_y() {
	python3 - "$R/charts.gp" <<'PY'
import sys
# the last point of every CDF line is above the 99.9 tick: the tail is on the chart
import re
txt = open(sys.argv[1]).read()
blocks = re.findall(r"\$cdf_\d+_\d+ << EOD\n(.*?)EOD", txt, re.S)
last = [float(b.strip().split("\n")[-1].split()[1]) for b in blocks]
sys.exit(0 if last and all(y > 1000 for y in last) else 1)
PY
}
check "every CDF line reaches past the 99.9 line" tail_y

echo "== a point not measured is a gap, not a line across it"
grep -v '"ioengine": *"libaio".*"iodepth": *4\b\|"iodepth": *4\b.*"ioengine": *"libaio"' "$SWEEP" > "$T/gap.jsonl"
check "the journal lost libaio's QD 4 records" test "$(wc -l < "$T/gap.jsonl")" -lt "$(wc -l < "$SWEEP")"
expect_rc 0 "report of the journal with a hole" report "$T/gap.jsonl" -o "$T/gap"
gap() {
	python3 - "$T/gap/charts.gp" <<'PY'
import re, sys
txt = open(sys.argv[1]).read()
# the queue-depth chart's libaio series: QD 1, a blank line (QD 4 missing), QD 16
ok = False
for blk in re.finditer(r'(\$qd_tput_\d+_\d+) << EOD\n(.*?)EOD', txt, re.S):
    name, body = blk.groups()
    title = re.search(re.escape(name) + r' using [^\n]* title "([^"]*)"', txt)
    if title and title.group(1) == "libaio" and "\n\n" in body:
        xs = [l.split()[0] for l in body.split("\n") if l.strip()]
        ok |= xs == ["1", "16"] and body.split("\n\n")[0].strip().startswith("1 ")
sys.exit(0 if ok else 1)
PY
}
check "libaio's line breaks at QD 4 (a blank line in its data)" gap
check "the io_uring line of the same chart has no break" \
	sh -c "! awk '/^\\\$qd_tput_1_2 << EOD/,/^EOD/' '$T/gap/charts.gp' | grep -q '^\$'"

echo "== swept keys: only keys that varied"
swept() {
	python3 - "$SWEEP" "$R/report.md" <<'PY'
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
vals = {}
for r in recs:
    for k, v in r.get("config", {}).items():
        vals.setdefault(k, set()).add(json.dumps(v, sort_keys=True))
want = {k for k, v in vals.items() if len(v) > 1 and k not in ("repeat", "randseed")}
line = re.search(r"Swept keys: ([^.]*)\.", open(sys.argv[2]).read()).group(1)
got = {k.strip() for k in line.split(",")}
if got != want:
    print("listed %s, varied %s" % (sorted(got), sorted(want)))
    sys.exit(1)
PY
}
check "the swept keys are exactly those with two values or more" swept
check "a key of one value where present (sqpoll, numjobs) is not listed" \
	sh -c "! grep 'Swept keys' '$R/report.md' | grep -q 'sqpoll\|numjobs'"
finish
