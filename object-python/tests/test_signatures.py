"""Signatures: keyword calls bound by a function's signature (declared in Rust, or a
Python callable's own), defaults, errors that name the parameter, `__name__`,
`__qualname__`, `__doc__` and `inspect.signature`."""

import inspect

import pytest

import object_python as op

add = op.get_global("tour.add")  # (x: int, y: int = 1) -> int, declared in Rust


def test_keywords_and_defaults():
    assert add(40, 2) == 42
    assert add(41) == 42  # y's default, filled by the entry point
    assert add(x=40, y=2) == 42
    assert add(y=2, x=40) == 42
    assert add(40, y=2) == 42
    assert add(x=41) == 42
    assert add(**{"x": 1, "y": 2}) == 3
    # names made at run time (not interned) are found by their text
    assert add(**{"".join(["x"]): 1, "y"[:]: 4}) == 5
    assert add(1, **{"".join(["y", ""]): 9}) == 10
    # tp_call with a dict, as `type(f).__call__` takes it
    assert type(add).__call__(add, 1, y=5) == 6


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: add(), "missing argument `x` of `tour.add`"),
        (lambda: add(y=3), "missing argument `x` of `tour.add`"),
        (lambda: add(1, z=3), "`tour.add` got an unexpected keyword argument `z`"),
        (lambda: add(1, x=3), "`tour.add` got multiple values for argument `x`"),
        (lambda: add(1, 2, 3), "`tour.add` takes 2 arguments, got 3"),
        (lambda: add(1, "two"), "argument `y` of `tour.add`: expected int, got str"),
        (lambda: add(x=1, y="two"), "argument `y` of `tour.add`: expected int, got str"),
    ],
)
def test_errors_name_the_parameter(call, message):
    with pytest.raises(TypeError) as e:
        call()
    assert str(e.value).splitlines()[0] == message
    assert e.value.kind == "TypeError"


def test_functions_without_a_declared_signature():
    plain = op.get_global("testing.add")
    with pytest.raises(TypeError, match="unexpected keyword argument `[ab]` \\(it declares no parameter names\\)"):
        plain(1, b=2)
    # a typed closure still shows its types, as positional-only parameters
    sig = inspect.signature(plain)
    assert str(sig) == "(arg0: 'int', arg1: 'int', /) -> 'int'"
    # a packed function takes anything
    assert str(inspect.signature(op.get_global("testing.echo"))) == "(*args)"


def test_introspection():
    assert add.__name__ == "add" and add.__qualname__ == "tour.add"
    assert add.__doc__ == "x + y; y is 1 unless given."
    assert op.get_global("testing.add").__doc__ is None
    sig = inspect.signature(add)
    assert list(sig.parameters) == ["x", "y"]
    assert sig.parameters["y"].default == 1
    assert sig.parameters["x"].default is inspect.Parameter.empty
    assert sig.parameters["x"].annotation == "int" and sig.return_annotation == "int"
    assert sig.bind(1, y=2).arguments == {"x": 1, "y": 2}
    assert "packed function" in op.Function.__doc__
    help_text = inspect.getdoc(add)
    assert help_text == "x + y; y is 1 unless given."


def test_python_callables_keep_their_signature():
    @op.register_global("pytest.scale")
    def scale(x: float, by: float = 2.0, /) -> float:
        """Scales x."""
        return x * by

    @op.register_global("pytest.describe")
    def describe(name, greeting="hello", punct="!"):
        return f"{greeting}, {name}{punct}"

    try:
        assert scale(3.0) == 6.0  # the decorator returns the callable itself
        g = op.get_global("pytest.scale")
        assert g(3.0) == 6.0 and g(3.0, 3.0) == 9.0
        assert g.__name__ == "scale" and g.__qualname__ == "pytest.scale"
        assert g.__doc__ == "Scales x."
        assert str(inspect.signature(g)) == "(x: 'float', by: 'float' = 2.0, /) -> 'float'"
        with pytest.raises(TypeError, match="argument `x` of `pytest.scale` is positional-only"):
            g(x=1.0)
        d = op.get_global("pytest.describe")
        # a middle parameter left out takes its default, the last one given by name
        assert d("you", punct="?") == "hello, you?"
        assert d(punct=".", name="me") == "hello, me."
        # from Rust, by position, defaults filled by the entry point
        assert op.get_global("testing.call")(d, "x") == "hello, x!"
        with pytest.raises(TypeError, match="missing argument `name` of `pytest.describe`"):
            d(greeting="hi")
    finally:
        op.remove_global("pytest.scale")
        op.remove_global("pytest.describe")


def test_callables_whose_signature_does_not_fit_take_anything():
    def variadic(*args, **kwargs):
        return len(args)

    f = op.as_function(variadic)
    assert f(1, 2, 3) == 3
    assert str(inspect.signature(f)) == "(*args)"
    with pytest.raises(TypeError, match="unexpected keyword argument `[ab]` \\(it declares no parameter names\\)"):
        f(a=1)

    class Unconvertible:
        pass

    def odd(x, y=Unconvertible()):
        return x

    assert str(inspect.signature(op.as_function(odd))) == "(*args)"


def test_register_global_override_and_decorator():
    op.register_global("pytest.g", lambda: 1)
    try:
        with pytest.raises(KeyError, match="`pytest.g` is already registered") as e:
            op.register_global("pytest.g", lambda: 2)
        assert "override=True" in str(e.value) and e.value.kind == "KeyError"

        @op.register_global("pytest.g", override=True)
        def g():
            return 3

        assert op.get_global("pytest.g")() == 3
        with pytest.raises(KeyError, match="pytest.g"):

            @op.register_global("pytest.g")
            def again():
                return 4

        with pytest.raises(TypeError, match="needs a callable"):
            op.register_global("pytest.h", 5)
    finally:
        op.remove_global("pytest.g")
