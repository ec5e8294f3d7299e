//! `kudo package list parameters`: the rows come from `kudo_pkg::listing`; this module draws
//! the tree and the table.

use std::io::IsTerminal;

use comfy_table::{Cell, ColumnConstraint, ContentArrangement, Table, Width, presets};
use kudo_pkg::listing::{self, Row, TriggerSource};

use super::Outcome;
use crate::args::{ListFormat, ListParametersArgs};
use crate::error::Error;

pub fn parameters(a: ListParametersArgs) -> Result<Outcome, Error> {
    let pkg = super::load_with(&a.package, &a.source)?.package;
    let plans: Vec<&str> = pkg.operator().plans.keys().map(String::as_str).collect();
    let mut rows = listing::rows(pkg.schema(), &plans);
    if a.required {
        rows = only_required(rows);
    }
    let out = if a.names {
        rows.iter().map(|r| format!("{}\n", r.pointer)).collect()
    } else {
        match a.output {
            ListFormat::Table => table(&rows, &a),
            ListFormat::Json => format!(
                "{}\n",
                serde_json::to_string_pretty(&rows).unwrap_or_default()
            ),
            ListFormat::Yaml => super::to_yaml(&serde_json::to_value(&rows).unwrap_or_default()),
            ListFormat::JsonSchema => format!(
                "{}\n",
                serde_json::to_string_pretty(&pkg.schema().to_params_file()).unwrap_or_default()
            ),
        }
    };
    super::print(&out)?;
    Ok(Outcome::Done)
}

/// Required rows, with the rows of the objects they are in (so the tree still reads).
fn only_required(rows: Vec<Row>) -> Vec<Row> {
    let keep: Vec<String> = rows
        .iter()
        .filter(|r| r.required)
        .map(|r| r.pointer.clone())
        .collect();
    let kept: Vec<Row> = rows
        .into_iter()
        .filter(|r| {
            keep.iter()
                .any(|k| k == &r.pointer || k.starts_with(&format!("{}/", r.pointer)))
        })
        .collect();
    relink(kept)
}

/// Recomputes which rows are the last of their siblings after filtering.
fn relink(mut rows: Vec<Row>) -> Vec<Row> {
    for i in 0..rows.len() {
        let depth = rows[i].depth;
        let has_next_sibling = rows[i + 1..]
            .iter()
            .take_while(|r| r.depth >= depth)
            .any(|r| r.depth == depth);
        let mut last = rows[i].last.clone();
        last[depth] = !has_next_sibling;
        // Ancestors' flags are those of the ancestor rows already fixed.
        for (level, flag) in last.iter_mut().enumerate().take(depth) {
            if let Some(a) = rows[..i].iter().rev().find(|r| r.depth == level) {
                *flag = a.last[level];
            }
        }
        rows[i].last = last;
    }
    rows
}

/// `├─ name`, `│  └─ name`: the tree column.
fn tree_cell(r: &Row) -> String {
    let mut s = String::new();
    for (level, last) in r.last.iter().enumerate() {
        if level < r.depth {
            s.push_str(if *last { "   " } else { "│  " });
        } else {
            s.push_str(if *last { "└─ " } else { "├─ " });
        }
    }
    s.push_str(&r.name);
    if r.deprecated.is_some() {
        s.push_str(" (deprecated)");
    }
    s
}

fn trigger_cell(r: &Row) -> String {
    let plan = r.trigger.clone().unwrap_or_default();
    match &r.trigger_source {
        TriggerSource::Own => plan,
        TriggerSource::Inherited(_) => format!("↑ {plan}"),
        TriggerSource::Fallback => format!("({plan})"),
        TriggerSource::Unknown => format!("{plan} (no such plan)"),
    }
}

fn immutable_cell(r: &Row) -> &'static str {
    match (r.immutable, &r.immutable_from) {
        (true, _) => "yes",
        (false, Some(_)) => "↑ yes",
        (false, None) => "",
    }
}

/// A default as shown (compact JSON, masked when secret) with a space after each `,` and `:`
/// outside strings (`[{"a": 1, "b": 2}]`), so that a table wraps it between values, never
/// inside one.
fn spaced(shown: &kudo_diag::Shown) -> String {
    let kudo_diag::Shown::Value(text) = shown else {
        return shown.to_string();
    };
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        out.push(c);
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if c == ',' || c == ':' {
            out.push(' ');
        }
    }
    out
}

/// The width (in characters) of the longest whitespace-separated word of `texts`.
fn longest_word<'a>(texts: impl Iterator<Item = &'a str>) -> u16 {
    let longest = texts
        .flat_map(str::split_whitespace)
        .map(|w| w.chars().count())
        .max()
        .unwrap_or(0);
    u16::try_from(longest).unwrap_or(u16::MAX - 2)
}

fn table(rows: &[Row], a: &ListParametersArgs) -> String {
    let terminal = std::io::stdout().is_terminal();
    let mut t = Table::new();
    if terminal {
        t.load_preset(presets::UTF8_FULL_CONDENSED);
    } else {
        t.load_preset(presets::NOTHING);
    }
    match a.width {
        Some(w) => {
            t.set_width(w);
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None if terminal => {
            t.set_content_arrangement(ContentArrangement::Dynamic);
        }
        None => {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    let mut header = vec![
        "PARAMETER",
        "TYPE",
        "DEFAULT",
        "REQUIRED",
        "TRIGGER",
        "IMMUTABLE",
    ];
    if a.descriptions {
        header.push("DESCRIPTION");
    }
    t.set_header(header);
    let defaults: Vec<String> = rows
        .iter()
        .map(|r| r.default.as_ref().map(spaced).unwrap_or_default())
        .collect();
    for (r, default) in rows.iter().zip(&defaults) {
        let mut cells = vec![
            Cell::new(tree_cell(r)),
            Cell::new(&r.type_name),
            Cell::new(default),
            Cell::new(if r.required { "yes" } else { "" }),
            Cell::new(trigger_cell(r)),
            Cell::new(immutable_cell(r)),
        ];
        if a.descriptions {
            cells.push(Cell::new(r.description.clone().unwrap_or_default()));
        }
        t.add_row(cells);
    }
    // The tree and the short columns never wrap; the default is capped when descriptions are
    // shown; the description (or else the default) takes what is left and wraps.
    for i in [0, 1, 3, 4, 5] {
        if let Some(c) = t.column_mut(i) {
            c.set_constraint(ColumnConstraint::ContentWidth);
        }
    }
    // Below these the table may be wider than asked: the tree is never cut, and a cell wraps
    // only between words (a column is never narrower than its longest word).
    // (a column's width counts its padding, one space on each side)
    let default_min = (longest_word(defaults.iter().map(String::as_str)) + 2).max(16);
    if let Some(c) = t.column_mut(2) {
        c.set_constraint(if a.descriptions {
            ColumnConstraint::Boundaries {
                lower: Width::Fixed(default_min),
                upper: Width::Fixed(default_min.max(24)),
            }
        } else {
            ColumnConstraint::LowerBoundary(Width::Fixed(default_min))
        });
    }
    let description_min =
        (longest_word(rows.iter().filter_map(|r| r.description.as_deref())) + 2).max(20);
    if let Some(c) = t.column_mut(6) {
        c.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(
            description_min,
        )));
    }
    let mut out = t.trim_fmt();
    out.push_str("\n\n↑ inherited from an enclosing parameter; (plan) no trigger: the operator's fallback plan\n");
    out
}
