//! Checksums (sprig's `crypto.go`): `sha256sum` and `sha1sum` through RustCrypto's `sha2` and
//! `sha1`, and `adler32sum`.

use std::fmt::Write as _;

use gotmpl::{Result, Value};
use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::{arg_str, string, want};

/// Lowercase hexadecimal, as Go's `%x` of a byte slice.
fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

pub(super) fn f_sha256sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(hex(&Sha256::digest(arg_str(name, &a[0])?))))
}

pub(super) fn f_sha1sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    Ok(string(hex(&Sha1::digest(arg_str(name, &a[0])?))))
}

pub(super) fn f_adler32sum(name: &str, a: &[Value]) -> Result<Value> {
    want(name, a, 1)?;
    let (mut s1, mut s2) = (1u32, 0u32);
    for &b in arg_str(name, &a[0])?.as_bytes() {
        s1 = (s1 + u32::from(b)) % 65521;
        s2 = (s2 + s1) % 65521;
    }
    Ok(string(((s2 << 16) | s1).to_string()))
}

#[cfg(test)]
mod tests {
    use crate::testing::check;

    #[test]
    fn hashes() {
        check(&[
            // crypto_test.go TestSha256Sum
            (
                r#"{{"abc" | sha256sum}}"#,
                "{}",
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
            ),
            // crypto_test.go TestSha1Sum
            (
                r#"{{"abc" | sha1sum}}"#,
                "{}",
                "a9993e364706816aba3e25717850c26c9cd0d89d",
            ),
            // crypto_test.go TestAdler32Sum
            (r#"{{"abc" | adler32sum}}"#, "{}", "38600999"),
            // empty and multi-block input
            (
                r#"{{ sha256sum "" }}|{{ sha1sum "" }}|{{ adler32sum "" }}|{{ sha256sum .s }}|{{ sha1sum .s }}|{{ adler32sum .s }}"#,
                r#"{"s": "The quick brown fox jumps over the lazy dog, and then some more text to exceed one block of sixty four bytes"}"#,
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855|da39a3ee5e6b4b0d3255bfef95601890afd80709|1|882ee395bbc5831733528db2e6a089d126803143bd568062621a648b40eede17|404940937072b6bb55d469bcae0bef64ae7db341|1372989259",
            ),
        ]);
    }
}
