//! "Exactly one of" objects: a case-file object that carries exactly one key of a closed set
//! (a step's action, a check's kind, a concurrent step's request or stream).
//!
//! [`exactly_one_of!`] declares, from one list, both forms of such an object: the raw serde
//! form (a struct with one optional field per alternative, which is what the published case
//! schema describes and what case files are read through) and the closed enum of the
//! alternatives that the rest of the harness matches on. The list is the only place a new
//! alternative is named: the raw field, the enum variant, the key name and the schema's
//! `oneOf` all come from it.

use serde_json::{Map, Value};

/// An object that does not carry exactly one key of its closed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} has exactly one {key}, found {found:?}")]
pub struct NotExactlyOne {
    /// What the object is (`a step`, `a check`, …).
    pub what: &'static str,
    /// What its one key is called (`action`, `check key`, …).
    pub key: &'static str,
    /// The keys of the set that the object carries, in the set's order.
    pub found: Vec<&'static str>,
}

/// The keys of `names` that `object` carries, in the order of `names`.
pub(crate) fn present_keys(
    object: &Map<String, Value>,
    names: &[&'static str],
) -> Vec<&'static str> {
    names
        .iter()
        .copied()
        .filter(|name| object.contains_key(*name))
        .collect()
}

/// Declares an "exactly one of" object (see the module documentation).
///
/// ```text
/// exactly_one_of! {
///     what = "a check", key = "check key";
///     /// Doc of the raw form (the schema's description).
///     #[derive(...)] #[serde(deny_unknown_fields)] #[schemars(rename = "Check")]
///     raw RawCheck { /* fields before the alternatives */ }
///     /// Doc of the enum.
///     #[derive(...)]
///     one_of CheckKind {
///         /// Doc of the alternative (the schema's and the variant's).
///         status(u16) => Status,
///         ...
///     }
///     then { /* fields after the alternatives */ }
/// }
/// ```
macro_rules! exactly_one_of {
    (
        what = $what:literal, key = $key:literal;
        $(#[$raw_meta:meta])*
        raw $raw:ident {
            $( $(#[$pre_meta:meta])* $pre:ident : $pre_ty:ty, )*
        }
        $(#[$enum_meta:meta])*
        one_of $enum:ident {
            $( $(#[doc = $doc:literal])* $field:ident ( $ty:ty ) => $variant:ident, )+
        }
        then {
            $( $(#[$post_meta:meta])* $post:ident : $post_ty:ty, )*
        }
    ) => {
        $(#[$raw_meta])*
        pub(crate) struct $raw {
            $( $(#[$pre_meta])* pub(crate) $pre: $pre_ty, )*
            $(
                $(#[doc = $doc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub(crate) $field: Option<$ty>,
            )+
            $( $(#[$post_meta])* pub(crate) $post: $post_ty, )*
        }

        $(#[$enum_meta])*
        pub enum $enum {
            $( $(#[doc = $doc])* $variant($ty), )+
        }

        impl $enum {
            /// Every alternative's key in a case file, in the case format's order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($field)),+];

            /// This alternative's key in a case file.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Self::$variant(_) => stringify!($field), )+
                }
            }

            /// The one key of this set that a case-file object carries, or what is wrong.
            pub(crate) fn key_in(
                object: &serde_json::Map<String, serde_json::Value>,
            ) -> Result<&'static str, $crate::case::exactly_one::NotExactlyOne> {
                let found = $crate::case::exactly_one::present_keys(object, Self::NAMES);
                match found.as_slice() {
                    [one] => Ok(one),
                    _ => Err($crate::case::exactly_one::NotExactlyOne {
                        what: $what,
                        key: $key,
                        found,
                    }),
                }
            }
        }

        impl $raw {
            /// Takes the one alternative out of the raw form, or says what is wrong.
            fn take_one(&mut self) -> Result<$enum, $crate::case::exactly_one::NotExactlyOne> {
                let mut found = Vec::new();
                $( if let Some(value) = self.$field.take() { found.push($enum::$variant(value)); } )+
                if found.len() == 1 {
                    Ok(found.remove(0))
                } else {
                    Err($crate::case::exactly_one::NotExactlyOne {
                        what: $what,
                        key: $key,
                        found: found.iter().map($enum::name).collect(),
                    })
                }
            }

            /// The raw form of the common fields and one alternative.
            #[allow(clippy::too_many_arguments)]
            fn with_one($( $pre: $pre_ty, )* one: $enum, $( $post: $post_ty, )*) -> Self {
                let mut raw = Self {
                    $( $pre, )*
                    $( $field: None, )+
                    $( $post, )*
                };
                match one {
                    $( $enum::$variant(value) => raw.$field = Some(value), )+
                }
                raw
            }
        }
    };
}

pub(crate) use exactly_one_of;

/// Implements `JsonSchema` for a public type by the schema of its raw serde form (the form
/// it is read and written through), under the raw form's schema name.
macro_rules! schema_of_raw_form {
    ($public:ty => $raw:ty) => {
        impl schemars::JsonSchema for $public {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                <$raw as schemars::JsonSchema>::schema_name()
            }

            fn schema_id() -> std::borrow::Cow<'static, str> {
                <$raw as schemars::JsonSchema>::schema_id()
            }

            fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
                <$raw as schemars::JsonSchema>::json_schema(generator)
            }
        }
    };
}

pub(crate) use schema_of_raw_form;
