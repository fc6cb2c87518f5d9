//! The gate: the one rule that decides whether a failed attempt may be tried again.
//!
//! Retry loops and fallback chains both ask here, so the rule exists once (BAML #5085's
//! `_may_try_again`). Some failures are never tried again by anyone: the caller's cancellation,
//! the call's own deadline (that budget is gone), and anything after the first visible content
//! of a stream has reached the caller (a replay would show the reader a second, different
//! answer). Everything else depends on the move:
//!
//! - **retry** (the same member again) only what can succeed on a second try: transport
//!   failures, member timeouts, 408, 409, 429 and 5xx, never another 4xx (it fails the same way
//!   every time and may be billed each time). A `retryOn` list replaces that default; an
//!   `x-should-retry` response header overrides the status rule.
//! - **fail over** (the next member) on any failure, unless `fallbackOn` narrows it.
//!
//! A member whose `headers` or `first_token` limit expired is silent right now, and a retry
//! would wait that whole limit again. So a retry inside a fallback that has another member
//! ready leaves a silent member to that member by default ([`Move::RetryBeforeFailover`]): with
//! 10 s limits and three attempts, the backup answers after 10 s, not 30 s. A bare retry, with
//! nowhere else to go, still retries it (BAML #5085), and a `retryOn` naming `"timeout"` always
//! does.
//!
//! A provider error's class (src/outcome.rs, read by the formats) sharpens both moves, because
//! its status alone says the wrong thing:
//!
//! - `context_length` (a 400), `quota` (a 429) and `auth` (401/403) are never retried by
//!   default: the same request to the same member fails the same way (a wait refills no quota),
//!   and `x-should-retry` does not change that. They fail over: another member may have a bigger
//!   window, another account or key.
//! - `content_filter` (a 400) is final by default: the provider's reason reaches the caller, and
//!   a policy rejection is not routed to a less strict provider unless `fallbackOn` names
//!   `"content_filter"`.
//! - `overloaded` and `rate_limit` keep their statuses' defaults (retried, fail over).
//!
//! A stream that broke after its start may be **resumed** on a later member when its fallback
//! has `afterStart` (src/engine.rs): that is a failover after the start, so it follows the
//! failover rule as if nothing had been shown ([`allows_resume`]).
//!
//! In a `retryOn` list, only the class's own name retries `context_length`, `quota`, `auth` or
//! `content_filter` (a `429` or `"4xx"` there means "a status worth waiting for", which these
//! are not); in `fallbackOn`, only its own name routes around `content_filter`. Every other
//! failure matches a list by its class name or, as before, by its status, kind or range.

use crate::outcome::{Failure, FailureClass, Limit};
use crate::policy::Conditions;

/// What the asking strategy would do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Retry,
    /// A retry where an enclosing fallback would otherwise move to another member at once.
    RetryBeforeFailover,
    Failover,
}

/// May `mv` follow `failure`? `committed` is true once visible content reached the caller.
pub fn allows(mv: Move, failure: &Failure, committed: bool, conditions: Option<&Conditions>) -> bool {
    if committed || is_final(failure) {
        return false;
    }
    let class = failure.class();
    match mv {
        Move::Retry | Move::RetryBeforeFailover => {
            if class.is_some_and(only_named_retries) {
                return conditions.is_some_and(|c| names(c, class));
            }
            if let Failure::Http { should_retry: Some(said), .. } = failure {
                return *said;
            }
            match conditions {
                Some(c) => names(c, class) || matches(c, failure),
                None => retried_by_default(failure) && !(mv == Move::RetryBeforeFailover && is_silence(failure)),
            }
        }
        Move::Failover if class == Some(FailureClass::ContentFilter) => conditions.is_some_and(|c| names(c, class)),
        Move::Failover => conditions.is_none_or(|c| names(c, class) || matches(c, failure)),
    }
}

/// May a stream that broke after its start with `failure` be resumed by a fallback with these
/// `fallbackOn` conditions? Exactly when that fallback would fail over before the start.
pub fn allows_resume(failure: &Failure, fallback_on: Option<&Conditions>) -> bool {
    allows(Move::Failover, failure, false, fallback_on)
}

/// Classes a retry cannot help, so only a `retryOn` that names them retries them.
fn only_named_retries(class: FailureClass) -> bool {
    matches!(
        class,
        FailureClass::ContextLength | FailureClass::Quota | FailureClass::ContentFilter | FailureClass::Auth
    )
}

fn names(c: &Conditions, class: Option<FailureClass>) -> bool {
    class.is_some_and(|class| c.classes.contains(&class))
}

/// Failures that end the call whatever the strategy says.
pub fn is_final(failure: &Failure) -> bool {
    matches!(failure, Failure::Cancelled | Failure::Timeout { limit: Limit::Deadline, .. })
}

/// The member said nothing in time: no response headers, or no first token of a stream.
fn is_silence(failure: &Failure) -> bool {
    matches!(failure, Failure::Timeout { limit: Limit::Headers | Limit::FirstToken, .. })
}

/// An HTTP 4xx the same request would meet again: any but 408, 409 and 429, which the gate
/// retries. (A continuation refused this way was refused for its prefill.)
pub fn is_request_error(failure: &Failure) -> bool {
    matches!(failure, Failure::Http { status: 400..=499, .. }) && !retried_by_default(failure)
}

fn retried_by_default(failure: &Failure) -> bool {
    match failure {
        Failure::Transport { .. } | Failure::Timeout { .. } => true,
        Failure::Http { status, .. } => matches!(status, 408 | 409 | 429 | 500..=599),
        Failure::Protocol { .. } | Failure::Cancelled => false,
    }
}

fn matches(c: &Conditions, failure: &Failure) -> bool {
    match failure {
        Failure::Transport { .. } => c.transport,
        Failure::Timeout { .. } => c.timeout,
        Failure::Http { status, .. } => c.matches_status(*status),
        Failure::Protocol { .. } => c.protocol,
        Failure::Cancelled => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: u16) -> Failure {
        classed(status, None)
    }

    fn classed(status: u16, class: Option<FailureClass>) -> Failure {
        Failure::Http {
            status,
            message: String::new(),
            code: None,
            class,
            retry_after_ms: None,
            should_retry: None,
            in_stream: false,
            content_filter: None,
        }
    }

    #[test]
    fn default_retry_set_is_availability_only() {
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert!(allows(Move::Retry, &http(s), false, None), "{s} should be retried");
        }
        for s in [400, 401, 403, 404, 413, 422] {
            assert!(!allows(Move::Retry, &http(s), false, None), "{s} must not be retried");
            assert!(allows(Move::Failover, &http(s), false, None), "{s} still fails over");
        }
        assert!(allows(Move::Retry, &Failure::Transport { message: "refused".into() }, false, None));
        assert!(allows(Move::Retry, &Failure::Timeout { limit: Limit::FirstToken, limit_ms: 1000 }, false, None));
        assert!(!allows(Move::Retry, &Failure::Protocol { message: "bad json".into() }, false, None));
    }

    #[test]
    fn a_silent_member_is_left_to_the_next_member_unless_retry_on_names_timeouts() {
        let headers = Failure::Timeout { limit: Limit::Headers, limit_ms: 10_000 };
        let first_token = Failure::Timeout { limit: Limit::FirstToken, limit_ms: 10_000 };
        let total = Failure::Timeout { limit: Limit::Total, limit_ms: 10_000 };
        let timeouts = Conditions { timeout: true, ..Default::default() };
        // (failure, retryOn, bare retry allowed, retry before a failover allowed)
        let cases = [
            (&headers, None, true, false),
            (&first_token, None, true, false),
            (&total, None, true, true),
            (&http(503), None, true, true),
            (&headers, Some(&timeouts), true, true),
            (&first_token, Some(&timeouts), true, true),
        ];
        for (failure, retry_on, bare, before_failover) in cases {
            assert_eq!(allows(Move::Retry, failure, false, retry_on), bare, "{failure:?} {retry_on:?}");
            let got = allows(Move::RetryBeforeFailover, failure, false, retry_on);
            assert_eq!(got, before_failover, "{failure:?} {retry_on:?}");
        }
    }

    #[test]
    fn final_failures_are_never_tried_again() {
        let deadline = Failure::Timeout { limit: Limit::Deadline, limit_ms: 1500 };
        for f in [Failure::Cancelled, deadline] {
            for mv in [Move::Retry, Move::Failover] {
                assert!(!allows(mv, &f, false, None));
                assert!(!allows(
                    mv,
                    &f,
                    false,
                    Some(&Conditions { timeout: true, transport: true, ..Default::default() })
                ));
            }
        }
    }

    #[test]
    fn nothing_is_tried_again_after_the_commit_point() {
        for mv in [Move::Retry, Move::Failover] {
            assert!(!allows(mv, &http(503), true, None));
            assert!(!allows(mv, &Failure::Timeout { limit: Limit::Idle, limit_ms: 500 }, true, None));
        }
    }

    #[test]
    fn x_should_retry_overrides_the_status_rule_for_retries_only() {
        let mut f = http(400);
        if let Failure::Http { should_retry, .. } = &mut f {
            *should_retry = Some(true);
        }
        assert!(allows(Move::Retry, &f, false, None));
        let mut g = http(503);
        if let Failure::Http { should_retry, .. } = &mut g {
            *should_retry = Some(false);
        }
        assert!(!allows(Move::Retry, &g, false, None));
        assert!(allows(Move::Failover, &g, false, None));
    }

    #[test]
    fn conditions_replace_the_defaults() {
        let only = Conditions { transport: true, statuses: vec![429, 503], ..Default::default() };
        assert!(allows(Move::Retry, &http(503), false, Some(&only)));
        assert!(!allows(Move::Retry, &http(502), false, Some(&only)));
        assert!(!allows(Move::Retry, &Failure::Timeout { limit: Limit::Total, limit_ms: 1 }, false, Some(&only)));
        assert!(!allows(Move::Failover, &http(400), false, Some(&only)));
        let words = Conditions { timeout: true, any_5xx: true, ..Default::default() };
        assert!(allows(Move::Failover, &http(599), false, Some(&words)));
        assert!(allows(Move::Failover, &Failure::Timeout { limit: Limit::Headers, limit_ms: 1 }, false, Some(&words)));
    }

    #[test]
    fn classes_steer_both_moves_by_default() {
        use FailureClass::*;
        // (class, its usual status, retried, fails over)
        let cases = [
            (ContextLength, 400, false, true),
            (ContentFilter, 400, false, false),
            (Quota, 429, false, true),
            (Auth, 401, false, true),
            (Overloaded, 529, true, true),
            (RateLimit, 429, true, true),
        ];
        for (class, status, retried, fails_over) in cases {
            let f = classed(status, Some(class));
            assert_eq!(allows(Move::Retry, &f, false, None), retried, "{class:?} retry");
            assert_eq!(allows(Move::Failover, &f, false, None), fails_over, "{class:?} failover");
            assert!(!allows(Move::Failover, &f, true, None), "{class:?} after the commit point");
        }
    }

    #[test]
    fn only_its_name_retries_a_class_that_waiting_cannot_help() {
        use FailureClass::*;
        let by_status = Conditions { any_4xx: true, statuses: vec![400, 401, 429], ..Default::default() };
        for (class, status) in [(ContextLength, 400), (Quota, 429), (Auth, 401), (ContentFilter, 400)] {
            let mut f = classed(status, Some(class));
            assert!(!allows(Move::Retry, &f, false, Some(&by_status)), "{class:?} by status");
            let named = Conditions { classes: vec![class], ..Default::default() };
            assert!(allows(Move::Retry, &f, false, Some(&named)), "{class:?} by name");
            if let Failure::Http { should_retry, .. } = &mut f {
                *should_retry = Some(true);
            }
            assert!(!allows(Move::Retry, &f, false, None), "{class:?}: x-should-retry does not override it");
        }
        // Classes that waiting helps still match their status, and their name.
        let f = classed(429, Some(RateLimit));
        assert!(allows(Move::Retry, &f, false, Some(&by_status)));
        let named = Conditions { classes: vec![Overloaded], ..Default::default() };
        assert!(allows(Move::Retry, &classed(529, Some(Overloaded)), false, Some(&named)));
        assert!(!allows(Move::Retry, &classed(529, None), false, Some(&named)), "an unclassed 529 is not named");
    }

    #[test]
    fn only_its_name_routes_around_a_content_filter() {
        let f = classed(400, Some(FailureClass::ContentFilter));
        let broad = Conditions { any_4xx: true, statuses: vec![400], ..Default::default() };
        assert!(!allows(Move::Failover, &f, false, Some(&broad)));
        let named = Conditions { classes: vec![FailureClass::ContentFilter], ..Default::default() };
        assert!(allows(Move::Failover, &f, false, Some(&named)));
        // A fallbackOn that names a class narrows the rest like any list.
        let quota_only = Conditions { classes: vec![FailureClass::Quota], ..Default::default() };
        assert!(allows(Move::Failover, &classed(429, Some(FailureClass::Quota)), false, Some(&quota_only)));
        assert!(!allows(Move::Failover, &classed(429, Some(FailureClass::RateLimit)), false, Some(&quota_only)));
        assert!(allows(Move::Failover, &classed(400, Some(FailureClass::ContextLength)), false, Some(&broad)));
    }
}
