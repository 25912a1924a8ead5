//! Expressions as JSON, in the form of Java's `ExpressionParser` (the REST
//! catalog's and Appendix C's `residual-filter`):
//!
//! - `true` / `false`;
//! - `{"type": "and" | "or", "left": .., "right": ..}`, `{"type": "not", "child": ..}`;
//! - `{"type": "lt", "term": "id", "value": 5}`, `{"type": "in", "term": .., "values": [..]}`,
//!   `{"type": "is-null", "term": ..}`; a term is a column name or
//!   `{"type": "transform", "transform": "bucket[16]", "term": "id"}`.
//!
//! Bound expressions write their values in the Appendix D JSON form of the
//! term's type, as Java does. Unbound values are read as JSON gives them
//! (numbers, booleans, strings taken as Appendix D text of the column's
//! type); a value may also be a tagged object `{"@": kind, "v": payload}`
//! that carries what JSON cannot (frazil's Python API sends these):
//! `int` (decimal text), `float` (number or `"inf"`, `"-inf"`, `"nan"`),
//! `string`, `binary` (hex), `decimal` (text), `date` (days), `time`
//! (microseconds), `timestamp` / `timestamptz` (microseconds), `uuid` (text),
//! `bool`.

use serde_json::{json, Map, Value};

use super::literal::UnboundLiteral;
use super::predicate::{
    Bound, BoundPredicate, BoundTerm, Expr, Op, Unbound, UnboundPredicate, UnboundTerm,
};
use crate::error::{Error, Result};
use crate::transform::Transform;
use crate::values;

fn bad(what: &str, json: &Value) -> Error {
    Error::Validation(format!("invalid expression JSON ({what}): {json}"))
}

/// Parses Java's expression JSON into an unbound expression.
pub fn from_json(json: &Value) -> Result<Unbound> {
    if let Value::Bool(b) = json {
        return Ok(if *b { Expr::True } else { Expr::False });
    }
    let object = json
        .as_object()
        .ok_or_else(|| bad("expected an object or a boolean", json))?;
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("missing \"type\"", json))?;
    let child = |key: &str| -> Result<Unbound> {
        from_json(
            object
                .get(key)
                .ok_or_else(|| bad(&format!("missing {key:?}"), json))?,
        )
    };
    match kind.to_ascii_lowercase().as_str() {
        "true" => return Ok(Expr::True),
        "false" => return Ok(Expr::False),
        "literal" => {
            return match object.get("value").and_then(Value::as_bool) {
                Some(true) => Ok(Expr::True),
                Some(false) => Ok(Expr::False),
                None => Err(bad("a literal expression needs a boolean value", json)),
            }
        }
        "and" => return Ok(joined(child("left")?, child("right")?, true)),
        "or" => return Ok(joined(child("left")?, child("right")?, false)),
        "not" => return Ok(Expr::Not(Box::new(child("child")?))),
        _ => {}
    }
    let op =
        Op::from_json_name(kind).ok_or_else(|| bad(&format!("unknown type {kind:?}"), json))?;
    let term = term_from_json(
        object
            .get("term")
            .ok_or_else(|| bad("missing \"term\"", json))?,
    )?;
    let literals = if op.is_unary() {
        if object.contains_key("value") || object.contains_key("values") {
            return Err(bad(&format!("{kind} takes no value"), json));
        }
        Vec::new()
    } else if op.is_set() {
        object
            .get("values")
            .and_then(Value::as_array)
            .ok_or_else(|| bad(&format!("{kind} needs a \"values\" array"), json))?
            .iter()
            .map(literal_from_json)
            .collect::<Result<_>>()?
    } else {
        vec![literal_from_json(object.get("value").ok_or_else(
            || bad(&format!("{kind} needs a \"value\""), json),
        )?)?]
    };
    Ok(Expr::Predicate(UnboundPredicate { op, term, literals }))
}

/// `left AND right` (or OR): binary in JSON, n-ary in memory, so a chain
/// however it was nested (Java writes `a AND b AND c` left-deep, frazil
/// balanced) becomes one node. Constants are kept as written (binding folds
/// them), so that the unbound expression reads back as it was written.
fn joined(left: Unbound, right: Unbound, and: bool) -> Unbound {
    let mut items = match left {
        Expr::And(items) if and => items,
        Expr::Or(items) if !and => items,
        other => vec![other],
    };
    match right {
        Expr::And(more) if and => items.extend(more),
        Expr::Or(more) if !and => items.extend(more),
        other => items.push(other),
    }
    if and {
        Expr::And(items)
    } else {
        Expr::Or(items)
    }
}

/// How deep expression JSON may nest (objects and arrays), below serde_json's
/// own limit (128) so that a deeper text gets this error rather than a
/// parse error. frazil writes an AND or OR chain of n operands as a
/// balanced tree, ceil(log2 n) levels, so only nesting (parentheses, NOT,
/// AND under OR under AND ...) comes near it; the Python model refuses
/// expressions deeper than 100 levels before they get here.
pub const MAX_JSON_DEPTH: usize = 120;

/// Parses expression JSON text.
pub fn parse(text: &str) -> Result<Unbound> {
    check_depth(text, MAX_JSON_DEPTH, "the expression")?;
    let json: Value = serde_json::from_str(text)
        .map_err(|e| Error::Validation(format!("expression is not valid JSON: {e}")))?;
    from_json(&json)
}

/// Refuses JSON text nested deeper than `limit`, naming `what` and the limit.
pub fn check_depth(text: &str, limit: usize, what: &str) -> Result<()> {
    let depth = crate::json::depth(text);
    if depth > limit {
        return Err(Error::Validation(format!(
            "{what} is nested too deeply: its JSON nests {depth} levels, at most {limit} are \
             supported (an AND or OR chain of n terms takes log2(n) levels when written as a \
             balanced tree, as frazil writes it; parentheses and NOT one level each)"
        )));
    }
    Ok(())
}

fn term_from_json(json: &Value) -> Result<UnboundTerm> {
    match json {
        Value::String(name) => Ok(UnboundTerm::Reference(name.clone())),
        Value::Object(o) => {
            let kind = o.get("type").and_then(Value::as_str);
            let name = o
                .get("term")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("a term object needs a \"term\" name", json))?;
            match kind {
                Some("reference") | Some("ref") => Ok(UnboundTerm::Reference(name.to_owned())),
                Some("transform") => {
                    let text = o
                        .get("transform")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad("a transform term needs \"transform\"", json))?;
                    Ok(UnboundTerm::Transform(
                        Transform::parse(text)?,
                        name.to_owned(),
                    ))
                }
                _ => Err(bad("unknown term type", json)),
            }
        }
        _ => Err(bad("a term is a name or an object", json)),
    }
}

fn literal_from_json(json: &Value) -> Result<UnboundLiteral> {
    match json {
        Value::Bool(b) => Ok(UnboundLiteral::Boolean(*b)),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(UnboundLiteral::Int(i128::from(i)))
            } else if let Some(u) = n.as_u64() {
                Ok(UnboundLiteral::Int(i128::from(u)))
            } else {
                n.as_f64()
                    .map(UnboundLiteral::Float)
                    .ok_or_else(|| bad("a number out of range", json))
            }
        }
        Value::String(s) => Ok(UnboundLiteral::Json(s.clone())),
        Value::Object(o) if o.contains_key("@") => tagged_literal(o, json),
        _ => Err(bad(
            "a value must be a number, string, boolean or tagged object",
            json,
        )),
    }
}

fn tagged_literal(o: &Map<String, Value>, json: &Value) -> Result<UnboundLiteral> {
    let kind = o.get("@").and_then(Value::as_str).unwrap_or_default();
    let payload = o
        .get("v")
        .ok_or_else(|| bad("a tagged value needs \"v\"", json))?;
    let text = || {
        payload
            .as_str()
            .ok_or_else(|| bad(&format!("{kind} payload must be a string"), json))
    };
    let int = || {
        payload
            .as_i64()
            .ok_or_else(|| bad(&format!("{kind} payload must be an integer"), json))
    };
    Ok(match kind {
        "bool" => UnboundLiteral::Boolean(
            payload
                .as_bool()
                .ok_or_else(|| bad("bool payload must be true or false", json))?,
        ),
        "int" => UnboundLiteral::Int(match payload {
            Value::String(s) => s
                .trim()
                .parse::<i128>()
                .map_err(|_| bad("int payload out of range", json))?,
            _ => i128::from(int()?),
        }),
        "float" => UnboundLiteral::Float(match payload {
            Value::String(s) => match s.as_str() {
                "inf" | "Infinity" => f64::INFINITY,
                "-inf" | "-Infinity" => f64::NEG_INFINITY,
                "nan" | "NaN" => f64::NAN,
                other => other
                    .parse()
                    .map_err(|_| bad("float payload is not a number", json))?,
            },
            other => other
                .as_f64()
                .ok_or_else(|| bad("float payload is not a number", json))?,
        }),
        "string" => UnboundLiteral::String(text()?.to_owned()),
        "binary" => {
            let value = values::from_json(
                &crate::types::Type::Primitive(crate::types::PrimitiveType::Binary),
                payload,
            )?;
            match value {
                values::Literal::Binary(b) => UnboundLiteral::Binary(b),
                _ => return Err(bad("binary payload", json)),
            }
        }
        "decimal" => UnboundLiteral::Decimal(text()?.to_owned()),
        "date" => UnboundLiteral::Date(
            i32::try_from(int()?).map_err(|_| bad("date payload out of range", json))?,
        ),
        "time" => UnboundLiteral::Time(int()?),
        "timestamp" => UnboundLiteral::Timestamp(int()?),
        "timestamptz" => UnboundLiteral::Timestamptz(int()?),
        "uuid" => {
            let value = values::from_json(
                &crate::types::Type::Primitive(crate::types::PrimitiveType::Uuid),
                &Value::String(text()?.to_ascii_lowercase()),
            )?;
            match value {
                values::Literal::Uuid(u) => UnboundLiteral::Uuid(u),
                _ => return Err(bad("uuid payload", json)),
            }
        }
        other => return Err(bad(&format!("unknown value tag {other:?}"), json)),
    })
}

fn tagged(kind: &str, payload: Value) -> Value {
    json!({"@": kind, "v": payload})
}

/// An unbound literal as JSON: exact tagged forms for everything but
/// booleans, strings-to-parse and integers that fit i64.
fn literal_to_json(literal: &UnboundLiteral) -> Value {
    match literal {
        UnboundLiteral::Boolean(b) => Value::Bool(*b),
        UnboundLiteral::Int(i) => match i64::try_from(*i) {
            Ok(v) => Value::from(v),
            Err(_) => tagged("int", Value::String(i.to_string())),
        },
        UnboundLiteral::Float(f) if f.is_finite() => tagged("float", json!(f)),
        UnboundLiteral::Float(f) => tagged(
            "float",
            Value::String(
                if f.is_nan() {
                    "nan"
                } else if *f > 0.0 {
                    "inf"
                } else {
                    "-inf"
                }
                .to_owned(),
            ),
        ),
        UnboundLiteral::Json(s) => Value::String(s.clone()),
        UnboundLiteral::String(s) => tagged("string", Value::String(s.clone())),
        UnboundLiteral::Binary(b) => tagged("binary", Value::String(values::hex(b))),
        UnboundLiteral::Decimal(d) => tagged("decimal", Value::String(d.clone())),
        UnboundLiteral::Date(d) => tagged("date", json!(d)),
        UnboundLiteral::Time(t) => tagged("time", json!(t)),
        UnboundLiteral::Timestamp(t) => tagged("timestamp", json!(t)),
        UnboundLiteral::Timestamptz(t) => tagged("timestamptz", json!(t)),
        UnboundLiteral::Uuid(u) => tagged("uuid", Value::String(values::uuid_string(u))),
    }
}

fn unbound_term_json(term: &UnboundTerm) -> Value {
    match term {
        UnboundTerm::Reference(name) => Value::String(name.clone()),
        UnboundTerm::Transform(t, name) => {
            json!({"type": "transform", "transform": t.to_string(), "term": name})
        }
    }
}

fn bound_term_json(term: &BoundTerm) -> Value {
    match term {
        BoundTerm::Reference(r) => Value::String(r.name.clone()),
        BoundTerm::Transform {
            transform,
            reference,
            ..
        } => {
            json!({"type": "transform", "transform": transform.to_string(), "term": reference.name})
        }
    }
}

fn tree_json<P>(expr: &Expr<P>, predicate: &dyn Fn(&P) -> Value) -> Value {
    match expr {
        Expr::True => Value::Bool(true),
        Expr::False => Value::Bool(false),
        Expr::And(items) => balanced_json("and", items, predicate),
        Expr::Or(items) => balanced_json("or", items, predicate),
        Expr::Not(a) => json!({"type": "not", "child": tree_json(a, predicate)}),
        Expr::Predicate(p) => predicate(p),
    }
}

/// An n-ary AND or OR as the binary nodes of Java's expression JSON, in a
/// balanced tree (ceil(log2 n) levels, so that Java's recursive parser and
/// evaluators, and every JSON reader's depth limit, take chains of any
/// length): the left half holds the first ceil(n/2) operands, so that three
/// are `(a AND b) AND c`, as Java nests them. The Python model splits the
/// same way (`frazil.expressions._base`).
fn balanced_json<P>(kind: &str, items: &[Expr<P>], predicate: &dyn Fn(&P) -> Value) -> Value {
    match items {
        [] => Value::Bool(kind == "and"),
        [one] => tree_json(one, predicate),
        _ => {
            let (left, right) = items.split_at(items.len().div_ceil(2));
            json!({
                "type": kind,
                "left": balanced_json(kind, left, predicate),
                "right": balanced_json(kind, right, predicate),
            })
        }
    }
}

/// An unbound expression as JSON (see the module docs for values).
pub fn unbound_to_json(expr: &Unbound) -> Value {
    tree_json(expr, &|p: &UnboundPredicate| {
        let mut o = Map::new();
        o.insert("type".into(), Value::String(p.op.json_name().into()));
        o.insert("term".into(), unbound_term_json(&p.term));
        if p.op.is_set() {
            o.insert(
                "values".into(),
                Value::Array(p.literals.iter().map(literal_to_json).collect()),
            );
        } else if let Some(l) = p.literals.first() {
            o.insert("value".into(), literal_to_json(l));
        }
        Value::Object(o)
    })
}

/// A bound expression as Java writes it: values in the Appendix D JSON form
/// of the term's type.
pub fn to_json(expr: &Bound) -> Value {
    tree_json(expr, &|p: &BoundPredicate| {
        let mut o = Map::new();
        o.insert("type".into(), Value::String(p.op().json_name().into()));
        o.insert("term".into(), bound_term_json(p.term()));
        match p {
            BoundPredicate::Unary { .. } => {}
            BoundPredicate::Literal { literal, .. } => {
                o.insert("value".into(), literal.to_json());
            }
            BoundPredicate::Set { literals, .. } => {
                o.insert(
                    "values".into(),
                    Value::Array(literals.iter().map(|l| l.to_json()).collect()),
                );
            }
        }
        Value::Object(o)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::bind::bind;
    use crate::spec::schema::Schema;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"d","required":false,"type":"date"},
        {"id":3,"name":"b","required":false,"type":"binary"},
        {"id":4,"name":"s","required":false,"type":"string"}]}"#;

    #[test]
    fn java_json_round_trips_through_binding() {
        let text = r#"{"type":"and","left":{"type":"in","term":"id","values":[3,1,2]},
            "right":{"type":"or","left":{"type":"gt-eq","term":"d","value":"2024-01-02"},
            "right":{"type":"not","child":{"type":"eq","term":"b","value":"0a1b"}}}}"#;
        let unbound = parse(text).unwrap();
        let schema = Schema::parse(SCHEMA).unwrap();
        let bound = bind(&unbound, &schema, true).unwrap();
        let written = to_json(&bound);
        assert_eq!(
            written,
            serde_json::from_str::<Value>(
                r#"{"type":"and","left":{"type":"in","term":"id","values":[1,2,3]},
                "right":{"type":"or","left":{"type":"gt-eq","term":"d","value":"2024-01-02"},
                "right":{"type":"not","child":{"type":"eq","term":"b","value":"0a1b"}}}}"#
            )
            .unwrap()
        );
        // Bound JSON read back and bound again gives the same expression.
        assert_eq!(
            bind(&from_json(&written).unwrap(), &schema, true).unwrap(),
            bound
        );
    }

    /// How deep `json` nests objects and arrays.
    fn depth(json: &Value) -> usize {
        match json {
            Value::Object(o) => 1 + o.values().map(depth).max().unwrap_or(0),
            Value::Array(a) => 1 + a.iter().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }

    fn lt(i: i64) -> Unbound {
        Expr::Predicate(UnboundPredicate {
            op: Op::Lt,
            term: UnboundTerm::Reference("id".into()),
            literals: vec![UnboundLiteral::Int(i128::from(i))],
        })
    }

    #[test]
    fn long_chains_read_flat_and_write_balanced() {
        let terms: Vec<Unbound> = (0..10_000).map(lt).collect();
        let chain = Expr::all(terms.clone());
        let Expr::And(items) = &chain else {
            panic!("not an AND: {chain}")
        };
        assert_eq!(items.len(), 10_000);
        // Java's binary form, balanced: ceil(log2 10,000) = 14 levels over the predicates.
        let written = unbound_to_json(&chain);
        assert_eq!(depth(&written), 14 + 1);
        assert_eq!(written["left"]["left"]["type"], "and");
        assert_eq!(parse(&written.to_string()).unwrap(), chain);
        // Three operands nest as Java nests them: (a AND b) AND c.
        let three = unbound_to_json(&Expr::any(terms[..3].to_vec()));
        assert_eq!(three["left"]["type"], "or");
        assert_eq!(three["right"]["value"], 2);
        // A left-deep chain (how Java writes `a AND b AND c`) reads as one
        // node, however it was nested, and is written balanced.
        let mut left_deep = unbound_to_json(&terms[0]);
        for term in &terms[1..100] {
            left_deep = json!({"type": "and", "left": left_deep, "right": unbound_to_json(term)});
        }
        let read = parse(&left_deep.to_string()).unwrap();
        assert_eq!(read, Expr::all(terms[..100].to_vec()));
        assert_eq!(depth(&unbound_to_json(&read)), 7 + 1);
        // Binding keeps the chain flat (and bound JSON balanced).
        let schema = Schema::parse(SCHEMA).unwrap();
        let bound = bind(&chain, &schema, true).unwrap();
        assert!(matches!(&bound, Expr::And(items) if items.len() == 10_000));
        assert_eq!(depth(&to_json(&bound)), 14 + 1);
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_refused_with_it() {
        let nested = |levels: usize| {
            format!(
                "{}{}{}",
                r#"{"type":"not","child":"#.repeat(levels),
                r#"{"type":"is-null","term":"s"}"#,
                "}".repeat(levels)
            )
        };
        // The deepest accepted: its JSON nests MAX_JSON_DEPTH levels.
        let deepest = parse(&nested(MAX_JSON_DEPTH - 1)).unwrap();
        assert_eq!(
            unbound_to_json(&deepest),
            parse_json(&nested(MAX_JSON_DEPTH - 1))
        );
        for levels in [MAX_JSON_DEPTH, 10_000, 1_000_000] {
            let error = parse(&nested(levels)).unwrap_err().to_string();
            assert!(
                error.contains("nested too deeply") && error.contains("at most 120"),
                "{error}"
            );
            assert!(!error.contains("not valid JSON"), "{error}");
        }
    }

    fn parse_json(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn tagged_values_carry_what_json_cannot() {
        let e = parse(
            r#"{"type":"eq","term":{"type":"transform","transform":"bucket[4]","term":"s"},
                "value":{"@":"int","v":"170141183460469231731687303715884105727"}}"#,
        )
        .unwrap();
        assert_eq!(
            unbound_to_json(&e)["value"]["v"],
            "170141183460469231731687303715884105727"
        );
        let s =
            parse(r#"{"type":"starts-with","term":"s","value":{"@":"string","v":"ab"}}"#).unwrap();
        assert_eq!(from_json(&unbound_to_json(&s)).unwrap(), s);
        assert!(parse(r#"{"type":"eq","term":"s"}"#).is_err());
        assert!(parse(r#"{"type":"is-null","term":"s","value":1}"#).is_err());
        assert!(parse(r#"{"type":"between","term":"s"}"#).is_err());
        assert_eq!(parse("true").unwrap(), Expr::True);
    }
}
