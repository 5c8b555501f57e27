//! 8 threads race on the first use of the registry and of 100 fresh types: every thread
//! must see one index per key. This binary holds only this test, so nothing touches the
//! registry before the race starts.

use std::sync::Barrier;

use object_core::{make_object, Object, ObjectType};

macro_rules! fresh_types {
    ($($name:ident = $key:literal),* $(,)?) => {
        $(
            #[derive(Object)]
            #[repr(C)]
            #[object(key = $key, slots = 1)]
            struct $name {
                base: Object,
            }
        )*
        /// Each type's key, index, and whether an object of it checks as itself.
        fn observe() -> Vec<(&'static str, u32, bool)> {
            vec![$(
                ($key, <$name as ObjectType>::type_index(),
                 make_object($name { base: Object::new() }).into_object_ref().is::<$name>()),
            )*]
        }
    };
}

fresh_types! {
    Fresh000 = "race.Fresh000",
    Fresh001 = "race.Fresh001",
    Fresh002 = "race.Fresh002",
    Fresh003 = "race.Fresh003",
    Fresh004 = "race.Fresh004",
    Fresh005 = "race.Fresh005",
    Fresh006 = "race.Fresh006",
    Fresh007 = "race.Fresh007",
    Fresh008 = "race.Fresh008",
    Fresh009 = "race.Fresh009",
    Fresh010 = "race.Fresh010",
    Fresh011 = "race.Fresh011",
    Fresh012 = "race.Fresh012",
    Fresh013 = "race.Fresh013",
    Fresh014 = "race.Fresh014",
    Fresh015 = "race.Fresh015",
    Fresh016 = "race.Fresh016",
    Fresh017 = "race.Fresh017",
    Fresh018 = "race.Fresh018",
    Fresh019 = "race.Fresh019",
    Fresh020 = "race.Fresh020",
    Fresh021 = "race.Fresh021",
    Fresh022 = "race.Fresh022",
    Fresh023 = "race.Fresh023",
    Fresh024 = "race.Fresh024",
    Fresh025 = "race.Fresh025",
    Fresh026 = "race.Fresh026",
    Fresh027 = "race.Fresh027",
    Fresh028 = "race.Fresh028",
    Fresh029 = "race.Fresh029",
    Fresh030 = "race.Fresh030",
    Fresh031 = "race.Fresh031",
    Fresh032 = "race.Fresh032",
    Fresh033 = "race.Fresh033",
    Fresh034 = "race.Fresh034",
    Fresh035 = "race.Fresh035",
    Fresh036 = "race.Fresh036",
    Fresh037 = "race.Fresh037",
    Fresh038 = "race.Fresh038",
    Fresh039 = "race.Fresh039",
    Fresh040 = "race.Fresh040",
    Fresh041 = "race.Fresh041",
    Fresh042 = "race.Fresh042",
    Fresh043 = "race.Fresh043",
    Fresh044 = "race.Fresh044",
    Fresh045 = "race.Fresh045",
    Fresh046 = "race.Fresh046",
    Fresh047 = "race.Fresh047",
    Fresh048 = "race.Fresh048",
    Fresh049 = "race.Fresh049",
    Fresh050 = "race.Fresh050",
    Fresh051 = "race.Fresh051",
    Fresh052 = "race.Fresh052",
    Fresh053 = "race.Fresh053",
    Fresh054 = "race.Fresh054",
    Fresh055 = "race.Fresh055",
    Fresh056 = "race.Fresh056",
    Fresh057 = "race.Fresh057",
    Fresh058 = "race.Fresh058",
    Fresh059 = "race.Fresh059",
    Fresh060 = "race.Fresh060",
    Fresh061 = "race.Fresh061",
    Fresh062 = "race.Fresh062",
    Fresh063 = "race.Fresh063",
    Fresh064 = "race.Fresh064",
    Fresh065 = "race.Fresh065",
    Fresh066 = "race.Fresh066",
    Fresh067 = "race.Fresh067",
    Fresh068 = "race.Fresh068",
    Fresh069 = "race.Fresh069",
    Fresh070 = "race.Fresh070",
    Fresh071 = "race.Fresh071",
    Fresh072 = "race.Fresh072",
    Fresh073 = "race.Fresh073",
    Fresh074 = "race.Fresh074",
    Fresh075 = "race.Fresh075",
    Fresh076 = "race.Fresh076",
    Fresh077 = "race.Fresh077",
    Fresh078 = "race.Fresh078",
    Fresh079 = "race.Fresh079",
    Fresh080 = "race.Fresh080",
    Fresh081 = "race.Fresh081",
    Fresh082 = "race.Fresh082",
    Fresh083 = "race.Fresh083",
    Fresh084 = "race.Fresh084",
    Fresh085 = "race.Fresh085",
    Fresh086 = "race.Fresh086",
    Fresh087 = "race.Fresh087",
    Fresh088 = "race.Fresh088",
    Fresh089 = "race.Fresh089",
    Fresh090 = "race.Fresh090",
    Fresh091 = "race.Fresh091",
    Fresh092 = "race.Fresh092",
    Fresh093 = "race.Fresh093",
    Fresh094 = "race.Fresh094",
    Fresh095 = "race.Fresh095",
    Fresh096 = "race.Fresh096",
    Fresh097 = "race.Fresh097",
    Fresh098 = "race.Fresh098",
    Fresh099 = "race.Fresh099"
}

#[test]
fn eight_threads_race_on_first_use() {
    // (Three under Miri, which runs every thread on one core, slowly.)
    const THREADS: usize = object_tests::native_or_miri(8, 3);
    let barrier = Barrier::new(THREADS);
    let seen: Vec<Vec<(&'static str, u32, bool)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    observe()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let first = &seen[0];
    assert_eq!(first.len(), 100);
    for other in &seen[1..] {
        assert_eq!(
            other, first,
            "every thread sees the same index for every key"
        );
    }
    let mut indices: Vec<u32> = first.iter().map(|t| t.1).collect();
    indices.sort_unstable();
    indices.dedup();
    assert_eq!(indices.len(), 100, "distinct keys get distinct indices");
    assert!(
        first.iter().all(|t| t.2),
        "each object checks as its own type"
    );
    for (key, index, _) in first {
        assert_eq!(object_core::registry::type_index_of(key), Ok(*index));
    }
}
