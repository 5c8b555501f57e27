use object_core::ObjectEnum;

#[derive(ObjectEnum)]
#[object_enum(key = "test.Op")]
enum Op {
    Add,
    #[object_enum(rename = "Add")]
    Plus,
    Sub,
}

fn main() {}
