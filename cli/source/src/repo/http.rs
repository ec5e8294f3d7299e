//! Downloads: `http(s)://` with reqwest (TLS by rustls, the platform's trust store), and
//! `file://` (KUDO accepts `file:` repositories too).

use std::time::Duration;

use super::{RepoError, Result};

/// The largest download accepted: an index or a package (KUDO's packages are kilobytes; the
/// community index is under a megabyte).
pub const MAX_DOWNLOAD_BYTES: usize = 64 << 20;

/// An HTTP client and the runtime it runs on (the CLI is synchronous; one request at a time).
pub struct Http {
    client: reqwest::Client,
    runtime: tokio::runtime::Runtime,
}

impl Http {
    /// A client with kudo's user agent and timeouts (10 s to connect, 120 s in all).
    pub fn new() -> Result<Http> {
        crate::oci::install_crypto_provider();
        let fail = |e: &dyn std::fmt::Display| RepoError::Download {
            url: String::new(),
            message: format!("cannot start an HTTP client: {e}"),
        };
        let client = reqwest::Client::builder()
            .user_agent(concat!("kudo/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .build()
            .map_err(|e| fail(&e))?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| fail(&e))?;
        Ok(Http { client, runtime })
    }

    /// The body of `url`; anything but a 2xx is an error naming the status.
    pub fn get(&self, url: &str) -> Result<Vec<u8>> {
        if let Some(path) = url.strip_prefix("file://") {
            return std::fs::read(path).map_err(|e| RepoError::Download {
                url: url.to_string(),
                message: e.to_string(),
            });
        }
        let fail = |message: String| RepoError::Download {
            url: url.to_string(),
            message,
        };
        self.runtime.block_on(async {
            let response = self
                .client
                .get(url)
                .send()
                .await
                .map_err(|e| fail(describe(&e.without_url())))?;
            let status = response.status();
            if !status.is_success() {
                return Err(fail(format!("the server answered {status}")));
            }
            if response
                .content_length()
                .is_some_and(|n| n as usize > MAX_DOWNLOAD_BYTES)
            {
                return Err(fail(format!(
                    "larger than {} MiB",
                    MAX_DOWNLOAD_BYTES >> 20
                )));
            }
            let bytes = response
                .bytes()
                .await
                .map_err(|e| fail(describe(&e.without_url())))?;
            if bytes.len() > MAX_DOWNLOAD_BYTES {
                return Err(fail(format!(
                    "larger than {} MiB",
                    MAX_DOWNLOAD_BYTES >> 20
                )));
            }
            Ok(bytes.to_vec())
        })
    }
}

/// reqwest's error with its causes, in one line (`error sending request: ... connection
/// refused`).
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}
