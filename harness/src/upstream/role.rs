//! The provider roles cases name: which part a fake provider plays in a case's script.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A provider role (`text-primary`, `text-secondary`, `media`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// The text model a case's AI calls go to first.
    TextPrimary,
    /// A second text model (fallback and routing cases).
    TextSecondary,
    /// A media-capable model (asynchronous, or with image, audio or video output).
    Media,
}

impl Role {
    /// Every role, in this order.
    pub const ALL: [Role; 3] = [Role::TextPrimary, Role::TextSecondary, Role::Media];

    /// The role's name as cases, flags and providers files write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::TextPrimary => "text-primary",
            Role::TextSecondary => "text-secondary",
            Role::Media => "media",
        }
    }

    /// Parses a role name.
    pub fn parse(name: &str) -> Option<Role> {
        Self::ALL.into_iter().find(|role| role.as_str() == name)
    }

    /// Every role's name, in [`Role::ALL`]'s order.
    pub fn names() -> [&'static str; 3] {
        Self::ALL.map(Role::as_str)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
