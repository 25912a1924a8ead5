//! Partition specs and their partition types (spec: "Partitioning",
//! "Partition Transforms", Appendix C "Partition Specs"; "Manifests": the
//! partition struct's type "is derived from the partition fields of the
//! partition spec used to write the manifest file").

use serde_json::{json, Value};

use super::schema::Schema;
use super::types::{NestedField, PrimitiveType, Type};
use crate::error::{Error, Result};
use crate::transform::Transform;

/// The first partition field id when a spec's JSON gives none (old v1
/// writers): fields are numbered from here in order (Appendix C).
pub const PARTITION_DATA_ID_START: i32 = 1000;

/// A partition transform as written: one frazil knows, or another string
/// kept as read (a newer engine's transform) that cannot be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionTransform {
    Known(Transform),
    Unknown(String),
}

impl PartitionTransform {
    pub fn parse(text: &str) -> Self {
        match Transform::parse(text) {
            Ok(t) => Self::Known(t),
            Err(_) => Self::Unknown(text.to_owned()),
        }
    }

    pub fn known(&self) -> Option<Transform> {
        match self {
            Self::Known(t) => Some(*t),
            Self::Unknown(_) => None,
        }
    }
}

impl std::fmt::Display for PartitionTransform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Known(t) => t.fmt(f),
            Self::Unknown(text) => f.write_str(text),
        }
    }
}

/// One field of a partition spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionField {
    pub source_id: i32,
    pub field_id: i32,
    pub name: String,
    pub transform: PartitionTransform,
}

impl PartitionField {
    pub fn is_void(&self) -> bool {
        self.transform == PartitionTransform::Known(Transform::Void)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PartitionSpec {
    pub spec_id: i32,
    pub fields: Vec<PartitionField>,
}

impl PartitionSpec {
    pub fn unpartitioned(spec_id: i32) -> Self {
        PartitionSpec {
            spec_id,
            fields: Vec::new(),
        }
    }

    /// Parses a spec object (`{"spec-id": .., "fields": [..]}`) or, as
    /// manifests' `partition-spec` metadata holds it, the bare fields array
    /// (then `spec_id` is the id to give it).
    pub fn from_json(json: &Value, spec_id: i32) -> Result<Self> {
        match json {
            Value::Array(fields) => Self::from_fields(fields, spec_id),
            Value::Object(o) => {
                let spec_id = match o.get("spec-id") {
                    None => spec_id,
                    Some(v) => v
                        .as_i64()
                        .and_then(|v| i32::try_from(v).ok())
                        .ok_or_else(|| {
                            Error::InvalidData(format!("partition spec-id {v} is not an int"))
                        })?,
                };
                let fields = o.get("fields").and_then(Value::as_array).ok_or_else(|| {
                    Error::InvalidData(format!("partition spec {spec_id} has no \"fields\" array"))
                })?;
                Self::from_fields(fields, spec_id)
            }
            other => Err(Error::InvalidData(format!(
                "a partition spec must be a JSON object or array, got {other}"
            ))),
        }
    }

    /// Parses partition spec JSON text (object or fields array).
    pub fn parse(text: &str, spec_id: i32) -> Result<Self> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| Error::InvalidData(format!("partition spec is not valid JSON: {e}")))?;
        Self::from_json(&json, spec_id)
    }

    /// Fields without `field-id` (old v1 writers) are numbered from 1000 in
    /// order (Appendix C); a list where only some fields have one is refused,
    /// as the Python model does.
    fn from_fields(fields: &[Value], spec_id: i32) -> Result<Self> {
        let what = format!("partition spec {spec_id}");
        let with_ids = fields
            .iter()
            .filter(|f| f.get("field-id").is_some())
            .count();
        if with_ids != 0 && with_ids != fields.len() {
            return Err(Error::InvalidData(format!(
                "{what}: {} of {} partition fields have no field-id",
                fields.len() - with_ids,
                fields.len()
            )));
        }
        let mut out = Vec::with_capacity(fields.len());
        for (position, f) in fields.iter().enumerate() {
            let bad = |what_: &str| Error::InvalidData(format!("{what} field {f}: {what_}"));
            let int = |key: &str| -> Result<i32> {
                f.get(key)
                    .and_then(Value::as_i64)
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| bad(&format!("missing or invalid {key}")))
            };
            let field_id = if with_ids == 0 {
                PARTITION_DATA_ID_START + position as i32
            } else {
                int("field-id")?
            };
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing name"))?;
            let transform = f
                .get("transform")
                .and_then(Value::as_str)
                .ok_or_else(|| bad("missing transform"))?;
            let transform = PartitionTransform::parse(transform);
            // A malformed bucket or truncate (bucket[0], bucket[x]) is a
            // mistake, not a newer engine's transform (as the Python model).
            if let PartitionTransform::Unknown(text) = &transform {
                let lower = text.trim().to_ascii_lowercase();
                if lower.starts_with("bucket") || lower.starts_with("truncate") {
                    Transform::parse(text)
                        .map_err(|e| Error::InvalidData(format!("{what}: {e}")))?;
                }
            }
            if out.iter().any(|p: &PartitionField| p.field_id == field_id) {
                return Err(Error::InvalidData(format!(
                    "{what}: duplicate partition field id {field_id}"
                )));
            }
            out.push(PartitionField {
                source_id: int("source-id")?,
                field_id,
                name: name.to_owned(),
                transform,
            });
        }
        Ok(PartitionSpec {
            spec_id,
            fields: out,
        })
    }

    /// The Appendix C JSON of this spec (Java's key order).
    pub fn to_json(&self) -> Value {
        json!({
            "spec-id": self.spec_id,
            "fields": self.fields.iter().map(|f| json!({
                "name": f.name,
                "transform": f.transform.to_string(),
                "source-id": f.source_id,
                "field-id": f.field_id,
            })).collect::<Vec<_>>(),
        })
    }

    /// True when no field partitions the data: no fields, or only void
    /// transforms (such a spec's equality deletes are global).
    pub fn is_unpartitioned(&self) -> bool {
        self.fields.iter().all(PartitionField::is_void)
    }

    /// The partition struct type over `schema`: one optional field per
    /// partition field, typed by its transform's result. A field whose
    /// source column is gone from the schema is typed `unknown`, as Java
    /// 1.10's `PartitionSpec.partitionType` does; an unknown transform has
    /// no type and is refused.
    pub fn partition_type(&self, schema: &Schema) -> Result<Type> {
        self.partition_type_in(&[schema])
    }

    /// The partition type with each field's source taken from the first of
    /// `schemas` that has it (`unknown` when none has).
    pub fn partition_type_in(&self, schemas: &[&Schema]) -> Result<Type> {
        let mut fields = Vec::with_capacity(self.fields.len());
        for pf in &self.fields {
            let result = match schemas.iter().find_map(|s| s.field(pf.source_id)) {
                None => PrimitiveType::Unknown,
                Some(source) => field_result_type(pf, &source.field_type)?,
            };
            fields.push(NestedField::optional(
                pf.field_id,
                &pf.name,
                Type::Primitive(result),
            ));
        }
        Ok(Type::Struct(fields))
    }
}

/// The type of `field`'s values for a source column of type `source`.
pub fn field_result_type(field: &PartitionField, source: &Type) -> Result<PrimitiveType> {
    let transform = match &field.transform {
        PartitionTransform::Known(t) => *t,
        PartitionTransform::Unknown(text) => {
            return Err(Error::UnsupportedTransform {
                transform: text.clone(),
                source_type: format!(
                    "{source} (partition field {}: a transform frazil does not know)",
                    field.name
                ),
            })
        }
    };
    match source.as_primitive() {
        Some(p) => transform.result_type(p),
        // Only void applies to non-primitive types (variant, geometry,
        // geography): Java types its values as the source, which are
        // always null; `unknown` says the same here.
        None if transform == Transform::Void => Ok(PrimitiveType::Unknown),
        None => Err(Error::UnsupportedTransform {
            transform: transform.to_string(),
            source_type: source.to_string(),
        }),
    }
}

/// The partition type for spec JSON (object or fields array) over schema
/// JSON text: what a manifest's `partition-spec` and `schema` metadata give.
pub fn partition_type_of(spec_json: &str, schema_json: &str) -> Result<Type> {
    let spec = PartitionSpec::parse(spec_json, 0)?;
    let schema = Schema::parse(schema_json)
        .map_err(|e| Error::InvalidData(format!("schema does not parse: {e}")))?;
    spec.partition_type(&schema)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":0,"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"ts","required":false,"type":"timestamptz"},
        {"id":3,"name":"s","required":false,"type":{"type":"struct","fields":[
            {"id":4,"name":"name","required":false,"type":"string"}]}},
        {"id":5,"name":"ns","required":false,"type":"timestamp_ns"}]}"#;

    #[test]
    fn partition_types_follow_the_transforms() {
        let ty = partition_type_of(
            r#"[{"name":"id_bucket","transform":"bucket[16]","source-id":1,"field-id":1000},
                {"name":"ts_day","transform":"day","source-id":2,"field-id":1001},
                {"name":"ts_hour","transform":"hour","source-id":2,"field-id":1002},
                {"name":"name","transform":"identity","source-id":4,"field-id":1003},
                {"name":"ts","transform":"identity","source-id":2,"field-id":1004},
                {"name":"ns_day","transform":"day","source-id":5,"field-id":1005},
                {"name":"gone","transform":"bucket[2]","source-id":99,"field-id":1006}]"#,
            SCHEMA,
        )
        .unwrap();
        let Type::Struct(fields) = ty else { panic!() };
        let types: Vec<String> = fields.iter().map(|f| f.field_type.to_string()).collect();
        assert_eq!(
            types,
            [
                "int",
                "date",
                "int",
                "string",
                "timestamptz",
                "date",
                "unknown"
            ]
        );
        assert_eq!(fields[1].id, 1001);
    }

    #[test]
    fn legacy_specs_without_field_ids_start_at_1000() {
        let spec = PartitionSpec::parse(
            r#"{"spec-id":0,"fields":[{"name":"a","transform":"identity","source-id":1},
                {"name":"b","transform":"void","source-id":2}]}"#,
            7,
        )
        .unwrap();
        assert_eq!(spec.spec_id, 0);
        assert_eq!(spec.fields[0].field_id, 1000);
        assert_eq!(spec.fields[1].field_id, 1001);
        let partial = PartitionSpec::parse(
            r#"[{"name":"a","transform":"identity","source-id":1,"field-id":1000},
                {"name":"b","transform":"identity","source-id":2}]"#,
            0,
        );
        assert!(matches!(partial, Err(Error::InvalidData(_))));
        assert!(PartitionSpec::parse("[{\"name\":\"a\"}]", 0).is_err());
    }

    #[test]
    fn unknown_and_malformed_transforms() {
        let spec = PartitionSpec::parse(
            r#"[{"name":"z","transform":"zorder","source-id":1,"field-id":1000}]"#,
            0,
        )
        .unwrap();
        assert_eq!(
            spec.fields[0].transform,
            PartitionTransform::Unknown("zorder".into())
        );
        let schema = Schema::parse(SCHEMA).unwrap();
        assert!(matches!(
            spec.partition_type(&schema),
            Err(Error::UnsupportedTransform { .. })
        ));
        assert!(PartitionSpec::parse(
            r#"[{"name":"b","transform":"bucket[0]","source-id":1,"field-id":1000}]"#,
            0
        )
        .is_err());
    }

    #[test]
    fn a_source_is_typed_by_the_first_schema_that_has_it() {
        let spec = PartitionSpec::parse(
            r#"[{"name":"id_b","transform":"bucket[4]","source-id":1,"field-id":1000},
                {"name":"late","transform":"identity","source-id":7,"field-id":1001},
                {"name":"gone","transform":"identity","source-id":99,"field-id":1002}]"#,
            0,
        )
        .unwrap();
        let old = Schema::parse(SCHEMA).unwrap();
        let current = Schema::parse(
            r#"{"type":"struct","schema-id":1,"fields":[
                {"id":1,"name":"id","required":true,"type":"long"},
                {"id":7,"name":"late","required":false,"type":"date"}]}"#,
        )
        .unwrap();
        let Type::Struct(fields) = spec.partition_type_in(&[&old, &current]).unwrap() else {
            panic!()
        };
        let types: Vec<String> = fields.iter().map(|f| f.field_type.to_string()).collect();
        assert_eq!(types, ["int", "date", "unknown"]);
        assert_eq!(
            spec.partition_type(&old).unwrap().to_string(),
            spec.partition_type_in(&[&old]).unwrap().to_string()
        );
    }

    #[test]
    fn void_only_specs_are_unpartitioned() {
        let spec = PartitionSpec::parse(
            r#"[{"name":"a","transform":"void","source-id":1,"field-id":1000}]"#,
            1,
        )
        .unwrap();
        assert!(spec.is_unpartitioned());
        assert!(PartitionSpec::unpartitioned(0).is_unpartitioned());
    }
}
