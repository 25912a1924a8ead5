//! The partition tuple type of a manifest (spec: "Manifests": the partition
//! struct's type "is derived from the partition fields of the partition spec
//! used to write the manifest file"), from the `partition-spec` and `schema`
//! JSON in the file's key-value metadata.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::transform::Transform;
use crate::types::{NestedField, PrimitiveType, Type};

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionField {
    pub field_id: i32,
    pub source_id: i32,
    pub name: String,
    pub transform: String,
}

/// Parses the `partition-spec` metadata: Java writes the bare fields array;
/// a full spec object `{"spec-id": .., "fields": [..]}` is accepted too.
pub fn parse_spec_fields(text: &str) -> Result<Vec<PartitionField>> {
    let json: Value = serde_json::from_str(text)
        .map_err(|e| Error::InvalidData(format!("partition-spec is not valid JSON: {e}")))?;
    let fields = match &json {
        Value::Array(a) => a,
        Value::Object(o) => o.get("fields").and_then(Value::as_array).ok_or_else(|| {
            Error::InvalidData("partition-spec object without \"fields\"".to_owned())
        })?,
        _ => {
            return Err(Error::InvalidData(
                "partition-spec must be a JSON array".to_owned(),
            ))
        }
    };
    let mut out = Vec::with_capacity(fields.len());
    for (i, f) in fields.iter().enumerate() {
        let bad = |what: &str| Error::InvalidData(format!("partition-spec field {f}: {what}"));
        let int = |key: &str| -> Option<i32> {
            f.get(key)
                .and_then(Value::as_i64)
                .and_then(|v| i32::try_from(v).ok())
        };
        out.push(PartitionField {
            // Specs written before field ids existed number them from 1000.
            field_id: int("field-id").unwrap_or(1000 + i as i32),
            source_id: int("source-id").ok_or_else(|| bad("missing source-id"))?,
            name: f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing name"))?
                .to_owned(),
            transform: f
                .get("transform")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing transform"))?
                .to_owned(),
        });
    }
    Ok(out)
}

fn find_field(fields: &[NestedField], id: i32) -> Option<&NestedField> {
    for f in fields {
        if f.id == id {
            return Some(f);
        }
        let nested = match &f.field_type {
            Type::Struct(inner) => find_field(inner, id),
            _ => None,
        };
        if nested.is_some() {
            return nested;
        }
    }
    None
}

/// The partition struct type for `spec` over the table `schema` JSON.
pub fn partition_type(spec: &[PartitionField], schema_json: &str) -> Result<Type> {
    let schema = Type::parse(schema_json)
        .map_err(|e| Error::InvalidData(format!("schema metadata does not parse: {e}")))?;
    let Type::Struct(columns) = &schema else {
        return Err(Error::InvalidData(
            "schema metadata is not a struct".to_owned(),
        ));
    };
    let mut fields = Vec::with_capacity(spec.len());
    for pf in spec {
        let source = find_field(columns, pf.source_id)
            .and_then(|f| f.field_type.as_primitive())
            .ok_or_else(|| {
                Error::InvalidData(format!(
                    "partition field {} refers to source id {}, not a primitive column of the schema",
                    pf.name, pf.source_id
                ))
            })?;
        fields.push(NestedField {
            id: pf.field_id,
            name: pf.name.clone(),
            required: false,
            field_type: Type::Primitive(result_type(&pf.transform, source)?),
        });
    }
    Ok(Type::Struct(fields))
}

/// The type of a transform's values. `day` yields a date, as Java types it
/// (its Avro partition field is `int` with logicalType `date`).
pub fn result_type(transform: &str, source: PrimitiveType) -> Result<PrimitiveType> {
    let t = Transform::parse(transform)
        .map_err(|e| Error::InvalidData(format!("partition-spec: {e}")))?;
    if t == Transform::Day {
        return Ok(PrimitiveType::Date);
    }
    t.result_type(source)
        .map_err(|e| Error::InvalidData(format!("partition-spec: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"ts","required":false,"type":"timestamptz"},
        {"id":3,"name":"s","required":false,"type":{"type":"struct","fields":[
            {"id":4,"name":"name","required":false,"type":"string"}]}}]}"#;

    #[test]
    fn partition_types_follow_the_transforms() {
        let spec = parse_spec_fields(
            r#"[{"name":"id_bucket","transform":"bucket[16]","source-id":1,"field-id":1000},
                {"name":"ts_day","transform":"day","source-id":2,"field-id":1001},
                {"name":"ts_hour","transform":"hour","source-id":2,"field-id":1002},
                {"name":"name","transform":"identity","source-id":4,"field-id":1003},
                {"name":"ts","transform":"identity","source-id":2,"field-id":1004}]"#,
        )
        .unwrap();
        let Type::Struct(fields) = partition_type(&spec, SCHEMA).unwrap() else {
            panic!()
        };
        let types: Vec<String> = fields.iter().map(|f| f.field_type.to_string()).collect();
        assert_eq!(types, ["int", "date", "int", "string", "timestamptz"]);
        assert_eq!(fields[1].id, 1001);
    }

    #[test]
    fn legacy_specs_without_field_ids_start_at_1000() {
        let spec = parse_spec_fields(
            r#"{"spec-id":0,"fields":[{"name":"a","transform":"identity","source-id":1}]}"#,
        )
        .unwrap();
        assert_eq!(spec[0].field_id, 1000);
        assert!(parse_spec_fields("[{\"name\":\"a\"}]").is_err());
        let unknown =
            parse_spec_fields(r#"[{"name":"a","transform":"identity","source-id":9}]"#).unwrap();
        assert!(matches!(
            partition_type(&unknown, SCHEMA),
            Err(Error::InvalidData(_))
        ));
    }
}
