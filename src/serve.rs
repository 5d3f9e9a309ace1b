//! The web board over HTTP: the built page (`scripts/web-build.sh` writes
//! `web/dist/`) and an exported model (under `/model/`, as the page asks
//! for it) on one origin, so that the page makes no request elsewhere; with
//! a run folder, its progress for the run's page (`run.html`): `/run/progress.json`
//! (see `progress.rs`) and `/run/ratings.png` (its Elo plot).
//! Only files inside those folders are served: a path that leaves them
//! (`..`, encoded or not) or names nothing is 404.
//!
//! Clients are untrusted: a connection has [`Limits`] on its count (in all
//! and per client address) and time (to send, to read), the run's progress is computed at most once per interval whatever
//! the requests, a request whose `Host` is a name this server was not told
//! of is refused (a page that rebinds its DNS name to this machine cannot
//! read the run or the model), and error replies name no server path.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use axum::extract::Request;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::services::ServeDir;

/// Bounds on what clients may take of the server.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once; more wait in the listening queue.
    pub connections: usize,
    /// Connections served at once from one client address; more are closed
    /// at once, so that one address cannot take every connection.
    pub per_client: usize,
    /// The longest a response may wait for its client to read it.
    pub write_timeout: Duration,
    /// The longest a connection may send nothing (idle keep-alive included).
    pub idle_timeout: Duration,
    /// Time for a client to send a request's headers.
    pub header_timeout: Duration,
    /// The longest a connection stays open, idle keep-alive included.
    pub connection_timeout: Duration,
    /// How long the run's progress is reused before it is read again.
    pub progress_every: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections: 256,
            per_client: 64,
            write_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            connection_timeout: Duration::from_secs(120),
            progress_every: Duration::from_secs(5),
        }
    }
}

/// What [`serve_on`] serves, and to whom.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The bounds on connections, and how often a run's progress is read again.
    pub limits: Limits,
    /// Host names besides `localhost` and IP addresses that requests may
    /// name (`gipf serve --allow-host`, for a board served under a name).
    pub allowed_hosts: Vec<String>,
}

/// The routes: `/model/…` from `model`, with a run `/run/…`, everything
/// else from `page`; requests for another host refused.
pub fn router(page: &Path, model: &Path, run: Option<&Path>, options: &Options) -> axum::Router {
    let mut router = axum::Router::new().nest_service("/model", ServeDir::new(model));
    if let Some(run) = run {
        let cache = Arc::new(ProgressCache::new(run, options.limits.progress_every));
        let plot = Arc::new(run.to_path_buf());
        router = router
            .route("/run/progress.json", axum::routing::get(move || progress(cache.clone())))
            .route("/run/ratings.png", axum::routing::get(move || elo_plot(plot.clone())));
    }
    let allowed = Arc::new(options.allowed_hosts.clone());
    router
        .fallback_service(ServeDir::new(page))
        .layer(axum::middleware::from_fn(move |request, next| check_host(allowed.clone(), request, next)))
}

/// The largest Elo plot served.
const MAX_PLOT_BYTES: u64 = 16 << 20;

/// The run's Elo plot (`arena/ratings.png`), where neither it nor its
/// folder is a link: a link planted there could name any file the server
/// can read. 404 otherwise.
async fn elo_plot(run: Arc<PathBuf>) -> Response {
    let read = tokio::task::spawn_blocking(move || read_plain_file(&run.join("arena"), "ratings.png"));
    match read.await {
        Ok(Some(bytes)) => ([(header::CONTENT_TYPE, "image/png")], bytes).into_response(),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `name` in `folder`, where neither is a link, of at most
/// [`MAX_PLOT_BYTES`]: the file opened is checked to be the one seen as a
/// plain file (a link swapped in between is another file), and read no
/// further than the bound.
fn read_plain_file(folder: &Path, name: &str) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let path = folder.join(name);
    let (folder_seen, seen) = (folder.symlink_metadata().ok()?, path.symlink_metadata().ok()?);
    if !folder_seen.is_dir() || !seen.is_file() {
        return None;
    }
    let file = std::fs::File::open(&path).ok()?;
    let opened = file.metadata().ok()?;
    if (opened.dev(), opened.ino()) != (seen.dev(), seen.ino()) || opened.len() > MAX_PLOT_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(MAX_PLOT_BYTES + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= MAX_PLOT_BYTES).then_some(bytes)
}

/// Whether a request's `Host` may be served: an IP address, `localhost`,
/// or one of `allowed` (a page that rebinds a DNS name to this machine
/// sends its own name).
pub fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => {
            host.rsplit_once(':').filter(|(_, port)| port.bytes().all(|b| b.is_ascii_digit())).map_or(host, |(n, _)| n)
        }
    };
    name.parse::<std::net::IpAddr>().is_ok()
        || name.eq_ignore_ascii_case("localhost")
        || allowed.iter().any(|a| a.eq_ignore_ascii_case(name))
}

async fn check_host(allowed: Arc<Vec<String>>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if host_allowed(host, &allowed) {
        return next.run(request).await;
    }
    let why = "this server answers requests for its own address (gipf serve --allow-host NAME adds a name)";
    (StatusCode::MISDIRECTED_REQUEST, why).into_response()
}

/// The run's progress, read at most once per interval (off the server's
/// thread) and shared by the requests meanwhile.
struct ProgressCache {
    run: PathBuf,
    every: Duration,
    /// When it was last read, and the JSON (or `None`: it could not be read).
    last: tokio::sync::Mutex<Option<(Instant, Option<String>)>>,
    /// Reads so far.
    reads: std::sync::atomic::AtomicU64,
}

impl ProgressCache {
    fn new(run: &Path, every: Duration) -> ProgressCache {
        ProgressCache { run: run.to_path_buf(), every, last: Default::default(), reads: Default::default() }
    }

    /// The progress as JSON, read again when older than the interval; an
    /// error is logged here, with its paths, and is `None` for the client.
    async fn get(&self) -> Option<String> {
        let mut last = self.last.lock().await;
        if let Some((_, json)) = last.as_ref().filter(|(at, _)| at.elapsed() < self.every) {
            return json.clone();
        }
        self.reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let run = self.run.clone();
        let read = tokio::task::spawn_blocking(move || crate::progress::of(&run)).await;
        let json = match read {
            Ok(Ok(progress)) => Some(serde_json::to_string(&progress).expect("progress is JSON")),
            Ok(Err(e)) => {
                tracing::warn!("the run's progress: {e:#}");
                None
            }
            Err(e) => {
                tracing::warn!("the run's progress: {e}");
                None
            }
        };
        *last = Some((Instant::now(), json.clone()));
        json
    }
}

async fn progress(cache: Arc<ProgressCache>) -> Response {
    match cache.get().await {
        Some(json) => ([(header::CONTENT_TYPE, "application/json")], json).into_response(),
        None => (StatusCode::INTERNAL_SERVER_ERROR, "the run's progress cannot be read (the server's log says why)")
            .into_response(),
    }
}

/// Serves [`router`] on a listening socket until the process is stopped,
/// each connection within `options.limits`.
pub fn serve_on(
    listener: std::net::TcpListener,
    page: &Path,
    model: &Path,
    run: Option<&Path>,
    options: &Options,
) -> Result<()> {
    listener.set_nonblocking(true).context("cannot set the socket non-blocking")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    let app = router(page, model, run, options);
    let limits = options.limits.clone();
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).context("cannot use the socket")?;
        let permits = Arc::new(tokio::sync::Semaphore::new(limits.connections));
        let clients = Arc::new(std::sync::Mutex::new(HashMap::new()));
        loop {
            let permit = permits.clone().acquire_owned().await.context("the connection limit closed")?;
            let (stream, peer) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors, say: wait, then accept again.
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            // Past its address's share, a connection is closed at once.
            let Some(share) = ClientShare::take(&clients, peer.ip(), limits.per_client) else { continue };
            tokio::spawn(serve_connection(stream, app.clone(), limits.clone(), (permit, share)));
        }
    })
}

/// Connections open by client address.
type Clients = Arc<std::sync::Mutex<HashMap<IpAddr, usize>>>;

/// One of a client address's connections, given back when dropped.
struct ClientShare {
    clients: Clients,
    address: IpAddr,
}

impl ClientShare {
    /// A share for `address`, unless it holds `most` already.
    fn take(clients: &Clients, address: IpAddr, most: usize) -> Option<ClientShare> {
        let mut open = clients.lock().expect("no panic while counting");
        let count = open.entry(address).or_default();
        if *count >= most {
            return None;
        }
        *count += 1;
        Some(ClientShare { clients: clients.clone(), address })
    }
}

impl Drop for ClientShare {
    fn drop(&mut self) {
        let mut open = self.clients.lock().expect("no panic while counting");
        if let Some(count) = open.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.address);
            }
        }
    }
}

/// One connection, HTTP/1.1, within `limits`: a client that sends nothing,
/// or reads nothing of a response, for its timeout is cut off. Its permit
/// and share are given back at the end.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    app: axum::Router,
    limits: Limits,
    _held: (tokio::sync::OwnedSemaphorePermit, ClientShare),
) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(hyper_util::rt::TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut stream = tokio_io_timeout::TimeoutStream::new(stream);
    stream.set_write_timeout(Some(limits.write_timeout));
    stream.set_read_timeout(Some(limits.idle_timeout));
    let connection = http.serve_connection(hyper_util::rt::TokioIo::new(Box::pin(stream)), service);
    let _ = tokio::time::timeout(limits.connection_timeout, connection).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_ip_addresses_localhost_or_named() {
        let allowed = ["board.example".to_string()];
        for host in ["127.0.0.1:8000", "127.0.0.1", "[::1]:8000", "10.1.2.3:80", "LOCALHOST:8000", "board.example"] {
            assert!(host_allowed(host, &allowed), "{host}");
        }
        for host in ["", "attacker.example:8000", "localhost.attacker.example", "127.0.0.1.nip.io:8000"] {
            assert!(!host_allowed(host, &allowed), "{host}");
        }
    }

    /// Requests at once share one read of the run's progress.
    #[test]
    fn the_progress_is_read_once_per_interval() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Arc::new(ProgressCache::new(dir.path(), Duration::from_secs(60)));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let answers = runtime.block_on(futures::future::join_all((0..20).map(|_| {
            let cache = cache.clone();
            async move { cache.get().await }
        })));
        assert!(answers.iter().all(|a| a.is_some() && a == &answers[0]), "{answers:?}");
        assert_eq!(cache.reads.load(std::sync::atomic::Ordering::Relaxed), 1);
    }
}
