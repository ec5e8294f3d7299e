//! The standards the parameters engine implements, from their own examples:
//! RFC 7396 Appendix A through the `-P` path, RFC 6901 section 5 through the pointer parser.
//! The examples are the project's own case tables (`tests/fixtures/conformance/`); the spec's
//! copies, when present beside the repository, must hold the same cases.

use std::path::Path;

use kudo_diag::{Origin, pointer};
use kudo_policy::values::Values;
use kudo_yaml::document::Document;
use serde_json::Value;

fn cases(file: &str) -> Value {
    let path = kudo_testkit::fixture("conformance").join(file);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn the_specs_copies_of_the_examples_are_the_same_cases() {
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    for file in ["rfc7396-appendix-a.json", "rfc6901-section-5.json"] {
        let path = shared.join("conformance").join(file);
        let theirs: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let ours = cases(file);
        assert_eq!(ours["cases"], theirs["cases"], "{file}");
        assert_eq!(ours["document"], theirs["document"], "{file}");
    }
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

/// The spec's captures of kube-apiserver's reviews (`shared/wire/`, made by another webhook),
/// when present: kudo answers each conversion with a reply of the shape the API server
/// accepted there, and each admission review with its own uid.
#[test]
fn the_specs_wire_captures_get_replies_of_the_accepted_shape() {
    use kudo_crd::convert::NoTypes;
    let Some(shared) = kudo_testkit::shared() else {
        return;
    };
    let dir = shared.join("wire");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let capture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let body = capture["request_body"].to_string();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let keys = |v: &Value| {
            let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
            k.sort();
            k
        };
        let reply: Value = if name.starts_with("conversion") {
            let (reply, _) = kudo_webhook::convert_review(body.as_bytes(), &NoTypes);
            assert_eq!(reply.http_status, 200, "{name}");
            serde_json::from_slice(&reply.body).unwrap()
        } else {
            let mode = if name.contains("mutate") {
                kudo_webhook::Mode::Mutate
            } else {
                kudo_webhook::Mode::Validate
            };
            let (status, review) =
                kudo_webhook::admit_review(body.as_bytes(), mode, &NoOperatorVersions);
            assert_eq!(status, 200, "{name}");
            review
        };
        let valid = &capture["a_valid_response_body"];
        assert_eq!(keys(&reply), keys(valid), "{name}");
        assert_eq!(
            reply["response"]["uid"], valid["response"]["uid"],
            "{name}: the reply names the request's uid"
        );
        seen += 1;
    }
    assert_eq!(seen, 11, "the spec has 11 captures");
}

/// A store without OperatorVersions: admission answers (denies) with the request's uid.
struct NoOperatorVersions;

impl kudo_webhook::OperatorVersions for NoOperatorVersions {
    fn ready(&self) -> Result<(), kudo_webhook::StoreError> {
        Ok(())
    }
    fn get(
        &self,
        _: &str,
        _: &str,
    ) -> Result<Option<std::sync::Arc<kudo_policy::change::Version>>, kudo_webhook::StoreError>
    {
        Ok(None)
    }
}
