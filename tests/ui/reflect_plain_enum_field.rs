use object_core::Object;

/// An enum without `#[derive(ObjectEnum)]`.
enum Color {
    Red,
    Green,
}

#[derive(Object)]
#[repr(C)]
#[object(key = "test.PlainEnumField")]
struct Pixel {
    base: Object,
    color: Color,
}

fn main() {
    let _ = (Color::Red, Color::Green);
}
