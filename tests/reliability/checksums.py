#!/usr/bin/env python3
"""checksums.py FILE [--write]: a restart (or crash) file's checksums
computed with NumPy from the stored values, independently of the model's C
code (docs/output.md, "Restart files"):

  checksum          the sum modulo 2^64 of the values' bit patterns (a
                    double's 64 bits, an int's 32 as an unsigned number);
  checksum_ordered  the sum modulo 2^64 of mix(bits ^ mix(n)) over the
                    values, n a value's index in the field as stored (C
                    order) and mix SplitMix64's output function.

Prints one line per field, "NAME PLAIN ORDERED", and exits 1 if a field's
attributes are not these or are missing (0 if they are). With --write, the
attributes are written from the values instead (a file changed on
purpose)."""
import sys

import netCDF4
import numpy as np

FIELDS = ("temp", "salt", "kmt")


def bits(x):
    """The stored values as unsigned 64-bit numbers, in C order."""
    x = np.ascontiguousarray(x)
    if x.dtype == np.float64:
        return x.view(np.uint64).ravel()
    return x.astype(np.int32).view(np.uint32).astype(np.uint64).ravel()


def mix(x):
    """SplitMix64's output function of each element (modulo 2^64)."""
    with np.errstate(over="ignore"):
        z = x + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def sums(x):
    """(checksum, checksum_ordered) of an array, as 16 hexadecimal digits."""
    u = bits(x)
    with np.errstate(over="ignore"):
        plain = int(u.sum(dtype=np.uint64))
        ordered = int(mix(u ^ mix(np.arange(u.size, dtype=np.uint64))).sum(dtype=np.uint64))
    return format(plain, "016x"), format(ordered, "016x")


def main():
    path, write = sys.argv[1], "--write" in sys.argv[2:]
    bad = 0
    with netCDF4.Dataset(path, "a" if write else "r") as d:
        d.set_auto_mask(False)
        for name in FIELDS:
            plain, ordered = sums(d[name][:])
            print(name, plain, ordered)
            if write:
                d[name].checksum, d[name].checksum_ordered = plain, ordered
            else:
                have = tuple(d[name].getncattr(a) if a in d[name].ncattrs() else "(none)"
                             for a in ("checksum", "checksum_ordered"))
                if have != (plain, ordered):
                    print(f"{path}: {name}: the file says {have[0]} {have[1]}")
                    bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
