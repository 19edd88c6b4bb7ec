#!/bin/bash
# cli_journal_engines.sh: a journal record carries its engine's options as they ran (defaults
# included) in "job options"."engine_options", and report reads which config keys are engine
# options from there, not from today's engines: an old journal reports the same after an
# engine's options change.
#
# A two-point sweep (psync, mmap with populate=0) writes the journal; then the journal is
# edited as if mmap had since renamed its options (populate -> populate_gone, madvise ->
# madvise_gone).  With the records' engine_options the renamed keys are still engine options
# (no slice is split by them, no label carries them); a record without engine_options (written
# before they existed) falls back to today's engines, which no longer know the keys.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

cat >"$T/s.ini" <<EOF2
[global]
filename=$T/f
rw=read
bs=4k
size=1m
runtime=100ms

[p]
ioengine=psync,mmap
populate=0
EOF2

expect_rc 0 "a psync and an mmap point" sweep "$T/s.ini" -o "$T/j.jsonl"
check "the mmap record has its options resolved, the default madvise included" python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
eo = {r["config"]["ioengine"]: r["phases"][0]["jobs"][0]["job options"]["engine_options"]
      for r in recs}
sys.exit(not (eo["mmap"] == {"populate": 0, "madvise": "fadvise"} and eo["psync"] == {}))
' "$T/j.jsonl"

# the same journal after mmap renamed its options; and as a record older than engine_options
python3 - "$T/j.jsonl" "$T/renamed.jsonl" "$T/old.jsonl" <<'PY'
import json, sys
new, old = [], []
for line in open(sys.argv[1]):
    r = json.loads(line)
    for d in [r["config"]] + [j["job options"].get("engine_options", {})
                              for ph in r["phases"] for j in ph["jobs"]]:
        for k in ("populate", "madvise"):
            if k in d:
                d[k + "_gone"] = d.pop(k)
    new.append(json.dumps(r))
    for ph in r["phases"]:
        for j in ph["jobs"]:
            del j["job options"]["engine_options"]
    old.append(json.dumps(r))
open(sys.argv[2], "w").write("\n".join(new) + "\n")
open(sys.argv[3], "w").write("\n".join(old) + "\n")
PY

expect_rc 0 "report the journal as written" report "$T/j.jsonl" -o "$T/r" --no-charts
expect_rc 0 "report it after the engine changed" report "$T/renamed.jsonl" -o "$T/rn" --no-charts
check "the renamed engine options label no slice and no row" \
	test -z "$(grep -E '(populate|madvise)_gone=' "$T/rn/report.md")"
check "the same slices as before the change" \
	test "$(grep -c '^### ' "$T/r/report.md")" = "$(grep -c '^### ' "$T/rn/report.md")"
# the fallback for records without engine_options: today's engines, which lack the new names
expect_rc 0 "report the journal without engine_options" report "$T/old.jsonl" -o "$T/ro" \
	--no-charts
check "without engine_options the unknown keys read as swept job keys" \
	grep -qE 'populate_gone=0' "$T/ro/report.md"

finish
