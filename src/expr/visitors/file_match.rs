//! Which files of a manifest a row filter touches, for writers that delete
//! by filter (Java's `ManifestFilterManager` with `DeleteFiles` and
//! `OverwriteFiles`): a file *may* hold matching rows when its partition
//! passes the inclusive projection and its metrics the inclusive metrics
//! evaluator; *every* row matches when its partition passes the strict
//! projection or its metrics the strict metrics evaluator. A file that must
//! match is dropped whole; one that may match is rewritten (copy-on-write);
//! any other is left alone.

use arrow_array::cast::AsArray;
use arrow_array::{Array, StructArray};
use arrow_buffer::BooleanBuffer;

use super::inclusive_metrics::InclusiveMetricsEvaluator;
use super::inclusive_projection::inclusive_projection;
use super::metrics::FileMetrics;
use super::partition_evaluator::PartitionEvaluator;
use super::strict_metrics::StrictMetricsEvaluator;
use super::strict_projection::strict_projection;
use crate::error::{Error, Result};
use crate::expr::{Bound, Expr};
use crate::spec::partition::PartitionSpec;
use crate::spec::schema::Schema;

/// A partition filter: constant, or evaluated per partition tuple.
enum PartitionTest {
    All,
    None,
    Eval(PartitionEvaluator),
}

impl PartitionTest {
    fn new(projected: &Bound, spec: &PartitionSpec, schema: &Schema) -> Result<Self> {
        Ok(match projected {
            Expr::True => PartitionTest::All,
            Expr::False => PartitionTest::None,
            filter => PartitionTest::Eval(PartitionEvaluator::new(
                filter,
                &spec.partition_type(schema)?,
            )?),
        })
    }

    fn eval(&self, partition: Option<&StructArray>, n: usize) -> Result<BooleanBuffer> {
        match self {
            PartitionTest::All => Ok(BooleanBuffer::new_set(n)),
            PartitionTest::None => Ok(BooleanBuffer::new_unset(n)),
            PartitionTest::Eval(evaluator) => evaluator.eval(partition.ok_or_else(|| {
                Error::InvalidValue("data_file has no partition column".to_owned())
            })?),
        }
    }
}

/// The filter of a delete or overwrite, against the files of one spec.
pub struct FileMatcher {
    filter: Bound,
    partition_might: PartitionTest,
    partition_must: PartitionTest,
    inclusive: InclusiveMetricsEvaluator,
    strict: StrictMetricsEvaluator,
}

impl FileMatcher {
    /// `filter` is bound to `schema` (the table's current schema); `spec` is
    /// the spec the files were written with.
    pub fn new(filter: &Bound, spec: &PartitionSpec, schema: &Schema) -> Result<Self> {
        Ok(FileMatcher {
            filter: filter.clone(),
            partition_might: PartitionTest::new(
                &inclusive_projection(filter, spec, schema)?,
                spec,
                schema,
            )?,
            partition_must: PartitionTest::new(
                &strict_projection(filter, spec, schema)?,
                spec,
                schema,
            )?,
            inclusive: InclusiveMetricsEvaluator::new(filter, schema)?,
            strict: StrictMetricsEvaluator::new(filter, schema)?,
        })
    }

    /// For each file of a `data_file` struct column (as the manifest reader
    /// decodes it): whether some row may match, and whether every row does.
    pub fn eval(&self, data_file: &StructArray) -> Result<(BooleanBuffer, BooleanBuffer)> {
        let n = data_file.len();
        match self.filter {
            Expr::True => return Ok((BooleanBuffer::new_set(n), BooleanBuffer::new_set(n))),
            Expr::False => return Ok((BooleanBuffer::new_unset(n), BooleanBuffer::new_unset(n))),
            _ => {}
        }
        let partition = match data_file.column_by_name("partition") {
            None => None,
            Some(column) => Some(column.as_struct_opt().ok_or_else(|| {
                Error::TypeMismatch("data_file.partition must be a struct column".to_owned())
            })?),
        };
        let metrics = FileMetrics::new(data_file)?;
        let might = &self.partition_might.eval(partition, n)? & &self.inclusive.eval(&metrics)?;
        let must = &self.partition_must.eval(partition, n)? | &self.strict.eval(&metrics)?;
        // A file whose every row matches may hold one (an empty file matches
        // vacuously, and dropping it is harmless).
        Ok((&might | &must, must))
    }
}
