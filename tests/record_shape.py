#!/usr/bin/env python3
"""The shape of an llmio record file, for tests/cli_records.sh: every key in the order written
with the JSON type of its value (no values, which vary with the machine and the clock), and a
CSV file's header with the number of cells of each line.

Usage: record_shape.py json|jsonl|csv FILE"""
import json
import sys


def shape(v, path, out):
    if isinstance(v, dict):
        out.append(f"{path} {{")
        for k, x in v.items():
            shape(x, f"{path}.{k}", out)
        out.append(f"{path} }}")
    elif isinstance(v, list):
        # histogram pairs and warnings vary in number with the run and the machine's load
        if path.endswith("_ns") or path.endswith("warnings"):
            out.append(f"{path} list")
            return
        out.append(f"{path} [")
        for i, x in enumerate(v):
            shape(x, f"{path}[{i}]", out)
        out.append(f"{path} ]")
    elif isinstance(v, bool):
        out.append(f"{path} bool")
    elif isinstance(v, (int, float)):
        out.append(f"{path} number")
    elif v is None:
        out.append(f"{path} null")
    else:
        out.append(f"{path} string")


def main():
    kind, name = sys.argv[1], sys.argv[2]
    out = []
    with open(name, encoding="utf-8") as f:
        text = f.read()
    if kind == "json":
        shape(json.loads(text), "", out)
    elif kind == "jsonl":
        for line in text.splitlines():
            if line.strip():
                shape(json.loads(line), "", out)
    else:
        lines = text.splitlines()
        out.append(lines[0])
        out.extend(f"{len(line.split(','))} cells" for line in lines[1:])
    print("\n".join(out))


main()
