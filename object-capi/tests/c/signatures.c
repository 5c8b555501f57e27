/* Function signatures from C: a C callback made with parameter names, types, defaults
 * and a doc (obj_function_create_with_signature), read back (obj_function_signature,
 * obj_function_param), called with fewer arguments (the defaults filled for C too),
 * errors that name parameters, refused signatures (the context stays the caller's),
 * the signature of a Rust global declared in Rust and of a typed closure, and the
 * long-running hint (obj_function_set_long_running). */
#include <stdatomic.h>
#include <stdint.h>
#include "check.h"

int obj_fixtures_init(void);

static atomic_int freed = 0;
static void free_ctx(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&freed, 1);
}

/* scale(x, by=2): x * by, both ints; checks it always receives 2 arguments. */
static int32_t c_scale(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    if (n != 2) return obj_error_raise("TypeError", "scale got a count its signature does not allow");
    *ret = obj_any_int(args[0].v.v_int64 * args[1].v.v_int64);
    return 0;
}

int main(void) {
    OK(obj_fixtures_init());
    ObjAny two = obj_any_int(2);
    ObjParamSpec params[2] = {
        {"x", "int", NULL},
        {"by", "int", &two},
    };
    int ctx = 0;
    ObjHandle scale = NULL;
    OK(obj_function_create_with_signature(c_scale, &ctx, free_ctx, "ctest.scale", params, 2,
                                          "Scales x by `by`.", &scale));
    CHECK(scale != NULL);

    /* Read back. */
    int32_t n = 0;
    ObjStr doc, returns;
    OK(obj_function_signature(scale, &n, &doc, &returns));
    CHECK(n == 2 && str_eq(doc, "Scales x by `by`.") && returns.len == 0);
    ObjParamInfo p;
    OK(obj_function_param(scale, 0, &p));
    CHECK(str_eq(p.name, "x") && str_eq(p.type_str, "int") && p.has_default == 0);
    CHECK(p.kind == OBJ_PARAM_POSITIONAL_OR_KEYWORD && p.default_value.type_index == OBJ_KIND_NONE);
    OK(obj_function_param(scale, 1, &p));
    CHECK(str_eq(p.name, "by") && p.has_default == 1);
    CHECK(p.default_value.type_index == OBJ_KIND_INT && p.default_value.v.v_int64 == 2);
    FAILS(obj_function_param(scale, 2, &p), "IndexError", "parameter 2 of 2");
    FAILS(obj_function_param(scale, -1, &p), "IndexError", "parameter -1");

    /* Calls: the default filled in for a C caller too, errors naming the parameters. */
    ObjAny args[3] = {obj_any_int(21), obj_any_int(3), obj_any_int(0)};
    ObjAny ret;
    OK(obj_function_call(scale, args, 1, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 42);
    OK(obj_function_call(scale, args, 2, &ret));
    CHECK(ret.v.v_int64 == 63);
    FAILS(obj_function_call(scale, args, 0, &ret), "TypeError", "missing argument `x` of `ctest.scale`");
    FAILS(obj_function_call(scale, args, 3, &ret), "TypeError", "`ctest.scale` takes 2 arguments, got 3");

    /* Registered as a global, the signature goes with it. */
    OK(obj_global_set("ctest.scale", scale, 0));
    ObjHandle g = NULL;
    OK(obj_global_get("ctest.scale", &g));
    OK(obj_function_signature(g, &n, NULL, NULL));
    CHECK(n == 2);
    OK(obj_dec_ref(g));
    int32_t removed = 0;
    OK(obj_global_remove("ctest.scale", &removed));
    CHECK(removed == 1);

    /* Refused signatures: nothing kept, the context still the caller's. */
    ObjParamSpec twice[2] = {{"a", NULL, NULL}, {"a", NULL, NULL}};
    ObjHandle bad = NULL;
    FAILS(obj_function_create_with_signature(c_scale, &ctx, free_ctx, "bad", twice, 2, NULL, &bad),
          "ValueError", "parameter `a` is named twice");
    ObjParamSpec order[2] = {{"a", NULL, &two}, {"b", NULL, NULL}};
    FAILS(obj_function_create_with_signature(c_scale, &ctx, free_ctx, "bad", order, 2, NULL, &bad),
          "ValueError", "without a default follows `a`");
    FAILS(obj_function_create_with_signature(c_scale, &ctx, free_ctx, "bad", NULL, 1, NULL, &bad),
          "ValueError", "null");
    FAILS(obj_function_create_with_signature(c_scale, &ctx, free_ctx, "bad", params, -1, NULL, &bad),
          "ValueError", "negative count");
    CHECK(bad == NULL && atomic_load(&freed) == 0);

    /* A function without a signature says nothing; a typed Rust closure its types. */
    ObjHandle plain = NULL;
    OK(obj_function_create(c_scale, &ctx, NULL, "plain", &plain));
    OK(obj_function_signature(plain, &n, NULL, NULL));
    CHECK(n == -1);
    FAILS(obj_function_param(plain, 0, &p), "IndexError", "declares no parameters");

    /* The long-running hint: off for a new function, set and cleared, the previous
     * value reported each time; a handle that is no function is refused. */
    int32_t previous = -1;
    OK(obj_function_set_long_running(plain, 1, &previous));
    CHECK(previous == 0);
    OK(obj_function_set_long_running(plain, 7, &previous));
    CHECK(previous == 1);
    OK(obj_function_set_long_running(plain, 0, NULL));
    OK(obj_function_set_long_running(plain, 0, &previous));
    CHECK(previous == 0);
    FAILS(obj_function_set_long_running(NULL, 1, NULL), "ValueError", "null");
    OK(obj_dec_ref(plain));
    ObjHandle add = NULL;
    OK(obj_global_get("fixtures.add", &add));
    OK(obj_function_signature(add, &n, &doc, &returns));
    CHECK(n == 2 && doc.len == 0 && str_eq(returns, "int"));
    OK(obj_function_param(add, 1, &p));
    CHECK(str_eq(p.name, "arg1") && str_eq(p.type_str, "int") && p.kind == OBJ_PARAM_POSITIONAL_ONLY);
    OK(obj_dec_ref(add));

    FAILS(obj_function_signature(NULL, &n, NULL, NULL), "ValueError", "null");
    OK(obj_dec_ref(scale));
    CHECK(atomic_load(&freed) == 1);
    return finish("signatures");
}
