//! The hot paths of writing data files: rows reordered by partition.

pub mod gather;
pub mod group;
pub mod scatter;
pub mod stats;
