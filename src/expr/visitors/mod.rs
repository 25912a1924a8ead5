//! One visitor per file, each a rule of the spec's "Scan Planning":
//! rewriting NOT away, projecting row filters onto partition specs, and the
//! evaluators that decide which manifests and files a scan reads.

pub mod rewrite_not;
