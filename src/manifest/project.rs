//! Column projection by name path (`"data_file.file_path"`) over the read
//! types, and the matching pruning of decoded Arrow structs.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StructArray};
use arrow_schema::{Field, Fields};

use crate::error::{Error, Result};
use crate::types::{NestedField, Type};

/// The fields of `fields` selected by dotted `paths`, in schema order. A path
/// naming a struct selects all of it; unknown names are an error.
pub fn select(fields: &[NestedField], paths: &[Vec<String>]) -> Result<Vec<NestedField>> {
    for path in paths {
        let Some(first) = path.first() else {
            return Err(Error::InvalidValue("empty column name".to_owned()));
        };
        if !fields.iter().any(|f| &f.name == first) {
            let known: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
            return Err(Error::InvalidValue(format!(
                "unknown column {first:?} (known: {})",
                known.join(", ")
            )));
        }
    }
    let mut out = Vec::new();
    for f in fields {
        let tails: Vec<Vec<String>> = paths
            .iter()
            .filter(|p| p.first() == Some(&f.name))
            .map(|p| p[1..].to_vec())
            .collect();
        if tails.is_empty() {
            continue;
        }
        if tails.iter().any(Vec::is_empty) {
            out.push(f.clone());
            continue;
        }
        let Type::Struct(children) = &f.field_type else {
            return Err(Error::InvalidValue(format!(
                "column {:?} is not a struct: cannot select {}.{}",
                f.name,
                f.name,
                tails[0].join(".")
            )));
        };
        let mut selected = f.clone();
        selected.field_type = Type::Struct(select(children, &tails)?);
        out.push(selected);
    }
    Ok(out)
}

/// Splits `"a.b.c"` column names into paths.
pub fn parse_paths(columns: &[String]) -> Vec<Vec<String>> {
    columns
        .iter()
        .map(|c| c.split('.').map(str::to_owned).collect())
        .collect()
}

/// Whether `paths` selects `name` (a top-level field) or anything inside it.
pub fn touches(paths: &[Vec<String>], name: &[&str]) -> bool {
    paths.iter().any(|p| {
        let n = p.len().min(name.len());
        p[..n].iter().zip(&name[..n]).all(|(a, b)| a == b)
    })
}

/// Keeps the children of `array` named by `fields`, recursively.
pub fn prune(array: &StructArray, fields: &[NestedField]) -> Result<StructArray> {
    let mut arrow_fields = Vec::with_capacity(fields.len());
    let mut columns: Vec<ArrayRef> = Vec::with_capacity(fields.len());
    for f in fields {
        let column = array
            .column_by_name(&f.name)
            .ok_or_else(|| Error::Internal(format!("decoded struct lacks {}", f.name)))?;
        let column: ArrayRef = match (&f.field_type, column.as_any().downcast_ref::<StructArray>())
        {
            (Type::Struct(children), Some(inner)) => Arc::new(prune(inner, children)?),
            _ => column.clone(),
        };
        arrow_fields.push(Field::new(f.name.clone(), column.data_type().clone(), true));
        columns.push(column);
    }
    if columns.is_empty() {
        return Ok(StructArray::new_empty_fields(
            array.len(),
            array.nulls().cloned(),
        ));
    }
    StructArray::try_new(Fields::from(arrow_fields), columns, array.nulls().cloned())
        .map_err(|e| Error::Internal(e.to_string()))
}

/// `array` with its child `name` replaced by `column` (same length and type).
pub fn replace_child(array: &StructArray, name: &str, column: ArrayRef) -> Result<StructArray> {
    let (fields, mut columns, nulls) = array.clone().into_parts();
    let index = fields
        .iter()
        .position(|f| f.name() == name)
        .ok_or_else(|| Error::Internal(format!("no child {name}")))?;
    columns[index] = column;
    StructArray::try_new(fields, columns, nulls).map_err(|e| Error::Internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::PrimitiveType;

    fn f(id: i32, name: &str, ty: Type) -> NestedField {
        NestedField::optional(id, name, ty)
    }

    #[test]
    fn selects_nested_paths_in_schema_order() {
        let long = Type::Primitive(PrimitiveType::Long);
        let fields = vec![
            f(1, "a", long.clone()),
            f(
                2,
                "s",
                Type::Struct(vec![f(3, "x", long.clone()), f(4, "y", long.clone())]),
            ),
        ];
        let picked = select(&fields, &parse_paths(&["s.y".into(), "a".into()])).unwrap();
        assert_eq!(picked.len(), 2);
        assert_eq!(picked[0].name, "a");
        assert_eq!(
            picked[1].field_type,
            Type::Struct(vec![f(4, "y", long.clone())])
        );
        assert!(select(&fields, &parse_paths(&["nope".into()])).is_err());
        assert!(select(&fields, &parse_paths(&["a.b".into()])).is_err());
        assert!(touches(&parse_paths(&["s.y".into()]), &["s"]));
        assert!(!touches(&parse_paths(&["a".into()]), &["s"]));
    }
}
