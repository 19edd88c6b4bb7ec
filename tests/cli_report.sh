#!/bin/bash
# cli_report.sh: `llmio report` draws its charts with gnuplot: every chart as a valid PNG and
# SVG, the HTML references only files the report wrote, the report is published whole or
# not at all (gnuplot missing or failing leaves no directory and keeps an earlier report).
# Tables and the advisor are checked in cli_advise.sh.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

command -v gnuplot >/dev/null || skip_all "gnuplot is not installed (scripts/bootstrap.sh installs gnuplot-nox)"
SWEEP=$(cd "$(dirname "$0")/data" && pwd)/sweep.jsonl
R=$T/rep

echo "== report with charts"
expect_rc 0 "report" report "$SWEEP" -o "$R"
expect_out "says where the report is" "$R/index.html"
for f in report.md index.html charts.gp qd-tput-1 qd-p99-1 qd-tput-2 bs-iops-1 cdf-1 \
	cpu-efficiency phase-wall-1 phase-tput-1; do
	case $f in
	*.*) check "$f written" test -s "$R/$f" ;;
	*) check "$f.png and $f.svg written" test -s "$R/$f.png" -a -s "$R/$f.svg" ;;
	esac
done
check "no temporary directory left" test -z "$(ls -d "$R".tmp.* "$R".old.* 2>/dev/null)"
check "no gnuplot log left" test ! -e "$R/gnuplot.log"
out=$(python3 - "$R" <<'PY'
import os, re, struct, sys
d = sys.argv[1]
bad = []
files = set(os.listdir(d))
for f in sorted(files):
    p = os.path.join(d, f)
    if f.endswith(".png"):
        b = open(p, "rb").read(33)
        w, h = struct.unpack(">II", b[16:24]) if len(b) >= 24 else (0, 0)
        if b[:8] != b"\x89PNG\r\n\x1a\n" or b[12:16] != b"IHDR" or (w, h) != (1000, 560):
            bad.append("%s: not a 1000x560 PNG (%r, %dx%d)" % (f, b[:16], w, h))
        if f[:-4] + ".svg" not in files:
            bad.append("%s: no SVG twin" % f)
    elif f.endswith(".svg"):
        t = open(p).read()
        if not (t.lstrip().startswith("<?xml") or t.lstrip().startswith("<svg")) or "</svg>" not in t:
            bad.append("%s: not an SVG document" % f)
        if "<script" in t:
            bad.append("%s: has a script" % f)
html = open(os.path.join(d, "index.html")).read()
refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
if len(refs) < 20:
    bad.append("only %d references in the HTML" % len(refs))
for r in refs:
    if "/" in r or ":" in r or r not in files:
        bad.append("HTML references %r, not a file of the report" % r)
if "<script" in html or "http" in html.split("<body>")[0]:
    bad.append("HTML loads something from outside")
md = open(os.path.join(d, "report.md")).read()
for r in re.findall(r'\]\(([^)]*)\)', md):
    if r not in files:
        bad.append("Markdown links %r, not a file of the report" % r)
for title in ("Throughput vs queue depth", "p99 completion latency vs queue depth", "IOPS vs block size",
              "Latency CDF", "CPU efficiency", "Wall time per phase", "Throughput per phase"):
    if title not in md:
        bad.append("no chart titled %r" % title)
print("\n".join(bad) if bad else "ok")
PY
)
check "PNGs valid, SVGs valid, HTML and Markdown reference only the report's files: $out" \
	test "$out" = ok
check "charts have axis labels with units" grep -qF 'set ylabel "throughput (GB/s = 10^9 bytes/s)"' "$R/charts.gp"
check "charts have a legend" grep -qF 'set key outside' "$R/charts.gp"

echo "== a second report replaces the first whole"
echo stale >"$R/qd-tput-9.png"
expect_rc 0 "report over an earlier report" report "$SWEEP" -o "$R"
check "stale file of the earlier report gone" test ! -e "$R/qd-tput-9.png"
check "new report present" test -s "$R/index.html"

echo "== gnuplot missing or failing: nothing published"
export LLMIO_GNUPLOT=$T/no-gnuplot
expect_rc 1 "gnuplot missing" report "$SWEEP" -o "$T/r2"
expect_err "says how to fix it" "gnuplot" "gnuplot-nox" "--no-charts"
check "no report directory" test ! -e "$T/r2"
no_outputs "no temporary directory" "$T/r2"
export LLMIO_GNUPLOT=/bin/false
expect_rc 1 "gnuplot fails" report "$SWEEP" -o "$R"
expect_err "names gnuplot's failure" "gnuplot failed"
check "earlier report kept" test -s "$R/index.html" -a -s "$R/qd-tput-1.png"
check "no temporary directory" test -z "$(ls -d "$R".tmp.* "$R".old.* 2>/dev/null)"
unset LLMIO_GNUPLOT
finish
