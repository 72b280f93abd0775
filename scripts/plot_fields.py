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
replaced. An -o that is a file, or a folder that cannot be made or written
into (so also the default, beside the history, where that cannot be
written), is a usage error. Each PNG is written to a temporary file beside
it and renamed into place when complete (scripts/mm_figure.py): a failed
write leaves an existing PNG as it was. A PNG name that exists and is not a
regular file, that the user cannot write (also one without any write
permission, chmod 444, when run as root) or that is the history itself is
refused before anything is drawn. Long names and units from the file are
drawn as they are ($ starts no matplotlib mathtext).

Grids of one column, row or level (nx, ny or nz = 1) are drawn as maps and
sections one cell wide. A history of one record (run.steps = 0, or
output.interval = 0 without output.initial_record) has its diagnostics
drawn as points.

Exit status: 0 written (also when the reader of the names printed went
away, as `| head` does), 1 the file cannot be read (also: data the netCDF
library cannot read, a damaged chunk, "NetCDF: HDF error": one line naming
the variable), is not NetCDF, has no records, lacks the variables or has
VAR on dimensions other than (time, z, y, x), 2 usage error (also: --record
out of range; a picture refused as above; a picture that cannot be written,
such as on a full disk, which leaves no half-written picture; the names of
the pictures that cannot be printed, standard output on a full disk), 130
interrupted (Ctrl-C).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mm_figure  # noqa: E402
import mm_nc_guard  # noqa: E402
import mm_stdout  # noqa: E402


def make_output_dir(out, what=None):
    """Create the folder the PNGs go into; None, or what is wrong with it
    (`what` names the folder in the message; default "-o OUT")."""
    what = what or f"-o {out}"
    if os.path.exists(out) and not os.path.isdir(out):
        return (f"{what}: is a file, not a folder (-o names the folder the PNGs go "
                "into; they are named after the history file)")
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as e:
        return f"{what}: cannot create the folder: {e.strerror or e}"
    try:  # root passes os.access; a read-only file system does not
        with tempfile.NamedTemporaryFile(dir=out, prefix=".plot_fields."):
            pass
    except OSError as e:
        return f"{what}: cannot write into the folder: {e.strerror or e}"
    return None


def edges(centres, bounds=None):
    """Cell edges of a coordinate: its bounds (z_bnds) when given, else
    half-way between centres, the ends as far out as their neighbours; one
    cell reaches from 0 to twice its centre (x and y are (i + 1/2) dx)."""
    import numpy as np
    c = np.asarray(centres, dtype=float)
    if bounds is not None and np.shape(bounds) == (len(c), 2):
        b = np.asarray(bounds, dtype=float)
        if np.all(np.isfinite(b)) and np.allclose(b[1:, 0], b[:-1, 1]):
            return np.concatenate([b[:, 0], b[-1:, 1]])
    if len(c) == 1:
        half = abs(c[0]) if c[0] != 0 else 0.5
        return np.array([c[0] - half, c[0] + half])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]])


def axis_label(da):
    """An axis label for a variable: its long_name (else its name) and its
    units in brackets, lines of at most 30 characters, as xarray writes
    them; shown literally ($ is no mathtext)."""
    import textwrap
    name = str(da.attrs.get("long_name", da.name))
    units = da.attrs.get("units")
    return mm_figure.literal("\n".join(textwrap.wrap(f"{name} [{units}]" if units else name,
                                                      30)))


def draw(fig, ax, xe, ye, values, label):
    """values (rows along y) as cells between the edges xe, ye; land (NaN)
    blank; a colour bar labelled label."""
    import numpy as np
    data = np.ma.masked_invalid(np.asarray(values, dtype=float))
    mesh = ax.pcolormesh(xe, ye, data, shading="flat")
    fig.colorbar(mesh, ax=ax, label=label)


def main(argv=None):
    try:
        return plot(argv)
    except KeyboardInterrupt:
        print("plot_fields: interrupted", file=sys.stderr)
        return 130


def plot(argv=None):
    ap = argparse.ArgumentParser(description="PNG maps, a section and the diagnostics of a "
                                             "minimodel history file.")
    ap.add_argument("history")
    ap.add_argument("-o", "--output-dir", help="where the PNGs go (default: beside the file)")
    ap.add_argument("--var", default="temp", choices=("temp", "salt"))
    ap.add_argument("--record", type=int, help="record (time index); default the last")
    args = ap.parse_args(argv)

    import matplotlib
    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    import numpy as np
    import xarray as xr

    if not os.path.isfile(args.history):
        why = "no such file" if not os.path.exists(args.history) else "not a file"
        print(f"plot_fields: {args.history}: {why}", file=sys.stderr)
        return 1
    try:
        with open(args.history, "rb") as f:
            magic = f.read(8)
    except OSError as e:
        print(f"plot_fields: {args.history}: cannot be read: {e.strerror or e}", file=sys.stderr)
        return 1
    if not (magic.startswith(b"CDF") or magic.startswith(b"\x89HDF")):
        print(f"plot_fields: {args.history}: not a NetCDF file", file=sys.stderr)
        return 1
    # a classic file cut short would be drawn with zeros for the data it
    # lacks; a name the library would read as another file's, or as a URL
    problem = mm_nc_guard.path_problem(args.history, False) or \
        mm_nc_guard.classic_cut_short(args.history) or \
        mm_nc_guard.read_problem(args.history)  # xarray reads them as it opens
    if problem:
        print(f"plot_fields: {args.history}: cannot be read: {problem}", file=sys.stderr)
        return 1
    try:
        ds = xr.open_dataset(args.history)
    except Exception as e:  # noqa: BLE001 -- any reader's failure is one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        print(f"plot_fields: {args.history}: cannot be read: {first}", file=sys.stderr)
        return 1
    needed = [args.var, "heat_content", "salt_content", "temp_min", "temp_max", "salt_min",
              "salt_max"]
    missing = [v for v in needed if v not in ds]
    if missing:
        print(f"plot_fields: {args.history}: not a minimodel history (missing "
              f"{', '.join(missing)})", file=sys.stderr)
        return 1
    dims = tuple(ds[args.var].dims)
    if dims != ("time", "z", "y", "x"):
        print(f"plot_fields: {args.history}: {args.var} has the dimensions "
              f"({', '.join(map(str, dims))}), want (time, z, y, x)", file=sys.stderr)
        return 1
    n = ds.sizes["time"]
    if n == 0:
        print(f"plot_fields: {args.history}: the file has no records", file=sys.stderr)
        return 1
    record = -1 if args.record is None else args.record
    if not -n <= record < n:
        print(f"plot_fields: --record {record}: the file has {n} records", file=sys.stderr)
        return 2
    out = args.output_dir or os.path.dirname(os.path.abspath(args.history))
    problem = make_output_dir(out, None if args.output_dir else
                              f"{out} (the folder of the history; give -o)")
    if problem:
        print(f"plot_fields: {problem}", file=sys.stderr)
        return 2
    base = os.path.join(out, os.path.basename(args.history).removesuffix(".nc"))
    pictures = [f"{base}.{args.var}.surface.png", f"{base}.{args.var}.section.png",
                f"{base}.diagnostics.png"]
    try:  # before any drawing: a picture that is write-protected, not a file, the history
        for picture in pictures:
            mm_figure.check_target(picture, inputs=[args.history])
    except mm_figure.FigureError as e:
        print(f"plot_fields: {e}", file=sys.stderr)
        return 2
    # the data drawn read now, where a damaged chunk (netCDF's "HDF error")
    # is the file's fault, named with the variable
    field = ds[args.var].isel(time=record)
    reading = args.var
    try:
        field = field.load()
        for reading in needed[1:] + [v for v in ("z_bnds",) if v in ds.variables]:
            ds.variables[reading].load()  # in place: ds[reading] is read from memory
    except Exception as e:  # noqa: BLE001 -- any reader's failure is one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        print(f"plot_fields: {args.history}: cannot be read: variable {reading}: {first}",
              file=sys.stderr)
        return 1
    when = str(ds["time"].values[record])
    units = mm_figure.literal(field.attrs.get("units", ""))
    name = mm_figure.literal(field.attrs.get("long_name", args.var))
    label = f"{name} ({units})"
    # cell edges from the coordinates (index numbers where a file lacks them):
    # pcolormesh draws a grid of one column, row or level as a map too, which
    # xarray's .plot() turns into a line plot
    coord = {d: ds[d].values if d in ds.variables else range(ds.sizes[d]) for d in "zyx"}
    # cells cannot be drawn at a place that is not a number (pcolormesh
    # raised ValueError: a traceback)
    for d, values in list(coord.items()) + [("z_bnds", ds["z_bnds"].values if "z_bnds" in
                                             ds.variables else [])]:
        values = np.asarray(values)
        if values.dtype.kind not in "iuf" or not np.isfinite(values).all():
            print(f"plot_fields: {args.history}: the coordinate {d} holds values that are not "
                  "finite numbers: its cells cannot be drawn", file=sys.stderr)
            return 1
    xe, ye = edges(coord["x"]), edges(coord["y"])
    ze = edges(coord["z"], ds["z_bnds"].values if "z_bnds" in ds.variables else None)
    written = []

    def save(fig, path):
        fig.tight_layout()
        try:  # a full disk: the picture as it was, no half-written one left behind
            mm_figure.save(fig, path, inputs=[args.history], dpi=100)
        except mm_figure.FigureError as e:
            print(f"plot_fields: {e}", file=sys.stderr)
            sys.exit(2)
        finally:
            plt.close(fig)
        written.append(path)

    fig, ax = plt.subplots(figsize=(7, 5))
    draw(fig, ax, xe, ye, field.isel(z=0).values, label)
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m)")
    ax.set_title(f"{name} at the surface, {when}")
    ax.set_aspect("equal")
    save(fig, pictures[0])

    mid = ds.sizes["y"] // 2
    fig, ax = plt.subplots(figsize=(8, 4.5))
    draw(fig, ax, xe, ze, field.isel(y=mid).values, label)
    ax.set_ylim(ze.max(), ze.min())  # depth down
    ax.set_xlabel("x (m)")
    ax.set_ylabel("depth (m)")
    ax.set_title(f"{name}, section at y = {float(coord['y'][mid]):.4g} m, {when}")
    save(fig, pictures[1])

    # a calendar other than the standard one (run.calendar = noleap, 360_day,
    # ...), or dates past year 9999, decode to cftime objects, which
    # matplotlib draws only with nc-time-axis: such a time axis is drawn as
    # days since the first record
    if ds["time"].dtype == object:
        times = ds["time"].values
        calendar = ds["time"].encoding.get("calendar") or ds["time"].attrs.get("calendar", "")
        days = [(t - times[0]).total_seconds() / 86400.0 for t in times]
        ds = ds.assign_coords(time=("time", days, {
            "long_name": f"days since {times[0]}" + (f" ({calendar} calendar)" if calendar else ""),
            "units": "d"}))
    # drawn with matplotlib itself: xarray's .plot() squeezes a series of one
    # record to a scalar and refuses it ("No numeric data to plot"); one
    # record is a point (a marker), more are lines
    times = ds["time"].values
    points = {"marker": "o", "markersize": 3}
    fig, axes = plt.subplots(2, 2, figsize=(10, 6), sharex=True)
    for ax, v in zip(axes[0], ("heat_content", "salt_content")):
        ax.plot(times, ds[v].values, **points)
        ax.set_ylabel(axis_label(ds[v]))
        ax.set_title(mm_figure.literal(ds[v].attrs.get("long_name", v)), fontsize="small")
    for ax, var in zip(axes[1], ("temp", "salt")):
        for end in ("min", "max"):
            ax.plot(times, ds[f"{var}_{end}"].values, label=end, **(points if n == 1 else {}))
        ax.set_ylabel(f"{var} ({mm_figure.literal(ds[f'{var}_min'].attrs.get('units', ''))})")
        ax.set_title(f"extrema of {var}", fontsize="small")
        ax.legend(fontsize="small")
    for ax in axes.flat:
        ax.set_xlabel(axis_label(ds["time"]))
    if np.issubdtype(times.dtype, np.datetime64):  # dates as xarray draws them
        import matplotlib.dates as mdates
        locator = mdates.AutoDateLocator()
        axes[1, 0].xaxis.set_major_locator(locator)  # shared by all four
        axes[1, 0].xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    save(fig, pictures[2])
    # the reader going away (| head) is no fault: the pictures are written
    problem = mm_stdout.print_lines(written)
    if problem:  # a full disk (> /dev/full)
        print(f"plot_fields: cannot print the names of the pictures: {problem}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
