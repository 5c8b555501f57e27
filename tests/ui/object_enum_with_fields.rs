use object_core::ObjectEnum;

#[derive(ObjectEnum)]
enum Shape {
    Empty,
    Circle(f64),
    Rect { w: f64, h: f64 },
}

fn main() {}
