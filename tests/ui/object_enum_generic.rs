use object_core::ObjectEnum;

#[derive(ObjectEnum)]
enum Tagged<T> {
    A,
    B,
    #[allow(dead_code)]
    Never(std::marker::PhantomData<T>),
}

fn main() {}
