//! The evaluators a scan runs, per partition spec and per table, behind one
//! small interface the planner calls (spec: "Scan Planning").

use arrow_array::{Array, StructArray};
use arrow_buffer::BooleanBuffer;

use crate::error::Result;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::residual::ResidualEvaluator;
use crate::expr::Bound;
use crate::manifest::summary::FieldSummary;
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::types::Type;

/// What a scan evaluates for the manifests and files of one partition spec.
pub struct SpecEvaluators {
    /// The filter projected onto the spec's partition fields (inclusive).
    pub partition_filter: Bound,
    residuals: ResidualEvaluator,
}

impl SpecEvaluators {
    pub fn new(
        filter: &Bound,
        spec: &PartitionSpec,
        schema: &Schema,
        _partition_type: &Type,
    ) -> Result<Self> {
        Ok(SpecEvaluators {
            partition_filter: inclusive_projection(filter, spec, schema)?,
            residuals: ResidualEvaluator::new(spec, schema, filter)?,
        })
    }

    /// Whether a manifest with these partition summaries may hold matches.
    pub fn manifest_might_match(&self, _summaries: Option<&[FieldSummary]>) -> Result<bool> {
        Ok(true)
    }

    /// Rows of a manifest whose partition may match.
    pub fn partitions_might_match(&self, partition: &StructArray) -> Result<BooleanBuffer> {
        Ok(BooleanBuffer::new_set(partition.len()))
    }

    /// The part of the filter a file's partition does not guarantee.
    pub fn residual(&self, partition: &StructArray, row: usize) -> Result<Bound> {
        self.residuals.residual_for_row(partition, row)
    }
}

/// The table-level metrics evaluator.
pub struct MetricsEvaluator {
    filter: Bound,
}

impl MetricsEvaluator {
    pub fn new(filter: &Bound, _schema: &Schema) -> Result<Self> {
        Ok(MetricsEvaluator {
            filter: filter.clone(),
        })
    }

    /// Field ids whose metrics the filter reads.
    pub fn referenced_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self
            .filter
            .predicates()
            .iter()
            .map(|p| p.term().field_id())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Rows whose files may hold matching rows.
    pub fn files_might_match(&self, data_file: &StructArray) -> Result<BooleanBuffer> {
        Ok(BooleanBuffer::new_set(data_file.len()))
    }
}
