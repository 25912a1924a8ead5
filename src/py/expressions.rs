//! Bindings for `frazil.expressions`: expressions cross as Java's expression
//! JSON (with frazil's tagged values, see `crate::expr::json`), so this layer
//! only parses, calls the core and writes JSON back.

use pyo3::prelude::*;

use super::errors::run;
use crate::expr::{bind, json};
use crate::spec::schema::Schema;

/// Binds an unbound expression (JSON text) to a schema (Appendix C JSON
/// text) and returns the bound, simplified expression as Java writes it:
/// values in the Appendix D JSON form of each term's type.
#[pyfunction]
#[pyo3(signature = (expr_json, schema_json, case_sensitive = true))]
fn bind_expression(expr_json: &str, schema_json: &str, case_sensitive: bool) -> PyResult<String> {
    run(|| {
        let expr = json::parse(expr_json)?;
        let schema = Schema::parse(schema_json)?;
        let bound = bind(&expr, &schema, case_sensitive)?;
        Ok(json::to_json(&bound).to_string())
    })
}

/// Rust's reading of unbound expression JSON, written back in its exact
/// (tagged) form: lets the Python tests prove both sides read and write the
/// same values.
#[pyfunction]
fn unbound_expression_json(expr_json: &str) -> PyResult<String> {
    run(|| Ok(json::unbound_to_json(&json::parse(expr_json)?).to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(bind_expression, m)?)?;
    m.add_function(wrap_pyfunction!(unbound_expression_json, m)?)?;
    Ok(())
}
