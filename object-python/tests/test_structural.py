"""Structural equality and hashing from Python (``==`` on objects stays identity)."""

import threading

import numpy as np
import pytest

import object_python as op


def fn(tour, name, body):
    """``fn(name) { body(var) }`` with a fresh variable."""
    v = tour.Var(name=name)
    return tour.Function(params=[v], body=body(v))


def test_alpha_equivalent_functions_are_equal_and_hash_alike(tour):
    one = tour.IntImm(value=1)
    f = fn(tour, "x", lambda x: tour.Add(lhs=x, rhs=one))
    g = fn(tour, "y", lambda y: tour.Add(lhs=y, rhs=tour.IntImm(value=1)))
    h = fn(tour, "y", lambda y: tour.Add(lhs=y, rhs=tour.IntImm(value=2)))
    assert f != g, "== is identity"
    assert op.structural_equal(f, g) and op.structural_equal(g, f)
    assert op.structural_hash(f) == op.structural_hash(g)
    assert not op.structural_equal(f, h)
    assert op.first_mismatch(f, g) is None
    assert op.first_mismatch(f, h) == ("<root>.body.rhs.value", "<root>.body.rhs.value")
    assert op.structural_equal(f, f) and op.first_mismatch(f, f) is None


def test_free_variables_by_identity_unless_mapped(tour):
    x, y = tour.Var(name="x"), tour.Var(name="y")
    one = tour.IntImm(value=1)
    a, b = tour.Add(lhs=x, rhs=one), tour.Add(lhs=y, rhs=one)
    assert not op.structural_equal(a, b)
    assert op.first_mismatch(a, b) == ("<root>.lhs", "<root>.lhs")
    assert op.structural_equal(a, b, map_free_vars=True)
    assert op.structural_hash(a, map_free_vars=True) == op.structural_hash(b, map_free_vars=True)
    assert op.first_mismatch(a, b, map_free_vars=True) is None


def test_free_variables_hash_by_identity_unless_content_only(tour):
    x1, x2 = tour.Var(name="x"), tour.Var(name="x")
    one = tour.IntImm(value=1)
    a, b = tour.Add(lhs=x1, rhs=one), tour.Add(lhs=x2, rhs=one)
    assert op.structural_hash(a) != op.structural_hash(b), "distinct free variables"
    assert op.structural_hash(a) == op.structural_hash(tour.Add(lhs=x1, rhs=one))
    assert op.structural_hash(a, content_only=True) == op.structural_hash(b, content_only=True)


def test_python_values_and_containers():
    assert op.structural_equal([1, "two", 3.0], [1, "two", 3.0])
    assert not op.structural_equal([1, 2], [2, 1])
    assert op.first_mismatch([1, 2], [1, 3]) == ("<root>[1]", "<root>[1]")
    assert op.first_mismatch([1, 2], [1]) == ("<root>.len", "<root>.len")
    assert op.structural_equal({"a": 1, "b": [2]}, {"b": [2], "a": 1}), "maps in any order"
    assert op.structural_hash({"a": 1, "b": 2}) == op.structural_hash({"b": 2, "a": 1})
    assert not op.structural_equal(1, True) and not op.structural_equal(1, 1.0)
    assert op.structural_equal(float("nan"), float("nan"))
    assert not op.structural_equal(0.0, -0.0)
    assert op.structural_hash("text") == op.structural_hash("text")
    assert isinstance(op.structural_hash(None), int) and 0 <= op.structural_hash(None) < 2**64


def test_tensors_by_contents_or_not():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = a.copy()
    c = a + 1
    assert op.structural_equal(op.from_dlpack(a), op.from_dlpack(b))
    assert op.structural_equal(a, b), "anything with __dlpack__ converts"
    assert not op.structural_equal(a, c)
    assert op.first_mismatch(a, c) == ("<root>.data", "<root>.data")
    assert op.structural_equal(a, c, skip_tensor_contents=True)
    assert op.structural_hash(a, skip_tensor_contents=True) == op.structural_hash(
        c, skip_tensor_contents=True
    )


def test_hashes_are_stable_across_calls_and_threads(tour):
    e = tour.Add(lhs=tour.IntImm(value=1), rhs=tour.IntImm(value=2))
    expected = op.structural_hash(e)
    results = []

    def work():
        for _ in range(200):
            results.append(op.structural_hash(e) == expected and op.structural_equal(e, e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 800 and all(results)


def test_deep_graphs_do_not_recurse(tour):
    one = tour.IntImm(value=1)

    def chain(leaf):
        e = tour.IntImm(value=leaf)
        for _ in range(50000):
            e = tour.Add(lhs=e, rhs=one)
        return e

    a, b, c = chain(0), chain(0), chain(7)
    assert op.structural_equal(a, b) and not op.structural_equal(a, c)
    assert op.structural_hash(a) == op.structural_hash(b) != op.structural_hash(c)
    left, right = op.first_mismatch(a, c)
    assert left == right and left.endswith(".lhs.value") and left.count(".lhs") == 50000


def test_bad_arguments_raise():
    with pytest.raises(TypeError):
        op.structural_equal(object(), 1)
    with pytest.raises(TypeError):
        op.structural_hash(object())
    with pytest.raises(TypeError):
        op.structural_equal(1, 1, map_free_vars=True, unknown=True)


def test_shape_is_a_read_only_sequence():
    import collections.abc

    s = op.Shape([2, 3, 4])
    assert isinstance(s, op.Shape) and isinstance(s, collections.abc.Sequence)
    assert len(s) == 3 and list(s) == [2, 3, 4] and tuple(s) == (2, 3, 4)
    assert s[0] == 2 and s[-1] == 4 and s[1:] == (3, 4) and s[::-1] == (4, 3, 2)
    assert 3 in s and 5 not in s and s.index(4) == 2 and s.count(2) == 1
    with pytest.raises(IndexError):
        s[3]
    with pytest.raises(TypeError):
        op.Shape(["x"])
    assert op.structural_equal(s, op.Shape((2, 3, 4)))
    assert not op.structural_equal(s, op.Shape([2, 3]))
    assert repr(s) == "[2, 3, 4]" or "2, 3, 4" in repr(s)
    back = op.get_global("testing.echo")(s)
    assert type(back) is op.Shape and back == s and list(back) == [2, 3, 4]
    empty = op.Shape()
    assert len(empty) == 0 and list(empty) == []
