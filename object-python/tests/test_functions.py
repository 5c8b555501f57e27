import sys
import threading

import pytest

import object_python as op

add = op.get_global("testing.add")
call = op.get_global("testing.call")
raise_ = op.get_global("testing.raise")


def test_call_and_globals():
    assert add(40, 2) == 42 and add.name == "testing.add"
    assert isinstance(add, op.Function) and callable(add)
    assert "testing.add" in op.list_globals()
    assert op.get_global("no.such.function") is None
    assert op.get_global("testing.noop")() is None
    with pytest.raises(TypeError) as e:
        add(1)
    assert e.value.kind == "TypeError"


def test_vectorcall_and_tp_call_agree():
    """`f(...)` takes the vectorcall entry (the caller's argument array, no tuple);
    `type(f).__call__(f, ...)` takes `tp_call`. Both convert the same arguments the same
    way, refuse keywords alike (a function without declared parameter names), and hold no reference to an argument afterwards."""
    import functools

    vectorcall_flag = 1 << 11  # Py_TPFLAGS_HAVE_VECTORCALL
    assert op.FunctionBase.__flags__ & vectorcall_flag
    assert type(add).__flags__ & vectorcall_flag  # ffi.Function, a generated subclass
    tp_call = type(add).__call__
    pack = op.as_function(lambda *a: list(a))
    for args in [(), (1,), (1, 2.5), (1, "s", None, True, b"x", 7, 8, 9)]:
        assert list(pack(*args)) == list(args)
        assert list(tp_call(pack, *args)) == list(args)
    # `partial` lends its array with PY_VECTORCALL_ARGUMENTS_OFFSET set.
    assert functools.partial(add, 40)(2) == 42
    for call_ in (add, functools.partial(tp_call, add)):
        with pytest.raises(TypeError, match="unexpected keyword argument `b`"):
            call_(1, b=2)
        with pytest.raises(TypeError, match="expected int"):
            call_(1, "x")
    text = "a string long enough to be an ffi.String " * 4
    before = sys.getrefcount(text)
    for _ in range(1000):
        pack(text, text)
        tp_call(pack, text)
    assert sys.getrefcount(text) == before


def test_python_callables_become_functions():
    def twice(v):
        return v * 2

    before = sys.getrefcount(twice)
    f = op.as_function(twice)
    assert isinstance(f, op.Function) and f(21) == 42 and f.name.endswith("twice")
    assert call(twice, 4) == 8  # converted on the way in
    op.register_global("pytest.twice", twice)
    try:
        with pytest.raises(Exception):
            op.register_global("pytest.twice", twice)
        op.register_global("pytest.twice", lambda v: v * 3, override=True)
        assert call(op.get_global("pytest.twice"), 2) == 6
        assert "pytest.twice" in op.list_globals()
    finally:
        assert op.remove_global("pytest.twice")
    stored = op.Array([f, twice])
    assert stored[1](5) == 10
    del f, stored
    assert sys.getrefcount(twice) == before


def test_function_from_eight_python_threads():
    errors = []

    def work(k):
        try:
            for i in range(2000):
                assert add(k, i) == k + i
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_python_callback_from_rust_threads():
    seen = set()
    lock = threading.Lock()

    def cb(t, i):
        with lock:
            seen.add(threading.get_ident())
        return t * 1000 + i

    before = sys.getrefcount(cb)
    total = op.get_global("testing.call_in_threads")(cb, 4, 50)
    assert total == sum(t * 1000 + i for t in range(4) for i in range(50))
    assert len(seen) == 4 and threading.get_ident() not in seen
    assert sys.getrefcount(cb) == before


def test_the_gil_rule():
    # A function keeps the GIL during a call (as a plain pyo3 function does) unless it
    # is marked long-running: then it lets it go, so that one waiting for Rust threads
    # that call back into Python cannot deadlock.
    call_in_threads = op.get_global("testing.call_in_threads")
    assert add.releases_gil is False and op.get_global("testing.noop").releases_gil is False
    assert call.releases_gil is False
    assert call_in_threads.releases_gil is True
    # A Python callback called back on this thread runs under the GIL the call kept ...
    assert call(lambda a, b: a + b, 40, 2) == 42
    # ... and one on a Rust thread takes it (the long-running caller let it go), and
    # calls a function holding it.
    total = call_in_threads(lambda t, i: add(t, i), 3, 20)
    assert total == sum(t + i for t in range(3) for i in range(20))
    assert call(lambda: add(1, 2)) == 3
    # The hint can be set from Python, on any function (here one made from a lambda):
    # a call then lets the GIL go, and a callback takes it back.
    f = op.as_function(lambda x: x + 1)
    assert f.releases_gil is False
    f.releases_gil = True
    assert f.releases_gil is True and call(f, 41) == 42 and f(1) == 2
    f.releases_gil = False
    assert f.releases_gil is False


@pytest.mark.parametrize(
    "kind,exc",
    [
        ("ValueError", ValueError),
        ("TypeError", TypeError),
        ("KeyError", KeyError),
        ("AttributeError", AttributeError),
        ("IndexError", IndexError),
        ("ShapeError", op.ObjectError),
    ],
)
def test_rust_errors_become_python_exceptions(kind, exc):
    with pytest.raises(exc) as e:
        raise_(kind, "went wrong")
    assert e.value.kind == kind and "went wrong" in str(e.value)
    assert e.value.frames == ["testing.raise"]


def test_python_exceptions_cross_rust_and_come_back_as_themselves():
    class Custom(Exception):
        pass

    raised = Custom("mine")

    def fail(*_):
        raise raised

    with pytest.raises(Custom) as e:
        call(fail, 1)
    assert e.value is raised
    assert e.value.__traceback__ is not None
    assert e.value.rust_frames[-1] == "testing.call"
    assert any("fail" in f for f in [t.name for t in __import__("traceback").extract_tb(e.value.__traceback__)])
    del e


def test_python_exception_seen_from_rust_threads():
    def fail(t, i):
        if t == 1:
            raise ValueError("from a Rust thread")
        return 0

    with pytest.raises(ValueError, match="from a Rust thread"):
        op.get_global("testing.call_in_threads")(fail, 3, 2)


def test_python_exception_in_a_nested_call():
    def inner():
        raise KeyError("deep")

    def outer():
        return call(inner)

    with pytest.raises(KeyError, match="deep"):
        call(outer)


def test_exceptions_of_errors_rust_drops_are_released():
    # Every thread fails; Rust returns one error and drops the others. Each exception is
    # owned by its error, so dropping the error releases it: nothing accumulates (the
    # autouse fixture checks the count of held exceptions is back where it started).
    raised = []

    def fail(t, i):
        exc = RuntimeError(f"thread {t}")
        raised.append(exc)
        raise exc

    start = op._native._pending_exceptions()
    for _ in range(300):
        with pytest.raises(RuntimeError) as e:
            op.get_global("testing.call_in_threads")(fail, 4, 1)
        assert any(e.value is x for x in raised)
        del e
    # `call_in_threads` joins every thread before it returns (and drops the errors it
    # does not return), so nothing is left to wait for.
    assert len(raised) == 1200
    assert op._native._pending_exceptions() == start
    raised.clear()
