/* Small helpers shared by the C test programs. */
#ifndef OBJ_TEST_CHECK_H
#define OBJ_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "object_capi.h"

static int failures = 0;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                          \
        }                                                                        \
    } while (0)

/* A call that must succeed; on failure prints the waiting error. */
#define OK(call)                                                                 \
    do {                                                                         \
        if ((call) != 0) {                                                       \
            fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #call);    \
            print_error();                                                       \
            failures++;                                                          \
        }                                                                        \
    } while (0)

static inline int str_eq(ObjStr s, const char *c) {
    return s.len == strlen(c) && memcmp(s.data, c, s.len) == 0;
}

static inline void print_error(void) {
    ObjHandle e = NULL;
    if (obj_error_take(&e) != 0 || e == NULL) {
        fprintf(stderr, "(no error waiting)\n");
        return;
    }
    ObjStr kind, msg;
    obj_error_kind(e, &kind);
    obj_error_message(e, &msg);
    fprintf(stderr, "%.*s: %.*s\n", (int)kind.len, kind.data, (int)msg.len, msg.data);
    obj_dec_ref(e);
}

/* The call must fail with an error of `kind` whose message contains `needle`. */
#define FAILS(call, kind, needle) check_fails((call), (kind), (needle), __FILE__, __LINE__, #call)

static inline void check_fails(int rc, const char *kind, const char *needle, const char *file, int line,
                        const char *text) {
    if (rc == 0) {
        fprintf(stderr, "%s:%d: %s succeeded, expected %s\n", file, line, text, kind);
        failures++;
        return;
    }
    ObjHandle e = NULL;
    if (obj_error_take(&e) != 0 || e == NULL) {
        fprintf(stderr, "%s:%d: %s failed without an error\n", file, line, text);
        failures++;
        return;
    }
    ObjStr k, m;
    obj_error_kind(e, &k);
    obj_error_message(e, &m);
    char buf[1024];
    snprintf(buf, sizeof buf, "%.*s", (int)m.len, m.data);
    if (!str_eq(k, kind) || strstr(buf, needle) == NULL) {
        fprintf(stderr, "%s:%d: %s: expected %s containing \"%s\", got %.*s: %s\n", file, line,
                text, kind, needle, (int)k.len, k.data, buf);
        failures++;
    }
    obj_dec_ref(e);
}

static inline ObjAny any_int(int64_t v) {
    ObjAny a;
    a.type_index = OBJ_KIND_INT;
    a.small = 0;
    a.v.v_int64 = v;
    return a;
}

static inline ObjAny any_float(double v) {
    ObjAny a;
    a.type_index = OBJ_KIND_FLOAT;
    a.small = 0;
    a.v.v_float64 = v;
    return a;
}

static inline ObjAny any_cstr(const char *s) {
    ObjAny a;
    a.type_index = OBJ_KIND_RAW_STR;
    a.small = 0;
    a.v.v_c_str = s;
    return a;
}

static inline ObjAny any_obj(ObjHandle h) {
    ObjAny a;
    a.type_index = h->type_index;
    a.small = 0;
    a.v.v_obj = h;
    return a;
}

/* A float64 CPU tensor of `ndim` extents over `data` (strides may be null: compact). */
static inline ObjDLTensor f64_cpu_tensor(void *data, int32_t ndim, int64_t *shape, int64_t *strides) {
    ObjDLTensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.device.device_type = 1; /* kDLCPU */
    t.ndim = ndim;
    t.dtype.code = 2; /* kDLFloat */
    t.dtype.bits = 64;
    t.dtype.lanes = 1;
    t.shape = shape;
    t.strides = strides;
    return t;
}

static inline int finish(const char *name) {
    ObjHandle e = NULL;
    obj_error_take(&e);
    CHECK(e == NULL); /* nothing left waiting */
    if (e) obj_dec_ref(e);
    if (failures) {
        fprintf(stderr, "%s: %d failure(s)\n", name, failures);
        return 1;
    }
    printf("%s: ok\n", name);
    return 0;
}
#endif
