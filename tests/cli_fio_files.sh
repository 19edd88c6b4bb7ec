#!/bin/bash
# cli_fio_files.sh: the files of a fio job as fio names them (docs/fio.md, "Files"): with no
# filename, JOBNAME.0.N in the working directory (created, kept, read as they are when they
# exist); filename inside directory; a ':' list of files (fio's "\:" is a colon in a name),
# size split among them; filename_format.  On the command line and in job files alike.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

W=$T/work
J=$T/out.json
mkdir -p "$W/d"
cd "$W" || exit 1

size_of() { stat -c %s "$1" 2>/dev/null || echo missing; }

echo "== no filename: fio's JOBNAME.0.0 in the working directory"
expect_rc 0 "a command line without --filename writes its job's file" \
	run --name=cl --rw=write --size=64k --output-format=json --output "$J"
check "cl.0.0 created with the job's size" test "$(size_of cl.0.0)" = 65536
json_check "$J" "its bytes" 'j["jobname"] == "cl" and j["write"]["io_bytes"] == 65536'
before=$(fp cl.0.0)
expect_rc 0 "a read job of that name reads the file that is there" \
	run --name=cl --rw=read --size=64k --output-format=json --output "$J"
json_check "$J" "all of it" 'j["read"]["io_bytes"] == 65536 and j["read"]["total_ios"] == 16'
check "and leaves it as it was (a read job writes nothing)" test "$(fp cl.0.0)" = "$before"
printf 'mine' > small.0.0
expect_rc 2 "a user's shorter file of that name is read as it is, not extended" \
	run --name=small --rw=read --size=64k
expect_err "named, with the fix" "small.0.0 holds 4 bytes"
check "the user's file untouched" test "$(cat small.0.0)" = mine
expect_rc 0 "nrfiles without filename: JOBNAME.0.0 .. JOBNAME.0.N-1" \
	run --name=nf --rw=write --size=64k --nrfiles=2 --output-format=json --output "$J"
check "nf.0.0 and nf.0.1, half the size each" \
	test "$(size_of nf.0.0) $(size_of nf.0.1)" = "32768 32768"
json_check "$J" "the job's bytes are size" 'j["write"]["io_bytes"] == 65536'
expect_rc 0 "numjobs without filename: each clone its own files, as fio's" \
	run --name=nj --rw=write --size=64k --numjobs=2 --nrfiles=2 --group_reporting \
	--output-format=json --output "$J"
check "nj.K.F: two clones of two files, each clone's 64 KiB" \
	test "$(size_of nj.0.0) $(size_of nj.0.1) $(size_of nj.1.0) $(size_of nj.1.1)" = "32768 32768 32768 32768"
json_check "$J" "the job moves numjobs x size" 'j["write"]["io_bytes"] == 2 * 65536'
expect_rc 2 "neither a name nor a file: still no target" run --rw=read --size=64k
expect_err "says what to give" "no target"

echo "== filename inside directory; a ':' list"
expect_rc 0 "directory= and filename= together" \
	run --name=df --rw=write --size=64k --directory=d --filename=f1
check "the file is inside the directory" test "$(size_of d/f1)" = 65536
expect_rc 0 "a ':' list with an escaped colon" \
	run --name=li --rw=write --size=64k --directory=d '--filename=p:q\:r' \
	--output-format=json --output "$J"
check "p and q:r, half the size each" test "$(size_of d/p) $(size_of 'd/q:r')" = "32768 32768"
json_check "$J" "the job's bytes are size" 'j["write"]["io_bytes"] == 65536 and j["write"]["total_ios"] == 16'
expect_rc 2 "an empty name in the list" run --name=e --rw=write --size=64k --filename=a::b
expect_err "refused by name" "an empty name"
expect_rc 0 "directory alone stays llmio's own work directory" \
	run --name=wd --rw=write --size=64k --directory=d
check "its file in llmio-work" test "$(size_of d/llmio-work/llmio.0)" = 65536
check "no fio name beside it" test ! -e d/wd.0.0

echo "== filename_format: fio's \$jobname, \$jobnum, \$filenum"
expect_rc 0 "a format, with nrfiles, inside directory" \
	run --name=fm --rw=write --size=64k --nrfiles=2 --directory=d '--filename_format=$jobname-$jobnum.$filenum.dat'
check "fm-0.0.dat and fm-0.1.dat in d" test "$(size_of d/fm-0.0.dat) $(size_of d/fm-0.1.dat)" = "32768 32768"
expect_rc 0 "filename wins over the format, as in fio" \
	run --name=fw --rw=write --size=64k --filename=given '--filename_format=never.$filenum'
check "given, and no never.0" test "$(size_of given)" = 65536 -a ! -e never.0
printf '[s]\nioengine=null\nsize=1m\nfilename_format=x\n' > sweep.ini
expect_rc 1 "llmio sweep: its point refuses it (a sweep names its own files)" sweep sweep.ini \
	-o sweep.jsonl
expect_err "says what to give instead" "filename_format names the files" "--filename"

echo "== job files: each section's own file"
cat > jobs.fio <<'F'
[global]
rw=write
size=64k

[first]

[second]
rw=read
stonewall

[third]
directory=d
filename=t1:t2
F
expect_rc 0 "three jobs without filename, one with a list in a directory" \
	run jobs.fio --output-format=json --output "$J"
check "first.0.0 and second.0.0, each job's own" \
	test "$(size_of first.0.0) $(size_of second.0.0)" = "65536 65536"
check "third's files inside d" test "$(size_of d/t1) $(size_of d/t2)" = "32768 32768"
json_check "$J" "each job's bytes" \
	'[(x["jobname"], x["read"]["io_bytes"] + x["write"]["io_bytes"]) for x in d["jobs"]] == [("first", 65536), ("second", 65536), ("third", 65536)]'

finish
