//! The web board over HTTP: the built page (`scripts/web-build.sh` writes
//! `web/dist/`) and an exported model (under `/model/`, as the page asks
//! for it) on one origin, so that the page makes no request elsewhere.
//! Only files inside those two folders are served: a path that leaves them
//! (`..`, encoded or not) or names nothing is 404.

use std::path::Path;

use anyhow::{Context, Result};
use tower_http::services::ServeDir;

/// The routes: `/model/…` from `model`, everything else from `page`.
pub fn router(page: &Path, model: &Path) -> axum::Router {
    axum::Router::new().nest_service("/model", ServeDir::new(model)).fallback_service(ServeDir::new(page))
}

/// Serves [`router`] on a listening socket until the process is stopped.
pub fn serve_on(listener: std::net::TcpListener, page: &Path, model: &Path) -> Result<()> {
    listener.set_nonblocking(true).context("cannot set the socket non-blocking")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).context("cannot use the socket")?;
        axum::serve(listener, router(page, model)).await.context("the server stopped")
    })
}
