//! The rayon thread pool, created lazily and rebuilt after `fork`.
//!
//! PySpark forks its Python workers. Threads do not survive a fork, so a pool
//! built in the parent is dead in the child: using it would hang forever. The
//! pool remembers the process id that built it, and a child builds its own.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::ThreadPool;

use crate::error::{Error, Result};

struct Pool {
    pid: u32,
    threads: usize,
    pool: Arc<ThreadPool>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

/// The pool for `threads` workers in this process, built on first use.
pub fn pool(threads: usize) -> Result<Arc<ThreadPool>> {
    let pid = std::process::id();
    // A poisoned lock only means another thread panicked while holding it;
    // the slot itself is always consistent.
    let mut slot = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(existing) = slot.as_ref() {
        if existing.pid == pid && existing.threads == threads {
            return Ok(existing.pool.clone());
        }
    }
    if let Some(stale) = slot.take() {
        if stale.pid != pid {
            // Inherited across fork: its worker threads do not exist here, and
            // dropping it would wait on them. Leak it instead.
            std::mem::forget(stale.pool);
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("frazil-worker-{i}"))
        .build()
        .map_err(|e| Error::Internal(format!("cannot start {threads} worker threads: {e}")))?;
    let pool = Arc::new(pool);
    *slot = Some(Pool {
        pid,
        threads,
        pool: pool.clone(),
    });
    Ok(pool)
}

/// Runs `work` on a pool of `threads` workers (inline when `threads <= 1`).
pub fn run<R: Send>(threads: usize, work: impl FnOnce() -> R + Send) -> Result<R> {
    if threads <= 1 {
        return Ok(work());
    }
    Ok(pool(threads)?.install(work))
}

/// A process-wide limit set by the caller (0: none), e.g. by a Spark task from
/// `spark.task.cpus`, so that N tasks on one executor do not each start a pool
/// as large as the host.
static THREAD_LIMIT: AtomicUsize = AtomicUsize::new(0);

/// Sets the limit `available_threads` returns (0 removes it).
pub fn set_thread_limit(threads: usize) {
    THREAD_LIMIT.store(threads, Ordering::Relaxed);
}

/// The number of threads to use when the caller asks for "all of them": the
/// limit set by `set_thread_limit`, else `FRAZIL_THREADS`, else the cores.
///
/// The environment and the cores are read once per process:
/// `available_parallelism` reads the cgroup quota files on every call (tens of
/// microseconds, a third of a small plan).
pub fn available_threads() -> usize {
    let limit = THREAD_LIMIT.load(Ordering::Relaxed);
    if limit > 0 {
        return limit;
    }
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        // A malformed value is refused by the Python layer (frazil._threads),
        // which reads it first; here it only falls back to the cores.
        std::env::var("FRAZIL_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_is_reused_for_the_same_size() {
        let a = pool(2).unwrap();
        let b = pool(2).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(run(2, rayon::current_num_threads).unwrap(), 2);
        assert_eq!(run(1, || 7).unwrap(), 7);
    }
}
