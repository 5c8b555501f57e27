use object_core::ObjectEnum;

#[derive(ObjectEnum)]
struct NotAnEnum {
    value: i64,
}

fn main() {}
