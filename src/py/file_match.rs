//! Bindings for [`crate::expr::visitors::file_match`]: which files of a
//! manifest a delete or overwrite filter touches, and for
//! [`crate::scan::delete_file_index::equality_delete_reach`]: which data
//! files a new equality delete file may reach (conversion only).

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::Array;
use pyo3::prelude::*;

use super::arrow_in::ArrowTable;
use super::errors::run;
use crate::error::Error;
use crate::expr::bind;
use crate::expr::json as expr_json;
use crate::expr::visitors::file_match::FileMatcher;
use crate::scan::delete_file_index::equality_delete_reach as reach;
use crate::scan::ManifestData;
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

/// Entries (as `read_manifest` decodes them) of one partition spec, as the
/// planner's view of a manifest; `label` names them in errors.
fn manifest_data(
    entries: ArrowTable,
    spec_json: &str,
    schema: &Schema,
    label: &str,
) -> crate::Result<Arc<ManifestData>> {
    let spec = Arc::new(PartitionSpec::parse(spec_json, 0)?);
    let (batches, arrow_schema) = entries.into_inner();
    let batch = arrow_select::concat::concat_batches(&arrow_schema, &batches)
        .map_err(|e| Error::TypeMismatch(e.to_string()))?;
    ManifestData::of_spec(label, spec, schema, batch)
}

/// For each entry of `delete_entries` (the manifest `delete_manifest`), the
/// positions of the `data_entries` whose metrics may hold one of its deleted
/// keys, when it is an equality delete file (empty otherwise): the planner's
/// overlap test (Java's `canContainEqDeletesForFile`), for conflict checks.
#[pyfunction]
fn equality_delete_reach(
    py: Python<'_>,
    schema_json: &str,
    data_entries: ArrowTable,
    data_spec_json: &str,
    delete_entries: ArrowTable,
    delete_spec_json: &str,
    delete_manifest: &str,
) -> PyResult<Vec<Vec<usize>>> {
    py.detach(|| {
        run(|| {
            let schema = Schema::parse(schema_json)?;
            let data = manifest_data(data_entries, data_spec_json, &schema, "<data files>")?;
            let deletes =
                manifest_data(delete_entries, delete_spec_json, &schema, delete_manifest)?;
            reach(&data, &deletes, &schema)
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(match_files, m)?)?;
    m.add_function(wrap_pyfunction!(equality_delete_reach, m)?)?;
    Ok(())
}
