"""What the extension a user installs (`pip install ./object-python`, without the crate's
`testing` feature) ships: the tour's types, but none of the test and demo globals
(`testing.*`, `tour.eval`, `tour.print`) or the benchmarks' plain pyo3 functions.

`scripts/python.sh` builds that configuration beside the test build it installs and
names it in `OBJECT_PYTHON_SHIPPED`; each build is inspected in an interpreter of its
own (two copies of the library in one process would be two registries)."""

import json
import os
import subprocess
import sys

import pytest

import object_python as op

INSPECT = """
import importlib.machinery, importlib.util, json, sys
loader = importlib.machinery.ExtensionFileLoader("_native", sys.argv[1])
module = importlib.util.module_from_spec(importlib.util.spec_from_loader("_native", loader))
loader.exec_module(module)
print(json.dumps({
    "testing": getattr(module, "_testing", None),
    "globals": module.list_globals(),
    "names": dir(module),
    "types": module.type_keys(),
}))
"""


def inspect(path):
    run = subprocess.run(
        [sys.executable, "-c", INSPECT, path], capture_output=True, text=True, check=True
    )
    return json.loads(run.stdout)


def only_in_test_builds(found):
    """The globals and module attributes that only the test build may have."""
    return sorted(
        [g for g in found["globals"] if g.startswith(("testing.", "tour."))]
        + [n for n in found["names"] if n.startswith("_bench") or n == "_numpy_read_in_place"]
    )


def test_the_test_build_has_the_test_globals():
    found = inspect(op._native.__file__)
    assert found["testing"] is True
    expected = {"testing.echo", "tour.eval", "tour.print", "_bench_plain_noop", "_numpy_read_in_place"}
    assert expected <= set(only_in_test_builds(found))


@pytest.mark.skipif(
    not os.environ.get("OBJECT_PYTHON_SHIPPED"),
    reason="OBJECT_PYTHON_SHIPPED names no build without `testing` (scripts/python.sh makes one)",
)
def test_the_shipped_build_has_no_test_or_demo_code():
    found = inspect(os.environ["OBJECT_PYTHON_SHIPPED"])
    assert found["testing"] is False
    assert only_in_test_builds(found) == []
    assert {"tour.Var", "tour.Add", "tour.Function"} <= set(found["types"])
