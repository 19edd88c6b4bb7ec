#!/usr/bin/env bash
# bench/verify_cpu.sh: what verify= costs in CPU, llmio beside fio.  For each algorithm, each
# tool writes a file with its own block headers (llmio's and fio's layouts differ, so neither
# reads the other's), the files are read once so that they are in the page cache, and then each
# tool reads its own file with verify=ALGO and with verify=none, interleaved, REPS rounds.
#
#   bench/verify_cpu.sh [LLMIO] [REPS]        (defaults build/llmio 5)
#
# SIZE (default 1g) and BS (default 128k) size the files and the reads; ALGOS (default "crc32c
# md5 sha256") picks the algorithms; VERIFY_BENCH_DIR (default /var/tmp) holds the two files.
# Both tools run psync, one thread, invalidate=0 (both drop the file's cache by default), so
# that every row is a cached read: no device in it.
#
# A row's CPU is the user + system seconds of the tool's process and its threads (wait4's
# rusage), start-up included; CPU-s per GB divides by the file's bytes (decimal GB).  The
# table prints min / median / max of the rounds and the ratio of the medians, llmio over fio
# (the target: at most 1), and the verify's own share: the verify=ALGO median minus the
# verify=none median of the same tool.  The load average is printed before and after: on a
# busy machine the rusage seconds grow with it (caches, frequency), for both tools alike.
set -euo pipefail
cd "$(dirname "$0")/.."
LLMIO=$(realpath "${1:-build/llmio}")
REPS=${2:-5}
SIZE=${SIZE:-1g}
BS=${BS:-128k}
ALGOS=${ALGOS:-"crc32c md5 sha256"}
command -v fio >/dev/null || { echo "verify_cpu.sh: fio is not installed (scripts/bootstrap.sh)" >&2; exit 1; }
[ -x "$LLMIO" ] || { echo "verify_cpu.sh: $LLMIO is not an executable: build first" >&2; exit 1; }
W=$(mktemp -d "${VERIFY_BENCH_DIR:-/var/tmp}/llmio-verify-cpu.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W" # fio's verify state files, if any, land here
BYTES=$(numfmt --from=iec "${SIZE^^}")

# cpu CMD...: the user + system seconds of CMD (and its threads); fails when CMD does
cpu() {
	python3 - "$@" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
if status:
    sys.exit("%s: exit status %d: %s" % (sys.argv[1], os.waitstatus_to_exitcode(status), err.decode()[-400:]))
print("%.3f" % (ru.ru_utime + ru.ru_stime))
PY
}

L=("$LLMIO" run --filename "$W/llmio.dat" --size="$SIZE" --bs="$BS" --ioengine=psync
	--invalidate=0 --quiet)
F=(fio --name=verify_cpu --filename="$W/fio.dat" --size="$SIZE" --bs="$BS" --ioengine=psync
	--invalidate=0 --output=/dev/null)
# calc EXPR: awk's arithmetic, 3 decimals
calc() { awk "BEGIN { printf \"%.3f\", $1 }"; }
GB=$(calc "$BYTES / 1e9")

echo "# verify_cpu: $(date -u +%FT%TZ), $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), kernel $(uname -r)"
echo "# $LLMIO ($("$LLMIO" --version), built $(date -u -r "$LLMIO" +%FT%TZ)), tree $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo '?'), $(fio --version); $SIZE file, bs=$BS, psync, cached, $REPS rounds"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# stats V...: min median max of the values
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { printf "%s %s %s", v[1], (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR] }'; }

for a in $ALGOS; do
	"${L[@]}" --rw=write --verify="$a" # and its read-back
	"${F[@]}" --rw=write --verify="$a" --do_verify=0
	cat "$W/llmio.dat" "$W/fio.dat" >/dev/null
	echo "# page cache: $(fincore --noheadings --output=RES,SIZE,FILE "$W/llmio.dat" "$W/fio.dat" | awk '{ printf "%s of %s %s; ", $1, $2, $3 }')"
	declare -A s=()
	for _ in $(seq "$REPS"); do
		for v in "$a" none; do
			s[llmio_$v]+=" $(cpu "${L[@]}" --rw=read --verify="${v/none/0}")"
			s[fio_$v]+=" $(cpu "${F[@]}" --rw=read --verify="${v/none/0}")"
		done
	done
	echo
	echo "## verify=$a"
	echo
	echo "| tool | verify | CPU-s min / median / max | CPU-s per GB (median) |"
	echo "| --- | --- | --- | --- |"
	declare -A med=()
	for t in llmio fio; do
		for v in "$a" none; do
			# shellcheck disable=SC2086 # the rounds' values, one word each
			read -r lo mid hi <<<"$(stats ${s[${t}_$v]})"
			med[${t}_$v]=$mid
			printf '| %s | %s | %s / %s / %s | %s |\n' "$t" "$v" "$lo" "$mid" "$hi" \
				"$(calc "$mid / $GB")"
		done
	done
	echo
	printf 'verify=%s read, CPU-s per GB, llmio / fio: %s / %s = %sx (target: at most 1)\n' \
		"$a" "$(calc "${med[llmio_$a]} / $GB")" "$(calc "${med[fio_$a]} / $GB")" \
		"$(calc "${med[llmio_$a]} / ${med[fio_$a]}")"
	printf 'the verify alone (verify=%s minus verify=none), CPU-s per GB: llmio %s, fio %s\n' \
		"$a" "$(calc "(${med[llmio_$a]} - ${med[llmio_none]}) / $GB")" \
		"$(calc "(${med[fio_$a]} - ${med[fio_none]}) / $GB")"
	unset s med
done
echo
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
