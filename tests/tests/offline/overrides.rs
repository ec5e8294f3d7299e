//! `-p KEY=VALUE`: the grammar, typing by the schema, and every refusal with its own code.

use kudo_diag::Code;
use kudo_policy::ParamSchema;
use kudo_policy::values::{self, Inputs};
use serde_json::{Value, json};

fn schema() -> ParamSchema {
    ParamSchema::from_value(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "c1"},
            "replicas": {"type": "integer", "default": 3},
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean", "default": false},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
            "noDefault": {"type": "array", "items": {"type": "string"}},
            "a/b": {"type": "string"},
            "m~n": {"type": "integer"},
            "primary": {"type": "object", "properties": {"host": {"type": "string"}, "port": {"type": "integer"}}},
            "free": {"type": "object"},
            "topology": {"type": "array", "default": [{"datacenterName": "dc1", "labels": [{"key": "k", "value": "v"}]}],
                "items": {"type": "object", "properties": {
                    "datacenterName": {"type": "string"},
                    "labels": {"type": "array", "items": {"type": "object",
                        "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}}}}}
        }
    }))
    .unwrap()
}

/// Applies the overrides; returns the values, or the code of the first problem.
fn apply(overrides: &[&str]) -> Result<Value, Code> {
    // As the CLI reads them: parsed first (a refusal there is a usage error), then applied.
    let overrides = values::Override::parse_all(overrides).map_err(|d| d[0].code)?;
    let (values, diags) = values::effective(
        &schema(),
        &Inputs {
            overrides: &overrides,
            ..Default::default()
        },
    );
    match diags.first() {
        Some(d) => Err(d.code),
        None => Ok(values.into_value()),
    }
}

fn at(v: &Result<Value, Code>, p: &str) -> Result<Value, Code> {
    v.clone()
        .map(|v| v.pointer(p).cloned().unwrap_or(Value::Null))
}

#[test]
fn overrides_are_typed_by_the_schema() {
    let cases: &[(&str, &str, Result<Value, Code>)] = &[
        ("name=123", "/name", Ok(json!("123"))), // a string stays a string
        ("name=NO", "/name", Ok(json!("NO"))),
        ("name=a: b", "/name", Ok(json!("a: b"))),
        ("name=\"quoted\"", "/name", Ok(json!("quoted"))),
        ("name=x=y=z", "/name", Ok(json!("x=y=z"))), // split at the first `=`
        ("name=", "/name", Ok(json!(""))),           // empty string
        ("replicas=5", "/replicas", Ok(json!(5))),
        ("replicas='5'", "/replicas", Ok(json!(5))),
        (
            "replicas=9007199254740993",
            "/replicas",
            Ok(json!(9007199254740993u64)),
        ), // exact
        ("replicas=", "/replicas", Ok(json!(3))), // empty removes: back to the default
        ("ratio=0.5", "/ratio", Ok(json!(0.5))),
        ("ratio=2", "/ratio", Ok(json!(2))),
        ("enabled=true", "/enabled", Ok(json!(true))),
        ("/enabled=false", "/enabled", Ok(json!(false))), // leading slash optional
        ("tags=[x, y]", "/tags", Ok(json!(["x", "y"]))),
        ("tags/0=z", "/tags", Ok(json!(["z"]))),
        ("tags/0=", "/tags", Ok(json!([""]))), // a string item set to ""
        ("a~1b=s", "/a~1b", Ok(json!("s"))),   // ~1 is "/"
        ("m~0n=7", "/m~0n", Ok(json!(7))),     // ~0 is "~"
        ("primary/host=db", "/primary", Ok(json!({"host": "db"}))), // objects are created
        (
            "free/any/thing=1",
            "/free",
            Ok(json!({"any": {"thing": 1}})),
        ),
        (
            "topology/0/datacenterName=DC1",
            "/topology/0/datacenterName",
            Ok(json!("DC1")),
        ),
        (
            "topology/0/labels/0={key: Usage, value: v}",
            "/topology/0/labels/0",
            Ok(json!({"key": "Usage", "value": "v"})),
        ),
        (
            "topology/0/labels=[{key: a, value: b}, {key: c, value: d}]",
            "/topology/0/labels/1/key",
            Ok(json!("c")),
        ),
    ];
    for (input, pointer, want) in cases {
        let got = at(&apply(&[input]), pointer);
        assert_eq!(&got, want, "-p {input}");
    }
}

#[test]
fn refusals_have_their_own_codes() {
    let cases: &[(&str, Code)] = &[
        ("nmae=a", Code::UnknownParameter),
        ("primary/hots=a", Code::UnknownParameter),
        ("tags/5=x", Code::IndexOutOfRange),
        ("topology/1/datacenterName=x", Code::IndexOutOfRange),
        ("tags/-=x", Code::AppendRefused),
        ("tags/first=x", Code::InvalidIndex),
        ("tags/01=x", Code::InvalidIndex),
        ("name/inner=x", Code::WalkThroughScalar), // the schema says: a string, nothing below it
        ("noDefault/0=x", Code::MissingArray),
        ("novalue", Code::OverrideSyntax),
        ("=x", Code::OverrideSyntax),
        ("a~2b=x", Code::InvalidPointer),
        ("tags=[unclosed", Code::OverrideSyntax),
        ("topology/0=", Code::OverrideSyntax), // an array item cannot be removed
    ];
    for (input, code) in cases {
        assert_eq!(apply(&[input]).map(|_| ()), Err(*code), "-p {input}");
    }
}

#[test]
fn walking_through_a_scalar_value_is_refused() {
    // The schema allows anything below `free`, but the value there is a number.
    assert_eq!(
        apply(&["free/x=1", "free/x/y=2"]).map(|_| ()),
        Err(Code::WalkThroughScalar)
    );
}

#[test]
fn later_overrides_win_and_each_reports_its_position() {
    assert_eq!(
        at(&apply(&["replicas=1", "replicas=2"]), "/replicas"),
        Ok(json!(2))
    );
    let overrides = values::Override::parse_all(&["replicas=1", "bogus=2"]).unwrap();
    let (_, diags) = values::effective(
        &schema(),
        &Inputs {
            overrides: &overrides,
            ..Default::default()
        },
    );
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].origin, kudo_diag::Origin::Flag { index: 2 });
}

#[test]
fn unknown_paths_suggest_the_nearest_parameter() {
    let cases: &[(&str, &str)] = &[
        ("nmae=a", "did you mean /name?"),
        ("primary/hots=a", "did you mean /primary/host?"),
        ("topolgy/0/datacenterName=x", "did you mean /topology?"),
        (
            "datacenterName=x",
            "did you mean /topology/0/datacenterName?",
        ),
    ];
    for (input, help) in cases {
        let overrides = values::Override::parse_all(&[input]).unwrap();
        let (_, diags) = values::effective(
            &schema(),
            &Inputs {
                overrides: &overrides,
                ..Default::default()
            },
        );
        assert_eq!(diags[0].help.as_deref(), Some(*help), "-p {input}");
    }
}
