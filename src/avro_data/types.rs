//! The Iceberg fields of an Avro data file's writer schema (spec: Appendix A,
//! "Avro"): records are structs whose fields carry `field-id`, arrays are
//! lists (`element-id`), Avro maps are string-keyed maps (`key-id`,
//! `value-id`), arrays of key/value records with `logicalType: map` are maps
//! with other keys, `["null", T]` unions are optional fields, and logical
//! types give dates, times, timestamps (`adjust-to-utc` telling timestamptz
//! from timestamp), decimals and uuids.
//!
//! This reads the schema JSON itself rather than [`crate::avro::schema`]'s
//! parsed nodes: the `apache-avro` crate that parses those (and has
//! already validated this schema when the header was read) keeps no custom
//! attribute of a logical type and no `logicalType: map`, so it cannot tell
//! timestamptz (`adjust-to-utc: true`) from timestamp.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::types::{NestedField, PrimitiveType, Type};

// Deeply nested schemas are refused rather than overflowing the stack, at
// the container's own limit (any schema Java writes for a table frazil reads
// passes).
use crate::avro::schema::MAX_DEPTH;

fn bad(path: &str, what: impl std::fmt::Display) -> Error {
    if path.is_empty() {
        Error::InvalidData(format!("Avro schema: {what}"))
    } else {
        Error::InvalidData(format!("Avro schema, field {path}: {what}"))
    }
}

/// The top-level Iceberg fields of the writer schema `text` (a record).
/// Fields without a `field-id` are another writer's extras and left out, as
/// Java's reader skips them.
pub fn file_fields(text: &str) -> Result<Vec<NestedField>> {
    let json = crate::avro::schema::parse_json(text).map_err(|e| bad("", e))?;
    let mut names = HashMap::new();
    match convert(&json, &mut names, "", 0)? {
        (Type::Struct(fields), _) => Ok(fields),
        _ => Err(bad("", "the schema of a data file must be a record")),
    }
}

/// The Iceberg type of one Avro schema node and whether it admits null.
fn convert<'a>(
    json: &'a Value,
    names: &mut HashMap<String, &'a Value>,
    path: &str,
    depth: usize,
) -> Result<(Type, bool)> {
    if depth > MAX_DEPTH {
        return Err(bad(path, format!("nested deeper than {MAX_DEPTH} levels")));
    }
    match json {
        Value::String(name) => named_or_primitive(name, None, names, path, depth),
        Value::Array(branches) => {
            let non_null: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
            match (branches.len(), non_null.as_slice()) {
                (2, [inner]) => Ok((convert(inner, names, path, depth + 1)?.0, true)),
                (1, []) => Ok((Type::Primitive(PrimitiveType::Unknown), true)),
                _ => Err(bad(
                    path,
                    format!("union {json} is not an Iceberg type (only [\"null\", T] is)"),
                )),
            }
        }
        Value::Object(object) => convert_object(object, json, names, path, depth),
        other => Err(bad(path, format!("unexpected schema {other}"))),
    }
}

fn is_null(json: &Value) -> bool {
    match json {
        Value::String(s) => s == "null",
        Value::Object(o) => o.get("type").and_then(Value::as_str) == Some("null"),
        _ => false,
    }
}

fn named_or_primitive<'a>(
    name: &str,
    object: Option<&'a Map<String, Value>>,
    names: &mut HashMap<String, &'a Value>,
    path: &str,
    depth: usize,
) -> Result<(Type, bool)> {
    use PrimitiveType as P;
    let logical = object
        .and_then(|o| o.get("logicalType"))
        .and_then(Value::as_str);
    let utc = object
        .and_then(|o| o.get("adjust-to-utc"))
        .map(|v| v.as_bool().unwrap_or(v.as_str() == Some("true")))
        .unwrap_or(false);
    let primitive = match (name, logical) {
        ("null", _) => return Ok((Type::Primitive(P::Unknown), true)),
        ("boolean", _) => P::Boolean,
        ("int", Some("date")) => P::Date,
        ("int", _) => P::Int,
        ("long", Some("time-micros")) => P::Time,
        ("long", Some("timestamp-micros" | "timestamp-millis")) if utc => P::Timestamptz,
        ("long", Some("timestamp-micros" | "timestamp-millis")) => P::Timestamp,
        ("long", Some("timestamp-nanos")) if utc => P::TimestamptzNs,
        ("long", Some("timestamp-nanos")) => P::TimestampNs,
        ("long", _) => P::Long,
        ("float", _) => P::Float,
        ("double", _) => P::Double,
        ("bytes", Some("decimal")) => decimal(object, path)?,
        ("bytes", _) => P::Binary,
        ("string", _) => P::String,
        _ => {
            let Some(definition) = names.get(name).copied() else {
                return Err(bad(path, format!("unknown type {name:?}")));
            };
            return convert(definition, names, path, depth + 1);
        }
    };
    Ok((Type::Primitive(primitive), false))
}

fn decimal(object: Option<&Map<String, Value>>, path: &str) -> Result<PrimitiveType> {
    let number = |key: &str| -> Result<u32> {
        match object.and_then(|o| o.get(key)) {
            None if key == "scale" => Ok(0),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad(path, format!("decimal {key} {v} is not a small integer"))),
            None => Err(bad(path, format!("decimal without {key}"))),
        }
    };
    let (precision, scale) = (number("precision")?, number("scale")?);
    if precision == 0 || precision > 38 || scale > precision {
        return Err(bad(
            path,
            format!("decimal({precision}, {scale}) is not an Iceberg decimal"),
        ));
    }
    Ok(PrimitiveType::Decimal { precision, scale })
}

fn register<'a>(
    object: &'a Map<String, Value>,
    json: &'a Value,
    names: &mut HashMap<String, &'a Value>,
) {
    if let Some(name) = object.get("name").and_then(Value::as_str) {
        names.insert(name.to_owned(), json);
        if let Some(namespace) = object.get("namespace").and_then(Value::as_str) {
            names.insert(format!("{namespace}.{name}"), json);
        }
        if let Some((_, simple)) = name.rsplit_once('.') {
            names.insert(simple.to_owned(), json);
        }
    }
}

fn id(object: &Map<String, Value>, key: &str, path: &str) -> Result<Option<i32>> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .and_then(|n| i32::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| bad(path, format!("{key} {v} is not an int"))),
    }
}

fn required_id(object: &Map<String, Value>, key: &str, path: &str) -> Result<i32> {
    id(object, key, path)?.ok_or_else(|| {
        bad(
            path,
            format!("no {key} (the data file was not written with Iceberg field ids)"),
        )
    })
}

fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

fn convert_object<'a>(
    object: &'a Map<String, Value>,
    json: &'a Value,
    names: &mut HashMap<String, &'a Value>,
    path: &str,
    depth: usize,
) -> Result<(Type, bool)> {
    let kind = object
        .get("type")
        .ok_or_else(|| bad(path, "schema without a type"))?;
    let Some(kind) = kind.as_str() else {
        // {"type": {...}} or {"type": [...]}: a wrapped schema.
        return convert(kind, names, path, depth + 1);
    };
    match kind {
        "record" => {
            register(object, json, names);
            let fields = object
                .get("fields")
                .and_then(Value::as_array)
                .ok_or_else(|| bad(path, "record without fields"))?;
            let mut out = Vec::with_capacity(fields.len());
            for field in fields {
                let field = field
                    .as_object()
                    .ok_or_else(|| bad(path, "record field is not an object"))?;
                let name = field
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad(path, "record field without a name"))?;
                let field_path = child(path, name);
                let schema = field
                    .get("type")
                    .ok_or_else(|| bad(&field_path, "field without a type"))?;
                let Some(field_id) = id(field, "field-id", &field_path)? else {
                    continue;
                };
                let (ty, nullable) = convert(schema, names, &field_path, depth + 1)?;
                // Java keeps a name that is not Avro-legal beside its escaped form.
                let name = field
                    .get("iceberg-field-name")
                    .and_then(Value::as_str)
                    .unwrap_or(name);
                out.push(NestedField::new(field_id, name, !nullable, ty));
            }
            if !fields.is_empty() && out.is_empty() {
                return Err(bad(
                    path,
                    "no record field has a field-id (not written by an Iceberg writer)",
                ));
            }
            Ok((Type::Struct(out), false))
        }
        "array" => {
            let items = object
                .get("items")
                .ok_or_else(|| bad(path, "array without items"))?;
            if object.get("logicalType").and_then(Value::as_str) == Some("map") {
                return key_value_map(items, names, path, depth);
            }
            let element_id = required_id(object, "element-id", path)?;
            let (element, nullable) = convert(items, names, &child(path, "element"), depth + 1)?;
            Ok((
                Type::List {
                    element_id,
                    element_required: !nullable,
                    element: Box::new(element),
                },
                false,
            ))
        }
        "map" => {
            let values = object
                .get("values")
                .ok_or_else(|| bad(path, "map without values"))?;
            let key_id = required_id(object, "key-id", path)?;
            let value_id = required_id(object, "value-id", path)?;
            let (value, nullable) = convert(values, names, &child(path, "value"), depth + 1)?;
            Ok((
                Type::Map {
                    key_id,
                    key: Box::new(Type::Primitive(PrimitiveType::String)),
                    value_id,
                    value_required: !nullable,
                    value: Box::new(value),
                },
                false,
            ))
        }
        "fixed" => {
            register(object, json, names);
            let size = object
                .get("size")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(path, "fixed without a size"))?;
            let primitive = match object.get("logicalType").and_then(Value::as_str) {
                Some("decimal") => decimal(Some(object), path)?,
                Some("uuid") if size == 16 => PrimitiveType::Uuid,
                _ => PrimitiveType::Fixed(size),
            };
            Ok((Type::Primitive(primitive), false))
        }
        "enum" => Err(bad(path, "an Avro enum is not an Iceberg type")),
        other => named_or_primitive(other, Some(object), names, path, depth),
    }
}

/// Iceberg's encoding of a map whose keys are not strings: an array of
/// records with a key and a value field (spec: Appendix A, "Maps").
fn key_value_map<'a>(
    items: &'a Value,
    names: &mut HashMap<String, &'a Value>,
    path: &str,
    depth: usize,
) -> Result<(Type, bool)> {
    let mut items = items;
    if let Value::String(name) = items {
        items = names
            .get(name.as_str())
            .copied()
            .ok_or_else(|| bad(path, format!("unknown type {name:?}")))?;
    }
    let entry = items
        .as_object()
        .filter(|o| o.get("type").and_then(Value::as_str) == Some("record"))
        .ok_or_else(|| bad(path, "a map's array items must be key/value records"))?;
    register(entry, items, names);
    let fields = entry
        .get("fields")
        .and_then(Value::as_array)
        .filter(|f| f.len() == 2)
        .ok_or_else(|| bad(path, "a map's entry records must have 2 fields"))?;
    let mut parts = Vec::with_capacity(2);
    for (field, role) in fields.iter().zip(["key", "value"]) {
        let field = field
            .as_object()
            .ok_or_else(|| bad(path, "record field is not an object"))?;
        let part_path = child(path, role);
        let field_id = required_id(field, "field-id", &part_path)?;
        let schema = field
            .get("type")
            .ok_or_else(|| bad(&part_path, "field without a type"))?;
        let (ty, nullable) = convert(schema, names, &part_path, depth + 1)?;
        parts.push((field_id, ty, nullable));
    }
    let (value_id, value, value_nullable) = parts.pop().expect("two parts");
    let (key_id, key, _) = parts.pop().expect("two parts");
    Ok((
        Type::Map {
            key_id,
            key: Box::new(key),
            value_id,
            value_required: !value_nullable,
            value: Box::new(value),
        },
        false,
    ))
}
