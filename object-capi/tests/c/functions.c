/* Functions from C: calling Rust functions, a C callback registered as a global and
 * called from Rust, modules, and reading reflected fields through the field table. */
#include "check.h"
#include <stdatomic.h>

int obj_fixtures_init(void);

typedef struct {
    int64_t offset;
    atomic_int calls;
} Ctx;

static atomic_int contexts_freed = 0;
static void free_ctx(void *ctx) {
    atomic_fetch_add(&contexts_freed, 1);
    free(ctx);
}

/* args: (int a, int b) -> a * b + ctx->offset; raises on a negative a. */
static int32_t c_mul(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    Ctx *c = ctx;
    atomic_fetch_add(&c->calls, 1);
    if (n != 2 || args[0].type_index != OBJ_KIND_INT || args[1].type_index != OBJ_KIND_INT)
        return obj_error_raise("TypeError", "c_mul takes two ints");
    if (args[0].v.v_int64 < 0) return obj_error_raise("ValueError", "negative");
    *ret = any_int(args[0].v.v_int64 * args[1].v.v_int64 + c->offset);
    return 0;
}

/* Returns a new string object: ownership passes to the caller. */
static int32_t c_greet(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    ObjStr name;
    if (n != 1 || obj_any_get_str(&args[0], &name) != 0) return -1; /* error already set */
    char buf[64];
    int len = snprintf(buf, sizeof buf, "hello %.*s", (int)name.len, name.data);
    ObjHandle s = NULL;
    if (obj_string_create(buf, (size_t)len, &s) != 0) return -1;
    *ret = any_obj(s);
    return 0;
}

static const ObjFieldInfo *field(const ObjFieldInfo *fields, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(fields[i].name.data, name) == 0) return &fields[i];
    return NULL;
}

int main(void) {
    OK(obj_fixtures_init());

    /* A Rust function, through the global registry. */
    ObjHandle add = NULL;
    OK(obj_global_get("fixtures.add", &add));
    CHECK(add != NULL && add->type_index == OBJ_TYPE_FUNCTION);
    ObjAny args[3] = {any_int(40), any_int(2)};
    ObjAny ret;
    OK(obj_function_call(add, args, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 42);
    /* And straight through the function cell (Rust-valid arguments only). */
    ObjFunctionCell *cell = (ObjFunctionCell *)add;
    ret.type_index = OBJ_KIND_NONE;
    CHECK(cell->call(cell, args, 2, &ret) == 0 && ret.v.v_int64 == 42);

    ObjHandle concat = NULL;
    OK(obj_global_get("fixtures.concat", &concat));
    args[0] = any_cstr("con");
    args[1] = any_cstr("catenated");
    OK(obj_function_call(concat, args, 2, &ret));
    ObjStr text;
    OK(obj_any_get_str(&ret, &text));
    CHECK(str_eq(text, "concatenated"));
    OK(obj_any_release(&ret));

    /* A C callback as a global, called from Rust (fixtures.call_global looks it up). */
    Ctx *ctx = calloc(1, sizeof *ctx);
    ctx->offset = 1;
    ObjHandle mul = NULL;
    OK(obj_function_create(c_mul, ctx, free_ctx, "c_mul", &mul));
    OK(obj_global_set("ctest.mul", mul, 0));
    FAILS(obj_global_set("ctest.mul", mul, 0), "KeyError", "ctest.mul");
    OK(obj_global_set("ctest.mul", mul, 1));
    ObjHandle call_global = NULL;
    OK(obj_global_get("fixtures.call_global", &call_global));
    args[0] = any_cstr("ctest.mul");
    args[1] = any_int(6);
    args[2] = any_int(7);
    OK(obj_function_call(call_global, args, 3, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 43);
    CHECK(atomic_load(&ctx->calls) == 1);
    /* Its error crosses Rust and comes back with frames. */
    args[1] = any_int(-1);
    CHECK(obj_function_call(call_global, args, 3, &ret) != 0);
    ObjHandle err = NULL;
    OK(obj_error_take(&err));
    CHECK(err != NULL);
    ObjStr kind, msg, frame;
    size_t nframes = 0;
    OK(obj_error_kind(err, &kind));
    OK(obj_error_message(err, &msg));
    OK(obj_error_num_frames(err, &nframes));
    CHECK(str_eq(kind, "ValueError") && str_eq(msg, "negative"));
    CHECK(nframes == 2);
    OK(obj_error_frame(err, 0, &frame));
    CHECK(str_eq(frame, "c_mul"));
    OK(obj_error_frame(err, 1, &frame));
    CHECK(str_eq(frame, "fixtures.call_global"));
    OK(obj_dec_ref(err));

    /* Listing and removing globals. */
    ObjHandle names = NULL;
    OK(obj_global_list(&names));
    size_t n = 0, seen = 0;
    OK(obj_array_size(names, &n));
    for (size_t i = 0; i < n; i++) {
        ObjAny nm;
        OK(obj_array_get(names, i, &nm));
        OK(obj_any_get_str(&nm, &text));
        if (str_eq(text, "ctest.mul")) seen++;
        OK(obj_any_release(&nm));
    }
    CHECK(seen == 1);
    OK(obj_dec_ref(names));
    int32_t removed = 0;
    OK(obj_global_remove("ctest.mul", &removed));
    CHECK(removed == 1);
    OK(obj_global_remove("ctest.mul", &removed));
    CHECK(removed == 0);
    ObjHandle none = (ObjHandle)1;
    OK(obj_global_get("ctest.mul", &none));
    CHECK(none == NULL);

    /* The one-call helpers: values, a C callback registered as a global, a call by
     * name, printing values and errors. */
    CHECK(obj_any_int(-5).type_index == OBJ_KIND_INT && obj_any_int(-5).v.v_int64 == -5);
    CHECK(obj_any_float(0.5).type_index == OBJ_KIND_FLOAT && obj_any_float(0.5).v.v_float64 == 0.5);
    CHECK(obj_any_bool(7).type_index == OBJ_KIND_BOOL && obj_any_bool(7).v.v_int64 == 1);
    CHECK(obj_any_bool(0).v.v_int64 == 0);
    CHECK(obj_any_str("x").type_index == OBJ_KIND_RAW_STR && obj_any_str("x").small == 0);
    Ctx *ctx2 = calloc(1, sizeof *ctx2);
    ctx2->offset = 100;
    int freed_before = atomic_load(&contexts_freed);
    OK(obj_global_def("ctest.mul2", c_mul, ctx2, free_ctx));
    ObjAny two[2] = {obj_any_int(6), obj_any_int(7)};
    OK(obj_global_call("ctest.mul2", two, 2, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 142);
    CHECK(atomic_load(&ctx2->calls) == 1);
    FAILS(obj_global_call("ctest.mul2", two, 1, &ret), "TypeError", "two ints");
    /* A taken name: refused, and the new context goes to its deleter at once. */
    Ctx *ctx3 = calloc(1, sizeof *ctx3);
    FAILS(obj_global_def("ctest.mul2", c_mul, ctx3, free_ctx), "KeyError", "ctest.mul2");
    CHECK(atomic_load(&contexts_freed) == freed_before + 1);
    FAILS(obj_global_def(NULL, c_mul, NULL, NULL), "ValueError", "name");
    FAILS(obj_global_def("ctest.nocall", NULL, NULL, NULL), "ValueError", "call");
    FAILS(obj_global_call("ctest.no_such_function", two, 2, &ret), "KeyError", "ctest.no_such_function");
    FAILS(obj_global_call(NULL, two, 2, &ret), "ValueError", "name");
    FAILS(obj_global_call("ctest.mul2", two, 2, NULL), "ValueError", "ret");
    ObjAny parts[2] = {obj_any_str("con"), obj_any_str("cat")};
    OK(obj_global_call("fixtures.concat", parts, 2, &ret));
    OK(obj_any_get_str(&ret, &text));
    CHECK(str_eq(text, "concat"));
    OK(obj_any_print(&ret));
    OK(obj_any_release(&ret));
    FAILS(obj_any_print(NULL), "ValueError", "value");
    CHECK(obj_error_print() == 0);
    CHECK(obj_global_call("ctest.no_such_function", two, 2, &ret) != 0);
    CHECK(obj_error_print() == 1);
    ObjHandle gone = (ObjHandle)1;
    OK(obj_error_take(&gone));
    CHECK(gone == NULL);
    OK(obj_global_remove("ctest.mul2", &removed));
    CHECK(removed == 1 && atomic_load(&contexts_freed) == freed_before + 2);

    /* A module of C functions. */
    ObjHandle greet = NULL, module = NULL, got = NULL;
    OK(obj_function_create(c_greet, NULL, NULL, "c_greet", &greet));
    const char *fn_names[2] = {"mul", "greet"};
    ObjHandle fns[2] = {mul, greet};
    OK(obj_module_create("ctest", fn_names, fns, 2, &module));
    OK(obj_module_get_function(module, "greet", 0, &got));
    CHECK(got == greet);
    args[0] = any_cstr("world");
    OK(obj_function_call(got, args, 1, &ret));
    OK(obj_any_get_str(&ret, &text));
    CHECK(str_eq(text, "hello world"));
    OK(obj_any_release(&ret));
    OK(obj_dec_ref(got));
    OK(obj_module_get_function(module, "nope", 1, &got));
    CHECK(got == NULL);
    /* Its listing (sorted) and its imports (none). */
    ObjHandle listed = NULL, imports = NULL;
    size_t count = 0;
    OK(obj_module_function_names(module, &listed));
    OK(obj_array_size(listed, &count));
    CHECK(count == 2);
    OK(obj_array_get(listed, 0, &ret));
    OK(obj_any_get_str(&ret, &text));
    CHECK(str_eq(text, "greet"));
    OK(obj_any_release(&ret));
    OK(obj_array_get(listed, 1, &ret));
    OK(obj_any_get_str(&ret, &text));
    CHECK(str_eq(text, "mul"));
    OK(obj_any_release(&ret));
    OK(obj_dec_ref(listed));
    OK(obj_module_imports(module, &imports));
    OK(obj_array_size(imports, &count));
    CHECK(count == 0);
    OK(obj_dec_ref(imports));
    FAILS(obj_module_function_names(greet, &listed), "TypeError", "module");
    OK(obj_dec_ref(module));
    OK(obj_dec_ref(greet));
    OK(obj_dec_ref(mul));
    CHECK(atomic_load(&contexts_freed) == freed_before + 3); /* the last reference ran the deleter */

    /* Reflection: a Rust object's fields read by name through the field table. */
    ObjHandle make_point = NULL;
    OK(obj_global_get("fixtures.make_point", &make_point));
    args[0] = any_int(5);
    args[1] = any_float(2.5);
    OK(obj_function_call(make_point, args, 2, &ret));
    ObjHandle pt = ret.v.v_obj;
    const ObjFieldInfo *fields = NULL;
    size_t nf = 0;
    OK(obj_type_fields(pt->type_index, &fields, &nf));
    CHECK(nf == 9);
    const char *base = (const char *)pt;
    const ObjFieldInfo *f;
    f = field(fields, nf, "id");
    CHECK(f && f->kind == OBJ_FIELD_KIND_INT && f->size == 4 && (f->flags & OBJ_FIELD_C_READABLE));
    if (f) CHECK(*(const int32_t *)(base + f->offset) == 7);
    f = field(fields, nf, "x");
    CHECK(f && f->size == 8 && f->static_type_index == OBJ_KIND_INT);
    if (f) CHECK(*(const int64_t *)(base + f->offset) == 5);
    f = field(fields, nf, "y");
    CHECK(f && f->kind == OBJ_FIELD_KIND_FLOAT && f->size == 8);
    if (f) CHECK(*(const double *)(base + f->offset) == 2.5);
    f = field(fields, nf, "visible");
    CHECK(f && f->kind == OBJ_FIELD_KIND_BOOL && f->size == 1);
    if (f) CHECK(*(const uint8_t *)(base + f->offset) == 1);
    f = field(fields, nf, "small");
    CHECK(f && f->size == 2 && strcmp(f->rust_type.data, "u16") == 0);
    if (f) CHECK(*(const uint16_t *)(base + f->offset) == 513);
    /* `object_core::String` fields are `ObjAny` cells: inline up to 7 bytes, else an
       `ffi.String` object; both NUL-terminated. */
    f = field(fields, nf, "label");
    CHECK(f && f->kind == OBJ_FIELD_KIND_STR && f->size == sizeof(ObjAny) &&
          (f->flags & OBJ_FIELD_C_READABLE) && (f->flags & OBJ_FIELD_ANY_LAYOUT));
    if (f) {
        const ObjAny *cell = (const ObjAny *)(base + f->offset);
        CHECK(cell->type_index == OBJ_KIND_SMALL_STR && cell->small == 1);
        CHECK(strcmp((const char *)cell->v.v_bytes, "p") == 0);
    }
    f = field(fields, nf, "title");
    CHECK(f && f->kind == OBJ_FIELD_KIND_STR && f->size == sizeof(ObjAny) &&
          (f->flags & OBJ_FIELD_C_READABLE));
    if (f) {
        const ObjAny *cell = (const ObjAny *)(base + f->offset);
        CHECK(cell->type_index == OBJ_TYPE_STRING);
        struct ObjStr s;
        OK(obj_string_get(cell->v.v_obj, &s));
        CHECK(str_eq(s, "a title too long to be inline") && s.data[s.len] == '\0');
    }
    f = field(fields, nf, "note");
    CHECK(f && f->kind == OBJ_FIELD_KIND_STR && f->size == 0 &&
          !(f->flags & OBJ_FIELD_C_READABLE) && !(f->flags & OBJ_FIELD_ANY_LAYOUT));
    f = field(fields, nf, "next");
    CHECK(f && f->kind == OBJ_FIELD_KIND_OBJECT && (f->flags & OBJ_FIELD_OPTIONAL) &&
          f->size == 8 && strcmp(f->static_type_key.data, "fixtures.Point") == 0);
    if (f) {
        const ObjObjectHeader *next = *(ObjObjectHeader *const *)(base + f->offset);
        CHECK(next != NULL && next->type_index == pt->type_index);
        const ObjFieldInfo *fx = field(fields, nf, "x");
        if (next && fx) CHECK(*(const int64_t *)((const char *)next + fx->offset) == 6);
        const ObjObjectHeader *end = next ? *(ObjObjectHeader *const *)((const char *)next + f->offset) : NULL;
        CHECK(end == NULL);
    }
    /* Enum fields: the descriptor names the variants; one of an integer `repr` is read
       in place (2 bytes, signed), the others through Rust, as their integer value. */
    ObjHandle make_heading = NULL;
    OK(obj_global_get("fixtures.make_heading", &make_heading));
    ObjAny hret;
    OK(obj_function_call(make_heading, NULL, 0, &hret));
    ObjHandle hd = hret.v.v_obj;
    const ObjFieldInfo *hfields = NULL;
    size_t nh = 0;
    OK(obj_type_fields(hd->type_index, &hfields, &nh));
    CHECK(nh == 3);
    const ObjFieldInfo *dir = field(hfields, nh, "direction");
    CHECK(dir && dir->kind == OBJ_FIELD_KIND_ENUM && dir->size == 2 &&
          (dir->flags & OBJ_FIELD_C_READABLE) && dir->static_type_index == OBJ_KIND_INT &&
          strcmp(dir->static_type_key.data, "fixtures.Direction") == 0);
    const ObjEnumInfo *dinfo = NULL;
    OK(obj_type_field_enum(hd->type_index, (size_t)(dir - hfields), &dinfo));
    CHECK(dinfo && str_eq(dinfo->key, "fixtures.Direction") && dinfo->num_variants == 3 &&
          dinfo->size == 2 && dinfo->is_signed == 1);
    if (dinfo && dinfo->num_variants == 3) {
        CHECK(str_eq(dinfo->variants[0].name, "West") && dinfo->variants[0].value == -90);
        CHECK(str_eq(dinfo->variants[2].name, "east") && dinfo->variants[2].value == 90);
    }
    if (dir) {
        /* Read in place and named through the descriptor. */
        int64_t v = *(const int16_t *)((const char *)hd + dir->offset);
        CHECK(v == -90);
        const char *name = NULL;
        for (size_t k = 0; dinfo && k < dinfo->num_variants; k++)
            if (dinfo->variants[k].value == v) name = dinfo->variants[k].name.data;
        CHECK(name && strcmp(name, "West") == 0);
    }
    const ObjFieldInfo *mode = field(hfields, nh, "mode");
    CHECK(mode && mode->kind == OBJ_FIELD_KIND_ENUM && mode->size == 0 &&
          !(mode->flags & OBJ_FIELD_C_READABLE));
    const ObjEnumInfo *minfo = NULL;
    OK(obj_type_field_enum(hd->type_index, (size_t)(mode - hfields), &minfo));
    CHECK(minfo && minfo->size == 0 && minfo->num_variants == 2 &&
          str_eq(minfo->variants[1].name, "Safe"));
    ObjAny mv;
    OK(obj_object_get_attr(hd, "mode", &mv));
    CHECK(mv.type_index == OBJ_KIND_INT && mv.v.v_int64 == 1);
    const ObjFieldInfo *turn = field(hfields, nh, "turn");
    CHECK(turn && turn->kind == OBJ_FIELD_KIND_ENUM && (turn->flags & OBJ_FIELD_OPTIONAL) &&
          turn->size == 0 && !(turn->flags & OBJ_FIELD_C_READABLE));
    OK(obj_object_get_attr(hd, "turn", &mv));
    CHECK(mv.type_index == OBJ_KIND_INT && mv.v.v_int64 == 90);
    /* Not an enum, past the table, no such type: errors, nothing written. */
    const ObjEnumInfo *no_info = NULL;
    FAILS(obj_type_field_enum(pt->type_index, 0, &no_info), "TypeError", "field `id` of `fixtures.Point` is not an enum");
    FAILS(obj_type_field_enum(hd->type_index, 99, &no_info), "IndexError", "has 3 fields");
    FAILS(obj_type_field_enum(UINT32_MAX, 0, &no_info), "KeyError", "no type has index");
    CHECK(no_info == NULL);
    OK(obj_any_release(&hret));
    OK(obj_dec_ref(make_heading));

    /* The fields C cannot read in place, through Rust. */
    ObjAny label;
    OK(obj_object_get_attr(pt, "note", &label));
    OK(obj_any_get_str(&label, &text));
    CHECK(str_eq(text, "p"));
    OK(obj_any_release(&label));
    OK(obj_any_release(&ret));

    OK(obj_dec_ref(make_point));
    OK(obj_dec_ref(call_global));
    OK(obj_dec_ref(concat));
    OK(obj_dec_ref(add));
    return finish("functions");
}
