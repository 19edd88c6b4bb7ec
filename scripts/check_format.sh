#!/usr/bin/env bash
# Fails when a tracked C or C++ file differs from what clang-format (.clang-format) would make
# of it, or uses a banned call.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' '*.cpp' 2>/dev/null || find src include tests examples -name '*.[ch]' -o -name '*.cpp')
bad=0
for f in $files; do
	if ! clang-format --style=file "$f" | cmp -s - "$f"; then
		echo "format: $f differs from clang-format (run: make format)"
		bad=1
	fi
done
if grep -nE '\b(sprintf|strcpy|strcat|atoi|atol|gets)\s*\(' $files; then
	echo "banned call above: use snprintf, bounded copies, strtol with checks"
	bad=1
fi
exit $bad
