//! One visitor per file, each a rule of the spec's "Scan Planning":
//! rewriting NOT away, projecting row filters onto partition specs, and the
//! evaluators that decide which manifests and files a scan reads.

pub mod bounds;
pub mod compare;
pub mod evaluator;
#[cfg(test)]
mod evaluator_props;
#[cfg(test)]
mod evaluator_timing;
pub mod file_match;
pub mod inclusive_metrics;
pub mod inclusive_projection;
pub mod manifest_evaluator;
pub mod metrics;
pub mod partition_evaluator;
pub mod projection;
pub mod residual;
pub mod rewrite_not;
pub mod strict_metrics;
pub mod strict_projection;
#[cfg(test)]
mod test_support;
