//! Any text read as a rendered manifest (Kubernetes' YAML 1.1 rules): objects or an error, never
//! a panic; what it reads as prints, as YAML and inside a stream, back to the same objects.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(docs) = kudo_yaml::manifest::parse(std::path::Path::new("-"), text) else {
        return;
    };
    for doc in &docs {
        let yaml = kudo_yaml::manifest::to_yaml(doc);
        let back = kudo_yaml::manifest::parse(std::path::Path::new("-"), &yaml).unwrap();
        assert_eq!(back.as_slice(), std::slice::from_ref(doc), "{yaml}");
    }
    let objects: Vec<serde_json::Value> = docs.into_iter().filter(|d| !d.is_null()).collect();
    let printed = kudo_yaml::manifest::printable(text, &objects);
    let stream = format!("---\n{}", printed.text());
    let back: Vec<serde_json::Value> = kudo_yaml::manifest::parse(std::path::Path::new("-"), &stream)
        .unwrap()
        .into_iter()
        .filter(|d| !d.is_null())
        .collect();
    assert_eq!(back, objects, "{stream}");
});
