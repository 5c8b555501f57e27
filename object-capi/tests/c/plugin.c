/* A plugin in C: only the host's function table, no copy of the runtime. Its module has
 * `scale` (a callback with a context), `make_thing` (objects of a C type that is a
 * subtype of the host's fixtures.Shape, freed by this plugin's deleter) and `fail`. */
#include <stdlib.h>
#include <string.h>
#include "object_capi.h"

static const ObjHostApi *host;
static uint32_t thing_type;

typedef struct {
    ObjObjectHeader header;
    int32_t id; /* fixtures.Shape's field */
    int32_t legs;
} Thing;

static void free_thing(ObjObjectHeader *obj) { free(obj); }
static void free_factor(void *ctx) { free(ctx); }

static int32_t scale(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    if (n != 1 || args[0].type_index != OBJ_KIND_INT)
        return host->error_raise("TypeError", "scale takes one int");
    ret->type_index = OBJ_KIND_INT;
    ret->small = 0;
    ret->v.v_int64 = args[0].v.v_int64 * *(int64_t *)ctx;
    return 0;
}

static int32_t make_thing(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    if (n != 1 || args[0].type_index != OBJ_KIND_INT)
        return host->error_raise("TypeError", "make_thing takes one int");
    Thing *t = malloc(sizeof *t);
    if (host->object_init(&t->header, sizeof *t, thing_type, free_thing) != 0) {
        free(t);
        return -1;
    }
    t->id = (int32_t)args[0].v.v_int64;
    t->legs = 4;
    ret->type_index = thing_type;
    ret->small = 0;
    ret->v.v_obj = &t->header;
    return 0;
}

static int32_t fail(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return host->error_raise("RuntimeError", "the C plugin failed");
}

static int32_t init(const ObjHostApi *h, ObjHandle *out_module) {
    host = h;
    if (h->size < sizeof(ObjHostApi) || h->abi_major != OBJ_ABI_MAJOR)
        return h->error_raise("PluginError", "host too old for the C plugin");
    if (h->type_register("cplugin.Thing", "fixtures.Shape", 0, 1, 1, &thing_type) != 0) return -1;
    int64_t *factor = malloc(sizeof *factor);
    *factor = 3;
    ObjHandle fns[3] = {NULL, NULL, NULL};
    const char *names[3] = {"scale", "make_thing", "fail"};
    int32_t rc = h->function_create(scale, factor, free_factor, "cplugin.scale", &fns[0]);
    if (rc == 0) rc = h->function_create(make_thing, NULL, NULL, "cplugin.make_thing", &fns[1]);
    if (rc == 0) rc = h->function_create(fail, NULL, NULL, "cplugin.fail", &fns[2]);
    if (rc == 0) rc = h->global_set("cplugin.scale", fns[0], 1);
    if (rc == 0) rc = h->module_create("cplugin", names, fns, 3, out_module);
    for (int i = 0; i < 3; i++)
        if (fns[i]) h->dec_ref(fns[i]);
    return rc;
}

static const ObjPluginDescriptor descriptor = {
    OBJ_PLUGIN_MAGIC,
    OBJ_ABI_MAJOR,
#ifdef SKEW_MINOR
    OBJ_ABI_MINOR + 1,
#else
    OBJ_ABI_MINOR,
#endif
    sizeof(ObjPluginDescriptor),
#ifdef SKEW_LAYOUT
    OBJ_LAYOUT_FINGERPRINT_C + 1,
#else
    OBJ_LAYOUT_FINGERPRINT_C,
#endif
    "c-demo",
    init,
};

const ObjPluginDescriptor *obj_plugin_entry(void) { return &descriptor; }
