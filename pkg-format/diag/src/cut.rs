//! Text cut to a bound, the one cutter of long messages: diagnostics' pointers
//! ([`shown_pointer`]), the webhook's denial lines, the manager's status messages, Events and
//! logs ([`cut`]). An overlong word (an echoed value) is cut in its middle, then head and tail
//! are kept around `… N bytes cut …`.

/// Longest pointer shown in a diagnostic, in characters (a key may be long).
pub const MAX_POINTER_SHOWN: usize = 200;

/// Longest word kept whole: longer runs without whitespace (an echoed value, base64) keep
/// their first and last [`WORD_KEPT`] bytes.
const LONG_WORD: usize = 512;

/// What of a long word's head and of its tail is kept.
const WORD_KEPT: usize = 96;

/// `text`, at most `max` bytes long (the one cutter: the manager's status messages, Events and
/// logs, the webhook's denial lines) (on a char boundary): overlong words cut in their middle,
/// then the head and tail of what remains kept, with `… N bytes cut …` where text was cut.
/// Text that fits is returned unchanged.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let shorter = cut_words(text);
    if shorter.len() <= max {
        return shorter;
    }
    cut_middle(&shorter, max)
}

/// Each run of non-whitespace longer than [`LONG_WORD`] bytes, its middle replaced by
/// `… N bytes cut …`.
fn cut_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(64 * 1024));
    let mut rest = text;
    while !rest.is_empty() {
        let word_start = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..word_start]);
        rest = &rest[word_start..];
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.len() > LONG_WORD {
            let head = floor(word, WORD_KEPT);
            let tail = ceil(word, word.len() - WORD_KEPT);
            out.push_str(&word[..head]);
            out.push_str(&marker(tail - head));
            out.push_str(&word[tail..]);
        } else {
            out.push_str(word);
        }
        rest = &rest[word_end..];
    }
    out
}

/// The head and tail of `text`, `… N bytes cut …` between them, `max` bytes at most.
fn cut_middle(text: &str, max: usize) -> String {
    // The marker's own length depends on N: reserve for the longest it can be.
    let room = max.saturating_sub(marker(text.len()).len());
    let head = floor(text, room - room / 2);
    let tail = ceil(text, text.len() - room / 2);
    let mut out = String::with_capacity(max);
    out.push_str(&text[..head]);
    out.push_str(&marker(tail - head));
    out.push_str(&text[tail..]);
    out
}

fn marker(n: usize) -> String {
    format!("… {n} bytes cut …")
}

/// The largest char boundary of `s` at or below `i`.
fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary of `s` at or above `i`.
fn ceil(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `pointer` as shown in a diagnostic: cut to [`MAX_POINTER_SHOWN`] characters, with `...`
/// and its length when cut.
pub fn shown_pointer(pointer: &str) -> String {
    if pointer.len() <= MAX_POINTER_SHOWN {
        return pointer.to_string();
    }
    let mut cut = MAX_POINTER_SHOWN;
    while !pointer.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}... ({} bytes)", &pointer[..cut], pointer.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_says_how_many_bytes_it_took_out() {
        let text = "a".repeat(300) + " " + &"b".repeat(300) + " " + &"c".repeat(300);
        let got = cut(&text, 200);
        assert!(got.len() <= 200, "{}", got.len());
        let n: usize = got
            .split("… ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|s| s.parse().ok())
            .expect("a marker with a count");
        let kept = got.len() - marker(n).len();
        assert_eq!(kept + n, text.len(), "{got}");
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        // Multi-byte characters everywhere: every cut must land between them.
        for (text, bound) in [
            ("é".repeat(5000), 1000),
            ("日本語 ".repeat(3000), 777),
            ("🦀".repeat(1000), 101),
            (format!("x {} y", "ü".repeat(2000)), 300),
        ] {
            let got = cut(&text, bound);
            assert!(got.len() <= bound, "{} > {bound}", got.len());
            // Being a String at all proves the boundaries; the ends are the text's own.
            assert_eq!(got.chars().next(), text.chars().next());
            assert_eq!(got.chars().last(), text.chars().last());
        }
    }

    #[test]
    fn a_long_pointer_is_cut_on_a_character_boundary() {
        let long = format!("/{}", "é".repeat(500));
        let shown = shown_pointer(&long);
        assert!(shown.len() < MAX_POINTER_SHOWN + 30, "{shown}");
        assert!(shown.ends_with("... (1001 bytes)"), "{shown}");
        assert_eq!(shown_pointer("/a/b"), "/a/b");
    }
}
