use object_core::Object;

#[derive(Object)]
#[repr(C)]
#[object(key = "test.Enum")]
enum NotAStruct {
    A,
    B,
}

fn main() {
    let _ = (NotAStruct::A, NotAStruct::B);
}
