//! Partition transforms over Arrow arrays (spec: "Partition Transforms").
//!
//! Every kernel maps nulls to nulls (spec: "All transforms must return null for
//! a null input value") by handing the input's null buffer to the output
//! unchanged; values under null slots are computed like any other and never
//! looked at. Kernels are tight loops over the values buffer so that LLVM can
//! unroll and vectorise them. A chunked array is the caller's business: it
//! applies the kernel chunk by chunk.

use std::mem::MaybeUninit;
use std::sync::Arc;

use arrow_array::{make_array, new_null_array, Array, ArrayRef};
use arrow_schema::DataType;
use rayon::prelude::*;

use super::Transform;
use crate::error::{Error, Result};

mod bucket;
mod parallel;
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

/// [`apply`] on `threads` worker threads (see [`crate::runtime`]).
///
/// Fixed-width inputs (integers, dates, times, timestamps, decimals) run
/// the ordinary kernel once, with its loops splitting the values over the
/// workers and writing straight into one shared output buffer: these kernels
/// are bound by memory bandwidth, and joining per-slice outputs would cost
/// another full copy. Variable-width inputs (strings, binary, fixed) are
/// sliced, transformed piece by piece and joined in order.
pub fn apply_threaded(transform: Transform, array: &ArrayRef, threads: usize) -> Result<ArrayRef> {
    match transform {
        Transform::Identity => return Ok(Arc::clone(array)),
        Transform::Void => return apply(transform, array.as_ref()),
        _ => {}
    }
    let len = array.len();
    if threads <= 1 || len < 2 * MIN_SLICE_LEN {
        return apply(transform, array.as_ref());
    }
    if array.data_type().is_primitive() {
        return crate::runtime::run(threads, || {
            parallel::with_threads(threads, || apply(transform, array.as_ref()))
        })?;
    }
    let pieces = (len / MIN_SLICE_LEN).min(threads.saturating_mul(4));
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
/// while baseline x86-64 (SSE2) has no packed 32-bit multiply. Inside
/// [`apply_threaded`] the values are split over the workers.
#[inline(always)]
pub(crate) fn map_values<T, O>(values: &[T], f: impl Fn(T) -> O + Copy + Sync) -> Vec<O>
where
    T: Copy + Sync,
    O: Copy + Send,
{
    let avx2 = has_avx2();
    map_pieces(values, move |piece, out| write_mapped(avx2, piece, out, f))
}

/// The same for baseline x86-64, preferable for 64-bit divisions, which AVX2
/// cannot do packed and LLVM would emulate slowly.
#[inline(always)]
pub(crate) fn map_values_plain<T, O>(values: &[T], f: impl Fn(T) -> O + Copy + Sync) -> Vec<O>
where
    T: Copy + Sync,
    O: Copy + Send,
{
    map_pieces(values, move |piece, out| write_mapped(false, piece, out, f))
}

/// A new vector of `values.len()` outputs, each piece of the values written
/// by `fill` into the matching piece of the output (in parallel inside
/// [`apply_threaded`]).
#[inline(always)]
pub(crate) fn map_pieces<T, O>(
    values: &[T],
    fill: impl Fn(&[T], &mut [MaybeUninit<O>]) + Sync,
) -> Vec<O>
where
    T: Sync,
    O: Send,
{
    let mut out = output_vec::<O>(values.len());
    parallel::for_pieces(values, &mut out.spare_capacity_mut()[..values.len()], fill);
    // SAFETY: `for_pieces` handed every one of the first values.len() slots
    // to `fill`, which writes each slot of its piece.
    unsafe { out.set_len(values.len()) };
    out
}

/// Writes `f(v)` for every value into the slots of `out` (as many as there
/// are values), with the AVX2 build of the loop when `avx2` is set.
#[inline(always)]
pub(crate) fn write_mapped<T: Copy, O>(
    avx2: bool,
    values: &[T],
    out: &mut [MaybeUninit<O>],
    f: impl Fn(T) -> O,
) {
    debug_assert_eq!(values.len(), out.len());
    #[cfg(target_arch = "x86_64")]
    {
        if avx2 {
            // SAFETY: callers pass `avx2` only from `has_avx2()`.
            return unsafe { write_mapped_avx2(values, out, f) };
        }
    }
    let _ = avx2;
    write_mapped_plain(values, out, f)
}

#[inline(always)]
fn write_mapped_plain<T: Copy, O>(values: &[T], out: &mut [MaybeUninit<O>], f: impl Fn(T) -> O) {
    for (slot, &v) in out.iter_mut().zip(values) {
        slot.write(f(v));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn write_mapped_avx2<T: Copy, O>(
    values: &[T],
    out: &mut [MaybeUninit<O>],
    f: impl Fn(T) -> O,
) {
    write_mapped_plain(values, out, f)
}

/// Whether this CPU has AVX2 (cached by the standard library).
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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

/// The smallest and largest of `values` (`None` when empty), as one fold
/// without early exit so that it vectorises; AVX2 adds packed 64-bit compares.
/// Inside [`apply_threaded`] the pieces are folded in parallel.
#[inline(always)]
pub(crate) fn min_max<T: Ord + Copy + Send + Sync>(values: &[T]) -> Option<(T, T)> {
    let avx2 = has_avx2();
    parallel::fold_pieces(values, move |piece| {
        let (&first, _) = piece.split_first()?;
        #[cfg(target_arch = "x86_64")]
        {
            if avx2 {
                // SAFETY: the CPU supports AVX2 (`has_avx2`).
                return Some(unsafe { min_max_avx2(piece, first) });
            }
        }
        let _ = avx2;
        Some(min_max_plain(piece, first))
    })
    .into_iter()
    .flatten()
    .reduce(|(lo, hi), (l, h)| (lo.min(l), hi.max(h)))
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
