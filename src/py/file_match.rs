//! Bindings for [`crate::expr::visitors::file_match`]: which files of a
//! manifest a delete or overwrite filter touches (conversion only).

use arrow_array::cast::AsArray;
use arrow_array::Array;
use pyo3::prelude::*;

use super::arrow_in::ArrowTable;
use super::errors::run;
use crate::error::Error;
use crate::expr::bind;
use crate::expr::json as expr_json;
use crate::expr::visitors::file_match::FileMatcher;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;

/// For each entry of `entries` (a manifest as `read_manifest` decodes it,
/// with its `data_file` column): whether some row may match `filter_json`
/// (expression JSON), and whether every row does, from partitions and metrics.
#[pyfunction]
#[pyo3(signature = (entries, filter_json, schema_json, spec_json, case_sensitive=true))]
fn match_files(
    py: Python<'_>,
    entries: ArrowTable,
    filter_json: &str,
    schema_json: &str,
    spec_json: &str,
    case_sensitive: bool,
) -> PyResult<(Vec<bool>, Vec<bool>)> {
    let (batches, arrow_schema) = entries.into_inner();
    py.detach(|| {
        run(|| {
            let schema = Schema::parse(schema_json)?;
            let spec = PartitionSpec::parse(spec_json, 0)?;
            let filter = bind(&expr_json::parse(filter_json)?, &schema, case_sensitive)?;
            let matcher = FileMatcher::new(&filter, &spec, &schema)?;
            let batch = arrow_select::concat::concat_batches(&arrow_schema, &batches)
                .map_err(|e| Error::TypeMismatch(e.to_string()))?;
            let data_file = batch
                .column_by_name("data_file")
                .and_then(|c| c.as_struct_opt())
                .ok_or_else(|| {
                    Error::InvalidValue("the entries have no data_file struct column".to_owned())
                })?;
            let (might, must) = matcher.eval(data_file)?;
            debug_assert_eq!(might.len(), data_file.len());
            Ok((might.iter().collect(), must.iter().collect()))
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(match_files, m)?)?;
    Ok(())
}
