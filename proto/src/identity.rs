//! Identity strings and native session ids.
//!
//! An identity is 1–128 ASCII characters from `A–Z a–z 0–9 - _ . : /`, matched
//! exactly and case-sensitively. A Claude native session id is additionally a
//! non-nil, hyphenated UUID; other identity kinds are never treated as Claude.

use serde::{Deserialize, Serialize};
use std::fmt;
use uuid::Uuid;

/// Longest identity string accepted.
pub const MAX_IDENTITY_LEN: usize = 128;

/// Session kind of a Claude Code native session.
pub const NATIVE_SESSION_KIND: &str = "claude-native-session";

/// A validated identity string.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Identity(String);

/// Why a string is not an identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityError(&'static str);

impl fmt::Display for IdentityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for IdentityError {}

impl Identity {
    /// Validates `text` as an identity string.
    pub fn parse(text: &str) -> Result<Identity, IdentityError> {
        if text.is_empty() {
            return Err(IdentityError("identity is empty"));
        }
        if text.len() > MAX_IDENTITY_LEN {
            return Err(IdentityError("identity is longer than 128 characters"));
        }
        if !text.bytes().all(is_identity_byte) {
            return Err(IdentityError("identity may only contain A-Z a-z 0-9 - _ . : /"));
        }
        Ok(Identity(text.to_owned()))
    }

    /// The identity as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_identity_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':' | b'/')
}

impl TryFrom<String> for Identity {
    type Error = IdentityError;
    fn try_from(text: String) -> Result<Self, Self::Error> {
        Identity::parse(&text)
    }
}

impl From<Identity> for String {
    fn from(identity: Identity) -> String {
        identity.0
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses a non-nil UUID in its hyphenated form (any hex case), returning it.
pub fn parse_hyphenated_uuid(text: &str) -> Option<Uuid> {
    // `Uuid::parse_str` also takes simple, braced and URN forms; the contract
    // names only the hyphenated one, so check the shape first.
    if text.len() != 36 {
        return None;
    }
    let hyphens_in_place = text.bytes().enumerate().all(|(i, b)| matches!(i, 8 | 13 | 18 | 23) == (b == b'-'));
    if !hyphens_in_place {
        return None;
    }
    Uuid::parse_str(text).ok().filter(|id| !id.is_nil())
}

/// Validates `id` as an identity of session kind `kind`.
///
/// For the native Claude kind the id must be a non-nil hyphenated UUID in
/// lowercase, the form Claude Code writes; other kinds take any identity.
pub fn validate_session(kind: &Identity, id: &Identity) -> Result<(), IdentityError> {
    if kind.as_str() == NATIVE_SESSION_KIND {
        let parsed = parse_hyphenated_uuid(id.as_str())
            .ok_or(IdentityError("native session id must be a non-nil hyphenated UUID"))?;
        if parsed.hyphenated().to_string() != id.as_str() {
            return Err(IdentityError("native session id must be lowercase"));
        }
    }
    Ok(())
}

/// A session id as a user may type it, in the form a native Claude
/// session is stored in: a hyphenated UUID in any case becomes lowercase
/// (UUIDs do not depend on case); anything else stays as given.
pub fn session_as_stored(kind: &str, id: &str) -> String {
    match parse_hyphenated_uuid(id) {
        Some(uuid) if kind == NATIVE_SESSION_KIND => uuid.hyphenated().to_string(),
        _ => id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_rules() {
        assert!(Identity::parse("steering-block").is_ok());
        assert!(Identity::parse("a:b/c.d_e-f").is_ok());
        assert!(Identity::parse("").is_err());
        assert!(Identity::parse("has space").is_err());
        assert!(Identity::parse("é").is_err());
        assert!(Identity::parse(&"x".repeat(128)).is_ok());
        assert!(Identity::parse(&"x".repeat(129)).is_err());
    }

    #[test]
    fn uuid_rules() {
        assert!(parse_hyphenated_uuid("00000000-0000-0000-0000-000000000000").is_none());
        assert!(parse_hyphenated_uuid("a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5").is_none());
        assert!(parse_hyphenated_uuid("{a0b1c2d3-e4f5-a6b7-c8d9-e0f1a2b3c4d5}").is_none());
        assert!(parse_hyphenated_uuid("a0b1c2d3-e4f5-a6b7-c8d9-e0f1a2b3c4d5").is_some());
        let native = Identity::parse(NATIVE_SESSION_KIND).unwrap_or_else(|e| panic!("{e}"));
        let upper = Identity::parse("A0B1C2D3-E4F5-A6B7-C8D9-E0F1A2B3C4D5").unwrap_or_else(|e| panic!("{e}"));
        assert!(validate_session(&native, &upper).is_err());
        let other = Identity::parse("codex-session").unwrap_or_else(|e| panic!("{e}"));
        assert!(validate_session(&other, &upper).is_ok());
        let asked = session_as_stored(NATIVE_SESSION_KIND, upper.as_str());
        assert_eq!(asked, "a0b1c2d3-e4f5-a6b7-c8d9-e0f1a2b3c4d5", "a query matches whatever case it is typed in");
        assert_eq!(session_as_stored("codex-session", upper.as_str()), upper.as_str(), "other kinds: as given");
    }
}
