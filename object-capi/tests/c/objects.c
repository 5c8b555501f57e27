/* Objects from C: counting, types, run-time registration, a C-defined object type,
 * strings and bytes, arrays and maps, Any helpers, the JSON graph. */
#include "check.h"
#include <stdatomic.h>

int obj_fixtures_init(void);

/* A C object type: a subtype of the Rust type fixtures.Shape (its layout starts with
 * ShapeNode's: the header, then an int32 id). */
typedef struct {
    ObjObjectHeader header;
    int32_t id;
    int32_t sides;
} CPolygon;

static atomic_int polygons_freed = 0;
static void free_polygon(ObjObjectHeader *obj) {
    atomic_fetch_add(&polygons_freed, 1);
    free(obj);
}

int main(void) {
    OK(obj_fixtures_init());

    /* Type lookups. */
    uint32_t shape = 0, point = 0, object = 0;
    OK(obj_type_index_of("fixtures.Shape", &shape));
    OK(obj_type_index_of("fixtures.Point", &point));
    OK(obj_type_index_of("ffi.Object", &object));
    CHECK(object == OBJ_TYPE_OBJECT);
    CHECK(shape >= 128 && point > shape);
    ObjStr key;
    OK(obj_type_key_of(point, &key));
    CHECK(str_eq(key, "fixtures.Point") && key.data[key.len] == '\0');
    ObjTypeInfo info;
    OK(obj_type_info(point, &info));
    CHECK(info.index == point && info.parent_index == shape && info.depth == 2);
    CHECK(info.num_ancestors == 3 && info.ancestors[0] == OBJ_TYPE_OBJECT &&
          info.ancestors[1] == shape && info.ancestors[2] == point);
    OK(obj_type_info(shape, &info));
    CHECK(info.range_begin == shape && info.range_end > point && info.slots == 4);
    CHECK(info.is_object == 1 && info.is_final == 0);
    OK(obj_type_info(OBJ_KIND_INT, &info));
    CHECK(info.is_object == 0 && str_eq(info.key, "int"));

    /* Run-time registration, idempotent; and a C object of that type. */
    uint32_t poly = 0, again = 0;
    OK(obj_type_register("ctest.Polygon", "fixtures.Shape", 0, 1, 1, &poly));
    OK(obj_type_register("ctest.Polygon", "fixtures.Shape", 0, 1, 1, &again));
    CHECK(poly == again);
    OK(obj_type_info(poly, &info));
    CHECK(info.parent_index == shape && info.is_final == 1);

    CPolygon *p = malloc(sizeof *p);
    OK(obj_object_init(&p->header, sizeof *p, poly, free_polygon));
    p->id = 3;
    p->sides = 5;
    ObjHandle h = &p->header;
    int32_t yes = -1;
    OK(obj_is_instance(h, shape, &yes));
    CHECK(yes == 1);
    OK(obj_is_instance(h, point, &yes));
    CHECK(yes == 0);
    OK(obj_is_instance(h, OBJ_TYPE_OBJECT, &yes));
    CHECK(yes == 1);
    OK(obj_object_type_key(h, &key));
    CHECK(str_eq(key, "ctest.Polygon"));
    /* Rust reads the inherited field through the parent's reflection. */
    ObjAny id;
    OK(obj_object_get_attr(h, "id", &id));
    CHECK(id.type_index == OBJ_KIND_INT && id.v.v_int64 == 3);
    OK(obj_inc_ref(h));
    CHECK(h->ref_count == 2);
    OK(obj_dec_ref(h));
    CHECK(atomic_load(&polygons_freed) == 0);
    /* Held by an array, the C object outlives our reference. */
    ObjAny item = any_obj(h);
    ObjHandle arr = NULL;
    OK(obj_array_create(&item, 1, &arr));
    OK(obj_dec_ref(h));
    CHECK(atomic_load(&polygons_freed) == 0);
    OK(obj_dec_ref(arr));
    CHECK(atomic_load(&polygons_freed) == 1);

    /* Strings and bytes. */
    ObjHandle s = NULL, b = NULL;
    OK(obj_string_create("hello, objects", 14, &s));
    CHECK(s->type_index == OBJ_TYPE_STRING);
    ObjStr text;
    OK(obj_string_get(s, &text));
    CHECK(str_eq(text, "hello, objects"));
    OK(obj_bytes_create("\0\1\2", 3, &b));
    OK(obj_bytes_get(b, &text));
    CHECK(text.len == 3 && text.data[2] == 2);

    /* Any helpers: inline and object strings. */
    ObjAny small, copy;
    OK(obj_any_from_str("tiny", 4, &small));
    CHECK(small.type_index == OBJ_KIND_SMALL_STR);
    OK(obj_any_get_str(&small, &text));
    CHECK(str_eq(text, "tiny"));
    ObjAny so = any_obj(s);
    OK(obj_any_copy(&so, &copy));
    CHECK(copy.v.v_obj == s && s->ref_count == 2);
    OK(obj_any_type_key(&copy, &key));
    CHECK(str_eq(key, "ffi.String"));
    OK(obj_any_release(&copy));
    CHECK(copy.type_index == OBJ_KIND_NONE && s->ref_count == 1);
    ObjAny raw = any_cstr("raw text");
    OK(obj_any_copy(&raw, &copy));
    OK(obj_any_get_str(&copy, &text));
    CHECK(str_eq(text, "raw text"));
    OK(obj_any_release(&copy));

    /* Arrays and maps. */
    ObjAny items[3] = {any_int(1), any_cstr("two"), any_obj(s)};
    OK(obj_array_create(items, 3, &arr));
    size_t n = 0;
    OK(obj_array_size(arr, &n));
    CHECK(n == 3);
    ObjAny got;
    OK(obj_array_get(arr, 1, &got));
    OK(obj_any_get_str(&got, &text));
    CHECK(str_eq(text, "two"));
    OK(obj_any_release(&got));
    OK(obj_array_get(arr, 2, &got));
    CHECK(got.v.v_obj == s);
    OK(obj_any_release(&got));

    ObjAny keys[2] = {any_cstr("a"), any_cstr("b")};
    ObjAny vals[2] = {any_int(10), any_obj(arr)};
    ObjHandle map = NULL;
    OK(obj_map_create(keys, vals, 2, &map));
    OK(obj_map_size(map, &n));
    CHECK(n == 2);
    int32_t found = 0;
    OK(obj_map_get(map, &keys[0], &got, &found));
    CHECK(found == 1 && got.type_index == OBJ_KIND_INT && got.v.v_int64 == 10);
    ObjAny missing = any_cstr("zzz");
    OK(obj_map_get(map, &missing, &got, &found));
    CHECK(found == 0 && got.type_index == OBJ_KIND_NONE);

    /* The JSON graph: save the map, load it back. */
    ObjAny mv = any_obj(map);
    ObjHandle json = NULL;
    OK(obj_json_save(&mv, &json));
    OK(obj_string_get(json, &text));
    CHECK(strstr(text.data, "ffi.Map") != NULL);
    ObjAny loaded;
    OK(obj_json_load(text.data, text.len, &loaded));
    CHECK(loaded.type_index == OBJ_TYPE_MAP);
    OK(obj_map_get(loaded.v.v_obj, &keys[1], &got, &found));
    CHECK(found == 1 && got.type_index == OBJ_TYPE_ARRAY);
    OK(obj_array_size(got.v.v_obj, &n));
    CHECK(n == 3);
    OK(obj_any_release(&got));
    OK(obj_any_release(&loaded));

    OK(obj_dec_ref(json));
    OK(obj_dec_ref(map));
    OK(obj_dec_ref(arr));
    OK(obj_dec_ref(s));
    OK(obj_dec_ref(b));
    return finish("objects");
}
