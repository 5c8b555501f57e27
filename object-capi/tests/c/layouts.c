/* The layout rule from C: a type's layout is sealed by its first owner. C cannot
 * initialize objects of a type a Rust struct owns (built-ins, derive types, ffi.Object),
 * nor of one under a Rust ancestor C cannot lay out; its objects must be at least the
 * ancestor's size and aligned for it; and the first object seals the type's size. On
 * every refusal nothing is written to the block. */
#include "check.h"
#include <stdint.h>

int obj_fixtures_init(void);

static int freed = 0;
static void free_block(ObjObjectHeader *obj) {
    freed++;
    free(obj);
}

/* A block whose header is a recognizable pattern, to see that a refusal wrote nothing. */
static ObjObjectHeader *block(size_t size) {
    ObjObjectHeader *h = aligned_alloc(16, (size + 15) / 16 * 16);
    memset(h, 0xab, size);
    return h;
}

static int untouched(const ObjObjectHeader *h) {
    const unsigned char *p = (const unsigned char *)h;
    for (size_t i = 0; i < sizeof *h; i++)
        if (p[i] != 0xab) return 0;
    return 1;
}

int main(void) {
    OK(obj_fixtures_init());
    ObjTypeLayout layout;

    /* Rust-owned layouts: refused, the block left alone. */
    ObjObjectHeader *h = block(16);
    FAILS(obj_object_init(h, 16, OBJ_TYPE_ARRAY, free_block), "TypeError", "ffi.Array");
    CHECK(untouched(h));
    FAILS(obj_object_init(h, 16, OBJ_TYPE_STRING, free_block), "TypeError", "Rust struct");
    FAILS(obj_object_init(h, 16, OBJ_TYPE_OBJECT, free_block), "TypeError", "register a type of your own");
    uint32_t shape = 0, point = 0;
    OK(obj_type_index_of("fixtures.Shape", &shape));
    OK(obj_type_index_of("fixtures.Point", &point));
    FAILS(obj_object_init(h, 4096, shape, free_block), "TypeError", "fixtures.Shape");
    CHECK(untouched(h));
    OK(obj_type_layout(OBJ_TYPE_ARRAY, &layout));
    CHECK(layout.owner == OBJ_LAYOUT_RUST && layout.rust_index == OBJ_TYPE_ARRAY);

    /* A C type under ffi.Object: 16-byte objects, sealed by the first. */
    uint32_t cnode = 0;
    OK(obj_type_register("clayout.CNode", "ffi.Object", 0, 0, 1, &cnode));
    OK(obj_type_layout(cnode, &layout));
    CHECK(layout.owner == OBJ_LAYOUT_OPEN && layout.size == 16 && layout.object_size == 0);
    CHECK(layout.rust_index == OBJ_TYPE_OBJECT);
    FAILS(obj_object_init(h, 8, cnode, free_block), "TypeError", "16 bytes");
    CHECK(untouched(h));
    OK(obj_object_init(h, 16, cnode, free_block));
    CHECK(h->type_index == cnode && h->ref_count == 1);
    OK(obj_type_layout(cnode, &layout));
    CHECK(layout.owner == OBJ_LAYOUT_FOREIGN && layout.object_size == 16);
    ObjObjectHeader *bigger = block(32);
    FAILS(obj_object_init(bigger, 32, cnode, free_block), "TypeError", "clayout.CNode");
    CHECK(untouched(bigger));
    ObjObjectHeader *same = block(16);
    OK(obj_object_init(same, 16, cnode, free_block));
    OK(obj_dec_ref(same));
    OK(obj_dec_ref(h));
    CHECK(freed == 2);

    /* Under a Rust ancestor: at least its size (fixtures.Shape: header + int32 id). */
    uint32_t tri = 0;
    OK(obj_type_register("clayout.Triangle", "fixtures.Shape", 0, 1, 1, &tri));
    OK(obj_type_layout(tri, &layout));
    CHECK(layout.rust_index == shape && layout.size == 24 && layout.align == 8);
    ObjObjectHeader *small = block(16);
    FAILS(obj_object_init(small, 16, tri, free_block), "TypeError", "fixtures.Shape");
    CHECK(untouched(small));
    /* Misaligned for the ancestor: refused before anything is read or written. */
    unsigned char *raw = aligned_alloc(16, 64);
    memset(raw, 0xab, 64);
    FAILS(obj_object_init((ObjObjectHeader *)(raw + 4), 32, tri, free_block), "ValueError", "aligned");
    CHECK(untouched((ObjObjectHeader *)(raw + 4)));
    free(raw);
    ObjObjectHeader *t = block(32);
    OK(obj_object_init(t, 32, tri, free_block));
    int32_t *id = (int32_t *)((char *)t + 16);
    *id = 9;
    ObjAny v;
    OK(obj_object_get_attr(t, "id", &v));
    CHECK(v.type_index == OBJ_KIND_INT && v.v.v_int64 == 9);
    OK(obj_dec_ref(t));
    CHECK(freed == 3);

    /* A Rust ancestor with a field C cannot lay out (fixtures.Point's `note`, a Rust
     * std string): refused. */
    uint32_t under_point = 0;
    OK(obj_type_register("clayout.UnderPoint", "fixtures.Point", 0, 1, 1, &under_point));
    ObjObjectHeader *p = block(256);
    FAILS(obj_object_init(p, 256, under_point, free_block), "TypeError", "note");
    CHECK(untouched(p));

    free(small);
    free(bigger);
    free(p);
    if (failures) {
        fprintf(stderr, "%d failure(s)\n", failures);
        return 1;
    }
    printf("layouts: ok\n");
    return 0;
}
