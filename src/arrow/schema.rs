//! The Arrow schema a scan's rows are handed out with: the decoder's Arrow
//! types (`crate::avro::columns::arrow_type`, the one Iceberg -> Arrow type
//! mapping) with the Iceberg schema's nullability stated (a field, list
//! element or map value is nullable exactly when it is optional; a map key
//! never is) and, when asked, uuid columns as Arrow's canonical `arrow.uuid`
//! extension type (storage `fixed_size_binary(16)`), which pyarrow imports
//! as `pa.uuid()`, as pyiceberg reads them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema as ArrowSchema};

use crate::avro::columns::arrow_type;
use crate::spec::schema::Schema;
use crate::spec::types::{NestedField, PrimitiveType, Type};

/// Arrow's extension type keys (Arrow columnar format: "Extension Types").
const EXTENSION_NAME: &str = "ARROW:extension:name";
const EXTENSION_METADATA: &str = "ARROW:extension:metadata";
/// The canonical UUID extension type's name.
const UUID_EXTENSION: &str = "arrow.uuid";

/// How a scan's Arrow schema is stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanArrow {
    /// Required fields, list elements and map values are non-nullable.
    pub nullability: bool,
    /// uuid columns carry the `arrow.uuid` extension type.
    pub uuid_extension: bool,
}

/// The Arrow schema of `schema`'s rows, stated as `how` says.
pub fn scan_arrow_schema(schema: &Schema, how: ScanArrow) -> ArrowSchema {
    ArrowSchema::new(struct_fields(&schema.fields, how))
}

fn struct_fields(fields: &[NestedField], how: ScanArrow) -> Fields {
    fields
        .iter()
        .map(|f| field(&f.name, &f.field_type, f.required, how))
        .collect()
}

fn field(name: &str, ty: &Type, required: bool, how: ScanArrow) -> Field {
    // `unknown` (Arrow null) has only nulls, whatever the flag says (the
    // spec lets it be optional only).
    let is_null_type = matches!(ty, Type::Primitive(PrimitiveType::Unknown));
    field_with(
        name,
        ty,
        !(how.nullability && required) || is_null_type,
        how,
    )
}

fn field_with(name: &str, ty: &Type, nullable: bool, how: ScanArrow) -> Field {
    let out = Field::new(name, data_type(ty, how), nullable);
    if how.uuid_extension && matches!(ty, Type::Primitive(PrimitiveType::Uuid)) {
        return out.with_metadata(HashMap::from([
            (EXTENSION_NAME.to_owned(), UUID_EXTENSION.to_owned()),
            (EXTENSION_METADATA.to_owned(), String::new()),
        ]));
    }
    out
}

fn data_type(ty: &Type, how: ScanArrow) -> DataType {
    match ty {
        Type::Struct(fields) => DataType::Struct(struct_fields(fields, how)),
        Type::List {
            element,
            element_required,
            ..
        } => DataType::List(Arc::new(field("item", element, *element_required, how))),
        Type::Map {
            key,
            value,
            value_required,
            ..
        } => DataType::Map(
            Arc::new(Field::new(
                "entries",
                DataType::Struct(Fields::from(vec![
                    field_with("key", key, false, how),
                    field("value", value, *value_required, how),
                ])),
                false,
            )),
            false,
        ),
        other => arrow_type(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"u","required":false,"type":"uuid"},
        {"id":3,"name":"s","required":false,"type":{"type":"struct","fields":[
            {"id":4,"name":"a","required":true,"type":"uuid"},
            {"id":5,"name":"b","required":false,"type":"string"}]}},
        {"id":6,"name":"l","required":true,"type":{"type":"list","element-id":7,
            "element-required":true,"element":"uuid"}},
        {"id":8,"name":"m","required":false,"type":{"type":"map","key-id":9,"key":"string",
            "value-id":10,"value-required":true,"value":{"type":"list","element-id":11,
            "element-required":false,"element":"int"}}},
        {"id":12,"name":"n","required":false,"type":"unknown"}]}"#;

    fn plain(ty: &DataType) -> DataType {
        // The type with every field nullable and no extension metadata.
        match ty {
            DataType::Struct(fields) => DataType::Struct(
                fields
                    .iter()
                    .map(|f| Field::new(f.name(), plain(f.data_type()), true))
                    .collect(),
            ),
            DataType::List(f) => {
                DataType::List(Arc::new(Field::new(f.name(), plain(f.data_type()), true)))
            }
            DataType::Map(f, sorted) => {
                let DataType::Struct(kv) = f.data_type() else {
                    return ty.clone();
                };
                let kv: Fields = kv
                    .iter()
                    .enumerate()
                    .map(|(i, c)| Field::new(c.name(), plain(c.data_type()), i == 1))
                    .collect();
                DataType::Map(
                    Arc::new(Field::new(f.name(), DataType::Struct(kv), false)),
                    *sorted,
                )
            }
            other => other.clone(),
        }
    }

    #[test]
    fn types_are_the_decoders_and_nullability_the_schemas() {
        let schema = Schema::parse(SCHEMA).unwrap();
        let how = ScanArrow {
            nullability: true,
            uuid_extension: true,
        };
        let arrow = scan_arrow_schema(&schema, how);
        // One type mapping: apart from nullability and extension metadata,
        // the decoder's types.
        let decoder = arrow_type(&Type::Struct(schema.fields.clone()));
        assert_eq!(
            plain(&DataType::Struct(arrow.fields().clone())),
            plain(&decoder)
        );
        let nullable: Vec<bool> = arrow.fields().iter().map(|f| f.is_nullable()).collect();
        assert_eq!(nullable, [false, true, true, false, true, true]);
        fn uuid(f: &Field) -> Option<&str> {
            f.metadata().get(EXTENSION_NAME).map(String::as_str)
        }
        assert_eq!(uuid(arrow.field(1)), Some(UUID_EXTENSION));
        assert_eq!(uuid(arrow.field(0)), None);
        let DataType::Struct(s) = arrow.field(2).data_type() else {
            panic!()
        };
        assert!(!s[0].is_nullable() && s[1].is_nullable());
        assert_eq!(uuid(&s[0]), Some(UUID_EXTENSION));
        let DataType::List(element) = arrow.field(3).data_type() else {
            panic!()
        };
        assert!(!element.is_nullable());
        assert_eq!(uuid(element), Some(UUID_EXTENSION));
        let DataType::Map(entries, _) = arrow.field(4).data_type() else {
            panic!()
        };
        let DataType::Struct(kv) = entries.data_type() else {
            panic!()
        };
        assert!(!kv[0].is_nullable() && !kv[1].is_nullable());
        let DataType::List(inner) = kv[1].data_type() else {
            panic!()
        };
        assert!(inner.is_nullable());
    }

    #[test]
    fn without_options_every_field_is_nullable_and_uuid_fixed() {
        let schema = Schema::parse(SCHEMA).unwrap();
        let how = ScanArrow {
            nullability: false,
            uuid_extension: false,
        };
        let arrow = scan_arrow_schema(&schema, how);
        let decoder = arrow_type(&Type::Struct(schema.fields.clone()));
        assert_eq!(DataType::Struct(arrow.fields().clone()), decoder);
    }
}
