"""Every test must leave the library's live-object count, the number of Python
exceptions held by errors and the reference counts it checks where they started."""

import gc

import pytest

import object_python as op


def _settle():
    gc.collect()


@pytest.fixture(autouse=True)
def no_leaks():
    # Warm the lazily made classes and globals, which live for the process.
    _settle()
    live = op._native._live_objects()
    pending = op._native._pending_exceptions()
    yield
    _settle()
    assert op._native._pending_exceptions() == pending, "a Python exception stayed in Rust"
    assert op._native._live_objects() == live, "objects leaked (or were freed twice)"


@pytest.fixture
def tour():
    return op.namespace("tour")
