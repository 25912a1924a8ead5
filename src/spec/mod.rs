//! The spec model the hot paths need (spec: "Schemas and Data Types",
//! "Partitioning"): types, schemas with their field indexes, and partition
//! specs with their partition types. The Python model asks these for every
//! rule they own (type parsing, transform result types, partition types).

pub mod partition;
pub mod schema;
pub mod types;
