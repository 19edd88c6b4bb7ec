#!/bin/bash
# cli_layering.sh: data flows one way, CLI -> library -> report (docs/DESIGN.md, "Rules that
# hold everywhere"), and each source file is compiled into one target.
#
#  - nothing below src/cli includes a header of src/cli (the report layer and the trace tools
#    own their formatting: src/report/fmt.h);
#  - no CMakeLists.txt names a file of another directory's target (src/report/table.c was once
#    compiled into both llmio and the trace tools);
#
# The checks read the source tree next to this script, so they need no build of their own.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/../src" && pwd)
ROOT=$(dirname "$SRC")

bad=$(grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"cli/' \
	"$SRC" | grep -v "^$SRC/cli/" | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "no file outside src/cli includes cli/"
else
	fail "files outside src/cli include cli/ (move what they need into their own layer):"
	echo "$bad"
fi

# a CMakeLists.txt that lists src/<dir>/<file>.c of another directory compiles it a second time
bad=$(find "$ROOT" -name CMakeLists.txt -not -path '*/build*' -print0 |
	xargs -0 grep -n 'src/report/[a-z_]*\.c\|src/cli/[a-z_]*\.c' | sed "s|^$ROOT/||")
if [ -z "$bad" ]; then
	pass "no CMakeLists.txt compiles a single file of src/report or src/cli into another target"
else
	fail "a CMakeLists.txt compiles a report/cli file by name (link llmio_report instead):"
	echo "$bad"
fi

finish
