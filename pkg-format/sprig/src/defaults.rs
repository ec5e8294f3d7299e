//! Defaults (sprig's `defaults.go`): `default`, `empty`, `coalesce`, `ternary`, `deepCopy`.

use gotmpl::{Result, Value};

use super::{arg_bool, empty, want, want_min};

pub(super) fn f_default(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    match a.get(1) {
        Some(given) if !empty(given) => Ok(given.clone()),
        _ => Ok(a[0].clone()),
    }
}

pub(super) fn f_empty(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Bool(empty(&a[0])))
}

pub(super) fn f_coalesce(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil))
}

pub(super) fn f_ternary(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let cond = arg_bool(name, &a[2])?;
    Ok(if cond { a[0].clone() } else { a[1].clone() })
}

pub(super) fn f_deep_copy(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(a[0].clone())
}

#[cfg(test)]
mod tests {
    use crate::testing::check;

    #[test]
    fn defaults() {
        check(&[
            // defaults_test.go TestDefault
            (
                r#"{{"" | default "foo"}}|{{default "foo" 234}}|{{default "foo" 2.34}}|{{ default "123" }}"#,
                "{}",
                "foo|234|2.34|123",
            ),
            // defaults_test.go TestDefault (nil value)
            (
                r#"{{ .Nothing | default "123" }}"#,
                r#"{"Nothing": null}"#,
                "123",
            ),
            // defaults.go dfault
            (
                r#"{{ default "x" 0 }}|{{ default "x" (list) }}|{{ default "x" false }}|{{ default "x" "y" "z" }}|{{ default .d .v }}|{{ default "x" .v }}"#,
                r#"{"d": "def", "v": 0}"#,
                "x|x|x|y|def|x",
            ),
            // defaults_test.go TestEmpty
            (
                r#"{{if empty 1}}1{{else}}0{{end}}|{{if empty 0}}1{{else}}0{{end}}|{{if empty ""}}1{{else}}0{{end}}|{{if empty 0.0}}1{{else}}0{{end}}|{{if empty false}}1{{else}}0{{end}}|{{ empty (dict) }}|{{ empty nil }}"#,
                "{}",
                "0|1|1|1|1|true|true",
            ),
            // defaults_test.go TestEmpty (missing nested value)
            (
                "{{if empty .top.NoSuchThing}}1{{else}}0{{end}}",
                r#"{"top": {"NoSuchThing": null}}"#,
                "1",
            ),
            // defaults_test.go TestCoalesce
            (
                r#"{{ coalesce 1 }}|{{ coalesce "" 0 nil 2 }}|{{ $two := 2 }}{{ coalesce "" 0 nil $two }}|{{ $two := 2 }}{{ coalesce "" $two 0 0 0 }}|{{ $two := 2 }}{{ coalesce "" $two 3 4 5 }}|{{ coalesce }}"#,
                "{}",
                "1|2|2|2|2|<no value>",
            ),
            // defaults_test.go TestCoalesce (nil values)
            (
                r#"{{ coalesce .top.NoSuchThing .bottom "airplane"}}"#,
                r#"{"top": {"NoSuchThing": null}, "bottom": null}"#,
                "airplane",
            ),
            // defaults_test.go TestTernary
            (
                r#"{{true | ternary "foo" "bar"}}|{{ternary "foo" "bar" true}}|{{false | ternary "foo" "bar"}}|{{ternary "foo" "bar" false}}"#,
                "{}",
                "foo|foo|bar|bar",
            ),
        ]);
    }
}
