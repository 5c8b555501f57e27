/* A library written to the tvm-ffi convention with its own struct definitions (no
 * tvm-ffi headers): packed functions exported as __tvm_ffi_<name>. */
#include <stdint.h>
#include <string.h>

typedef struct {
    int32_t type_index;
    uint32_t small_str_len;
    union {
        int64_t v_int64;
        double v_float64;
        void *v_ptr;
        const char *v_c_str;
        char v_bytes[8];
    };
} TVMFFIAny;

typedef struct {
    void *data;
    struct { int32_t device_type, device_id; } device;
    int32_t ndim;
    struct { uint8_t code, bits; uint16_t lanes; } dtype;
    int64_t *shape;
    int64_t *strides;
    uint64_t byte_offset;
} DLTensor;

enum { kNone = 0, kInt = 1, kBool = 2, kFloat = 3, kDLTensorPtr = 7, kRawStr = 8 };

int __tvm_ffi_add(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 2 || args[0].type_index != kInt || args[1].type_index != kInt) return -2;
    ret->type_index = kInt;
    ret->v_int64 = args[0].v_int64 + args[1].v_int64;
    return 0;
}

int __tvm_ffi_scale(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 2 || args[0].type_index != kFloat || args[1].type_index != kFloat) return -2;
    ret->type_index = kFloat;
    ret->v_float64 = args[0].v_float64 * args[1].v_float64;
    return 0;
}

int __tvm_ffi_negate(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 1 || args[0].type_index != kBool) return -2;
    ret->type_index = kBool;
    ret->v_int64 = !args[0].v_int64;
    return 0;
}

int __tvm_ffi_strlen(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 1 || args[0].type_index != kRawStr) return -2;
    ret->type_index = kInt;
    ret->v_int64 = (int64_t)strlen(args[0].v_c_str);
    return 0;
}

/* The sum of a 1-d float64 tensor. */
int __tvm_ffi_sum(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 1 || args[0].type_index != kDLTensorPtr) return -2;
    const DLTensor *t = args[0].v_ptr;
    if (t->ndim != 1 || t->dtype.code != 2 || t->dtype.bits != 64) return -3;
    const double *d = (const double *)((const char *)t->data + t->byte_offset);
    int64_t stride = t->strides ? t->strides[0] : 1;
    double s = 0;
    for (int64_t i = 0; i < t->shape[0]; i++) s += d[i * stride];
    ret->type_index = kFloat;
    ret->v_float64 = s;
    return 0;
}

/* Destination-passing style: writes `value` into every element of its first argument
 * (a 1-d float64 tensor), as tvm-ffi kernels write their outputs. */
int __tvm_ffi_fill(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self;
    if (n != 2 || args[0].type_index != kDLTensorPtr || args[1].type_index != kFloat) return -2;
    const DLTensor *t = args[0].v_ptr;
    if (t->ndim != 1 || t->dtype.code != 2 || t->dtype.bits != 64) return -3;
    double *d = (double *)((char *)t->data + t->byte_offset);
    int64_t stride = t->strides ? t->strides[0] : 1;
    for (int64_t i = 0; i < t->shape[0]; i++) d[i * stride] = args[1].v_float64;
    ret->type_index = kNone;
    return 0;
}

/* Returns a (fake) object: the host must refuse it. */
static int64_t fake_object[4];
int __tvm_ffi_make_object(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self; (void)args; (void)n;
    ret->type_index = 70;
    ret->v_ptr = fake_object;
    return 0;
}

int __tvm_ffi_fail(void *self, const TVMFFIAny *args, int32_t n, TVMFFIAny *ret) {
    (void)self; (void)args; (void)n; (void)ret;
    return -1;
}
