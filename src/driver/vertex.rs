//! Vertex AI's access tokens, for an attempt about to be sent: the configured token, or one
//! minted from a service account's key (src/vertex.rs builds the JWT and reads the answer; the
//! host signs it with WebCrypto and this sends it).
//!
//! Tokens are cached per isolate, one per service account, and minted again before they expire
//! (`Token::fresh`), never once per call. Attempts that find no fresh token while one is being
//! minted wait for that mint (a [`Flight`]) instead of starting their own. A mint runs inside
//! the attempt that started it, under its AbortSignal, so it is bounded by that attempt's limits
//! and the call's deadline; if that attempt ends first, the mint is dropped and a waiting
//! attempt starts the next one.

use std::cell::{Cell, RefCell};
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{AbortSignal, RequestInit, Response};

use super::attempt::js_error_message;
use super::host::{self, Awaited};
use crate::outcome::Failure;
use crate::secret::Secret;
use crate::vertex::{self, ServiceAccount, Token, VertexAuth};

/// One mint in progress, which other attempts may wait for.
#[derive(Default)]
struct Flight {
    /// Set when the mint ends; `None` while it runs.
    outcome: RefCell<Option<Result<Token, Failure>>>,
    /// The attempt that minted was dropped first: the waiters mint themselves.
    abandoned: Cell<bool>,
    waiters: RefCell<Vec<Waker>>,
}

impl Flight {
    fn wake_all(&self) {
        self.waiters.take().into_iter().for_each(Waker::wake);
    }
}

/// A service account's cached token and the mint in progress, if any.
struct Account {
    key: ServiceAccount,
    token: Option<Token>,
    flight: Option<Rc<Flight>>,
}

thread_local! {
    static ACCOUNTS: RefCell<Vec<Account>> = const { RefCell::new(Vec::new()) };
}

fn with_account<R>(key: &ServiceAccount, f: impl FnOnce(&mut Account) -> R) -> R {
    ACCOUNTS.with_borrow_mut(|accounts| {
        let at = match accounts.iter().position(|a| a.key == *key) {
            Some(at) => at,
            None => {
                accounts.push(Account { key: key.clone(), token: None, flight: None });
                accounts.len() - 1
            }
        };
        f(&mut accounts[at])
    })
}

/// What an attempt does for its token.
enum Step {
    Ready(Secret),
    Wait(Rc<Flight>),
    Mint(Rc<Flight>),
}

/// The token to send now: the configured one, a cached one still fresh, or a new one. Boxed, so
/// that an attempt's future holds a pointer and not the mint's states (a target without Vertex
/// pays for none of them).
pub fn bearer<'a>(
    auth: &'a VertexAuth,
    signal: &'a AbortSignal,
) -> Pin<Box<dyn Future<Output = Result<Secret, Failure>> + 'a>> {
    Box::pin(async move {
        match auth {
            VertexAuth::AccessToken(token) => Ok(token.clone()),
            VertexAuth::ServiceAccount(key) => minted(key, signal).await,
        }
    })
}

/// A cached token of `key`'s, or the one a mint in flight brings, or a new one.
async fn minted(key: &ServiceAccount, signal: &AbortSignal) -> Result<Secret, Failure> {
    loop {
        let now = js_sys::Date::now() as u64;
        let step = with_account(key, |account| match (&account.token, &account.flight) {
            (Some(token), _) if token.fresh(now) => Step::Ready(token.value.clone()),
            (_, Some(flight)) => Step::Wait(flight.clone()),
            (_, None) => {
                let flight = Rc::new(Flight::default());
                account.flight = Some(flight.clone());
                Step::Mint(flight)
            }
        });
        match step {
            Step::Ready(token) => return Ok(token),
            Step::Wait(flight) => {
                let outcome = poll_fn(|cx| match (&*flight.outcome.borrow(), flight.abandoned.get()) {
                    (Some(outcome), _) => Poll::Ready(Some(outcome.clone())),
                    (None, true) => Poll::Ready(None),
                    (None, false) => {
                        flight.waiters.borrow_mut().push(cx.waker().clone());
                        Poll::Pending
                    }
                })
                .await;
                if let Some(outcome) = outcome {
                    return outcome.map(|token| token.value);
                }
            }
            Step::Mint(flight) => {
                let landing = Landing { key, flight, landed: false };
                let outcome = mint(key, signal).await;
                landing.land(&outcome);
                return outcome.map(|token| token.value);
            }
        }
    }
}

/// Forgets `token` (Vertex refused it: expired early, or revoked), so the next [`bearer`]
/// mints another; a token another attempt has minted since is kept.
pub fn forget(auth: &VertexAuth, token: &Secret) {
    if let VertexAuth::ServiceAccount(key) = auth {
        with_account(key, |account| {
            if account.token.as_ref().is_some_and(|t| t.value == *token) {
                account.token = None;
            }
        });
    }
}

/// Whether a refused token may be replaced by a new one: only a minted one can.
pub fn mints(auth: &VertexAuth) -> bool {
    matches!(auth, VertexAuth::ServiceAccount(_))
}

/// Ends a [`Flight`]: with the mint's outcome, or, dropped before it (its attempt ended),
/// abandoned, so that a waiter mints instead.
struct Landing<'a> {
    key: &'a ServiceAccount,
    flight: Rc<Flight>,
    landed: bool,
}

impl Landing<'_> {
    fn land(mut self, outcome: &Result<Token, Failure>) {
        self.landed = true;
        with_account(self.key, |account| {
            if let Ok(token) = outcome {
                account.token = Some(token.clone());
            }
            account.flight = None;
        });
        *self.flight.outcome.borrow_mut() = Some(outcome.clone());
        self.flight.wake_all();
    }
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        if self.landed {
            return;
        }
        with_account(self.key, |account| {
            if account.flight.as_ref().is_some_and(|f| Rc::ptr_eq(f, &self.flight)) {
                account.flight = None;
            }
        });
        self.flight.abandoned.set(true);
        self.flight.wake_all();
    }
}

/// Mints a token: the JWT signed by the host (WebCrypto's RSASSA-PKCS1-v1_5 with SHA-256), then
/// exchanged at the account's token endpoint, under the attempt's signal.
async fn mint(key: &ServiceAccount, signal: &AbortSignal) -> Result<Token, Failure> {
    let input = key.jwt_signing_input(js_sys::Date::now() as u64);
    let signature = Awaited::new(&host::sign_rs256(key.private_key_pkcs8(), input.as_bytes())).await.map_err(|e| {
        // A DOMException's name (DataError...) says what WebCrypto refused; nothing of the key.
        let name = Reflect::get(&e, &"name".into()).ok().and_then(|n| n.as_string()).unwrap_or_default();
        Failure::Protocol {
            message: format!(
                "serviceAccount.private_key could not sign the token's JWT (WebCrypto: {name}); give the RSA key of the service account's JSON key"
            ),
        }
    })?;
    let body = vertex::token_request_body(&input, &Uint8Array::new(&signature).to_vec());
    let headers = js_sys::Object::new();
    let _ = Reflect::set(&headers, &"content-type".into(), &"application/x-www-form-urlencoded".into());
    let init = RequestInit::new();
    init.set_method("POST");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&body));
    init.set_signal(Some(signal));
    let unreachable = |e: JsValue| Failure::Transport {
        message: format!("the token endpoint of serviceAccount could not be reached: {}", js_error_message(&e)),
    };
    let promise = host::fetch(&key.token_uri, &init).map_err(unreachable)?;
    let response: Response = Awaited::new(&promise).await.map_err(unreachable)?.unchecked_into();
    let read = response.array_buffer().map_err(unreachable)?;
    let bytes = Uint8Array::new(&Awaited::new(&read).await.map_err(unreachable)?).to_vec();
    vertex::read_token_answer(response.status(), &bytes, js_sys::Date::now() as u64)
}
