//! The web board over HTTP: the built page (`scripts/web-build.sh` writes
//! `web/dist/`) and an exported model (under `/model/`, as the page asks
//! for it) on one origin, so that the page makes no request elsewhere; with
//! a run folder, its progress for the run's page (`run.html`): `/run/progress.json`
//! (see [`crate::progress`]) and `/run/ratings.png` (its Elo plot).
//! Only files inside those folders are served: a path that leaves them
//! (`..`, encoded or not) or names nothing is 404.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use tower_http::services::{ServeDir, ServeFile};

/// The routes: `/model/…` from `model`, with a run `/run/…`, everything
/// else from `page`.
pub fn router(page: &Path, model: &Path, run: Option<&Path>) -> axum::Router {
    let mut router = axum::Router::new().nest_service("/model", ServeDir::new(model));
    if let Some(run) = run {
        let folder = run.to_path_buf();
        router = router
            .route("/run/progress.json", axum::routing::get(move || progress(folder.clone())))
            .route_service("/run/ratings.png", ServeFile::new(run.join("arena/ratings.png")));
    }
    router.fallback_service(ServeDir::new(page))
}

/// The run's progress as JSON, read on each request (off the server's thread).
async fn progress(run: PathBuf) -> Response {
    match tokio::task::spawn_blocking(move || crate::progress::of(&run)).await {
        Ok(Ok(progress)) => {
            let json = serde_json::to_string(&progress).expect("progress is JSON");
            ([(header::CONTENT_TYPE, "application/json")], json).into_response()
        }
        Ok(Err(e)) => (StatusCode::INTERNAL_SERVER_ERROR, format!("{e:#}")).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// Serves [`router`] on a listening socket until the process is stopped.
pub fn serve_on(listener: std::net::TcpListener, page: &Path, model: &Path, run: Option<&Path>) -> Result<()> {
    listener.set_nonblocking(true).context("cannot set the socket non-blocking")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).context("cannot use the socket")?;
        axum::serve(listener, router(page, model, run)).await.context("the server stopped")
    })
}
