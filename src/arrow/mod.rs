//! Between Iceberg values and Arrow arrays: reading one value of a decoded
//! column (a manifest's partition tuple, a bound) as a typed [`Datum`],
//! building a column from datums, and the Arrow schema of a scan's rows.
//!
//! [`Datum`]: crate::expr::Datum

pub mod datum;
pub mod equality_deletes;
pub mod key_join;
pub(crate) mod keys;
pub mod position_deletes;
pub mod schema;

pub use datum::{array_from_datums, datum_at};
