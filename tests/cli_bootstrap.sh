#!/bin/bash
# cli_bootstrap.sh: scripts/bootstrap.sh decides whether apt can fetch the way apt decides
# (scripts/apt_sources.sh), against fake apt configurations; the machine's apt is never touched:
#   - a disabled file listed first (a third-party source renamed with a suffix apt ignores), a
#     file whose name apt refuses, "Enabled: no" stanzas, comments, options in brackets, several
#     URIs in one stanza, mirror+ URIs, file: sources: only what apt reads is listed;
#   - no sources at all: the bootstrap refuses at once, naming the directory;
#   - only unreachable sources: it refuses in seconds, naming the hosts, before any apt-get;
#   - a reachable source (a listener on loopback) after a disabled unreachable one: reachable.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

SRC=$(cd "$(dirname "$0")/.." && pwd)
AS=$SRC/scripts/apt_sources.sh

# fake ETC: an apt configuration directory
fake() {
	rm -rf "$T/etc"
	mkdir -p "$T/etc/sources.list.d"
}

echo "== what apt reads, and only that"
fake
cat >"$T/etc/sources.list.d/aaa-third-party.list.disabled-by-farm" <<'EOF'
deb https://disabled.invalid/apt stable main
EOF
cat >"$T/etc/sources.list.d/aab.sources.disabled" <<'EOF'
Types: deb
URIs: https://disabled2.invalid/apt
Suites: stable
Components: main
EOF
cat >"$T/etc/sources.list.d/bad name.list" <<'EOF'
deb http://badname.invalid/debian bookworm main
EOF
cat >"$T/etc/sources.list.d/debian.sources" <<'EOF'
# a comment line
Types: deb
# http://commented.invalid/debian
URIs: http://deb.example.org/debian
  http://second.example.org/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
Enabled: no
URIs: http://off.invalid/debian
Suites: bookworm
Components: main

Types: deb deb-src
Enabled: yes
URIs: mirror+https://mirror.example.org:8443/debian
Suites: bookworm
Components: main
EOF
cat >"$T/etc/sources.list.d/other.list" <<'EOF'
# deb http://commented2.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/x.gpg] http://opt.example.org:8080/debian bookworm main # tail
deb-src http://user@src.example.org/debian bookworm main
   deb file:/srv/mirror bookworm main
EOF
cat >"$T/etc/sources.list" <<'EOF'
deb http://list.example.org/debian bookworm main
EOF
run "$AS" "$T/etc"
check "apt_sources: exit 0" test "$RC" -eq 0
want="http list.example.org 80
http deb.example.org 80
http second.example.org 80
https mirror.example.org 8443
http opt.example.org 8080
http src.example.org 80
local /srv/mirror"
got=$(cat "$T/stdout")
check "apt_sources: every enabled source, in apt's order, once ($(echo $got))" test "$got" = "$want"
check "apt_sources: no disabled, refused, commented or Enabled: no source" \
	test -z "$(grep -E 'invalid' "$T/stdout")"

echo "== no sources at all"
fake
run "$AS" --reachable "$T/etc"
check "no sources: not reachable (exit 1)" test "$RC" -eq 1
check "no sources: says so, naming the directory" grep -q "apt has no enabled source in $T/etc" \
	"$T/stderr"
cat >"$T/etc/sources.list.d/x.list" <<'EOF'
# only a comment
EOF
run "$AS" "$T/etc"
check "only a comment: no source" test ! -s "$T/stdout"

echo "== unreachable sources only: the bootstrap refuses in seconds, before apt-get"
fake
cat >"$T/etc/sources.list.d/a.list" <<'EOF'
deb http://no-network.invalid/debian bookworm main
EOF
start=$(date +%s)
run env BOOTSTRAP_EXTRA_PKGS=llmio-no-such-package BOOTSTRAP_APT_ETC="$T/etc" \
	"$SRC/scripts/bootstrap.sh" "$T/bs"
took=$(($(date +%s) - start))
check "bootstrap: exit 1" test "$RC" -eq 1
expect_err "bootstrap: names the package, the unreachable host and what to do" \
	"llmio-no-such-package not installed" "no-network.invalid" "cannot be reached" \
	"scripts/gpu_pack.sh"
check "bootstrap: one line" test "$(wc -l <"$T/stderr")" -eq 1
check "bootstrap: within seconds ($took s), no hang" test "$took" -lt 60
check "bootstrap: nothing configured" test ! -e "$T/bs/CMakeCache.txt"

echo "== no sources: the bootstrap says so"
fake
run env BOOTSTRAP_EXTRA_PKGS=llmio-no-such-package BOOTSTRAP_APT_ETC="$T/etc" \
	"$SRC/scripts/bootstrap.sh" "$T/bs"
check "bootstrap without sources: exit 1" test "$RC" -eq 1
expect_err "bootstrap without sources: says why" "apt has no enabled source"

echo "== a disabled unreachable file first, then a reachable source: reachable"
fake
cat >"$T/etc/sources.list.d/aaa.list.disabled-by-farm" <<'EOF'
deb http://no-network.invalid/debian bookworm main
EOF
port_file=$T/port
python3 - "$port_file" <<'EOF' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(30)
end = time.time() + 30
while time.time() < end:
    try:
        c, _ = s.accept()
        c.close()
    except OSError:
        break
EOF
LISTENER=$!
on_exit() { kill "$LISTENER" 2>/dev/null; }
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
cat >"$T/etc/sources.list.d/zz.sources" <<EOF
Types: deb
URIs: http://127.0.0.1:$(cat "$port_file")/debian
Suites: bookworm
Components: main
EOF
run "$AS" --reachable "$T/etc"
check "reachable source after a disabled one: exit 0 ($(cat "$T/stderr"))" test "$RC" -eq 0
echo "deb file:/srv/mirror bookworm main" >"$T/etc/sources.list"
rm "$T/etc/sources.list.d/zz.sources"
run "$AS" --reachable "$T/etc"
check "a file: source needs no network: exit 0" test "$RC" -eq 0

finish
