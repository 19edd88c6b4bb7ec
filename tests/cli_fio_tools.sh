#!/bin/bash
# shellcheck disable=SC2317 # helpers run via check
# cli_fio_tools.sh: fio's own readers on llmio's fio files (docs/fio.md).
#
# For a read-only, a write-only and a mixed job, llmio writes every file it writes in fio's
# formats (json, json+, the bw/iops/lat logs per I/O and averaged), and fio's own tools read
# them: fio_jsonplus_clat2csv (json and json+, --validate), fio2gnuplot (bw, iops and clat
# logs) and fiologparser.py (each log, as it reads fio's own log of the same job).  The JSON is
# also checked key by key against fio's own JSON of the same job: the same keys (but those
# docs/fio.md lists as not measured) with the same JSON types (integer, float, string), the
# job options as text, and no percentiles or bins for a direction that did no I/O.
# A tool that is absent is named and the test ends 77 (skipped) after what could run.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

MISSING=()
have() { command -v "$1" >/dev/null; }
# in_dir DIR CMD...: CMD run in DIR (fio's logs go to the current directory), in this shell so
# that its checks count
in_dir() {
	local d=$1
	shift
	pushd "$d" >/dev/null || return 1
	"$@"
	popd >/dev/null || return 1
}
# runs CMD...: CMD (with run's watchdog and log) exits 0
runs() {
	run "$@"
	[ "$RC" = 0 ] || { cat "$T/stderr"; false; }
}
have python3 || skip_all "python3 missing"

# fiologparser.py: Debian ships it (gzipped) among fio's documents
FLP=
if have fiologparser.py; then
	FLP=$(command -v fiologparser.py)
elif [ -r /usr/share/doc/fio/fiologparser.py.gz ]; then
	FLP=$T/fiologparser.py && gzip -dc /usr/share/doc/fio/fiologparser.py.gz >"$FLP"
elif [ -r /usr/share/doc/fio/fiologparser.py ]; then
	FLP=/usr/share/doc/fio/fiologparser.py
fi

# A file the jobs read and write, 1 MiB, made by llmio itself
expect_rc 0 "a 1 MiB file" run --filename "$T/f" --size=1m --rw=write --quiet
# rate: the I/Os of each job spread over ~100 ms (fio2gnuplot divides by zero on a log whose
# lines all fall in its first millisecond)
JOB=(--filename "$T/f" --size=1m --bs=4k --rate=10m)

for rw in read write randrw; do
	echo "== $rw: llmio's json, json+ and logs"
	D=$T/$rw && mkdir -p "$D/avg"
	in_dir "$D" expect_rc 0 "$rw: json+ and per-I/O logs" run --name="$rw" "${JOB[@]}" \
		--rw="$rw" --output-format=json+ --output "$D/plus.json" --write_bw_log="$rw" \
		--write_iops_log="$rw" --write_lat_log="$rw" --log_offset=1
	in_dir "$D/avg" expect_rc 0 "$rw: json and averaged logs" run --name="$rw" "${JOB[@]}" \
		--rw="$rw" --output-format=json --output "$D/plain.json" --write_bw_log="$rw" \
		--write_iops_log="$rw" --write_lat_log="$rw" --log_avg_msec=20
	json_check "$D/plus.json" "$rw: a direction without I/O has no percentiles or bins, runtime 0 (fio's rule)" \
		'all(("bins" in j[d]["clat_ns"]) == ("percentile" in j[d]["clat_ns"]) == (j[d]["total_ios"] > 0) == (j[d]["runtime"] > 0) for d in ("read", "write"))'
	json_check "$D/plus.json" "$rw: fio's types: bw an integer, iops a float, job options text" \
		'all(type(j[d]["bw"]) is int and type(j[d]["iops"]) is float and type(j[d]["runtime"]) is int and type(j[d]["clat_ns"]["mean"]) is float for d in ("read", "write", "trim")) and all(type(v) is str for v in j["job options"].values()) and j["job options"]["rw"] == "'"$rw"'"'

	if have fio_jsonplus_clat2csv && python3 -c 'import six' 2>/dev/null; then
		for f in plus plain; do
			in_dir "$D" check "$rw: fio_jsonplus_clat2csv reads llmio's $f JSON" \
				runs fio_jsonplus_clat2csv "$D/$f.json" "$D/$f.csv"
		done
		(cd "$D" && fio_jsonplus_clat2csv "$D/plus.json" "$D/plus.csv" --validate \
			>"$D/validate.out" 2>&1)
		check "$rw: fio_jsonplus_clat2csv --validate: the CSV matches the json+ bins" \
			grep -q "plus_job0.csv validated" "$D/validate.out"
	else
		MISSING+=("fio_jsonplus_clat2csv (Debian fio) or python3-six")
	fi

	if have fio2gnuplot && have gnuplot; then
		for d in "$D" "$D/avg"; do
			in_dir "$d" check "$rw: fio2gnuplot -b draws the bw log (${d#"$T"/})" \
				runs fio2gnuplot -b -g -d g
			check "$rw: ... and rendered it" test -s "$d/g/${rw}_bw.1-2Draw.png"
			in_dir "$d" check "$rw: fio2gnuplot -i draws the iops log" \
				runs fio2gnuplot -i -g -d gi
			in_dir "$d" check "$rw: fio2gnuplot -p draws the clat log" \
				runs fio2gnuplot -p "*_clat.*.log" -g -d gc
			check "$rw: ... and rendered it" test -s "$d/gc/${rw}_clat.1-2Draw.png"
		done
	else
		MISSING+=("fio2gnuplot or gnuplot (Debian fio, gnuplot-nox)")
	fi
done

echo "== clones: each reported on its own, its job options say so"
expect_rc 0 "numjobs=2 without group_reporting" run --name=c "${JOB[@]}" --rw=randrw \
	--numjobs=2 --output-format=json --output "$T/clones.json"
json_check "$T/clones.json" "two entries, numjobs=2, no group_reporting" \
	'len(d["jobs"]) == 2 and all(x["job options"]["numjobs"] == "2" and "group_reporting" not in x["job options"] for x in d["jobs"])'
expect_rc 0 "numjobs=2 with group_reporting" run --name=c "${JOB[@]}" --rw=randrw \
	--numjobs=2 --group_reporting --output-format=json --output "$T/clones.json"
json_check "$T/clones.json" "one entry, group_reporting=1" \
	'len(d["jobs"]) == 1 and j["job options"]["group_reporting"] == "1"'

echo "== JSON key by key against fio's own JSON of the same job"
if have fio; then
	for rw in read write randrw; do
		run fio --name="$rw" --filename "$T/f" --size=1m --bs=4k --rw="$rw" \
			--output-format=json+ --output "$T/$rw.fio.json"
		if out=$(python3 "$(dirname "$0")/fio_json_keys.py" --strict "$T/$rw.fio.json" \
			"$T/$rw/plus.json" 2>&1); then
			pass "$rw: every fio key llmio measures, with fio's JSON type"
		else
			fail "$rw: $out"
		fi
	done
else
	MISSING+=("fio")
fi

echo "== fiologparser.py reads llmio's logs as it reads fio's own"
if [ -n "$FLP" ] && have fio; then
	# fiologparser.py reads the four columns of older fio's logs; fio 3.33 writes five (its
	# own logs then fail it too).  llmio's must fare as fio's own of the same job.
	mkdir -p "$T/fl" && in_dir "$T/fl" run fio --name=x --filename "$T/f" --size=1m --bs=4k \
		--rw=randrw --write_bw_log=x --write_iops_log=x --write_lat_log=x --output=/dev/null
	for kind in bw iops clat slat lat; do
		python3 "$FLP" "$T/fl/x_$kind.1.log" >"$T/fl.fio" 2>&1
		frc=$?
		for rw in read write randrw; do
			for d in "$T/$rw" "$T/$rw/avg"; do
				f=$d/${rw}_$kind.1.log
				python3 "$FLP" "$f" >"$T/fl.llmio" 2>&1
				lrc=$?
				if [ "$lrc" = 0 ] || { [ "$frc" != 0 ] &&
					[ "$(tail -1 "$T/fl.llmio" | cut -d: -f1)" = "$(tail -1 "$T/fl.fio" | cut -d: -f1)" ]; }; then
					pass "fiologparser.py on ${f#"$T"/}: exit $lrc as on fio's own (exit $frc)"
				else
					fail "fiologparser.py on ${f#"$T"/}: exit $lrc ($(tail -1 "$T/fl.llmio")); fio's own: exit $frc"
				fi
			done
		done
	done
	[ "$frc" = 0 ] || note "fiologparser.py cannot read fio $(fio --version)'s own logs (five columns): $(tail -1 "$T/fl.fio")"
else
	MISSING+=("fiologparser.py (Debian fio, /usr/share/doc/fio) or fio")
fi

if [ "$FAILS" = 0 ] && [ "${#MISSING[@]}" -gt 0 ]; then
	echo "SKIP: missing: ${MISSING[*]} ($CHECKS checks passed)"
	exit 77
fi
finish
