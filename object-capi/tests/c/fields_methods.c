/* Types with fields defined from C (obj_type_register_fields), objects made by key
 * (obj_object_create) and read in place through the field table, and the per-type method
 * table (obj_method_set, obj_method_get, obj_object_call_method): C callbacks and a Rust
 * method, found along the ancestry. */
#include "check.h"
#include <stdatomic.h>

int obj_fixtures_init(void);

static const ObjFieldInfo *field(const ObjFieldInfo *rows, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (str_eq(rows[i].name, name)) return &rows[i];
    return NULL;
}

/* A method of fixtures.Shape, written in C: the object's `id` plus its argument. */
static atomic_int describe_calls = 0;
static int32_t shape_plus(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    atomic_fetch_add(&describe_calls, 1);
    if (n != 2 || args[0].type_index < OBJ_TYPE_OBJECT || args[1].type_index != OBJ_KIND_INT)
        return obj_error_raise("TypeError", "plus(self, int)");
    ObjAny id;
    if (obj_object_get_attr(args[0].v.v_obj, "id", &id)) return -1;
    *ret = obj_any_int(id.v.v_int64 + args[1].v.v_int64);
    return 0;
}

/* A static method of ctest.Note, written in C: a note of `count` from its argument. */
static uint32_t note_type = 0;
static int32_t note_make(void *ctx, const ObjAny *args, int32_t n, ObjAny *ret) {
    (void)ctx;
    if (n != 1) return obj_error_raise("TypeError", "make(count)");
    const char *names[] = {"id", "text", "count", "payload"};
    ObjAny values[] = {obj_any_int(1), obj_any_str("made"), args[0], obj_any_bool(1)};
    ObjHandle made = NULL;
    if (obj_object_create(note_type, names, values, 4, &made)) return -1;
    *ret = any_obj(made); /* our reference goes to the caller */
    return 0;
}

int main(void) {
    OK(obj_fixtures_init());
    uint32_t shape = 0, point = 0;
    OK(obj_type_index_of("fixtures.Shape", &shape));
    OK(obj_type_index_of("fixtures.Point", &point));

    /* A type with fields under the Rust type fixtures.Shape (whose `id` it keeps). */
    ObjFieldSpec fields[5];
    memset(fields, 0, sizeof fields);
    fields[0].name = "text";
    fields[0].kind = OBJ_FIELD_KIND_STR;
    fields[1].name = "count";
    fields[1].kind = OBJ_FIELD_KIND_INT;
    fields[1].flags = OBJ_FIELD_HAS_DEFAULT;
    fields[1].default_value = obj_any_int(3);
    fields[2].name = "weight";
    fields[2].kind = OBJ_FIELD_KIND_FLOAT;
    fields[2].flags = OBJ_FIELD_OPTIONAL;
    fields[3].name = "next";
    fields[3].kind = OBJ_FIELD_KIND_OBJECT;
    fields[3].type_key = "ctest.Note";
    fields[3].flags = OBJ_FIELD_OPTIONAL;
    fields[4].name = "payload";
    fields[4].kind = OBJ_FIELD_KIND_ANY;
    uint32_t note = 0, again = 0;
    OK(obj_type_register_fields("ctest.Note", "fixtures.Shape", fields, 5, 0, 2, &note));
    OK(obj_type_register_fields("ctest.Note", "fixtures.Shape", fields, 5, 0, 2, &again));
    CHECK(note == again && note != 0);
    note_type = note;
    /* Registered again differently: refused, naming both. */
    fields[1].default_value = obj_any_int(4);
    FAILS(obj_type_register_fields("ctest.Note", "fixtures.Shape", fields, 5, 0, 2, &again),
          "RegistryError", "already registered");
    fields[1].default_value = obj_any_int(3);
    /* Bad declarations. */
    ObjFieldSpec bad;
    memset(&bad, 0, sizeof bad);
    bad.name = "o";
    bad.kind = OBJ_FIELD_KIND_OBJECT;
    bad.type_key = "ctest.Nowhere";
    FAILS(obj_type_register_fields("ctest.Bad", "ffi.Object", &bad, 1, 0, 0, &again),
          "RegistryError", "ctest.Nowhere");
    bad.kind = OBJ_FIELD_KIND_INT;
    bad.flags = OBJ_FIELD_HAS_DEFAULT;
    bad.default_value = obj_any_str("x");
    FAILS(obj_type_register_fields("ctest.Bad", "ffi.Object", &bad, 1, 0, 0, &again),
          "RegistryError", "default");
    bad.kind = 99;
    FAILS(obj_type_register_fields("ctest.Bad", "ffi.Object", &bad, 1, 0, 0, &again), "TypeError",
          "kind 99");
    FAILS(obj_type_register_fields("ctest.Bad", "ffi.Array", NULL, 0, 0, 0, &again),
          "RegistryError", "built-in");

    /* The field table: Shape's `id`, then the run-time fields, C-readable in place. */
    const ObjFieldInfo *rows = NULL;
    size_t n = 0;
    OK(obj_type_fields(note, &rows, &n));
    CHECK(n == 6);
    CHECK(str_eq(rows[0].name, "id") && str_eq(rows[1].name, "text"));
    const ObjFieldInfo *id = field(rows, n, "id"), *text = field(rows, n, "text"),
                       *count = field(rows, n, "count"), *weight = field(rows, n, "weight"),
                       *next = field(rows, n, "next"), *payload = field(rows, n, "payload");
    CHECK(id && text && count && weight && next && payload);
    CHECK(count->kind == OBJ_FIELD_KIND_INT && count->size == 8 &&
          (count->flags & OBJ_FIELD_C_READABLE) && (count->flags & OBJ_FIELD_HAS_DEFAULT));
    CHECK(text->kind == OBJ_FIELD_KIND_STR && text->size == 16 && (text->flags & OBJ_FIELD_ANY_LAYOUT));
    CHECK(weight->kind == OBJ_FIELD_KIND_FLOAT && (weight->flags & OBJ_FIELD_OPTIONAL) &&
          (weight->flags & OBJ_FIELD_ANY_LAYOUT) && weight->size == 16);
    CHECK(next->kind == OBJ_FIELD_KIND_OBJECT && next->size == 8 && next->static_type_index == note);
    CHECK(payload->kind == OBJ_FIELD_KIND_ANY && payload->size == 16);
    CHECK(text->offset > id->offset && count->offset > text->offset);
    ObjTypeLayout layout;
    OK(obj_type_layout(note, &layout));
    CHECK(layout.owner == OBJ_LAYOUT_FIELDS && layout.rust_index == shape);
    CHECK(layout.object_size >= payload->offset + 16);

    /* Objects by key; the inherited `id` and the cells read in place. */
    const char *names[] = {"id", "text", "weight", "payload"};
    ObjAny values[] = {obj_any_int(9), obj_any_str("a text too long to be inline"), obj_any_float(0.5),
                       obj_any_int(42)};
    ObjHandle a = NULL;
    OK(obj_object_create(note, names, values, 4, &a));
    const char *b = (const char *)a;
    CHECK(*(const int32_t *)(b + id->offset) == 9);
    CHECK(*(const int64_t *)(b + count->offset) == 3); /* the default */
    CHECK(*(ObjHandle const *)(b + next->offset) == NULL);
    const ObjAny *t = (const ObjAny *)(b + text->offset);
    CHECK(t->type_index == OBJ_TYPE_STRING);
    const ObjAny *w = (const ObjAny *)(b + weight->offset);
    CHECK(w->type_index == OBJ_KIND_FLOAT && w->v.v_float64 == 0.5);
    const ObjAny *pl = (const ObjAny *)(b + payload->offset);
    CHECK(pl->type_index == OBJ_KIND_INT && pl->v.v_int64 == 42);
    ObjAny got;
    OK(obj_object_get_attr(a, "text", &got));
    ObjStr s;
    OK(obj_any_get_str(&got, &s));
    CHECK(str_eq(s, "a text too long to be inline"));
    OK(obj_any_release(&got));
    int32_t yes = 0;
    OK(obj_is_instance(a, shape, &yes));
    CHECK(yes == 1);

    /* A second one pointing at the first. */
    const char *names2[] = {"id", "text", "next", "payload", "count"};
    ObjAny values2[] = {obj_any_int(1), obj_any_str("b"), any_obj(a), obj_any_int(0), obj_any_int(8)};
    ObjHandle c = NULL;
    OK(obj_object_create(note, names2, values2, 5, &c));
    CHECK(*(ObjHandle const *)((const char *)c + next->offset) == a);
    CHECK(*(const int64_t *)((const char *)c + count->offset) == 8);

    /* Errors name the field; nothing is written. */
    ObjHandle none = NULL;
    ObjAny wrong[] = {obj_any_int(1), obj_any_int(5), obj_any_int(0), obj_any_int(0)};
    FAILS(obj_object_create(note, names, wrong, 4, &none), "TypeError", "field `text`");
    FAILS(obj_object_create(note, names, values, 2, &none), "ValueError", "missing field `payload`");
    const char *names3[] = {"id", "text", "payload", "next"};
    ObjAny values3[] = {obj_any_int(1), obj_any_str("b"), obj_any_int(0), obj_any_int(3)};
    FAILS(obj_object_create(note, names3, values3, 4, &none), "TypeError", "ctest.Note");
    FAILS(obj_object_create(12345, NULL, NULL, 0, &none), "KeyError", "12345");
    CHECK(none == NULL);
    /* C cannot lay out objects of a type with a run-time table. */
    ObjObjectHeader *raw = calloc(1, 256);
    FAILS(obj_object_init(raw, 256, note, NULL), "TypeError", "run-time field table");
    free(raw);

    /* The JSON graph: saved and loaded back, equal as printed. */
    ObjAny cv = any_obj(c);
    ObjHandle json = NULL;
    OK(obj_json_save(&cv, &json));
    ObjStr jtext;
    ObjAny jv = any_obj(json);
    OK(obj_any_get_str(&jv, &jtext));
    CHECK(strstr(jtext.data, "\"type\":\"ctest.Note\"") != NULL);
    ObjAny back;
    OK(obj_json_load(jtext.data, jtext.len, &back));
    CHECK(back.type_index == note);
    ObjAny bc;
    OK(obj_object_get_attr(back.v.v_obj, "next", &bc));
    CHECK(bc.type_index == note);
    ObjAny bcount;
    OK(obj_object_get_attr(bc.v.v_obj, "count", &bcount));
    CHECK(bcount.type_index == OBJ_KIND_INT && bcount.v.v_int64 == 3);
    OK(obj_any_release(&bc));
    OK(obj_any_release(&back));
    OK(obj_dec_ref(json));

    /* Methods: a C callback on the Rust base type, found for the run-time subtype. */
    ObjHandle plus = NULL;
    OK(obj_function_create(shape_plus, NULL, NULL, "Shape.plus", &plus));
    OK(obj_method_set(shape, "plus", plus, OBJ_METHOD_INSTANCE, 0));
    FAILS(obj_method_set(shape, "plus", plus, OBJ_METHOD_INSTANCE, 0), "KeyError", "already has");
    FAILS(obj_method_set(shape, "plus", plus, 7, 1), "ValueError", "method kind 7");
    OK(obj_dec_ref(plus)); /* the table holds its own */
    ObjAny arg = obj_any_int(100), ret;
    OK(obj_object_call_method(a, "plus", &arg, 1, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 109);
    CHECK(atomic_load(&describe_calls) == 1);
    ObjHandle found = NULL;
    int32_t kind = -1;
    OK(obj_method_get(note, "plus", &found, &kind));
    CHECK(found != NULL && kind == OBJ_METHOD_INSTANCE);
    ObjAny pair[2] = {any_obj(c), obj_any_int(1)};
    OK(obj_function_call(found, pair, 2, &ret));
    CHECK(ret.v.v_int64 == 2);
    OK(obj_dec_ref(found));
    OK(obj_method_get(note, "nope", &found, NULL));
    CHECK(found == NULL);
    FAILS(obj_object_call_method(a, "nope", NULL, 0, &ret), "AttributeError", "ctest.Note");
    /* The method's own error comes back with its kind. */
    FAILS(obj_object_call_method(a, "plus", NULL, 0, &ret), "TypeError", "plus(self, int)");

    /* A static method (a named constructor), through the type and through an object. */
    ObjHandle make = NULL;
    OK(obj_function_create(note_make, NULL, NULL, "Note.make", &make));
    OK(obj_method_set(note, "make", make, OBJ_METHOD_STATIC, 0));
    OK(obj_dec_ref(make));
    OK(obj_method_get(note, "make", &found, &kind));
    CHECK(kind == OBJ_METHOD_STATIC);
    ObjAny five = obj_any_int(5);
    OK(obj_function_call(found, &five, 1, &ret));
    CHECK(ret.type_index == note);
    ObjAny mc;
    OK(obj_object_get_attr(ret.v.v_obj, "count", &mc));
    CHECK(mc.v.v_int64 == 5);
    OK(obj_any_release(&ret));
    OK(obj_dec_ref(found));
    OK(obj_object_call_method(c, "make", &five, 1, &ret));
    CHECK(ret.type_index == note);
    OK(obj_any_release(&ret));

    /* A Rust method (fixtures.Point.manhattan), called from C on a Rust object. */
    ObjAny xy[2] = {obj_any_int(-3), obj_any_float(4.0)}, pt;
    OK(obj_global_call("fixtures.make_point", xy, 2, &pt));
    OK(obj_object_call_method(pt.v.v_obj, "manhattan", NULL, 0, &ret));
    CHECK(ret.type_index == OBJ_KIND_INT && ret.v.v_int64 == 7);
    OK(obj_method_get(point, "plus", &found, &kind)); /* the base's C method, for a Point */
    CHECK(found != NULL);
    OK(obj_object_call_method(pt.v.v_obj, "plus", &arg, 1, &ret));
    CHECK(ret.v.v_int64 == 107); /* a fixture point's id is 7 */
    OK(obj_dec_ref(found));
    OK(obj_any_release(&pt));

    OK(obj_dec_ref(c));
    OK(obj_dec_ref(a));
    return finish("fields_methods");
}
