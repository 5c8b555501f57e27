//! `MapObj` and `ErrorObj` were `Clone`, so a copy of one (say, of a map holding
//! integers) could be written over a live object of the same type (a map typed to hold
//! handles). Library object structs are not `Clone`.

use object_containers::{Error, ErrorObj, Map, MapObj, String};

fn main() {
    let ints: Map<String, i64> = Map::new();
    let _copy: MapObj = MapObj::clone(ints.as_object_ptr());
    let e = Error::type_error("x");
    let _copy: ErrorObj = ErrorObj::clone(e.as_object_ptr());
}
