#!/usr/bin/python3
"""compress_ratio.py BS FILE...: how the files' BS-byte blocks compress, each alone (zlib,
level 1, as a compressing device or filesystem takes a block), and where their bytes are zero
in every block (fio's buffer_compress_percentage lays the zeros at fixed places in each chunk;
random bytes are never zero in every block).  Prints the ratio (compressed / original bytes)
and those places as START-END runs, or "none"."""
import sys
import zlib

from dedupe_share import whole_blocks


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: compress_ratio.py BS FILE...")
    bs = int(sys.argv[1])
    total = packed = 0
    acc = 0  # every block's bytes ORed together: a byte is 0 where each block's is
    for b in whole_blocks(bs, sys.argv[2:]):
        total += bs
        packed += len(zlib.compress(b, 1))
        acc |= int.from_bytes(b, "little")
    if not total:
        sys.exit("compress_ratio.py: no whole block of %d bytes in %s" % (bs, sys.argv[2:]))
    nonzero = acc.to_bytes(bs, "little")
    runs, i = [], 0
    while i < bs:
        if nonzero[i]:
            i += 1
            continue
        j = i
        while j < bs and not nonzero[j]:
            j += 1
        runs.append("%d-%d" % (i, j))
        i = j
    print("%.4f" % (packed / total), ",".join(runs) or "none")


if __name__ == "__main__":
    main()
