//! Captures of the reviews kube-apiserver sends (`kudo-webhook --capture-dir DIR`): the wire
//! fixtures of kudo's own tests come from them (`tests/fixtures/wire/`, docs/e2e.md).
//!
//! Each review is written to `DIR/<namespace>/<class>.json` as `{"path", "request_body",
//! "response_status", "response_body"}`, the class saying what happened:
//! `conversion-<kind>-<from>-to-<to>` (`conversion-instance-v1beta1-to-v1beta2`) and
//! `admission-<mutate|validate>-<operation>[-dryrun][-sent-as-<version>]`, the last when a
//! client wrote through another version than the one the webhook receives. A later review of the
//! same class in the same namespace replaces the earlier one, so a scenario that runs alone in
//! its namespace leaves one file per class. Files are written whole (a temporary file renamed).
//!
//! Reviews carry the objects as sent, `writeOnly` values included: capture on a test cluster
//! only. Capturing never changes an answer; a capture that cannot be written is logged. A
//! review larger than [`MAX_CAPTURED`] is not captured: the fixtures are small reviews, and
//! capturing parses and rewrites the whole review, which would multiply the memory a large one
//! takes.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// Largest review captured, in bytes.
pub const MAX_CAPTURED: usize = 1024 * 1024;

/// Writes the capture of one review that `endpoint` (`convert`, `mutate`, `validate`) received
/// on `path` under `dir`, and returns its file (`None` when the request is larger than [`MAX_CAPTURED`] or not a review kudo
/// can classify: it is not captured).
pub fn write(
    dir: &Path,
    endpoint: &str,
    path: &str,
    request: &[u8],
    status: u16,
    response: &[u8],
) -> std::io::Result<Option<PathBuf>> {
    if request.len() > MAX_CAPTURED {
        return Ok(None);
    }
    let Ok(request) = serde_json::from_slice::<Value>(request) else {
        return Ok(None);
    };
    let Some((namespace, class)) = classify(endpoint, &request) else {
        return Ok(None);
    };
    let response = serde_json::from_slice::<Value>(response)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(response).into_owned()));
    let capture = json!({
        "path": path,
        "request_body": request,
        "response_status": status,
        "response_body": response,
    });
    let folder = dir.join(namespace);
    std::fs::create_dir_all(&folder)?;
    let file = folder.join(format!("{class}.json"));
    let tmp = folder.join(format!(".{class}.json.tmp"));
    let mut text = serde_json::to_string_pretty(&capture).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &file)?;
    Ok(Some(file))
}

/// The namespace (`_cluster` for cluster-scoped objects) and class of a review `endpoint`
/// received.
pub fn classify(endpoint: &str, review: &Value) -> Option<(String, String)> {
    let request = review.get("request")?;
    let kind = review.get("kind")?.as_str()?;
    let (namespace, class) = match kind {
        "ConversionReview" => {
            let first = request.get("objects")?.as_array()?.first()?;
            let from = version(first.get("apiVersion")?.as_str()?);
            let to = version(request.get("desiredAPIVersion")?.as_str()?);
            let object_kind = first.get("kind")?.as_str()?.to_ascii_lowercase();
            (
                first.pointer("/metadata/namespace").and_then(Value::as_str),
                format!("conversion-{object_kind}-{from}-to-{to}"),
            )
        }
        "AdmissionReview" => {
            let operation = request.get("operation")?.as_str()?.to_ascii_lowercase();
            let mut class = format!("admission-{endpoint}-{operation}");
            if request.get("dryRun").and_then(Value::as_bool) == Some(true) {
                class.push_str("-dryrun");
            }
            let received = request.pointer("/kind/version").and_then(Value::as_str);
            let sent = request
                .pointer("/requestKind/version")
                .and_then(Value::as_str);
            if let (Some(received), Some(sent)) = (received, sent)
                && received != sent
            {
                class.push_str(&format!("-sent-as-{sent}"));
            }
            (request.get("namespace").and_then(Value::as_str), class)
        }
        _ => return None,
    };
    Some((namespace.unwrap_or("_cluster").to_string(), class))
}

/// `v1beta2` of `kudo.dev/v1beta2`.
fn version(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reviews_are_classified_by_what_happened() {
        let conversion = json!({"kind": "ConversionReview", "request": {
            "desiredAPIVersion": "kudo.dev/v1beta2",
            "objects": [{"apiVersion": "kudo.dev/v1beta1", "kind": "Instance",
                "metadata": {"name": "a", "namespace": "shop"}}]}});
        assert_eq!(
            classify("convert", &conversion),
            Some((
                "shop".into(),
                "conversion-instance-v1beta1-to-v1beta2".into()
            ))
        );
        let admission = json!({"kind": "AdmissionReview", "request": {
            "operation": "UPDATE", "dryRun": true, "namespace": "shop",
            "kind": {"version": "v1beta2"}, "requestKind": {"version": "v1beta1"}}});
        assert_eq!(
            classify("validate", &admission),
            Some((
                "shop".into(),
                "admission-validate-update-dryrun-sent-as-v1beta1".into()
            ))
        );
        assert_eq!(classify("convert", &json!({"kind": "Other"})), None);
        assert_eq!(classify("convert", &json!([1])), None);
    }

    #[test]
    fn a_capture_is_written_whole_and_replaced_by_the_next_of_its_class() {
        let dir = tempfile::tempdir().unwrap();
        let body = |name: &str| {
            json!({"kind": "AdmissionReview", "request": {"operation": "CREATE",
                "namespace": "ns", "name": name}})
            .to_string()
        };
        let reply = br#"{"response":{"allowed":true}}"#;
        for name in ["first", "second"] {
            let file = write(
                dir.path(),
                "mutate",
                "/m?timeout=10s",
                body(name).as_bytes(),
                200,
                reply,
            )
            .unwrap()
            .unwrap();
            assert_eq!(file, dir.path().join("ns/admission-mutate-create.json"));
        }
        let v: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("ns/admission-mutate-create.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(v["request_body"]["request"]["name"], "second");
        assert_eq!(v["response_body"]["response"]["allowed"], true);
        assert_eq!(v["path"], "/m?timeout=10s");
        assert_eq!(std::fs::read_dir(dir.path().join("ns")).unwrap().count(), 1);
        assert_eq!(
            write(dir.path(), "convert", "/c", b"not json", 400, b"").unwrap(),
            None
        );
    }
}
