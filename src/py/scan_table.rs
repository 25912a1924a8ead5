//! `RawTable`: what every scan of one table metadata shares, parsed once
//! (the current schema, the older schemas time travel reads with, and the
//! partition specs) or kept once read (the decoded manifest lists of the
//! snapshots planned), so that a scan costs binding its filter and reading
//! what it has not read before.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::run;
use crate::error::Result;
use crate::memo::Memo;
use crate::scan::{ManifestLists, TableView};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;

/// How many other schemas (time travel's) a table keeps parsed.
const KEPT_SCHEMAS: usize = 4;

/// A table's current schema and partition specs, and its scans' manifest
/// lists. Built by Python once per (immutable) table metadata object.
#[pyclass(frozen, module = "frazil._native")]
pub struct RawTable {
    schema: Arc<Schema>,
    schema_json: String,
    others: Memo<String, Arc<Schema>>,
    specs: HashMap<i32, Arc<PartitionSpec>>,
    lists: Arc<ManifestLists>,
}

impl RawTable {
    /// The table as a scan with the schema `scan_schema_json` (the current
    /// one, or an older one for time travel) sees it; every scan of this
    /// table shares its manifest lists.
    pub(super) fn view(&self, scan_schema_json: &str) -> Result<TableView> {
        let schema = if scan_schema_json == self.schema_json {
            self.schema.clone()
        } else {
            self.others
                .get_or_try_insert(scan_schema_json.to_owned(), |text| {
                    Schema::parse(text).map(Arc::new)
                })?
        };
        Ok(TableView {
            schema,
            table_schema: self.schema.clone(),
            specs: self.specs.clone(),
            lists: self.lists.clone(),
        })
    }
}

#[pymethods]
impl RawTable {
    /// `schema_json`: the table's current schema (binds the filters of
    /// scans of the current state or a branch); `specs_json`: every
    /// partition spec.
    #[new]
    fn new(py: Python<'_>, schema_json: &str, specs_json: Vec<String>) -> PyResult<Self> {
        py.detach(|| {
            run(|| {
                let schema = Arc::new(Schema::parse(schema_json)?);
                let mut specs = HashMap::with_capacity(specs_json.len());
                for text in &specs_json {
                    let spec = PartitionSpec::parse(text, 0)?;
                    specs.insert(spec.spec_id, Arc::new(spec));
                }
                Ok(RawTable {
                    schema,
                    schema_json: schema_json.to_owned(),
                    others: Memo::new(KEPT_SCHEMAS),
                    specs,
                    lists: Arc::default(),
                })
            })
        })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawTable>()
}
