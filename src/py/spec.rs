//! Bindings for the spec rules the Python model asks the Rust core about
//! (one owner per rule): type strings, transform result types and the
//! partition type of a spec.

use pyo3::prelude::*;

use super::errors::run;
use super::values::describe;
use crate::error::Error;
use crate::spec::partition::{
    field_result_type, PartitionField, PartitionSpec, PartitionTransform,
};
use crate::spec::schema::Schema;
use crate::transform::Transform;
use crate::types::{Type, MAX_NESTING_DEPTH, NESTING_DEPTH_REASON};

/// The parts of an Appendix C type string (not JSON): `("int",)`,
/// `("decimal", P, S)`, `("fixed", L)`, `("geometry", crs)`,
/// `("geography", crs, algorithm)`, `("variant",)`, ...
#[pyfunction]
fn parse_type_string<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    let ty = run(|| Type::parse_string(text))?;
    describe(py, &ty)
}

/// A type (type string or Appendix C JSON text) as Rust reads it, in its
/// canonical Appendix C JSON text: lets tests hold the Python model to
/// the Rust core's reading of the same input.
#[pyfunction]
fn canonical_type_json(text: &str) -> PyResult<String> {
    run(|| Ok(Type::parse(text)?.to_json().to_string()))
}

/// A schema (Appendix C JSON text) as Rust reads it, in canonical JSON text.
#[pyfunction]
fn canonical_schema_json(text: &str) -> PyResult<String> {
    run(|| Ok(Schema::parse(text)?.to_json().to_string()))
}

/// The result type of a transform over a source type (a type string or
/// Appendix C type JSON), as a type string.
#[pyfunction]
fn transform_result_type(transform: &str, source_type: &str) -> PyResult<String> {
    run(|| {
        let transform = Transform::parse(transform)?;
        let source = Type::parse(source_type)?;
        let field = PartitionField {
            source_id: 0,
            field_id: 0,
            name: String::new(),
            transform: PartitionTransform::Known(transform),
        };
        Ok(field_result_type(&field, &source)?.to_string())
    })
}

/// Whether a transform applies to a source type (a type string or type JSON).
#[pyfunction]
fn transform_applies(transform: &str, source_type: &str) -> PyResult<bool> {
    run(|| {
        let transform = Transform::parse(transform)?;
        let source = Type::parse(source_type)?;
        Ok(match source.as_primitive() {
            Some(p) => transform.can_transform(p),
            None => transform == Transform::Void,
        })
    })
}

/// The partition type (Appendix C JSON text) of a spec (JSON object, or the
/// fields array) over a table schema (JSON).
#[pyfunction]
fn partition_type(py: Python<'_>, spec_json: &str, schema_json: &str) -> PyResult<String> {
    py.detach(|| {
        run(|| {
            let spec = PartitionSpec::parse(spec_json, 0)?;
            let schema = Schema::parse(schema_json)
                .map_err(|e| Error::InvalidData(format!("schema does not parse: {e}")))?;
            Ok(spec.partition_type(&schema)?.to_json().to_string())
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(parse_type_string, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_type_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_schema_json, m)?)?;
    m.add_function(wrap_pyfunction!(transform_result_type, m)?)?;
    m.add_function(wrap_pyfunction!(transform_applies, m)?)?;
    m.add_function(wrap_pyfunction!(partition_type, m)?)?;
    // The nesting limit of schemas, which the Python model checks too.
    m.add("MAX_NESTING_DEPTH", MAX_NESTING_DEPTH)?;
    m.add("NESTING_DEPTH_REASON", NESTING_DEPTH_REASON)?;
    Ok(())
}
