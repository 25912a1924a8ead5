//! Writing Iceberg-typed Arrow data as Avro (spec: Appendix A, "Avro"): the
//! writer schema with every field id, and the binary encoding of each row.

use std::collections::HashSet;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal128Type, Float32Type, Float64Type, Int32Type, Int64Type,
    Time64MicrosecondType, TimestampMicrosecondType, TimestampNanosecondType,
};
use arrow_array::{Array, StructArray};
use serde_json::{json, Map, Value};

use super::binary::{write_bytes, write_long};
use crate::error::{Error, Result};
use crate::types::{NestedField, PrimitiveType, Type};

/// The Avro schema JSON of an Iceberg struct, named `record_name`, in the
/// shape Java writes: nested records named `r<field id>`, map entries
/// `k<key id>_v<value id>`, optional fields as `["null", T]` with a null default.
pub fn avro_schema(fields: &[NestedField], record_name: &str) -> Value {
    let mut names = HashSet::new();
    record_json(fields, record_name, &mut names)
}

fn record_json(fields: &[NestedField], name: &str, names: &mut HashSet<String>) -> Value {
    let fields: Vec<Value> = fields
        .iter()
        .map(|f| {
            let inner = type_json(&f.field_type, &format!("r{}", f.id), names);
            let mut field = Map::new();
            let avro_name = sanitize(&f.name);
            if avro_name != f.name {
                // As Java does, keep the Iceberg name beside the Avro-legal one.
                field.insert("iceberg-field-name".into(), json!(f.name));
            }
            field.insert("name".into(), json!(avro_name));
            if f.required {
                field.insert("type".into(), inner);
            } else {
                field.insert("type".into(), optional(inner, false));
                field.insert("default".into(), Value::Null);
            }
            field.insert("field-id".into(), json!(f.id));
            Value::Object(field)
        })
        .collect();
    json!({"type": "record", "name": name, "fields": fields})
}

/// An Avro-legal name (`[A-Za-z_][A-Za-z0-9_]*`) for an Iceberg field name,
/// escaping as Java's AvroSchemaUtil does: a leading digit becomes `_d`, any
/// other illegal character `_x` and its upper-case hex code.
pub fn sanitize(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        let legal = c == '_' || c.is_ascii_alphabetic() || (i > 0 && c.is_ascii_digit());
        if legal {
            out.push(c);
        } else if c.is_ascii_digit() {
            out.push('_');
            out.push(c);
        } else {
            out.push_str(&format!("_x{:X}", c as u32));
        }
    }
    if out.is_empty() {
        out.push('_');
    }
    out
}

fn is_unknown(ty: &Type) -> bool {
    ty.as_primitive() == Some(PrimitiveType::Unknown)
}

/// `inner`, or `["null", inner]` when optional. `unknown` stays a bare
/// "null" (a union may not repeat null), as Java's AvroSchemaUtil.toOption
/// leaves it.
fn optional(inner: Value, required: bool) -> Value {
    if required || inner == json!("null") {
        inner
    } else {
        json!(["null", inner])
    }
}

/// A named Avro type is defined once; later uses refer to it by name, or
/// Avro parsers refuse the schema as a redefinition.
fn named(name: String, definition: Value, names: &mut HashSet<String>) -> Value {
    if names.insert(name.clone()) {
        definition
    } else {
        Value::String(name)
    }
}

fn type_json(ty: &Type, record_name: &str, names: &mut HashSet<String>) -> Value {
    match ty {
        Type::Primitive(p) => primitive_json(*p, names),
        // Appendix A: geometry and geography are WKB in `bytes`; a variant is
        // never in a manifest's write type (only void partitions it).
        Type::Geometry { .. } | Type::Geography { .. } | Type::Variant => json!("bytes"),
        Type::Struct(fields) => record_json(fields, record_name, names),
        Type::List {
            element_id,
            element_required,
            element,
        } => json!({
            "type": "array",
            "items": optional(type_json(element, &format!("r{element_id}"), names), *element_required),
            "element-id": element_id,
        }),
        Type::Map {
            key_id,
            key,
            value_id,
            value_required,
            value,
        } => {
            let key_json = type_json(key, &format!("r{key_id}"), names);
            let value_json = optional(
                type_json(value, &format!("r{value_id}"), names),
                *value_required,
            );
            if key.as_primitive() == Some(PrimitiveType::String) {
                json!({"type": "map", "values": value_json, "key-id": key_id, "value-id": value_id})
            } else {
                // Non-string keys: an array of key/value records with logicalType map.
                json!({
                    "type": "array",
                    "logicalType": "map",
                    "items": {
                        "type": "record",
                        "name": format!("k{key_id}_v{value_id}"),
                        "fields": [
                            {"name": "key", "type": key_json, "field-id": key_id},
                            {"name": "value", "type": value_json, "field-id": value_id},
                        ],
                    },
                })
            }
        }
    }
}

fn primitive_json(p: PrimitiveType, names: &mut HashSet<String>) -> Value {
    use PrimitiveType as P;
    match p {
        P::Boolean => json!("boolean"),
        P::Int => json!("int"),
        P::Long => json!("long"),
        P::Float => json!("float"),
        P::Double => json!("double"),
        P::Date => json!({"type": "int", "logicalType": "date"}),
        P::Time => json!({"type": "long", "logicalType": "time-micros"}),
        P::Timestamp => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": false})
        }
        P::Timestamptz => {
            json!({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": true})
        }
        P::TimestampNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": false})
        }
        P::TimestamptzNs => {
            json!({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": true})
        }
        // Appendix A: `unknown` is Avro null (always null).
        P::Unknown => json!("null"),
        P::String => json!("string"),
        P::Binary => json!("bytes"),
        P::Uuid => named(
            "uuid_fixed".into(),
            json!({"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}),
            names,
        ),
        P::Fixed(n) => {
            let name = format!("fixed_{n}");
            named(
                name.clone(),
                json!({"type": "fixed", "name": name, "size": n}),
                names,
            )
        }
        P::Decimal { precision, scale } => {
            let name = format!("decimal_{precision}_{scale}");
            named(
                name.clone(),
                json!({"type": "fixed", "name": name, "size": decimal_bytes(precision),
                       "logicalType": "decimal", "precision": precision, "scale": scale}),
                names,
            )
        }
    }
}

/// The fewest bytes that hold every unscaled value of `precision` digits
/// (Appendix A: `minBytesRequired(P)`).
pub fn decimal_bytes(precision: u32) -> usize {
    let mut bytes = 1usize;
    // 2^(8*bytes - 1) must exceed 10^precision.
    while (8 * bytes - 1) as f64 * std::f64::consts::LOG10_2 < f64::from(precision) {
        bytes += 1;
    }
    bytes
}

/// Encodes row `row` of `array` (a struct of the Iceberg type `fields`).
pub fn encode_struct(
    fields: &[NestedField],
    array: &StructArray,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    if array.num_columns() != fields.len() {
        return Err(Error::TypeMismatch(format!(
            "struct has {} columns, expected {}",
            array.num_columns(),
            fields.len()
        )));
    }
    for (field, column) in fields.iter().zip(array.columns()) {
        encode_field(
            field.required,
            &field.field_type,
            &field.name,
            column.as_ref(),
            row,
            out,
        )?;
    }
    Ok(())
}

fn encode_field(
    required: bool,
    ty: &Type,
    name: &str,
    array: &dyn Array,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    if is_unknown(ty) {
        // Avro null: nothing is written, and there is no value to write. (A
        // NullArray has no null buffer: its slots are null by its type.)
        if *array.data_type() != arrow_schema::DataType::Null && array.is_valid(row) {
            return Err(Error::InvalidValue(format!(
                "field {name} is of type unknown, which is always null, but has a value"
            )));
        }
        return Ok(());
    }
    if array.is_null(row) {
        if required {
            return Err(Error::InvalidValue(format!(
                "required field {name} is null"
            )));
        }
        out.push(0); // union branch 0: null
        return Ok(());
    }
    if !required {
        out.push(2); // union branch 1, zig-zag encoded
    }
    encode_value(ty, name, array, row, out)
}

fn wrong(name: &str, ty: &Type, array: &dyn Array) -> Error {
    Error::TypeMismatch(format!(
        "field {name}: Arrow {} cannot be written as Iceberg {ty}",
        array.data_type()
    ))
}

fn encode_value(
    ty: &Type,
    name: &str,
    array: &dyn Array,
    row: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    use arrow_schema::DataType as D;
    use PrimitiveType as P;
    let bad = || wrong(name, ty, array);
    match (ty, array.data_type()) {
        (Type::Primitive(P::Boolean), D::Boolean) => {
            out.push(u8::from(array.as_boolean().value(row)))
        }
        (Type::Primitive(P::Int), D::Int32) => {
            write_long(out, i64::from(array.as_primitive::<Int32Type>().value(row)))
        }
        (Type::Primitive(P::Date), D::Date32) => write_long(
            out,
            i64::from(array.as_primitive::<Date32Type>().value(row)),
        ),
        (Type::Primitive(P::Long), D::Int64) => {
            write_long(out, array.as_primitive::<Int64Type>().value(row))
        }
        (Type::Primitive(P::Time), D::Time64(arrow_schema::TimeUnit::Microsecond)) => write_long(
            out,
            array.as_primitive::<Time64MicrosecondType>().value(row),
        ),
        (
            Type::Primitive(P::Timestamp | P::Timestamptz),
            D::Timestamp(arrow_schema::TimeUnit::Microsecond, _),
        ) => write_long(
            out,
            array.as_primitive::<TimestampMicrosecondType>().value(row),
        ),
        (
            Type::Primitive(P::TimestampNs | P::TimestamptzNs),
            D::Timestamp(arrow_schema::TimeUnit::Nanosecond, _),
        ) => write_long(
            out,
            array.as_primitive::<TimestampNanosecondType>().value(row),
        ),
        (Type::Primitive(P::Float), D::Float32) => {
            out.extend_from_slice(&array.as_primitive::<Float32Type>().value(row).to_le_bytes())
        }
        (Type::Primitive(P::Double), D::Float64) => {
            out.extend_from_slice(&array.as_primitive::<Float64Type>().value(row).to_le_bytes())
        }
        (Type::Primitive(P::String), D::Utf8) => {
            write_bytes(out, array.as_string::<i32>().value(row).as_bytes())
        }
        (Type::Primitive(P::Binary), D::Binary) => {
            write_bytes(out, array.as_binary::<i32>().value(row))
        }
        (Type::Primitive(P::Uuid | P::Fixed(_)), D::FixedSizeBinary(_)) => {
            let value = array.as_fixed_size_binary().value(row);
            let expected = match ty {
                Type::Primitive(P::Fixed(n)) => *n as usize,
                _ => 16,
            };
            if value.len() != expected {
                return Err(bad());
            }
            out.extend_from_slice(value);
        }
        (Type::Primitive(P::Decimal { precision, scale }), D::Decimal128(_, arrow_scale)) => {
            // The unscaled value means the Iceberg value only at the same scale.
            if i64::from(*arrow_scale) != i64::from(*scale) {
                return Err(bad());
            }
            let value = array.as_primitive::<Decimal128Type>().value(row);
            // Appendix A: a fixed of minBytesRequired(P) bytes. A value of
            // more than P digits may not fit it: refuse it rather than drop
            // its high bytes.
            crate::values::decimal::check_precision(value, *precision).map_err(|_| {
                Error::InvalidValue(format!(
                    "field {name}: decimal with unscaled value {value} (scale {scale}) has more \
                     than {precision} digits and does not fit {ty}"
                ))
            })?;
            let size = decimal_bytes(*precision);
            out.extend_from_slice(&value.to_be_bytes()[16 - size..]);
        }
        (Type::Struct(fields), D::Struct(_)) => encode_struct(fields, array.as_struct(), row, out)?,
        (
            Type::List {
                element_required,
                element,
                ..
            },
            D::List(_),
        ) => {
            let list = array.as_list::<i32>();
            let items = list.value(row);
            write_long(out, items.len() as i64);
            for i in 0..items.len() {
                encode_field(*element_required, element, name, items.as_ref(), i, out)?;
            }
            if !items.is_empty() {
                write_long(out, 0);
            }
        }
        (
            Type::Map {
                key,
                value_required,
                value,
                ..
            },
            D::Map(_, _),
        ) => {
            let map = array.as_map();
            let offsets = map.value_offsets();
            let (start, end) = (offsets[row] as usize, offsets[row + 1] as usize);
            let (keys, values) = (map.keys(), map.values());
            write_long(out, (end - start) as i64);
            let string_keys = key.as_primitive() == Some(P::String);
            for i in start..end {
                if string_keys {
                    encode_value(key, name, keys.as_ref(), i, out)?;
                } else {
                    encode_field(true, key, name, keys.as_ref(), i, out)?;
                }
                encode_field(*value_required, value, name, values.as_ref(), i, out)?;
            }
            if end > start {
                write_long(out, 0);
            }
        }
        _ => return Err(bad()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_made_avro_legal_like_java() {
        assert_eq!(sanitize("ts_day"), "ts_day");
        assert_eq!(sanitize("1a"), "_1a");
        assert_eq!(sanitize("a-b"), "a_x2Db");
        assert_eq!(sanitize("a.b c"), "a_x2Eb_x20c");
    }

    fn encode_one(ty: Type, array: arrow_array::ArrayRef) -> Result<Vec<u8>> {
        let fields = vec![NestedField::optional(1, "v", ty)];
        let rows = StructArray::from(vec![(
            std::sync::Arc::new(arrow_schema::Field::new(
                "v",
                array.data_type().clone(),
                true,
            )),
            array,
        )]);
        let mut out = Vec::new();
        for row in 0..rows.len() {
            encode_struct(&fields, &rows, row, &mut out)?;
        }
        Ok(out)
    }

    #[test]
    fn decimals_wider_than_their_fixed_are_refused() {
        use arrow_array::Decimal128Array;
        let ty = Type::Primitive(PrimitiveType::Decimal {
            precision: 4,
            scale: 2,
        });
        let fits = Decimal128Array::from(vec![9999, -9999, 0])
            .with_precision_and_scale(38, 2)
            .unwrap();
        // decimal(4, 2) is a fixed of 2 bytes: 9999 is 0x270F.
        let out = encode_one(ty.clone(), std::sync::Arc::new(fits)).unwrap();
        assert_eq!(out, [2, 0x27, 0x0f, 2, 0xd8, 0xf1, 2, 0, 0]);
        // 70000 would lose its high byte (0x01_11_70 -> 0x11_70, i.e. 4464).
        for value in [70_000i128, 10_000, -10_000, i128::MAX] {
            let wide = Decimal128Array::from(vec![value])
                .with_precision_and_scale(38, 2)
                .unwrap();
            let err = encode_one(ty.clone(), std::sync::Arc::new(wide)).unwrap_err();
            assert!(
                matches!(&err, Error::InvalidValue(m) if m.contains("field v") && m.contains(&value.to_string())),
                "{err:?}"
            );
        }
        // Another scale means another value: refused, not reinterpreted.
        let rescaled = Decimal128Array::from(vec![1])
            .with_precision_and_scale(4, 3)
            .unwrap();
        assert!(matches!(
            encode_one(ty, std::sync::Arc::new(rescaled)),
            Err(Error::TypeMismatch(_))
        ));
    }

    #[test]
    fn unknown_is_a_bare_null_and_nanoseconds_are_longs() {
        let fields = vec![
            NestedField::optional(1, "u", Type::Primitive(PrimitiveType::Unknown)),
            NestedField::optional(2, "n", Type::Primitive(PrimitiveType::TimestampNs)),
        ];
        let schema = avro_schema(&fields, "r");
        assert_eq!(schema["fields"][0]["type"], json!("null"));
        assert_eq!(schema["fields"][0]["default"], Value::Null);
        assert_eq!(
            schema["fields"][1]["type"][1]["logicalType"],
            json!("timestamp-nanos")
        );
        let nulls: arrow_array::ArrayRef = std::sync::Arc::new(arrow_array::NullArray::new(1));
        assert_eq!(
            encode_one(Type::Primitive(PrimitiveType::Unknown), nulls).unwrap(),
            Vec::<u8>::new()
        );
        let value: arrow_array::ArrayRef =
            std::sync::Arc::new(arrow_array::Int32Array::from(vec![1]));
        assert!(matches!(
            encode_one(Type::Primitive(PrimitiveType::Unknown), value),
            Err(Error::InvalidValue(_))
        ));
        let nanos: arrow_array::ArrayRef = std::sync::Arc::new(
            arrow_array::TimestampNanosecondArray::from(vec![-1]).with_timezone("UTC"),
        );
        assert_eq!(
            encode_one(Type::Primitive(PrimitiveType::TimestamptzNs), nanos).unwrap(),
            [2, 1]
        );
    }

    #[test]
    fn decimal_sizes_match_the_spec() {
        // minBytesRequired: 9 digits fit in 4 bytes, 10 need 5, 38 need 16.
        assert_eq!(decimal_bytes(1), 1);
        assert_eq!(decimal_bytes(2), 1);
        assert_eq!(decimal_bytes(3), 2);
        assert_eq!(decimal_bytes(9), 4);
        assert_eq!(decimal_bytes(10), 5);
        assert_eq!(decimal_bytes(18), 8);
        assert_eq!(decimal_bytes(19), 9);
        assert_eq!(decimal_bytes(38), 16);
    }
}
