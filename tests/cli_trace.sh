#!/usr/bin/env bash
# llmio trace: every interposed call of tests/trace_prog.c recorded with the right sizes,
# offsets and errors; threads; a forked child that ends with _exit; stdio without double
# counting; phase markers from C and Python, carried across fork, exec and spawn; SIGKILL;
# exit status; filters; report --json; strace import; errors; hostile inputs.
. "$(dirname "$0")/lib.sh"

PROG=$(dirname "$LLMIO")/trace_prog
SRC=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$PROG" ] || { echo "FAIL: $PROG is missing"; exit 1; }
D=$T/d
mkdir -p "$D"

# dump FILE: records as "phase type offset req result basename" (mmap addresses and fds as
# results vary: shown as "ok")
records() {
	"$LLMIO" trace dump "$1" | awk '!/^#/ {
		res = $9
		if (($5 == "open" || $5 == "dup" || $5 == "fopen" || $5 == "mmap") && res >= 0) res = "ok"
		n = split($11, p, "/")
		print $4, $5, $7, $8, res, p[n]
	}'
}

# ---- the C program ----
llmio trace -o "$T/prog.trace" -- "$PROG" "$D"
check "trace_prog traced, exit 0 (stderr: $(head -c 300 "$T/stderr"))" [ "$RC" -eq 0 ]
expect_err "summary printed" "llmio trace: wrote" "per phase"
records "$T/prog.trace" >"$T/records"

cat >"$T/expect_calls" <<'EOF'
calls open -1 578 ok a
calls write 0 1000 1000 a
calls write 1000 24 24 a
calls pwrite 4096 512 512 a
calls lseek 0 0 0 a
calls read 0 100 100 a
calls read 100 200 200 a
calls pread 4000 50 50 a
calls readv 300 30 30 a
calls preadv 10 30 30 a
calls writev 330 6 6 a
calls pwritev 8192 6 6 a
calls preadv 336 16 16 a
calls pwritev 9000 16 16 a
calls fsync -1 0 0 a
calls fdatasync -1 0 0 a
calls sync_file_range 0 4096 0 a
calls fallocate 0 65536 0 a
calls fallocate 0 65536 0 a
calls ftruncate -1 10000 0 a
calls mmap 4096 8192 ok a
calls msync -1 8192 0 a
calls munmap -1 8192 0 a
calls dup -1 0 ok a
calls lseek 5000 5000 5000 a
calls write 5000 7 7 a
calls dup -1 0 ok a
calls dup -1 0 ok a
calls pwrite 1 3 3 a
calls pwrite 2 5 5 a
calls close -1 0 0 a
calls close -1 0 0 a
calls close -1 0 0 a
calls close -1 0 0 a
calls open -1 0 -2 missing
calls open -1 0 ok a
calls write 0 10 -9 a
calls pread -5 10 -22 a
calls close -1 0 0 a
calls open -1 577 ok c
calls close -1 0 0 c
calls rename -1 0 0 a
calls unlink -1 0 0 b
calls unlink -1 0 0 c
stdio fopen -1 0 ok s
stdio fwrite 0 100 100 s
stdio fwrite 100 100 100 s
stdio fwrite 200 100 100 s
stdio fflush -1 0 0 s
stdio fclose -1 0 0 s
stdio fopen -1 0 ok s
stdio fread 0 1000 300 s
stdio fclose -1 0 0 s
stdio open -1 0 ok s
stdio fopen -1 0 ok s
stdio fread 0 100 100 s
stdio fclose -1 0 0 s
EOF
grep -E '^(calls|stdio) ' "$T/records" >"$T/got_calls"
if diff "$T/expect_calls" "$T/got_calls" >"$T/diff"; then
	pass "every call recorded with its offset, size, result and errno (57 records)"
else
	fail "calls differ from the expected records: $(head -c 1500 "$T/diff")"
fi

# threads: two threads of the main process, 10 writes of 4096 each, in phase threads
"$LLMIO" trace dump "$T/prog.trace" >"$T/dump"
main_pid=$(awk '!/^#/ && $5 == "open" {print $2; exit}' "$T/dump")
tids=$(awk -v p="$main_pid" '!/^#/ && $4 == "threads" && $5 == "write" && $2 == p {print $3}' "$T/dump" | sort | uniq -c | awk '{print $1}' | tr '\n' ' ')
check "two threads of pid $main_pid with 10 writes each (got: $tids)" [ "$tids" = "10 10 " ]
tid_main=$(awk -v p="$main_pid" '!/^#/ && $2 == p && $4 == "calls" {print $3; exit}' "$T/dump")
check "thread ids differ from the main thread's" \
	bash -c "! awk '!/^#/ && \$4 == \"threads\" && \$5 == \"write\" {print \$3}' '$T/dump' | grep -qx '$tid_main'"

# fork + _exit: the child's records are there, in the phase it inherited, with its parent
child=$(awk -v p="$main_pid" '!/^#/ && $2 != p && $5 == "write" {print $2, $4, $7, $9; exit}' "$T/dump")
child_pid=${child%% *}
check "forked child (_exit) recorded: write of 123 at 0 in phase fork (got: $child)" \
	[ "${child#* }" = "fork 0 123" ]
check "child's parent is the main process" \
	grep -q "^# process $child_pid parent $main_pid " "$T/dump"

# report --json: the four keys; per-file numbers; stdio counted once (300, not 600)
llmio trace report "$T/prog.trace" --json
check "report --json exit 0" [ "$RC" -eq 0 ]
cp "$T/stdout" "$T/report.json"
check "report --json: keys, per-file bytes, by_pid, phases, stdio counted once" python3 - "$T/report.json" "$D" "$main_pid" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1])); d = sys.argv[2]; pid = sys.argv[3]
assert sorted(r) == ["distribution", "files", "phases", "processes", "tails", "time", "totals"], sorted(r)
f = r["files"]
assert f[d + "/t0"]["bytes_written"] == 40960 and f[d + "/t0"]["write_calls"] == 10
assert f[d + "/s"]["bytes_written"] == 300, f[d + "/s"]
assert f[d + "/s"]["bytes_read"] == 400 and f[d + "/s"]["opens"] == 4, f[d + "/s"]
assert f[d + "/a"]["fsyncs"] == 4, f[d + "/a"]            # fsync, fdatasync, sync_file_range, msync
assert f[d + "/t0"]["by_pid"][pid]["bytes_written"] == 40960
assert r["phases"]["threads"]["bytes_written"] == 81920
assert r["processes"][pid]["command"].endswith("trace_prog " + d)
for k in ("bytes_read", "bytes_written", "read_calls", "write_calls", "opens", "fsyncs"):
    assert k in f[d + "/a"], k
EOF

llmio trace report "$T/prog.trace" -o "$T/plots"
check "text report with plots (exit $RC)" [ "$RC" -eq 0 ]
expect_out "text report sections" "per phase" "per process" "top files" "latency per call type" "request sizes"
check "Lorenz curve data written" [ -s "$T/plots/lorenz.dat" ]
if command -v gnuplot >/dev/null; then
	check "Lorenz curve plotted" [ -s "$T/plots/lorenz.svg" ]
fi
# the plot directory is the user's: its files are never written through a link
printf 'keep me' >"$T/precious"
rm -f "$T/plots/sizes.dat" "$T/plots/lorenz.svg"
ln -s "$T/precious" "$T/plots/sizes.dat"
llmio trace report "$T/prog.trace" -o "$T/plots"
check "a link among the plot files is refused (exit $RC)" [ "$RC" -ne 0 ]
check "and the file it points to is untouched" [ "$(cat "$T/precious")" = "keep me" ]
rm -f "$T/plots/sizes.dat"
ln -s "$T/precious" "$T/plots/lorenz.svg"
llmio trace report "$T/prog.trace" -o "$T/plots"
check "a link where gnuplot writes is refused (exit $RC)" [ "$RC" -ne 0 ]
check "and the file it points to is untouched by gnuplot" [ "$(cat "$T/precious")" = "keep me" ]

# ---- SIGKILL: a child writes 1000 records and kills itself ----
llmio trace -q -o "$T/kill.trace" -- "$PROG" "$D" kill
check "traced program whose child was SIGKILLed exits 0" [ "$RC" -eq 0 ]
n=$("$LLMIO" trace dump "$T/kill.trace" | awk '!/^#/ && $5 == "write" && $11 ~ /killed$/' | wc -l)
check "SIGKILLed child lost at most the last records ($n of 1000 writes)" test "$n" -ge 995 -a "$n" -le 1000

# ---- exec and spawn carry the phase (issue 14.7: an exec'd child's bytes were "(none)") ----
llmio trace -q -o "$T/exec.trace" -- "$PROG" "$D" exec
check "trace_prog exec: exit 0 (got $RC; stderr: $(head -c 300 "$T/stderr"))" [ "$RC" -eq 0 ]
"$LLMIO" trace dump "$T/exec.trace" | awk '!/^#/ && $5 == "write" {n = split($11, p, "/"); print p[n], $4, $9}' |
	sort | awk '{k = $1 " " $2; b[k] += $3} END {for (k in b) print k, b[k]}' | sort >"$T/exec_got"
cat >"$T/exec_want" <<'EOF'
exec-execle train 262144
exec-execv train 262144
exec-execve train 262144
exec-execvp train 262144
exec-self final 262144
exec-spawn train 262144
exec-system train 262144
EOF
if diff "$T/exec_want" "$T/exec_got" >"$T/exec_diff"; then
	pass "children started with execv, execvp, execve (bare env), execle, posix_spawn (stale env) and system(), and an exec of the process itself: their 256 KiB each in the parent's current phase"
else
	fail "exec'd children's bytes by phase differ: $(cat "$T/exec_diff")"
fi
LLMIO_TRACE_PHASE=preset llmio trace -q -o "$T/preset.trace" -- "$PROG" "$D" child preset
check "LLMIO_TRACE_PHASE names the phase a traced command starts in" bash -c \
	"'$LLMIO' trace dump '$T/preset.trace' | awk '!/^#/ && \$5 == \"write\" && \$4 == \"preset\" {n++} END {exit n != 4}'"

# ---- exit status ----
expect_status() { # expect_status WANT DESC ARGS...
	local want=$1 desc=$2; shift 2
	llmio trace -q -o "$T/st.trace" -- "$@"
	check "$desc: exit $RC, expected $want" [ "$RC" -eq "$want" ]
}
expect_status 7 "command's exit status" sh -c 'exit 7'
expect_status 143 "killed by SIGTERM: 128 + 15" sh -c 'kill -TERM $$'
expect_rc 127 "missing command" trace -o "$T/x.trace" -- /nonexistent/cmd
expect_err "missing command named" "cannot run '/nonexistent/cmd'"
check "no trace left for a command that did not run" [ ! -e "$T/x.trace" ]
expect_rc 2 "no command" trace -o "$T/x.trace"
expect_rc 2 "unwritable output" trace -o /nonexistent/dir/x.trace -- true
LLMIO_TRACE_LIB=/nonexistent/lib.so llmio trace -o "$T/x.trace" -- true
check "missing tracer library: exit 1 with the fix" [ "$RC" -eq 1 ] && grep -q "LLMIO_TRACE_LIB" "$T/stderr"
check "no trace directories left behind" bash -c "! ls -a '$T' | grep -q '^.llmio-trace'"

# ---- filters ----
mkdir -p "$D/in" "$D/out"
llmio trace -q -o "$T/f.trace" --include "$D/in" -- sh -c "echo x > '$D/in/f'; echo y > '$D/out/g'"
"$LLMIO" trace dump "$T/f.trace" | grep -v '^#' >"$T/fdump"
check "--include keeps files under it" grep -q "$D/in/f" "$T/fdump"
check "--include drops the rest" bash -c "! grep -q '$D/out/g' '$T/fdump'"
llmio trace -q -o "$T/f.trace" --exclude "$D/in" -- sh -c "echo x > '$D/in/f'; echo y > '$D/out/g'"
"$LLMIO" trace dump "$T/f.trace" | grep -v '^#' >"$T/fdump"
check "--exclude drops files under it" bash -c "! grep -q '$D/in/f' '$T/fdump'"
check "--exclude keeps the rest" grep -q "$D/out/g" "$T/fdump"

# ---- paths: every name of a file is recorded as its canonical path ----
# the name given is taken as it is only when it is the canonical one (no symbolic link, "." or
# ".." on the way: fd_open in src/trace/preload_fd.c); every other name is resolved through /proc
mkdir -p "$D/canon/real"
echo data >"$D/canon/real/f"
ln -sfn real "$D/canon/link"
ln -sfn real/f "$D/canon/flink"
canon=$(realpath "$D/canon/real/f")
(cd "$D/canon" && llmio trace -q -o "$T/c.trace" -- cat "$D/canon/real/f" "$D/canon/link/f" \
	"$D/canon/real/../real/f" real/./f "$D/canon//real/f" flink real/f "$D/canon/real/f/" \
	>/dev/null)
"$LLMIO" trace dump "$T/c.trace" | awk '!/^#/ && $5 == "open" {print $9 < 0 ? "failed" : $11}' \
	>"$T/cdump"
check "seven names of one file, one canonical path ($(sort "$T/cdump" | uniq -c | tr '\n' ' '))" \
	[ "$(grep -cxF "$canon" "$T/cdump")" -eq 7 ]
check "a name that fails (a file as a directory) is recorded as failed" grep -qx failed "$T/cdump"

# ---- strace import ----
llmio trace import-strace "$SRC/tests/data/strace_sample.log" -o "$T/strace.trace"
check "import-strace exit 0 ($RC)" [ "$RC" -eq 0 ]
llmio trace report "$T/strace.trace"
expect_out "report of an imported trace" "(imported from strace)" "llmio-strace-sample/data"
expect_rc 2 "import of something that is not strace output" trace import-strace "$SRC/README.md" -o "$T/bad.trace"
expect_rc 2 "report of a file that is not a trace" trace report "$SRC/README.md"
expect_rc 2 "report of a missing file" trace report "$T/nope.trace"

# ---- hostile inputs (issue 15): one line, exit 1 or 2, nothing sized from a bad number ----
# pid = tid = 0xFFFFFFFF: the thread index lost it (out-of-bounds read and write: exit 139)
printf '%s\n' \
	'4294967295 1700000000.000001 openat(AT_FDCWD, "/data/f", O_RDONLY) = 3</data/f> <0.000001>' \
	'4294967295 1700000000.000002 read(3</data/f>, "x", 1) = 1 <0.000001>' >"$T/maxpid.log"
expect_rc 0 "import a log of pid 4294967295" trace import-strace "$T/maxpid.log" -o "$T/maxpid.trace"
llmio trace report "$T/maxpid.trace" --json
check "report of pid 4294967295: exit 0 (got $RC), its 1 byte read counted" python3 -c "
import json, sys
r = json.load(open('$T/stdout'))
assert r['processes']['4294967295']['totals']['bytes_read'] == 1, r['processes']
" && [ "$RC" -eq 0 ]
# sizes and times out of range in an strace log (a double cast to uint64_t was undefined)
printf '%s\n' \
	'1 1700000000.000001 openat(AT_FDCWD, "/data/f", O_RDONLY) = 3</data/f> <0.000001>' \
	'1 1700000000.000002 read(3</data/f>, "x", 1) = 281474976710656 <0.000001>' >"$T/huge.log"
expect_rc 2 "import of a 2^48-byte read is refused" trace import-strace "$T/huge.log" -o "$T/huge.trace"
expect_err "names the log, the line and the value" "huge.log: line 2: read result 281474976710656 is over 2147479552"
check "no trace written for it" [ ! -e "$T/huge.trace" ]
printf '%s\n' '1 1e300 read(3</data/f>, "x", 1) = 1' \
	'1 99999999999999999999.5 read(3</data/f>, "x", 1) = 1 <0.000001>' >"$T/time.log"
expect_rc 2 "import of a time stamp beyond 2^62 ns is refused" trace import-strace "$T/time.log" -o "$T/time.trace"
expect_err "names the line and the time" "line 2: time stamp 1 99999999999999999999.5"
# a raw per-process file whose string id is 0xFFFFFFFF: the merge sized a 16 GiB table from it
cat >"$T/rawfile.py" <<'EOF'
import os, struct, sys
hdr = b"LLMIORAW" + struct.pack("<IIII", 1, 65536, 999999, 1)
hdr = hdr.ljust(4096, b"\0")
chunk = bytearray(65536)
def slot(i, ts=0, res=0, pid=0, tid=0, path=0, req=0, typ=0):
    struct.pack_into("<QQQQqIIiIIHH", chunk, i * 64, ts, 0, 0, req, res, pid, tid, 0, path, 0, 0, typ)
slot(0, tid=999999, typ=0xF001)
slot(1, path=int(sys.argv[2]), req=4, typ=0xF002)
chunk[128:133] = b"/d/f\0"
slot(3, ts=10, res=4096, pid=999999, tid=999999, path=1, typ=4)
open(os.path.join(sys.argv[1], "999999.0.trace"), "wb").write(hdr + bytes(chunk))
EOF
llmio trace -q -o "$T/raw.trace" -- sh -c "python3 '$T/rawfile.py' \"\$LLMIO_TRACE_DIR\" 4294967295"
check "merge of a raw file with string id 4294967295 fails: exit 1 (got $RC)" [ "$RC" -eq 1 ]
check "one line naming the file, the slot and the id ($(head -c 300 "$T/stderr"))" \
	grep -qx "llmio trace: 999999.0.trace: raw trace slot 1: string id 4294967295 is over 1088 (the file's slots)" "$T/stderr"
check "no trace written" [ ! -e "$T/raw.trace" ]
check "no trace directory left behind by the failed merge" bash -c "! ls -a '$T' | grep -q '^.llmio-trace'"
llmio trace -q -o "$T/raw.trace" -- sh -c "python3 '$T/rawfile.py' \"\$LLMIO_TRACE_DIR\" 1"
check "the same raw file with string id 1 merges (exit $RC)" [ "$RC" -eq 0 ]
check "its read is in the trace" bash -c "'$LLMIO' trace dump '$T/raw.trace' | grep -q ' 999999 999999 .* read .* 4096 .*/d/f'"

# ---- Python markers (Debian's python3: the one a user's ML stack runs on) ----
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	cat >"$T/phase.py" <<EOF
import os, sys
sys.path.insert(0, "$SRC/python")
import llmio_phase
print("traced" if llmio_phase.traced() else "untraced")
with llmio_phase.phase("train"):
    with open("$D/py", "wb") as f:
        f.write(b"x" * 5000)
    pid = os.fork()
    if pid == 0:
        with open("$D/pychild", "wb", buffering=0) as f:
            f.write(b"y" * 77)
        os._exit(0)
    os.waitpid(pid, 0)
    import subprocess
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '$SRC/python'); "
                    "import llmio_phase; open('$D/pysub', 'wb').write(b'z' * 99); "
                    "print('child phase', llmio_phase.current())"], check=True)
with open("$D/py", "rb") as f:
    f.read()
EOF
	llmio trace -q -o "$T/py.trace" -- "$PY" "$T/phase.py"
	check "python traced (exit $RC)" [ "$RC" -eq 0 ] && grep -qx traced "$T/stdout"
	"$LLMIO" trace dump "$T/py.trace" | grep -v '^#' >"$T/pydump"
	check "python write in phase train" \
		awk '!/^#/ && $4 == "train" && $5 == "write" && $11 ~ /\/py$/ && $9 == 5000 {f=1} END {exit !f}' "$T/pydump"
	check "os.fork child (os._exit) in the inherited phase" \
		awk '!/^#/ && $4 == "train" && $5 == "write" && $11 ~ /pychild$/ && $9 == 77 {f=1} END {exit !f}' "$T/pydump"
	check "subprocess child (exec) in the parent's phase" \
		awk '!/^#/ && $4 == "train" && $5 == "write" && $11 ~ /pysub$/ && $9 == 99 {f=1} END {exit !f}' "$T/pydump"
	check "llmio_phase.current() in the exec'd child is the inherited phase" grep -qx "child phase train" "$T/stdout"
	check "phase ends with the with block" \
		awk '!/^#/ && $4 == "-" && $5 == "read" && $11 ~ /\/py$/ && $9 == 5000 {f=1} END {exit !f}' "$T/pydump"
	check "python imports are out of scope by default" bash -c "! grep -q '\\.py\$' '$T/pydump'"
	run "$PY" "$T/phase.py"
	check "untraced, the markers are a no-op" [ "$RC" -eq 0 ] && grep -qx untraced "$T/stdout"
else
	note "skipped the Python markers: /usr/bin/python3 is missing"
fi

finish
