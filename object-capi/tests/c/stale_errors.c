/* Stale errors: a C callback or a plugin's `init` that fails without raising is reported
 * with an error of its own that names it and its code, never with an error an earlier,
 * unrelated call left in the slot and nobody took. Each case leaves such an error first.
 * argv[1] is the path of a plugin whose `init` returns -5 without raising. */
#include "check.h"

int obj_fixtures_init(void);

static int32_t fails_silently(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return -1;
}

static int32_t fails_with_three(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return 3;
}

/* Raises, takes its own error back (handled), then fails without raising. */
static int32_t handles_then_fails(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    ObjHandle e = NULL;
    (void)obj_error_raise("InnerError", "handled inside");
    if (obj_error_take(&e) == 0 && e != NULL) obj_dec_ref(e);
    return -2;
}

/* Passes on an inner call's failure by returning its code, the error left in the slot
 * (the C idiom): the inner callee's error is reported. */
static int32_t propagates(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)args; (void)n; (void)ret;
    ObjAny inner_ret = any_int(0);
    return obj_function_call((ObjHandle)ctx, NULL, 0, &inner_ret);
}

static int32_t raises(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return obj_error_raise("ValueError", "raised by the callback");
}

/* An error of an earlier call that nobody takes. */
static void leave_stale_error(void) {
    CHECK(obj_error_raise("StaleError", "stale text of an unrelated call") != 0);
}

int main(int argc, char **argv) {
    OK(obj_fixtures_init());
    ObjHandle silent = NULL, anonymous = NULL, handles = NULL, outer = NULL, raising = NULL;
    ObjAny ret = any_int(0);
    OK(obj_function_create(fails_silently, NULL, NULL, "stale.silent", &silent));
    OK(obj_function_create(fails_with_three, NULL, NULL, NULL, &anonymous));
    OK(obj_function_create(handles_then_fails, NULL, NULL, "stale.handles", &handles));
    OK(obj_function_create(propagates, silent, NULL, "stale.outer", &outer));
    OK(obj_function_create(raises, NULL, NULL, "stale.raises", &raising));

    leave_stale_error();
    FAILS(obj_function_call(silent, NULL, 0, &ret), "Error",
          "C function `stale.silent` returned -1 without raising an error");
    leave_stale_error();
    FAILS(obj_function_call(anonymous, NULL, 0, &ret), "Error",
          "C function `<anonymous>` returned 3 without raising an error");
    leave_stale_error();
    FAILS(obj_function_call(handles, NULL, 0, &ret), "Error",
          "C function `stale.handles` returned -2 without raising an error");
    leave_stale_error();
    FAILS(obj_function_call(outer, NULL, 0, &ret), "Error",
          "C function `stale.silent` returned -1 without raising an error");
    leave_stale_error();
    FAILS(obj_function_call(raising, NULL, 0, &ret), "ValueError", "raised by the callback");
    /* With arguments, through the checked path too. */
    ObjAny args[2] = {any_int(1), any_cstr("text")};
    leave_stale_error();
    FAILS(obj_function_call(silent, args, 2, &ret), "Error",
          "C function `stale.silent` returned -1 without raising an error");

    /* A plugin whose `init` fails without raising. */
    CHECK(argc == 2);
    if (argc == 2) {
        char expected[1024];
        snprintf(expected, sizeof expected,
                 "cannot load plugin `%s`: `init` returned -5 without an error", argv[1]);
        ObjHandle m = NULL;
        leave_stale_error();
        FAILS(obj_module_load(argv[1], &m), "PluginError", expected);
        CHECK(m == NULL);
    }

    OK(obj_dec_ref(raising));
    OK(obj_dec_ref(outer));
    OK(obj_dec_ref(handles));
    OK(obj_dec_ref(anonymous));
    OK(obj_dec_ref(silent));
    return finish("stale_errors");
}
