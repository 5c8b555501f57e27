"""`load_module`: a Rust plugin loaded from Python adopts the process's runtime.

``OBJECT_DEMO_PLUGIN`` names the demo plugin (``object-capi/plugins/rust-demo``, built
by ``scripts/python.sh`` with the extension's profile and compiler); without it the
plugin tests are skipped outside CI.
"""

import math
import os

import pytest

import object_python as op

PLUGIN = os.environ.get("OBJECT_DEMO_PLUGIN")
if PLUGIN is None and os.environ.get("CI"):
    raise RuntimeError("OBJECT_DEMO_PLUGIN is not set: scripts/python.sh sets it in CI")
needs_plugin = pytest.mark.skipif(PLUGIN is None, reason="OBJECT_DEMO_PLUGIN is not set")

# Loaded once before the tests: the first load registers the plugin's global
# (`plugin.demo.version`, a function and its name), which lives for the process like
# every global, so the leak checks around each test start after it.
if PLUGIN is not None:
    op.load_module(PLUGIN)


def test_a_missing_library_is_a_plugin_error():
    with pytest.raises(op.ObjectError) as err:
        op.load_module("/no/such/plugin.so")
    assert err.value.kind == "PluginError"
    assert "/no/such/plugin.so" in str(err.value)


def test_a_library_that_is_no_plugin_is_refused(tmp_path):
    path = tmp_path / "not_a_library.so"
    path.write_bytes(b"not an ELF file")
    with pytest.raises(op.ObjectError) as err:
        op.load_module(path)  # a path-like is accepted
    assert err.value.kind == "PluginError"


@needs_plugin
def test_a_plugin_module_lists_and_gives_its_functions():
    m = op.load_module(PLUGIN)
    assert isinstance(m, op.Module) and isinstance(m, op.ModuleBase)
    assert m.name == "demo"
    assert {"add", "area", "make_circle", "fail"} <= set(m.functions())
    assert len(m) == len(m.functions())
    assert m.imports == []
    assert "add" in m and "no_such" not in m
    assert "add" in dir(m)
    assert m.add(40, 2) == 42 and m["add"](1, 2) == 3
    assert m.get_function("add", query_imports=False)(2, 2) == 4
    assert m.get_function("no_such") is None
    with pytest.raises(KeyError):
        m["no_such"]
    with pytest.raises(AttributeError):
        m.no_such
    # Loading again gives the same library's functions (it is never unloaded).
    assert op.load_module(PLUGIN).add(1, 1) == 2


@needs_plugin
def test_a_plugin_types_are_classes_under_their_host_bases():
    m = op.load_module(PLUGIN)
    c = m.make_circle(7, 2.0)
    Circle, Shape = op.type_class("plugin.Circle"), op.type_class("fixtures.Shape")
    assert type(c) is Circle and isinstance(c, Shape) and isinstance(c, op.Object)
    assert c.radius == 2.0
    assert "plugin.Circle" in repr(c)
    assert math.isclose(m.area(c), math.pi * 4.0)
    # Made from Python by keyword, through the plugin's reflection.
    s = op.type_class("plugin.Square")(id=1, side=3.0)
    assert m.area(s) == 9.0
    # JSON graph and structural equality over plugin types.
    back = op.load_json_graph(op.save_json_graph(c))
    assert back is not c and op.structural_equal(back, c)
    assert not op.structural_equal(m.make_circle(7, 2.5), c)
    # The plugin's globals are the process's.
    assert op.get_global("plugin.demo.version")() == 3
    # Its errors keep their kind.
    with pytest.raises(ValueError, match="boom"):
        m.fail("boom")
    # Its registry is ours: the index it sees is the class's.
    assert m.index_of("plugin.Circle") == Circle._type_index
