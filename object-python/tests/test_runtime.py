"""One runtime per process: C code in the same process as the extension.

The extension links its own copy of the runtime and exports the C API; a
``libobject_capi`` loaded beside it (here through ctypes, as a C extension module or
any C library would load it) finds the runtime the extension runs and joins it, and
the other way round when C comes first (a subprocess). Either way there is one
registry, one table of globals and one error slot per thread.

``OBJECT_CAPI_LIBRARY`` names the library (``scripts/python.sh`` builds it with the
extension's profile and compiler); without it the tests are skipped outside CI.
"""

import ctypes
import os
import subprocess
import sys
import textwrap

import pytest

import object_python as op

LIB = os.environ.get("OBJECT_CAPI_LIBRARY")
if LIB is None and os.environ.get("CI"):
    raise RuntimeError("OBJECT_CAPI_LIBRARY is not set: scripts/python.sh sets it in CI")
needs_lib = pytest.mark.skipif(LIB is None, reason="OBJECT_CAPI_LIBRARY is not set")

OBJ_KIND_INT = 1
_KEEP = []
OBJ_RUNTIME_OWN, OBJ_RUNTIME_JOINED = 0, 1


class ObjAny(ctypes.Structure):
    _fields_ = [("type_index", ctypes.c_uint32), ("small", ctypes.c_uint32), ("v", ctypes.c_int64)]


class ObjStr(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def text(self):
        return ctypes.string_at(self.data, self.len).decode()


CFUNC = ctypes.CFUNCTYPE(
    ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(ObjAny), ctypes.c_int32, ctypes.POINTER(ObjAny)
)


def c_api(path):
    lib = ctypes.CDLL(path)
    lib.obj_runtime_info.argtypes = [ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ObjStr)]
    lib.obj_global_call.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ObjAny), ctypes.c_int32, ctypes.POINTER(ObjAny)
    ]
    lib.obj_error_take.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.obj_error_kind.argtypes = [ctypes.c_void_p, ctypes.POINTER(ObjStr)]
    lib.obj_error_message.argtypes = [ctypes.c_void_p, ctypes.POINTER(ObjStr)]
    lib.obj_dec_ref.argtypes = [ctypes.c_void_p]
    lib.obj_type_register.argtypes = [
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_int32, ctypes.c_int32,
        ctypes.POINTER(ctypes.c_uint32),
    ]
    lib.obj_type_index_of.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint32)]
    lib.obj_global_def.argtypes = [ctypes.c_char_p, CFUNC, ctypes.c_void_p, ctypes.c_void_p]
    return lib


def runtime_info(lib):
    state, library = ctypes.c_int32(-1), ObjStr()
    assert lib.obj_runtime_info(ctypes.byref(state), ctypes.byref(library)) == 0
    return state.value, library.text()


def call_int(lib, name, *values):
    args = (ObjAny * max(1, len(values)))(*[ObjAny(OBJ_KIND_INT, 0, v) for v in values])
    ret = ObjAny()
    rc = lib.obj_global_call(name.encode(), args, len(values), ctypes.byref(ret))
    return rc, ret


def take_error(lib):
    err = ctypes.c_void_p()
    assert lib.obj_error_take(ctypes.byref(err)) == 0 and err.value
    kind, message = ObjStr(), ObjStr()
    assert lib.obj_error_kind(err, ctypes.byref(kind)) == 0
    assert lib.obj_error_message(err, ctypes.byref(message)) == 0
    out = kind.text(), message.text()
    assert lib.obj_dec_ref(err) == 0
    return out


def test_the_extension_runs_the_process_runtime():
    info = op.runtime()
    assert info["registry"] == "own"
    assert info["library"] == info["extension"]
    assert os.path.basename(os.path.dirname(info["extension"])) == "object_python"


def test_the_extension_exports_the_c_api():
    lib = c_api(op.runtime()["extension"])
    assert runtime_info(lib) == (OBJ_RUNTIME_OWN, op.runtime()["extension"])
    op.register_global("rt.ext_twice", lambda x: 2 * x)
    try:
        rc, ret = call_int(lib, "rt.ext_twice", 4)
        assert (rc, ret.type_index, ret.v) == (0, OBJ_KIND_INT, 8)
    finally:
        op.remove_global("rt.ext_twice")


@needs_lib
def test_a_c_library_loaded_later_joins_the_extension_runtime():
    lib = c_api(LIB)
    state, library = runtime_info(lib)
    assert state == OBJ_RUNTIME_JOINED
    assert library == op.runtime()["extension"]

    # C finds and calls a Python global; a Python exception reaches C with its kind.
    op.register_global("rt.py_twice", lambda x: 2 * x)

    def fail(x):
        raise ValueError(f"bad {x}")

    op.register_global("rt.py_fail", fail)
    rc, ret = call_int(lib, "rt.py_twice", 21)
    assert (rc, ret.type_index, ret.v) == (0, OBJ_KIND_INT, 42)
    rc, _ = call_int(lib, "rt.py_fail", 3)
    assert rc != 0
    kind, message = take_error(lib)
    assert kind == "ValueError" and "bad 3" in message

    # A type C registers is a Python class at once, with C's index; one Python
    # registers is C's.
    index = ctypes.c_uint32()
    assert lib.obj_type_register(b"rt.FromC", b"ffi.Object", 0, 0, 1, ctypes.byref(index)) == 0
    assert op.type_class("rt.FromC")._type_index == index.value
    assert issubclass(op.type_class("rt.FromC"), op.Object)
    cls = op.register_type("rt.FromPy")
    assert lib.obj_type_index_of(b"rt.FromPy", ctypes.byref(index)) == 0
    assert index.value == cls._type_index
    assert lib.obj_type_index_of(b"tour.Add", ctypes.byref(index)) == 0
    assert index.value == op.type_class("tour.Add")._type_index

    # A C callback registered by C is Python's global.
    @CFUNC
    def c_add(ctx, args, n, ret):
        ret[0].type_index = OBJ_KIND_INT
        ret[0].small = 0
        ret[0].v = args[0].v + args[1].v
        return 0

    assert lib.obj_global_def(b"rt.c_add", c_add, None, None) == 0
    assert op.get_global("rt.c_add")(2, 40) == 42
    for name in ("rt.py_twice", "rt.py_fail", "rt.c_add"):
        op.remove_global(name)
    # The callback must outlive the global: keep it for the process.
    _KEEP.append(c_add)


@needs_lib
def test_the_extension_imported_after_c_joins_the_c_runtime():
    script = textwrap.dedent(
        f"""
        import ctypes, sys
        lib = ctypes.CDLL({LIB!r})
        index = ctypes.c_uint32()
        lib.obj_type_register.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint32,
            ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_uint32)]
        assert lib.obj_type_register(b"cfirst.T", b"ffi.Object", 0, 0, 1, ctypes.byref(index)) == 0
        import object_python as op
        info = op.runtime()
        assert info["registry"] == "joined", info
        assert info["library"] == {LIB!r}, info
        assert op.type_class("cfirst.T")._type_index == index.value
        tour = op.namespace("tour")
        e = tour.Add(lhs=tour.Var(name="x"), rhs=tour.IntImm(value=3))
        assert isinstance(e, tour.BinOp) and e.rhs.value == 3
        back = op.load_json_graph(op.save_json_graph(e))
        assert op.structural_equal(back, e, map_free_vars=True)
        print("joined")
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "joined"


CEXT = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>
#include "object_capi.h"

/* call(name, x): calls the process's global `name` with one int, from C. */
static PyObject *call(PyObject *self, PyObject *args) {
    (void)self;
    const char *name;
    long long x;
    if (!PyArg_ParseTuple(args, "sL", &name, &x)) return NULL;
    ObjAny arg = obj_any_int(x), ret;
    if (obj_global_call(name, &arg, 1, &ret) != 0) {
        ObjHandle err = NULL;
        ObjStr kind, message;
        if (obj_error_take(&err) || obj_error_kind(err, &kind) || obj_error_message(err, &message))
            return PyErr_Format(PyExc_RuntimeError, "no error to take");
        char text[512];
        snprintf(text, sizeof text, "%.*s: %.*s", (int)kind.len, kind.data, (int)message.len,
                 message.data);
        obj_dec_ref(err);
        PyErr_SetString(PyExc_RuntimeError, text);
        return NULL;
    }
    long long v = ret.v.v_int64;
    obj_any_release(&ret);
    return PyLong_FromLongLong(v);
}

static PyMethodDef methods[] = {{"call", call, METH_VARARGS, "call a global"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_cext", NULL, -1, methods};
PyMODINIT_FUNC PyInit__cext(void) { return PyModule_Create(&def); }
"""


@needs_lib
def test_a_c_extension_module_finds_and_calls_a_python_global(tmp_path):
    import importlib.util
    import shutil
    import sysconfig

    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        if os.environ.get("CI"):
            raise RuntimeError("no C compiler: CI installs gcc")
        pytest.skip("no C compiler")
    include = os.path.join(os.path.dirname(__file__), "..", "..", "object-capi", "include")
    src = tmp_path / "_cext.c"
    src.write_text(CEXT)
    ext = tmp_path / ("_cext" + sysconfig.get_config_var("EXT_SUFFIX"))
    libdir = os.path.dirname(LIB)
    subprocess.run(
        [cc, "-std=c11", "-shared", "-fPIC", "-Wall", "-Werror", "-o", str(ext), str(src),
         "-I", sysconfig.get_paths()["include"], "-I", include,
         "-L", libdir, "-lobject_capi", f"-Wl,-rpath,{libdir}"],
        check=True,
    )
    spec = importlib.util.spec_from_file_location("_cext", ext)
    cext = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cext)

    def fail(x):
        raise KeyError(f"no {x}")

    op.register_global("rt.cext_square", lambda x: x * x)
    op.register_global("rt.cext_fail", fail)
    try:
        assert cext.call("rt.cext_square", 12) == 144
        with pytest.raises(RuntimeError, match="KeyError"):
            cext.call("rt.cext_fail", 1)
    finally:
        op.remove_global("rt.cext_square")
        op.remove_global("rt.cext_fail")
