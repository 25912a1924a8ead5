//! Bindings for the reader (issue 11): the Arrow schema a scan's rows are
//! read into, from the one Iceberg -> Arrow type mapping the core has
//! (`crate::avro::columns::arrow_type`), so the data reader and the
//! manifest decoder never disagree on an Arrow type.

use std::sync::Arc;

use arrow_schema::{DataType, Schema as ArrowSchema};
use pyo3::prelude::*;

use super::arrow;
use super::errors::run;
use crate::arrow::schema::{scan_arrow_schema, ScanArrow};
use crate::avro::columns::arrow_type;
use crate::error::Error;
use crate::spec::schema::Schema;
use crate::types::Type;

/// The `pyarrow.Schema` of an Iceberg schema (Appendix C JSON text): the
/// decoder's types, every field nullable; with `nullability`, required
/// fields, elements and values are not nullable, and with `uuid_extension`
/// uuid columns are `pa.uuid()` (what a scan hands out:
/// `crate::arrow::schema`).
#[pyfunction]
#[pyo3(signature = (schema_json, nullability=false, uuid_extension=false))]
fn iceberg_arrow_schema(
    py: Python<'_>,
    schema_json: &str,
    nullability: bool,
    uuid_extension: bool,
) -> PyResult<Py<PyAny>> {
    let schema = run(|| {
        let schema = Schema::parse(schema_json)?;
        if nullability || uuid_extension {
            let how = ScanArrow {
                nullability,
                uuid_extension,
            };
            return Ok(Arc::new(scan_arrow_schema(&schema, how)));
        }
        match arrow_type(&Type::Struct(schema.fields.clone())) {
            DataType::Struct(fields) => Ok(Arc::new(ArrowSchema::new(fields))),
            other => Err(Error::Internal(format!(
                "a schema's Arrow type is not a struct: {other}"
            ))),
        }
    })?;
    Ok(arrow::schema(py, schema)?.unbind())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(iceberg_arrow_schema, m)?)?;
    Ok(())
}
