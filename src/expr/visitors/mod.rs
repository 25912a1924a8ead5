//! One visitor per file, each a rule of the spec's "Scan Planning":
//! rewriting NOT away, projecting row filters onto partition specs, and the
//! evaluators that decide which manifests and files a scan reads.

pub mod evaluator;
pub mod inclusive_projection;
pub mod projection;
pub mod residual;
pub mod rewrite_not;
pub mod strict_projection;
