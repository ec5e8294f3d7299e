//! Reflection (sprig's `reflect.go`): `typeOf`, `typeIs`, `typeIsLike`, `kindOf`, `kindIs`,
//! `deepEqual`, on gotmpl's value kinds.

use gotmpl::{Result, Value};

use super::{arg_str, deep_equal, go_kind_name, go_type_name, string, want};

pub(super) fn f_type_of(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(go_type_name(&a[0])))
}

pub(super) fn f_type_is(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    Ok(Value::Bool(target == go_type_name(&a[1])))
}

pub(super) fn f_type_is_like(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    let t = go_type_name(&a[1]);
    Ok(Value::Bool(
        target == t || t.strip_prefix('*') == Some(target),
    ))
}

pub(super) fn f_kind_of(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(go_kind_name(&a[0])))
}

pub(super) fn f_kind_is(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let target = arg_str(name, &a[0])?;
    Ok(Value::Bool(target == go_kind_name(&a[1])))
}

pub(super) fn f_deep_equal(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    Ok(Value::Bool(deep_equal(&a[0], &a[1])))
}

#[cfg(test)]
mod tests {
    use crate::testing::check;

    #[test]
    fn reflection() {
        check(&[
            // reflect.go typeOf/kindOf
            (
                r#"{{ typeOf 1 }}|{{ typeOf "a" }}|{{ typeOf 1.5 }}|{{ typeOf nil }}|{{ typeOf (list) }}|{{ typeOf (dict) }}|{{ typeOf true }}|{{ kindOf 1 }}|{{ kindOf (list) }}|{{ kindOf (dict) }}|{{ kindOf nil }}|{{ kindOf 1.5 }}|{{ kindIs "int" 1 }}|{{ typeIs "string" "a" }}|{{ typeIsLike "int" 1 }}"#,
                "{}",
                "int|string|float64|<nil>|[]interface {}|map[string]interface {}|bool|int|slice|map|invalid|float64|true|true|true",
            ),
            // data values
            (
                "{{ typeOf .i }}|{{ kindOf .i }}|{{ typeOf .l }}|{{ typeOf .m }}|{{ typeOf .f }}",
                r#"{"i": 5, "l": [1], "m": {"a": 1}, "f": 1.5}"#,
                "int|int|[]interface {}|map[string]interface {}|float64",
            ),
            // reflect.DeepEqual
            (
                r#"{{ deepEqual 1 1 }}|{{ deepEqual 1 1.0 }}|{{ deepEqual (list 1 "a") (list 1 "a") }}|{{ deepEqual (dict "a" 1) (dict "a" 2) }}|{{ deepEqual nil nil }}|{{ deepEqual .i 5 }}"#,
                r#"{"i": 5}"#,
                "true|false|true|false|true|true",
            ),
        ]);
    }
}
