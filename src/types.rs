//! Iceberg data types (spec: "Schemas and Data Types", Appendix C type JSON).
//!
//! Primitive types parse from and print to the type strings of Appendix C
//! (`"int"`, `"decimal(9,2)"`, `"fixed[16]"`, ...). Nested types are parsed from
//! their JSON objects; they are needed here only for the JSON single-value form.

use std::fmt;

use crate::error::{Error, Result};

/// The largest decimal precision the spec allows.
pub const MAX_DECIMAL_PRECISION: u32 = 38;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveType {
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Decimal { precision: u32, scale: u32 },
    Date,
    Time,
    Timestamp,
    Timestamptz,
    String,
    Uuid,
    Fixed(u64),
    Binary,
}

impl PrimitiveType {
    /// Parses an Appendix C primitive type string. Whitespace inside the
    /// parameter lists is tolerated, as Java's parser does.
    pub fn parse(text: &str) -> Result<Self> {
        let unknown = || Error::UnknownType(format!("{text:?}"));
        let trimmed = text.trim();
        let simple = match trimmed {
            "boolean" => Some(Self::Boolean),
            "int" => Some(Self::Int),
            "long" => Some(Self::Long),
            "float" => Some(Self::Float),
            "double" => Some(Self::Double),
            "date" => Some(Self::Date),
            "time" => Some(Self::Time),
            "timestamp" => Some(Self::Timestamp),
            "timestamptz" => Some(Self::Timestamptz),
            "string" => Some(Self::String),
            "uuid" => Some(Self::Uuid),
            "binary" => Some(Self::Binary),
            _ => None,
        };
        if let Some(t) = simple {
            return Ok(t);
        }
        if let Some(inner) = trimmed
            .strip_prefix("fixed[")
            .and_then(|rest| rest.strip_suffix(']'))
        {
            let length: u64 = inner.trim().parse().map_err(|_| unknown())?;
            return Ok(Self::Fixed(length));
        }
        if let Some(inner) = trimmed
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
            Self::String => f.write_str("string"),
            Self::Uuid => f.write_str("uuid"),
            Self::Fixed(length) => write!(f, "fixed[{length}]"),
            Self::Binary => f.write_str("binary"),
        }
    }
}

/// A field of a struct type.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedField {
    pub id: i32,
    pub name: String,
    pub required: bool,
    pub field_type: Type,
}

/// Any Iceberg type: a primitive or a struct, list or map with field ids.
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
}

impl Type {
    /// Parses a type given either as a primitive type string or as the
    /// Appendix C JSON text of any type (a JSON string or object).
    pub fn parse(text: &str) -> Result<Self> {
        let trimmed = text.trim_start();
        if trimmed.starts_with('{') || trimmed.starts_with('"') {
            let json: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| Error::UnknownType(format!("{text:?}: not valid JSON ({e})")))?;
            Self::from_json(&json)
        } else {
            PrimitiveType::parse(text).map(Type::Primitive)
        }
    }

    /// Parses the Appendix C JSON form of a type.
    pub fn from_json(json: &serde_json::Value) -> Result<Self> {
        use serde_json::Value;
        let object = match json {
            Value::String(s) => return PrimitiveType::parse(s).map(Type::Primitive),
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
                    let id = field
                        .get("id")
                        .and_then(Value::as_i64)
                        .and_then(|v| i32::try_from(v).ok())
                        .ok_or_else(|| bad("struct field without a valid \"id\""))?;
                    let name = field
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| bad("struct field without a \"name\""))?;
                    let required = field
                        .get("required")
                        .and_then(Value::as_bool)
                        .ok_or_else(|| bad("struct field without \"required\""))?;
                    let field_type = Self::from_json(
                        field
                            .get("type")
                            .ok_or_else(|| bad("struct field without a \"type\""))?,
                    )?;
                    parsed.push(NestedField {
                        id,
                        name: name.to_owned(),
                        required,
                        field_type,
                    });
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

    pub fn as_primitive(&self) -> Option<PrimitiveType> {
        match self {
            Type::Primitive(p) => Some(*p),
            _ => None,
        }
    }
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
