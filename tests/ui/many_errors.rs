use object_core::Object;

#[derive(Object)]
#[object(key = "test.Many", abc = 1, final, slots = 2)]
struct Many {
    #[object(skip)]
    base: Object,
}

fn main() {}
