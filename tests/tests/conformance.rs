//! The standards the parameters engine implements, from their own examples:
//! RFC 7396 Appendix A through the `-P` path, RFC 6901 section 5 through the pointer parser.

use std::path::Path;

use kudo_pkg::document::Document;
use kudo_pkg::values::Values;
use kudo_pkg::{Origin, pointer};
use serde_json::Value;

fn cases(file: &str) -> Value {
    let path = kudo_tests::shared().join("conformance").join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn rfc7396_appendix_a_through_values_files() {
    let data = cases("rfc7396-appendix-a.json");
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 15);
    for (i, c) in cases.iter().enumerate() {
        // The patch is written to a values file (JSON is YAML) and read the way -P reads it.
        let doc = Document::parse(Path::new("patch.yaml"), &c["patch"].to_string()).unwrap();
        let mut values = Values::new(c["original"].clone(), Origin::Instance);
        if doc.value().is_null() {
            // An empty -P file changes nothing; RFC 7396's null patch (case 11) is the merge itself.
            values.merge(doc.value(), Some(&doc));
        } else {
            values.merge_file(&doc);
        }
        assert_eq!(values.value(), &c["result"], "case {}: {c}", i + 1);
    }
}

#[test]
fn an_empty_values_file_changes_nothing() {
    let doc = Document::parse(Path::new("empty.yaml"), "# nothing here\n").unwrap();
    let mut values = Values::new(serde_json::json!({"a": 1}), Origin::Instance);
    values.merge_file(&doc);
    assert_eq!(values.value(), &serde_json::json!({"a": 1}));
}

#[test]
fn rfc6901_section_5_through_the_pointer_parser() {
    let data = cases("rfc6901-section-5.json");
    let doc = &data["document"];
    let cases = data["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 12);
    for c in cases {
        let p = c["pointer"].as_str().unwrap();
        let tokens = pointer::tokens(p).unwrap();
        // Walk with our decoded tokens, not with serde_json's own pointer support.
        let mut at = doc;
        for t in &tokens {
            at = match at {
                Value::Object(m) => &m[t.as_str()],
                Value::Array(a) => &a[t.parse::<usize>().unwrap()],
                _ => panic!("{p}: walked into a scalar"),
            };
        }
        assert_eq!(at, &c["value"], "pointer {p:?}");
        // and back: encoding the tokens gives the same pointer
        assert_eq!(pointer::from_tokens(&tokens), p);
    }
}
