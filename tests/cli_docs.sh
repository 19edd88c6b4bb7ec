#!/bin/bash
# shellcheck disable=SC2317 # on_exit and small helpers run from the trap or via check
# cli_docs.sh: docs/*.md read as reference, and dated measurements live in bench/results/.
#
# docs/*.md state method, criteria, the command that reproduces a figure and the current
# conclusion; the runs themselves (dates, times, the raw tables of one session) are archived in
# bench/results/, one file per campaign, each listed in bench/results/README.md.  This test
# keeps it so.  In the prose of docs/*.md (fenced code blocks and `inline code` are skipped:
# commands and program output are quoted as they are) it rejects:
#
#   time of day   hh:mm or hh:mm:ss with a two-digit hour 00-23 and minutes 00-59, standing
#                 alone: not preceded by a digit, letter (except the T of an ISO timestamp),
#                 '_', ':' or '.', and not followed by a digit, letter (except Z), '_' or ':'.
#                 So "17:31", "17:31-17:44" and "2026-11-30T10:50Z" are rejected, while "1:1",
#                 "10:1", "host:8080", "10.0.0.1:22", "fe80::12:34" and MAC addresses pass.
#                 A ratio such as 16:10 must be written in backticks or as "16 to 10".
#   date          an ISO date, 20yy-mm-dd ("2026-11-30"); a results file's name (2026-11-x.md)
#                 is not a date.
#   time in words "morning", "afternoon", "evening", "tonight", "yesterday".
#   tracker refs  "issue N", "issue #N", "stop N" (this project's issues and review stops),
#                 "issues 3", "Stop 12".  An upstream project's tracker is named with the
#                 project and a '#': "fio issue #1796", "liburing issue #N" pass.
#
# and in bench/results/ it requires every file other than README.md to be linked from
# README.md (`](NAME)`), every file README.md links to to exist, and every link from docs/*.md
# into bench/results/ to name a file that exists.  The rules are first run on made-up pages
# with known violations and known look-alikes, so the scanner itself is checked.
#
# LLMIO_SRC_ROOT (default: this script's tree) names the tree to check, so the test can be
# pointed at an old tree to show what it rejects.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=${LLMIO_SRC_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
[ -d "$ROOT/docs" ] || { echo "FAIL: $ROOT/docs is not a directory"; exit 1; }

# scan FILE...: prints FILE:LINE: RULE: TEXT for each violation; exit 1 if any.
scan() {
	python3 - "$@" <<'PY'
import re, sys

TIME = re.compile(r'(?<![0-9A-SU-Za-z_:.])([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?(?![0-9A-Ya-z_:])')
DATE = re.compile(r'(?<![0-9])20[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(?![0-9])')
WORDS = re.compile(r'\b(morning|afternoon|evening|tonight|yesterday)\b', re.I)
UPSTREAM = re.compile(r'\b(fio|liburing|linux|kernel|glibc|libfuzzer|pytorch|torch)\s+'
                      r'(issue|pr|pull request)s?\s+#[0-9]+', re.I)
TRACKER = re.compile(r'\b(issue|stop)s?\s+#?[0-9]+', re.I)
INLINE = re.compile(r'(`+)(?:(?!\1).)+?\1')

bad = 0
for path in sys.argv[1:]:
    fence = None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            m = re.match(r'(`{3,}|~{3,})', s)
            if m:
                if fence is None:
                    fence = m.group(1)[0] * len(m.group(1))
                elif s.startswith(fence):
                    fence = None
                continue
            if fence is not None:
                continue
            text = INLINE.sub(' ', line.rstrip('\n'))
            prose = UPSTREAM.sub(' ', text)
            for rule, rx, t in (('time of day', TIME, text), ('date', DATE, text),
                                ('time in words', WORDS, text),
                                ('issue/stop reference', TRACKER, prose)):
                hit = rx.search(t)
                if hit:
                    print(f'{path}:{n}: {rule} "{hit.group(0)}": {line.strip()}')
                    bad = 1
sys.exit(bad)
PY
}

# results_index DIR: every file of DIR but README.md is linked from README.md and every link
# of README.md names a file of DIR.
results_index() {
	local dir=$1 f name rc=0
	[ -f "$dir/README.md" ] || { echo "$dir/README.md: missing"; return 1; }
	for f in "$dir"/*; do
		name=${f##*/}
		[ "$name" = README.md ] && continue
		grep -qF "]($name)" "$dir/README.md" || { echo "$dir/README.md: $name not listed"; rc=1; }
	done
	while read -r name; do
		[ -e "$dir/$name" ] || { echo "$dir/README.md: links to $name, which does not exist"; rc=1; }
	done < <(grep -oE '\]\([^)#:]+' "$dir/README.md" | sed 's/^](//' | grep -v '/')
	return $rc
}

# results_links DOCDIR: every link from DOCDIR/*.md into ../bench/results/ names a file.
results_links() {
	local doc=$1 target rc=0
	while IFS=: read -r file target; do
		[ -e "$doc/$target" ] || { echo "$file: links to $target, which does not exist"; rc=1; }
	done < <(grep -HoE '\]\(\.\./bench/results/[^)#]*' "$doc"/*.md | sed 's/:](/:/')
	return $rc
}

# --- the scanner on made-up pages ---
mkdir -p "$T/fx"
cat >"$T/fx/ok.md" <<'EOF'
# Look-alikes that are not times, dates or issue numbers

A 1:1 mapping, a 10:1 ratio, host:8080, 10.0.0.1:22, fe80::12:34, 00:11:22:33:44:55,
`16:10` in code, fio issue #1796 and fio PR #1594 upstream, the worker issued 12 I/Os,
stops issuing, bench/results/2026-11-vs_fio.md, 1.5x at QD 32, 250-300 instructions.

```sh
date  # 17:31, 2026-11-30, issue 3 inside a code block are quoted output
```
EOF
check "the scanner passes look-alikes" scan "$T/fx/ok.md"
bad_case() { # bad_case DESC LINE: a page holding LINE is rejected, naming RULE
	printf '# x\n\n%s\n' "$2" >"$T/fx/bad.md"
	if scan "$T/fx/bad.md" >"$T/scan.out"; then
		fail "the scanner rejects $1 ($2)"
	else
		pass "the scanner rejects $1: $(cut -d: -f3- "$T/scan.out" | head -1)"
	fi
}
bad_case "a time" "taken between 13:40 and 16:40"
bad_case "a time range" "the O_DIRECT half 17:31-17:44"
bad_case "an ISO timestamp" "Run of 2026-11-30T10:50Z on vm"
bad_case "a time with seconds" "started at 09:05:59 sharp"
bad_case "a date" "until 2026-11-30 it was always iodepth"
bad_case "this afternoon" "The machine was slower this afternoon"
bad_case "in the morning" "than in the Morning"
bad_case "an issue number" "Criterion (issue 3): IOPS within 5 %"
bad_case "an issue with #" "as issue #12 asked"
bad_case "an issue's item" "issue 15's item 8"
bad_case "a stop number" "fixed at stop 12"
# shellcheck disable=SC2016 # the backticks are the page's inline code, not a command
bad_case "a time after inline code" 'see `x` at 12:00'

mkdir -p "$T/fx/results" "$T/fx/docs"
echo '| [a.md](a.md) | x |' >"$T/fx/results/README.md"
touch "$T/fx/results/a.md" "$T/fx/results/b.md"
if results_index "$T/fx/results" >"$T/idx.out"; then
	fail "an unlisted results file is reported"
else
	check "an unlisted results file is reported" grep -q 'b.md not listed' "$T/idx.out"
fi
rm "$T/fx/results/b.md" "$T/fx/results/a.md"
if results_index "$T/fx/results" >"$T/idx.out"; then
	fail "a listed file that does not exist is reported"
else
	check "a listed file that does not exist is reported" grep -q 'a.md, which does not' "$T/idx.out"
fi
echo 'Evidence: [x](../bench/results/gone.md).' >"$T/fx/docs/p.md"
if results_links "$T/fx/docs" >/dev/null; then
	fail "a doc linking to a missing results file is reported"
else
	pass "a doc linking to a missing results file is reported"
fi

# --- the tree ---
if scan "$ROOT"/docs/*.md >"$T/docs.out"; then
	pass "docs/*.md carry no time of day, date, time in words or issue/stop reference"
else
	cat "$T/docs.out"
	fail "docs/*.md read as a lab notebook ($(wc -l <"$T/docs.out") lines above; move the runs to bench/results/)"
fi
if [ -d "$ROOT/bench/results" ]; then
	check "every bench/results file is listed in bench/results/README.md" \
		results_index "$ROOT/bench/results"
else
	fail "bench/results/ is missing"
fi
check "every link from docs/ into bench/results/ names a file" results_links "$ROOT/docs"

# Every engine in the registry has its section (docs/engines.md, or docs/gpu.md for the GPU
# engines): adding an engine is its file, its registry lines and this section.
missing_sections=$("$LLMIO" engines --brief 2>/dev/null | awk '/^[a-z0-9_-]+ / { print $1 }' |
	while read -r eng; do
		grep -qx "## $eng" "$ROOT/docs/engines.md" "$ROOT/docs/gpu.md" || echo "$eng"
	done)
if [ -n "$("$LLMIO" engines --brief 2>/dev/null)" ] && [ -z "$missing_sections" ]; then
	pass "every engine has its section in docs/engines.md or docs/gpu.md"
else
	fail "engines without a section in docs/engines.md or docs/gpu.md: ${missing_sections:-none listed}"
fi

finish
