"""What the tests of the scripts share: a Python with the packages they
need, and a runner of every `test_*` function a test file defines.

    import script_tests
    script_tests.need("test_x.py", ("numpy", "netCDF4"))   # before those imports
    ...
    sys.exit(script_tests.run(globals(), sys.argv[1:]))    # [-v] [TEST ...]

Every `test_*` function of the file runs, in the order of the file: none is
left out by a list to keep up to date. Exit status 0 when every test passes
(a test may raise Skip: not run here, with its reason; counted apart), 1
otherwise; 77 when every test was skipped, or the packages are missing and
there is no .venv to run under.
"""

import importlib
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Skip(Exception):
    """Raised by a test that cannot run here; its message says why."""


def need(name, modules, hint=""):
    """Import `modules`; where one is missing, re-run this process under the
    repository's .venv/bin/python when that is not the one running, else
    exit 77 (skip) naming them."""
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:
        venv = os.path.join(ROOT, ".venv", "bin", "python")
        in_venv = os.path.realpath(sys.prefix) == os.path.realpath(os.path.join(ROOT, ".venv"))
        if os.path.exists(venv) and not in_venv:
            os.execv(venv, [venv] + sys.argv)
        print(f"{name}: SKIP: {', '.join(modules)} are needed{hint}", file=sys.stderr)
        sys.exit(77)


def run(namespace, argv):
    """Run the test_* functions of namespace (a module's globals()), or those
    named in argv; -v prints the traceback of every failure."""
    tests = [f for n, f in namespace.items() if n.startswith("test_") and callable(f)]
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")]
    unknown = [n for n in names if n not in {t.__name__ for t in tests}]
    if unknown:
        print(f"no test {', '.join(unknown)}", file=sys.stderr)
        return 2
    selected = [t for t in tests if not names or t.__name__ in names]
    failed = skipped = 0
    for test in selected:
        try:
            test()
            print(f"PASS {test.__name__}")
        except Skip as e:
            skipped += 1
            print(f"SKIP {test.__name__}: {e}")
        except Exception as e:  # report every test, then fail
            failed += 1
            print(f"FAIL {test.__name__}: {e}")
            if verbose or not isinstance(e, AssertionError):
                traceback.print_exc()
    # a skipped test is not counted as passed; a suite that ran none is
    # skipped as a whole (77)
    print(f"{len(selected) - failed - skipped} of {len(selected)} tests passed"
          + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 77 if skipped == len(selected) else 0
