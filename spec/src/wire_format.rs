//! The wire formats a model provider speaks: one vocabulary for the harness (role bindings),
//! the fake providers (which format an instance serves) and the reference runtime (which
//! format a configured provider is called in). Written in configuration as `openai-chat`,
//! `openai-responses`, `anthropic-messages`, `async-media`.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The wire format a provider (or a fake instance) speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "ProviderKind")]
pub enum WireFormat {
    /// OpenAI Chat Completions (streaming): `POST <base>/v1/chat/completions`.
    OpenaiChat,
    /// OpenAI Responses (streaming): `POST <base>/v1/responses`.
    OpenaiResponses,
    /// Anthropic Messages (streaming): `POST <base>/v1/messages`.
    AnthropicMessages,
    /// fal-style asynchronous media queue: `POST <base>/<model-id>`, then
    /// `<base>/requests/<id>/…`.
    AsyncMedia,
}

impl WireFormat {
    /// Every format, in this order.
    pub const ALL: [WireFormat; 4] = [
        WireFormat::OpenaiChat,
        WireFormat::OpenaiResponses,
        WireFormat::AnthropicMessages,
        WireFormat::AsyncMedia,
    ];

    /// The format's name as written in configuration (`openai-chat`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            WireFormat::OpenaiChat => "openai-chat",
            WireFormat::OpenaiResponses => "openai-responses",
            WireFormat::AnthropicMessages => "anthropic-messages",
            WireFormat::AsyncMedia => "async-media",
        }
    }

    /// Parses a format name as written in configuration.
    pub fn parse(name: &str) -> Option<WireFormat> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }

    /// The requests a host makes to a provider of this format, relative to its base URL (the
    /// fake providers also serve the text formats' paths without the `/v1` segment).
    pub fn paths(self) -> &'static [&'static str] {
        match self {
            WireFormat::OpenaiChat => &["POST /v1/chat/completions"],
            WireFormat::OpenaiResponses => &["POST /v1/responses"],
            WireFormat::AnthropicMessages => &["POST /v1/messages"],
            WireFormat::AsyncMedia => &[
                "POST /<model-id>",
                "GET /requests/<id>/status",
                "GET /requests/<id>",
                "PUT /requests/<id>/cancel",
            ],
        }
    }

    /// Whether the format streams text (every format but the asynchronous media queue).
    pub fn streams_text(self) -> bool {
        match self {
            WireFormat::OpenaiChat
            | WireFormat::OpenaiResponses
            | WireFormat::AnthropicMessages => true,
            WireFormat::AsyncMedia => false,
        }
    }
}

impl fmt::Display for WireFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
