/* Every error path of the C API: each failing call leaves an error of the right kind,
 * nothing crashes on null pointers or bad values, nothing leaks. */
#include "check.h"

int obj_fixtures_init(void);

static int32_t silent_failure(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return 7; /* nonzero without raising */
}

static int32_t bad_return(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n;
    ret->type_index = 50; /* not a value kind */
    ret->small = 0;
    ret->v.v_int64 = 0;
    return 0;
}

int main(void) {
    OK(obj_fixtures_init());
    ObjHandle h = NULL, s = NULL;
    ObjAny v, ret;
    ObjStr text;
    uint32_t idx = 0;
    size_t n = 0;
    int32_t flag = 0;

    /* Nothing waiting: take gives null. */
    OK(obj_error_take(&h));
    CHECK(h == NULL);

    /* Null pointers. */
    FAILS(obj_inc_ref(NULL), "ValueError", "`obj` is null");
    FAILS(obj_dec_ref(NULL), "ValueError", "`obj` is null");
    FAILS(obj_type_index_of(NULL, &idx), "ValueError", "`key` is null");
    FAILS(obj_type_index_of("ffi.Object", NULL), "ValueError", "`out_index` is null");
    FAILS(obj_string_create(NULL, 3, &s), "ValueError", "`data` is null");
    FAILS(obj_string_get(NULL, &text), "ValueError", "`obj` is null");
    FAILS(obj_function_call(NULL, NULL, 0, &ret), "ValueError", "`func` is null");
    FAILS(obj_ndarray_from_dlpack(NULL, &h), "ValueError", "null");
    FAILS(obj_ndarray_from_dlpack_versioned(NULL, &h), "ValueError", "null");
    FAILS(obj_any_release(NULL), "ValueError", "`value` is null");
    FAILS(obj_function_create(NULL, NULL, NULL, "f", &h), "ValueError", "`call` is null");
    FAILS(obj_object_init(NULL, 16, 64, NULL), "ValueError", "`obj` is null");

    /* Bad text. */
    FAILS(obj_string_create("\xff\xfe", 2, &s), "ValueError", "not UTF-8");
    FAILS(obj_type_index_of("\xff", &idx), "ValueError", "not UTF-8");
    FAILS(obj_json_load("{\"root_index\": ", 15, &v), "ValueError", "invalid JSON");

    /* Unknown names, bad registrations. */
    FAILS(obj_type_index_of("no.such.Type", &idx), "KeyError", "no.such.Type");
    FAILS(obj_type_key_of(99999, &text), "KeyError", "99999");
    FAILS(obj_type_info(99999, NULL), "ValueError", "`out_info` is null");
    FAILS(obj_type_register("ctest.Orphan", "no.such.Parent", 0, 0, 1, &idx), "RegistryError", "no.such.Parent");
    FAILS(obj_type_register("ctest.UnderFinal", "ffi.String", 0, 0, 1, &idx), "RegistryError", "ffi.String");
    OK(obj_type_register("ctest.Twice", "ffi.Object", 0, 0, 1, &idx));
    FAILS(obj_type_register("ctest.Twice", "ffi.Object", 2, 0, 1, &idx), "RegistryError", "ctest.Twice");
    FAILS(obj_type_register("int", "ffi.Object", 0, 0, 1, &idx), "RegistryError", "int");
    FAILS(obj_object_init((ObjObjectHeader *)&v, sizeof v, 3, NULL), "ValueError", "not a registered object type");
    FAILS(obj_type_fields(99999, (const ObjFieldInfo **)&h, &n), "KeyError", "99999");

    /* Wrong object types. */
    OK(obj_string_create("text", 4, &s));
    FAILS(obj_array_size(s, &n), "TypeError", "ffi.Array");
    FAILS(obj_map_size(s, &n), "TypeError", "ffi.Map");
    FAILS(obj_bytes_get(s, &text), "TypeError", "ffi.Bytes");
    FAILS(obj_ndarray_dltensor(s, NULL), "ValueError", "null");
    FAILS(obj_ndarray_to_dlpack(s, (ObjDLManagedTensor **)&h), "TypeError", "ffi.Tensor");
    FAILS(obj_error_kind(s, &text), "TypeError", "ffi.Error");
    FAILS(obj_function_call(s, NULL, 0, &ret), "TypeError", "ffi.Function");
    FAILS(obj_global_set("ctest.notfn", s, 0), "TypeError", "ffi.Function");
    FAILS(obj_module_get_function(s, "f", 0, &h), "TypeError", "ffi.Module");
    FAILS(obj_object_get_attr(s, "nope", &v), "AttributeError", "nope");

    /* Bad values. */
    v.type_index = 50;
    v.small = 0;
    v.v.v_int64 = 0;
    FAILS(obj_any_copy(&v, &ret), "TypeError", "value kind 50");
    v = any_obj(s);
    v.type_index = OBJ_TYPE_ARRAY; /* lies about the object's type */
    FAILS(obj_any_copy(&v, &ret), "TypeError", "ffi.String");
    v.type_index = OBJ_KIND_SMALL_STR;
    v.small = 9;
    FAILS(obj_any_copy(&v, &ret), "ValueError", "at most 7");
    v = any_cstr("\xff");
    FAILS(obj_any_copy(&v, &ret), "ValueError", "not UTF-8");
    v.type_index = OBJ_KIND_DL_TENSOR_PTR;
    v.v.v_ptr = NULL;
    FAILS(obj_array_create(&v, 1, &h), "ValueError", "null");
    v = any_int(1);
    FAILS(obj_any_get_str(&v, &text), "TypeError", "expected a string");
    FAILS(obj_array_create(NULL, 2, &h), "ValueError", "`items` is null");

    /* Indexing. */
    ObjAny items[1] = {any_int(1)};
    OK(obj_array_create(items, 1, &h));
    FAILS(obj_array_get(h, 5, &ret), "IndexError", "index 5");
    OK(obj_dec_ref(h));

    /* Calls: argument errors, raised errors, panics, C callbacks that fail. */
    ObjHandle add = NULL, fail = NULL, pnc = NULL;
    OK(obj_global_get("fixtures.add", &add));
    OK(obj_global_get("fixtures.fail", &fail));
    OK(obj_global_get("fixtures.panic", &pnc));
    ObjAny args[2] = {any_cstr("x"), any_int(1)};
    FAILS(obj_function_call(add, args, 2, &ret), "TypeError", "argument 0");
    FAILS(obj_function_call(add, args, 1, &ret), "TypeError", "");
    FAILS(obj_function_call(add, args, -1, &ret), "ValueError", "negative count");
    FAILS(obj_function_call(add, NULL, 2, &ret), "ValueError", "`args` is null");
    /* Beside a number, values the in-line check must not pass as they stand: a bool
       that is neither 0 nor 1 (the fence reads it as true, which `add` refuses), and
       an object whose header says another type than the value claims. */
    ObjAny pair[2] = {any_int(1), any_int(2)};
    pair[1].type_index = OBJ_KIND_BOOL;
    FAILS(obj_function_call(add, pair, 2, &ret), "TypeError", "argument 1");
    pair[1] = any_obj(s);
    pair[1].type_index = OBJ_TYPE_ARRAY;
    FAILS(obj_function_call(add, pair, 2, &ret), "TypeError", "ffi.String");
    pair[0] = pair[1];
    pair[1] = any_int(2);
    FAILS(obj_function_call(add, pair, 2, &ret), "TypeError", "ffi.String");
    pair[0] = any_float(1.5);
    pair[1] = any_float(2.5);
    FAILS(obj_function_call(add, pair, 2, &ret), "TypeError", "argument 0");
    args[0] = any_cstr("boom");
    FAILS(obj_function_call(fail, args, 1, &ret), "ValueError", "boom");
    FAILS(obj_function_call(pnc, NULL, 0, &ret), "Panic", "a Rust panic");
    ObjHandle silent = NULL, bad = NULL;
    OK(obj_function_create(silent_failure, NULL, NULL, "silent", &silent));
    FAILS(obj_function_call(silent, NULL, 0, &ret), "Error", "returned 7 without raising");
    OK(obj_function_create(bad_return, NULL, NULL, "bad_return", &bad));
    FAILS(obj_function_call(bad, NULL, 0, &ret), "TypeError", "value kind 50");
    FAILS(obj_global_set("fixtures.add", add, 0), "KeyError", "fixtures.add");

    /* Raising: a well-known kind and a chosen one (both read back as raised), and
     * re-raising an error object with a frame. */
    CHECK(obj_error_raise("TypeError", "from C") != 0);
    OK(obj_error_take(&h));
    CHECK(h != NULL);
    OK(obj_error_kind(h, &text));
    CHECK(str_eq(text, "TypeError"));
    OK(obj_dec_ref(h));
    CHECK(obj_error_raise("MyError", "from C") != 0);
    OK(obj_error_take(&h));
    CHECK(h != NULL);
    OK(obj_error_kind(h, &text));
    CHECK(str_eq(text, "MyError"));
    CHECK(obj_error_set(h, "c frame") != 0);
    ObjHandle again = NULL;
    OK(obj_error_take(&again));
    OK(obj_error_num_frames(again, &n));
    CHECK(n == 1);
    FAILS(obj_error_frame(again, 3, &text), "IndexError", "no frame 3");
    OK(obj_dec_ref(again));
    OK(obj_dec_ref(h));

    /* Missing things that are not errors. */
    h = (ObjHandle)1;
    OK(obj_global_get("no.such.global", &h));
    CHECK(h == NULL);
    OK(obj_global_remove("no.such.global", &flag));
    CHECK(flag == 0);

    OK(obj_dec_ref(bad));
    OK(obj_dec_ref(silent));
    OK(obj_dec_ref(pnc));
    OK(obj_dec_ref(fail));
    OK(obj_dec_ref(add));
    OK(obj_dec_ref(s));
    return finish("errors");
}
