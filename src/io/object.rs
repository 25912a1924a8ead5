//! Object stores (S3, GCS, Azure) through the `object_store` crate, with
//! clients configured from pyiceberg's property names.
//!
//! Properties are read the way pyiceberg reads them (`pyiceberg.io`): the
//! `s3.*` name first, then the `client.*` fallback; `gcs.*`; `adls.*`. The
//! environment's usual variables (`AWS_*`, `GOOGLE_*`, `AZURE_*`) fill in what
//! the properties leave out, as the cloud SDKs behind pyarrow do.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::{GcpCredential, GoogleCloudStorageBuilder};
use object_store::path::Path;
use object_store::{
    ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig,
    StaticCredentialProvider,
};

use super::location::{ObjectLocation, StoreId, StoreKind};
use super::FileInfo;
use crate::error::{Error, Result};

pub type Store = Arc<dyn ObjectStore>;

/// Maps an `object_store` error on `location` to frazil's, naming the location.
pub(super) fn error(location: &str, e: object_store::Error) -> Error {
    match e {
        object_store::Error::NotFound { .. } => {
            Error::NotFound(format!("no such object: {location}"))
        }
        object_store::Error::PermissionDenied { source, .. }
        | object_store::Error::Unauthenticated { source, .. } => {
            Error::PermissionDenied(format!("access denied: {location} ({source})"))
        }
        other => Error::Io(format!("{location}: {}", crate::error::with_causes(&other))),
    }
}

/// The key of an object as `object_store` addresses it. Keys with empty
/// segments (`a//b`, a leading `/`) or `.`/`..` segments cannot be addressed
/// through it; they are refused rather than silently rewritten.
pub(super) fn key_path(location: &str, object: &ObjectLocation, prefix: bool) -> Result<Path> {
    let key = object.key.as_str();
    let trimmed = if prefix {
        key.strip_suffix('/').unwrap_or(key)
    } else {
        key
    };
    if !prefix && (key.is_empty() || key.ends_with('/')) {
        return Err(Error::InvalidValue(format!(
            "{location}: names a bucket or directory, not an object"
        )));
    }
    if trimmed.starts_with('/') {
        return Err(Error::InvalidValue(format!(
            "{location}: keys that start with '/' are not supported"
        )));
    }
    Path::parse(trimmed).map_err(|e| Error::InvalidValue(format!("{location}: {e}")))
}

/// Reads a boolean property; anything but true/false is refused.
fn flag(properties: &BTreeMap<String, String>, key: &str) -> Result<Option<bool>> {
    match properties.get(key).map(|v| v.trim().to_ascii_lowercase()) {
        None => Ok(None),
        Some(v) if v == "true" => Ok(Some(true)),
        Some(v) if v == "false" => Ok(Some(false)),
        Some(v) => Err(Error::InvalidValue(format!(
            "property {key} must be true or false, not {v:?}"
        ))),
    }
}

/// Reads a duration property given in seconds (pyiceberg's timeouts are floats).
fn seconds(properties: &BTreeMap<String, String>, key: &str) -> Result<Option<Duration>> {
    let Some(text) = properties.get(key) else {
        return Ok(None);
    };
    let value: f64 = text.trim().parse().map_err(|_| {
        Error::InvalidValue(format!(
            "property {key} must be a number of seconds, not {text:?}"
        ))
    })?;
    Duration::try_from_secs_f64(value)
        .map(Some)
        .map_err(|_| Error::InvalidValue(format!("property {key}: {text:?} is not a duration")))
}

fn first<'a>(properties: &'a BTreeMap<String, String>, keys: &[&str]) -> Option<&'a String> {
    keys.iter().find_map(|k| properties.get(*k))
}

fn client_options(
    properties: &BTreeMap<String, String>,
    prefix: &str,
    endpoint: Option<&str>,
) -> Result<ClientOptions> {
    let mut options = ClientOptions::new();
    if endpoint.is_some_and(|e| e.starts_with("http://")) {
        options = options.with_allow_http(true);
    }
    if let Some(t) = seconds(properties, &format!("{prefix}.connect-timeout"))? {
        options = options.with_connect_timeout(t);
    }
    if let Some(t) = seconds(properties, &format!("{prefix}.request-timeout"))? {
        options = options.with_timeout(t);
    }
    if let Some(proxy) = properties.get(&format!("{prefix}.proxy-uri")) {
        options = options.with_proxy_url(proxy);
    }
    Ok(options)
}

/// Makes ring rustls's process-wide crypto provider, once, before the first
/// HTTPS client is built: reqwest is built without a provider of its own (see
/// Cargo.toml). A provider another library installed first is kept.
fn install_tls_provider() {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Builds the client for one store from the FileIO's properties.
pub(super) fn build(store: &StoreId, properties: &BTreeMap<String, String>) -> Result<Store> {
    install_tls_provider();
    let built: std::result::Result<Store, object_store::Error> = match store.kind {
        StoreKind::S3 => build_s3(store, properties)?
            .build()
            .map(|s| Arc::new(s) as Store),
        StoreKind::Gcs => build_gcs(store, properties)?
            .build()
            .map(|s| Arc::new(s) as Store),
        StoreKind::Azure => build_azure(store, properties)?
            .build()
            .map(|s| Arc::new(s) as Store),
    };
    built.map_err(|e| {
        Error::InvalidValue(format!(
            "cannot configure a {} client for {}: {e}",
            store.kind, store.bucket
        ))
    })
}

fn build_s3(store: &StoreId, p: &BTreeMap<String, String>) -> Result<AmazonS3Builder> {
    let endpoint = p.get("s3.endpoint").map(String::as_str);
    // FileIO deletes one object at a time: a plain DELETE works on every
    // S3-compatible store and carries any key, where the bulk DeleteObjects
    // POST needs the key in an XML body (which cannot hold U+FFFE, U+FFFF).
    let mut b = AmazonS3Builder::from_env()
        .with_bucket_name(&store.bucket)
        .with_disable_bulk_delete(true)
        .with_client_options(client_options(p, "s3", endpoint)?);
    if let Some(endpoint) = endpoint {
        b = b.with_endpoint(endpoint);
    }
    if let Some(v) = first(p, &["s3.access-key-id", "client.access-key-id"]) {
        b = b.with_access_key_id(v);
    }
    if let Some(v) = first(p, &["s3.secret-access-key", "client.secret-access-key"]) {
        b = b.with_secret_access_key(v);
    }
    if let Some(v) = first(p, &["s3.session-token", "client.session-token"]) {
        b = b.with_token(v);
    }
    if let Some(v) = first(p, &["s3.region", "client.region"]) {
        b = b.with_region(v);
    }
    if let Some(v) = first(p, &["s3.role-arn", "client.role-arn"]) {
        b = b.with_config("aws_role_arn".parse().expect("known key"), v);
    }
    if let Some(v) = first(p, &["s3.role-session-name", "client.role-session-name"]) {
        b = b.with_config("aws_role_session_name".parse().expect("known key"), v);
    }
    // Java's s3.path-style-access and pyiceberg's s3.force-virtual-addressing
    // say the same thing from opposite ends; both may not disagree.
    let path_style = flag(p, "s3.path-style-access")?;
    let virtual_hosted = flag(p, "s3.force-virtual-addressing")?;
    if path_style.is_some() && virtual_hosted.is_some() && path_style == virtual_hosted {
        return Err(Error::InvalidValue(
            "s3.path-style-access and s3.force-virtual-addressing contradict each other".to_owned(),
        ));
    }
    if let Some(virtual_hosted) = virtual_hosted.or(path_style.map(|p| !p)) {
        b = b.with_virtual_hosted_style_request(virtual_hosted);
    }
    if flag(p, "s3.anonymous")? == Some(true) {
        b = b.with_skip_signature(true);
    }
    // Java's S3FileIO name for how often a failed request is retried.
    if let Some(text) = p.get("s3.retry.num-retries") {
        let max_retries = text.trim().parse::<usize>().map_err(|_| {
            Error::InvalidValue(format!(
                "property s3.retry.num-retries must be a count, not {text:?}"
            ))
        })?;
        b = b.with_retry(RetryConfig {
            max_retries,
            ..RetryConfig::default()
        });
    }
    if let Some(key) = p.get("s3.sse-kms-key-id") {
        b = b.with_sse_kms_encryption(key);
    }
    Ok(b)
}

fn build_gcs(store: &StoreId, p: &BTreeMap<String, String>) -> Result<GoogleCloudStorageBuilder> {
    let endpoint = p.get("gcs.service.host").map(String::as_str);
    let mut b = GoogleCloudStorageBuilder::from_env()
        .with_bucket_name(&store.bucket)
        .with_client_options(client_options(p, "gcs", endpoint)?);
    if let Some(endpoint) = endpoint {
        b = b.with_config("google_base_url".parse().expect("known key"), endpoint);
    }
    if let Some(token) = p.get("gcs.oauth2.token") {
        b = b.with_credentials(Arc::new(StaticCredentialProvider::new(GcpCredential {
            bearer: token.clone(),
        })));
    }
    Ok(b)
}

/// The `key=value;...` pairs of an Azure connection string.
fn connection_string(text: &str) -> BTreeMap<String, String> {
    text.split(';')
        .filter_map(|part| part.split_once('='))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect()
}

fn build_azure(store: &StoreId, p: &BTreeMap<String, String>) -> Result<MicrosoftAzureBuilder> {
    let account = store.account.clone().unwrap_or_default();
    let conn = p
        .get("adls.connection-string")
        .map(|c| connection_string(c))
        .unwrap_or_default();
    // An endpoint from the properties or the connection string, for emulators
    // and sovereign clouds. pyiceberg hands its authority to pyarrow, which
    // reads it two ways: `.blob.core.windows.net` (a leading dot) follows the
    // account name in the host; `127.0.0.1:10000` (an emulator such as
    // Azurite) is the host, with the account as the first path segment.
    let endpoint = match p
        .get("adls.blob-storage-authority")
        .or(p.get("adls.dfs-storage-authority"))
    {
        Some(authority) => {
            let scheme = p
                .get("adls.blob-storage-scheme")
                .or(p.get("adls.dfs-storage-scheme"))
                .map_or("https", String::as_str);
            Some(if authority.starts_with('.') {
                format!("{scheme}://{account}{authority}")
            } else {
                format!("{scheme}://{authority}/{account}")
            })
        }
        None => conn.get("blobendpoint").cloned(),
    };
    let mut b = MicrosoftAzureBuilder::from_env()
        .with_account(&account)
        .with_container_name(&store.bucket)
        .with_client_options(client_options(p, "adls", endpoint.as_deref())?);
    if let Some(endpoint) = endpoint {
        b = b.with_endpoint(endpoint);
    }
    if let Some(key) = p.get("adls.account-key").or(conn.get("accountkey")) {
        b = b.with_access_key(key);
    }
    // Java keys SAS tokens by account (adls.sas-token.<account>); pyiceberg
    // has one adls.sas-token.
    let sas = p
        .get(&format!("adls.sas-token.{account}"))
        .or(p.get("adls.sas-token"))
        .or(conn.get("sharedaccesssignature"));
    if let Some(sas) = sas {
        let pairs = sas
            .trim_start_matches('?')
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                let decode = |s: &str| {
                    percent_encoding::percent_decode_str(s)
                        .decode_utf8_lossy()
                        .into_owned()
                };
                (decode(k), decode(v))
            })
            .collect::<Vec<_>>();
        b = b.with_sas_authorization(pairs);
    }
    if let Some(v) = p.get("adls.tenant-id") {
        b = b.with_tenant_id(v);
    }
    if let Some(v) = p.get("adls.client-id") {
        b = b.with_client_id(v);
    }
    if let Some(v) = p.get("adls.client-secret") {
        b = b.with_client_secret(v);
    }
    if let Some(v) = p.get("adls.token") {
        b = b.with_bearer_token_authorization(v);
    }
    if flag(p, "adls.anon")? == Some(true) {
        b = b.with_skip_signature(true);
    }
    Ok(b)
}

pub(super) async fn read(store: &Store, location: &str, path: &Path) -> Result<Vec<u8>> {
    let result = store.get(path).await.map_err(|e| error(location, e))?;
    let bytes = result.bytes().await.map_err(|e| error(location, e))?;
    Ok(bytes.into())
}

pub(super) async fn read_range(
    store: &Store,
    location: &str,
    path: &Path,
    start: u64,
    len: u64,
) -> Result<Vec<u8>> {
    if len == 0 {
        // An empty range is not a valid HTTP range; the object must still exist.
        let size = size(store, location, path).await?;
        super::local::check_range(location, start, len, size)?;
        return Ok(Vec::new());
    }
    let end = start
        .checked_add(len)
        .ok_or_else(|| Error::InvalidValue(format!("{location}: range {start}+{len} overflows")))?;
    let bytes = store
        .get_range(path, start..end)
        .await
        .map_err(|e| error(location, e))?;
    if bytes.len() as u64 != len {
        return Err(Error::InvalidValue(format!(
            "{location}: cannot read {len} bytes at offset {start}: the object is shorter"
        )));
    }
    Ok(bytes.into())
}

pub(super) async fn size(store: &Store, location: &str, path: &Path) -> Result<u64> {
    let meta = store.head(path).await.map_err(|e| error(location, e))?;
    Ok(meta.size)
}

pub(super) async fn exists(store: &Store, location: &str, path: &Path) -> Result<bool> {
    match store.head(path).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(error(location, e)),
    }
}

pub(super) async fn write(store: &Store, location: &str, path: &Path, data: &[u8]) -> Result<()> {
    let payload = PutPayload::from(bytes::Bytes::copy_from_slice(data));
    store
        .put(path, payload)
        .await
        .map_err(|e| error(location, e))?;
    Ok(())
}

/// A put with `If-None-Match: *` (S3 and GCS preconditions, Azure's
/// `If-None-Match`); false when the object already exists.
pub(super) async fn write_if_absent(
    store: &Store,
    location: &str,
    path: &Path,
    data: &[u8],
) -> Result<bool> {
    let payload = PutPayload::from(bytes::Bytes::copy_from_slice(data));
    let options = PutOptions::from(PutMode::Create);
    match store.put_opts(path, payload, options).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
        Err(object_store::Error::Precondition { .. }) => Ok(false),
        Err(e) => Err(error(location, e)),
    }
}

/// Deleting an object that does not exist succeeds (S3 semantics).
pub(super) async fn delete(store: &Store, location: &str, path: &Path) -> Result<()> {
    match store.delete(path).await {
        Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
        Err(e) => Err(error(location, e)),
    }
}

pub(super) async fn list(
    store: &Store,
    location: &str,
    object: &ObjectLocation,
    path: &Path,
) -> Result<Vec<FileInfo>> {
    let prefix = (!path.as_ref().is_empty()).then_some(path);
    let mut found: Vec<FileInfo> = store
        .list(prefix)
        .map(|meta| {
            meta.map(|m| FileInfo {
                location: format!("{}/{}", object.root, m.location),
                size: m.size,
                last_modified_ms: Some(m.last_modified.timestamp_millis()),
            })
        })
        .try_collect()
        .await
        .map_err(|e| error(location, e))?;
    found.sort_by(|a, b| a.location.cmp(&b.location));
    Ok(found)
}

/// One level under `path` (a delimiter listing): the objects directly in it
/// and its common prefixes, each sorted.
pub(super) async fn list_dir(
    store: &Store,
    location: &str,
    object: &ObjectLocation,
    path: &Path,
) -> Result<(Vec<FileInfo>, Vec<String>)> {
    let prefix = (!path.as_ref().is_empty()).then_some(path);
    let listed = store
        .list_with_delimiter(prefix)
        .await
        .map_err(|e| error(location, e))?;
    let mut files: Vec<FileInfo> = listed
        .objects
        .into_iter()
        .map(|m| FileInfo {
            location: format!("{}/{}", object.root, m.location),
            size: m.size,
            last_modified_ms: Some(m.last_modified.timestamp_millis()),
        })
        .collect();
    files.sort_by(|a, b| a.location.cmp(&b.location));
    let mut dirs: Vec<String> = listed
        .common_prefixes
        .into_iter()
        .map(|p| format!("{}/{}", object.root, p))
        .collect();
    dirs.sort();
    Ok((files, dirs))
}

/// Reads many objects with up to `concurrency` requests in flight, in the
/// order given. Each result stands alone: one missing object does not hide
/// the others.
///
/// Every request is a task of its own, so the runtime's workers share the
/// work of receiving and collecting the bodies; polled together inside the
/// caller's one `block_on` task, they would all be collected on the calling
/// thread.
pub(super) async fn read_many(
    requests: Vec<(usize, Store, String, Path)>,
    concurrency: usize,
) -> Vec<(usize, Result<Vec<u8>>)> {
    futures_util::stream::iter(requests)
        .map(|(index, store, location, path)| async move {
            let task = tokio::spawn({
                let location = location.clone();
                async move { read(&store, &location, &path).await }
            });
            let result = task.await.unwrap_or_else(|e| {
                Err(Error::Internal(format!(
                    "the request for {location} failed: {e}"
                )))
            });
            (index, result)
        })
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
}
