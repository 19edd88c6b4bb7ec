# SPDX-License-Identifier: MIT
"""For tests/cli_fio_conformance.sh's checks: a job's --key=value arguments, and fio's sizes."""

UNIT = {"": 1, "k": 1024, "m": 1024 ** 2}


def job_args(argv):
    """The --key=value arguments of argv as a dict (key without its dashes)."""
    return dict(a[2:].split("=", 1) for a in argv if "=" in a)


def size(text):
    """A size as fio writes one (512, 4k, 8m) in bytes."""
    t = text.lower()
    return int(t.rstrip("km")) * UNIT[t[-1] if t[-1] in "km" else ""]
