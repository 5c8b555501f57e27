// A `std::string::String` as a container's item: the object `String` is meant.
use object_containers::{Array, Map};

fn main() {
    let names: Array<std::string::String> = Array::new();
    let mut m: Map<std::string::String, i64> = Map::new();
    let _ = (names, &mut m);
}
