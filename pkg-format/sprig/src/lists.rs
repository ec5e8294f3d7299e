//! Lists (sprig's `list.go`): `list`, `push`, `first`, `rest`, `uniq`, `without`, `has`,
//! `slice`, `concat`, …

use gotmpl::{Result, Value};

use super::{call_err, deep_equal, empty, go_kind_name, list, nil_deref, to_int64, want, want_min};

/// The list argument of sprig's reflection-based list functions, with the Go
/// panic for a nil or non-slice value (`Cannot <what> on type <kind>`).
fn list_arg<'a>(name: &str, v: &'a Value, what: &str) -> Result<&'a [Value]> {
    match v {
        Value::List(l) => Ok(l),
        Value::Nil => Err(nil_deref(name)),
        other => Err(call_err(
            name,
            format!("Cannot {what} on type {}", go_kind_name(other)),
        )),
    }
}

pub(super) fn f_list(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(list(a.to_vec()))
}

pub(super) fn f_push(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut l = list_arg(name, &a[0], "push")?.to_vec();
    l.push(a[1].clone());
    Ok(list(l))
}

pub(super) fn f_prepend(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let mut l = vec![a[1].clone()];
    l.extend_from_slice(list_arg(name, &a[0], "prepend")?);
    Ok(list(l))
}

pub(super) fn f_first(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list_arg(name, &a[0], "find first")?
        .first()
        .cloned()
        .unwrap_or(Value::Nil))
}

pub(super) fn f_last(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(list_arg(name, &a[0], "find last")?
        .last()
        .cloned()
        .unwrap_or(Value::Nil))
}

pub(super) fn f_rest(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find rest")?;
    Ok(list(l.get(1..).unwrap_or_default().to_vec()))
}

pub(super) fn f_initial(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find initial")?;
    Ok(list(l[..l.len().saturating_sub(1)].to_vec()))
}

pub(super) fn f_reverse(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find reverse")?;
    Ok(list(l.iter().rev().cloned().collect()))
}

pub(super) fn f_compact(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "compact")?;
    Ok(list(l.iter().filter(|v| !empty(v)).cloned().collect()))
}

pub(super) fn f_uniq(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let l = list_arg(name, &a[0], "find uniq")?;
    let mut out: Vec<Value> = Vec::new();
    for v in l {
        if !out.iter().any(|o| deep_equal(o, v)) {
            out.push(v.clone());
        }
    }
    Ok(list(out))
}

pub(super) fn f_without(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let l = list_arg(name, &a[0], "find without")?;
    let omit = &a[1..];
    Ok(list(
        l.iter()
            .filter(|v| !omit.iter().any(|o| deep_equal(o, v)))
            .cloned()
            .collect(),
    ))
}

pub(super) fn f_has(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    match &a[1] {
        Value::Nil => Ok(Value::Bool(false)),
        Value::List(l) => Ok(Value::Bool(l.iter().any(|v| deep_equal(&a[0], v)))),
        other => Err(call_err(
            name,
            format!("Cannot find has on type {}", go_kind_name(other)),
        )),
    }
}

pub(super) fn f_slice(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    let l = match &a[0] {
        Value::List(l) => l,
        Value::Nil => return Err(nil_deref(name)),
        other => {
            return Err(call_err(
                name,
                format!(
                    "list should be type of slice or array but {}",
                    go_kind_name(other)
                ),
            ));
        }
    };
    if l.is_empty() {
        return Ok(Value::Nil);
    }
    let len = l.len() as i64;
    let start = a.get(1).map_or(0, to_int64);
    let end = if a.len() < 3 { len } else { to_int64(&a[2]) };
    if start < 0 || end < start || end > len {
        return Err(call_err(
            name,
            "reflect.Value.Slice: slice index out of bounds",
        ));
    }
    Ok(list(l[start as usize..end as usize].to_vec()))
}

pub(super) fn f_concat(name: &str, a: &[Value]) -> Result<Value> {
    let mut out = Vec::new();
    for v in a {
        match v {
            Value::List(l) => out.extend_from_slice(l),
            Value::Nil => return Err(nil_deref(name)),
            other => {
                return Err(call_err(
                    name,
                    format!("Cannot concat type {} as list", go_kind_name(other)),
                ));
            }
        }
    }
    Ok(list(out))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check, check_err};

    #[test]
    fn list_tuple() {
        check(&[
            // list_test.go TestTuple
            (
                r#"{{$t := tuple 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}"#,
                "{}",
                "foo1a",
            ),
            // list_test.go TestList
            (
                r#"{{$t := list 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}"#,
                "{}",
                "foo1a",
            ),
            // list.go list
            (
                r#"{{ list 1 "a" 2.5 nil true }} {{ list }} {{ len (list 1 2) }}"#,
                "{}",
                "[1 a 2.5 <nil> true] [] 2",
            ),
        ]);
    }

    #[test]
    fn list_functions() {
        check(&[
            // list_test.go TestPush
            (
                r#"{{ $t := tuple 1 2 3  }}{{ append $t 4 | len }}|{{ $t := tuple 1 2 3 4  }}{{ append $t 5 | join "-" }}|{{ push (list) 1 }}"#,
                "{}",
                "4|1-2-3-4-5|[1]",
            ),
            // list_test.go TestPrepend
            (
                r#"{{ $t := tuple 1 2 3  }}{{ prepend $t 0 | len }}|{{ $t := tuple 1 2 3 4  }}{{ prepend $t 0 | join "-" }}"#,
                "{}",
                "4|0-1-2-3-4",
            ),
            // list_test.go TestFirst/TestLast
            (
                "{{ list 1 2 3 | first }}|{{ list | first }}|{{ list 1 2 3 | last }}|{{ list | last }}",
                "{}",
                "1|<no value>|3|<no value>",
            ),
            // list_test.go TestInitial/TestRest
            (
                "{{ list 1 2 3 | initial | len }}|{{ list 1 2 3 | initial | last }}|{{ list 1 2 3 | initial | first }}|{{ list | initial }}|{{ list 1 2 3 | rest | len }}|{{ list 1 2 3 | rest | last }}|{{ list 1 2 3 | rest | first }}|{{ list | rest }}",
                "{}",
                "2|2|1|[]|2|3|2|[]",
            ),
            // list_test.go TestReverse
            (
                "{{ list 1 2 3 | reverse | first }}|{{ list 1 2 3 | reverse | rest | first }}|{{ list 1 2 3 | reverse | last }}|{{ list 1 2 3 4 | reverse }}|{{ list 1 | reverse }}|{{ list | reverse }}",
                "{}",
                "3|2|1|[4 3 2 1]|[1]|[]",
            ),
            // list_test.go TestCompact
            (
                r#"{{ list 1 0 "" "hello" | compact }}|{{ list "" "" | compact }}|{{ list | compact }}|{{ list nil false 0.0 (list) (dict) "x" | compact }}"#,
                "{}",
                "[1 hello]|[]|[]|[x]",
            ),
            // list_test.go TestUniq
            (
                r#"{{ list 1 2 3 4 | uniq }}|{{ list "a" "b" "c" "d" | uniq }}|{{ list 1 1 1 1 2 2 2 2 | uniq }}|{{ list "foo" 1 1 1 1 "foo" "foo" | uniq }}|{{ list | uniq }}|{{ list (list 1) (list 1) (dict "a" 1) (dict "a" 1) | uniq }}"#,
                "{}",
                "[1 2 3 4]|[a b c d]|[1 2]|[foo 1]|[]|[[1] map[a:1]]",
            ),
            // list_test.go TestWithout
            (
                r#"{{ without (list 1 2 3 4) 1 }}|{{ without (list "a" "b" "c" "d") "a" }}|{{ without (list 1 1 1 1 2) 1 }}|{{ without (list) 1 }}|{{ without (list 1 2 3) }}|{{ without list }}|{{ without (list 1 2 3) 1 3 }}"#,
                "{}",
                "[2 3 4]|[b c d]|[2]|[]|[1 2 3]|[]|[2]",
            ),
            // list_test.go TestHas
            (
                r#"{{ list 1 2 3 | has 1 }}|{{ list 1 2 3 | has 4 }}|{{ has "bar" nil }}|{{ has 1.0 (list 1) }}|{{ has nil (list nil) }}"#,
                "{}",
                "true|false|false|false|true",
            ),
            // reflect.DeepEqual between data and literal ints
            (
                "{{ .l | uniq }}|{{ has 1 .l }}|{{ without .l 1 }}",
                r#"{"l": [1, 1, 2]}"#,
                "[1 2]|true|[2]",
            ),
            // list_test.go TestSlice
            (
                r#"{{ slice (list 1 2 3) }}|{{ slice (list 1 2 3) 0 1 }}|{{ slice (list 1 2 3) 1 3 }}|{{ slice (list 1 2 3) 1 }}|{{ slice (list) }}|{{ slice (list 1 2) "1" }}"#,
                "{}",
                "[1 2 3]|[1]|[2 3]|[2 3]|<no value>|[2]",
            ),
            // list_test.go TestConcat
            (
                r#"{{ concat (list 1 2 3) }}|{{ concat (list 1 2 3) (list 4 5) }}|{{ concat (list 1 2 3) (list 4 5) (list) }}|{{ concat (list 1 2 3) (list 4 5) (list nil) }}|{{ concat (list 1 2 3) (list 4 5) (list ( list "foo" ) ) }}|{{ concat }}"#,
                "{}",
                "[1 2 3]|[1 2 3 4 5]|[1 2 3 4 5]|[1 2 3 4 5 <nil>]|[1 2 3 4 5 [foo]]|[]",
            ),
            // data lists
            (
                r#"{{ first .l }}|{{ last .l }}|{{ rest .l }}|{{ initial .l }}|{{ reverse .l }}|{{ append .l 9 }}|{{ prepend .l 0 }}|{{ has 2 .l }}|{{ without .l 2 }}|{{ uniq .l }}|{{ slice .l 1 2 }}|{{ concat .l .l }}|{{ compact .l }}|{{ sortAlpha .l }}|{{ join "," .l }}|{{ toStrings .l }}"#,
                r#"{"l": [1, 2, "a", null, 2, 0, ""]}"#,
                "1||[2 a <nil> 2 0 ]|[1 2 a <nil> 2 0]|[ 0 2 <nil> a 2 1]|[1 2 a <nil> 2 0  9]|[0 1 2 a <nil> 2 0 ]|true|[1 a <nil> 0 ]|[1 2 a <nil> 0 ]|[2]|[1 2 a <nil> 2 0  1 2 a <nil> 2 0 ]|[1 2 a 2]|[ 0 1 2 2 a]|1,2,a,2,0,|[1 2 a 2 0 ]",
            ),
        ]);
    }

    #[test]
    fn errors() {
        // sprig's panics in the list functions, as text/template reports them.
        check_err(&[
            (
                r#"{{ append "x" 1 }}"#,
                "{}",
                "error calling append: Cannot push on type string",
            ),
            (
                "{{ append nil 1 }}",
                "{}",
                "error calling append: runtime error: invalid memory address or nil pointer dereference",
            ),
            (
                "{{ prepend 5 1 }}",
                "{}",
                "error calling prepend: Cannot prepend on type int",
            ),
            (
                r#"{{ first "abc" }}"#,
                "{}",
                "error calling first: Cannot find first on type string",
            ),
            (
                "{{ last .m }}",
                r#"{"m": {"a": 1}}"#,
                "error calling last: Cannot find last on type map",
            ),
            (
                "{{ rest 1 }}",
                "{}",
                "error calling rest: Cannot find rest on type int",
            ),
            (
                "{{ initial true }}",
                "{}",
                "error calling initial: Cannot find initial on type bool",
            ),
            (
                r#"{{ reverse "x" }}"#,
                "{}",
                "error calling reverse: Cannot find reverse on type string",
            ),
            (
                "{{ compact 1 }}",
                "{}",
                "error calling compact: Cannot compact on type int",
            ),
            (
                "{{ uniq 1 }}",
                "{}",
                "error calling uniq: Cannot find uniq on type int",
            ),
            (
                "{{ without 1 }}",
                "{}",
                "error calling without: Cannot find without on type int",
            ),
            (
                r#"{{ has 1 "abc" }}"#,
                "{}",
                "error calling has: Cannot find has on type string",
            ),
            (
                "{{ slice (list 1 2 3) 2 1 }}",
                "{}",
                "error calling slice: reflect.Value.Slice: slice index out of bounds",
            ),
            (
                r#"{{ slice "abc" 1 }}"#,
                "{}",
                "error calling slice: list should be type of slice or array but string",
            ),
            (
                "{{ concat (list 1) 2 }}",
                "{}",
                "error calling concat: Cannot concat type int as list",
            ),
        ]);
    }
}
