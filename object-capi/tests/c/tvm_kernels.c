/* A kernel library built with the real tvm-ffi (tests/cpp/tvm_kernels.cc), loaded from
 * C through obj_module_load (which tells it from a plugin by its symbols): every value
 * kind and every error, with its kind read by obj_error_kind. The library's path is
 * argv[1]. */
#include "check.h"

static ObjHandle kernels = NULL;

/* Calls the module's function `name`; returns what obj_function_call returns. */
static int32_t call(const char *name, const ObjAny *args, int32_t n, ObjAny *ret) {
    ObjHandle f = NULL;
    if (obj_module_get_function(kernels, name, 0, &f) != 0) return -1;
    if (f == NULL) return obj_error_raise("KeyError", name);
    int32_t rc = obj_function_call(f, args, n, ret);
    obj_dec_ref(f);
    return rc;
}

static ObjAny any_bytes_str(const char *s, size_t len) {
    ObjAny a = any_cstr(s);
    a.small = (uint32_t)len;
    return a;
}

/* A C callback: (int x) -> x * 3; raises a ValueError for a negative x. */
static int32_t triple(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    if (n != 1 || args[0].type_index != OBJ_KIND_INT) return obj_error_raise("TypeError", "one int");
    if (args[0].v.v_int64 < 0) return obj_error_raise("ValueError", "negative input");
    *ret = any_int(args[0].v.v_int64 * 3);
    return 0;
}

static int contexts_freed = 0;
static void free_ctx(void *ctx) {
    (void)ctx;
    contexts_freed++;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: tvm_kernels LIBRARY\n");
        return 2;
    }
    OK(obj_module_load(argv[1], &kernels));
    if (kernels == NULL) return finish("tvm_kernels");
    ObjStr s;
    ObjAny ret, args[3];

    /* Plain values. */
    args[0] = any_int(40);
    args[1] = any_int(2);
    OK(call("add_int", args, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 42);
    args[0] = any_float(1.5);
    args[1] = any_float(4.0);
    OK(call("mul_float", args, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_FLOAT && ret.v.v_float64 == 6.0);
    args[0].type_index = OBJ_KIND_BOOL;
    args[0].small = 0;
    args[0].v.v_int64 = 1;
    OK(call("not_bool", args, 1, &ret));
    CHECK(ret.type_index == OBJ_KIND_BOOL && ret.v.v_int64 == 0);
    OK(call("return_none", NULL, 0, &ret));
    CHECK(ret.type_index == OBJ_KIND_NONE);
    args[0].type_index = OBJ_KIND_DATA_TYPE;
    args[0].v.v_int64 = 0;
    args[0].v.v_dtype.code = 2;
    args[0].v.v_dtype.bits = 16;
    args[0].v.v_dtype.lanes = 1;
    OK(call("echo_dtype", args, 1, &ret));
    CHECK(ret.type_index == OBJ_KIND_DATA_TYPE && ret.v.v_dtype.bits == 16 && ret.v.v_dtype.code == 2);
    args[0].type_index = OBJ_KIND_DEVICE;
    args[0].v.v_device.device_type = 2;
    args[0].v.v_device.device_id = 3;
    OK(call("echo_device", args, 1, &ret));
    CHECK(ret.type_index == OBJ_KIND_DEVICE && ret.v.v_device.device_type == 2 &&
          ret.v.v_device.device_id == 3);

    /* Strings: small, long (1 MiB), with a NUL inside echoed. */
    OK(call("small_string", NULL, 0, &ret));
    OK(obj_any_get_str(&ret, &s));
    CHECK(str_eq(s, "tiny"));
    OK(obj_any_release(&ret));
    args[0] = any_int(1 << 20);
    OK(call("long_string", args, 1, &ret));
    CHECK(ret.type_index == OBJ_TYPE_STRING);
    OK(obj_any_get_str(&ret, &s));
    CHECK(s.len == (1u << 20) && s.data[0] == 'a' && s.data[97] == 'b' && s.data[1] == 'x');
    OK(obj_any_release(&ret));
    args[0] = any_bytes_str("nul\0inside", 10);
    OK(call("echo_string", args, 1, &ret));
    OK(obj_any_get_str(&ret, &s));
    CHECK(s.len == 10 && memcmp(s.data, "nul\0inside", 10) == 0);
    OK(obj_any_release(&ret));

    /* Bytes, both ways. */
    ObjHandle b = NULL;
    OK(obj_bytes_create("\x00\x01\x02", 3, &b));
    args[0] = any_obj(b);
    OK(call("echo_bytes", args, 1, &ret));
    CHECK(ret.type_index == OBJ_TYPE_BYTES);
    if (ret.type_index == OBJ_TYPE_BYTES) {
        OK(obj_bytes_get((ObjHandle)ret.v.v_obj, &s));
        CHECK(s.len == 3 && memcmp(s.data, "\x00\x01\x02", 3) == 0);
    }
    OK(obj_any_release(&ret));
    obj_dec_ref(b);

    /* A Shape and a Tensor returned, the tensor imported without a copy. */
    args[0] = any_int(3);
    OK(call("make_shape", args, 1, &ret));
    CHECK(ret.type_index == OBJ_TYPE_SHAPE);
    OK(obj_any_release(&ret));
    args[0] = any_int(4);
    OK(call("make_tensor", args, 1, &ret));
    CHECK(ret.type_index == OBJ_TYPE_TENSOR);
    if (ret.type_index == OBJ_TYPE_TENSOR) {
        ObjDLTensor *t = NULL;
        OK(obj_ndarray_dltensor((ObjHandle)ret.v.v_obj, &t));
        CHECK(t != NULL && t->ndim == 1 && t->shape[0] == 4 && t->dtype.bits == 32);
        if (t) CHECK(((float *)t->data)[3] == 1.5f);
    }
    OK(obj_any_release(&ret));

    /* A C callback called by the kernel, and its error back through the kernel. */
    ObjHandle f = NULL;
    OK(obj_function_create(triple, NULL, free_ctx, "triple", &f));
    args[0] = any_obj(f);
    args[1] = any_int(2);
    OK(call("apply_twice", args, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 18);
    args[1] = any_int(-1);
    FAILS(call("apply_twice", args, 2, &ret), "ValueError", "negative input");
    obj_dec_ref(f);
    CHECK(contexts_freed == 1); /* tvm-ffi released its wrapper: ours went with it */

    /* Errors keep their kind. */
    args[0] = any_int(7);
    FAILS(call("raise_value_error", args, 1, &ret), "ValueError", "boom 7");
    FAILS(call("raise_type_error", NULL, 0, &ret), "TypeError", "not a type I know");
    FAILS(call("raise_custom", NULL, 0, &ret), "KernelFault", "a kind of the kernel's own");
    args[0] = any_cstr("x");
    args[1] = any_int(1);
    FAILS(call("add_int", args, 2, &ret), "TypeError", "Mismatched type on argument #0");
    FAILS(call("return_array", NULL, 0, &ret), "TvmFfiError", "`ffi.Array`");

    obj_dec_ref(kernels);
    return finish("tvm_kernels");
}
