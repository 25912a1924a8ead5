//! A table schema with its field indexes (spec: "Schemas and Data Types",
//! Appendix C "Schemas"): fields by id and by name, the way Java's
//! `TypeUtil.indexByName` names them (`location.lat`, `points.element.x`,
//! `props.key`, and the short forms `points.x` and `props.value.y` without
//! `element` / `value`), case-sensitively or not.

use std::collections::HashMap;

use serde_json::Value;

use super::types::{too_deeply_nested, NestedField, Type, MAX_NESTING_DEPTH, NESTING_DEPTH_REASON};
use crate::error::{Error, Result};

/// Where a field sits in the schema.
#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub field: NestedField,
    /// The full dotted name (`location.lat`, `points.element.x`).
    pub name: String,
    /// Whether a list or map is among the field's ancestors: such fields
    /// have no metrics, and partition transforms cannot use them.
    pub in_repeated: bool,
    /// The ids of the enclosing fields, outermost first.
    pub parents: Vec<i32>,
}

#[derive(Debug, Clone)]
pub struct Schema {
    pub schema_id: i32,
    pub fields: Vec<NestedField>,
    pub identifier_field_ids: Vec<i32>,
    by_id: HashMap<i32, FieldInfo>,
    by_name: HashMap<String, i32>,
    /// Lower-cased names; more than one id when names differ only in case.
    by_lower_name: HashMap<String, Vec<i32>>,
}

impl PartialEq for Schema {
    fn eq(&self, other: &Self) -> bool {
        self.schema_id == other.schema_id
            && self.fields == other.fields
            && self.identifier_field_ids == other.identifier_field_ids
    }
}

impl Schema {
    pub fn new(schema_id: i32, fields: Vec<NestedField>) -> Result<Self> {
        // Before indexing, which recurses once per level.
        if let Some(path) = too_deeply_nested(&fields) {
            return Err(Error::Validation(format!(
                "schema {schema_id}: field {path:?} is nested more than {MAX_NESTING_DEPTH} \
                 levels deep (struct, list and map types one inside another); frazil supports \
                 at most {MAX_NESTING_DEPTH}: {NESTING_DEPTH_REASON}"
            )));
        }
        let mut schema = Schema {
            schema_id,
            fields,
            identifier_field_ids: Vec::new(),
            by_id: HashMap::new(),
            by_name: HashMap::new(),
            by_lower_name: HashMap::new(),
        };
        let fields = schema.fields.clone();
        schema.index(&fields, "", false, &mut Vec::new())?;
        Ok(schema)
    }

    /// Parses the Appendix C JSON of a schema (a struct with `schema-id` and
    /// optional `identifier-field-ids`).
    pub fn from_json(json: &Value) -> Result<Self> {
        let Type::Struct(fields) = Type::from_json(json)? else {
            return Err(Error::UnknownType(format!(
                "a schema must be a struct type, got {json}"
            )));
        };
        let schema_id = match json.get("schema-id") {
            None | Some(Value::Null) => 0,
            Some(v) => v
                .as_i64()
                .and_then(|v| i32::try_from(v).ok())
                .ok_or_else(|| Error::UnknownType(format!("schema-id {v} is not an int")))?,
        };
        let mut schema = Schema::new(schema_id, fields)?;
        if let Some(ids) = json.get("identifier-field-ids").and_then(Value::as_array) {
            schema.identifier_field_ids = ids
                .iter()
                .map(|v| {
                    v.as_i64()
                        .and_then(|v| i32::try_from(v).ok())
                        .ok_or_else(|| Error::UnknownType(format!("identifier field id {v}")))
                })
                .collect::<Result<_>>()?;
        }
        Ok(schema)
    }

    /// Parses schema JSON text.
    pub fn parse(text: &str) -> Result<Self> {
        let json: Value = serde_json::from_str(text)
            .map_err(|e| Error::UnknownType(format!("schema is not valid JSON: {e}")))?;
        Self::from_json(&json)
    }

    /// The Appendix C JSON of this schema.
    pub fn to_json(&self) -> Value {
        let mut json = Type::Struct(self.fields.clone()).to_json();
        if let Value::Object(o) = &mut json {
            o.insert("schema-id".into(), Value::from(self.schema_id));
            if !self.identifier_field_ids.is_empty() {
                o.insert(
                    "identifier-field-ids".into(),
                    Value::from(self.identifier_field_ids.clone()),
                );
            }
        }
        json
    }

    /// The schema as a struct type.
    pub fn as_struct(&self) -> Type {
        Type::Struct(self.fields.clone())
    }

    fn add_name(&mut self, name: String, id: i32) -> Result<()> {
        if let Some(existing) = self.by_name.insert(name.clone(), id) {
            if existing != id {
                return Err(Error::UnknownType(format!(
                    "schema has two fields named {name:?} (ids {existing} and {id})"
                )));
            }
        }
        let ids = self.by_lower_name.entry(name.to_lowercase()).or_default();
        if !ids.contains(&id) {
            ids.push(id);
        }
        Ok(())
    }

    fn index(
        &mut self,
        fields: &[NestedField],
        prefix: &str,
        in_repeated: bool,
        parents: &mut Vec<i32>,
    ) -> Result<()> {
        for f in fields {
            let name = join(prefix, &f.name);
            self.add_field(f.clone(), name, in_repeated, parents)?;
        }
        Ok(())
    }

    fn add_field(
        &mut self,
        field: NestedField,
        name: String,
        in_repeated: bool,
        parents: &mut Vec<i32>,
    ) -> Result<()> {
        let id = field.id;
        if self.by_id.contains_key(&id) {
            return Err(Error::UnknownType(format!(
                "schema has two fields with id {id}"
            )));
        }
        self.add_name(name.clone(), id)?;
        let ty = field.field_type.clone();
        self.by_id.insert(
            id,
            FieldInfo {
                field,
                name: name.clone(),
                in_repeated,
                parents: parents.clone(),
            },
        );
        parents.push(id);
        match &ty {
            Type::Struct(children) => self.index(children, &name, in_repeated, parents)?,
            Type::List {
                element_id,
                element_required,
                element,
            } => {
                let element_field = NestedField::new(
                    *element_id,
                    "element",
                    *element_required,
                    (**element).clone(),
                );
                self.add_field(element_field, join(&name, "element"), true, parents)?;
                // Short names: `points.x` for `points.element.x`.
                if let Type::Struct(children) = &**element {
                    self.short_names(children, &name)?;
                }
            }
            Type::Map {
                key_id,
                key,
                value_id,
                value_required,
                value,
            } => {
                let key_field = NestedField::required(*key_id, "key", (**key).clone());
                self.add_field(key_field, join(&name, "key"), true, parents)?;
                let value_field =
                    NestedField::new(*value_id, "value", *value_required, (**value).clone());
                self.add_field(value_field, join(&name, "value"), true, parents)?;
                if let Type::Struct(children) = &**value {
                    self.short_names(children, &name)?;
                }
            }
            _ => {}
        }
        parents.pop();
        Ok(())
    }

    /// Java's short names for the fields of a struct inside a list or map.
    fn short_names(&mut self, children: &[NestedField], prefix: &str) -> Result<()> {
        for child in children {
            let name = join(prefix, &child.name);
            if !self.by_name.contains_key(&name) {
                self.add_name(name, child.id)?;
            }
        }
        Ok(())
    }

    /// The field with `id`, anywhere in the schema.
    pub fn field(&self, id: i32) -> Option<&NestedField> {
        self.by_id.get(&id).map(|info| &info.field)
    }

    /// Where the field with `id` sits.
    pub fn field_info(&self, id: i32) -> Option<&FieldInfo> {
        self.by_id.get(&id)
    }

    /// The full dotted name of the field with `id`.
    pub fn name(&self, id: i32) -> Option<&str> {
        self.by_id.get(&id).map(|info| info.name.as_str())
    }

    /// The id of the field called `name` (dotted for nested fields).
    /// Case-insensitively, a name that matches two fields is an error.
    pub fn find_id(&self, name: &str, case_sensitive: bool) -> Result<Option<i32>> {
        if case_sensitive {
            return Ok(self.by_name.get(name).copied());
        }
        match self
            .by_lower_name
            .get(&name.to_lowercase())
            .map(Vec::as_slice)
        {
            None | Some([]) => Ok(None),
            Some([id]) => Ok(Some(*id)),
            Some(ids) => Err(Error::InvalidValue(format!(
                "column name {name:?} is ambiguous case-insensitively: it matches {}",
                ids.iter()
                    .filter_map(|id| self.name(*id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// Every field id, in no particular order.
    pub fn field_ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.by_id.keys().copied()
    }

    /// The highest field id (0 for an empty schema).
    pub fn highest_field_id(&self) -> i32 {
        self.by_id.keys().copied().max().unwrap_or(0)
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"struct","schema-id":3,"identifier-field-ids":[1],"fields":[
        {"id":1,"name":"id","required":true,"type":"long"},
        {"id":2,"name":"Location","required":false,"type":{"type":"struct","fields":[
            {"id":3,"name":"lat","required":false,"type":"double"}]}},
        {"id":4,"name":"points","required":false,"type":{"type":"list","element-id":5,
            "element-required":true,"element":{"type":"struct","fields":[
            {"id":6,"name":"x","required":false,"type":"int"}]}}},
        {"id":7,"name":"props","required":false,"type":{"type":"map","key-id":8,"key":"string",
            "value-id":9,"value-required":false,"value":"string"}}]}"#;

    #[test]
    fn indexes_names_as_java_does() {
        let schema = Schema::parse(SCHEMA).unwrap();
        assert_eq!(schema.schema_id, 3);
        assert_eq!(schema.identifier_field_ids, vec![1]);
        let id = |name: &str, cs: bool| schema.find_id(name, cs).unwrap();
        assert_eq!(id("Location.lat", true), Some(3));
        assert_eq!(id("location.LAT", true), None);
        assert_eq!(id("location.LAT", false), Some(3));
        assert_eq!(id("points.element.x", true), Some(6));
        assert_eq!(id("points.x", true), Some(6));
        assert_eq!(id("points.element", true), Some(5));
        assert_eq!(id("props.key", true), Some(8));
        assert_eq!(id("props.value", true), Some(9));
        assert_eq!(schema.name(6), Some("points.element.x"));
        assert!(schema.field_info(6).unwrap().in_repeated);
        assert!(!schema.field_info(3).unwrap().in_repeated);
        assert_eq!(schema.field_info(3).unwrap().parents, vec![2]);
        assert_eq!(schema.highest_field_id(), 9);
        assert_eq!(Schema::from_json(&schema.to_json()).unwrap(), schema);
    }

    #[test]
    fn refuses_duplicates_and_reports_ambiguity() {
        let dup_id = r#"{"type":"struct","fields":[
            {"id":1,"name":"a","required":true,"type":"long"},
            {"id":1,"name":"b","required":true,"type":"long"}]}"#;
        assert!(Schema::parse(dup_id).is_err());
        let cases = r#"{"type":"struct","fields":[
            {"id":1,"name":"a","required":true,"type":"long"},
            {"id":2,"name":"A","required":true,"type":"long"}]}"#;
        let schema = Schema::parse(cases).unwrap();
        assert_eq!(schema.find_id("A", true).unwrap(), Some(2));
        let err = schema.find_id("a", false).unwrap_err().to_string();
        assert!(err.contains("ambiguous"), "{err}");
    }

    /// A schema whose field `s` nests `depth` types of `kind` one inside another, as JSON
    /// text (ids from 2 up).
    fn nested(kind: &str, depth: usize) -> String {
        let mut ty = "\"long\"".to_owned();
        for level in 0..depth {
            let (a, b) = (1000 + 2 * level, 1001 + 2 * level);
            ty = match kind {
                "struct" => format!(
                    r#"{{"type":"struct","fields":[{{"id":{a},"name":"f{level}","required":false,"type":{ty}}}]}}"#
                ),
                "list" => format!(
                    r#"{{"type":"list","element-id":{a},"element-required":false,"element":{ty}}}"#
                ),
                _ => format!(
                    r#"{{"type":"map","key-id":{a},"key":"string","value-id":{b},"value-required":false,"value":{ty}}}"#
                ),
            };
        }
        format!(
            r#"{{"type":"struct","schema-id":0,"fields":[{{"id":1,"name":"s","required":false,"type":{ty}}}]}}"#
        )
    }

    #[test]
    fn nesting_is_limited_and_every_depth_within_the_limit_parses() {
        for kind in ["struct", "list", "map"] {
            // Within the limit, the JSON also stays within serde_json's 128 levels.
            for depth in [MAX_NESTING_DEPTH - 1, MAX_NESTING_DEPTH] {
                let schema = Schema::parse(&nested(kind, depth)).unwrap();
                assert_eq!(too_deeply_nested(&schema.fields), None, "{kind} {depth}");
            }
            let err = Schema::parse(&nested(kind, MAX_NESTING_DEPTH + 1)).unwrap_err();
            let Error::Validation(message) = err else {
                panic!("{kind}: {err:?}")
            };
            assert!(
                message.contains(&format!("at most {MAX_NESTING_DEPTH}")),
                "{message}"
            );
            let deepest = match kind {
                "struct" => format!(
                    "s{}",
                    (1..=MAX_NESTING_DEPTH)
                        .rev()
                        .fold(String::new(), |acc, level| format!("{acc}.f{level}"))
                ),
                "list" => format!("s{}", ".element".repeat(MAX_NESTING_DEPTH)),
                _ => format!("s{}", ".value".repeat(MAX_NESTING_DEPTH)),
            };
            assert!(message.contains(&format!("{deepest:?}")), "{message}");
        }
    }
}
