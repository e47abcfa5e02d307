//! Client-side rate limits for live targets (`--rpm`, `--tpm`), so a long run stays under
//! a provider's quota instead of collecting 429s.
//!
//! Requests per minute are a plain GCRA limiter (`governor`). Tokens per minute are
//! charged in two steps: the request's input size before it is sent (estimated as
//! characters / 4, cheap and close enough for pacing), then the output tokens the
//! response reports, after it arrives (before the trial is handed on, so the next
//! request waits for them).

use std::num::NonZeroU32;
use std::time::Duration;

use async_trait::async_trait;
use governor::{DefaultDirectRateLimiter, Jitter, Quota, RateLimiter};

use super::{Provider, ProviderError, Request, Response, TrialKey};

/// Wraps a provider with request and token rate limits.
pub struct RateLimited {
    inner: std::sync::Arc<dyn Provider>,
    requests: Option<std::sync::Arc<DefaultDirectRateLimiter>>,
    tokens: Option<(std::sync::Arc<DefaultDirectRateLimiter>, u32)>,
}

impl RateLimited {
    /// Limit `inner` to `rpm` requests and `tpm` tokens per minute (`None`: no limit).
    pub fn new(
        inner: std::sync::Arc<dyn Provider>,
        rpm: Option<NonZeroU32>,
        tpm: Option<NonZeroU32>,
    ) -> Self {
        RateLimited {
            inner,
            // Burst 1: `--rpm 120` means one request every 0.5 s from the start, not 120
            // at once and then a pause.
            requests: rpm.map(|n| {
                std::sync::Arc::new(RateLimiter::direct(
                    Quota::per_minute(n).allow_burst(NonZeroU32::MIN),
                ))
            }),
            tokens: tpm.map(|n| {
                (
                    std::sync::Arc::new(RateLimiter::direct(Quota::per_minute(n))),
                    n.get(),
                )
            }),
        }
    }

    /// Limit `inner` with the same budgets as `other`, shared: a target that runs
    /// streamed and unstreamed (`--stream=both`) is one model behind one quota.
    pub fn sharing(inner: std::sync::Arc<dyn Provider>, other: &RateLimited) -> Self {
        RateLimited {
            inner,
            requests: other.requests.clone(),
            tokens: other.tokens.clone(),
        }
    }

    async fn charge_tokens(&self, n: u64) {
        let Some((limiter, capacity)) = &self.tokens else {
            return;
        };
        // A single request larger than the whole minute's budget can never fit: charge
        // the full capacity instead of refusing it.
        let n = u32::try_from(n).unwrap_or(u32::MAX).clamp(1, *capacity);
        if let Some(n) = NonZeroU32::new(n) {
            let _ = limiter
                .until_n_ready_with_jitter(n, Jitter::up_to(Duration::from_millis(20)))
                .await;
        }
    }
}

/// A cheap input-size estimate for pacing: characters of messages and tools / 4.
pub fn estimate_input_tokens(request: &Request) -> u64 {
    let chars: usize = request
        .messages
        .iter()
        .filter_map(|m| m.text())
        .map(str::len)
        .sum::<usize>()
        + request
            .tools
            .iter()
            .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
            .sum::<usize>();
    (chars / 4) as u64 + 1
}

#[async_trait]
impl Provider for RateLimited {
    async fn complete(&self, request: &Request, key: &TrialKey) -> Result<Response, ProviderError> {
        if let Some(r) = &self.requests {
            r.until_ready_with_jitter(Jitter::up_to(Duration::from_millis(20)))
                .await;
        }
        self.charge_tokens(estimate_input_tokens(request)).await;
        let response = self.inner.complete(request, key).await?;
        if let Some(u) = response.usage {
            self.charge_tokens(u.output_tokens).await;
        }
        Ok(response)
    }

    fn source(&self) -> String {
        self.inner.source()
    }

    fn endpoint(&self) -> Option<super::Endpoint> {
        self.inner.endpoint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::{Message, ToolChoice};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    struct Counter(AtomicU32);

    #[async_trait]
    impl Provider for Counter {
        async fn complete(&self, _: &Request, _: &TrialKey) -> Result<Response, ProviderError> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(Response::default())
        }
        fn source(&self) -> String {
            "counter".into()
        }
    }

    #[test]
    fn a_sharing_limiter_draws_on_the_same_budgets() {
        let inner = || -> Arc<dyn Provider> { Arc::new(Counter(AtomicU32::new(0))) };
        let first = RateLimited::new(inner(), NonZeroU32::new(1), NonZeroU32::new(100));
        let second = RateLimited::sharing(inner(), &first);
        // One request per minute between them: the first takes it, the second has none.
        let (a, b) = (
            first.requests.as_ref().unwrap(),
            second.requests.as_ref().unwrap(),
        );
        assert!(Arc::ptr_eq(a, b));
        assert!(a.check().is_ok());
        assert!(b.check().is_err());
        assert!(Arc::ptr_eq(
            &first.tokens.as_ref().unwrap().0,
            &second.tokens.as_ref().unwrap().0
        ));
        let own = RateLimited::new(inner(), NonZeroU32::new(1), None);
        assert!(own.requests.as_ref().unwrap().check().is_ok());
    }

    fn request() -> Request {
        Request {
            messages: vec![Message::User {
                content: "hi".into(),
            }],
            tools: Arc::new(vec![]),
            tool_choice: ToolChoice::Auto,
        }
    }

    fn key() -> TrialKey {
        TrialKey {
            case_id: "a".into(),
            target: "t:m".into(),
            variant: "v".into(),
            tool_choice: ToolChoice::Auto,
            repeat: 0,
        }
    }

    #[tokio::test]
    async fn requests_per_minute_space_requests_out() {
        // 600 rpm = one request every 100 ms after the first, with no initial burst.
        let inner = Arc::new(Counter(AtomicU32::new(0)));
        let limited = RateLimited::new(inner.clone(), NonZeroU32::new(600), None);
        let started = Instant::now();
        for _ in 0..4 {
            limited.complete(&request(), &key()).await.unwrap();
        }
        assert_eq!(inner.0.load(Ordering::SeqCst), 4);
        assert!(
            started.elapsed() >= Duration::from_millis(280),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn input_estimate_counts_messages_and_tools() {
        let r = request();
        assert_eq!(estimate_input_tokens(&r), 1);
        let mut long = r.clone();
        long.messages = vec![Message::User {
            content: "x".repeat(400),
        }];
        assert_eq!(estimate_input_tokens(&long), 101);
    }
}
