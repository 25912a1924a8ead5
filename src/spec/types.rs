//! Iceberg data types (spec: "Schemas and Data Types", Appendix C type JSON),
//! for every format version: v3 adds `timestamp_ns`, `timestamptz_ns`,
//! `unknown`, `variant`, `geometry(C)` and `geography(C, A)`.
//!
//! Primitive types parse from and print to the type strings of Appendix C
//! (`"int"`, `"decimal(9,2)"`, `"fixed[16]"`, ...), case-insensitively as Java
//! reads them. Nested types are parsed from their JSON objects, with field
//! docs and default values (spec: "Default values") kept as read.

use std::fmt;

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// The largest decimal precision the spec allows.
pub const MAX_DECIMAL_PRECISION: u32 = 38;

/// The deepest a schema's types may nest: the type of a top-level field holds
/// at most this many struct, list and map types one inside another
/// (`a: struct<b: list<int>>` nests 2). Neither the spec nor Java sets a
/// limit (Java's JSON parser stops at 1,000 levels), but pyarrow, which every
/// frazil read and write goes through, imports at most 64 levels of Arrow
/// types across Arrow's C data interface (one of them the record batch's, two
/// each map's: the map and its `entries` struct), so 31 maps is the deepest
/// schema whose rows can reach a user. The same limit keeps a schema's JSON
/// (3 levels a struct) within the JSON parsers' 128 and Parquet's group
/// nesting (2 levels a list or map) within pyarrow's 100.
pub const MAX_NESTING_DEPTH: usize = 31;

/// Why [`MAX_NESTING_DEPTH`] is what it is, for error messages.
pub const NESTING_DEPTH_REASON: &str = "pyarrow, through which frazil reads and writes, \
    imports at most 64 levels of Arrow types and a map takes two of them";

/// The dotted name of the first field, list element or map key or value
/// (`a.element.b`, Java's naming) among `fields` whose type is nested more than
/// [`MAX_NESTING_DEPTH`] levels deep, if any. Walks without recursion: it
/// guards code that recurses once per level.
pub fn too_deeply_nested(fields: &[NestedField]) -> Option<String> {
    let mut pending: Vec<(&Type, String, usize)> = fields
        .iter()
        .rev()
        .map(|f| (&f.field_type, f.name.clone(), 1))
        .collect();
    while let Some((ty, path, depth)) = pending.pop() {
        if !ty.is_nested() {
            continue;
        }
        if depth > MAX_NESTING_DEPTH {
            return Some(path);
        }
        let child = |name: &str| format!("{path}.{name}");
        match ty {
            Type::Struct(children) => pending.extend(
                children
                    .iter()
                    .rev()
                    .map(|f| (&f.field_type, child(&f.name), depth + 1)),
            ),
            Type::List { element, .. } => pending.push((element, child("element"), depth + 1)),
            Type::Map { key, value, .. } => {
                pending.push((value, child("value"), depth + 1));
                pending.push((key, child("key"), depth + 1));
            }
            _ => {}
        }
    }
    None
}

/// The CRS of `geometry` and `geography` when the type string names none.
pub const DEFAULT_CRS: &str = "OGC:CRS84";
/// The edge interpolation algorithm of `geography` when none is named.
pub const DEFAULT_EDGE_ALGORITHM: &str = "spherical";
const EDGE_ALGORITHMS: [&str; 5] = ["spherical", "vincenty", "thomas", "andoyer", "karney"];

/// The primitive types with a single-value representation that frazil's
/// kernels, bounds and evaluators handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal {
        precision: u32,
        scale: u32,
    },
    Date,
    Time,
    Timestamp,
    Timestamptz,
    /// v3: nanoseconds from 1970-01-01 00:00:00.
    TimestampNs,
    /// v3: nanoseconds from 1970-01-01 00:00:00 UTC.
    TimestamptzNs,
    String,
    Uuid,
    Fixed(u64),
    Binary,
    /// v3: a column whose type is not known yet; always null.
    Unknown,
}

impl PrimitiveType {
    /// Parses an Appendix C primitive type string. Case and whitespace inside
    /// the parameter lists are tolerated, as Java's parser does.
    pub fn parse(text: &str) -> Result<Self> {
        let unknown = || Error::UnknownType(format!("{text:?}"));
        let lower = text.trim().to_ascii_lowercase();
        let simple = match lower.as_str() {
            "boolean" => Some(Self::Boolean),
            "int" => Some(Self::Int),
            "long" => Some(Self::Long),
            "float" => Some(Self::Float),
            "double" => Some(Self::Double),
            "date" => Some(Self::Date),
            "time" => Some(Self::Time),
            "timestamp" => Some(Self::Timestamp),
            "timestamptz" => Some(Self::Timestamptz),
            "timestamp_ns" => Some(Self::TimestampNs),
            "timestamptz_ns" => Some(Self::TimestamptzNs),
            "string" => Some(Self::String),
            "uuid" => Some(Self::Uuid),
            "binary" => Some(Self::Binary),
            "unknown" => Some(Self::Unknown),
            _ => None,
        };
        if let Some(t) = simple {
            return Ok(t);
        }
        if let Some(inner) = lower
            .strip_prefix("fixed[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let length: u64 = inner.trim().parse().map_err(|_| unknown())?;
            return Ok(Self::Fixed(length));
        }
        if let Some(inner) = lower
            .strip_prefix("decimal(")
            .and_then(|rest| rest.strip_suffix(')'))
        {
            let (p, s) = inner.split_once(',').ok_or_else(unknown)?;
            let precision: u32 = p.trim().parse().map_err(|_| unknown())?;
            let scale: u32 = s.trim().parse().map_err(|_| unknown())?;
            if precision == 0 || precision > MAX_DECIMAL_PRECISION {
                return Err(Error::UnknownType(format!(
                    "{text:?}: decimal precision must be between 1 and {MAX_DECIMAL_PRECISION}"
                )));
            }
            if scale > precision {
                return Err(Error::UnknownType(format!(
                    "{text:?}: decimal scale must not exceed its precision"
                )));
            }
            return Ok(Self::Decimal { precision, scale });
        }
        Err(unknown())
    }

    /// Whether values are microsecond or nanosecond timestamps.
    pub fn is_timestamp(self) -> bool {
        matches!(
            self,
            Self::Timestamp | Self::Timestamptz | Self::TimestampNs | Self::TimestamptzNs
        )
    }

    /// Whether values are nanosecond timestamps (v3).
    pub fn is_nanos(self) -> bool {
        matches!(self, Self::TimestampNs | Self::TimestamptzNs)
    }

    /// Whether values can be NaN.
    pub fn is_floating(self) -> bool {
        matches!(self, Self::Float | Self::Double)
    }

    /// The first table format version that allows this type (Appendix E).
    pub fn min_format_version(self) -> u8 {
        match self {
            Self::TimestampNs | Self::TimestamptzNs | Self::Unknown => 3,
            _ => 1,
        }
    }
}

impl fmt::Display for PrimitiveType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Boolean => f.write_str("boolean"),
            Self::Int => f.write_str("int"),
            Self::Long => f.write_str("long"),
            Self::Float => f.write_str("float"),
            Self::Double => f.write_str("double"),
            Self::Decimal { precision, scale } => write!(f, "decimal({precision}, {scale})"),
            Self::Date => f.write_str("date"),
            Self::Time => f.write_str("time"),
            Self::Timestamp => f.write_str("timestamp"),
            Self::Timestamptz => f.write_str("timestamptz"),
            Self::TimestampNs => f.write_str("timestamp_ns"),
            Self::TimestamptzNs => f.write_str("timestamptz_ns"),
            Self::String => f.write_str("string"),
            Self::Uuid => f.write_str("uuid"),
            Self::Fixed(length) => write!(f, "fixed[{length}]"),
            Self::Binary => f.write_str("binary"),
            Self::Unknown => f.write_str("unknown"),
        }
    }
}

/// A field of a struct type (or a list element, map key or value, which
/// have no name, doc or defaults).
#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: Type,
    pub doc: Option<String>,
    /// `initial-default` in its JSON single-value form (Appendix D), as read.
    pub initial_default: Option<Value>,
    /// `write-default` in its JSON single-value form, as read.
    pub write_default: Option<Value>,
}

impl NestedField {
    pub fn new(id: i32, name: &str, required: bool, field_type: Type) -> Self {
        NestedField {
            id,
            name: name.to_owned(),
            required,
            field_type,
            doc: None,
            initial_default: None,
            write_default: None,
        }
    }

    pub fn optional(id: i32, name: &str, field_type: Type) -> Self {
        Self::new(id, name, false, field_type)
    }

    pub fn required(id: i32, name: &str, field_type: Type) -> Self {
        Self::new(id, name, true, field_type)
    }

    /// Appendix C JSON of this struct field.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("id".into(), json!(self.id));
        object.insert("name".into(), json!(self.name));
        object.insert("required".into(), json!(self.required));
        object.insert("type".into(), self.field_type.to_json());
        if let Some(doc) = &self.doc {
            object.insert("doc".into(), json!(doc));
        }
        if let Some(v) = &self.initial_default {
            object.insert("initial-default".into(), v.clone());
        }
        if let Some(v) = &self.write_default {
            object.insert("write-default".into(), v.clone());
        }
        Value::Object(object)
    }
}

/// Any Iceberg type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Primitive(PrimitiveType),
    Struct(Vec<NestedField>),
    List {
        element_id: i32,
        element_required: bool,
        element: Box<Type>,
    },
    Map {
        key_id: i32,
        key: Box<Type>,
        value_id: i32,
        value_required: bool,
        value: Box<Type>,
    },
    /// v3 `variant`: semi-structured, neither primitive nor nested (as in Java).
    Variant,
    /// v3 `geometry(C)`: primitive in the spec, but without bounds frazil can
    /// compare or transforms other than void, so kept apart from
    /// [`PrimitiveType`].
    Geometry {
        crs: String,
    },
    /// v3 `geography(C, A)`.
    Geography {
        crs: String,
        algorithm: String,
    },
}

impl Type {
    /// Parses a type given either as a type string or as the Appendix C JSON
    /// text of any type (a JSON string or object).
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('"') {
            let json: Value = serde_json::from_str(text)
                .map_err(|e| Error::UnknownType(format!("{text:?}: not valid JSON ({e})")))?;
            Self::from_json(&json)
        } else {
            Self::parse_string(text)
        }
    }

    /// Parses a type string: a primitive, `variant`, `geometry(C)` or
    /// `geography(C, A)`.
    pub fn parse_string(text: &str) -> Result<Self> {
        let trimmed = text.trim();
        let lower = trimmed.to_ascii_lowercase();
        if lower == "variant" {
            return Ok(Type::Variant);
        }
        let params = |name: &str| -> Option<Option<&str>> {
            if lower == name {
                return Some(None);
            }
            let rest = trimmed.get(name.len()..)?;
            if !lower.starts_with(name) {
                return None;
            }
            let inner = rest.trim_start().strip_prefix('(')?.strip_suffix(')')?;
            Some(Some(inner.trim()))
        };
        if let Some(inner) = params("geometry") {
            let crs = inner.filter(|c| !c.is_empty()).unwrap_or(DEFAULT_CRS);
            return Ok(Type::Geometry {
                crs: crs.to_owned(),
            });
        }
        if let Some(inner) = params("geography") {
            let (crs, algorithm) = match inner {
                None => (DEFAULT_CRS, DEFAULT_EDGE_ALGORITHM),
                Some(inner) => match inner.split_once(',') {
                    Some((c, a)) => (c.trim(), a.trim()),
                    None => (inner, DEFAULT_EDGE_ALGORITHM),
                },
            };
            let algorithm = algorithm.to_ascii_lowercase();
            if !EDGE_ALGORITHMS.contains(&algorithm.as_str()) {
                return Err(Error::UnknownType(format!(
                    "{text:?}: unknown edge algorithm {algorithm:?}"
                )));
            }
            let crs = if crs.is_empty() { DEFAULT_CRS } else { crs };
            return Ok(Type::Geography {
                crs: crs.to_owned(),
                algorithm,
            });
        }
        PrimitiveType::parse(trimmed).map(Type::Primitive)
    }

    /// Parses the Appendix C JSON form of a type.
    pub fn from_json(json: &Value) -> Result<Self> {
        let object = match json {
            Value::String(s) => return Self::parse_string(s),
            Value::Object(o) => o,
            other => return Err(Error::UnknownType(other.to_string())),
        };
        let bad = |what: &str| Error::UnknownType(format!("{json}: {what}"));
        let int_field = |key: &str| -> Result<i32> {
            object
                .get(key)
                .and_then(Value::as_i64)
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| bad(&format!("missing or invalid {key:?}")))
        };
        let bool_field = |key: &str| -> Result<bool> {
            object
                .get(key)
                .and_then(Value::as_bool)
                .ok_or_else(|| bad(&format!("missing or invalid {key:?}")))
        };
        let type_field = |key: &str| -> Result<Box<Type>> {
            let inner = object
                .get(key)
                .ok_or_else(|| bad(&format!("missing {key:?}")))?;
            Ok(Box::new(Self::from_json(inner)?))
        };
        match object.get("type").and_then(Value::as_str) {
            Some("struct") => {
                let fields = object
                    .get("fields")
                    .and_then(Value::as_array)
                    .ok_or_else(|| bad("missing \"fields\""))?;
                let mut parsed = Vec::with_capacity(fields.len());
                for field in fields {
                    parsed.push(field_from_json(field).map_err(|e| match e {
                        Error::UnknownType(m) => bad(&m),
                        other => other,
                    })?);
                }
                Ok(Type::Struct(parsed))
            }
            Some("list") => Ok(Type::List {
                element_id: int_field("element-id")?,
                element_required: bool_field("element-required")?,
                element: type_field("element")?,
            }),
            Some("map") => Ok(Type::Map {
                key_id: int_field("key-id")?,
                key: type_field("key")?,
                value_id: int_field("value-id")?,
                value_required: bool_field("value-required")?,
                value: type_field("value")?,
            }),
            _ => Err(bad("\"type\" must be \"struct\", \"list\" or \"map\"")),
        }
    }

    /// The Appendix C JSON form (type strings as Java prints them).
    pub fn to_json(&self) -> Value {
        match self {
            Type::Struct(fields) => json!({
                "type": "struct",
                "fields": fields.iter().map(NestedField::to_json).collect::<Vec<_>>(),
            }),
            Type::List {
                element_id,
                element_required,
                element,
            } => json!({
                "type": "list",
                "element-id": element_id,
                "element": element.to_json(),
                "element-required": element_required,
            }),
            Type::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            } => json!({
                "type": "map",
                "key-id": key_id,
                "key": key.to_json(),
                "value-id": value_id,
                "value": value.to_json(),
                "value-required": value_required,
            }),
            other => Value::String(other.to_string()),
        }
    }

    pub fn as_primitive(&self) -> Option<PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(*p),
            _ => None,
        }
    }

    /// Whether this is a struct, list or map.
    pub fn is_nested(&self) -> bool {
        matches!(self, Type::Struct(_) | Type::List { .. } | Type::Map { .. })
    }
}

/// Parses one struct field of Appendix C JSON.
pub fn field_from_json(field: &Value) -> Result<NestedField> {
    let bad = |what: &str| Error::UnknownType(format!("struct field {field}: {what}"));
    let id = field
        .get("id")
        .and_then(Value::as_i64)
        .and_then(|v| i32::try_from(v).ok())
        .ok_or_else(|| bad("no valid \"id\""))?;
    let name = field
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no \"name\""))?;
    let required = field
        .get("required")
        .and_then(Value::as_bool)
        .ok_or_else(|| bad("no \"required\""))?;
    let field_type = Type::from_json(field.get("type").ok_or_else(|| bad("no \"type\""))?)?;
    let default = |key: &str| field.get(key).filter(|v| !v.is_null()).cloned();
    Ok(NestedField {
        id,
        name: name.to_owned(),
        required,
        field_type,
        doc: field.get("doc").and_then(Value::as_str).map(str::to_owned),
        initial_default: default("initial-default"),
        write_default: default("write-default"),
    })
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Primitive(p) => p.fmt(f),
            Type::Struct(fields) => {
                f.write_str("struct<")?;
                for (i, field) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}: {}", field.name, field.field_type)?;
                }
                f.write_str(">")
            }
            Type::List { element, .. } => write!(f, "list<{element}>"),
            Type::Map { key, value, .. } => write!(f, "map<{key}, {value}>"),
            Type::Variant => f.write_str("variant"),
            Type::Geometry { crs } => write!(f, "geometry({crs})"),
            Type::Geography { crs, algorithm } => write!(f, "geography({crs}, {algorithm})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitive_strings_round_trip() {
        for text in [
            "boolean",
            "int",
            "long",
            "float",
            "double",
            "date",
            "time",
            "timestamp",
            "timestamptz",
            "string",
            "uuid",
            "binary",
            "fixed[16]",
            "timestamp_ns",
            "timestamptz_ns",
            "unknown",
        ] {
            assert_eq!(PrimitiveType::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(
            PrimitiveType::parse("decimal(9,2)").unwrap(),
            PrimitiveType::Decimal {
                precision: 9,
                scale: 2
            }
        );
        assert_eq!(
            PrimitiveType::parse(" decimal( 38 , 0 ) ")
                .unwrap()
                .to_string(),
            "decimal(38, 0)"
        );
    }

    #[test]
    fn bad_type_strings_are_refused() {
        for text in [
            "integer",
            "decimal(39,2)",
            "decimal(2,3)",
            "decimal(0,0)",
            "fixed[x]",
            "",
            "list",
        ] {
            assert!(
                matches!(PrimitiveType::parse(text), Err(Error::UnknownType(_))),
                "{text}"
            );
        }
    }

    #[test]
    fn v3_types_parse_and_print_as_java_does() {
        assert_eq!(
            PrimitiveType::parse("TimeStamp_NS").unwrap(),
            PrimitiveType::TimestampNs
        );
        assert_eq!(Type::parse_string("variant").unwrap(), Type::Variant);
        assert_eq!(
            Type::parse_string("geometry").unwrap().to_string(),
            "geometry(OGC:CRS84)"
        );
        assert_eq!(
            Type::parse_string("geography(EPSG:4326, Karney)")
                .unwrap()
                .to_string(),
            "geography(EPSG:4326, karney)"
        );
        assert!(Type::parse_string("geography(EPSG:4326, flat)").is_err());
        assert!(Type::parse_string("geometryx").is_err());
        let field = Type::parse(
            r#"{"type":"struct","fields":[{"id":1,"name":"a","required":false,"type":"int",
                "doc":"d","initial-default":3,"write-default":4}]}"#,
        )
        .unwrap();
        let Type::Struct(fields) = &field else {
            panic!()
        };
        assert_eq!(fields[0].initial_default, Some(serde_json::json!(3)));
        assert_eq!(Type::from_json(&field.to_json()).unwrap(), field);
    }

    #[test]
    fn nested_types_parse_from_json() {
        let t = Type::parse(
            r#"{"type":"struct","fields":[{"id":1,"name":"a","required":true,"type":"int"},
               {"id":2,"name":"b","required":false,"type":{"type":"list","element-id":3,
               "element-required":false,"element":"string"}},
               {"id":4,"name":"m","required":false,"type":{"type":"map","key-id":5,"key":"string",
               "value-id":6,"value-required":true,"value":"long"}}]}"#,
        )
        .unwrap();
        assert_eq!(
            t.to_string(),
            "struct<a: int, b: list<string>, m: map<string, long>>"
        );
        assert!(Type::parse(r#"{"type":"struct"}"#).is_err());
    }
}
