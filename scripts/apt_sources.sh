#!/usr/bin/env bash
# The sources apt would fetch from, read the way apt reads them, one line each: "SCHEME HOST PORT"
# for a network source, "local PATH" for file:/copy:/cdrom: sources.  scripts/bootstrap.sh asks
# this before running apt-get, so that an offline machine fails in seconds with a clear line;
# a probe of one guessed host (the first URI found anywhere under the configuration) picked a
# disabled file's host and refused a machine whose apt reached its real source.
#   scripts/apt_sources.sh [APT_ETC_DIR]            (default /etc/apt; tests pass fake ones)
#   scripts/apt_sources.sh --reachable [APT_ETC_DIR]
#       exit 0 when apt could fetch from one of them (a local source, or a host that accepts a TCP
#       connection within 3 s), else 1 with one line on stderr saying why
# What apt reads (sources.list(5)): ETC/sources.list and, in ETC/sources.list.d/, the files named
# [A-Za-z0-9_.-]+ that end in .list (one-line style) or .sources (deb822 style); every other file
# there (foo.list.disabled, foo.sources.save, foo.dpkg-old) is ignored.  A deb822 stanza with
# "Enabled: no" is ignored; '#' starts a comment in both styles.
set -euo pipefail
check=0
if [ "${1:-}" = --reachable ]; then
	check=1
	shift
fi
etc=${1:-/etc/apt}

# one-line style: "deb [ options ] URI suite [components]"; prints each URI
one_line() {
	awk '{
		sub(/#.*/, "")
		if ($1 != "deb" && $1 != "deb-src") next
		line = $0
		sub(/^[ \t]*deb(-src)?[ \t]+/, "", line)
		if (line ~ /^\[/) { if (!sub(/^\[[^]]*\][ \t]*/, "", line)) next }
		split(line, f, /[ \t]+/)
		if (f[1] != "") print f[1]
	}' "$1"
}

# deb822 style: stanzas apart by blank lines; URIs: may hold several and continue on lines that
# start with white space; prints each URI of every stanza that is not "Enabled: no"
deb822() {
	awk '
	function flush() { if (!disabled && types) for (i = 1; i <= n; i++) print uris[i]
		n = 0; disabled = 0; types = 0; field = "" }
	BEGIN { n = 0 }
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	/^[ \t]/ { if (field == "uris") for (i = 1; i <= NF; i++) uris[++n] = $i; next }
	{
		split($0, kv, ":"); key = tolower(kv[1]); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
		field = key
		if (key == "enabled" && tolower(val) ~ /^(no|false|0)[ \t]*$/) disabled = 1
		if (key == "types" && val ~ /(^|[ \t])deb(-src)?([ \t]|$)/) types = 1
		if (key == "uris") { m = split(val, u, /[ \t]+/); for (i = 1; i <= m; i++) if (u[i] != "") uris[++n] = u[i] }
	}
	END { flush() }' "$1"
}

uris() {
	[ -f "$etc/sources.list" ] && one_line "$etc/sources.list"
	[ -d "$etc/sources.list.d" ] || return 0
	local f base
	for f in "$etc"/sources.list.d/*; do
		[ -f "$f" ] || continue
		base=${f##*/}
		[[ $base =~ ^[A-Za-z0-9_.-]+$ ]] || continue
		case $base in
		*.list) one_line "$f" ;;
		*.sources) deb822 "$f" ;;
		esac
	done
}

sources() {
	uris | while read -r uri; do
		uri=${uri#mirror+}
		uri=${uri#tor+}
		scheme=${uri%%:*}
		case $scheme in
		http | https)
			rest=${uri#*://}
			hostport=${rest%%/*}
			hostport=${hostport##*@}
			host=${hostport%%:*}
			port=${hostport#"$host"}
			port=${port#:}
			[ -n "$port" ] || { [ "$scheme" = https ] && port=443 || port=80; }
			echo "$scheme $host $port"
			;;
		file | copy | cdrom) echo "local ${uri#*:}" ;;
		esac
	done | awk '!seen[$0]++'
}

if [ $check -eq 0 ]; then
	sources
	exit 0
fi
list=$(sources)
if [ -z "$list" ]; then
	echo "apt has no enabled source in $etc (sources.list, sources.list.d/*.list or *.sources)" >&2
	exit 1
fi
while read -r kind host port; do
	[ "$kind" = local ] && exit 0
	timeout 3 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null && exit 0
done <<<"$list"
echo "no network: apt's sources ($(awk '{printf "%s%s", sep, $2; sep=", "}' <<<"$list")) cannot be reached" >&2
exit 1
