//! Partition transforms over Arrow arrays (spec: "Partition Transforms").
//!
//! Every kernel maps nulls to nulls (spec: "All transforms must return null for
//! a null input value") by handing the input's null buffer to the output
//! unchanged; values under null slots are computed like any other and never
//! looked at. Kernels are tight loops over the values buffer so that LLVM can
//! unroll and vectorise them. A chunked array is the caller's business: it
//! applies the kernel chunk by chunk.

use std::sync::Arc;

use arrow_array::{make_array, new_null_array, Array, ArrayRef};
use arrow_schema::DataType;
use rayon::prelude::*;

use super::Transform;
use crate::error::{Error, Result};

mod bucket;
mod temporal;
mod truncate;

#[cfg(test)]
mod tests;

/// Arrays shorter than this are never split over threads: below it the cost
/// of waking workers and joining the pieces outweighs the work.
const MIN_SLICE_LEN: usize = 64 * 1024;

/// Applies `transform` to every value of `array`.
pub fn apply(transform: Transform, array: &dyn Array) -> Result<ArrayRef> {
    match transform {
        // Zero-copy: the same buffers under a new handle.
        Transform::Identity => Ok(make_array(array.to_data())),
        Transform::Void => Ok(new_null_array(array.data_type(), array.len())),
        Transform::Bucket(n) => bucket::bucket(array, n),
        Transform::Truncate(w) => truncate::truncate(array, w),
        Transform::Year | Transform::Month | Transform::Day | Transform::Hour => {
            temporal::temporal(transform, array)
        }
    }
}

/// [`apply`], splitting a large array into slices processed on `threads`
/// worker threads (see [`crate::runtime`]) and joined in order.
pub fn apply_threaded(transform: Transform, array: &ArrayRef, threads: usize) -> Result<ArrayRef> {
    match transform {
        Transform::Identity => return Ok(Arc::clone(array)),
        Transform::Void => return apply(transform, array.as_ref()),
        _ => {}
    }
    let len = array.len();
    let pieces = (len / MIN_SLICE_LEN).min(threads.saturating_mul(4));
    if threads <= 1 || pieces < 2 {
        return apply(transform, array.as_ref());
    }
    let piece_len = len.div_ceil(pieces);
    let outputs = crate::runtime::run(threads, || {
        (0..pieces)
            .into_par_iter()
            .map(|i| {
                let start = i * piece_len;
                let piece = array.slice(start, piece_len.min(len - start));
                apply(transform, piece.as_ref())
            })
            .collect::<Result<Vec<ArrayRef>>>()
    })??;
    let parts: Vec<&dyn Array> = outputs.iter().map(|a| a.as_ref()).collect();
    arrow_select::concat::concat(&parts)
        .map_err(|e| Error::Internal(format!("joining the results of {transform}: {e}")))
}

/// The error for a transform the spec does not define for an Arrow type.
pub(crate) fn unsupported(transform: Transform, data_type: &DataType) -> Error {
    Error::UnsupportedTransform {
        transform: transform.to_string(),
        source_type: format!("Arrow type {data_type}"),
    }
}

/// `values.map(f)` into a new vector. The loop is compiled twice, once for
/// AVX2 (chosen at run time when the CPU has it): the hashes and calendar
/// arithmetic are 32-bit multiplications that AVX2 does eight at a time,
/// while baseline x86-64 (SSE2) has no packed 32-bit multiply.
#[inline(always)]
pub(crate) fn map_values<T: Copy, O: Copy>(values: &[T], f: impl Fn(T) -> O + Copy) -> Vec<O> {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            return unsafe { map_values_avx2(values, f) };
        }
    }
    map_values_plain(values, f)
}

/// The same loop for baseline x86-64, also preferable for 64-bit divisions,
/// which AVX2 cannot do packed and LLVM would emulate slowly.
#[inline(always)]
pub(crate) fn map_values_plain<T: Copy, O: Copy>(values: &[T], f: impl Fn(T) -> O) -> Vec<O> {
    let mut out = output_vec(values.len());
    for (slot, &v) in out.spare_capacity_mut().iter_mut().zip(values) {
        slot.write(f(v));
    }
    // SAFETY: the loop wrote the first values.len() slots.
    unsafe { out.set_len(values.len()) };
    out
}

/// Appends `values.map(f)` to `out` (which must have room), with the same
/// AVX2 dispatch as [`map_values`].
#[inline(always)]
pub(crate) fn map_values_into<T: Copy, O: Copy>(
    values: &[T],
    out: &mut Vec<O>,
    f: impl Fn(T) -> O + Copy,
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            return unsafe { map_values_into_avx2(values, out, f) };
        }
    }
    map_values_into_plain(values, out, f)
}

#[inline(always)]
fn map_values_into_plain<T: Copy, O: Copy>(values: &[T], out: &mut Vec<O>, f: impl Fn(T) -> O) {
    out.reserve(values.len());
    let start = out.len();
    for (slot, &v) in out.spare_capacity_mut().iter_mut().zip(values) {
        slot.write(f(v));
    }
    // SAFETY: the loop wrote the values.len() slots after `start`.
    unsafe { out.set_len(start + values.len()) };
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn map_values_into_avx2<T: Copy, O: Copy>(
    values: &[T],
    out: &mut Vec<O>,
    f: impl Fn(T) -> O,
) {
    map_values_into_plain(values, out, f)
}

/// Output buffers of this size or more ask the kernel for transparent huge
/// pages: a fresh multi-megabyte buffer otherwise costs one page fault per
/// 4 KiB, which on large arrays takes longer than the transform itself.
const HUGE_PAGE_THRESHOLD: usize = 4 << 20;

/// An empty vector with room for `len` values, backed by huge pages when large.
pub(crate) fn output_vec<O>(len: usize) -> Vec<O> {
    let out: Vec<O> = Vec::with_capacity(len);
    let bytes = len.saturating_mul(std::mem::size_of::<O>());
    if bytes >= HUGE_PAGE_THRESHOLD {
        advise_huge_pages(out.as_ptr().cast::<u8>(), bytes);
    }
    out
}

#[cfg(target_os = "linux")]
fn advise_huge_pages(start: *const u8, bytes: usize) {
    const PAGE: usize = 4096;
    let first = (start as usize).next_multiple_of(PAGE);
    let end = (start as usize + bytes) & !(PAGE - 1);
    if end > first {
        // SAFETY: the range lies inside an allocation we own and is page
        // aligned; MADV_HUGEPAGE is only a hint and changes no contents. A
        // failure (THP disabled) just leaves ordinary pages, so it is ignored.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages(_start: *const u8, _bytes: usize) {}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn map_values_avx2<T: Copy, O: Copy>(values: &[T], f: impl Fn(T) -> O) -> Vec<O> {
    map_values_plain(values, f)
}

/// The smallest and largest of `values` (`None` when empty), as one fold
/// without early exit so that it vectorises; AVX2 adds packed 64-bit compares.
#[inline(always)]
pub(crate) fn min_max<T: Ord + Copy>(values: &[T]) -> Option<(T, T)> {
    let (&first, _) = values.split_first()?;
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, as checked just above.
            return Some(unsafe { min_max_avx2(values, first) });
        }
    }
    Some(min_max_plain(values, first))
}

#[inline(always)]
fn min_max_plain<T: Ord + Copy>(values: &[T], first: T) -> (T, T) {
    values
        .iter()
        .fold((first, first), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn min_max_avx2<T: Ord + Copy>(values: &[T], first: T) -> (T, T) {
    min_max_plain(values, first)
}

/// Downcasts `array` to the concrete type its `DataType` promised.
pub(crate) fn downcast<T: 'static>(array: &dyn Array) -> Result<&T> {
    array.as_any().downcast_ref::<T>().ok_or_else(|| {
        Error::Internal(format!(
            "an array of Arrow type {} is not a {}",
            array.data_type(),
            std::any::type_name::<T>()
        ))
    })
}

/// The first valid slot among those `bad` flags, for error messages: null
/// slots may hold anything, so only a flagged valid slot is an error.
pub(crate) fn first_bad_valid(array: &dyn Array, bad: impl Fn(usize) -> bool) -> Option<usize> {
    (0..array.len()).find(|&i| array.is_valid(i) && bad(i))
}
