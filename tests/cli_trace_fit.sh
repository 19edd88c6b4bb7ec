#!/bin/bash
# cli_trace_fit.sh: `llmio trace report` fits the distribution of bytes over files, live: a
# program (Python, traced by llmio) writes 2,000 files whose sizes are drawn from a known law,
# then reads them back.
#   - power law, alpha 2.5 above 4 KiB: the report's exponent is within 10 % of 2.5 (its
#     standard error at this size is about 1.5 %), and the verdict is "power law";
#   - lognormal sizes: the verdict is "not a power law", with the likelihood ratio against the
#     lognormal in the JSON;
#   - the text report says the same as the JSON; -o writes the rank-size plot's data (and the
#     PNG and SVG where gnuplot is installed).
# (tests/test_fit.c checks the fit itself at 10^4 values: exponents within 5 %.)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -n "$PY" ] || skip_all "no python3 to run the traced program"

# write_files DIR LAW: 2,000 files, sizes drawn by LAW (power or lognormal), seed fixed
cat >"$T/prog.py" <<'PYEOF'
import math, os, random, sys
d, law = sys.argv[1], sys.argv[2]
rng = random.Random(20261204)
os.makedirs(d, exist_ok=True)
for i in range(2000):
    if law == "power":
        n = int(4096 * (1 - rng.random()) ** (-1 / 1.5))
    else:
        n = int(math.exp(rng.gauss(9.5, 1.0)))
    n = min(n, 16 << 20)
    p = os.path.join(d, "f%04d" % i)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.write(fd, b"x" * n)
    os.close(fd)
PYEOF

for law in power lognormal; do
	echo "== $law"
	llmio trace -q -o "$T/$law.trace" -- "$PY" "$T/prog.py" "$T/$law" "$law"
	check "$law: traced (exit $RC)" [ "$RC" -eq 0 ]
	llmio trace report "$T/$law.trace" --json
	check "$law: report --json (exit $RC)" [ "$RC" -eq 0 ]
	cp "$T/stdout" "$T/$law.json"
	llmio trace report "$T/$law.trace" -o "$T/$law-plots"
	check "$law: text report (exit $RC)" [ "$RC" -eq 0 ]
	tr -s '\n ' ' ' <"$T/stdout" >"$T/$law.txt" # the report wraps at 100 columns
	rm -rf "$T/$law"
done

check "power law: alpha within 10 % of 2.5, verdict 'power law'" python3 - "$T/power.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["distribution"]["bytes"]
print(b)
assert b["files"] >= 2000, b
assert abs(b["alpha"] - 2.5) / 2.5 < 0.10, b
assert 0 < b["alpha_stderr"] < 0.1, b
assert b["verdict"] == "power law", b
assert b["vs_exponential"]["R"] > 0, b
PY
check "lognormal: verdict 'not a power law', the ratio against the lognormal given" \
	python3 - "$T/lognormal.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["distribution"]["bytes"]
print(b)
assert b["verdict"] == "not a power law", b
assert "R" in b["vs_lognormal"] and "p" in b["vs_lognormal"], b
PY
check "text: the power law's line" grep -qE 'bytes over files: power law: alpha 2\.[0-9]+ \+- ' \
	"$T/power.txt"
check "text: the lognormal's line" grep -qE 'bytes over files: not a power law: .*against lognormal R -?[0-9.]+' \
	"$T/lognormal.txt"
check "rank-size data: one row per file, rank 1 the largest" python3 - "$T/power-plots/ranksize.dat" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("#")]
assert len(rows) >= 2000, len(rows)
b = [int(r[1]) for r in rows]
assert b == sorted(b, reverse=True) and rows[0][0] == "1", rows[:3]
PY
if command -v gnuplot >/dev/null; then
	check "rank-size plot: PNG and SVG" test -s "$T/power-plots/ranksize.png" -a \
		-s "$T/power-plots/ranksize.svg"
fi

finish
