//! Storage: the one place frazil reads and writes files (architecture rule 2).
//!
//! A [`FileIO`] is built from catalog / table properties with pyiceberg's
//! names (`s3.endpoint`, `s3.access-key-id`, `gcs.oauth2.token`,
//! `adls.account-key`, ...; see [`object`]) and picks the store for each
//! location by its scheme ([`location`]): local paths and `file:` URIs go
//! through `std::fs`, `s3://` (`s3a://`, `s3n://`), `gs://` and `abfs[s]://`
//! through the `object_store` crate on a tokio runtime ([`runtime`]).
//!
//! Every operation blocks its caller; the Python bindings release the GIL
//! around them. [`FileIO::read_many`] keeps many requests in flight so that
//! the planner's manifest reads overlap their network waits.

pub mod local;
pub mod location;
pub mod object;
pub mod runtime;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

pub use location::{Location, ObjectLocation, StoreId, StoreKind};

use crate::error::{Error, Result};
use object::Store;

/// A file found by [`FileIO::list`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    /// In the same form (scheme, `file:` URI or plain path) as the prefix listed.
    pub location: String,
    pub size: u64,
    /// When the file was last written, in milliseconds from the epoch, when the store
    /// says (orphan removal keeps files younger than its cutoff: they may be a commit in
    /// progress).
    pub last_modified_ms: Option<i64>,
}

/// How many object-store requests [`FileIO::read_many`] keeps in flight
/// unless the `frazil.io.max-concurrent-requests` property says otherwise.
pub const DEFAULT_CONCURRENT_REQUESTS: usize = 64;

/// The property that bounds the requests [`FileIO::read_many`] keeps in flight.
pub const CONCURRENT_REQUESTS_PROPERTY: &str = "frazil.io.max-concurrent-requests";

/// A whole-file reader, the shape the scan planner takes its manifests
/// through (see [`FileIO::read_fn`]).
pub type ReadFn = Arc<dyn Fn(&str) -> Result<Vec<u8>> + Send + Sync>;

/// The process's FileIO without properties: local paths and `file:` URIs,
/// and object stores configured from the environment (`AWS_*`, ...). For
/// callers that are given no FileIO.
pub fn default_file_io() -> Arc<FileIO> {
    static DEFAULT: OnceLock<Arc<FileIO>> = OnceLock::new();
    DEFAULT
        .get_or_init(|| {
            Arc::new(FileIO::new(Vec::<(String, String)>::new()).expect("no properties to refuse"))
        })
        .clone()
}

/// Store clients built so far, for one process: a client's connection pool
/// belongs to the runtime of the process that built it (see [`runtime`]).
struct Stores {
    pid: u32,
    by_id: HashMap<StoreId, Store>,
}

/// Reads and writes locations of any supported scheme, with one client per
/// store (scheme, bucket or container and account) built on first use.
pub struct FileIO {
    properties: BTreeMap<String, String>,
    concurrent_requests: usize,
    stores: Mutex<Stores>,
}

impl std::fmt::Debug for FileIO {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Properties hold secrets: show only their names.
        f.debug_struct("FileIO")
            .field("properties", &self.properties.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// A location resolved to what serves it.
enum Target {
    Local(std::path::PathBuf, Location),
    Object(Store, object_store::path::Path, ObjectLocation),
}

impl FileIO {
    /// A FileIO configured by `properties` (pyiceberg's names; unknown ones
    /// are ignored, as pyiceberg ignores them).
    pub fn new<K: Into<String>, V: Into<String>>(
        properties: impl IntoIterator<Item = (K, V)>,
    ) -> Result<FileIO> {
        let properties: BTreeMap<String, String> = properties
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let concurrent_requests = match properties.get(CONCURRENT_REQUESTS_PROPERTY) {
            None => DEFAULT_CONCURRENT_REQUESTS,
            Some(text) => match text.trim().parse::<usize>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(Error::InvalidValue(format!(
                        "property {CONCURRENT_REQUESTS_PROPERTY} must be a positive integer, \
                         not {text:?}"
                    )))
                }
            },
        };
        Ok(FileIO {
            properties,
            concurrent_requests,
            stores: Mutex::new(Stores {
                pid: runtime::current_pid(),
                by_id: HashMap::new(),
            }),
        })
    }

    /// [`FileIO::read`] as a shareable closure (the planner's `ReadFile`).
    pub fn read_fn(self: &Arc<Self>) -> ReadFn {
        let io = Arc::clone(self);
        Arc::new(move |location: &str| io.read(location))
    }

    /// The properties this FileIO was built with.
    pub fn properties(&self) -> &BTreeMap<String, String> {
        &self.properties
    }

    /// The client for `id`, built on first use in this process.
    fn store(&self, id: &StoreId) -> Result<Store> {
        let pid = runtime::current_pid();
        let mut stores = self
            .stores
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if stores.pid != pid {
            // Built before a fork: their pooled connections are driven by
            // tasks of the parent's runtime. Leak them; dropping may block.
            std::mem::forget(std::mem::take(&mut stores.by_id));
            stores.pid = pid;
        }
        if let Some(store) = stores.by_id.get(id) {
            return Ok(store.clone());
        }
        let store = object::build(id, &self.properties)?;
        stores.by_id.insert(id.clone(), store.clone());
        Ok(store)
    }

    fn target(&self, location: &str, prefix: bool) -> Result<Target> {
        match Location::parse(location)? {
            Location::Local { path, uri } => {
                Ok(Target::Local(path.clone(), Location::Local { path, uri }))
            }
            Location::Object(object) => {
                let path = object::key_path(location, &object, prefix)?;
                Ok(Target::Object(self.store(&object.store)?, path, object))
            }
        }
    }

    /// The whole content of a file or object.
    pub fn read(&self, location: &str) -> Result<Vec<u8>> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::read(location, &path),
            Target::Object(store, path, _) => {
                runtime::block_on(object::read(&store, location, &path))?
            }
        }
    }

    /// `len` bytes from offset `start`; a range past the end is refused.
    pub fn read_range(&self, location: &str, start: u64, len: u64) -> Result<Vec<u8>> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::read_range(location, &path, start, len),
            Target::Object(store, path, _) => {
                runtime::block_on(object::read_range(&store, location, &path, start, len))?
            }
        }
    }

    /// The size in bytes of a file or object.
    pub fn size(&self, location: &str) -> Result<u64> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::size(location, &path),
            Target::Object(store, path, _) => {
                runtime::block_on(object::size(&store, location, &path))?
            }
        }
    }

    /// Whether a file or object exists (a directory is no file, nor is a
    /// bucket or a key ending in `/`).
    pub fn exists(&self, location: &str) -> Result<bool> {
        if let Location::Object(object) = Location::parse(location)? {
            if object.key.is_empty() || object.key.ends_with('/') {
                return Ok(false);
            }
        }
        match self.target(location, false)? {
            Target::Local(path, _) => local::exists(location, &path),
            Target::Object(store, path, _) => {
                runtime::block_on(object::exists(&store, location, &path))?
            }
        }
    }

    /// Writes `data`, replacing what was there. Readers never see a partial
    /// file: local writes are renamed into place, object puts are atomic.
    /// Missing local parent directories are created.
    pub fn write(&self, location: &str, data: &[u8]) -> Result<()> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::write(location, &path, data),
            Target::Object(store, path, _) => {
                runtime::block_on(object::write(&store, location, &path, data))?
            }
        }
    }

    /// Writes `data` only if nothing exists at `location`, atomically;
    /// returns false (writing nothing) when something does.
    pub fn write_if_absent(&self, location: &str, data: &[u8]) -> Result<bool> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::write_if_absent(location, &path, data),
            Target::Object(store, path, _) => {
                runtime::block_on(object::write_if_absent(&store, location, &path, data))?
            }
        }
    }

    /// Deletes a file or object; deleting one that does not exist succeeds.
    pub fn delete(&self, location: &str) -> Result<()> {
        match self.target(location, false)? {
            Target::Local(path, _) => local::delete(location, &path),
            Target::Object(store, path, _) => {
                runtime::block_on(object::delete(&store, location, &path))?
            }
        }
    }

    /// Every file under `prefix` taken as a directory (recursively), sorted
    /// by location; nothing when there is none.
    pub fn list(&self, prefix: &str) -> Result<Vec<FileInfo>> {
        match self.target(prefix, true)? {
            Target::Local(path, form) => local::list_infos(prefix, &path, &form),
            Target::Object(store, path, object) => {
                runtime::block_on(object::list(&store, prefix, &object, &path))?
            }
        }
    }

    /// One level of `prefix` taken as a directory: the files directly in it
    /// (sorted by location) and the locations of its subdirectories (sorted,
    /// without a trailing slash), so that a listing can be split by
    /// directory; nothing when there is none.
    pub fn list_dir(&self, prefix: &str) -> Result<(Vec<FileInfo>, Vec<String>)> {
        match self.target(prefix, true)? {
            Target::Local(path, form) => local::list_dir_infos(prefix, &path, &form),
            Target::Object(store, path, object) => {
                runtime::block_on(object::list_dir(&store, prefix, &object, &path))?
            }
        }
    }

    /// Reads many locations, one result each, in the order given. Local
    /// files are read on `threads` workers; object-store requests are all
    /// issued on the I/O runtime with up to `frazil.io.max-concurrent-requests`
    /// (default 64) in flight, so their network waits overlap.
    pub fn read_many(&self, locations: &[String], threads: usize) -> Vec<Result<Vec<u8>>> {
        let mut results: Vec<Option<Result<Vec<u8>>>> = Vec::new();
        results.resize_with(locations.len(), || None);
        let mut local_reads = Vec::new();
        let mut object_reads = Vec::new();
        for (index, location) in locations.iter().enumerate() {
            match self.target(location, false) {
                Ok(Target::Local(path, _)) => local_reads.push((index, location, path)),
                Ok(Target::Object(store, path, _)) => {
                    object_reads.push((index, store, location.clone(), path))
                }
                Err(e) => results[index] = Some(Err(e)),
            }
        }
        let read_local = |(index, location, path): &(usize, &String, std::path::PathBuf)| {
            (*index, local::read(location, path))
        };
        let local_results: Result<Vec<_>> = if threads <= 1 || local_reads.len() <= 1 {
            Ok(local_reads.iter().map(read_local).collect())
        } else {
            crate::runtime::run(threads, || local_reads.par_iter().map(read_local).collect())
        };
        let mut fill = |done: Vec<(usize, Result<Vec<u8>>)>| {
            for (index, result) in done {
                results[index] = Some(result);
            }
        };
        match local_results {
            Ok(done) => fill(done),
            Err(e) => fill(
                local_reads
                    .iter()
                    .map(|(i, ..)| (*i, Err(e.clone())))
                    .collect(),
            ),
        }
        if !object_reads.is_empty() {
            let indices: Vec<usize> = object_reads.iter().map(|(i, ..)| *i).collect();
            match runtime::block_on(object::read_many(object_reads, self.concurrent_requests)) {
                Ok(done) => fill(done),
                Err(e) => fill(indices.into_iter().map(|i| (i, Err(e.clone()))).collect()),
            }
        }
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(Error::Internal("read_many lost a result".into()))))
            .collect()
    }
}

#[cfg(test)]
pub(crate) mod test_dir;
#[cfg(test)]
mod tests;
