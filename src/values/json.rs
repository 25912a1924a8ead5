//! JSON single-value serialization (spec: Appendix D), the form of default
//! values in schemas (`initial-default`, `write-default`).
//!
//! Where the spec is silent this follows Java's `SingleValueParser`:
//! - a struct omits null fields when written and reads missing fields as null;
//!   JSON keys that are not field ids of the struct are ignored;
//! - a decimal is read only with exactly the type's scale;
//! - a map with a null value is refused when written (Java cannot read it),
//!   accepted when read;
//! - NaN and infinities are written as the JSON strings `"NaN"`,
//!   `"Infinity"` and `"-Infinity"` (Jackson's default, as JSON numbers
//!   cannot express them) and those strings are read back;
//! - times and timestamps omit a zero fraction and trailing zeros
//!   (`"22:31:08"`), as Java's `ISO_LOCAL_TIME` does.
//!
//! One deliberate difference: binary and fixed values are written in
//! lowercase hex as in the spec's example (`"000102ff"`); Java writes upper
//! case. Both cases are read.

use serde_json::{Map as JsonMap, Number, Value};

use crate::error::{Error, Result};
use crate::types::{PrimitiveType, Type};

use super::{check_decimal, check_time, datetime, decimal, hex, mismatch, uuid_string, Literal};

/// Serializes a value of any type (primitive or nested) to Appendix D JSON.
pub fn to_json(ty: &Type, value: &Literal) -> Result<Value> {
    match (ty, value) {
        (Type::Primitive(p), _) => primitive_to_json(p, value),
        (Type::Struct(fields), Literal::Struct(values)) => {
            if fields.len() != values.len() {
                return Err(Error::InvalidValue(format!(
                    "a value of {ty} needs {} fields, got {}",
                    fields.len(),
                    values.len()
                )));
            }
            let mut object = JsonMap::new();
            for (field, value) in fields.iter().zip(values) {
                if let Some(value) = value {
                    object.insert(field.id.to_string(), to_json(&field.field_type, value)?);
                }
            }
            Ok(Value::Object(object))
        }
        (Type::List { element, .. }, Literal::List(values)) => values
            .iter()
            .map(|v| optional_to_json(element, v.as_ref()))
            .collect::<Result<Vec<_>>>()
            .map(Value::Array),
        (
            Type::Map {
                key,
                value: value_type,
                ..
            },
            Literal::Map(entries),
        ) => {
            let keys = entries
                .iter()
                .map(|(k, _)| to_json(key, k))
                .collect::<Result<Vec<_>>>()?;
            // A null map value is valid Iceberg, but Java's SingleValueParser
            // reads maps into an ImmutableMap, which throws on null values: a
            // schema default holding one would make the table unreadable to
            // Java, so it is refused here (reading one is accepted).
            let values = entries
                .iter()
                .map(|(k, v)| match v {
                    Some(v) => to_json(value_type, v),
                    None => Err(Error::InvalidValue(format!(
                        "the value of key {k} in a {ty} is null: Apache Iceberg Java cannot \
                         read a JSON map with null values, so none is written"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            let mut object = JsonMap::new();
            object.insert("keys".into(), Value::Array(keys));
            object.insert("values".into(), Value::Array(values));
            Ok(Value::Object(object))
        }
        _ => Err(mismatch(ty, value)),
    }
}

fn optional_to_json(ty: &Type, value: Option<&Literal>) -> Result<Value> {
    value.map_or(Ok(Value::Null), |v| to_json(ty, v))
}

/// A double as a JSON number, or Jackson's strings for the non-finite values.
fn double_to_json(value: f64) -> Value {
    match Number::from_f64(value) {
        Some(number) => Value::Number(number),
        None if value.is_nan() => Value::String("NaN".into()),
        None if value > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

fn primitive_to_json(ty: &PrimitiveType, value: &Literal) -> Result<Value> {
    use PrimitiveType as T;
    Ok(match (ty, value) {
        (T::Boolean, Literal::Boolean(v)) => Value::Bool(*v),
        (T::Int, Literal::Int(v)) => Value::from(*v),
        (T::Long, Literal::Long(v)) => Value::from(*v),
        // The shortest decimal that reads back as the same f32 ("0.1", as
        // Java's Float.toString writes), not the f64 widening 0.10000000149.
        (T::Float, Literal::Float(v)) => {
            double_to_json(v.to_string().parse::<f64>().unwrap_or(f64::from(*v)))
        }
        (T::Double, Literal::Double(v)) => double_to_json(*v),
        (T::Decimal { scale, .. }, Literal::Decimal(v)) => {
            let scale = i32::try_from(*scale).map_err(|_| mismatch(ty, value))?;
            Value::String(decimal::format(check_decimal(*ty, *v)?, scale))
        }
        (T::Date, Literal::Date(v)) => Value::String(datetime::format_date(*v)),
        (T::Time, Literal::Time(v)) => Value::String(datetime::format_time(*v)?),
        (T::Timestamp, Literal::Timestamp(v)) => {
            Value::String(datetime::format_timestamp(*v, false))
        }
        (T::Timestamptz, Literal::Timestamptz(v)) => {
            Value::String(datetime::format_timestamp(*v, true))
        }
        (T::TimestampNs, Literal::TimestampNs(v)) => {
            Value::String(datetime::format_timestamp_nanos(*v, false))
        }
        (T::TimestamptzNs, Literal::TimestamptzNs(v)) => {
            Value::String(datetime::format_timestamp_nanos(*v, true))
        }
        (T::String, Literal::String(v)) => Value::String(v.clone()),
        (T::Uuid, Literal::Uuid(v)) => Value::String(uuid_string(v)),
        (T::Fixed(length), Literal::Fixed(v)) => {
            if u64::try_from(v.len()).ok() != Some(*length) {
                return Err(Error::InvalidValue(format!(
                    "a fixed[{length}] value must be exactly {length} bytes, got {}",
                    v.len()
                )));
            }
            Value::String(hex(v))
        }
        (T::Binary, Literal::Binary(v)) => Value::String(hex(v)),
        _ => return Err(mismatch(ty, value)),
    })
}

/// Deserializes Appendix D JSON of any type. JSON `null` is not a value here
/// ([`Error::InvalidValue`]); a null inside a struct, list or map value
/// becomes `None`.
pub fn from_json(ty: &Type, json: &Value) -> Result<Literal> {
    let wrong_kind = |expected: &str| {
        Error::TypeMismatch(format!(
            "JSON {json} is not a valid value of type {ty}: expected {expected}"
        ))
    };
    match ty {
        Type::Variant | Type::Geometry { .. } | Type::Geography { .. } => Err(Error::UnknownType(
            format!("single values of type {ty} are not supported"),
        )),
        Type::Primitive(p) => {
            if json.is_null() {
                return Err(Error::InvalidValue(format!(
                    "JSON null is not a value of type {ty}"
                )));
            }
            primitive_from_json(p, json)
        }
        Type::Struct(fields) => {
            let object = json
                .as_object()
                .ok_or_else(|| wrong_kind("a JSON object keyed by field id"))?;
            let values = fields
                .iter()
                .map(|field| match object.get(&field.id.to_string()) {
                    None | Some(Value::Null) => Ok(None),
                    Some(v) => from_json(&field.field_type, v).map(Some),
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(Literal::Struct(values))
        }
        Type::List { element, .. } => {
            let array = json.as_array().ok_or_else(|| wrong_kind("a JSON array"))?;
            array
                .iter()
                .map(|v| optional_from_json(element, v))
                .collect::<Result<Vec<_>>>()
                .map(Literal::List)
        }
        Type::Map { key, value, .. } => {
            let expected = "a JSON object with \"keys\" and \"values\" arrays";
            let object = json.as_object().ok_or_else(|| wrong_kind(expected))?;
            let keys = object.get("keys").and_then(Value::as_array);
            let values = object.get("values").and_then(Value::as_array);
            let (Some(keys), Some(values)) = (keys, values) else {
                return Err(wrong_kind(expected));
            };
            if keys.len() != values.len() {
                return Err(Error::InvalidValue(format!(
                    "map JSON has {} keys but {} values",
                    keys.len(),
                    values.len()
                )));
            }
            let mut entries: Vec<(Literal, Option<Literal>)> = Vec::with_capacity(keys.len());
            for (k, v) in keys.iter().zip(values) {
                let k = from_json(key, k)?;
                // Java builds an ImmutableMap, which refuses duplicate keys.
                if entries.iter().any(|(existing, _)| *existing == k) {
                    return Err(Error::InvalidValue(format!(
                        "map JSON has the key {k} twice"
                    )));
                }
                entries.push((k, optional_from_json(value, v)?));
            }
            Ok(Literal::Map(entries))
        }
    }
}

fn optional_from_json(ty: &Type, json: &Value) -> Result<Option<Literal>> {
    if json.is_null() {
        Ok(None)
    } else {
        from_json(ty, json).map(Some)
    }
}

/// A JSON number, or one of Jackson's strings for non-finite values.
fn double_from_json(json: &Value) -> Option<f64> {
    match json {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => match s.as_str() {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn integer_from_json(ty: &PrimitiveType, json: &Value) -> Result<i64> {
    match json {
        Value::Number(n) if n.is_i64() || n.is_u64() => n.as_i64().ok_or_else(|| {
            Error::InvalidValue(format!("JSON {json} is out of range for type {ty}"))
        }),
        // Integers beyond 64 bits are parsed as doubles; they are integers
        // out of range rather than numbers of the wrong kind.
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
        {
            Err(Error::InvalidValue(format!(
                "JSON {json} is out of range for type {ty}"
            )))
        }
        _ => Err(Error::TypeMismatch(format!(
            "JSON {json} is not a valid value of type {ty}: expected a JSON integer"
        ))),
    }
}

fn text<'a>(ty: &PrimitiveType, json: &'a Value) -> Result<&'a str> {
    json.as_str().ok_or_else(|| {
        Error::TypeMismatch(format!(
            "JSON {json} is not a valid value of type {ty}: expected a JSON string"
        ))
    })
}

fn hex_from_json(ty: &PrimitiveType, json: &Value) -> Result<Vec<u8>> {
    let digits = text(ty, json)?;
    let bad = || Error::InvalidValue(format!("{json} is not a hexadecimal {ty} value"));
    if digits.len() % 2 != 0 {
        return Err(bad());
    }
    digits
        .as_bytes()
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .filter(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(bad)
        })
        .collect()
}

fn uuid_from_json(ty: &PrimitiveType, json: &Value) -> Result<[u8; 16]> {
    let s = text(ty, json)?;
    let bad = || Error::InvalidValue(format!("{json} is not a UUID (8-4-4-4-12 hex digits)"));
    let groups: Vec<&str> = s.split('-').collect();
    let shape_ok = groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && s.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit());
    if !shape_ok {
        return Err(bad());
    }
    let bytes = hex_from_json(ty, &Value::String(groups.concat())).map_err(|_| bad())?;
    bytes.try_into().map_err(|_| bad())
}

fn primitive_from_json(ty: &PrimitiveType, json: &Value) -> Result<Literal> {
    use PrimitiveType as T;
    let out_of_range = || Error::InvalidValue(format!("JSON {json} is out of range for type {ty}"));
    Ok(match ty {
        T::Boolean => Literal::Boolean(json.as_bool().ok_or_else(|| {
            Error::TypeMismatch(format!(
                "JSON {json} is not a valid value of type {ty}: expected true or false"
            ))
        })?),
        T::Int => {
            Literal::Int(i32::try_from(integer_from_json(ty, json)?).map_err(|_| out_of_range())?)
        }
        T::Long => Literal::Long(integer_from_json(ty, json)?),
        // The spec says "JSON number", so an integer such as 1 is accepted
        // too (Java accepts only numbers written with a point or exponent).
        T::Float | T::Double => {
            let v = double_from_json(json).ok_or_else(|| {
                Error::TypeMismatch(format!(
                    "JSON {json} is not a valid value of type {ty}: expected a JSON number"
                ))
            })?;
            if *ty == T::Double {
                Literal::Double(v)
            } else {
                let narrowed = v as f32;
                if v.is_finite() && narrowed.is_infinite() {
                    return Err(out_of_range());
                }
                Literal::Float(narrowed)
            }
        }
        T::Decimal { scale, .. } => {
            let (unscaled, text_scale) = decimal::parse(text(ty, json)?)?;
            if i64::from(text_scale) != i64::from(*scale) {
                return Err(Error::InvalidValue(format!(
                    "decimal {json} has scale {text_scale}, but {ty} needs exactly {scale} digits \
                     after the point"
                )));
            }
            Literal::Decimal(check_decimal(*ty, unscaled)?)
        }
        T::Date => Literal::Date(datetime::parse_date(text(ty, json)?)?),
        T::Time => Literal::Time(check_time(datetime::parse_time(text(ty, json)?)?)?),
        T::Timestamp => Literal::Timestamp(datetime::parse_timestamp(text(ty, json)?, false)?),
        T::Timestamptz => Literal::Timestamptz(datetime::parse_timestamp(text(ty, json)?, true)?),
        T::TimestampNs => {
            Literal::TimestampNs(datetime::parse_timestamp_nanos(text(ty, json)?, false)?)
        }
        T::TimestamptzNs => {
            Literal::TimestamptzNs(datetime::parse_timestamp_nanos(text(ty, json)?, true)?)
        }
        T::Unknown => {
            return Err(Error::InvalidValue(
                "type unknown has no values (it is always null)".to_owned(),
            ))
        }
        T::String => Literal::String(text(ty, json)?.to_owned()),
        T::Uuid => Literal::Uuid(uuid_from_json(ty, json)?),
        T::Fixed(length) => {
            let bytes = hex_from_json(ty, json)?;
            if u64::try_from(bytes.len()).ok() != Some(*length) {
                return Err(Error::InvalidValue(format!(
                    "a fixed[{length}] value must be exactly {length} bytes, got {} in {json}",
                    bytes.len()
                )));
            }
            Literal::Fixed(bytes)
        }
        T::Binary => Literal::Binary(hex_from_json(ty, json)?),
    })
}

#[cfg(test)]
#[path = "json_tests.rs"]
mod tests;
