"""make_transposed.py DIR: initial files for a 6 x 6 x 6 grid (a cubic grid,
where the lengths of the dimensions cannot tell their order):
ordered.nc has temp and salt on (z, y, x), transposed.nc on (x, y, z)."""
import os
import sys

import netCDF4
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
n = 6
k, j, i = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
for name, dims in (("ordered.nc", ("z", "y", "x")), ("transposed.nc", ("x", "y", "z"))):
    with netCDF4.Dataset(os.path.join(out, name), "w", format="NETCDF4") as ds:
        for d in dims:
            ds.createDimension(d, n)
        ds.createVariable("temp", "f8", dims)[:] = 20.0 - k - 0.1 * j - 0.01 * i
        ds.createVariable("salt", "f8", dims)[:] = 35.0 + 0.01 * k
print(f"ok: initial files in {out}")
