//! Dictionaries (sprig's `dict.go`): `dict`, `set`, `unset`, `hasKey`, `pluck`, `keys`,
//! `pick`, `omit`, `values`.

use std::sync::Arc;

use gotmpl::{Result, Value};

use super::strconv::strval;
use super::{Map, arg_map, arg_str, list, map_value, string, want, want_min};

pub(super) fn f_dict(_name: &str, a: &[Value]) -> Result<Value> {
    let mut m = Map::new();
    for pair in a.chunks(2) {
        let key: Arc<str> = strval(&pair[0]).into();
        m.insert(key, pair.get(1).cloned().unwrap_or_else(|| string("")));
    }
    Ok(map_value(m))
}

pub(super) fn f_set(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let mut m = arg_map(name, &a[0])?.clone();
    let key = arg_str(name, &a[1])?;
    m.insert(key.into(), a[2].clone());
    Ok(map_value(m))
}

pub(super) fn f_unset(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut m = arg_map(name, &a[0])?.clone();
    m.remove(arg_str(name, &a[1])?);
    Ok(map_value(m))
}

pub(super) fn f_has_key(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let m = arg_map(name, &a[0])?;
    Ok(Value::Bool(m.contains_key(arg_str(name, &a[1])?)))
}

pub(super) fn f_pluck(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let key = arg_str(name, &a[0])?;
    let mut out = Vec::new();
    for d in &a[1..] {
        if let Some(v) = arg_map(name, d)?.get(key) {
            out.push(v.clone());
        }
    }
    Ok(list(out))
}

pub(super) fn f_keys(name: &str, a: &[Value]) -> Result<Value> {
    let mut out = Vec::new();
    for d in a {
        out.extend(arg_map(name, d)?.keys().map(|k| Value::String(k.clone())));
    }
    Ok(list(out))
}

pub(super) fn f_pick(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let m = arg_map(name, &a[0])?;
    let mut out = Map::new();
    for k in &a[1..] {
        let k = arg_str(name, k)?;
        if let Some((key, v)) = m.get_key_value(k) {
            out.insert(key.clone(), v.clone());
        }
    }
    Ok(map_value(out))
}

pub(super) fn f_omit(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let mut m = arg_map(name, &a[0])?.clone();
    for k in &a[1..] {
        m.remove(arg_str(name, k)?);
    }
    Ok(map_value(m))
}

pub(super) fn f_values(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list(arg_map(name, &a[0])?.values().cloned().collect()))
}

#[cfg(test)]
mod tests {
    use crate::testing::check;

    #[test]
    fn dict_functions() {
        check(&[
            // dict_test.go TestDict
            (
                r#"{{$t := dict "I" "shot" "the" "albatross"}}{{$t.the}} {{$t.I}}"#,
                "{}",
                "albatross shot",
            ),
            // dict.go dict: keys through strval, odd count pads with ""
            (
                r#"{{ dict 1 2 "three" "four" 5 }}|{{ dict }}|{{ dict nil 1 (list 1) 2 }}"#,
                "{}",
                "map[1:2 5: three:four]|map[]|map[<nil>:1 [1]:2]",
            ),
            // dict_test.go TestHasKey
            (
                r#"{{- $d := dict "one" 1 "two" 222222 -}}{{- if hasKey $d "one" -}}1{{- end -}}{{ hasKey $d "x" }}"#,
                "{}",
                "1false",
            ),
            // dict_test.go TestPluck
            (
                r#"{{- $d := dict "one" 1 "two" 222222 -}}{{- $d2 := dict "one" 1 "two" 33333 -}}{{- $d3 := dict "one" 1 -}}{{- $d4 := dict "one" 1 "two" 4444 -}}{{- pluck "two" $d $d2 $d3 $d4 -}}|{{ pluck "x" }}"#,
                "{}",
                "[222222 33333 4444]|[]",
            ),
            // dict_test.go TestKeys
            (
                r#"{{ dict "foo" 1 "bar" 2 | keys | sortAlpha }}|{{ dict | keys }}|{{ keys (dict "foo" 1) (dict "bar" 2) (dict "bar" 3) | uniq | sortAlpha }}|{{ keys }}"#,
                "{}",
                "[bar foo]|[]|[bar foo]|[]",
            ),
            // dict_test.go TestPick
            (
                r#"{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" "three" | len -}}|{{- $d := dict }}{{ pick $d "two" | len -}}"#,
                "{}",
                "1|map[two:222222]|2|2|0",
            ),
            // dict_test.go TestOmit
            (
                r#"{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" "two" | len -}}|{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "two" "three" | len -}}|{{- $d := dict }}{{ omit $d "two" | len -}}"#,
                "{}",
                "1|map[two:222222]|0|1|0",
            ),
            // dict_test.go TestValues
            (
                r#"{{- $d := dict "a" 1 "b" 2 }}{{ values $d | sortAlpha | join "," }}|{{- $d := dict "a" "first" "b" 2 }}{{ values $d | sortAlpha | join "," }}"#,
                "{}",
                "1,2|2,first",
            ),
            // dict_test.go TestDeepCopy
            (
                r#"{{- $d := dict "a" 1 "b" 2 | deepCopy }}{{ values $d | sortAlpha | join "," }}|{{- $d := dict "a" 1 "b" 2 | deepCopy }}{{ keys $d | sortAlpha | join "," }}|{{- $one := dict "foo" (dict "bar" "baz") "qux" true -}}{{ deepCopy $one }}"#,
                "{}",
                "1,2|a,b|map[foo:map[bar:baz] qux:true]",
            ),
            // dict.go set/unset results
            (
                r#"{{ set (dict "a" 1) "b" 2 }}|{{ unset (dict "a" 1 "b" 2) "a" }}|{{ $d := dict }}{{ $d = set $d "k" "v" }}{{ $d.k }}"#,
                "{}",
                "map[a:1 b:2]|map[b:2]|v",
            ),
            // data maps
            (
                r#"{{ hasKey .m "a" }}|{{ pluck "a" .m .m }}|{{ pick .m "a" }}|{{ set .m "b" 2 }}"#,
                r#"{"m": {"a": 1, "c": [1]}}"#,
                "true|[1 1]|map[a:1]|map[a:1 b:2 c:[1]]",
            ),
        ]);
    }
}
