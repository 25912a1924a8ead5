//! How many workers the kernel loops of the current call may use.
//!
//! [`super::apply_threaded`] runs a fixed-width kernel once, on a worker of
//! the pool, with a budget set here; the kernel's loops ([`for_pieces`],
//! [`fold_pieces`]) then split their values into pieces that rayon spreads
//! over the pool. Outside such a call the budget is one and the loops run
//! inline, so single-threaded calls never touch the pool.

use std::cell::Cell;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::MIN_SLICE_LEN;

thread_local! {
    static THREADS: Cell<usize> = const { Cell::new(1) };
}

/// Runs `work` with a budget of `threads` workers for the kernel loops it
/// calls on this thread; the previous budget is restored afterwards, even
/// when `work` panics.
pub(super) fn with_threads<R>(threads: usize, work: impl FnOnce() -> R) -> R {
    struct Restore(usize);
    impl Drop for Restore {
        fn drop(&mut self) {
            THREADS.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(THREADS.with(|t| t.replace(threads)));
    work()
}

/// The number of pieces to split `len` values into: one unless a budget is
/// set and the values are large. More pieces than threads let a worker that
/// finishes early take over work when the machine is shared.
fn pieces(len: usize) -> usize {
    let threads = THREADS.with(Cell::get);
    if threads <= 1 {
        return 1;
    }
    (len / MIN_SLICE_LEN).clamp(1, threads.saturating_mul(4))
}

/// Calls `fill` on matching pieces of `values` and `out` (of equal length),
/// in parallel when the budget allows; together the pieces cover both.
/// Returns what `fill` returned for each piece, in order.
#[inline(always)]
pub(super) fn for_pieces<T: Sync, O: Send, R: Send>(
    values: &[T],
    out: &mut [MaybeUninit<O>],
    fill: impl Fn(&[T], &mut [MaybeUninit<O>]) -> R + Sync,
) -> Vec<R> {
    assert_eq!(
        values.len(),
        out.len(),
        "input and output pieces must match"
    );
    let pieces = pieces(values.len());
    if pieces <= 1 {
        return vec![fill(values, out)];
    }
    let piece_len = values.len().div_ceil(pieces);
    values
        .par_chunks(piece_len)
        .zip(out.par_chunks_mut(piece_len))
        .map(|(v, o)| fill(v, o))
        .collect()
}

/// `fold` of each piece of `values`, in order (one piece outside a budget).
#[inline(always)]
pub(super) fn fold_pieces<T: Sync, R: Send>(
    values: &[T],
    fold: impl Fn(&[T]) -> R + Sync,
) -> Vec<R> {
    let pieces = pieces(values.len());
    if pieces <= 1 {
        return vec![fold(values)];
    }
    let piece_len = values.len().div_ceil(pieces);
    values.par_chunks(piece_len).map(&fold).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_cover_the_values_in_order() {
        let values: Vec<u32> = (0..(10 * MIN_SLICE_LEN as u32 + 7)).collect();
        for threads in [1, 2, 3] {
            let out = crate::runtime::run(threads, || {
                with_threads(threads, || {
                    let mut out = vec![MaybeUninit::<u64>::uninit(); values.len()];
                    for_pieces(&values, &mut out, |v, o| {
                        for (slot, &x) in o.iter_mut().zip(v) {
                            slot.write(u64::from(x) * 2);
                        }
                    });
                    // SAFETY: for_pieces wrote every slot.
                    out.into_iter()
                        .map(|x| unsafe { x.assume_init() })
                        .collect::<Vec<u64>>()
                })
            })
            .unwrap();
            assert!(out
                .iter()
                .zip(&values)
                .all(|(&o, &v)| o == u64::from(v) * 2));
            let sums = crate::runtime::run(threads, || {
                with_threads(threads, || {
                    fold_pieces(&values, |p| p.iter().map(|&x| u64::from(x)).sum::<u64>())
                })
            })
            .unwrap();
            assert_eq!(sums.len() > 1, threads > 1);
            assert_eq!(
                sums.iter().sum::<u64>(),
                values.iter().map(|&x| u64::from(x)).sum::<u64>()
            );
        }
        // The budget ends with the call.
        assert_eq!(pieces(values.len()), 1);
    }
}
