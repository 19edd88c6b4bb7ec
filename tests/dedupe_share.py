#!/usr/bin/python3
"""dedupe_share.py BS FILE...: the share of the files' BS-byte blocks (the files one after the
other, as one device would hold them) that repeat an earlier block's bytes exactly, what a
deduplicating device drops (fio's t/fio-dedupe counts the same).  Prints the blocks, the
distinct blocks and the share."""
import hashlib
import sys


def whole_blocks(bs, paths):
    """The files' whole BS-byte blocks, one file after the other (a partial last one left out)."""
    for path in paths:
        with open(path, "rb") as f:
            while True:
                b = f.read(bs)
                if len(b) < bs:
                    break
                yield b


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: dedupe_share.py BS FILE...")
    bs = int(sys.argv[1])
    seen = set()
    blocks = 0
    for b in whole_blocks(bs, sys.argv[2:]):
        blocks += 1
        seen.add(hashlib.sha1(b).digest())
    if not blocks:
        sys.exit("dedupe_share.py: no whole block of %d bytes in %s" % (bs, sys.argv[2:]))
    print(blocks, len(seen), "%.4f" % (1 - len(seen) / blocks))


if __name__ == "__main__":
    main()
