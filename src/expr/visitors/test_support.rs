//! Test helpers for the evaluators: `data_file` structs with metrics maps,
//! metrics computed from column values the way writers compute them
//! (truncated string bounds, promoted widths, missing counts), and a
//! reference three-valued evaluator of filters on single rows.

use std::cmp::Ordering;
use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, Int32Builder, Int64Builder, MapBuilder};
use arrow_array::{ArrayRef, Int64Array, StringArray, StructArray};
use arrow_schema::{Field, Fields};

use crate::expr::bind::bind;
use crate::expr::json::parse;
use crate::expr::literal::{compare, Datum};
use crate::expr::predicate::{Bound, BoundPredicate, BoundReference, BoundTerm, Expr, Op};
use crate::spec::schema::Schema;
use crate::types::PrimitiveType;
use crate::values::{self, Literal};

/// A schema with a column of each kind the tests need.
pub const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
    {"id":1,"name":"id","required":true,"type":"long"},
    {"id":2,"name":"s","required":false,"type":"string"},
    {"id":3,"name":"f","required":false,"type":"double"},
    {"id":4,"name":"i","required":false,"type":"int"},
    {"id":5,"name":"d","required":false,"type":"decimal(9,2)"},
    {"id":6,"name":"u","required":false,"type":"uuid"},
    {"id":7,"name":"st","required":false,"type":{"type":"struct","fields":[
        {"id":8,"name":"a","required":false,"type":"int"}]}},
    {"id":9,"name":"ts","required":false,"type":"timestamp"},
    {"id":10,"name":"b","required":false,"type":"binary"},
    {"id":11,"name":"late","required":false,"type":"int","initial-default":7},
    {"id":12,"name":"l","required":false,"type":{"type":"list","element-id":13,
        "element":"int","element-required":false}},
    {"id":14,"name":"n","required":false,"type":"unknown"}]}"#;

pub fn schema() -> Schema {
    Schema::parse(SCHEMA).unwrap()
}

pub fn filter(json: &str) -> Bound {
    bind(&parse(json).unwrap(), &schema(), true).unwrap()
}

/// The metrics of one data file. A `None` map is a null map for the file.
#[derive(Debug, Clone, Default)]
pub struct File {
    pub path: String,
    pub record_count: Option<i64>,
    pub value_counts: Option<Vec<(i32, i64)>>,
    pub null_counts: Option<Vec<(i32, i64)>>,
    pub nan_counts: Option<Vec<(i32, i64)>>,
    pub lower: Option<Vec<(i32, Vec<u8>)>>,
    pub upper: Option<Vec<(i32, Vec<u8>)>>,
}

impl File {
    pub fn rows(n: i64) -> Self {
        File {
            path: "f.parquet".into(),
            record_count: Some(n),
            value_counts: Some(vec![]),
            null_counts: Some(vec![]),
            nan_counts: Some(vec![]),
            lower: Some(vec![]),
            upper: Some(vec![]),
        }
    }

    /// Sets the counts of column `id` (None leaves it out).
    pub fn counts(
        mut self,
        id: i32,
        values: Option<i64>,
        nulls: Option<i64>,
        nans: Option<i64>,
    ) -> Self {
        for (map, v) in [
            (&mut self.value_counts, values),
            (&mut self.null_counts, nulls),
            (&mut self.nan_counts, nans),
        ] {
            if let (Some(map), Some(v)) = (map.as_mut(), v) {
                map.push((id, v));
            }
        }
        self
    }

    /// Sets the bounds of column `id` from values of type `ty`.
    pub fn bounds(
        mut self,
        id: i32,
        ty: PrimitiveType,
        lower: Option<Literal>,
        upper: Option<Literal>,
    ) -> Self {
        let bytes = |v: Literal| values::to_bytes(&ty, &v).unwrap();
        if let (Some(map), Some(v)) = (self.lower.as_mut(), lower) {
            map.push((id, bytes(v)));
        }
        if let (Some(map), Some(v)) = (self.upper.as_mut(), upper) {
            map.push((id, bytes(v)));
        }
        self
    }

    /// Sets raw bound bytes of column `id`.
    pub fn raw_bounds(mut self, id: i32, lower: Option<Vec<u8>>, upper: Option<Vec<u8>>) -> Self {
        if let (Some(map), Some(v)) = (self.lower.as_mut(), lower) {
            map.push((id, v));
        }
        if let (Some(map), Some(v)) = (self.upper.as_mut(), upper) {
            map.push((id, v));
        }
        self
    }
}

fn count_map(files: &[File], get: impl Fn(&File) -> &Option<Vec<(i32, i64)>>) -> ArrayRef {
    let mut b = MapBuilder::new(None, Int32Builder::new(), Int64Builder::new());
    for f in files {
        match get(f) {
            Some(entries) => {
                for (k, v) in entries {
                    b.keys().append_value(*k);
                    b.values().append_value(*v);
                }
                b.append(true).unwrap();
            }
            None => b.append(false).unwrap(),
        }
    }
    Arc::new(b.finish())
}

fn bound_map(files: &[File], get: impl Fn(&File) -> &Option<Vec<(i32, Vec<u8>)>>) -> ArrayRef {
    let mut b = MapBuilder::new(None, Int32Builder::new(), BinaryBuilder::new());
    for f in files {
        match get(f) {
            Some(entries) => {
                for (k, v) in entries {
                    b.keys().append_value(*k);
                    b.values().append_value(v);
                }
                b.append(true).unwrap();
            }
            None => b.append(false).unwrap(),
        }
    }
    Arc::new(b.finish())
}

/// A `data_file` struct holding `files`, without the maps named in `omit`.
pub fn data_files(files: &[File], omit: &[&str]) -> StructArray {
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "file_path",
            Arc::new(StringArray::from_iter_values(
                files.iter().map(|f| f.path.clone()),
            )),
        ),
        (
            "record_count",
            Arc::new(Int64Array::from_iter(files.iter().map(|f| f.record_count))),
        ),
        ("value_counts", count_map(files, |f| &f.value_counts)),
        ("null_value_counts", count_map(files, |f| &f.null_counts)),
        ("nan_value_counts", count_map(files, |f| &f.nan_counts)),
        ("lower_bounds", bound_map(files, |f| &f.lower)),
        ("upper_bounds", bound_map(files, |f| &f.upper)),
    ];
    let columns: Vec<(&str, ArrayRef)> = columns
        .into_iter()
        .filter(|(n, _)| !omit.contains(n))
        .collect();
    let fields: Fields = columns
        .iter()
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    StructArray::try_new(fields, columns.into_iter().map(|(_, c)| c).collect(), None).unwrap()
}

/// A bound predicate on a column.
pub fn pred(op: Op, id: i32, ty: PrimitiveType, literals: Vec<Literal>) -> Bound {
    let term = BoundTerm::Reference(BoundReference {
        field_id: id,
        name: format!("c{id}"),
        ty,
        required: false,
    });
    let datum = |v: Literal| Datum { ty, value: v };
    Expr::Predicate(if op.is_unary() {
        BoundPredicate::Unary { op, term }
    } else if op.is_set() {
        let mut literals: Vec<Datum> = literals.into_iter().map(datum).collect();
        literals.sort_by(|a, b| a.cmp_value(b));
        literals.dedup_by(|a, b| a.cmp_value(b) == Ordering::Equal);
        BoundPredicate::Set { op, term, literals }
    } else {
        BoundPredicate::Literal {
            op,
            term,
            literal: datum(literals.into_iter().next().expect("one literal")),
        }
    })
}

fn is_nan(v: &Literal) -> bool {
    matches!(v, Literal::Float(f) if f.is_nan()) || matches!(v, Literal::Double(f) if f.is_nan())
}

/// A predicate on one value, written independently of the kernels: a null
/// satisfies IS NULL, IS NOT NAN and the negative operations (`!=`,
/// `NOT IN`, `NOT STARTS WITH`) only. Floats: NaN fails every comparison but
/// `!=` and `NOT IN`; -0.0 < 0.0.
pub fn leaf(p: &BoundPredicate, value: Option<&Literal>) -> Option<bool> {
    let op = p.op();
    let Some(v) = value else {
        return Some(matches!(
            op,
            Op::IsNull | Op::NotNan | Op::NotEq | Op::NotIn | Op::NotStartsWith
        ));
    };
    Some(match p {
        BoundPredicate::Unary { .. } => match op {
            Op::IsNull => false,
            Op::NotNull => true,
            Op::IsNan => is_nan(v),
            _ => !is_nan(v),
        },
        BoundPredicate::Literal { literal, .. } => match (op, v, &literal.value) {
            (Op::StartsWith, Literal::String(s), Literal::String(p)) => s.starts_with(p.as_str()),
            (Op::NotStartsWith, Literal::String(s), Literal::String(p)) => {
                !s.starts_with(p.as_str())
            }
            (Op::NotEq, _, _) if is_nan(v) => true,
            _ if is_nan(v) => false,
            _ => {
                let ord = compare(v, &literal.value);
                match op {
                    Op::Lt => ord == Ordering::Less,
                    Op::LtEq => ord != Ordering::Greater,
                    Op::Gt => ord == Ordering::Greater,
                    Op::GtEq => ord != Ordering::Less,
                    Op::Eq => ord == Ordering::Equal,
                    _ => ord != Ordering::Equal,
                }
            }
        },
        BoundPredicate::Set { literals, .. } => {
            let found = !is_nan(v)
                && literals
                    .iter()
                    .any(|l| compare(v, &l.value) == Ordering::Equal);
            (op == Op::In) == found
        }
    })
}

/// Evaluation of `expr` on a row (`row(field_id)` its value). NOT negates
/// the operation beneath it; a null takes the negated operation's rule,
/// a value the negation of the predicate's answer. Always `Some`.
pub fn eval_row<'a>(expr: &Bound, row: &impl Fn(i32) -> Option<&'a Literal>) -> Option<bool> {
    fn eval<'a>(expr: &Bound, row: &impl Fn(i32) -> Option<&'a Literal>, neg: bool) -> bool {
        match expr {
            Expr::True => !neg,
            Expr::False => neg,
            Expr::And(items) if neg => items.iter().any(|e| eval(e, row, true)),
            Expr::And(items) => items.iter().all(|e| eval(e, row, false)),
            Expr::Or(items) if neg => items.iter().all(|e| eval(e, row, true)),
            Expr::Or(items) => items.iter().any(|e| eval(e, row, false)),
            Expr::Not(a) => eval(a, row, !neg),
            Expr::Predicate(p) => match row(p.term().field_id()) {
                None if neg => leaf(&p.negate(), None) == Some(true),
                v => (leaf(p, v) == Some(true)) != neg,
            },
        }
    }
    Some(eval(expr, row, false))
}

/// How a writer records a column's bounds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Writer {
    /// Truncate string and binary bounds to this many code points / bytes.
    pub truncate: Option<usize>,
    /// Write long / double / timestamp bounds in the 4-byte width of an int
    /// / float / date (as before a promotion; values must fit).
    pub narrow: bool,
}

/// The (lower, upper) bound bytes of non-null, non-NaN `values` of `ty`,
/// as `writer` records them; None when there is none.
pub fn bounds_of(
    ty: PrimitiveType,
    values: &[Option<Literal>],
    writer: Writer,
) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    let mut real: Vec<&Literal> = values.iter().flatten().filter(|v| !is_nan(v)).collect();
    real.sort_by(|a, b| compare(a, b));
    let (Some(lo), Some(hi)) = (real.first(), real.last()) else {
        return (None, None);
    };
    let (lo, hi) = ((*lo).clone(), (*hi).clone());
    let encode = |v: &Literal| -> Vec<u8> {
        match (v, writer.narrow) {
            (Literal::Long(x), true) => (*x as i32).to_le_bytes().to_vec(),
            (Literal::Double(x), true) => (*x as f32).to_le_bytes().to_vec(),
            (Literal::Timestamp(x), true) => {
                ((x / values::MICROS_PER_DAY) as i32).to_le_bytes().to_vec()
            }
            _ => values::to_bytes(&ty, v).unwrap(),
        }
    };
    match (writer.truncate, &lo, &hi) {
        (Some(w), Literal::String(l), Literal::String(h)) => {
            let lower: String = l.chars().take(w).collect();
            let upper = truncate_upper(h, w);
            (Some(lower.into_bytes()), upper.map(String::into_bytes))
        }
        _ => (Some(encode(&lo)), Some(encode(&hi))),
    }
}

/// Java's `truncateStringMax`: the first `w` code points with the last one
/// that can be incremented incremented (skipping surrogates), or None.
pub fn truncate_upper(s: &str, w: usize) -> Option<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.len() <= w {
        return Some(s.to_owned());
    }
    let mut cut: Vec<char> = chars[..w].to_vec();
    while let Some(last) = cut.pop() {
        let next = match last as u32 + 1 {
            0xD800 => Some('\u{E000}'),
            n => char::from_u32(n),
        };
        if let Some(c) = next {
            cut.push(c);
            return Some(cut.into_iter().collect());
        }
    }
    None
}
