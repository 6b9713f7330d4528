//! SCRAM-SHA-256 server side (RFC 5802, RFC 7677), without channel binding (Keel has no TLS).
//!
//! The server keeps a [`Verifier`] (salt, iteration count, StoredKey, ServerKey), never the
//! password: the server binary derives one at start-up from a configured password, or takes
//! one already derived in PostgreSQL's `pg_authid` form
//! (`SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`). Passwords are used as given
//! (no SASLprep), which is exact for ASCII passwords.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use keel_common::{PgError, PgResult, sqlstate};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub const MECHANISM: &str = "SCRAM-SHA-256";
pub const ITERATIONS: u32 = 4096;

type HmacSha256 = Hmac<Sha256>;

/// What the server stores for a password. Its `Debug` form shows no key.
#[derive(Clone)]
pub struct Verifier {
    pub salt: Vec<u8>,
    pub iterations: u32,
    pub stored_key: [u8; 32],
    pub server_key: [u8; 32],
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("iterations", &self.iterations)
            .finish_non_exhaustive()
    }
}

fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    // HMAC accepts keys of any length, so new_from_slice cannot fail.
    let mut m = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    m.update(data);
    m.finalize().into_bytes().into()
}

impl Verifier {
    pub fn new(password: &str, salt: &[u8], iterations: u32) -> Verifier {
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, iterations, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let stored_key: [u8; 32] = Sha256::digest(client_key).into();
        let server_key = hmac(&salted, b"Server Key");
        Verifier {
            salt: salt.to_vec(),
            iterations,
            stored_key,
            server_key,
        }
    }

    /// A verifier for `password` with a random 16-byte salt and PostgreSQL's default 4096
    /// iterations.
    pub fn derive(password: &str) -> Verifier {
        let mut salt = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut salt);
        Verifier::new(password, &salt, ITERATIONS)
    }

    /// A verifier that no password matches (for users without one: they go through the
    /// exchange and fail like a wrong password).
    pub fn unmatchable() -> Verifier {
        Verifier::new(&format!("{:x}", rand::random::<u128>()), &[0; 16], 1)
    }

    /// Parses PostgreSQL's stored form, `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:
    /// <ServerKey>` (salt and keys in base64). `None` when `s` does not have that form.
    pub fn parse(s: &str) -> Option<Verifier> {
        let rest = s.strip_prefix("SCRAM-SHA-256$")?;
        let (iter_salt, keys) = rest.split_once('$')?;
        let (iterations, salt) = iter_salt.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        let iterations: u32 = iterations.parse().ok().filter(|&i| i > 0)?;
        let salt = B64.decode(salt).ok().filter(|s| !s.is_empty())?;
        let stored_key = B64.decode(stored).ok()?.try_into().ok()?;
        let server_key = B64.decode(server).ok()?.try_into().ok()?;
        Some(Verifier {
            salt,
            iterations,
            stored_key,
            server_key,
        })
    }

    /// What the server keeps for a configured secret: a string in the stored form is taken as
    /// the verifier (as PostgreSQL does for `PASSWORD 'SCRAM-SHA-256$...'`), anything else is
    /// a password and is derived.
    pub fn from_secret(secret: &str) -> Verifier {
        Verifier::parse(secret).unwrap_or_else(|| Verifier::derive(secret))
    }
}

fn malformed(detail: impl Into<String>) -> PgError {
    PgError::fatal(sqlstate::PROTOCOL_VIOLATION, "malformed SCRAM message").with_detail(detail)
}

/// The exchange's state between the server-first and client-final messages.
pub struct Exchange {
    verifier: Arc<Verifier>,
    gs2_header: String,
    client_first_bare: String,
    server_first: String,
    nonce: String,
}

impl Exchange {
    /// Handles client-first-message; returns the state and server-first-message.
    pub fn start(verifier: Arc<Verifier>, client_first: &[u8]) -> PgResult<(Exchange, String)> {
        let msg = std::str::from_utf8(client_first)
            .map_err(|_| malformed("Message is not valid UTF-8."))?;
        // gs2-header: cbind-flag "," [authzid] ","
        let mut parts = msg.splitn(3, ',');
        let cbind = parts.next().unwrap_or("");
        let authzid = parts.next().ok_or_else(|| malformed("Comma expected."))?;
        let bare = parts.next().ok_or_else(|| malformed("Comma expected."))?;
        match cbind {
            "n" | "y" => {}
            c if c.starts_with("p=") => {
                return Err(PgError::fatal(
                    sqlstate::PROTOCOL_VIOLATION,
                    "channel binding is not supported by this server",
                ));
            }
            _ => return Err(malformed("Unexpected channel-binding flag.")),
        }
        if !authzid.is_empty() {
            return Err(PgError::fatal(
                sqlstate::FEATURE_NOT_SUPPORTED,
                "client uses authorization identity, but it is not supported",
            ));
        }
        let gs2_header = format!("{cbind},{authzid},");
        // client-first-message-bare: [reserved-mext ","] username "," nonce ["," extensions]
        let mut client_nonce = None;
        for attr in bare.split(',') {
            if let Some(n) = attr.strip_prefix("r=") {
                client_nonce = Some(n);
            } else if attr.starts_with("m=") {
                return Err(malformed("Unsupported SCRAM extension."));
            }
        }
        let client_nonce = client_nonce.ok_or_else(|| malformed("Could not find nonce."))?;
        if client_nonce.is_empty()
            || !client_nonce
                .bytes()
                .all(|b| (0x21..=0x7e).contains(&b) && b != b',')
        {
            return Err(malformed("Invalid nonce."));
        }
        let mut raw = [0u8; 18];
        rand::thread_rng().fill_bytes(&mut raw);
        let nonce = format!("{client_nonce}{}", B64.encode(raw));
        let server_first = format!(
            "r={nonce},s={},i={}",
            B64.encode(&verifier.salt),
            verifier.iterations
        );
        Ok((
            Exchange {
                verifier,
                gs2_header,
                client_first_bare: bare.to_string(),
                server_first: server_first.clone(),
                nonce,
            },
            server_first,
        ))
    }

    /// Handles client-final-message. `Ok(Some(server_final))` when the proof is right,
    /// `Ok(None)` when the password is wrong.
    pub fn finish(&self, client_final: &[u8]) -> PgResult<Option<String>> {
        let msg = std::str::from_utf8(client_final)
            .map_err(|_| malformed("Message is not valid UTF-8."))?;
        let (without_proof, proof) = msg
            .rsplit_once(",p=")
            .ok_or_else(|| malformed("Could not find proof."))?;
        let mut channel = None;
        let mut nonce = None;
        for attr in without_proof.split(',') {
            if let Some(c) = attr.strip_prefix("c=") {
                channel = Some(c);
            } else if let Some(r) = attr.strip_prefix("r=") {
                nonce = Some(r);
            }
        }
        let channel = channel.ok_or_else(|| malformed("Could not find channel binding."))?;
        if B64.decode(channel).ok().as_deref() != Some(self.gs2_header.as_bytes()) {
            return Err(PgError::fatal(
                sqlstate::PROTOCOL_VIOLATION,
                "SCRAM channel binding check failed",
            ));
        }
        if nonce != Some(self.nonce.as_str()) {
            return Err(malformed("Nonce does not match."));
        }
        let proof = B64
            .decode(proof)
            .map_err(|_| malformed("Malformed proof in client-final-message."))?;
        if proof.len() != 32 {
            return Err(malformed("Malformed proof in client-final-message."));
        }
        let auth_message = format!(
            "{},{},{}",
            self.client_first_bare, self.server_first, without_proof
        );
        let signature = hmac(&self.verifier.stored_key, auth_message.as_bytes());
        let mut client_key = [0u8; 32];
        for i in 0..32 {
            client_key[i] = proof[i] ^ signature[i];
        }
        let computed: [u8; 32] = Sha256::digest(client_key).into();
        // Constant-time comparison: do not leak how many bytes matched.
        let diff = computed
            .iter()
            .zip(self.verifier.stored_key.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        if diff != 0 {
            return Ok(None);
        }
        let server_signature = hmac(&self.verifier.server_key, auth_message.as_bytes());
        Ok(Some(format!("v={}", B64.encode(server_signature))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client side written from RFC 5802 to check the server against.
    fn client_final(
        password: &str,
        client_first_bare: &str,
        server_first: &str,
    ) -> (String, [u8; 32]) {
        let mut salt = None;
        let mut iters = 0;
        let mut nonce = "";
        for a in server_first.split(',') {
            if let Some(s) = a.strip_prefix("s=") {
                salt = Some(B64.decode(s).unwrap());
            } else if let Some(i) = a.strip_prefix("i=") {
                iters = i.parse().unwrap();
            } else if let Some(r) = a.strip_prefix("r=") {
                nonce = r;
            }
        }
        let mut salted = [0u8; 32];
        pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), &salt.unwrap(), iters, &mut salted);
        let client_key = hmac(&salted, b"Client Key");
        let stored: [u8; 32] = Sha256::digest(client_key).into();
        let without_proof = format!("c=biws,r={nonce}");
        let auth = format!("{client_first_bare},{server_first},{without_proof}");
        let sig = hmac(&stored, auth.as_bytes());
        let proof: Vec<u8> = client_key
            .iter()
            .zip(sig.iter())
            .map(|(a, b)| a ^ b)
            .collect();
        let server_sig = hmac(&hmac(&salted, b"Server Key"), auth.as_bytes());
        (
            format!("{without_proof},p={}", B64.encode(proof)),
            server_sig,
        )
    }

    #[test]
    fn right_password_verifies_and_server_signature_matches() {
        let v = Arc::new(Verifier::derive("sekrit"));
        let (ex, sf) = Exchange::start(v, b"n,,n=,r=abcdefgh").unwrap();
        let (cf, server_sig) = client_final("sekrit", "n=,r=abcdefgh", &sf);
        let v = ex.finish(cf.as_bytes()).unwrap().unwrap();
        assert_eq!(v, format!("v={}", B64.encode(server_sig)));
    }

    #[test]
    fn wrong_password_is_rejected() {
        let (ex, sf) =
            Exchange::start(Arc::new(Verifier::derive("sekrit")), b"n,,n=,r=abcdefgh").unwrap();
        let (cf, _) = client_final("wrong", "n=,r=abcdefgh", &sf);
        assert!(ex.finish(cf.as_bytes()).unwrap().is_none());
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        let v = Arc::new(Verifier::derive("x"));
        assert!(Exchange::start(v.clone(), b"garbage").is_err());
        assert!(Exchange::start(v.clone(), b"p=tls-server-end-point,,n=,r=a").is_err());
        let (ex, _) = Exchange::start(v, b"n,,n=,r=abc").unwrap();
        assert!(ex.finish(b"c=biws,r=abc,p=AAAA").is_err());
        assert!(ex.finish(b"\xff\xfe").is_err());
        assert!(ex.finish(b"no proof here").is_err());
    }

    #[test]
    fn stored_form_round_trips_and_authenticates() {
        let v = Verifier::new("pw", b"0123456789abcdef", 4096);
        let stored = format!(
            "SCRAM-SHA-256${}:{}${}:{}",
            v.iterations,
            B64.encode(&v.salt),
            B64.encode(v.stored_key),
            B64.encode(v.server_key)
        );
        let parsed = Verifier::from_secret(&stored);
        assert_eq!(parsed.salt, v.salt);
        assert_eq!(parsed.stored_key, v.stored_key);
        assert_eq!(parsed.server_key, v.server_key);
        let (ex, sf) = Exchange::start(Arc::new(parsed), b"n,,n=,r=nonce").unwrap();
        let (cf, _) = client_final("pw", "n=,r=nonce", &sf);
        assert!(ex.finish(cf.as_bytes()).unwrap().is_some());
        // Not the stored form: a password like any other.
        for s in [
            "SCRAM-SHA-256$x:AA==$AA==:AA==",
            "SCRAM-SHA-256$4096:AA==$AA==",
            "pw",
        ] {
            assert!(Verifier::parse(s).is_none(), "{s}");
        }
        assert!(!format!("{parsed:?}", parsed = Verifier::derive("pw")).contains("key"));
    }
}
