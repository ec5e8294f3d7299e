//! Rendering for people: diagnostics on stderr with the source line they point at (miette),
//! plain when stderr is not a terminal or `NO_COLOR` is set.

use std::fmt;
use std::io::IsTerminal;

use crate::error::Error;
use crate::sources::Sources;
use kudo_diag::diag::Whence;
use kudo_diag::{Diagnostic, Severity};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan};

/// One kudo diagnostic, as miette sees it.
struct Report<'a> {
    diag: &'a Diagnostic,
    source: Option<(NamedSource<String>, SourceSpan)>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.diag;
        let at = kudo_diag::cut::shown_pointer(&d.pointer);
        if at.is_empty() {
            write!(f, "{}", d.message)?;
        } else {
            write!(f, "{at}: {}", d.message)?;
        }
        if let Some(v) = &d.value {
            write!(f, ", got {v}")?;
        }
        // A file origin is left out when the snippet below names the file and line.
        write!(f, "{}", Whence(d, self.source.is_none()))?;
        // The code ends the first line, as in the webhook's messages (`[unknown-parameter]`).
        write!(f, " [{}]", d.code)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.diag
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source
            .as_ref()
            .map(|(s, _)| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let (_, span) = self.source.as_ref()?;
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            None, *span,
        ))))
    }
}

fn handler() -> GraphicalReportHandler {
    let plain = !std::io::stderr().is_terminal() || std::env::var_os("NO_COLOR").is_some();
    let theme = if plain {
        GraphicalTheme::unicode_nocolor()
    } else {
        GraphicalTheme::unicode()
    };
    // Lines wrap between words only: never inside a code, a pointer or a hyphenated word.
    GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_break_words(false)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
}

/// Renders diagnostics to a string, errors and warnings, followed by a count: at most
/// [`kudo_policy::limits::MAX_PROBLEMS`], then how many more ([`kudo_policy::limits::bounded`]).
pub fn render(diags: &[Diagnostic], mut sources: Sources) -> String {
    let h = handler();
    let mut out = String::new();
    let diags = &kudo_policy::limits::bounded(diags.to_vec());
    for d in diags {
        // A secret's line would show the secret: no snippet for masked values.
        let source = match d.value {
            Some(kudo_diag::Shown::Masked) => None,
            _ => sources.span(&d.origin),
        };
        let r = Report { diag: d, source };
        if h.render_report(&mut out, &r).is_err() {
            out.push_str(&d.to_string());
            out.push('\n');
        }
    }
    let (errors, warnings) = kudo_policy::limits::counts(diags);
    if errors > 0 {
        out.push_str(&format!("{errors} error(s), {warnings} warning(s)\n"));
    }
    out
}

/// Prints diagnostics on stderr.
pub fn diagnostics(diags: &[Diagnostic]) {
    diagnostics_with(diags, Sources::default());
}

/// Prints diagnostics on stderr, keeping snippets away from the secret lines of `sources`.
pub fn diagnostics_with(diags: &[Diagnostic], sources: Sources) {
    if !diags.is_empty() {
        eprint!("{}", render(diags, sources));
    }
}

/// Prints the error that stopped a command on stderr: parameter problems as diagnostics, a
/// usage error as clap prints its own, an interruption as it is, anything else after `error: `.
/// The commands an error quotes (`` `kudo repo list` ``) name the program as it was called.
pub fn error(e: Error) {
    let shown = |text: String| crate::program::quoted_commands(&text, crate::program::shown());
    match e {
        Error::Diff(e) => error(*e),
        Error::Parameters { diags, sources } => diagnostics_with(&diags, sources),
        Error::Usage(message) => {
            eprintln!(
                "error: {}\n\nFor more information, try '--help'.",
                shown(message)
            )
        }
        e @ Error::Interrupted => eprintln!("{e}"),
        e => eprintln!("error: {}", shown(e.to_string())),
    }
}
