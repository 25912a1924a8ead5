//! Test-only entry points into projections and residuals, for the parity
//! tests against Java (tests/interop/test_projection_parity.py). Filters,
//! schemas, specs and results travel as JSON text (Java's
//! `ExpressionParser`, `SchemaParser`, `PartitionSpecParser` forms); the
//! user-facing API for expressions lives elsewhere.

use pyo3::prelude::*;
use serde_json::Value;

use super::errors::run;
use crate::error::{Error, Result};
use crate::expr::json::{parse, to_json};
use crate::expr::visitors::evaluator::eval_row;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::residual::ResidualEvaluator;
use crate::expr::visitors::rewrite_not::rewrite_not;
use crate::expr::visitors::strict_projection::strict_projection;
use crate::expr::{bind, Bound as Filter, Datum};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::types::Type;
use crate::values;

/// A filter bound to the schema (case-sensitive), with schema and spec.
fn parse_all(filter: &str, schema: &str, spec: &str) -> Result<(Filter, Schema, PartitionSpec)> {
    let schema = Schema::parse(schema)?;
    let spec = PartitionSpec::parse(spec, 0)?;
    let bound = bind(&parse(filter)?, &schema, true)?;
    Ok((bound, schema, spec))
}

/// The spec's partition type as a schema, for expressions over partition
/// field names.
fn partition_schema(schema: &Schema, spec: &PartitionSpec) -> Result<Schema> {
    match spec.partition_type(schema)? {
        Type::Struct(fields) => Schema::new(0, fields),
        other => Err(Error::Internal(format!(
            "a partition type {other} is not a struct"
        ))),
    }
}

/// Values of a JSON array in Appendix D JSON form, one per partition field.
fn tuple(partition: &Schema, tuple_json: &str) -> Result<Vec<Option<Datum>>> {
    let json: Value = serde_json::from_str(tuple_json)
        .map_err(|e| Error::Validation(format!("partition tuple is not JSON: {e}")))?;
    let items = json
        .as_array()
        .filter(|a| a.len() == partition.fields.len())
        .ok_or_else(|| {
            Error::Validation(format!(
                "expected {} values, got {json}",
                partition.fields.len()
            ))
        })?;
    partition
        .fields
        .iter()
        .zip(items)
        .map(|(field, item)| {
            if item.is_null() {
                return Ok(None);
            }
            let ty = field.field_type.as_primitive().ok_or_else(|| {
                Error::Validation(format!("partition field {} is not primitive", field.name))
            })?;
            Ok(Some(Datum {
                ty,
                value: values::from_json(&field.field_type, item)?,
            }))
        })
        .collect()
}

/// The inclusive or strict projection of a filter, as expression JSON.
#[pyfunction]
fn _project_for_tests(filter: &str, schema: &str, spec: &str, strict: bool) -> PyResult<String> {
    run(|| {
        let (bound, schema, spec) = parse_all(filter, schema, spec)?;
        let projected = if strict {
            strict_projection(&bound, &spec, &schema)?
        } else {
            inclusive_projection(&bound, &spec, &schema)?
        };
        Ok(to_json(&projected).to_string())
    })
}

/// An expression over partition field names bound to the spec's partition
/// type and written back: the normal form in which projections compare.
#[pyfunction]
fn _bind_partition_filter_for_tests(expr: &str, schema: &str, spec: &str) -> PyResult<String> {
    run(|| {
        let schema = Schema::parse(schema)?;
        let spec = PartitionSpec::parse(spec, 0)?;
        let partition = partition_schema(&schema, &spec)?;
        Ok(to_json(&bind(&parse(expr)?, &partition, true)?).to_string())
    })
}

/// Whether an expression over partition field names holds for a tuple.
#[pyfunction]
fn _eval_partition_filter_for_tests(
    expr: &str,
    schema: &str,
    spec: &str,
    tuple_json: &str,
) -> PyResult<bool> {
    run(|| {
        let schema = Schema::parse(schema)?;
        let spec = PartitionSpec::parse(spec, 0)?;
        let partition = partition_schema(&schema, &spec)?;
        let bound = bind(&parse(expr)?, &partition, true)?;
        let values = tuple(&partition, tuple_json)?;
        let ids: Vec<i32> = partition.fields.iter().map(|f| f.id).collect();
        eval_row(&bound, &|id| {
            ids.iter()
                .position(|x| *x == id)
                .and_then(|i| values[i].clone())
        })
    })
}

/// A filter bound to the schema with NOT rewritten into its predicates:
/// the normal form in which residuals compare.
#[pyfunction]
fn _normalize_filter_for_tests(expr: &str, schema: &str) -> PyResult<String> {
    run(|| {
        let schema = Schema::parse(schema)?;
        Ok(to_json(&rewrite_not(&bind(&parse(expr)?, &schema, true)?)).to_string())
    })
}

/// The residual of a filter for a partition tuple, as expression JSON.
#[pyfunction]
fn _residual_for_tests(
    filter: &str,
    schema: &str,
    spec: &str,
    tuple_json: &str,
) -> PyResult<String> {
    run(|| {
        let (bound, schema, spec) = parse_all(filter, schema, spec)?;
        let partition = partition_schema(&schema, &spec)?;
        let evaluator = ResidualEvaluator::new(&spec, &schema, &bound)?;
        Ok(to_json(&evaluator.residual_for(&tuple(&partition, tuple_json)?)?).to_string())
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_project_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_bind_partition_filter_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_eval_partition_filter_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_normalize_filter_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_residual_for_tests, m)?)?;
    Ok(())
}
