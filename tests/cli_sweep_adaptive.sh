#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_sweep_adaptive.sh: `llmio sweep --adaptive [--compare]` and the sweep's fast path, end to
# end on the null engine (and psync on a small O_DIRECT file where the filesystem has it).
#
# The adaptive run prints how many points it ran and the answer per phase; its journal holds
# exactly those points, once each, and `llmio advise` reads it and gives the same answers.
# --compare then runs the other points only (none twice) and says whether the answers equal
# the full sweep's; --from takes the records from a journal measured before instead.  Resuming a finished adaptive run runs nothing.  The fast path (the page
# cache dropped only where a point may read through it) records the same points with the same
# I/O counts as --no-reuse; a file is prepared by the first point and reused untouched.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

cat >"$T/grid.ini" <<'EOF2'
; 2 x 3 x 3 x 2 = 36 combinations, 24 points: threads at queue depth 4 only
[global]
ioengine=null
size=16m
runtime=100ms
rw=randread,randwrite
bs=4k,64k,1m
iodepth=1,4,16
numjobs=1,2
exclude=numjobs>1 && iodepth!=4
EOF2

# records FILE: the number of records; dups FILE: hashes seen twice
records() { python3 -c 'import sys; print(sum(1 for l in open(sys.argv[1]) if l.strip()))' "$1"; }
dups() {
	python3 - "$1" <<'PYEOF'
import collections, json, sys
c = collections.Counter(json.loads(l)["config_hash"] for l in open(sys.argv[1]) if l.strip())
print(sum(1 for v in c.values() if v > 1))
PYEOF
}

"$LLMIO" sweep "$T/grid.ini" --dry-run >"$T/dry.out" 2>&1
check "the grid has 24 points" grep -q '^24 points' "$T/dry.out"

"$LLMIO" sweep "$T/grid.ini" -o "$T/a.jsonl" --adaptive -q >"$T/a.out" 2>"$T/a.err"
rc=$?
check "--adaptive exits 0 (rc $rc: $(head -c 300 "$T/a.err"))" [ "$rc" = 0 ]
n=$(sed -n 's/^adaptive: \([0-9]*\) of 24 points.*/\1/p' "$T/a.out")
check "--adaptive prints the points it ran: '$(head -n 1 "$T/a.out")'" [ -n "$n" ]
check "--adaptive ran fewer than all 24 points ($n)" [ "${n:-24}" -lt 24 ]
check "the journal holds the $n points run ($(records "$T/a.jsonl"))" [ "$(records "$T/a.jsonl")" = "${n:-x}" ]
check "no point twice in the adaptive journal" [ "$(dups "$T/a.jsonl")" = 0 ]
check "--adaptive prints the answers" grep -q '^adaptive answers' "$T/a.out"
for p in "inference" "shuffled sample loading" "activation / KV spill"; do
	check "an answer for $p" grep -q "^  $p, " "$T/a.out"
done
# no line of the output is wider than 100 columns
check "no line over 100 columns" [ "$(awk 'length > 100' "$T/a.out" | wc -l)" = 0 ]

# llmio advise reads the journal, and its best point per phase is the one printed
"$LLMIO" advise "$T/a.jsonl" --json >"$T/advise.json" 2>"$T/advise.err"
check "llmio advise reads the adaptive journal" [ $? = 0 ]
python3 - "$T/advise.json" "$T/a.out" >"$T/agree.out" 2>&1 <<'PYEOF'
import json, sys
adv = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read().splitlines()
bad = 0
for ph in adv["phases"]:
    if "best" not in ph:
        continue
    settings = ph["best"]["settings"]
    if not any(l.strip() == settings for l in out):
        print("advise says", ph["phase"], settings, "but the sweep printed something else")
        bad += 1
sys.exit(1 if bad else 0)
PYEOF
check "advise's settings per phase are the ones --adaptive printed ($(head -c 300 "$T/agree.out"))" [ $? = 0 ]

# resuming a finished adaptive run runs nothing
"$LLMIO" sweep "$T/grid.ini" -o "$T/a.jsonl" --adaptive --resume -q >"$T/r.out" 2>&1
check "--adaptive --resume exits 0" [ $? = 0 ]
check "--adaptive --resume runs no point again: $(head -n 1 "$T/r.out")" grep -q '; 0 run now, ' "$T/r.out"
check "the journal did not grow on resume" [ "$(records "$T/a.jsonl")" = "${n:-x}" ]

# --compare: the rest of the points, none twice, and the verdict
"$LLMIO" sweep "$T/grid.ini" -o "$T/c.jsonl" --adaptive --compare -q >"$T/c.out" 2>"$T/c.err"
check "--adaptive --compare exits 0 ($(head -c 300 "$T/c.err"))" [ $? = 0 ]
check "--compare says whether the answers are equal" \
	grep -Eq "^answer equals the full sweep's: (yes|no) \(3 phases" "$T/c.out"
check "--compare ran every point once (24 records)" [ "$(records "$T/c.jsonl")" = 24 ]
check "no point twice after --compare" [ "$(dups "$T/c.jsonl")" = 0 ]

# --from: the search over a journal measured before (no I/O): the records it takes are that
# journal's, byte for byte, and --compare replays the rest
"$LLMIO" sweep "$T/grid.ini" -o "$T/f.jsonl" --adaptive --from "$T/c.jsonl" --compare -q \
	>"$T/f.out" 2>"$T/f.err"
check "--adaptive --from --compare exits 0 ($(head -c 300 "$T/f.err"))" [ $? = 0 ]
check "--from: the verdict" grep -Eq "^answer equals the full sweep's: (yes|no)" "$T/f.out"
check "--from: every record is one of the measured journal's, unchanged" \
	[ "$(sort "$T/f.jsonl" | md5sum)" = "$(sort "$T/c.jsonl" | md5sum)" ]
head -n 3 "$T/c.jsonl" >"$T/part.jsonl"
"$LLMIO" sweep "$T/grid.ini" -o "$T/g.jsonl" --adaptive --from "$T/part.jsonl" -q \
	>/dev/null 2>"$T/g.err"
check "--from a journal without the point fails (exit 1)" [ $? = 1 ]
check "and says which point and why: $(head -c 200 "$T/g.err")" \
	grep -q "has no record of point #" "$T/g.err"

# usage errors
"$LLMIO" sweep "$T/grid.ini" -o "$T/u.jsonl" --from "$T/c.jsonl" >/dev/null 2>"$T/u.err"
check "--from without --adaptive is a usage error" [ $? = 2 ]
"$LLMIO" sweep "$T/grid.ini" -o "$T/u.jsonl" --compare >/dev/null 2>"$T/u.err"
check "--compare without --adaptive is a usage error" [ $? = 2 ]
"$LLMIO" sweep "$T/grid.ini" -o "$T/u.jsonl" --adaptive --shuffle >/dev/null 2>"$T/u.err"
check "--adaptive with --shuffle is a usage error" [ $? = 2 ]

# The fast path against --no-reuse: the same records but for time and the cache drops.
# size-based points (no runtime) on the null engine and psync: exact I/O counts.
strip() {
	python3 - "$1" <<'PYEOF'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    jobs = [[(j["read"]["total_ios"], j["read"]["io_bytes"], j["write"]["total_ios"],
              j["write"]["io_bytes"], j["job options"]) for j in ph["jobs"]]
            for ph in r["phases"]]
    print(json.dumps([r["config_hash"], r["config"], r["sweep"], r["workload"],
                      r["steady_state"]["enabled"], jobs, "error" in r], sort_keys=True))
PYEOF
}
drops() { python3 -c 'import json, sys; print(sum(json.loads(l)["cache_dropped"] for l in open(sys.argv[1])))' "$1"; }

mkdir -p "$T/files"
DIRECT=0
"$LLMIO" run --ioengine psync --filename "$T/files/probe" --size 64k --direct 1 \
	--rw read --bs 4k >/dev/null 2>&1 && DIRECT=1
rm -f "$T/files/probe"
{
	echo "[global]"
	echo "size=4m"
	echo "rw=randread,read"
	echo "bs=4k,64k"
	echo "[null]"
	echo "ioengine=null"
	echo "iodepth=1,8"
	if [ $DIRECT = 1 ]; then
		echo "[psync]"
		echo "ioengine=psync"
		echo "filename=prepared.dat"
		echo "direct=1"
	else
		note "no O_DIRECT in $T/files: the psync section is left out"
	fi
} >"$T/fast.ini"
"$LLMIO" sweep "$T/fast.ini" -o "$T/fast.jsonl" --dir "$T/files" -q >"$T/f.out" 2>&1
check "the default sweep runs ($(head -c 200 "$T/f.out"))" [ $? = 0 ]
if [ $DIRECT = 1 ]; then
	before=$(stat -c '%i %Y %s' "$T/files/prepared.dat")
fi
"$LLMIO" sweep "$T/fast.ini" -o "$T/plain.jsonl" --dir "$T/files" --no-reuse -q >"$T/p.out" 2>&1
check "the --no-reuse sweep runs ($(head -c 200 "$T/p.out"))" [ $? = 0 ]
strip "$T/fast.jsonl" >"$T/fast.strip"
strip "$T/plain.jsonl" >"$T/plain.strip"
check "the fast path records what --no-reuse records (but time and cache drops)" \
	cmp -s "$T/fast.strip" "$T/plain.strip"
check "and the records are not empty ($(wc -l <"$T/fast.strip") points)" [ -s "$T/fast.strip" ]
if [ $DIRECT = 1 ]; then
	check "the file prepared by the first sweep is reused untouched" \
		[ "$(stat -c '%i %Y %s' "$T/files/prepared.dat")" = "$before" ]
	if [ "$(id -u)" = 0 ]; then
		# root: --no-reuse drops before every point; the fast path before the first one and
		# the buffered (null engine) points, not between the O_DIRECT psync points
		np=$(records "$T/plain.jsonl")
		check "--no-reuse drops the cache before all $np points ($(drops "$T/plain.jsonl"))" \
			[ "$(drops "$T/plain.jsonl")" = "$np" ]
		check "the fast path skips the drop before the O_DIRECT points after the first" \
			[ "$(drops "$T/fast.jsonl")" -lt "$np" ]
	else
		note "not root: no page cache drops to count"
	fi
fi
finish
