/* Plugins that fail to load, each in one way, chosen with a -D when compiled
 * (tests/error_kinds.rs loads each build and matches the LoadError it gets):
 * NO_ENTRY (no `obj_plugin_entry`), NULL_DESCRIPTOR, BAD_MAGIC, SKEW_MAJOR,
 * SMALL_DESCRIPTOR, NO_INIT, INIT_RAISES, INIT_CODE, NO_MODULE, NOT_A_MODULE. */
#include <stddef.h>
#include "object_capi.h"

#ifdef NO_ENTRY

int32_t not_a_plugin(void) { return 0; }

#else

#ifndef NO_INIT
static int32_t init(const ObjHostApi *h, ObjHandle *out_module) {
#if defined(INIT_RAISES)
    (void)out_module;
    return h->error_raise("ValueError", "the bad plugin refuses to start");
#elif defined(INIT_CODE)
    (void)h; (void)out_module;
    return -7; /* without raising */
#elif defined(NOT_A_MODULE)
    return h->string_create("a string, not a module", 22, out_module);
#else /* NO_MODULE, and the builds refused before `init` runs */
    (void)h; (void)out_module;
    return 0;
#endif
}
#endif

static const ObjPluginDescriptor descriptor = {
#ifdef BAD_MAGIC
    0x1234,
#else
    OBJ_PLUGIN_MAGIC,
#endif
#ifdef SKEW_MAJOR
    OBJ_ABI_MAJOR + 1,
#else
    OBJ_ABI_MAJOR,
#endif
    OBJ_ABI_MINOR,
#ifdef SMALL_DESCRIPTOR
    8,
#else
    sizeof(ObjPluginDescriptor),
#endif
    OBJ_LAYOUT_FINGERPRINT_C,
    "bad-plugin",
#ifdef NO_INIT
    NULL,
#else
    init,
#endif
};

const ObjPluginDescriptor *obj_plugin_entry(void) {
#ifdef NULL_DESCRIPTOR
    return descriptor.size == 0 ? &descriptor : NULL; /* always NULL */
#else
    return &descriptor;
#endif
}

#endif
