"""Graphs far deeper than any stack, built from Python: the printer, structural equality
and hashing, the JSON graph (both ways), pickling, the conversions of nested lists and
dicts, and the tour's evaluator and printer walk them without recursion (a recursive
walk would overflow the stack and take the interpreter down)."""

import pickle

import object_python as op

DEPTH = 50_000


def expression(tour, leaf, value):
    """``DEPTH`` operators nested on the left and on the right by turns, the innermost
    operand ``leaf``, and their value if ``leaf``'s is ``value``."""
    e = leaf
    one, two = tour.IntImm(value=1), tour.IntImm(value=2)
    for i in range(DEPTH):
        if i % 2:
            e, value = tour.Sub(lhs=two, rhs=e), 2 - value
        else:
            e, value = tour.Add(lhs=e, rhs=one), value + 1
    return e, value


def innermost(tour, e):
    """The leaf of an ``expression``, and how many operators lead to it."""
    depth = 0
    while isinstance(e, tour.BinOp):
        e, depth = (e.rhs if isinstance(e, tour.Sub) else e.lhs), depth + 1
    return e, depth


def test_a_deep_expression(tour):
    a, _ = expression(tour, tour.IntImm(value=5), 5)
    b, _ = expression(tour, tour.IntImm(value=5), 5)
    c, _ = expression(tour, tour.IntImm(value=6), 6)

    # (The printer elides what lies deeper than it descends.)
    text = repr(a)
    assert text.startswith("tour.Sub { lhs: tour.IntImm #1 { value: 2 }, rhs: tour.Add {")
    assert len(text) < 10_000 and "tour.Sub { … }" in text
    assert op.structural_equal(a, b) and not op.structural_equal(a, c)
    assert op.structural_hash(a) == op.structural_hash(b) != op.structural_hash(c)
    left, right = op.first_mismatch(a, c)
    assert left == right and left.endswith(".value") and left.count(".") == DEPTH + 1

    back = op.load_json_graph(op.save_json_graph(a))
    assert type(back) is tour.Sub and back != a and op.structural_equal(back, a)
    leaf, depth = innermost(tour, back)
    assert depth == DEPTH and type(leaf) is tour.IntImm and leaf.value == 5
    again = pickle.loads(pickle.dumps(a))
    assert op.structural_hash(again) == op.structural_hash(a)

    # The tour's globals (in the test build): its evaluator and printer.
    x = tour.Var(name="x")
    e, value = expression(tour, x, 4)
    assert op.get_global("tour.eval")(e, {x: 4}) == value
    text = op.get_global("tour.print")(e)
    assert text.startswith("(2 - ((2 - ((2 - ") and text.count("(") == DEPTH


def test_deep_lists_and_dicts():
    nested = ["leaf"]
    for i in range(DEPTH):
        nested = [nested, i] if i % 2 else {"down": nested, "at": i}
    arr = op.Array([nested])
    text = repr(arr)
    assert text.startswith('[[{"down": [{"down": [') and len(text) < 10_000
    assert op.structural_equal(arr, [nested]) and not op.structural_equal(arr, [[nested]])
    assert op.structural_hash(arr) == op.structural_hash([nested])

    back = op.load_json_graph(op.save_json_graph(arr))
    assert op.structural_equal(back, arr)
    node, depth = back[0], 0
    while not isinstance(node, op.Array) or len(node) == 2:
        node, depth = (node["down"] if isinstance(node, op.Map) else node[0]), depth + 1
    assert depth == DEPTH and list(node) == ["leaf"]
