//! The call's one logical budget.
//!
//! A deadline is set once, when the call starts, as an absolute time; every attempt, backoff
//! wait and body read is measured against it. Nothing resets it: a retry or a fallback member
//! gets what is left, never a fresh allowance (the GetBeta and Switchyard failures were budgets
//! applied per leg).

/// An absolute deadline on the call's clock, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// The budget as configured, for messages.
    pub limit_ms: Option<u64>,
    /// When it runs out, on the same clock as `now`.
    pub expires_at: Option<u64>,
}

impl Budget {
    pub fn starting(now: u64, limit_ms: Option<u64>) -> Budget {
        Budget { limit_ms, expires_at: limit_ms.map(|ms| now.saturating_add(ms)) }
    }

    /// Milliseconds left, `None` when there is no deadline.
    pub fn remaining(&self, now: u64) -> Option<u64> {
        self.expires_at.map(|at| at.saturating_sub(now))
    }

    pub fn expired(&self, now: u64) -> bool {
        self.expires_at.is_some_and(|at| now >= at)
    }

    /// Would a wait of `delay_ms` starting now end strictly before the deadline?
    pub fn fits(&self, now: u64, delay_ms: u64) -> bool {
        self.expires_at.is_none_or(|at| now.saturating_add(delay_ms) < at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_seconds_spent_of_ten_leaves_four() {
        let b = Budget::starting(1_000, Some(10_000));
        assert_eq!(b.remaining(7_000), Some(4_000));
        assert!(!b.expired(10_999));
        assert!(b.expired(11_000));
        assert!(b.fits(7_000, 3_999));
        assert!(!b.fits(7_000, 4_000));
    }

    #[test]
    fn no_deadline_fits_everything() {
        let b = Budget::starting(5, None);
        assert_eq!(b.remaining(u64::MAX), None);
        assert!(!b.expired(u64::MAX));
        assert!(b.fits(0, u64::MAX));
    }
}
