/* DLPack from C: export an NDArray (legacy and versioned), import C-owned tensors
 * (both forms) zero-copy, and pass a raw DLTensor* to a Rust function. */
#include "check.h"

int obj_fixtures_init(void);

static int legacy_freed = 0, versioned_freed = 0;
static double data[4] = {1.0, 2.0, 3.0, 4.5};
static int64_t shape[1] = {4};

static void free_legacy(ObjDLManagedTensor *m) {
    legacy_freed++;
    free(m);
}
static void free_versioned(ObjDLManagedTensorVersioned *m) {
    versioned_freed++;
    free(m);
}

static ObjDLTensor c_tensor(void) { return f64_cpu_tensor(data, 1, shape, NULL); }

static double sum(ObjHandle f, ObjAny arg) {
    ObjAny ret;
    if (obj_function_call(f, &arg, 1, &ret) != 0) {
        print_error();
        failures++;
        return -1;
    }
    return ret.v.v_float64;
}

int main(void) {
    OK(obj_fixtures_init());
    ObjHandle sum_f64 = NULL, arange = NULL;
    OK(obj_global_get("fixtures.sum_f64", &sum_f64));
    OK(obj_global_get("fixtures.arange", &arange));

    /* A raw DLTensor* argument (the RFC's calling convention). */
    ObjDLTensor t = c_tensor();
    ObjAny arg;
    arg.type_index = OBJ_KIND_DL_TENSOR_PTR;
    arg.small = 0;
    arg.v.v_ptr = &t;
    CHECK(sum(sum_f64, arg) == 10.5);

    /* Import a legacy managed tensor: zero-copy, its deleter runs when the array dies. */
    ObjDLManagedTensor *m = calloc(1, sizeof *m);
    m->dl_tensor = c_tensor();
    m->deleter = free_legacy;
    ObjHandle a = NULL;
    OK(obj_ndarray_from_dlpack(m, &a));
    CHECK(a->type_index == OBJ_TYPE_TENSOR);
    ObjDLTensor *inside = NULL;
    OK(obj_ndarray_dltensor(a, &inside));
    CHECK(inside->data == (void *)data && inside->shape[0] == 4);
    CHECK(sum(sum_f64, any_obj(a)) == 10.5);
    CHECK(legacy_freed == 0);
    OK(obj_dec_ref(a));
    CHECK(legacy_freed == 1);

    /* And a versioned one. */
    ObjDLManagedTensorVersioned *mv = calloc(1, sizeof *mv);
    mv->version.major = 1;
    mv->version.minor = 1;
    mv->dl_tensor = c_tensor();
    mv->deleter = free_versioned;
    OK(obj_ndarray_from_dlpack_versioned(mv, &a));
    CHECK(sum(sum_f64, any_obj(a)) == 10.5);
    OK(obj_dec_ref(a));
    CHECK(versioned_freed == 1);

    /* Export a Rust-made array both ways; the export keeps it alive. A shared array
     * exports read-only (versioned); the legacy struct cannot say so, so it takes the
     * only reference or is refused (and the caller keeps its reference). */
    ObjAny n = any_int(5), ret;
    OK(obj_function_call(arange, &n, 1, &ret));
    a = ret.v.v_obj;
    ObjDLManagedTensorVersioned *outv = NULL;
    OK(obj_ndarray_to_dlpack_versioned(a, &outv));
    CHECK(outv->version.major == 1 && outv->dl_tensor.shape[0] == 5);
    CHECK((outv->flags & OBJ_DLPACK_FLAG_READ_ONLY) != 0);
    ObjDLManagedTensor *out = NULL;
    FAILS(obj_ndarray_to_dlpack(a, &out), "ValueError", "shared");
    CHECK(out == NULL && a->ref_count == 2);
    outv->deleter(outv);
    OK(obj_ndarray_to_dlpack(a, &out)); /* the only reference: taken over */
    CHECK(out->dl_tensor.ndim == 1 && out->dl_tensor.shape[0] == 5);
    CHECK(out->dl_tensor.dtype.code == 2 && out->dl_tensor.dtype.bits == 64);
    const double *d = (const double *)((const char *)out->dl_tensor.data + out->dl_tensor.byte_offset);
    CHECK(d[4] == 4.0);
    out->deleter(out);
    OK(obj_function_call(arange, &n, 1, &ret));
    OK(obj_ndarray_into_dlpack_versioned(ret.v.v_obj, &outv)); /* the only reference: writable */
    CHECK((outv->flags & OBJ_DLPACK_FLAG_READ_ONLY) == 0);
    outv->deleter(outv);

    /* An empty array made from C, written through its DLTensor while lent (Rust cannot
     * read it meanwhile), then read by Rust. */
    int64_t shp[2] = {2, 3};
    ObjDataType f64 = {2, 64, 1};
    OK(obj_ndarray_empty(shp, 2, f64, &a));
    OK(obj_ndarray_dltensor(a, &inside));
    int32_t lent = -1;
    OK(obj_ndarray_is_lent(a, &lent));
    CHECK(lent == 0);
    OK(obj_ndarray_lend(a));
    OK(obj_ndarray_is_lent(a, &lent));
    CHECK(lent == 1);
    double *w = (double *)((char *)inside->data + inside->byte_offset);
    for (int i = 0; i < 6; i++) w[i] = i;
    ObjAny lent_arg = any_obj(a), r;
    FAILS(obj_function_call(sum_f64, &lent_arg, 1, &r), "ValueError", "lent");
    OK(obj_ndarray_end_lend(a));
    CHECK(sum(sum_f64, any_obj(a)) == 15.0);
    /* Only the only reference can be lent. */
    OK(obj_inc_ref(a));
    FAILS(obj_ndarray_lend(a), "ValueError", "shared");
    OK(obj_dec_ref(a));
    OK(obj_dec_ref(a));

    OK(obj_dec_ref(arange));
    OK(obj_dec_ref(sum_f64));
    return finish("dlpack");
}
