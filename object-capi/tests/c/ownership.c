/* Who owns what after a call, success or failure: the header's rule (a failed call takes
 * nothing and writes no out parameter) and its stated exceptions, checked call by call.
 * Run under valgrind by scripts/valgrind.sh: a double free or a leak fails the run.
 *
 * DLPack import first: every refusal leaves the managed tensor with the caller (its
 * deleter not called), which then frees it itself; the deleter must have run exactly
 * once in the end. A success calls the deleter once, at the array's last release. */
#include "check.h"
#include <stdint.h>

int obj_fixtures_init(void);

/* A producer's block: the managed struct first (its address is the block's), then what
 * it describes, and where its deleter counts. */
typedef struct {
    ObjDLManagedTensor managed;
    int64_t shape[2], strides[2];
    double data[6];
    int *deleted;
} Legacy;

typedef struct {
    ObjDLManagedTensorVersioned managed;
    int64_t shape[2], strides[2];
    double data[6];
    int *deleted;
} Versioned;

static void delete_legacy(ObjDLManagedTensor *m) {
    Legacy *b = (Legacy *)m;
    (*b->deleted)++;
    free(b);
}

static void delete_versioned(ObjDLManagedTensorVersioned *m) {
    Versioned *b = (Versioned *)m;
    (*b->deleted)++;
    free(b);
}

/* A 2 x 3 row-major float64 CPU tensor over the block's own arrays. */
static ObjDLTensor describe(int64_t *shape, int64_t *strides, double *data) {
    shape[0] = 2;
    shape[1] = 3;
    strides[0] = 3;
    strides[1] = 1;
    for (int i = 0; i < 6; i++) data[i] = i;
    return f64_cpu_tensor(data, 2, shape, strides);
}

static Legacy *make_legacy(int *deleted) {
    Legacy *b = calloc(1, sizeof *b);
    b->managed.dl_tensor = describe(b->shape, b->strides, b->data);
    b->managed.deleter = delete_legacy;
    b->deleted = deleted;
    return b;
}

static Versioned *make_versioned(int *deleted) {
    Versioned *b = calloc(1, sizeof *b);
    b->managed.version.major = 1;
    b->managed.version.minor = 1;
    b->managed.dl_tensor = describe(b->shape, b->strides, b->data);
    b->managed.deleter = delete_versioned;
    b->deleted = deleted;
    return b;
}

/* The refusals, each a change to a valid tensor, with the message it must give. */
typedef struct {
    const char *name;
    const char *needle;
} Refusal;

static const Refusal REFUSALS[] = {
    {"zero lanes", "unsupported data type"},
    {"sub-byte data type", "unsupported data type"},
    {"ndim -1", "ndim -1 is outside"},
    {"ndim 65", "ndim 65 is outside"},
    {"ndim 2^30", "ndim 1073741824 is outside"},
    {"null shape", "the shape pointer is null"},
    {"negative extent", "axis 1 has a negative extent (-3)"},
    {"element count overflow", "overflows"},
    {"stride overflow", "overflows"},
    {"null data with elements", "data pointer is null but it has 6 elements"},
    {"misaligned data", "not aligned to 8 bytes"},
    {"byte offset past isize", "overflows"},
    {"unknown device", "unsupported device"},
};
#define NUM_REFUSALS (sizeof REFUSALS / sizeof REFUSALS[0])

static void spoil(size_t i, ObjDLTensor *t) {
    switch (i) {
    case 0: t->dtype.lanes = 0; break;
    case 1: t->dtype.code = 0; t->dtype.bits = 4; break;
    case 2: t->ndim = -1; break;
    case 3: t->ndim = 65; break;
    case 4: t->ndim = 1 << 30; break;
    case 5: t->shape = NULL; break;
    case 6: t->shape[1] = -3; break;
    case 7: t->shape[0] = INT64_MAX; t->shape[1] = INT64_MAX; break;
    case 8: t->strides[0] = INT64_MAX; break;
    case 9: t->data = NULL; break;
    case 10: t->byte_offset = 2; break;
    case 11: t->byte_offset = UINT64_MAX - 3; break;
    case 12: t->device.device_type = 99; break;
    }
}

static ObjHandle const UNTOUCHED = (ObjHandle)0x5a5a;

static void dlpack_refusals(void) {
    for (size_t i = 0; i < NUM_REFUSALS; i++) {
        int deleted = 0;
        ObjHandle out = UNTOUCHED;
        Legacy *l = make_legacy(&deleted);
        spoil(i, &l->managed.dl_tensor);
        FAILS(obj_ndarray_from_dlpack(&l->managed, &out), "ValueError", REFUSALS[i].needle);
        if (deleted != 0 || out != UNTOUCHED)
            fprintf(stderr, "legacy, %s: the refusal took the tensor\n", REFUSALS[i].name);
        CHECK(deleted == 0 && out == UNTOUCHED);
        l->managed.deleter(&l->managed); /* still ours: we free it */
        CHECK(deleted == 1);

        deleted = 0;
        Versioned *v = make_versioned(&deleted);
        spoil(i, &v->managed.dl_tensor);
        FAILS(obj_ndarray_from_dlpack_versioned(&v->managed, &out), "ValueError", REFUSALS[i].needle);
        if (deleted != 0 || out != UNTOUCHED)
            fprintf(stderr, "versioned, %s: the refusal took the tensor\n", REFUSALS[i].name);
        CHECK(deleted == 0 && out == UNTOUCHED);
        v->managed.deleter(&v->managed);
        CHECK(deleted == 1);
    }

    /* Another major version: only the version is read (the rest is garbage here); the
       owner (still us) calls the deleter, as dlpack.h asks. */
    uint32_t majors[3] = {0, 2, UINT32_MAX};
    for (int i = 0; i < 3; i++) {
        int deleted = 0;
        ObjHandle out = UNTOUCHED;
        Versioned *v = make_versioned(&deleted);
        v->managed.version.major = majors[i];
        v->managed.dl_tensor.ndim = -12345;
        v->managed.dl_tensor.shape = NULL;
        FAILS(obj_ndarray_from_dlpack_versioned(&v->managed, &out), "ValueError", "is not supported");
        CHECK(deleted == 0 && out == UNTOUCHED);
        v->managed.deleter(&v->managed);
        CHECK(deleted == 1);
    }

    /* A null out parameter: refused before the tensor is looked at, still ours. */
    int deleted = 0;
    Legacy *l = make_legacy(&deleted);
    FAILS(obj_ndarray_from_dlpack(&l->managed, NULL), "ValueError", "`out_array` is null");
    CHECK(deleted == 0);
    l->managed.deleter(&l->managed);
    CHECK(deleted == 1);
    deleted = 0;
    Versioned *v = make_versioned(&deleted);
    FAILS(obj_ndarray_from_dlpack_versioned(&v->managed, NULL), "ValueError", "`out_array` is null");
    CHECK(deleted == 0);
    v->managed.deleter(&v->managed);
    CHECK(deleted == 1);

    /* A null managed tensor: a plain error, nothing to free. */
    ObjHandle out = UNTOUCHED;
    FAILS(obj_ndarray_from_dlpack(NULL, &out), "ValueError", "managed tensor pointer is null");
    FAILS(obj_ndarray_from_dlpack_versioned(NULL, &out), "ValueError", "managed tensor pointer is null");
    CHECK(out == UNTOUCHED);
}

static void dlpack_successes(void) {
    /* Legacy: the deleter runs once, when the last reference (here an array's) goes. */
    int deleted = 0;
    Legacy *l = make_legacy(&deleted);
    ObjHandle a = NULL;
    OK(obj_ndarray_from_dlpack(&l->managed, &a));
    CHECK(deleted == 0);
    OK(obj_inc_ref(a));
    ObjAny item = any_obj(a);
    ObjHandle holder = NULL;
    OK(obj_array_create(&item, 1, &holder));
    OK(obj_dec_ref(a));
    OK(obj_dec_ref(a));
    CHECK(deleted == 0); /* the array still holds it */
    OK(obj_dec_ref(holder));
    CHECK(deleted == 1);

    /* Versioned, read-only. */
    deleted = 0;
    Versioned *v = make_versioned(&deleted);
    v->managed.flags = 1; /* DLPACK_FLAG_BITMASK_READ_ONLY */
    OK(obj_ndarray_from_dlpack_versioned(&v->managed, &a));
    CHECK(deleted == 0);
    OK(obj_dec_ref(a));
    CHECK(deleted == 1);

    /* Our own export refused after a change: still ours; its deleter gives the array
       back its reference. */
    int64_t shp[1] = {4};
    ObjDataType f32 = {2, 32, 1};
    ObjHandle arr = NULL;
    OK(obj_ndarray_empty(shp, 1, f32, &arr));
    ObjDLManagedTensorVersioned *exported = NULL;
    OK(obj_ndarray_to_dlpack_versioned(arr, &exported));
    CHECK(arr->ref_count == 2);
    exported->dl_tensor.dtype.lanes = 0;
    ObjHandle back = UNTOUCHED;
    FAILS(obj_ndarray_from_dlpack_versioned(exported, &back), "ValueError", "unsupported data type");
    CHECK(back == UNTOUCHED && arr->ref_count == 2);
    exported->deleter(exported);
    CHECK(arr->ref_count == 1);
    /* Unchanged, it comes back as the very array, and the import released the export.
       (The legacy export takes the caller's only reference; the import gives one back.) */
    ObjDLManagedTensor *legacy_export = NULL;
    OK(obj_ndarray_to_dlpack(arr, &legacy_export));
    CHECK(arr->ref_count == 1);
    OK(obj_ndarray_from_dlpack(legacy_export, &back));
    CHECK(back == arr && arr->ref_count == 1);
    OK(obj_dec_ref(back));
}

/* Function contexts. */
static int contexts_freed = 0;
static void free_ctx(void *ctx) {
    contexts_freed++;
    free(ctx);
}

static int32_t nop(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n; (void)ret;
    return 0;
}

static ObjHandle shared_string = NULL;

/* Writes a new reference to `shared_string` into its slot, then fails. */
static int32_t write_then_fail(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n;
    obj_inc_ref(shared_string);
    *ret = any_obj(shared_string);
    return obj_error_raise("ValueError", "failed after writing");
}

/* Returns a new reference to `shared_string` under another type's index. */
static int32_t return_mislabelled(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx; (void)args; (void)n;
    obj_inc_ref(shared_string);
    *ret = any_obj(shared_string);
    ret->type_index = OBJ_TYPE_ARRAY;
    return 0;
}

static void function_contexts(void) {
    /* obj_function_create: a failure calls nothing; the context is still ours. */
    ObjHandle f = UNTOUCHED;
    void *ctx = malloc(16);
    FAILS(obj_function_create(NULL, ctx, free_ctx, "f", &f), "ValueError", "`call` is null");
    FAILS(obj_function_create(nop, ctx, free_ctx, "\xff", &f), "ValueError", "not UTF-8");
    FAILS(obj_function_create(nop, ctx, free_ctx, "f", NULL), "ValueError", "`out_func` is null");
    CHECK(contexts_freed == 0 && f == UNTOUCHED);
    free_ctx(ctx);
    CHECK(contexts_freed == 1);
    /* ...and a success hands it to the function, freed at its last release. */
    ctx = malloc(16);
    OK(obj_function_create(nop, ctx, free_ctx, "f", &f));
    OK(obj_dec_ref(f));
    CHECK(contexts_freed == 2);

    /* obj_global_def: the context is the call's in every case; a failure frees it at once. */
    contexts_freed = 0;
    FAILS(obj_global_def(NULL, nop, malloc(16), free_ctx), "ValueError", "`name` is null");
    CHECK(contexts_freed == 1);
    FAILS(obj_global_def("\xff", nop, malloc(16), free_ctx), "ValueError", "not UTF-8");
    CHECK(contexts_freed == 2);
    FAILS(obj_global_def("own.nop", NULL, malloc(16), free_ctx), "ValueError", "`call` is null");
    CHECK(contexts_freed == 3);
    OK(obj_global_def("own.nop", nop, malloc(16), free_ctx));
    FAILS(obj_global_def("own.nop", nop, malloc(16), free_ctx), "KeyError", "own.nop");
    CHECK(contexts_freed == 4);
    int32_t removed = 0;
    OK(obj_global_remove("own.nop", &removed));
    CHECK(removed == 1 && contexts_freed == 5);
}

static void return_slots(void) {
    OK(obj_string_create("a string long enough to be an object", 36, &shared_string));
    ObjHandle add = NULL, failing = NULL, mislabelled = NULL;
    OK(obj_global_get("fixtures.add", &add));
    ObjAny sentinel = any_int(77), ret;

    /* Refused before the function runs: `*ret` left as it was. */
    ret = sentinel;
    FAILS(obj_function_call(add, NULL, 2, &ret), "ValueError", "`args` is null");
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 77);
    ret = sentinel;
    FAILS(obj_function_call(NULL, NULL, 0, &ret), "ValueError", "`func` is null");
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 77);
    ret = sentinel;
    FAILS(obj_global_call("own.no_such_function", NULL, 0, &ret), "KeyError", "own.no_such_function");
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 77);
    /* The function ran and failed: None. */
    ObjAny wrong[2] = {any_cstr("x"), any_int(1)};
    ret = sentinel;
    FAILS(obj_function_call(add, wrong, 2, &ret), "TypeError", "argument 0");
    CHECK(ret.type_index == OBJ_KIND_NONE);
    /* A C callback's value written before failing is released (not leaked, not ours). */
    OK(obj_function_create(write_then_fail, NULL, NULL, "write_then_fail", &failing));
    ret = sentinel;
    FAILS(obj_function_call(failing, NULL, 0, &ret), "ValueError", "failed after writing");
    CHECK(ret.type_index == OBJ_KIND_NONE && shared_string->ref_count == 1);
    /* A mislabelled value a callback returns is an error, and released too. */
    OK(obj_function_create(return_mislabelled, NULL, NULL, "return_mislabelled", &mislabelled));
    FAILS(obj_function_call(mislabelled, NULL, 0, &ret), "TypeError", "ffi.String");
    CHECK(shared_string->ref_count == 1);
    /* Success: `*ret` need not be initialized. */
    ObjAny args[2] = {any_int(40), any_int(2)};
    memset(&ret, 0xab, sizeof ret);
    OK(obj_function_call(add, args, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 42);

    OK(obj_dec_ref(mislabelled));
    OK(obj_dec_ref(failing));
    OK(obj_dec_ref(add));
}

static void values(void) {
    /* obj_any_release: a value breaking the rules is an error, still set to None and its
       object still released. */
    OK(obj_inc_ref(shared_string));
    CHECK(shared_string->ref_count == 2);
    ObjAny v = any_obj(shared_string);
    v.type_index = OBJ_TYPE_ARRAY; /* claims another type */
    FAILS(obj_any_release(&v), "TypeError", "ffi.String");
    CHECK(v.type_index == OBJ_KIND_NONE && shared_string->ref_count == 1);
    double x = 0;
    v.type_index = OBJ_KIND_DL_TENSOR_PTR;
    v.small = 0;
    v.v.v_ptr = &x;
    FAILS(obj_any_release(&v), "TypeError", "cannot be owned");
    CHECK(v.type_index == OBJ_KIND_NONE);
    v.type_index = OBJ_TYPE_STRING;
    v.v.v_obj = NULL;
    FAILS(obj_any_release(&v), "ValueError", "null");
    CHECK(v.type_index == OBJ_KIND_NONE);
    /* A good one: released, set to None. */
    OK(obj_inc_ref(shared_string));
    v = any_obj(shared_string);
    OK(obj_any_release(&v));
    CHECK(v.type_index == OBJ_KIND_NONE && shared_string->ref_count == 1);

    /* obj_any_copy: on failure `*dst` is left as it was; on success a new reference. */
    ObjAny src = any_obj(shared_string), dst = any_int(77);
    src.type_index = OBJ_TYPE_ARRAY;
    FAILS(obj_any_copy(&src, &dst), "TypeError", "ffi.String");
    CHECK(dst.type_index == OBJ_KIND_INT && dst.v.v_int64 == 77 && shared_string->ref_count == 1);
    src.type_index = OBJ_TYPE_STRING;
    OK(obj_any_copy(&src, &dst));
    CHECK(dst.v.v_obj == shared_string && shared_string->ref_count == 2);
    OK(obj_any_release(&dst));

    /* Out parameters a failed call leaves alone. */
    ObjHandle h = UNTOUCHED;
    FAILS(obj_global_get(NULL, &h), "ValueError", "`name` is null");
    FAILS(obj_string_create("\xff", 1, &h), "ValueError", "not UTF-8");
    ObjAny item = any_int(1);
    FAILS(obj_map_create(&item, NULL, 1, &h), "ValueError", "`values` is null");
    CHECK(h == UNTOUCHED);
    ObjAny out = any_int(77);
    FAILS(obj_json_load("{", 1, &out), "ValueError", "");
    FAILS(obj_array_get(shared_string, 0, &out), "TypeError", "ffi.Array");
    CHECK(out.type_index == OBJ_KIND_INT && out.v.v_int64 == 77);

    /* obj_object_init: a refusal leaves the memory as it was, still ours. */
    ObjObjectHeader *mem = malloc(sizeof *mem);
    memset(mem, 0xcd, sizeof *mem);
    ObjObjectHeader before = *mem;
    FAILS(obj_object_init(mem, sizeof *mem, 3, NULL), "ValueError", "not a registered object type");
    CHECK(memcmp(mem, &before, sizeof before) == 0);
    free(mem);

    /* obj_error_set: the caller keeps its reference and its error is not changed. */
    CHECK(obj_error_raise("MyError", "mine") != 0);
    ObjHandle e = NULL, taken = NULL;
    OK(obj_error_take(&e));
    CHECK(obj_error_set(e, "a frame") != 0);
    OK(obj_error_take(&taken));
    size_t frames = 99;
    OK(obj_error_num_frames(taken, &frames));
    CHECK(frames == 1);
    OK(obj_error_num_frames(e, &frames));
    CHECK(frames == 0 && e->ref_count == 1);
    OK(obj_dec_ref(taken));
    CHECK(obj_error_set(e, NULL) != 0);
    OK(obj_error_take(&taken));
    CHECK(taken == e && e->ref_count == 2);
    OK(obj_dec_ref(taken));
    ObjStr kind;
    OK(obj_error_kind(e, &kind));
    CHECK(str_eq(kind, "MyError"));
    OK(obj_dec_ref(e));

    OK(obj_dec_ref(shared_string));
}

int main(void) {
    OK(obj_fixtures_init());
    dlpack_refusals();
    dlpack_successes();
    function_contexts();
    return_slots();
    values();
    return finish("ownership");
}
