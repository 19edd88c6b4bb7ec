#!/usr/bin/env bash
# CI's fresh-machine stage: the README's first command (`make run`) on a machine that lacks one
# of the project's packages, as a fresh Debian 12 machine does.  A leaf package (nothing else
# depends on it) is removed first, so the bootstrap has to decide that apt can fetch and
# install it; the stage passes when the package is back and llmio answered.  The machine's
# other packages stay as they were.  Run as root (CI's machines are); without apt it skips.
#   scripts/ci_fresh.sh [PACKAGE]   (default s3fs: a leaf the s3 comparisons use)
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=${1:-s3fs}
if ! command -v apt-get >/dev/null || [ "$(id -u)" -ne 0 ]; then
	echo "ci_fresh: skipped: needs apt-get and root"
	exit 0
fi
rdeps=$(apt-cache rdepends --installed "$pkg" 2>/dev/null | awk 'NR > 2 { print $1 }' | tr -d '|' | sort -u)
if [ -n "$rdeps" ]; then
	echo "ci_fresh: $pkg is not a leaf here (installed packages depend on it: $rdeps)" >&2
	exit 1
fi
if dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
	echo "ci_fresh: removing $pkg, as a fresh machine lacks it"
	DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "$pkg" >/dev/null
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
rc=0
make --no-print-directory run >"$log" 2>&1 || rc=$?
took=$(($(date +%s) - start))
tail -n 25 "$log"
if [ $rc -ne 0 ]; then
	echo "ci_fresh: FAILED: make run exited $rc after $took s (output above)" >&2
	exit 1
fi
if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
	echo "ci_fresh: FAILED: make run passed but did not install $pkg" >&2
	exit 1
fi
if ! grep -q '^best engine per pattern' "$log"; then
	echo "ci_fresh: FAILED: make run printed no answer (output above)" >&2
	exit 1
fi
echo "ci_fresh: make run installed $pkg and answered in $took s"
