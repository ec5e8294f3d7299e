//! The same checks for Go templates, on the parse tree of [`gotmpl`] (Go's own grammar).
//!
//! - a template that does not parse is reported at its line and column;
//! - `.Params.X...` where the dot is the render context (outside `range` and `with`), and
//!   `$.Params.X...` anywhere, are checked against the schema like Handlebars paths (every
//!   step, with a did-you-mean);
//! - a field of the render context it does not have (`.Nmae`) is an error, as KUDO's
//!   `missingkey=error` makes it one at install time;
//! - a function that is neither Go's nor sprig's is an error (Go refuses it when parsing), and
//!   one of sprig's that kudo does not implement says so;
//! - every parameter a template reaches is used: a `range` or `with` over a parameter uses all
//!   of it (its items are read through the dot, which is not followed).

use gotmpl::parse::{CommandNode, Expr, ListNode, Node, PipeNode};

use super::{Scanner, Usage};
use kudo_diag::diag::{Code, Diagnostic, Location, Origin};

/// Go's builtin functions.
const BUILTINS: [&str; 20] = [
    "and", "call", "eq", "ge", "gt", "html", "index", "js", "le", "len", "lt", "ne", "not", "or",
    "print", "printf", "println", "slice", "urlquery", "break",
];

/// The names of KUDO's render context: Handlebars' and `Pipes`.
const CONTEXT: [&str; 10] = {
    let mut names = ["Pipes"; 10];
    let mut i = 0;
    while i < super::CONTEXT.len() {
        names[i] = super::CONTEXT[i];
        i += 1;
    }
    names
};

impl Scanner<'_> {
    /// Checks a parsed Go template (its source is `text`).
    pub(super) fn go_template(&mut self, text: &str, template: &gotmpl::Template) {
        let mut go = Go {
            text,
            functions: kudo_sprig::funcs(),
            depth: 0,
        };
        for name in template.templates() {
            if let Some(tree) = template.lookup(name) {
                go.list(self, tree);
            }
        }
    }

    fn error(&mut self, code: Code, message: String) {
        self.diags.push(
            Diagnostic::error(code, "", message).with_origin(Origin::File(Location {
                path: self.file.clone(),
                line: self.at.0,
                col: self.at.1.max(1),
            })),
        );
    }
}

struct Go<'t> {
    text: &'t str,
    functions: &'t gotmpl::FuncMap,
    /// How many `range`/`with` blocks the walk is in (the dot is the render context at 0).
    depth: usize,
}

impl Go<'_> {
    /// Line and column (1-based) of a byte offset.
    fn at(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, col)
    }

    fn list(&mut self, s: &mut Scanner<'_>, list: &ListNode) {
        for node in &list.nodes {
            self.node(s, node);
        }
    }

    fn node(&mut self, s: &mut Scanner<'_>, node: &Node) {
        match node {
            Node::List(l) => self.list(s, l),
            Node::Action(a) => self.pipe(s, &a.pipe),
            Node::If(b) => {
                self.pipe(s, &b.pipe);
                self.list(s, &b.body);
                if let Some(e) = &b.else_body {
                    self.list(s, e);
                }
            }
            Node::Range(b) | Node::With(b) => {
                self.pipe(s, &b.pipe);
                self.depth += 1;
                self.list(s, &b.body);
                self.depth -= 1;
                if let Some(e) = &b.else_body {
                    self.list(s, e);
                }
            }
            Node::Template(t) => {
                if let Some(p) = &t.pipe {
                    self.pipe(s, p);
                }
            }
            Node::Define(d) => self.list(s, &d.body),
            Node::Text(_) | Node::Break(_) | Node::Continue(_) => {}
        }
    }

    fn pipe(&mut self, s: &mut Scanner<'_>, pipe: &PipeNode) {
        for c in &pipe.commands {
            self.command(s, c);
        }
    }

    fn command(&mut self, s: &mut Scanner<'_>, c: &CommandNode) {
        for arg in &c.args {
            self.expr(s, arg);
        }
    }

    fn expr(&mut self, s: &mut Scanner<'_>, e: &Expr) {
        match e {
            Expr::Field(pos, names) => {
                if self.depth > 0 {
                    return;
                }
                s.at = self.at(pos.offset);
                self.context_path(s, names, &format!(".{}", names.join(".")));
            }
            Expr::Variable(pos, var, names) if var == "$" && !names.is_empty() => {
                s.at = self.at(pos.offset);
                self.context_path(s, names, &format!("$.{}", names.join(".")));
            }
            Expr::Identifier(pos, name) => {
                let name = name.as_str();
                if BUILTINS.contains(&name) || self.functions.contains_key(name) {
                    return;
                }
                s.at = self.at(pos.offset);
                let message = if kudo_sprig::SPRIG_NAMES.contains(&name) {
                    format!(
                        "template {} calls sprig's `{name}`, which kudo does not implement",
                        s.name
                    )
                } else {
                    format!(
                        "template {} calls `{name}`: function \"{name}\" not defined",
                        s.name
                    )
                };
                s.error(Code::Template, message);
            }
            Expr::Pipe(_, p) => self.pipe(s, p),
            Expr::Chain(_, inner, _) => self.expr(s, inner),
            _ => {}
        }
    }

    /// A path from the render context: `Params...` is checked against the schema, anything
    /// else must be a name of the context.
    fn context_path(&mut self, s: &mut Scanner<'_>, names: &[gotmpl::parse::SmolStr], raw: &str) {
        let Some(first) = names.first() else {
            return;
        };
        if first == "Params" {
            let rest: Vec<&str> = names[1..].iter().map(|n| n.as_str()).collect();
            s.params_path(Vec::new(), &rest, Usage::Value, raw);
        } else if !CONTEXT.contains(&first.as_str()) {
            s.unknown_context_name(first, raw, &CONTEXT);
        }
    }
}
