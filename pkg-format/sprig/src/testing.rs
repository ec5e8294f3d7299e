//! The tests' case tables, run through gotmpl with [`funcs`]. Expected outputs are those of
//! Go (text/template + sprig v2.22.0 + KUDO's toYaml with yaml.v2 v2.3.0); the comment above
//! each group names the sprig test (`*_test.go`) a row comes from, or the Go source it
//! exercises.

use super::funcs;

/// (template source, data as JSON, expected output or error message)
pub(super) type Row = (&'static str, &'static str, &'static str);

fn render(src: &str, data: &str) -> std::result::Result<String, String> {
    let data: serde_json::Value = serde_json::from_str(data).map_err(|e| e.to_string())?;
    let data = gotmpl::to_value(&data).map_err(|e| e.to_string())?;
    gotmpl::Template::new("t")
        .funcs(funcs().clone())
        .missing_key(gotmpl::MissingKey::Error)
        .parse(src)
        .and_then(|t| t.execute_to_string(&data))
        .map_err(|e| e.to_string())
}

/// Checks each [`Row`]; the data column may also be built at run time (a `String`).
pub(super) fn check<D: AsRef<str>>(rows: &[(&str, D, &str)]) {
    let mut failures = Vec::new();
    for (src, data, want) in rows {
        let (src, data, want) = (*src, data.as_ref(), *want);
        match render(src, data) {
            Ok(got) if got == want => {}
            got => failures.push(format!(
                "{src:?} with {data}\n  want {want:?}\n  got  {got:?}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

pub(super) fn check_err(rows: &[Row]) {
    let mut failures = Vec::new();
    for &(src, data, want) in rows {
        match render(src, data) {
            Err(e) if e.contains(want) => {}
            got => failures.push(format!(
                "{src:?} with {data}\n  want error {want:?}\n  got {got:?}"
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
