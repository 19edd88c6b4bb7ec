#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_quick.sh: the default command, `llmio quick`, works end to end and cleans up.
#
# `quick` is what a new user runs first (it is also what plain `llmio` does), so it must
# exit 0, print the comparison table (header with GB/s/core, a row for every engine that
# can run here: io_uring, libaio, psync, mmap), the "best engine per pattern" summary, and
# leave no scratch data behind: its own DIR/llmio-quick.XXXXXX is removed, and DIR too when
# llmio created it.  With --keep the scratch file stays (full size).  --json writes one job
# per measured point and --csv one line per point.  Sizes and times are tiny (32 MiB, 100 ms per point).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

MiB=$((1024 * 1024))
ENGINES=
for e in io_uring libaio psync mmap; do
	if "$LLMIO" engines --brief 2>/dev/null | grep -Eq "^$e +available"; then
		ENGINES="$ENGINES $e"
	else
		note "engine $e is not available here: no row expected for it"
	fi
done

echo "== quick into a directory that does not exist yet, with --json and --csv"
D=$T/scratch # llmio creates one missing level, not a whole path
expect_rc 0 "quick" quick --dir "$D" --size 32m --runtime 100ms --json "$T/q.json" --csv "$T/q.csv"
expect_out "table header" "GB/s/core" "IOPS" "p99"
for e in $ENGINES; do
	check "table has rows for $e" grep -Eq "^(inference|training) .* $e " "$T/stdout"
done
expect_out "summary section" "best engine per pattern"
# rows say the depth that ran: a synchronous engine's "QD8" row ran at QD 1 and says QD1 (the
# rows of the first table are the JSON's jobs, in order)
check "every row's pattern names the QD it ran at" python3 - "$T/stdout" "$T/q.json" <<'PY'
import json, re, sys
jobs = json.load(open(sys.argv[2]))["jobs"]
rows = []
for line in open(sys.argv[1]).read().split("\n\n")[1].splitlines():
    m = re.match(r"^(inference|training) +(\S+ .*?QD(\d+)) +(\S+) ", line)
    if m:
        rows.append((int(m.group(3)), m.group(4)))
want = [(j["iodepth_effective"], j["job options"]["ioengine"]) for j in jobs]
sys.exit(0 if rows == want and len(rows) >= 8 else 1)
PY
for e in psync mmap; do
	case " $ENGINES " in *" $e "*) ;; *) continue ;; esac
	check "$e's sequential rows ran and are labelled QD1" grep -Eq "^training +1m seq read QD1 +$e +(yes|no) " "$T/stdout"
	check "$e is never a deeper pattern's best without 'at QD 1'" python3 - "$T/stdout" "$e" <<'PY'
import re, sys
summary = open(sys.argv[1]).read().split("best engine per pattern")[1]
# a long answer goes on over indented lines: one line per pattern again
summary = re.sub(r"\n {20,}", " ", summary)
for line in summary.splitlines():
    if re.search(r"QD(8|32) ", line):
        for m in re.finditer(r"\b%s\b" % sys.argv[2], line):
            if not line[m.end():].startswith(" at QD 1"):
                sys.exit(1)
PY
done
check "scratch directory llmio created is removed" test ! -e "$D"
if [ -f "$T/q.json" ]; then
	json_check "$T/q.json" "JSON: many jobs, all without error" \
		'len(d["jobs"]) >= 8 and all(x["error"] == 0 for x in d["jobs"])'
	json_check "$T/q.json" "JSON: every available engine measured" \
		'set("'"${ENGINES# }"'".split()) <= set(x["job options"]["ioengine"] for x in d["jobs"])'
	json_check "$T/q.json" "JSON: every point did I/O" \
		'all(x["read"]["total_ios"] + x["write"]["total_ios"] > 0 for x in d["jobs"])'
	NJOBS=$(json_get "$T/q.json" 'len(d["jobs"])')
	check "CSV: a header and one line per JSON job ($NJOBS)" \
		test "$(wc -l <"$T/q.csv")" -eq $((NJOBS + 1))
else
	fail "--json file not written"
fi

echo "== plain \`llmio\` (no command) runs quick; --keep keeps the scratch file"
D=$T/existing
mkdir "$D"
expect_rc 0 "llmio --keep" --dir "$D" --size 32m --runtime 100ms --keep
expect_out "no-command run printed the table" "GB/s/core" "best engine per pattern"
check "--keep: scratch file kept at full size" \
	test "$(stat -c %s "$D"/llmio-quick.*/scratch 2>/dev/null)" = $((32 * MiB))

echo "== without --keep the file goes, a directory the user made stays"
rm -r "$D"/llmio-quick.*
# two CPU-bound processes beside it: rows say the machine was busy, as their records do
yes >/dev/null &
YES1=$!
yes >/dev/null &
YES2=$!
sleep 0.5
expect_rc 0 "quick in an existing directory" quick --dir "$D" --size 32m --runtime 100ms \
	--json "$T/busy.json"
kill "$YES1" "$YES2"
wait "$YES1" "$YES2" 2>/dev/null
check "rows marked [busy machine] are the records flagged busy_system" python3 - "$T/stdout" "$T/busy.json" <<'PY'
import json, sys
rows = [l for l in open(sys.argv[1]) if l.startswith(("inference ", "training "))]
marked = sum("[busy machine]" in l for l in rows)
flagged = sum(j["busy_system"] for j in json.load(open(sys.argv[2]))["jobs"])
sys.exit(0 if rows and marked == flagged and flagged > 0 else 1)
PY
expect_out "the mark is explained" "[busy machine]: other work used the CPUs"
check "scratch data removed" test -z "$(ls -A "$D")"
check "user's directory kept" test -d "$D"

echo "== Ctrl-C during quick still cleans up"
D=$T/interrupted
# 1 s per point: the signal lands inside a point, which is then interrupted
echo "+ llmio quick --dir \$T/interrupted --size 32m --runtime 1s   (SIGINT once measuring)"
"$LLMIO" quick --dir "$D" --size 32m --runtime 1s >"$T/stdout" 2>"$T/stderr" &
QPID=$!
on_exit() { [ -n "${QPID:-}" ] && kill -KILL "$QPID" 2>/dev/null; }
# Signal once the scratch file is filled (all 32 MiB allocated and written) and measuring has
# begun: an interrupted fill is a different case (exit 1, nothing measured).  The fill
# preallocates (fallocate) before it writes, so on a busy machine the blocks are there long
# before the data: it is done when no extent is unwritten any more (filefrag, where it works).
filled() {
	[ "$(($(stat -c '%b * %B' "$D"/llmio-quick.*/scratch 2>/dev/null || echo 0)))" -ge $((32 * MiB)) ] &&
		! filefrag -v "$D"/llmio-quick.*/scratch 2>/dev/null | grep -q unwritten
}
for _ in $(seq 600); do
	filled && break
	sleep 0.1
done
sleep 0.5
kill -INT "$QPID" 2>/dev/null
reap "$QPID" 5 "quick after SIGINT"
RC=$REAPED
QPID=
check "interrupted quick exits 1, as an interrupted run (exit $RC)" test "$RC" -eq 1
expect_err "interrupted quick says so on stderr" "llmio: interrupted"
expect_out "the interrupted point is marked, not shown as a normal row" "[interrupted: not ranked]"
check "only the last row is the interrupted one" python3 - "$T/stdout" <<'PY'
import re, sys
rows = [l for l in open(sys.argv[1]) if re.match(r"^(inference|training) +\S+ .*QD\d+ ", l)]
marked = [i for i, l in enumerate(rows) if "[interrupted" in l]
sys.exit(0 if marked == [len(rows) - 1] else 1)
PY
check "interrupted quick removed its scratch directory" test ! -e "$D"

finish
