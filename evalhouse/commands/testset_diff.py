"""``evalhouse testset diff NAME V1 V2``: the cases added, removed and changed between two
versions of a test set (view ``testset_version_cases``)."""

from __future__ import annotations

import argparse
import re

from evalhouse import home
from evalhouse.console import EXIT_OK, UsageError

_VERSION = re.compile(r"^[vV]?(\d{1,9})$")


def add_parser(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``diff`` action of ``testset`` and its arguments."""
    p = actions.add_parser(
        "diff", parents=[home.home_options()], help="cases changed between two versions"
    )
    p.add_argument("name", help="test-set name (its file name without the extension)")
    p.add_argument("v1", help="older version number (1, 2, ... or v1, v2, ...)")
    p.add_argument("v2", help="newer version number")
    p.add_argument("--no-ingest", action="store_true", help="read the warehouse as it is")
    p.set_defaults(func=run)


def _version(text: str, which: str) -> int:
    found = _VERSION.match(text.strip())
    if not found or int(found.group(1)) < 1:
        raise UsageError(f"{which} {text!r}: a version is a number from 1 (or v1, v2, ...)")
    return int(found.group(1))


def run(args: argparse.Namespace) -> int:
    """Print the summary line, then one line per added, removed and changed case."""
    from engine.errors import one_line, printable
    from engine.testsets.versions import diff_cases
    from warehouse.queries import Warehouse
    from warehouse.testset_queries import testset_version_cases, testset_version_list

    old, new = _version(args.v1, "V1"), _version(args.v2, "V2")
    paths = home.paths(args, writes=not args.no_ingest)
    if not args.no_ingest:
        home.ingest_now(paths, quiet=True)
    warehouse = Warehouse(paths.warehouse, catalog=home.catalog())
    with warehouse.session():
        versions = testset_version_list(warehouse, args.name)
        if versions.is_empty():
            known = sorted(set(testset_version_list(warehouse)["test_set_name"]))
            shown = ", ".join(one_line(printable(n)) for n in known[:10])
            hint = f" (known: {shown})" if known else " (no run has one yet)"
            raise UsageError(f"test set {args.name!r}: no versions in the warehouse{hint}")
        last = int(versions["version"].max())  # type: ignore[arg-type]
        for version, which in ((old, "V1"), (new, "V2")):
            if version > last:
                raise UsageError(
                    f"{which} {version}: test set {args.name!r} has versions 1 to {last}"
                )
        sides = [
            dict(
                testset_version_cases(warehouse, args.name, v)
                .select("sample_id", "case_json")
                .iter_rows()
            )
            for v in (old, new)
        ]
    diff = diff_cases(sides[0], sides[1])
    # names and ids come from files: a terminal control in one is shown, not obeyed
    counts = (
        f"{len(diff.added)} added, {len(diff.removed)} removed, {len(diff.changed)} changed, "
        f"{diff.unchanged} unchanged"
    )
    print(f"{one_line(printable(args.name))} v{old} -> v{new}: {counts}")
    for sample_id in diff.added:
        print(f"added    {printable(sample_id)}")
    for sample_id in diff.removed:
        print(f"removed  {printable(sample_id)}")
    for case in diff.changed:
        print(f"changed  {printable(case.sample_id)}  ({printable(', '.join(case.fields))})")
    return EXIT_OK
