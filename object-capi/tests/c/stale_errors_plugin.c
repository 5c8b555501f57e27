/* A plugin whose `init` fails without raising an error (tests/c/stale_errors.c). */
#include "object_capi.h"

static int32_t init(const ObjHostApi *h, ObjHandle *out_module) {
    (void)h; (void)out_module;
    return -5;
}

static const ObjPluginDescriptor descriptor = {
    .magic = OBJ_PLUGIN_MAGIC,
    .abi_major = OBJ_ABI_MAJOR,
    .abi_minor = OBJ_ABI_MINOR,
    .size = sizeof(ObjPluginDescriptor),
    .fingerprint = OBJ_LAYOUT_FINGERPRINT_C,
    .name = "stale-errors",
    .init = init,
};

const ObjPluginDescriptor *obj_plugin_entry(void) { return &descriptor; }
