//! Any `-p` argument against the example schema: a value or a diagnostic, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(arg) = std::str::from_utf8(data) else {
        return;
    };
    let schema = kudo_policy::ParamSchema::from_value(serde_json::json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "s": {"type": "string"},
        "l": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}},
        "o": {"type": "object", "properties": {"b": {"type": "boolean"}}}}}))
    .unwrap();
    // Parsed as the CLI parses it, then applied: a diagnostic at either step, never a panic.
    let Ok(overrides) = kudo_policy::values::Override::parse_all(&[arg]) else {
        return;
    };
    let _ = kudo_policy::values::effective(
        &schema,
        &kudo_policy::values::Inputs {
            overrides: &overrides,
            ..Default::default()
        },
    );
});
