//! Partition transforms over Arrow arrays. (Placeholder; being written.)

use arrow_array::{Array, ArrayRef};

use super::Transform;
use crate::error::{Error, Result};

pub fn apply(transform: Transform, _array: &dyn Array) -> Result<ArrayRef> {
    Err(Error::Internal(format!(
        "{transform} kernel not written yet"
    )))
}

pub fn apply_threaded(transform: Transform, array: &ArrayRef, _threads: usize) -> Result<ArrayRef> {
    apply(transform, array.as_ref())
}
