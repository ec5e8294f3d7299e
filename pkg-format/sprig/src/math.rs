//! Numbers (sprig's `numeric.go` and the arithmetic closures of `functions.go`): `atoi`,
//! `int64`, `float64`, `until`, `add`, `div`, `max`, `round`, …

use gotmpl::{Result, Value};

use super::strconv::fmt_v;
use super::{arg_float, arg_int, arg_str, call_err, list, to_float64, to_int64, want, want_min};

pub(super) fn f_atoi(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let s = arg_str(name, &a[0])?;
    // strconv.Atoi; sprig drops the error, keeping the clamped value on overflow.
    let v = match s.parse::<i64>() {
        Ok(v) => v,
        Err(e) => match e.kind() {
            std::num::IntErrorKind::PosOverflow => i64::MAX,
            std::num::IntErrorKind::NegOverflow => i64::MIN,
            _ => 0,
        },
    };
    Ok(Value::Int(v))
}

pub(super) fn f_int64(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(to_int64(&a[0])))
}

pub(super) fn f_float64(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0])))
}

pub(super) fn f_to_decimal(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(
        i64::from_str_radix(&fmt_v(&a[0]), 8).unwrap_or(0),
    ))
}

fn until_step(start: i64, stop: i64, step: i64) -> Value {
    let mut v = Vec::new();
    let mut i = start;
    if stop < start {
        if step >= 0 {
            return list(v);
        }
        while i > stop {
            v.push(Value::Int(i));
            match i.checked_add(step) {
                Some(n) => i = n,
                None => break,
            }
        }
    } else {
        if step <= 0 {
            return list(v);
        }
        while i < stop {
            v.push(Value::Int(i));
            match i.checked_add(step) {
                Some(n) => i = n,
                None => break,
            }
        }
    }
    list(v)
}

pub(super) fn f_until(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let n = arg_int(name, &a[0])?;
    Ok(until_step(0, n, if n < 0 { -1 } else { 1 }))
}

pub(super) fn f_until_step(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 3)?;
    let start = arg_int(name, &a[0])?;
    let stop = arg_int(name, &a[1])?;
    let step = arg_int(name, &a[2])?;
    Ok(until_step(start, stop, step))
}

pub(super) fn f_add1(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Int(to_int64(&a[0]).wrapping_add(1)))
}

pub(super) fn f_add(_name: &str, a: &[Value]) -> Result<Value> {
    Ok(Value::Int(
        a.iter().map(to_int64).fold(0i64, i64::wrapping_add),
    ))
}

pub(super) fn f_sub(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    Ok(Value::Int(to_int64(&a[0]).wrapping_sub(to_int64(&a[1]))))
}

pub(super) fn f_div(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(call_err(name, "runtime error: integer divide by zero"));
    }
    Ok(Value::Int(to_int64(&a[0]).wrapping_div(d)))
}

pub(super) fn f_mod(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 2)?;
    let d = to_int64(&a[1]);
    if d == 0 {
        return Err(call_err(name, "runtime error: integer divide by zero"));
    }
    Ok(Value::Int(to_int64(&a[0]).wrapping_rem(d)))
}

pub(super) fn f_mul(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(
        a.iter().map(to_int64).fold(1i64, i64::wrapping_mul),
    ))
}

pub(super) fn f_max(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(a.iter().map(to_int64).max().unwrap_or(0)))
}

pub(super) fn f_min(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 1)?;
    Ok(Value::Int(a.iter().map(to_int64).min().unwrap_or(0)))
}

pub(super) fn f_ceil(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).ceil()))
}

pub(super) fn f_floor(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(Value::Float(to_float64(&a[0]).floor()))
}

pub(super) fn f_round(name: &str, a: &[Value]) -> Result<Value> {
    want_min(name, a, 2)?;
    let places = arg_int(name, &a[1])?;
    let mut round_on = 0.5;
    for (i, v) in a[2..].iter().enumerate() {
        let f = arg_float(name, v)?;
        if i == 0 {
            round_on = f;
        }
    }
    let val = to_float64(&a[0]);
    let pow = 10f64.powf(places as f64);
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(Value::Float(r / pow))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check, check_err};

    #[test]
    fn int_int64_float64_atoi() {
        check(&[
            // numeric_test.go TestToInt64/TestToInt: "102" -> 102, "frankie" -> 0, true -> 1, float truncated
            (
                r#"{{ int64 "102" }} {{ int64 "frankie" }} {{ int64 true }} {{ int64 102.1234 }} {{ int 102 }} {{ int "102" }}"#,
                "{}",
                "102 0 1 102 102 102",
            ),
            // sprig toInt64: decimal ParseInt only, 0 on error
            (
                r#"{{ int "0x1F" }} {{ int "1.5" }} {{ int " 1" }} {{ int "+5" }} {{ int "-7" }} {{ int nil }} {{ int64 "99999999999999999999" }}"#,
                "{}",
                "0 0 0 5 -7 0 0",
            ),
            // sprig toInt64 on data values
            (
                "{{ int64 .x }} {{ int64 .f }} {{ int64 .l }} {{ int .s }} {{ int .b }}",
                r#"{"x": 5, "f": -2.9, "l": [1], "s": "12", "b": false}"#,
                "5 -2 0 12 0",
            ),
            // numeric_test.go TestToFloat64
            (
                r#"{{ float64 "102" }} {{ float64 "frankie" }} {{ float64 102 }} {{ float64 102.1234 }} {{ float64 true }}"#,
                "{}",
                "102 0 102 102.1234 1",
            ),
            // strconv.ParseFloat syntax
            (
                r#"{{ float64 "1e3" }} {{ float64 "1_000.5" }} {{ float64 ".5" }} {{ float64 "0x1p-2" }} {{ float64 "1e400" }} {{ float64 "1.5.5" }} {{ float64 "" }}"#,
                "{}",
                "1000 1000.5 0.5 0.25 0 0 0",
            ),
            // functions.go atoi: strconv.Atoi, error dropped
            (
                r#"{{ atoi "42" }} {{ atoi "x" }} {{ atoi "99999999999999999999" }} {{ atoi "-99999999999999999999" }} {{ atoi "+3" }} {{ atoi "" }} {{ atoi "1.5" }}"#,
                "{}",
                "42 0 9223372036854775807 -9223372036854775808 3 0 0",
            ),
            // numeric_test.go TestToDecimal
            (
                r#"{{ toDecimal "777" }} {{ toDecimal 777 }} {{ toDecimal 770 }} {{ toDecimal 755 }} {{ toDecimal 9 }} {{ toDecimal "x" }}"#,
                "{}",
                "511 511 504 493 0 0",
            ),
        ]);
    }

    #[test]
    fn arithmetic() {
        check(&[
            // numeric_test.go TestAdd
            ("{{ 3 | add 1 2}}", "{}", "6"),
            // numeric_test.go TestMul
            (r#"{{ 1 | mul "2" 3 "4"}}"#, "{}", "24"),
            // functions.go add/add1/sub/div/mod/mul
            (
                r#"{{ add 1 2 "3" }} {{ add }} {{ add1 "5" }} {{ sub 5 "2" }} {{ div 7 2 }} {{ mod 7 3 }} {{ mod -7 3 }} {{ div -7 2 }} {{ mul 2 "3" 4.5 }} {{ add "x" 1.9 true }}"#,
                "{}",
                "6 0 6 3 3 1 -1 -3 24 2",
            ),
            // data values
            (
                "{{ add .a .b }} {{ sub .a .f }} {{ mul .a .s }} {{ max .a .b .f }} {{ add1 .big }}",
                r#"{"a": 3, "b": 4, "f": 1.5, "s": "7", "big": 9223372036854775807}"#,
                "7 2 21 4 -9223372036854775808",
            ),
            // numeric_test.go TestBiggest
            ("{{ biggest 1 2 3 345 5 6 7}} {{ max 345}}", "{}", "345 345"),
            // numeric_test.go TestMin
            ("{{ min 1 2 3 345 5 6 7}} {{ min 345}}", "{}", "1 345"),
            // numeric.go max/min coerce with toInt64
            (
                r#"{{ max 1 "5" 3.9 }} {{ min 4 "2" 9 }} {{ max "a" -1 }}"#,
                "{}",
                "5 2 0",
            ),
            // numeric_test.go TestCeil/TestFloor
            (
                r#"{{ ceil 123 }} {{ ceil "123" }} {{ ceil 123.01 }} {{ ceil "123.01" }} {{ floor 123 }} {{ floor "123" }} {{ floor 123.9999 }} {{ floor "123.9999" }}"#,
                "{}",
                "123 123 124 124 123 123 123 123",
            ),
            // numeric_test.go TestRound
            (
                r#"{{ round 123.5555 3 }} {{ round "123.55555" 3 }} {{ round 123.500001 0 }} {{ round 123.49999999 0 }} {{ round 123.2329999 2 .3 }} {{ round 123.233 2 .3 }}"#,
                "{}",
                "123.556 123.556 124 123 123.23 123.24",
            ),
        ]);
    }

    #[test]
    fn until_untilstep() {
        check(&[
            // numeric_test.go TestUntil
            (
                "{{range $i, $e := until 5}}{{$i}}{{$e}}{{end}}",
                "{}",
                "0011223344",
            ),
            (
                "{{range $i, $e := until -5}}{{$i}}{{$e}} {{end}}",
                "{}",
                "00 1-1 2-2 3-3 4-4 ",
            ),
            // numeric_test.go TestUntilStep
            (
                "{{range $i, $e := untilStep 0 5 1}}{{$i}}{{$e}}{{end}}",
                "{}",
                "0011223344",
            ),
            (
                "{{range $i, $e := untilStep 3 6 1}}{{$i}}{{$e}}{{end}}",
                "{}",
                "031425",
            ),
            (
                "{{range $i, $e := untilStep 0 -10 -2}}{{$i}}{{$e}} {{end}}",
                "{}",
                "00 1-2 2-4 3-6 4-8 ",
            ),
            // numeric_test.go TestUntilStep (empty cases)
            (
                "{{range $i, $e := untilStep 3 0 1}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 99 0}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 99 -1}}{{$i}}{{$e}}{{end}}|{{range $i, $e := untilStep 3 0 0}}{{$i}}{{$e}}{{end}}",
                "{}",
                "|||",
            ),
            // int parameters accept integer data
            (
                "{{ until .n }} {{ untilStep .z .n 2 }} {{ until 0 }}",
                r#"{"n": 5, "z": 0}"#,
                "[0 1 2 3 4] [0 2 4] []",
            ),
        ]);
    }

    #[test]
    fn errors() {
        // Go's runtime panics in the arithmetic closures, as text/template reports them.
        check_err(&[
            (
                "{{ div 1 0 }}",
                "{}",
                "error calling div: runtime error: integer divide by zero",
            ),
            (
                "{{ mod 1 0 }}",
                "{}",
                "error calling mod: runtime error: integer divide by zero",
            ),
        ]);
    }
}
