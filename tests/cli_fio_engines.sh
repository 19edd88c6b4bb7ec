#!/bin/bash
# cli_fio_engines.sh: fio's file-operation and CPU engines in llmio (docs/engines.md), each
# against fio 3.33 on the same job file, with nothing timed.
#
# Each job file runs through fio and through `llmio run`, each in an empty folder of its own
# (fio's file names, $jobname.$jobnum.$filenum, in both).  What must agree: the I/Os of each job
# (fio's JSON total_ios, and llmio's fio JSON), and the files left behind with their sizes (and,
# for falloc, the blocks allocated): filecreate makes empty files, filestat leaves them as laid
# out, filedelete leaves none, ftruncate leaves the size of its last truncate.  cpuio has no
# files and its count of I/Os depends on the clock, so its witness is the kernel: the CPU time
# the process used (wait4's rusage) is at least what llmio reports, and that is at least
# cpuchunks per I/O.  And the safety rule: filedelete refuses a file it did not create, which
# stays as it was.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

command -v fio >/dev/null || skip_all "fio missing (Debian package fio)"
command -v python3 >/dev/null || skip_all "python3 missing"

# tool TOOL NAME: run $T/NAME.fio through TOOL in the empty folder $T/TOOL/NAME; its JSON in
# $T/NAME.TOOL.json, its exit status in RC, the files it left (path size blocks) in
# $T/NAME.TOOL.files
tool() {
	local t=$1 name=$2 d=$T/$1/$2
	mkdir -p "$d"
	if [ "$t" = fio ]; then
		run sh -c 'cd "$1" && exec fio --output-format=json --output="$2" "$3"' sh "$d" \
			"$T/$name.$t.json" "$T/$name.fio"
	else
		run sh -c 'cd "$1" && exec "$4" run --output-format=json --output="$2" "$3"' sh "$d" \
			"$T/$name.$t.json" "$T/$name.fio" "$LLMIO"
	fi
	(cd "$d" && find . -type f -printf '%P %s %b\n' | sort) >"$T/$name.$t.files"
}

# ios NAME TOOL: "job ios" per job of TOOL's JSON (reads and writes together), sorted
ios() {
	python3 - "$T/$1.$2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
n = {}
for j in d["jobs"]:
    n[j["jobname"]] = n.get(j["jobname"], 0) + j["read"]["total_ios"] + j["write"]["total_ios"]
for k in sorted(n):
    print(k, n[k])
PY
}

# same NAME WHAT: run job NAME through both tools; the I/Os and the files (WHAT: "size" compares
# names and sizes, "blocks" the blocks allocated too) must agree
same() {
	local name=$1 what=$2 f l
	tool fio "$name"
	check "$name: fio ran it (exit $RC)" test "$RC" -eq 0
	tool llmio "$name"
	check "$name: llmio ran it (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	f=$(ios "$name" fio)
	l=$(ios "$name" llmio)
	if [ -n "$f" ] && [ "$f" = "$l" ]; then
		pass "$name: the same I/Os per job as fio: $(echo "$f" | tr '\n' ' ')"
	else
		fail "$name: I/Os per job: fio [$(echo "$f" | tr '\n' ' ')], llmio [$(echo "$l" | tr '\n' ' ')]"
	fi
	if [ "$what" = size ]; then
		f=$(cut -d' ' -f1,2 "$T/$name.fio.files")
		l=$(cut -d' ' -f1,2 "$T/$name.llmio.files")
	else
		f=$(cat "$T/$name.fio.files")
		l=$(cat "$T/$name.llmio.files")
	fi
	if [ "$f" = "$l" ]; then
		pass "$name: the same files left as fio's ($(echo "$f" | grep -c .) files)"
	else
		fail "$name: files left: fio [$(echo "$f" | head -4 | tr '\n' ' ')...], llmio [$(echo "$l" | head -4 | tr '\n' ' ')...]"
	fi
}

cat >"$T/create.fio" <<'EOF'
[global]
ioengine=filecreate
create_on_open=1
nrfiles=50
filesize=4k
[t0]
[t1]
EOF
same create size
check "create: fio's files are made, empty" grep -q '^t1.0.49 0 ' "$T/create.fio.files"

cat >"$T/stat.fio" <<'EOF'
[global]
ioengine=filestat
nrfiles=40
filesize=4k
[t0]
[t1]
stat_type=lstat
[t2]
stat_type=statx
EOF
same stat size
check "stat: the files are there, 4 KiB each" grep -q '^t2.0.39 4096 ' "$T/stat.llmio.files"

cat >"$T/delete.fio" <<'EOF'
[global]
ioengine=filedelete
nrfiles=40
filesize=4k
unlink=0
[t0]
[t1]
EOF
same delete size
check "delete: no file is left" test ! -s "$T/delete.llmio.files"

cat >"$T/trunc.fio" <<'EOF'
[global]
ioengine=ftruncate
filename=trunc
size=256k
bs=4k
[grow]
rw=write
EOF
same trunc size
check "trunc: the file ends at the last I/O's offset" grep -q '^trunc 258048 ' "$T/trunc.llmio.files"

cat >"$T/falloc.fio" <<'EOF'
[alloc]
ioengine=falloc
filename=space
size=1m
bs=64k
rw=write
EOF
same falloc blocks
# a read allocates and keeps the size (FALLOC_FL_KEEP_SIZE), on a file the job laid out
sed -e 's/rw=write/rw=read/' -e 's/size=1m/size=512k/' "$T/falloc.fio" >"$T/fkeep.fio"
same fkeep blocks

# --emit-fio writes an engine's enum option by its name, which fio parses
expect_rc 0 "--emit-fio of a statx job" run --ioengine filestat --stat_type statx \
	--filename "$T/x" --size 64k --emit-fio
cp "$T/stdout" "$T/emitted.fio"
check "--emit-fio writes stat_type=statx" grep -qx 'stat_type=statx' "$T/emitted.fio"
run fio --parse-only "$T/emitted.fio"
check "fio parses the emitted job file (exit $RC: $(head -c 200 "$T/stderr"))" test "$RC" -eq 0

# llmio removes only what it made: a file of the job that was there before is refused, and kept
D=$T/llmio/mine
mkdir -p "$D"
head -c 4096 /dev/urandom >"$D/t0.0.3"
FP=$(fp "$D/t0.0.3")
run sh -c 'cd "$1" && exec "$2" run "$3"' sh "$D" "$LLMIO" "$T/delete.fio"
check "filedelete with a file it did not create: exit 1 (exit $RC)" test "$RC" -eq 1
expect_err "filedelete names the file it will not remove" "t0.0.3 is there already"
check "filedelete left that file as it was" test "$(fp "$D/t0.0.3")" = "$FP"
check "... and laid out none of the others (refused before the layout)" \
	test "$(ls "$D")" = "t0.0.3"
# an empty file of the job's is not filled to the job's size before the refusal
: >"$D/t0.0.3"
run sh -c 'cd "$1" && exec "$2" run "$3"' sh "$D" "$LLMIO" "$T/delete.fio"
check "filedelete with an empty file of its name: exit 1 (exit $RC)" test "$RC" -eq 1
check "that file is still empty, and alone" test "$(stat -c %s "$D/t0.0.3") $(ls "$D")" = "0 t0.0.3"

# cpuio: the CPU it reports, against the kernel's count of the process
cpu() {
	local mode=$1
	_show llmio run --ioengine cpuio --cpuload 50 --cpuchunks 20000 --cpumode "$mode" \
		--time_based --runtime 2 --json "$T/cpu.json"
	python3 - "$T/cpu.ru" "$LLMIO" run --name cpu --ioengine cpuio --cpuload 50 --cpuchunks 20000 \
		--cpumode "$mode" --time_based --runtime 2 --json "$T/cpu.json" >"$T/stdout" \
		2>"$T/stderr" <<'PY'
import os, subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
open(sys.argv[1], "w").write("%f\n" % (ru.ru_utime + ru.ru_stime))
sys.exit(os.waitstatus_to_exitcode(status))
PY
	RC=$?
	check "cpuio $mode: ran (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	# llmio's CPU comes from the kernel's tick counts (10 ms each, usr and sys): 0.03 s of slack
	json_check "$T/cpu.json" "cpuio $mode: llmio's CPU is no more than the kernel's count of the process ($(cat "$T/cpu.ru") s)" \
		"j['cpu']['proc_s'] <= $(cat "$T/cpu.ru") + 0.03"
	json_check "$T/cpu.json" "cpuio $mode: at least cpuchunks (20 ms) of CPU per I/O" \
		"j['read']['total_ios'] > 0 and j['cpu']['proc_s'] + 0.03 >= 0.95 * 0.02 * j['read']['total_ios']"
}
cpu noop
cpu qsort
expect_rc 2 "cpuio without cpuload is refused" run --ioengine cpuio --runtime 1
expect_err "cpuio without cpuload says what to give" "cpuload=N"

finish
