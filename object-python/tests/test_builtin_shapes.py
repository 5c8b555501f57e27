"""A built-in the package knows nothing of (`testing.Tuple`, defined in Rust only for
the tests, shape items): its class, its items, construction, structural equality and the
JSON graph all come from its built-in hooks."""

import object_python as op
import pytest


def tuple_class():
    if "testing.Tuple" not in op.type_keys():
        pytest.skip("the extension was built without the `testing` feature")
    return op.type_class("testing.Tuple")


def test_a_builtin_of_shape_items_is_a_read_only_sequence():
    Tuple = tuple_class()
    assert issubclass(Tuple, op.ArrayBase) and not issubclass(Tuple, op.Array)
    t = Tuple([1, "some text", 2.5, op.Array([3])])
    assert type(t) is Tuple
    assert len(t) == 4 and t[0] == 1 and t[1] == "some text" and t[-2] == 2.5
    assert list(t[3]) == [3]
    assert list(t)[:3] == [1, "some text", 2.5]
    with pytest.raises(IndexError):
        t[4]
    assert len(Tuple()) == 0


def test_a_builtin_compares_saves_and_loads_by_its_shape():
    Tuple = tuple_class()
    a, b, c = Tuple([1, "x"]), Tuple([1, "x"]), Tuple([1, "y"])
    assert op.structural_equal(a, b) and not op.structural_equal(a, c)
    assert op.structural_hash(a) == op.structural_hash(b)
    # Not an array holding the same items.
    assert not op.structural_equal(a, op.Array([1, "x"]))
    text = op.save_json_graph(a)
    assert '"testing.Tuple"' in text
    back = op.load_json_graph(text)
    assert type(back) is Tuple and op.structural_equal(back, a)
    assert repr(back).endswith('(1, "x")')
