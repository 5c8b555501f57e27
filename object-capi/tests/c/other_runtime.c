/* Stands for a copy of the object runtime of another build (another version, another
 * compiler) that runs this process's registry: it exports the runtime descriptor whose
 * first fields every build shares (magic, size, build id, state) with a build id of its
 * own, and says it runs a registry. tests/runtime_conflict.rs loads it first. */
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t magic;
    uint64_t size;
    const char *build_id;
    size_t build_id_len;
    uint32_t (*state)(void);
    const void *(*hooks)(void);
} RuntimeDescriptor;

static uint32_t running(void) { return 1; }
static const void *no_hooks(void) { return NULL; }

static const char BUILD[] = "object-core 0.0.1 / layouts 1 / rustc 1.0.0 (another build)";

static const RuntimeDescriptor DESCRIPTOR = {
    0x4f424a52554e544dULL, sizeof(RuntimeDescriptor), BUILD, sizeof BUILD - 1, running, no_hooks,
};

const RuntimeDescriptor *obj_process_runtime_v1(void) { return &DESCRIPTOR; }
