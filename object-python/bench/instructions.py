"""Instructions per operation of bench.py's rows, counted with callgrind: the rows
whose wall-clock ratios this shared VM moves by up to 2x from run to run, counted to
about +-5 instructions instead.

    python object-python/bench/instructions.py [N]

Each row runs in a process of its own under `valgrind --tool=callgrind`, once with N
operations (default 100,000) and once with none; the difference over N is the row's
count, and the same for an empty loop is subtracted (the loop's own `for`). ASLR off
(`setarch -R`), a fixed hash seed, one OpenBLAS thread. Needs valgrind, the extension
built with the `testing` feature (as for bench.py) and, for the tvm-ffi column,
`apache-tvm-ffi` and `pytest`.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile


def row(name, n):
    """The loop of one row (run in the child process)."""
    import numpy as np
    import object_python as op
    from object_python import _native

    a = np.zeros(16, dtype=np.float32)
    tour = op.namespace("tour")
    if name.startswith("tvm_"):
        import tvm_ffi
        import tvm_ffi.testing as tt

        nop = tvm_ffi.get_global_func("testing.nop")
        names = {
            "nop": nop,
            "pair": tt.TestIntPair(3, 4),
            "TestIntPair": tt.TestIntPair,
            "make_array": tvm_ffi.get_global_func("ffi.Array"),
        }
    else:
        Point = _native._BenchPlainPoint
        names = {
            "noop": op.get_global("testing.noop"),
            "add": op.get_global("testing.add"),
            "add_sig": op.get_global("tour.add"),
            "data_ptr": op.get_global("testing.tensor_data_ptr"),
            "make_array": op.get_global("testing.make_array"),
            "imm": tour.IntImm(value=3),
            "IntImm": tour.IntImm,
            "Point": Point,
            "p": Point(value=3),
            "plain_noop": _native._bench_plain_noop,
            "plain_add": _native._bench_plain_add,
            "plain_ptr": _native._bench_plain_buffer_ptr,
            "plain_list": _native._bench_plain_list,
        }
    names["a"] = a
    # Each loop's body, run as bench.py runs it: a `for` over a range, the result
    # dropped at once.
    body = ROWS[name]
    scope = dict(names)
    exec(f"def run(n):\n    for _ in range(n):\n        {body}\n", scope)
    scope["run"](n)


ROWS = {
    "empty": "pass",
    "noop": "noop()",
    "plain_noop": "plain_noop()",
    "add": "add(1, 2)",
    "plain_add": "plain_add(1, 2)",
    "field": "imm.value",
    "plain_field": "p.value",
    "make": "IntImm(value=3)",
    "plain_make": "Point(value=3)",
    "array": "data_ptr(a)",
    "plain_array": "plain_ptr(a)",
    "container": "make_array(1, 2, 3)",
    "plain_container": "plain_list(1, 2, 3)",
    "positional": "add_sig(1, 2)",
    "keyword": "add_sig(1, y=2)",
    "tvm_noop": "nop()",
    "tvm_field": "pair.a",
    "tvm_make": "TestIntPair(3, 4)",
    "tvm_array": "nop(a)",
    "tvm_container": "make_array(1, 2, 3)",
}


def count(name, n):
    """Instructions of `name`'s process with n operations, from callgrind's summary."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as d:
        cmd = ["setarch", "-R", "valgrind", "--tool=callgrind",
               f"--callgrind-out-file={d}/cg.out", sys.executable, __file__, "--row", name, str(n)]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    m = re.search(r"refs:\s+([\d,]+)", r.stderr)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{name}: {r.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def per_op(name, n):
    return (count(name, n) - count(name, 0)) / n


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--row":
        row(sys.argv[2], int(sys.argv[3]))
        return
    if not shutil.which("valgrind"):
        sys.exit("instructions.py needs valgrind")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    # The loop's own cost per operation (an empty body's).
    loop = per_op("empty", n)
    try:
        import tvm_ffi.testing  # noqa: F401
        tvm = True
    except ImportError:
        tvm = False
    print(f"instructions per operation, {n} operations, the loop's {loop:.0f} subtracted")
    print(f"{'operation':28} {'ours':>7} {'plain pyo3':>11} {'ratio':>6} {'tvm-ffi':>8} {'ratio':>6}")
    rows = [
        ("no-op call", "noop", "plain_noop", "tvm_noop"),
        ("add(int, int)", "add", "plain_add", None),
        ("field read", "field", "plain_field", "tvm_field"),
        ("construct an object", "make", "plain_make", "tvm_make"),
        ("call taking a NumPy array", "array", "plain_array", "tvm_array"),
        ("call returning a container", "container", "plain_container", "tvm_container"),
    ]
    for title, ours, plain, theirs in rows:
        o, p = per_op(ours, n) - loop, per_op(plain, n) - loop
        line = f"{title:28} {o:7.0f} {p:11.0f} {o / p:6.2f}"
        if tvm and theirs:
            t = per_op(theirs, n) - loop
            line += f" {t:8.0f} {o / t:6.2f}"
        print(line, flush=True)
    pos, kw = per_op("positional", n) - loop, per_op("keyword", n) - loop
    print(f"tour.add(1, 2) {pos:.0f}, tour.add(1, y=2) {kw:.0f}: keyword {kw / pos:.2f}x positional")


if __name__ == "__main__":
    main()
