use object_core::ObjectEnum;

#[derive(ObjectEnum)]
#[repr(u128)]
#[object_enum(key = "", name = "Op")]
enum Op {
    #[object_enum(rename = "", alias = "plus")]
    Add,
    Sub,
}

fn main() {}
