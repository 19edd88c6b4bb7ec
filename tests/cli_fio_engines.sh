#!/bin/bash
# cli_fio_engines.sh: fio's file-operation, CPU, exec and net engines in llmio (docs/engines.md), each
# against fio 3.33 on the same job file, with nothing timed.
#
# Each job file runs through fio and through `llmio run`, each in an empty folder of its own
# (fio's file names, $jobname.$jobnum.$filenum, in both).  What must agree: the I/Os of each job
# (fio's JSON total_ios, and llmio's fio JSON), and the files left behind with their sizes (and,
# for falloc, the blocks allocated): filecreate makes empty files, filestat leaves them as laid
# out, filedelete leaves none, ftruncate leaves the size of its last truncate.  cpuio has no
# files and its count of I/Os depends on the clock, so its witness is the kernel: the CPU time
# the process used (wait4's rusage) is at least what llmio reports, and that is at least
# cpuchunks per I/O.  exec's witness is the program fio runs: its argv and output files, and
# its end after SIGTERM and grace_time.  And the safety rule: filedelete refuses a file it did
# not create, which stays as it was.  The net engine (a socket) runs against fio's sender and receiver, Python and
# itself; what each side moved must agree, and strace or Python sees the data (below).

# net runs in a network namespace of its own where one can be made (root: unshare -n), so that
# nothing it listens on is reachable from outside, fio's receiver (which listens on every
# address) included; elsewhere only llmio's receivers run, on 127.0.0.1.
if [ -z "${LLMIO_NETNS:-}" ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
	export LLMIO_NETNS=1
	exec unshare -n sh -c 'ip link set lo up && exec bash "$0" "$@"' "$0" "$@"
fi

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

# net: a socket instead of a file.  Both sides count the bytes they moved (fio's JSON io_bytes
# per direction) and must agree with each other and with size; what the receiver got must be
# what the sender sent, seen by a witness outside llmio: strace's dump of the bytes each
# recvfrom returned (llmio's receiver), or a Python receiver (llmio's sender).
PAT=deadbeef
# free_port: a port nobody holds on 127.0.0.1 now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# bound PORT PROTO: wait up to 60 s until a socket listens on PORT (tcp) or is bound to it (udp)
bound() {
	python3 - "$1" "$2" <<'PY'
import sys, time
port, proto = int(sys.argv[1]), sys.argv[2]
for _ in range(600):
    for line in open("/proc/net/" + proto).readlines()[1:]:
        f = line.split()
        if int(f[1].split(":")[1], 16) == port and (proto == "udp" or f[3] == "0A"):
            sys.exit(0)
    time.sleep(0.1)
sys.exit(1)
PY
}
# bg NAME CMD...: start CMD in the background, its output in $T/NAME.out; BG holds its pid
bg() {
	local name=$1; shift
	_show "$@ &"
	timeout -k 5 90 "$@" >"$T/$name.out" 2>&1 &
	BG=$!
}
# recv_llmio NAME PORT ARGS...: llmio's receiver on 127.0.0.1 in the background
recv_llmio() {
	local name=$1 port=$2; shift 2
	bg "$name" "$LLMIO" run --name "$name" --ioengine net --hostname 127.0.0.1 --port "$port" \
		--rw read --output-format=json --output "$T/$name.json" "$@"
}
# moved FILE: "read write" bytes of the first job of a fio JSON
moved() { json_get "$1" "'%d %d' % (j['read']['io_bytes'], j['write']['io_bytes'])"; }

# fio's sender to llmio's receiver, which strace watches: 256 KiB of fio's buffer_pattern
P=$(free_port)
cat >"$T/fsend.fio" <<EOF
[send]
ioengine=net
hostname=127.0.0.1
port=$P
rw=write
bs=4k
size=256k
buffer_pattern=0x$PAT
EOF
if command -v strace >/dev/null; then
	# (an ASan build's LeakSanitizer cannot run under ptrace, and would fail the exit status)
	bg strace env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -qq -e trace=recvfrom -e read=all -o "$T/recv.strace" "$LLMIO" run \
		--name recv --ioengine net --listen --hostname 127.0.0.1 --port "$P" --rw read \
		--bs 4k --size 256k --output-format=json --output "$T/frecv.json"
	R=$BG
	check "net: llmio's receiver listens on 127.0.0.1 port $P" bound "$P" tcp
	run fio --output-format=json --output="$T/fsend.json" "$T/fsend.fio"
	check "net: fio's sender to llmio's receiver: fio ran (exit $RC: $(head -c 300 "$T/stderr"))" \
		test "$RC" -eq 0
	reap "$R" 60 "net: llmio's receiver"
	check "net: llmio's receiver ran (exit $REAPED: $(head -c 300 "$T/strace.out"))" \
		test "$REAPED" -eq 0
	check "net: llmio received what fio sent, 256 KiB ($(moved "$T/frecv.json") / $(moved "$T/fsend.json"))" \
		test "$(moved "$T/frecv.json")" = "262144 0" -a "$(moved "$T/fsend.json")" = "0 262144"
	json_check "$T/frecv.json" "net: 64 reads of 4 KiB" "j['read']['total_ios'] == 64"
	# the bytes recvfrom returned, in order (strace's hex dump), must be fio's pattern
	check "net: the bytes llmio's receiver got are fio's buffer_pattern (strace's dump)" \
		python3 - "$T/recv.strace" "$PAT" 262144 <<'PY'
import re, sys
data = bytearray()
for line in open(sys.argv[1]):
    m = re.match(r"\s*\| [0-9a-f]{5}  ((?:[0-9a-f]{2} {1,2})+)", line)
    if m:
        data += bytes.fromhex(m.group(1).replace(" ", ""))
n = int(sys.argv[3])
want = bytes.fromhex(sys.argv[2]) * (n // 4)
print("received", len(data), "bytes")
sys.exit(0 if bytes(data) == want else 1)
PY
else
	note "strace missing (Debian package strace): fio's sender to llmio's receiver not checked"
fi

# llmio's sender to a Python receiver: the stream is the pattern, then fio's close message
P=$(free_port)
cat >"$T/pyrecv.py" <<'PY'
import socket, sys
port, pat, out = int(sys.argv[1]), bytes.fromhex(sys.argv[2]), sys.argv[3]
s = socket.socket()
s.bind(("127.0.0.1", port))
s.listen(1)
s.settimeout(60)
c, _ = s.accept()
c.settimeout(60)
data = bytearray()
while True:
    b = c.recv(65536)
    if not b:
        break
    data += b
close = bytes.fromhex("6b6e696c89000000")  # fio's close message: magic, command, little-endian
body = bytes(data[:-8]) if data.endswith(close) else bytes(data)
ok = body == pat * (len(body) // len(pat)) and data.endswith(close)
open(out, "w").write("%d %s\n" % (len(body), "pattern" if ok else "other"))
PY
bg pyrecv python3 "$T/pyrecv.py" "$P" "$PAT" "$T/pyrecv.result"
R=$BG
check "net: the Python receiver listens on port $P" bound "$P" tcp
llmio run --name send --ioengine net --hostname 127.0.0.1 --port "$P" --rw write --bs 4k \
	--size 256k --buffer_pattern "0x$PAT" --output-format=json --output "$T/lsend.json"
check "net: llmio's sender ran (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
reap "$R" 60 "net: the Python receiver"
check "net: the Python receiver got 256 KiB of the pattern and fio's close message ($(cat "$T/pyrecv.result" 2>/dev/null))" \
	test "$(cat "$T/pyrecv.result" 2>/dev/null)" = "262144 pattern"
check "net: llmio's sender counts what the receiver got ($(moved "$T/lsend.json"))" \
	test "$(moved "$T/lsend.json")" = "0 262144"

# llmio to llmio over each protocol (udp: 16 datagrams, which loopback's buffers hold whole).
# A unix socket's path must fit sun_path (108 bytes), which a deep build tree's $T may not: the
# socket lives in a short folder of its own.
S=$(mktemp -d /tmp/llmio-sock.XXXXXX) || { echo "FAIL: mktemp"; exit 1; }
on_exit() { rm -rf "$S"; }
pair() {
	local proto=$1 size=$2 host=127.0.0.1 listen=--listen wait=tcp; shift 2
	P=$(free_port)
	case $proto in
	udp) listen= wait=udp ;;
	unix) listen= host=$S/sock wait= ;;
	esac
	bg "r$proto" "$LLMIO" run --name recv --ioengine net --protocol "$proto" $listen \
		--hostname "$host" --port "$P" --rw read --bs 4k --size "$size" \
		--output-format=json --output "$T/r$proto.json" "$@"
	R=$BG
	if [ -n "$wait" ]; then
		check "net $proto: llmio's receiver is bound" bound "$P" "$wait"
	else
		for _ in $(seq 600); do [ -S "$host" ] && break; sleep 0.1; done
		check "net unix: llmio's receiver made its socket" test -S "$host"
	fi
	llmio run --name send --ioengine net --protocol "$proto" --hostname "$host" --port "$P" \
		--rw write --bs 4k --size "$size" --output-format=json --output "$T/s$proto.json" "$@"
	check "net $proto $*: llmio's sender ran (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	reap "$R" 60 "net $proto: llmio's receiver"
	check "net $proto $*: llmio's receiver ran (exit $REAPED: $(head -c 300 "$T/r$proto.out"))" \
		test "$REAPED" -eq 0
	check "net $proto $*: both sides moved $size ($(moved "$T/r$proto.json") / $(moved "$T/s$proto.json"))" \
		test "$(moved "$T/r$proto.json")" = "$(numfmt --from=iec "${size^^}") 0" \
		-a "$(moved "$T/s$proto.json")" = "0 $(numfmt --from=iec "${size^^}")"
}
pair tcp 1m
pair tcp 256k --pingpong --nodelay
pair udp 64k
pair unix 256k
check "net unix: the receiver removed the socket it made" test ! -e "$S/sock"
LONG=$S/$(printf 'd%.0s' $(seq 120))
llmio run --ioengine net --protocol unix --hostname "$LONG" --rw read --size 64k
check "net unix: a socket path longer than sun_path is refused (exit $RC)" test "$RC" -eq 2
expect_err "net unix: ... naming the limit" "under 108 bytes"

# a receiver ends, without an error, when its sender closes before the receiver's size
P=$(free_port)
recv_llmio early "$P" --listen --bs 4k --size 1m --json "$T/early.rec.json"
R=$BG
check "net: llmio's receiver listens" bound "$P" tcp
llmio run --name send --ioengine net --hostname 127.0.0.1 --port "$P" --rw write --bs 4k \
	--size 64k
reap "$R" 60 "net: the receiver of a short transfer"
check "net: a receiver whose sender closed early ends with exit 0 (exit $REAPED: $(head -c 300 "$T/early.out"))" \
	test "$REAPED" -eq 0
check "net: ... having received what was sent ($(moved "$T/early.json"))" \
	test "$(moved "$T/early.json")" = "65536 0"
json_check "$T/early.rec.json" "net: llmio's record has the engine's string option, hostname" \
	"j['job options']['engine_options']['hostname'] == '127.0.0.1'"
json_check "$T/early.json" "net: ... and fio's JSON, as a fio job line" \
	"j['job options']['hostname'] == '127.0.0.1'"

# fio's own pair of jobs (a receiver and a sender that starts a second later, as fio's
# examples/netio.fio), as one job file through fio and llmio: the same jobs, names and bytes
# The receiver is sized above what is sent and ends when its sender closes: fio's receiver,
# whose short reads count as whole blocks, stops before the last bytes sized equal, and closing
# with them unread resets the sender (fio's own error 104, in about 4 runs of 10 here).
P=$(free_port)
cat >"$T/pair.fio" <<EOF
[global]
ioengine=net
port=$P
protocol=tcp
bs=4k
size=512k

[receiver]
listen
rw=read
size=1m

[sender]
hostname=localhost
startdelay=1
rw=write
EOF
if [ "${LLMIO_NETNS:-}" = 1 ]; then
	jobs_of() {
		json_get "$1" "' '.join('%s:%d:%d:%d' % (x['jobname'], x['groupid'], x['read']['io_bytes'] > 0, x['write']['io_bytes']) for x in d['jobs'])"
	}
	# fio's sender connects once, a second after its start: on a loaded machine its receiver
	# may not listen yet (fio's own race), so a failed fio run is tried once more
	for try in 1 2; do
		run fio --output-format=json --output="$T/pair.fio.json" "$T/pair.fio"
		[ "$RC" -eq 0 ] && break
		note "fio's pair failed (try $try): $(head -c 300 "$T/stdout") $(grep -o '"error" : [0-9]*' "$T/pair.fio.json" | tr '\n' ' ')"
	done
	check "net pair: fio ran it (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	t0=$(date +%s%3N) # before the run: its jobs' common start, and so the delay, come after
	llmio run --output-format=json --output="$T/pair.llmio.json" "$T/pair.fio"
	check "net pair: llmio ran it (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	check "net pair: the same jobs, groups and written bytes as fio's ($(jobs_of "$T/pair.fio.json"))" \
		test "$(jobs_of "$T/pair.fio.json")" = "$(jobs_of "$T/pair.llmio.json")"
	json_check "$T/pair.llmio.json" "net pair: llmio's receiver got the sender's 512 KiB" \
		"[x['read']['io_bytes'] for x in d['jobs']] == [524288, 0]"
	# startdelay: a lower bound, which load only lengthens: the sender starts a second after the
	# jobs' common start, itself after t0 (not after the receiver's own job_start, which a
	# loaded machine can take later than that common start)
	json_check "$T/pair.llmio.json" "net pair: the sender started startdelay (1 s) after the run began, or later" \
		"d['jobs'][1]['job_start'] - $t0 >= 1000"

	# llmio's sender to fio's receiver (which listens on every address: here, in the namespace)
	P=$(free_port)
	sed -e "s/^port=.*/port=$P/" -e '/^\[sender\]/,$d' "$T/pair.fio" >"$T/frecv.fio"
	bg frecv fio --output-format=json --output="$T/frecv.fio.json" "$T/frecv.fio"
	R=$BG
	check "net: fio's receiver listens" bound "$P" tcp
	llmio run --name send --ioengine net --hostname 127.0.0.1 --port "$P" --rw write --bs 4k \
		--size 512k --output-format=json --output "$T/tofio.json"
	check "net: llmio's sender to fio's receiver ran (exit $RC: $(head -c 300 "$T/stderr"))" \
		test "$RC" -eq 0
	reap "$R" 60 "net: fio's receiver"
	check "net: fio's receiver ran (exit $REAPED: $(head -c 300 "$T/frecv.out"))" test "$REAPED" -eq 0
	# fio's receiver counts a short read's missing bytes against size as if read (its own
	# sender's data likewise): it reports up to what was sent, never more
	json_check "$T/frecv.fio.json" "net: fio received llmio's data, at most the 512 KiB sent" \
		"0 < j['read']['io_bytes'] <= 524288 and j['error'] == 0"
else
	note "no network namespace here (unshare -n needs root): fio's receivers, which listen on every address, not run"
fi

# Ctrl-C ends a receiver that no sender comes to (its wait is in the engine's setup)
P=$(free_port)
recv_llmio lonely "$P" --listen --size 64k
R=$BG
check "net: a receiver waits for a sender" bound "$P" tcp
# one SIGINT to llmio itself (timeout would pass it on to its whole group: a second Ctrl-C)
kill -INT "$(ps -o pid= --ppid "$R" | tr -d ' ')"
reap "$R" 30 "net: a receiver told to stop while it waits"
check "net: ... and ends when told to (exit $REAPED)" test "$REAPED" -eq 1
check "net: ... saying so" grep -q "stopped while waiting for a sender" "$T/lonely.out"

# --emit-fio writes the net options and startdelay as fio lines, which fio parses
expect_rc 0 "--emit-fio of a net sender" run --name s --ioengine net --hostname 127.0.0.1 \
	--port 9 --rw write --size 64k --nodelay --startdelay 2 --emit-fio
cp "$T/stdout" "$T/net_emitted.fio"
check "--emit-fio writes hostname, port, nodelay and startdelay" \
	test "$(grep -cxE 'hostname=127.0.0.1|port=9|nodelay=1|startdelay=2s' "$T/net_emitted.fio")" = 4
run fio --parse-only "$T/net_emitted.fio"
check "fio parses the emitted net job (exit $RC: $(head -c 200 "$T/stderr"))" test "$RC" -eq 0

# safety: a port in use is an error that names it; a unix socket llmio did not make is kept
P=$(free_port)
bg holder python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(60)' "$P"
H=$BG
check "net: a port is held" bound "$P" tcp
llmio run --ioengine net --listen --hostname 127.0.0.1 --port "$P" --rw read --size 64k
check "net: a receiver on a port in use fails (exit $RC)" test "$RC" -eq 1
expect_err "net: ... naming the port" "port $P is in use"
kill "$H" 2>/dev/null
wait "$H" 2>/dev/null
: >"$T/notmine"
llmio run --ioengine net --protocol unix --hostname "$T/notmine" --rw read --size 64k
check "net: a unix socket path that exists is refused (exit $RC)" test "$RC" -eq 1
expect_err "net: ... saying so" "exists already"
check "net: ... and kept" test -f "$T/notmine"
llmio run --ioengine net --hostname 127.0.0.1 --port "$(free_port)" --rw write --size 64k
check "net: a sender with no receiver fails (exit $RC)" test "$RC" -eq 1
expect_err "net: ... saying what to start" "is the receiver"
# a random rw is refused by fio too; fio 3.33 takes rw=rw, and its sender then never ends
for rw in randwrite randread rw; do
	if [ "$rw" != rw ]; then
		run fio --name r --ioengine net --hostname 127.0.0.1 --port 9 --rw "$rw" --size 64k
		check "net rw=$rw: fio refuses it (exit $RC)" test "$RC" -ne 0
		check "net rw=$rw: ... as random" grep -q "can't be random" "$T/stderr"
	fi
	llmio run --name r --ioengine net --hostname 127.0.0.1 --port "$(free_port)" --rw "$rw" --size 64k
	check "net rw=$rw: llmio refuses it, a usage error (exit $RC)" test "$RC" -eq 2
	expect_err "net rw=$rw: ... saying what to use" "one stream" "use rw=write"
done

# exec: the program fio would run, run the same way.  A helper prints each argument it gets on
# a line of its own, in brackets, and a line to stderr: the argv both tools built (fio splits
# at spaces, %r is the runtime in seconds, %n the job's name, nothing else is special: commas,
# backslashes, %% and dots stay) must agree byte for byte, in the NAME.stdout and NAME.stderr
# both make in the job's folder.  The I/Os are the program's polls, so their count is the
# clock's: both() compares exit statuses and the names of the files left.
both() {
	local name=$1 f l
	tool fio "$name"
	check "$name: fio ran it (exit $RC)" test "$RC" -eq 0
	tool llmio "$name"
	check "$name: llmio ran it (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	f=$(cut -d' ' -f1 "$T/$name.fio.files" | tr '\n' ' ')
	l=$(cut -d' ' -f1 "$T/$name.llmio.files" | tr '\n' ' ')
	check "$name: the same files as fio's: fio [$f], llmio [$l]" test "$f" = "$l"
}
cat >"$T/argv.sh" <<'EOF'
for a in "$@"; do printf '[%s]\n' "$a"; done
echo "argv.sh: to stderr" >&2
EOF
EXARGS="$T/argv.sh  a,b  x%ry %n p\\,q c\\\\d   ,lead %%r 1..3"
printf '[global]\nruntime=1\ntime_based\n[args]\nioengine=exec\nprogram=/bin/sh\narguments=%s\ngrace_time=0\n' \
	"$EXARGS" >"$T/execargs.fio"
both execargs
for f in args.stdout args.stderr; do
	if [ -s "$T/fio/execargs/$f" ] && cmp -s "$T/fio/execargs/$f" "$T/llmio/execargs/$f"; then
		pass "exec: $f as fio's, byte for byte ($(tr '\n' ' ' <"$T/llmio/execargs/$f"))"
	else
		fail "exec: $f: fio [$(tr '\n' ' ' <"$T/fio/execargs/$f")], llmio [$(tr '\n' ' ' <"$T/llmio/execargs/$f" 2>&1)]"
	fi
done
EXARGS=$EXARGS json_check "$T/execargs.llmio.json" "exec: no bytes, as fio's NOIO; the arguments whole in the job options" \
	"j['read']['io_bytes'] == 0 and j['write']['io_bytes'] == 0 and j['job options']['arguments'] == __import__('os').environ['EXARGS']"

# A program that ignores SIGTERM: both tools end it with SIGKILL grace_time after the SIGTERM.
# Its loop never ends on its own, so its death is the SIGKILL's, and it is dead once the tool
# has returned (the upper bound on its life: llmio waits for it; fio leaves a zombie, reaped
# when fio exits, and a zombie counts as dead; the 10 s after are only for that reaping).
# llmio's run lasts at least runtime + grace_time: a lower bound that a busy machine only
# lengthens.
cat >"$T/term.sh" <<'EOF'
trap '' TERM
echo $$ >term.pid
while :; do sleep 0.1; done
EOF
printf '[term]\nioengine=exec\nprogram=/bin/sh\narguments=%s\nruntime=1\ngrace_time=2\nstd_redirect=0\n' \
	"$T/term.sh" >"$T/execterm.fio"
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
for t in fio llmio; do
	t0=$(date +%s.%N)
	tool "$t" execterm
	t1=$(date +%s.%N)
	check "exec term: $t ran it (exit $RC: $(head -c 300 "$T/stderr"))" test "$RC" -eq 0
	pid=$(cat "$T/$t/execterm/term.pid" 2>/dev/null)
	check "exec term: $t started the program (pid ${pid:-none})" test -n "$pid"
	[ -n "$pid" ] || continue
	for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
	if alive "$pid"; then
		fail "exec term: $t left the program that ignores SIGTERM running (pid $pid)"
		kill -KILL "$pid"
	else
		pass "exec term: $t killed the program that ignores SIGTERM (pid $pid)"
	fi
	[ "$t" = llmio ] && check "exec term: llmio's run lasted runtime + grace_time (3 s) or more ($t0 .. $t1)" \
		python3 -c "import sys; sys.exit(not ($t1 - $t0 >= 3))"
done

# a program that is not there: as fio, the job runs its runtime and exits 0; the child says
# which program it could not run in the job's NAME.stderr (fio's child: an assertion of fio's)
printf '[global]\ntime_based\nruntime=1\n[miss]\nioengine=exec\nprogram=/nonexistent/turbostat\narguments=-qS -s Busy%%,Bzy_MHz\n' \
	>"$T/execmiss.fio"
both execmiss
check "exec missing: llmio's miss.stderr names the program" \
	grep -q "cannot run /nonexistent/turbostat: No such file or directory" "$T/llmio/execmiss/miss.stderr"

# the string options as given: whole in the record (past 64 bytes), escaped in engine_opts,
# and --emit-fio writes them as fio reads them
ARGS='-c package -qS --interval 5 -s Busy%,Bzy_MHz,Avg_MHz,CorWatt,PkgWatt,RAMWatt,PkgTmp a\b'
mkdir -p "$T/cli"
run sh -c 'cd "$1" && shift && exec "$@"' sh "$T/cli" "$LLMIO" run --name cli --ioengine exec \
	--program /bin/echo --arguments "$ARGS" --runtime 1 --json "$T/exec.json"
check "exec from the command line (exit $RC: $(head -c 200 "$T/stderr"))" test "$RC" -eq 0
check "exec: cli.stdout is echo's line" test "$(cat "$T/cli/cli.stdout")" = "$ARGS"
ARGS=$ARGS json_check "$T/exec.json" "exec: the record has the arguments whole, escaped in engine_opts" \
	"(lambda o: o['engine_options']['arguments'] == __import__('os').environ['ARGS'] and 'Busy%\\\\,Bzy_MHz' in o['engine_opts'] and o['engine_options']['grace_time'] == 1)(d['jobs'][0]['job options'])"
expect_rc 0 "--emit-fio of an exec job" run --ioengine exec --program /bin/echo --arguments "$ARGS" \
	--runtime 1 --emit-fio
cp "$T/stdout" "$T/emitexec.fio"
check "--emit-fio writes arguments as given" grep -qxF "arguments=$ARGS" "$T/emitexec.fio"
run fio --parse-only "$T/emitexec.fio"
check "fio parses the emitted exec job (exit $RC: $(head -c 200 "$T/stderr"))" test "$RC" -eq 0

# refusals: no program, no runtime, and an output name that is not a regular file of its own
expect_rc 2 "exec without program is refused" run --ioengine exec --runtime 1
expect_err "exec without program says what to give" "program=PATH"
expect_rc 2 "exec without runtime is refused" run --ioengine exec --program /bin/true
expect_err "exec without runtime says what to give" "runtime=N"
mkdir -p "$T/link" && echo keep >"$T/victim" && ln -s "$T/victim" "$T/link/lnk.stdout"
run sh -c 'cd "$1" && shift && exec "$@"' sh "$T/link" "$LLMIO" run --name lnk --ioengine exec \
	--program /bin/echo --arguments x --runtime 1
check "exec: NAME.stdout a symlink: refused, exit 2 (exit $RC: $(head -c 200 "$T/stderr"))" test "$RC" -eq 2
check "... and the file it points to is as it was" test "$(cat "$T/victim")" = keep

finish
