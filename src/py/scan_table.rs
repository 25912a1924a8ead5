//! `RawTable`: what every scan of one table metadata shares, parsed once
//! (the current schema and the partition specs) or kept once read (the
//! decoded manifest lists of the snapshots planned), so that a scan costs
//! binding its filter and reading what it has not read before.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::prelude::*;

use super::errors::run;
use crate::scan::{ManifestLists, TableView};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;

/// A table's current schema and partition specs, and its scans' manifest
/// lists. Built by Python once per (immutable) table metadata object.
#[pyclass(frozen, module = "frazil._native")]
pub struct RawTable {
    schema: Arc<Schema>,
    specs: HashMap<i32, Arc<PartitionSpec>>,
    lists: Arc<ManifestLists>,
}

impl RawTable {
    /// The table as a scan sees it; every scan of this table shares its
    /// manifest lists.
    pub(super) fn view(&self) -> TableView {
        TableView {
            schema: self.schema.clone(),
            specs: self.specs.clone(),
            lists: self.lists.clone(),
        }
    }
}

#[pymethods]
impl RawTable {
    /// `schema_json`: the table's current schema (binds filters and types
    /// partition tuples); `specs_json`: every partition spec.
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
