#include "object_capi.h"
static int32_t add(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) { /* a C callback */
    (void)ctx; if (n != 2) return obj_error_raise("TypeError", "add takes two ints");
    *ret = obj_any_int(args[0].v.v_int64 + args[1].v.v_int64); return 0;
}
int main(void) { /* registers `add` as a global function, calls it by name, prints 42 */
    ObjAny args[2] = {obj_any_int(40), obj_any_int(2)}, ret;
    if (obj_global_def("demo.add", add, NULL, NULL) || obj_global_call("demo.add", args, 2, &ret)) return obj_error_print();
    return obj_any_print(&ret) ? obj_error_print() : 0;
}
