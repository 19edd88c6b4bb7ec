#!/bin/bash
# shellcheck disable=SC2016 # the backticks in quotes are Markdown's inline code, not commands
# cli_readme.sh: the README is a first screen, and every link of the docs leads somewhere.
#
# README.md opens with the two commands and stays short; the reference lives in docs/.  This
# test keeps it so:
#
#   first block   the README's first fenced code block is exactly two lines, `make run ...`
#                 then `make test ...` (each may carry a `# comment`).
#   size          at most 200 lines; no line outside code blocks over 400 characters; no table
#                 cell over 200 characters.
#   commands      every subcommand that `llmio --help` lists is named in the README (as
#                 `llmio NAME`) on a line that links a docs/ page that exists.
#   links         every relative link of README.md and docs/*.md names a file or directory
#                 that exists, and, when it has an #anchor into a Markdown file, a heading (or
#                 an <a name|id>) of that file with that anchor.  Anchors follow GitHub's
#                 rule: the heading's text lowercased, punctuation other than '-' and '_'
#                 dropped, each space turned into '-', and -1, -2 ... on repeats.
#
# Links and headings inside fenced code blocks and `inline code` are not links or headings.
# The rules are first run on made-up trees with known violations, so the checker itself is
# checked.  LLMIO_SRC_ROOT (default: this script's tree) names the tree to check, so the test
# can be pointed at an old tree to show what it rejects.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=${LLMIO_SRC_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
[ -f "$ROOT/README.md" ] || { echo "FAIL: $ROOT/README.md is missing"; exit 1; }

# check_tree ROOT COMMAND...: prints one line per violation; exit 1 if any.
check_tree() {
	python3 - "$@" <<'PY'
import os, re, sys

root, commands = sys.argv[1], sys.argv[2:]
bad = []
FENCE = re.compile(r'\s*(`{3,}|~{3,})')
INLINE = re.compile(r'(`+)(?:(?!\1).)+?\1')
LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
HTML_ANCHOR = re.compile(r'<a\s+(?:name|id)="([^"]+)"', re.I)


def lines_of(path):
    """(number, text, in_code) for every line of PATH."""
    out, fence = [], None
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip('\n')
            m = FENCE.match(line)
            if m:
                mark = m.group(1)
                if fence is None:
                    fence = mark[0] * len(mark)
                    out.append((n, line, True))
                    continue
                if mark.startswith(fence):
                    fence = None
                    out.append((n, line, True))
                    continue
            out.append((n, line, fence is not None))
    return out


def slug(text):
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)  # a link's text, not its target
    text = re.sub(r'<[^>]+>', '', text)
    return re.sub(r'[^\w\- ]', '', text.lower()).replace(' ', '-')


anchor_cache = {}


def anchors(path):
    if path not in anchor_cache:
        seen, got = {}, set()
        for _, line, code in lines_of(path):
            if code:
                continue
            got.update(a.lower() for a in HTML_ANCHOR.findall(line))
            m = HEADING.match(line)
            if not m:
                continue
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            got.add(s if k == 0 else f'{s}-{k}')
        anchor_cache[path] = got
    return anchor_cache[path]


def links(path):
    """(number, target) of every link outside code."""
    for n, line, code in lines_of(path):
        if not code:
            for m in LINK.finditer(INLINE.sub(' ', line)):
                yield n, m.group(1)


def check_links(path):
    rel = os.path.relpath(path, root)
    for n, target in links(path):
        if re.match(r'[a-zA-Z][a-zA-Z0-9+.-]*:', target) or target.startswith('//'):
            continue  # http:, https:, mailto: ... are not files of the tree
        name, _, anchor = target.partition('#')
        dest = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
        if not os.path.exists(dest):
            bad.append(f'{rel}:{n}: links to {name}, which does not exist')
            continue
        if anchor and dest.endswith('.md') and os.path.isfile(dest):
            if anchor.lower() not in anchors(dest):
                bad.append(f'{rel}:{n}: links to {target}: {os.path.relpath(dest, root)} '
                           f'has no heading with the anchor #{anchor}')


readme = os.path.join(root, 'README.md')
body = lines_of(readme)

# first block: the two commands
block, inside = [], False
for n, line, code in body:
    if code and FENCE.match(line):
        if inside:
            break
        inside = True
        continue
    if inside:
        block.append(line)
words = [l.split('#', 1)[0].split() for l in block]
if words != [['make', 'run'], ['make', 'test']]:
    bad.append('README.md: the first code block is not exactly the two commands `make run` and '
               '`make test`: ' + (' / '.join(l.strip() for l in block) or 'there is none'))

# size
if len(body) > 200:
    bad.append(f'README.md: {len(body)} lines, more than 200: move reference text into docs/')
for n, line, code in body:
    if code:
        continue
    if len(line) > 400:
        bad.append(f'README.md:{n}: a line of {len(line)} characters, more than 400')
    if line.lstrip().startswith('|'):
        for cell in re.split(r'(?<!\\)\|', line.strip().strip('|')):
            if len(cell.strip()) > 200:
                bad.append(f'README.md:{n}: a table cell of {len(cell.strip())} characters, '
                           f'more than 200: {cell.strip()[:60]}...')

# commands: each named on a line that links a docs page that exists
for cmd in commands:
    named = re.compile(r'`llmio ' + re.escape(cmd) + r'[ `]')
    hits = [(n, line) for n, line, code in body if not code and named.search(line)]
    ok = False
    for n, line in hits:
        for m in LINK.finditer(INLINE.sub(' ', line)):
            name = m.group(1).partition('#')[0]
            if name.startswith('docs/') and os.path.isfile(os.path.join(root, name)):
                ok = True
    if not ok:
        bad.append(f'README.md: `llmio {cmd}` is not named on a line that links a docs/ page '
                   f'that exists' + ('' if hits else ' (not named at all)'))

# links
check_links(readme)
docs = os.path.join(root, 'docs')
if os.path.isdir(docs):
    for name in sorted(os.listdir(docs)):
        if name.endswith('.md'):
            check_links(os.path.join(docs, name))

for b in bad:
    print(b)
sys.exit(1 if bad else 0)
PY
}

# The subcommands `llmio --help` lists: the lines under "commands:" that start with a name.
mapfile -t COMMANDS < <("$LLMIO" --help 2>&1 | sed -n '/^commands:/,/^$/p' |
	awk '/^  [a-z][a-z0-9-]* / { print $1 }')
check "llmio --help lists subcommands (${COMMANDS[*]})" test "${#COMMANDS[@]}" -ge 5

# --- the checker on made-up trees ---
# fixture DIR: a tree that passes, with README.md, docs/a.md and docs/b.md.
fixture() {
	local d=$1
	rm -rf "$d"
	mkdir -p "$d/docs"
	cat >"$d/README.md" <<'EOF'
# x

```sh
make run    # the look
make test   # the suite
```

| page | what |
| --- | --- |
| [a](docs/a.md) | a |

- `llmio run`: one job ([docs/a.md](docs/a.md#llmio-run-one-job))
- `llmio sweep` and `llmio model`: [docs/b.md](docs/b.md#sweeps-a-b--c)

```sh
llmio quick   # [not a link](docs/gone.md)
```
EOF
	cat >"$d/docs/a.md" <<'EOF'
# A

## `llmio run`: one job

## Repeat

## Repeat

<a name="Here"></a>

See [b](b.md#sweeps-a-b--c), [repeat](#repeat-1), [here](#here), [up](../README.md),
[the web](https://example.com/x.md#nowhere), `[code](gone.md)`.

```
# not a heading
```
EOF
	cat >"$d/docs/b.md" <<'EOF'
# B

## Sweeps: a, b — c
EOF
}
FX=$T/fx
# violates DESC EXPECTED: the fixture, changed by the caller, is rejected with EXPECTED.
violates() {
	if check_tree "$FX" run sweep model >"$T/fx.out"; then
		fail "the checker rejects $1"
	elif grep -qF -- "$2" "$T/fx.out"; then
		pass "the checker rejects $1: $(grep -F -- "$2" "$T/fx.out" | head -1)"
	else
		cat "$T/fx.out"
		fail "the checker rejects $1 with \"$2\""
	fi
}
fixture "$FX"
if check_tree "$FX" run sweep model >"$T/fx.out"; then
	pass "the checker passes a tree that keeps the rules"
else
	cat "$T/fx.out"
	fail "the checker passes a tree that keeps the rules"
fi
fixture "$FX"
sed -i 's/^make test .*/make check/' "$FX/README.md"
violates "a first block without make test" "first code block is not exactly"
fixture "$FX"
sed -i '3,6d' "$FX/README.md"
violates "a README without the two commands first" "first code block is not exactly"
fixture "$FX"
sed -i 's/^make test .*/make test\nmake bench/' "$FX/README.md"
violates "a third command in the first block" "first code block is not exactly"
fixture "$FX"
seq 200 >>"$FX/README.md"
violates "a README over 200 lines" "lines, more than 200"
fixture "$FX"
printf '%0401d\n' 0 >>"$FX/README.md"
violates "a line over 400 characters" "a line of 401 characters"
fixture "$FX"
printf '| %0201d | x |\n' 0 >>"$FX/README.md"
violates "a table cell over 200 characters" "a table cell of 201 characters"
fixture "$FX"
check_tree "$FX" run sweep model quick >"$T/fx.out"
if grep -qF '`llmio quick` is not named on a line that links' "$T/fx.out"; then
	pass "the checker rejects a command named only in a code block"
else
	fail "the checker rejects a command named only in a code block"
fi
fixture "$FX"
sed -i 's|(docs/a.md#llmio-run-one-job)|(docs/c.md)|' "$FX/README.md"
violates "a command whose docs page does not exist" '`llmio run` is not named on a line'
fixture "$FX"
sed -i 's|(docs/a.md)|(docs/gone.md)|' "$FX/README.md"
violates "a link to a missing file" "README.md:10: links to docs/gone.md, which does not exist"
fixture "$FX"
sed -i 's|#sweeps-a-b--c)|#sweeps-a-b-c)|' "$FX/docs/a.md"
violates "an anchor that is not GitHub's" "docs/a.md:11: links to b.md#sweeps-a-b-c"
fixture "$FX"
sed -i 's|(#repeat-1)|(#repeat-2)|' "$FX/docs/a.md"
violates "a repeated heading's anchor past the repeats" "has no heading with the anchor #repeat-2"
fixture "$FX"
sed -i 's|(#here)|(#not-a-heading)|' "$FX/docs/a.md"
violates "an anchor of a heading inside a code block" "#not-a-heading"

# --- the tree ---
if check_tree "$ROOT" "${COMMANDS[@]}" >"$T/tree.out"; then
	pass "README.md is a first screen that names every command, and every link leads somewhere"
else
	cat "$T/tree.out"
	fail "README.md and docs/*.md break the rules ($(wc -l <"$T/tree.out") lines above)"
fi

finish
