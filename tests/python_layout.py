# SPDX-License-Identifier: MIT
"""Helpers of tests/cli_python_layout.sh: python/llmio_store.py's ctypes mirrors against the C headers.

    python_layout.py cprog PYDIR INCDIR llmio/store.h ... > layout.c   the C side's facts
    python_layout.py compare PYDIR FACTS      compare them with llmio_store's ctypes side

The C program is written from the headers themselves: every member of every struct that
``llmio_store.C_LAYOUT`` names is read out of the header text, and the program prints the
struct's sizeof and each member's offsetof and size in declaration order, then the value of
every constant ``llmio_store.C_CONSTANTS`` names.  A member added to the header only, or one
moved, therefore changes the C side's list even where it falls into padding and leaves sizeof
alone.  Lines: ``struct NAME SIZE``, ``member NAME MEMBER OFFSET SIZE``, ``const NAME VALUE``.
"""

import ctypes
import importlib
import os
import re
import sys


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def members(text, struct):
    """The member names of `struct NAME { ... };` in declaration order (declarators split on
    commas; pointers, const and array bounds stripped)."""
    m = re.search(r"\bstruct\s+%s\s*\{(.*?)\}\s*;" % re.escape(struct), text, flags=re.S)
    if m is None:
        return None
    names = []
    for decl in m.group(1).split(";"):
        decl = " ".join(decl.split())
        if not decl:
            continue
        # the type ends before the first declarator: "uint64_t a, b" / "const char *const *t"
        parts = decl.split(",")
        for d in parts:
            d = re.sub(r"\[[^\]]*\]", "", d).strip()  # array bounds
            ident = re.findall(r"[A-Za-z_]\w*", d)
            if not ident:
                raise SystemExit("cannot read a member of struct %s: %r" % (struct, decl))
            names.append(ident[-1])
    return names


def cprog(incdir, headers):
    import llmio_store as ls

    text = "".join(strip_comments(open(os.path.join(incdir, h)).read()) for h in headers)
    out = ["#include <stddef.h>", "#include <stdio.h>"]
    out += ["#include <%s>" % h for h in headers]
    out += ["", "int main(void)", "{"]
    for struct in ls.C_LAYOUT:
        names = members(text, struct)
        if names is None:
            raise SystemExit("no struct %s in %s" % (struct, " ".join(headers)))
        out.append('\tprintf("struct %s %%zu\\n", sizeof(struct %s));' % (struct, struct))
        for n in names:
            out.append('\tprintf("member %s %s %%zu %%zu\\n", offsetof(struct %s, %s), '
                       'sizeof(((struct %s *)0)->%s));' % (struct, n, struct, n, struct, n))
    for c in ls.C_CONSTANTS:
        out.append('\tprintf("const %s %%lld\\n", (long long)(%s));' % (c, c))
    out += ["\treturn 0;", "}"]
    print("\n".join(out))


def py_facts(ls):
    facts = []
    for struct, cls in ls.C_LAYOUT.items():
        facts.append("struct %s %d" % (struct, ctypes.sizeof(cls)))
        for name, _ in cls._fields_:
            f = getattr(cls, name)
            facts.append("member %s %s %d %d" % (struct, name, f.offset, f.size))
    for c, v in ls.C_CONSTANTS.items():
        facts.append("const %s %d" % (c, v))
    return facts


def compare(pydir, factsfile):
    sys.path.insert(0, pydir)
    ls = importlib.import_module("llmio_store")
    c = [line.strip() for line in open(factsfile) if line.strip()]
    p = py_facts(ls)
    bad = 0
    # every ctypes Structure of the binding mirrors a C struct, or says it does not
    for name in dir(ls):
        obj = getattr(ls, name)
        if (isinstance(obj, type) and issubclass(obj, ctypes.Structure)
                and obj not in ls.C_LAYOUT.values() and not getattr(obj, "_not_a_mirror", False)):
            print("llmio_store.%s is a ctypes struct that C_LAYOUT does not name" % name)
            bad += 1
    for i in range(max(len(c), len(p))):
        cl = c[i] if i < len(c) else "(nothing)"
        pl = p[i] if i < len(p) else "(nothing)"
        if cl != pl:
            print("differs at line %d: C has '%s', ctypes has '%s'" % (i + 1, cl, pl))
            bad += 1
            break  # after a member added or moved every later line differs
    n_struct = sum(1 for x in c if x.startswith("struct "))
    n_member = sum(1 for x in c if x.startswith("member "))
    print("%d structs, %d members, %d constants compared" % (
        n_struct, n_member, sum(1 for x in c if x.startswith("const "))))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "cprog":
        sys.path.insert(0, sys.argv[2])
        cprog(sys.argv[3], sys.argv[4:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: python_layout.py cprog PYDIR INCDIR HEADER... | compare PYDIR FACTS")
