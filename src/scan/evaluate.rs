//! The evaluators a scan runs, per partition spec and per table, behind one
//! small interface the planner calls (spec: "Scan Planning"): the inclusive
//! projection of the filter onto each spec drives the manifest-list and
//! partition evaluators, the filter itself the metrics evaluator, and the
//! residual evaluator gives each file what its partition leaves open.

use arrow_array::{RecordBatch, StructArray};
use arrow_buffer::BooleanBuffer;

use crate::error::Result;
use crate::expr::visitors::inclusive_metrics::InclusiveMetricsEvaluator;
use crate::expr::visitors::inclusive_projection::inclusive_projection;
use crate::expr::visitors::manifest_evaluator::ManifestEvaluator;
use crate::expr::visitors::metrics::FileMetrics;
use crate::expr::visitors::partition_evaluator::PartitionEvaluator;
use crate::expr::visitors::residual::ResidualEvaluator;
use crate::expr::{Bound, Expr};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;
use crate::types::Type;

/// What a scan evaluates for the manifests and files of one partition spec.
pub struct SpecEvaluators {
    /// The filter projected onto the spec's partition fields (inclusive).
    pub partition_filter: Bound,
    manifests: ManifestEvaluator,
    partitions: PartitionEvaluator,
    residuals: ResidualEvaluator,
}

impl SpecEvaluators {
    pub fn new(
        filter: &Bound,
        spec: &PartitionSpec,
        schema: &Schema,
        partition_type: &Type,
    ) -> Result<Self> {
        let partition_filter = inclusive_projection(filter, spec, schema)?;
        Ok(SpecEvaluators {
            manifests: ManifestEvaluator::new(&partition_filter, partition_type)?,
            partitions: PartitionEvaluator::new(&partition_filter, partition_type)?,
            residuals: ResidualEvaluator::new(spec, schema, filter)?,
            partition_filter,
        })
    }

    /// For each manifest of a manifest list (its `partitions` summaries),
    /// whether it may hold matching files, if it was written with this spec.
    pub fn manifests_might_match(&self, list: &RecordBatch) -> Result<BooleanBuffer> {
        if matches!(self.partition_filter, Expr::True) {
            return Ok(BooleanBuffer::new_set(list.num_rows()));
        }
        self.manifests.eval_list(list)
    }

    /// Rows of a manifest whose partition may match.
    pub fn partitions_might_match(&self, partition: &StructArray) -> Result<BooleanBuffer> {
        if matches!(self.partition_filter, Expr::True) {
            return Ok(BooleanBuffer::new_set(arrow_array::Array::len(partition)));
        }
        self.partitions.eval(partition)
    }

    /// The part of the filter a file's partition does not guarantee.
    pub fn residual(&self, partition: &StructArray, row: usize) -> Result<Bound> {
        self.residuals.residual_for_row(partition, row)
    }
}

/// The table-level metrics evaluator.
pub struct MetricsEvaluator {
    filter: Bound,
    inclusive: InclusiveMetricsEvaluator,
}

impl MetricsEvaluator {
    pub fn new(filter: &Bound, schema: &Schema) -> Result<Self> {
        Ok(MetricsEvaluator {
            filter: filter.clone(),
            inclusive: InclusiveMetricsEvaluator::new(filter, schema)?,
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
        if matches!(self.filter, Expr::True) {
            return Ok(BooleanBuffer::new_set(arrow_array::Array::len(data_file)));
        }
        self.inclusive.eval(&FileMetrics::new(data_file)?)
    }
}
