#include <stdio.h>
#include "object_capi.h"

int main(void) {
    ObjHandle s = NULL, err = NULL;
    ObjStr text;
    if (obj_string_create("hello from C", 12, &s) != 0) return 1;
    obj_string_get(s, &text);
    printf("%.*s (type %u)\n", (int)text.len, text.data, s->type_index);
    obj_dec_ref(s);
    if (obj_string_create(NULL, 1, &s) != 0 && obj_error_take(&err) == 0) {
        obj_error_message(err, &text);
        printf("error: %.*s\n", (int)text.len, text.data);
        obj_dec_ref(err);
    }
    return 0;
}
