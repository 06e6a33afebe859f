//! Standalone use: serve scripts from a directory of JSON files on fixed addresses.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use crate::config::{Backend, FakeProvidersConfig, ProviderInstance, ProviderKind};
use crate::dispatch::RegisterError;
use crate::providers::{FakeProviders, StartError};
use crate::script::Script;

/// Options of [`serve_from_files`]. `Debug` never shows the canary.
#[derive(Clone)]
pub struct ServeOptions {
    /// Address of the wiremock server (the address printed as `listening on http://…`).
    pub listen: SocketAddr,
    /// Address of the streaming backend; `None`: a free port on the same IP as `listen`.
    pub streaming_listen: Option<SocketAddr>,
    /// Directory whose `*.json` files each hold one [`Script`].
    pub scripts_dir: PathBuf,
    /// The canary credential (read it from the environment, never from argv).
    pub canary: String,
    /// The instances; empty means [`ProviderInstance::default_set`].
    pub instances: Vec<ProviderInstance>,
}

impl fmt::Debug for ServeOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeOptions")
            .field("listen", &self.listen)
            .field("streaming_listen", &self.streaming_listen)
            .field("scripts_dir", &self.scripts_dir)
            .field("canary", &"<redacted>")
            .field("instances", &self.instances)
            .finish()
    }
}

/// Why standalone serving failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The scripts directory could not be listed.
    #[error("failed to read scripts directory `{path}`")]
    ReadDir {
        /// The directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A script file could not be read.
    #[error("failed to read script file `{path}`")]
    ReadFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A script file is not a valid script.
    #[error("script file `{path}` is not a valid script")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// A script was refused.
    #[error("script file `{path}` was refused")]
    Register {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: RegisterError,
    },
    /// The servers could not start.
    #[error(transparent)]
    Start(#[from] StartError),
}

/// Reads every `*.json` file of `dir` (sorted by name) as one script.
pub fn load_scripts(dir: &Path) -> Result<Vec<(PathBuf, Script)>, ServeError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ServeError::ReadDir {
        path: dir.to_owned(),
        source,
    })?;
    let mut paths = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| ServeError::ReadDir {
            path: dir.to_owned(),
            source,
        })?;
        let path = entry.path();
        if path
            .extension()
            .is_some_and(|extension| extension == "json")
        {
            paths.push(path);
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).map_err(|source| ServeError::ReadFile {
                path: path.clone(),
                source,
            })?;
            let script = serde_json::from_str(&text).map_err(|source| ServeError::Parse {
                path: path.clone(),
                source,
            })?;
            Ok((path, script))
        })
        .collect()
}

/// Starts the fake providers on the given addresses and registers every script file.
///
/// The servers run until the returned [`FakeProviders`] is dropped or shut down; print
/// [`FakeProviders::startup_report`] to tell the user where they are.
pub async fn serve_from_files(options: ServeOptions) -> Result<FakeProviders, ServeError> {
    let scripts = load_scripts(&options.scripts_dir)?;
    let instances = if options.instances.is_empty() {
        ProviderInstance::default_set()
    } else {
        options.instances
    };
    let streaming_listen = options
        .streaming_listen
        .unwrap_or_else(|| SocketAddr::new(options.listen.ip(), 0));
    let providers = FakeProviders::start(FakeProvidersConfig {
        canary: options.canary,
        instances,
        wiremock_listen: Some(options.listen),
        streaming_listen: Some(streaming_listen),
    })
    .await?;
    for (path, script) in scripts {
        providers
            .register(script)
            .map_err(|source| ServeError::Register { path, source })?;
    }
    Ok(providers)
}

/// Parses an instance flag `NAME=KIND` or `NAME=KIND@streaming` (KIND: `openai-chat`,
/// `anthropic-messages`, `async-media`).
pub fn parse_instance_flag(flag: &str) -> Result<ProviderInstance, String> {
    let (name, rest) = flag
        .split_once('=')
        .ok_or_else(|| format!("instance `{flag}` must look like NAME=KIND[@streaming]"))?;
    let (kind, backend) = match rest.split_once('@') {
        None => (rest, Backend::Wiremock),
        Some((kind, "streaming")) => (kind, Backend::Streaming),
        Some((kind, "wiremock")) => (kind, Backend::Wiremock),
        Some((_, other)) => {
            return Err(format!(
                "instance `{flag}`: backend `{other}` must be wiremock or streaming"
            ));
        }
    };
    let kind = ProviderKind::parse(kind).ok_or_else(|| {
        format!("instance `{flag}`: kind `{kind}` must be openai-chat, openai-responses, anthropic-messages or async-media")
    })?;
    Ok(ProviderInstance::new(name, kind, backend))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instance_flags_parse() {
        assert_eq!(
            parse_instance_flag("x=openai-chat@streaming"),
            Ok(ProviderInstance::new(
                "x",
                ProviderKind::OpenaiChat,
                Backend::Streaming
            ))
        );
        assert_eq!(
            parse_instance_flag("m=async-media"),
            Ok(ProviderInstance::new(
                "m",
                ProviderKind::AsyncMedia,
                Backend::Wiremock
            ))
        );
        assert!(parse_instance_flag("x").is_err());
        assert!(parse_instance_flag("x=gemini").is_err());
        assert!(parse_instance_flag("x=openai-chat@tcp").is_err());
    }
}
