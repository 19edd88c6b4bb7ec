#!/bin/bash
# cli_trace_tail.sh: how each read was served, live, against the kernel's own page-cache
# residency (fincore, util-linux) as the witness.  A traced program drops a 16 MiB file from
# the page cache (posix_fadvise DONTNEED after fsync), asks fincore how much of it is resident,
# reads it in 64 KiB preads (phase cold), asks fincore again, and reads it again (phase warm).
#   - fincore: nothing resident before the cold pass, all of it before the warm one;
#   - the warm pass: every pread served by the page cache;
#   - the cold pass: its first pread served by the device (nothing was resident), and at least
#     one device read in all; the report's tail table and JSON say the same;
#   - the untraced program reads the same bytes (the served read changes nothing it sees).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] || skip_all "no python3 to run the traced program"
command -v fincore >/dev/null || skip_all "fincore (util-linux) is not installed"

F=$T/cold
dd if=/dev/urandom of="$F" bs=1M count=16 conv=fsync status=none
cat >"$T/prog.py" <<'PYEOF'
import hashlib, os, subprocess, sys
import llmio_phase
path, out = sys.argv[1], sys.argv[2]

def resident():
    r = subprocess.run(["fincore", "-b", "-n", "-o", "RES", path], capture_output=True, text=True)
    return int(r.stdout.split()[0])

fd = os.open(path, os.O_RDONLY)
os.fsync(fd)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
before = resident()
h = hashlib.sha256()
with llmio_phase.phase("cold"):
    for i in range(256):
        h.update(os.pread(fd, 65536, i * 65536))
middle = resident()
with llmio_phase.phase("warm"):
    for i in range(256):
        h.update(os.pread(fd, 65536, i * 65536))
os.close(fd)
open(out, "w").write("%d %d %s\n" % (before, middle, h.hexdigest()))
PYEOF

run env PYTHONPATH="$SRC/python" "$PY" "$T/prog.py" "$F" "$T/plain.out"
check "untraced run (exit $RC)" [ "$RC" -eq 0 ]
run env PYTHONPATH="$SRC/python" "$LLMIO" trace -q -o "$T/t.trace" -- "$PY" "$T/prog.py" "$F" \
	"$T/traced.out"
check "traced run (exit $RC)" [ "$RC" -eq 0 ]
read -r before middle sum <"$T/traced.out"
read -r _ _ plain_sum <"$T/plain.out"
check "the program read the same bytes traced and untraced" test "$sum" = "$plain_sum"
if [ "$before" -ne 0 ]; then
	skip_all "the kernel kept $before bytes of the dropped file resident (DONTNEED refused): no cold pass"
fi
check "fincore: all 16 MiB resident before the warm pass ($middle)" test "$middle" -eq $((16 << 20))

llmio trace dump "$T/t.trace"
cp "$T/stdout" "$T/dump"
check "warm: every pread served by the page cache" python3 - "$T/dump" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
warm = [r for r in rows if r[3] == "warm" and r[4] == "pread"]
assert len(warm) == 256, len(warm)
assert all(r[-1] == "served=cache" for r in warm), [r[-1] for r in warm if r[-1] != "served=cache"][:5]
cold = [r for r in rows if r[3] == "cold" and r[4] == "pread"]
assert len(cold) == 256, len(cold)
assert cold[0][-1] == "served=device", cold[0]
assert all(r[-1] in ("served=cache", "served=device") for r in cold), cold[:3]
PY
llmio trace report "$T/t.trace" --json
cp "$T/stdout" "$T/r.json"
check "JSON: device reads only in cold; none in warm" python3 - "$T/r.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tails"]
cold, warm = t["by_phase"]["cold"]["reads"], t["by_phase"]["warm"]["reads"]
assert cold["device"] >= 1 and warm["device"] == 0 and warm["page_cache"] == 256, (cold, warm)
assert t["by_call"]["pread"]["reads"]["device"] == cold["device"], t["by_call"]["pread"]
PY
llmio trace report "$T/t.trace"
check "text: the tail table" grep -qE '^  phase warm +256 +0\.0% 100\.0%' "$T/stdout"

finish
