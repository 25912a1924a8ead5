//! The tokio runtime that drives object-store requests, created lazily and
//! rebuilt after `fork`.
//!
//! PySpark forks its Python workers. A runtime built in the parent has no
//! worker threads in the child, so a request spawned on it would never run.
//! The runtime remembers the process id that built it, and a child builds its
//! own (as `crate::runtime` does for the rayon pool). Store clients hold
//! connection pools bound to the runtime that served them, so they carry the
//! same process id (see `super::object`).

use std::future::Future;
use std::sync::{Arc, Mutex};

use tokio::runtime::Runtime;

use crate::error::{Error, Result};

struct Slot {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<Slot>> = Mutex::new(None);

/// This process's runtime, built on first use.
fn runtime() -> Result<Arc<Runtime>> {
    let pid = std::process::id();
    let mut slot = RUNTIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(existing) = slot.as_ref() {
        if existing.pid == pid {
            return Ok(existing.runtime.clone());
        }
    }
    if let Some(stale) = slot.take() {
        // Inherited across fork: dropping it would wait for worker threads
        // that do not exist in this process. Leak it instead.
        std::mem::forget(stale.runtime);
    }
    // Requests mostly wait on the network; the workers parse responses and
    // run TLS, so a couple of threads serve many requests in flight.
    let workers = crate::runtime::available_threads().clamp(1, 4);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .thread_name("frazil-io")
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("cannot start the I/O runtime: {e}")))?;
    let runtime = Arc::new(runtime);
    *slot = Some(Slot {
        pid,
        runtime: runtime.clone(),
    });
    Ok(runtime)
}

/// Runs `future` to completion on the I/O runtime, blocking the caller.
///
/// Callers are Python threads (with the GIL released) or rayon workers; never
/// a runtime worker, where blocking would stall the runtime itself.
pub fn block_on<F: Future>(future: F) -> Result<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(Error::Internal(
            "blocking storage call made from inside the I/O runtime".to_owned(),
        ));
    }
    Ok(runtime()?.block_on(future))
}

/// The process id the current runtime (and store clients built for it)
/// belong to.
pub fn current_pid() -> u32 {
    std::process::id()
}
