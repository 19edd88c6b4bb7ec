#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The layout of llmio's public types as the compiler lays them out (docs/library.md, "ABI").

    abi_layout.py [--cc CC] [--include DIR] > LAYOUT     the layout of the headers in DIR
    abi_layout.py --check BASELINE [--include DIR]      compatible with BASELINE, or exit 1
    abi_layout.py --asserts BASELINE > FILE.c           C11 static assertions of BASELINE

The layout is read from the DWARF the compiler writes for a file that includes every public
header (readelf --debug-dump=info), not from the headers' text, so it is what a client's
compiler sees: every struct llmio_* with its size and each member's offset, and every enum
llmio_* with each constant's value.  A release may add structs, enums, constants and members
at the end of a struct; anything else a client built against BASELINE would misread.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

RESERVED = "reserved_"  # a struct's room for later members (include/llmio/job.h)
HEADERS = ["common.h", "engine.h", "hist.h", "job.h", "llmio.h", "model.h", "result.h",
           "store.h", "trace.h"]
DIE = re.compile(r"^\s*<(\d+)><([0-9a-f]+)>: Abbrev Number: \d+ \((DW_TAG_\w+)\)")
ATTR = re.compile(r"^\s*<[0-9a-f]+>\s+(DW_AT_\w+)\s*:\s*(.*)$")


def dies(obj):
    """Each DIE of obj as (depth, tag, {attribute: value})."""
    out = subprocess.run(["readelf", "--debug-dump=info", obj], check=True,
                         capture_output=True, text=True).stdout
    cur = None
    for line in out.splitlines():
        m = DIE.match(line)
        if m:
            if cur:
                yield cur
            cur = (int(m.group(1)), m.group(3), {})
            continue
        m = ATTR.match(line)
        if m and cur:
            val = m.group(2).strip()
            # "(indirect string, offset: 0x5d8): name" -> "name"
            val = re.sub(r"^\(indirect (line )?string, offset: (0x)?[0-9a-f]+\): ", "", val)
            cur[2][m.group(1)] = val
    if cur:
        yield cur


def num(val):
    """readelf's number, decimal or 0x hex, with a trailing '(signed)' or similar dropped."""
    return int(val.split()[0], 0)


def layout(cc, include):
    """The layout as lines: 'struct NAME SIZE', '  MEMBER OFFSET', 'enum NAME', '  CONST VALUE'."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "abi.c")
        with open(src, "w") as f:
            for h in HEADERS:
                f.write('#include "llmio/%s"\n' % h)
        obj = os.path.join(tmp, "abi.o")
        subprocess.run([cc, "-std=c11", "-g", "-fno-eliminate-unused-debug-types", "-I",
                        include, "-c", src, "-o", obj], check=True)
        lines, owner, depth = [], None, 0
        for d, tag, a in dies(obj):
            if owner is not None and d <= depth:
                owner = None
            name = a.get("DW_AT_name", "")
            if d == 1 and tag in ("DW_TAG_structure_type", "DW_TAG_enumeration_type") and \
                    name.startswith("llmio_") and "DW_AT_declaration" not in a:
                kind = "struct" if tag == "DW_TAG_structure_type" else "enum"
                size = " %d" % num(a["DW_AT_byte_size"]) if kind == "struct" else ""
                lines.append("%s %s%s" % (kind, name, size))
                owner, depth = name, d
            elif owner is not None and d == depth + 1 and tag == "DW_TAG_member":
                lines.append("  %s %d" % (name or "(anonymous)",
                                          num(a.get("DW_AT_data_member_location", "0"))))
            elif owner is not None and d == depth + 1 and tag == "DW_TAG_enumerator":
                lines.append("  %s %d" % (name, num(a["DW_AT_const_value"])))
        return lines


def parse(lines):
    """{(kind, name): (size or None, {member: value}, [members in order])}"""
    types, cur = {}, None
    for line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            f = line.split()
            cur = (f[0], f[1])
            types[cur] = (int(f[2]) if len(f) > 2 else None, {}, [])
        else:
            m, v = line.split()
            types[cur][1][m] = int(v)
            types[cur][2].append(m)
    return types


def check(base, now):
    """What a client built against base would misread in now."""
    bad = []
    for key, (size, members, order) in base.items():
        kind, name = key
        if key not in now:
            bad.append("%s %s: gone" % key)
            continue
        nsize, nmembers, norder = now[key]
        # reserved_: room at the end of a struct others embed; new members take its bytes
        room = members.get(RESERVED)
        if room is not None and nsize != size:
            bad.append("struct %s: %d bytes, was %d (new members take reserved_'s bytes; the "
                       "size stays)" % (name, nsize, size))
        for m in order:
            if m == RESERVED:
                continue
            if m not in nmembers:
                bad.append("%s %s: member %s gone" % (kind, name, m))
            elif nmembers[m] != members[m]:
                what = "offset" if kind == "struct" else "value"
                bad.append("%s %s: %s %s was %d, is %d" % (kind, name, m, what, members[m],
                                                           nmembers[m]))
        if kind == "struct":
            if nsize < size:
                bad.append("struct %s: shrank from %d to %d bytes" % (name, size, nsize))
            for m in norder:
                if m in members or m == RESERVED or (room is not None and nmembers[m] >= room):
                    continue
                if nmembers[m] < size:
                    bad.append("struct %s: new member %s at %d, inside the old %d bytes "
                               "(add members at the end)" % (name, m, nmembers[m], size))
    return bad


def asserts(base, path):
    out = ["/* Generated by scripts/abi_layout.py --asserts from %s:",
           " * the public types keep the layout of that release (docs/library.md, \"ABI\").",
           " * Checked where it was recorded: x86-64 (LP64). */", "#include <stddef.h>", ""]
    out[0] %= path
    for h in HEADERS:
        out.append('#include "llmio/%s"' % h)
    out += ["", "/* one line per fact */", "/* clang-format off */", "#if defined(__x86_64__) && defined(__LP64__)"]
    for (kind, name), (size, members, order) in sorted(base.items()):
        if kind == "struct":
            if RESERVED in members:  # its size stays: new members take reserved_'s bytes
                out.append("_Static_assert(sizeof(struct %s) == %d, \"struct %s resized\");" %
                           (name, size, name))
            else:
                out.append("_Static_assert(sizeof(struct %s) >= %d, \"struct %s shrank\");" %
                           (name, size, name))
            for m in order:
                if m in ("(anonymous)", RESERVED):
                    continue
                out.append("_Static_assert(offsetof(struct %s, %s) == %d, \"%s.%s moved\");" %
                           (name, m, members[m], name, m))
        else:
            for m in order:
                out.append("_Static_assert(%s == %d, \"%s changed value\");" % (m, members[m], m))
    out += ["#endif", "/* clang-format on */", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--include", default=os.path.join(os.path.dirname(__file__), "..",
                                                      "include"))
    ap.add_argument("--check", metavar="BASELINE")
    ap.add_argument("--asserts", metavar="BASELINE")
    o = ap.parse_args()
    if o.asserts:
        with open(o.asserts) as f:
            sys.stdout.write(asserts(parse(f.read().splitlines()), o.asserts))
        return 0
    now = layout(o.cc, o.include)
    if not o.check:
        print("# the layout of llmio's public types (scripts/abi_layout.py)")
        print("\n".join(now))
        return 0
    with open(o.check) as f:
        base = parse(f.read().splitlines())
    bad = check(base, parse(now))
    for b in bad:
        print("abi: " + b)
    if bad:
        print("abi: %d incompatible change(s) against %s" % (len(bad), o.check))
        return 1
    print("abi: compatible with %s (%d types)" % (o.check, len(base)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
