/* A C timing loop: a Rust function called through the header (obj_function_call), and
 * a C callback registered as a function called the same way, beside a plain call
 * through a C function pointer (the counterpart of a Box<dyn Fn>). Prints ns per call.
 * OBJECT_TEST_SCALE scales the iteration count. */
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#include "check.h"

int obj_fixtures_init(void);

static int64_t add_c(int64_t a, int64_t b) { return a + b; }
static int64_t (*volatile add_ptr)(int64_t, int64_t) = add_c;

static int32_t add_cb(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)n;
    *ret = any_int(args[0].v.v_int64 + args[1].v.v_int64);
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(void) {
    OK(obj_fixtures_init());
    const char *scale = getenv("OBJECT_TEST_SCALE");
    long iters = (long)(2000000 * (scale ? atof(scale) : 1.0));
    if (iters < 100) iters = 100;
    ObjHandle add = NULL, cb = NULL;
    OK(obj_global_get("fixtures.add", &add));
    OK(obj_function_create(add_cb, NULL, NULL, "add_cb", &cb));
    ObjAny args[2] = {any_int(1), any_int(2)}, ret;

    volatile int64_t sink = 0;
    double t0 = now();
    for (long i = 0; i < iters; i++) sink += add_ptr(i, 2);
    double t_ptr = (now() - t0) / (double)iters;

    t0 = now();
    for (long i = 0; i < iters; i++) {
        args[0].v.v_int64 = i;
        if (obj_function_call(add, args, 2, &ret) != 0) { failures++; break; }
        sink += ret.v.v_int64;
    }
    double t_rust = (now() - t0) / (double)iters;

    t0 = now();
    for (long i = 0; i < iters; i++) {
        args[0].v.v_int64 = i;
        if (obj_function_call(cb, args, 2, &ret) != 0) { failures++; break; }
        sink += ret.v.v_int64;
    }
    double t_cb = (now() - t0) / (double)iters;
    (void)sink;

    printf("C function pointer: %.1f ns/call\n", t_ptr);
    printf("obj_function_call -> Rust add: %.1f ns/call (%.1fx)\n", t_rust, t_rust / t_ptr);
    printf("obj_function_call -> C callback: %.1f ns/call (%.1fx)\n", t_cb, t_cb / t_ptr);
    OK(obj_dec_ref(cb));
    OK(obj_dec_ref(add));
    return finish("call_timing");
}
