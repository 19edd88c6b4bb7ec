#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_jobfile.sh: fio job files as fio reads them (docs/fio.md, "Job files"): include
# FILE (relative to the including file, nested, cycles refused), ${VAR} from the environment
# (unset = empty, fio's rule), several [global] sections each applying to the sections after
# it, a section with no keys of its own, and numjobs without group_reporting reported per
# clone.  `llmio sweep` reads files with the same reader.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

J=$T/out.json
D=$T/jobs
mkdir -p "$D/inc" "$T/elsewhere"

echo "== include FILE, relative to the including file"
cat > "$D/main.fio" <<'F'
[global]
ioengine=null
include inc/common.inc

[a]
rw=read
include inc/job.inc
F
printf 'size=1m\ninclude deeper.inc\n' > "$D/inc/common.inc"
printf 'bs=16k\n' > "$D/inc/deeper.inc"
printf 'description=from job.inc\n' > "$D/inc/job.inc"
(cd "$T/elsewhere" && expect_rc 0 "a job file with nested includes, run from elsewhere" \
	run ../jobs/main.fio --output-format=json --output "$J")
json_check "$J" "the included keys apply: size and bs from [global]'s includes, desc in [a]" \
	'j["job options"]["bs"] == "16384" and j["read"]["io_bytes"] == 1 << 20 and j["desc"] == "from job.inc"'

echo "== include: cycles, missing files and sections refused"
printf '[global]\nioengine=null\ninclude loop1.inc\n[a]\nsize=1m\n' > "$D/cycle.fio"
printf 'bs=4k\ninclude loop2.inc\n' > "$D/loop1.inc"
printf 'include loop1.inc\n' > "$D/loop2.inc"
expect_rc 2 "an include cycle" run "$D/cycle.fio"
expect_err "named as a cycle, with the file and line" "loop2.inc:1: include loop1.inc: a cycle"
printf '[global]\nioengine=null\ninclude self.fio\n[a]\nsize=1m\n' > "$D/self.fio"
expect_rc 2 "a file that includes itself" run "$D/self.fio"
expect_err "a cycle" "a cycle"
printf '[a]\nioengine=null\ninclude nothere.inc\n' > "$D/missing.fio"
expect_rc 2 "a missing include" run "$D/missing.fio"
expect_err "names the path it tried" "missing.fio:3: include" "nothere.inc: cannot read it"
printf '[global]\ninclude sec.inc\n[a]\nioengine=null\nsize=1m\n' > "$D/sec.fio"
printf '[b]\nbs=4k\n' > "$D/sec.inc"
expect_rc 2 "a [section] in an included file" run "$D/sec.fio"
expect_err "refused as fio does" "sec.inc:1" "keys only"
printf '[a]\nioengine=null\nsize=1m\ninclude bad.inc\n' > "$D/badkey.fio"
printf 'bs=4k\nnosuchkey=1\n' > "$D/bad.inc"
expect_rc 2 "a bad key in an included file" run "$D/badkey.fio"
expect_err "named with the included file's name and line" "bad.inc:2: nosuchkey: unknown key"

echo "== \${VAR} from the environment"
cat > "$D/env.fio" <<'F'
[global]
ioengine=null
size=${LLMIO_T_SIZE}
[a]
bs=${LLMIO_T_BS}
description=x${LLMIO_T_UNSET}y ${LLMIO_T_SIZE}
F
export LLMIO_T_SIZE=2m LLMIO_T_BS=8k
unset LLMIO_T_UNSET
expect_rc 0 "a job file with \${VAR}" run "$D/env.fio" --output-format=json --output "$J"
json_check "$J" "\${VAR} substituted: size=2m, bs=8k" \
	'j["job options"]["bs"] == "8192" and j["read"]["io_bytes"] == 2 << 20'
json_check "$J" "an unset variable is the empty string (fio's rule)" 'j["desc"] == "xy 2m"'
unset LLMIO_T_SIZE
expect_rc 2 "size=\${UNSET}: the empty value is refused by size's own check" run "$D/env.fio"
expect_err "naming the key and line" "env.fio:3" "size"

echo "== several [global]s: each applies to the sections after it"
cat > "$D/globals.fio" <<'F'
[global]
ioengine=null
size=1m
bs=4k

[first]
rw=read

[global]
bs=8k

[second]
rw=read

[third]
rw=read
bs=64k

[empty]
F
expect_rc 0 "two [global]s" run "$D/globals.fio" --output-format=json --output "$J"
json_check "$J" "four jobs (a section without keys of its own is a job)" 'len(d["jobs"]) == 4'
json_check "$J" "the second [global] changes bs for later sections only" \
	'[x["job options"]["bs"] for x in d["jobs"]] == ["4096", "8192", "65536", "8192"]'
json_check "$J" "the first [global]'s other keys still apply" \
	'all(x["read"]["io_bytes"] == 1 << 20 for x in d["jobs"])'
printf '[global]\nioengine=null\nbs=4k\nbs=8k\n[a]\nsize=1m\n' > "$D/twice.fio"
expect_rc 2 "a key twice in one [global]" run "$D/twice.fio"
expect_err "still refused" "given twice"

echo "== numjobs without group_reporting: one report per clone"
printf '[global]\nioengine=null\nbs=4k\n[c]\nsize=12m\nnumjobs=3\n' > "$D/clones.fio"
expect_rc 0 "numjobs=3" run "$D/clones.fio" --output-format=json --output "$J"
json_check "$J" "three jobs whose bytes add up to 12 MiB exactly" \
	'len(d["jobs"]) == 3 and sum(x["read"]["io_bytes"] for x in d["jobs"]) == 12 << 20'
json_check "$J" "each clone with its own latency percentiles" \
	'all(x["read"]["clat_ns"]["N"] == x["read"]["total_ios"] > 0 for x in d["jobs"])'
expect_rc 0 "numjobs=3, the table" run "$D/clones.fio"
expect_out "one report per thread" "c: (groupid=0, thread 1 of 3)" "c: (groupid=0, thread 3 of 3)"
printf 'group_reporting\n' >> "$D/clones.fio"
expect_rc 0 "numjobs=3 with group_reporting" run "$D/clones.fio" --output-format=json --output "$J"
json_check "$J" "one job" 'len(d["jobs"]) == 1 and j["read"]["io_bytes"] == 12 << 20'

echo "== llmio sweep reads the same way"
cat > "$D/sweep.fio" <<'F'
[global]
ioengine=null
size=1m
include inc/sweep.inc
[s]
rw=read
iodepth=1,2
F
printf 'bs=4k,${LLMIO_T_BS}\n' > "$D/inc/sweep.inc"
expect_rc 0 "a sweep with an include and a \${VAR}" sweep "$D/sweep.fio" --dry-run
expect_out "four points, the bs list from the include, 8k from the environment" "4 points" \
	"bs=8k iodepth=2"
echo "== fio's reserved keywords and arithmetic"
PAGE=$(getconf PAGESIZE)
NCPUS=$(getconf _NPROCESSORS_ONLN)
cat > "$D/arith.fio" <<'F'
[global]
ioengine=null
[a]
rw=read
bs=$pagesize*2
size=${LLMIO_T_SZ}*4
runtime=(1000*250)
description=$ncpus CPUs and $mb_memory MiB
F
export LLMIO_T_SZ=1m
expect_rc 0 "bs=\$pagesize*2, size=\${SZ}*4, runtime=(1000*250)" \
	run "$D/arith.fio" --output-format=json --output "$J"
json_check "$J" "bs is two pages ($((PAGE * 2)) B), size 4 MiB" \
	"j['job options']['bs'] == '$((PAGE * 2))' and j['read']['io_bytes'] == 4 << 20"
json_check "$J" "(1000*250) in a time option is microseconds, as in fio: 0.25 s" \
	"j['job options']['runtime'] == '250ms'"
json_check "$J" "keywords in text are this machine's values" \
	"j['desc'].startswith('$NCPUS CPUs and ') and int(j['desc'].split()[3]) > 0"
cat > "$D/arith_sweep.fio" <<'F'
[global]
ioengine=null
size=(2^20)
[s]
rw=read
bs=(4*1024),(2*$pagesize),16k
iodepth=1..$ncpus:+1
F
expect_rc 0 "a sweep with arithmetic in its lists and a keyword in a range" \
	sweep "$D/arith_sweep.fio" --dry-run
expect_out "3 block sizes x \$ncpus depths" "$((3 * NCPUS)) points"
expect_rc 0 "its sample" sweep "$D/arith_sweep.fio" --dry-run
check "the evaluated block sizes are in the points" grep -q "bs=$((2 * PAGE))" "$T/stdout"
for bad in "bs=(4096*)|not an arithmetic expression" "size=(1m/0)|divides by zero" \
	"size=(1m-2m)|comes out negative"; do
	printf '[a]\nioengine=null\nrw=read\n%s\n' "${bad%%|*}" > "$D/bad.fio"
	expect_rc 2 "${bad%%|*} refused" run "$D/bad.fio"
	expect_err "${bad%%|*}: named with its file and line" "bad.fio:4: ${bad%%|*}: ${bad##*|}"
done
printf '[a]\nioengine=null\nrw=read\nsize=1m\ndescription=(not arithmetic)\n' > "$D/text.fio"
expect_rc 0 "parentheses in a text option are text" run "$D/text.fio" --output-format=json \
	--output "$J"
json_check "$J" "the description as written" 'j["desc"] == "(not arithmetic)"'

echo "== comments: a ';' or '#' anywhere ends the line, as in fio 3.33"
cat > "$D/comments.fio" <<'F'
[global] ; the global section
ioengine=null # engine
  ; an indented comment
[a] # the job
size=64k ; what it moves
bs=4k#no blank before it
rw=write	; after a tab
description=kept # dropped ; dropped too
F
expect_rc 0 "inline comments after values and headers" run "$D/comments.fio" \
	--output-format=json --output "$J"
json_check "$J" "the values before the comments" \
	'j["jobname"] == "a" and j["write"]["io_bytes"] == 65536 and j["write"]["total_ios"] == 16 and j["desc"] == "kept"'

echo "== jobs of one group sharing a file none has yet: laid out one after the other, as fio"
# a writer and a reader started together on one new file: before, one's create failed on the
# other's (EEXIST) or the reader found the writer's file still empty, about one run in three
mkdir -p "$T/share"
printf '[global]\nfilename=%s/shared.dat\nsize=1m\nbs=64k\nioengine=psync\n[w]\nrw=write\n[r]\nrw=read\n' "$T/share" \
	>"$T/share/wr.fio"
printf '[global]\nfilename=%s/shared.dat\nsize=1m\nbs=64k\nioengine=psync\n[r]\nrw=read\n[w]\nrw=write\n' "$T/share" \
	>"$T/share/rw.fio"
for f in wr rw; do
	for i in 1 2 3 4 5 6 7 8; do
		rm -f "$T/share/shared.dat"
		llmio run "$T/share/$f.fio" --output-format=json --output "$T/share/$f.json"
		[ "$RC" -eq 0 ] || break
	done
	check "$f.fio: 8 runs on a new shared file, each exit 0 (exit $RC: $(head -c 300 "$T/stderr"))" \
		[ "$RC" -eq 0 ]
	json_check "$T/share/$f.json" "$f.fio: both jobs moved their megabyte" \
		'sorted(x["read"]["io_bytes"] + x["write"]["io_bytes"] for x in d["jobs"]) == [1048576, 1048576]'
done

finish
