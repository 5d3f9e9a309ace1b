//! Runs in an S3-compatible object store, through the `object_store` crate:
//! a run given as `s3://bucket/prefix` keeps its shards under `games/` and
//! its checkpoints under `models/` there, with `models/latest.json` naming
//! the newest. Endpoint and credentials come from the standard `AWS_*`
//! variables (`AWS_ENDPOINT_URL` for a self-hosted store).
//!
//! Every process works on local folders and this module moves files between
//! them and the store:
//! - self-play writes its shards into a local outbox and uploads each with a
//!   create-only put (a retry never duplicates or overwrites), removing it
//!   once stored; what fails stays in the outbox for the next try, also
//!   across restarts;
//! - the trainer lists the shards and downloads each into its local games
//!   folder once, when its window reads it (see [`ShardFeed`]), and
//!   publishes a checkpoint by uploading its files, then `latest.json` with
//!   their sha256;
//! - self-play polls `latest.json` and downloads a new checkpoint into a
//!   local models folder (temporary names, checked against the sha256,
//!   renamed; weights last), switching between games as with a folder.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::StreamExt;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

use crate::durable::write_atomic;

mod feed;
mod retry;

pub use feed::{ShardFeed, FULL_LISTING, LOOKBACK};
pub use retry::{retry_forever, Backoff};

/// Whether a run or model argument names an object store.
pub fn is_url(text: &str) -> bool {
    text.starts_with("s3://")
}

/// A prefix in an object store.
pub struct Store {
    store: Arc<dyn ObjectStore>,
    prefix: Key,
    url: String,
    runtime: tokio::runtime::Runtime,
}

/// How long one request is retried before its caller sees the error.
const RETRY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a request to the store failed, in kinds a caller tells apart.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Not an `s3://bucket/prefix` URL.
    #[error("{url}: {why}")]
    Url {
        /// The text given.
        url: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// The store refused the credentials (`code`: its reason, such as
    /// `SignatureDoesNotMatch`).
    #[error("{url}: the store refused the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY): {code}")]
    Refused {
        /// The store's URL.
        url: String,
        /// The store's reason.
        code: String,
    },
    /// The object changed since this process last read or wrote it:
    /// another writer got there first, and nothing was written.
    #[error("{url} changed since this process last wrote it")]
    Superseded {
        /// The object.
        url: String,
    },
    /// There is no such object.
    #[error("{url} does not exist")]
    NotFound {
        /// The object asked for.
        url: String,
    },
    /// An object larger than its kind may be ([`size_bound`]).
    #[error("{url}: {size} bytes, more than such an object may have ({most})")]
    TooLarge {
        /// The object.
        url: String,
        /// Its size, in bytes.
        size: u64,
        /// The most bytes such an object may have.
        most: u64,
    },
    /// A request that failed (after the store client's own retries); `code`,
    /// where the store gave one, is its reason.
    #[error("cannot {action} {url}{}", code.as_ref().map(|c| format!(": {c}")).unwrap_or_default())]
    Request {
        /// What was asked, such as `read` or `write`.
        action: &'static str,
        /// The object or folder it was asked of.
        url: String,
        /// The store's reason, where it gave one.
        code: Option<String>,
        /// The store client's error.
        #[source]
        source: Box<object_store::Error>,
    },
    /// A local file or the client's runtime.
    #[error("{what}")]
    Local {
        /// What failed.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl StoreError {
    fn request(action: &'static str, url: String) -> impl FnOnce(object_store::Error) -> StoreError {
        move |source| {
            let text = source.to_string();
            // The store's own reason, e.g. <Code>NoSuchBucket</Code>.
            let code = text.split("<Code>").nth(1).and_then(|rest| rest.split("</Code>").next()).map(String::from);
            StoreError::Request { action, url, code, source: Box::new(source) }
        }
    }

    /// `error`'s [`StoreError`], where one is in its chain of causes.
    pub fn find(error: &anyhow::Error) -> Option<&StoreError> {
        error.chain().find_map(|cause| cause.downcast_ref::<StoreError>())
    }
}

/// The store's answers.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// The most bytes an object may have, by its kind: a shard (as much as a
/// shard may hold unpacked), a checkpoint's weights or optimizer state (a
/// network of the largest shape), a JSON object (a description,
/// `latest.json`, the lease), anything else (the arena's records).
pub fn size_bound(name: &str) -> u64 {
    if name.ends_with(crate::shards::SHARD_SUFFIX) {
        crate::games::MAX_SHARD_BYTES
    } else if name.ends_with(".safetensors") || name.ends_with(".optim") {
        4 << 30
    } else if name.ends_with(".json") {
        1 << 20
    } else {
        256 << 20
    }
}

/// `folder/name`, or `name` alone in the store's own folder (`""`).
pub fn join(folder: &str, name: &str) -> String {
    match folder {
        "" => name.to_string(),
        _ => format!("{folder}/{name}"),
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "Store({})", self.url)
    }
}

impl Store {
    /// Opens `s3://bucket/prefix`, configured from the environment.
    pub fn open(url: &str) -> StoreResult<Store> {
        Store::open_with(url, std::env::vars())
    }

    /// Opens `s3://bucket/prefix`, configured from the given `AWS_*`
    /// settings (named as the environment variables) instead.
    pub fn open_with(url: &str, settings: impl IntoIterator<Item = (String, String)>) -> StoreResult<Store> {
        let bad = |why| StoreError::Url { url: url.to_string(), why };
        let rest = url.strip_prefix("s3://").ok_or_else(|| bad("expected s3://bucket/prefix"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("no bucket named"));
        }
        let settings: BTreeMap<String, String> = settings.into_iter().filter(|(k, _)| k.starts_with("AWS_")).collect();
        let mut builder = object_store::aws::AmazonS3Builder::new().with_bucket_name(bucket);
        for (key, value) in &settings {
            if let Ok(key) = key.to_ascii_lowercase().parse() {
                builder = builder.with_config(key, value);
            }
        }
        if let Some(endpoint) = settings.get("AWS_ENDPOINT_URL") {
            builder = builder.with_allow_http(endpoint.starts_with("http://"));
        }
        if !settings.contains_key("AWS_DEFAULT_REGION") && !settings.contains_key("AWS_REGION") {
            builder = builder.with_region("us-east-1");
        }
        // A few quick retries only: the callers decide what to do while the
        // store is away (keep the shard in the outbox, keep the model, train on).
        // rustls's process-wide cryptography (ring; see Cargo.toml). An
        // error means one is installed already, which serves as well.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let retry = object_store::RetryConfig { max_retries: 3, retry_timeout: RETRY_TIMEOUT, ..Default::default() };
        let store = builder.with_retry(retry).build().map_err(StoreError::request("configure", url.to_string()))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| StoreError::Local { what: "cannot start the object store's runtime".into(), source })?;
        let store = Store {
            store: Arc::new(store),
            prefix: Key::from(prefix.trim_end_matches('/')),
            url: url.trim_end_matches('/').to_string(),
            runtime,
        };
        store.check_access()?;
        Ok(store)
    }

    /// Lists the first page under the prefix, so that wrong credentials, a
    /// missing bucket or an unreachable endpoint are reported at start.
    fn check_access(&self) -> StoreResult<()> {
        let first = self.runtime.block_on(async { self.store.list(Some(&self.prefix)).next().await });
        let Some(Err(e)) = first else { return Ok(()) };
        let denied =
            matches!(e, object_store::Error::PermissionDenied { .. } | object_store::Error::Unauthenticated { .. });
        let text = e.to_string();
        let error = StoreError::request("list the run in the store at", self.url.clone())(e);
        match error {
            StoreError::Request { url, code, .. }
                if denied || text.contains("403 Forbidden") || text.contains("401 Unauthorized") =>
            {
                Err(StoreError::Refused { url, code: code.unwrap_or_else(|| "access denied".into()) })
            }
            other => Err(other),
        }
    }

    fn key(&self, name: &str) -> Key {
        name.split('/').filter(|p| !p.is_empty()).fold(self.prefix.clone(), |key, part| key.join(part))
    }

    /// The URL of `name` in the store, for messages.
    pub fn url(&self, name: &str) -> String {
        join(&self.url, name)
    }

    /// The names of the objects directly in `folder`.
    pub fn list(&self, folder: &str) -> StoreResult<Vec<String>> {
        self.list_after(folder, None)
    }

    /// The names of the objects directly in `folder` after `offset` in name
    /// order (all of them without one): the store skips the others.
    pub fn list_after(&self, folder: &str, offset: Option<&str>) -> StoreResult<Vec<String>> {
        let key = self.key(folder);
        self.runtime.block_on(async {
            let mut names = Vec::new();
            let mut listing = match offset {
                Some(offset) => self.store.list_with_offset(Some(&key), &key.clone().join(offset)),
                None => self.store.list(Some(&key)),
            };
            while let Some(meta) = listing.next().await {
                let meta = meta.map_err(StoreError::request("list", self.url(folder)))?;
                if let Some(name) = meta.location.prefix_match(&key).and_then(|mut parts| {
                    let first = parts.next()?;
                    parts.next().is_none().then(|| first.as_ref().to_string())
                }) {
                    names.push(name);
                }
            }
            names.sort();
            Ok(names)
        })
    }

    /// The bytes of `name`, or `None` when there is no such object. An
    /// object larger than its kind may be ([`size_bound`]) is an error, told
    /// by the size the store gives before the body is read, and by the
    /// bytes read should the store's size be wrong.
    pub fn get(&self, name: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(self.get_versioned(name)?.map(|(bytes, _)| bytes))
    }

    /// [`Store::get`], with the object's version (its ETag) for [`Store::put_if`].
    pub fn get_versioned(&self, name: &str) -> StoreResult<Option<(Vec<u8>, Option<String>)>> {
        let key = self.key(name);
        let most = size_bound(name);
        let too_large = |size: u64| StoreError::TooLarge { url: self.url(name), size, most };
        self.runtime.block_on(async {
            let got = match self.store.get(&key).await {
                Ok(got) => got,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(StoreError::request("read", self.url(name))(e)),
            };
            let (size, version) = (got.meta.size as u64, got.meta.e_tag.clone());
            if size > most {
                return Err(too_large(size));
            }
            let mut bytes = Vec::with_capacity(size as usize);
            let mut body = got.into_stream();
            while let Some(chunk) = body.next().await {
                let chunk = chunk.map_err(StoreError::request("read", self.url(name)))?;
                if (bytes.len() + chunk.len()) as u64 > most {
                    return Err(too_large((bytes.len() + chunk.len()) as u64));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(Some((bytes, version)))
        })
    }

    /// Stores `bytes` as `name` only while the object is at `version` (its
    /// ETag, as last read or written; `None`: only while there is none), in
    /// one conditional request; returns the new version. An object changed
    /// since is a [`StoreError::Superseded`] error, and nothing is written.
    pub fn put_if(&self, name: &str, bytes: Vec<u8>, version: Option<&str>) -> StoreResult<Option<String>> {
        let key = self.key(name);
        let mode = match version {
            Some(e_tag) => PutMode::Update(UpdateVersion { e_tag: Some(e_tag.to_string()), version: None }),
            None => PutMode::Create,
        };
        let options = PutOptions { mode, ..Default::default() };
        self.runtime.block_on(async {
            match self.store.put_opts(&key, PutPayload::from(bytes), options).await {
                Ok(put) if put.e_tag.is_some() => Ok(put.e_tag),
                Ok(_) => Ok(self.store.head(&key).await.map_err(StoreError::request("read", self.url(name)))?.e_tag),
                Err(object_store::Error::Precondition { .. } | object_store::Error::AlreadyExists { .. }) => {
                    Err(StoreError::Superseded { url: self.url(name) })
                }
                Err(e) => Err(StoreError::request("write", self.url(name))(e)),
            }
        })
    }

    /// Stores `bytes` as `name` only if no object has that name; returns
    /// whether it was created (false: the name was taken, nothing changed).
    pub fn create(&self, name: &str, bytes: Vec<u8>) -> StoreResult<bool> {
        let key = self.key(name);
        let options = PutOptions { mode: PutMode::Create, ..Default::default() };
        self.runtime.block_on(async {
            match self.store.put_opts(&key, PutPayload::from(bytes), options).await {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(e) => Err(StoreError::request("write", self.url(name))(e)),
            }
        })
    }

    /// Stores `bytes` as `name`, replacing what was there.
    pub fn put(&self, name: &str, bytes: Vec<u8>) -> StoreResult<()> {
        let key = self.key(name);
        self.runtime.block_on(async {
            self.store.put(&key, PutPayload::from(bytes)).await.map_err(StoreError::request("write", self.url(name)))
        })?;
        Ok(())
    }

    /// Removes `name` (nothing happens when there is no such object).
    pub fn delete(&self, name: &str) -> StoreResult<()> {
        let key = self.key(name);
        self.runtime.block_on(async {
            match self.store.delete(&key).await {
                Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
                Err(e) => Err(StoreError::request("remove", self.url(name))(e)),
            }
        })
    }

    /// Uploads every shard in the local `outbox` to `folder` (create-only:
    /// a shard already stored, by an earlier try whose answer was lost, is
    /// not written twice) and removes each once stored. Returns the shards
    /// uploaded; stops at the first failure, leaving the rest for later.
    pub fn upload_outbox(&self, outbox: &Path, folder: &str) -> Result<usize> {
        let mut done = 0;
        // Workers on one machine share an outbox: a shard another one has
        // just uploaded and removed is skipped.
        let gone = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
        for file in crate::shards::list(outbox)? {
            let bytes = match std::fs::read(&file.path) {
                Err(e) if gone(&e) => continue,
                read => read.with_context(|| format!("cannot read {}", file.path.display()))?,
            };
            if !self.create(&join(folder, &file.name), bytes)? {
                tracing::debug!(shard = file.name, "already stored");
            }
            match std::fs::remove_file(&file.path) {
                Err(e) if !gone(&e) => {
                    return Err(e).with_context(|| format!("cannot remove {}", file.path.display()));
                }
                _ => done += 1,
            }
        }
        Ok(done)
    }

    /// Downloads the object `name` into the local folder `into` (written
    /// atomically) unless a file of that name is already there.
    pub fn download(&self, name: &str, into: &Path) -> Result<PathBuf> {
        let file = into.join(name.rsplit('/').next().unwrap_or(name));
        if !file.is_file() {
            let bytes = self.get(name)?.ok_or_else(|| StoreError::NotFound { url: self.url(name) })?;
            std::fs::create_dir_all(into).with_context(|| format!("cannot create {}", into.display()))?;
            write_atomic(&file, &bytes)?;
        }
        Ok(file)
    }
}

/// A local folder for the files of a store URL on this machine, under the
/// per-user cache ([`crate::cache_dir`]):
/// `runs/<the URL as a file name>/<what>`.
pub fn local_cache(url: &str, what: &str) -> PathBuf {
    crate::cache_dir().join("runs").join(file_name_of(url)).join(what)
}

/// `url` as one file name: letters, digits, '.' and '-' kept, the rest '_'.
pub fn file_name_of(url: &str) -> String {
    url.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect()
}
