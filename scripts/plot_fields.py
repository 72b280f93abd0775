#!/usr/bin/env python3
"""Pictures of a minimodel history file (<output.dir>/<run.name>.nc).

    scripts/plot_fields.py HISTORY.nc [-o DIR] [--var temp|salt] [--record N]

Writes three PNGs into DIR (default: next to the history file), named after
it:
  <name>.<var>.surface.png   the top level of VAR at record N (default: the
                             last), land blank
  <name>.<var>.section.png   VAR against x and depth along the middle row of
                             the grid, at record N
  <name>.diagnostics.png     heat and salt content and the extrema of T and S
                             over the records
and prints their paths. Reads the file with xarray (CF decoding: the land's
_FillValue becomes NaN, time becomes dates where the file says how), plots
with matplotlib; both are in the .venv of scripts/setup:

    .venv/bin/python scripts/plot_fields.py output/default.nc

-o names a folder (created when missing); PNGs of the same names in it are
replaced. An -o that is a file, or a folder that cannot be made, is a usage
error.

Exit status: 0 written, 1 the file cannot be read or lacks the variables,
2 usage error.
"""

import argparse
import os
import sys


def make_output_dir(out):
    """Create the folder the PNGs go into; None, or what is wrong with it."""
    if os.path.exists(out) and not os.path.isdir(out):
        return (f"-o {out}: is a file, not a folder (-o names the folder the PNGs go "
                "into; they are named after the history file)")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        return f"-o {out}: cannot create the folder: {e.strerror or e}"
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description="PNG maps, a section and the diagnostics of a "
                                             "minimodel history file.")
    ap.add_argument("history")
    ap.add_argument("-o", "--output-dir", help="where the PNGs go (default: beside the file)")
    ap.add_argument("--var", default="temp", choices=("temp", "salt"))
    ap.add_argument("--record", type=int, default=-1, help="record (time index); default last")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    import xarray as xr

    try:
        ds = xr.open_dataset(args.history)
    except (OSError, ValueError) as e:
        print(f"plot_fields: {args.history}: {e}", file=sys.stderr)
        return 1
    needed = [args.var, "heat_content", "salt_content", "temp_min", "temp_max", "salt_min",
              "salt_max"]
    missing = [v for v in needed if v not in ds]
    if missing:
        print(f"plot_fields: {args.history}: not a minimodel history (missing "
              f"{', '.join(missing)})", file=sys.stderr)
        return 1
    n = ds.sizes["time"]
    if not -n <= args.record < n:
        print(f"plot_fields: --record {args.record}: the file has {n} records", file=sys.stderr)
        return 2
    out = args.output_dir or os.path.dirname(os.path.abspath(args.history))
    problem = make_output_dir(out)
    if problem:
        print(f"plot_fields: {problem}", file=sys.stderr)
        return 2
    base = os.path.join(out, os.path.basename(args.history).removesuffix(".nc"))
    field = ds[args.var].isel(time=args.record)
    when = str(ds["time"].values[args.record])
    units = field.attrs.get("units", "")
    name = field.attrs.get("long_name", args.var)
    written = []

    fig, ax = plt.subplots(figsize=(7, 5))
    field.isel(z=0).plot(ax=ax, cbar_kwargs={"label": f"{name} ({units})"})
    ax.set_title(f"{name} at the surface, {when}")
    ax.set_aspect("equal")
    path = f"{base}.{args.var}.surface.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)

    fig, ax = plt.subplots(figsize=(8, 4.5))
    field.isel(y=ds.sizes["y"] // 2).plot(ax=ax, yincrease=False,
                                          cbar_kwargs={"label": f"{name} ({units})"})
    ax.set_title(f"{name}, section at y = {float(ds['y'][ds.sizes['y'] // 2]):.4g} m, {when}")
    path = f"{base}.{args.var}.section.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)

    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True)
    for ax, v in zip(axes.flat, ("heat_content", "salt_content")):
        ds[v].plot(ax=ax, marker="o", markersize=3)
        ax.set_title(ds[v].attrs.get("long_name", v), fontsize="small")
    for ax, var in zip(axes[1], ("temp", "salt")):
        ds[f"{var}_min"].plot(ax=ax, label="min")
        ds[f"{var}_max"].plot(ax=ax, label="max")
        ax.set_ylabel(f"{var} ({ds[f'{var}_min'].attrs.get('units', '')})")
        ax.set_title(f"extrema of {var}", fontsize="small")
        ax.legend(fontsize="small")
    fig.tight_layout()
    path = f"{base}.diagnostics.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    written.append(path)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
