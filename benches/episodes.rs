//! Tool-loop harness speed: 1,000 episodes × 10 rounds through the library path a run
//! takes (`toolgauge::episode::run_episode` with the suite's mock host,
//! `toolgauge::tools::suite_host()`, on a suite with `mocks:` loaded from YAML), each
//! judged (`EpisodeOutcome::transcript` then `judge::judge_episode`: trajectory with a
//! `from:` data flow, `never`, grounding, final text, stop reason).
//!
//! The model is a bench model (`benches/loops/mod.rs`) that makes one call per round for
//! nine rounds, with new arguments each time so no limit fires, then answers in text;
//! `model_only` times its answers alone, so the harness's share is the difference.
//!
//! Goal (issue 11): harness overhead under 50 µs per round. Per round = the time of one
//! iteration / 10,000 rounds (criterion's `thrpt` in elements/s counts rounds).
//!
//! Run: `cargo bench --bench episodes` (`-- --quick` for a shorter run).

mod loops;

use std::hint::black_box;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use toolgauge::tools::{ToolHost, suite_host};

const EPISODES: usize = 1_000;
const ROUNDS: usize = 10;

/// Play (and with `judge`, judge) `EPISODES` episodes one after another on one thread.
async fn play_all(
    p: &loops::Prepared,
    model: &loops::BenchModel,
    host: &dyn ToolHost,
    judge: bool,
) -> usize {
    let mut failed = 0;
    for _ in 0..EPISODES {
        let outcome = p.play(model, host).await;
        if judge {
            failed += usize::from(!p.judge(&outcome).is_empty());
        }
        black_box(&outcome);
    }
    failed
}

fn episodes(c: &mut Criterion) {
    let p = loops::Prepared::new();
    let model = loops::BenchModel::new(ROUNDS);
    let host = suite_host();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");

    // The fixture plays what it should: ten rounds, nine calls, answered, and a pass.
    let outcome = rt.block_on(p.play(&model, host.as_ref()));
    assert_eq!(outcome.rounds.len(), ROUNDS);
    assert_eq!(outcome.tool_calls(), ROUNDS - 1);
    assert_eq!(
        outcome.stop(),
        Some(toolgauge::suite::trajectory::StopReason::Answered)
    );
    let reasons = p.judge(&outcome);
    assert!(
        reasons.is_empty(),
        "the bench episode should pass: {reasons:?}"
    );
    assert!(
        outcome.rounds[..ROUNDS - 1]
            .iter()
            .all(|r| r.outcomes.len() == 1 && !r.outcomes[0].is_error),
        "every call is answered by a mock result"
    );
    eprintln!(
        "{EPISODES} episodes × {ROUNDS} rounds ({} messages each); per round = time / {}",
        outcome.messages.len(),
        EPISODES * ROUNDS
    );

    let mut g = c.benchmark_group("episodes");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.throughput(Throughput::Elements((EPISODES * ROUNDS) as u64));
    g.bench_function("run_and_judge_1000x10", |b| {
        b.iter(|| rt.block_on(play_all(&p, &model, host.as_ref(), true)))
    });
    g.bench_function("run_1000x10", |b| {
        b.iter(|| rt.block_on(play_all(&p, &model, host.as_ref(), false)))
    });
    g.bench_function("model_only_1000x10", |b| {
        b.iter(|| {
            for _ in 0..EPISODES {
                for round in 0..ROUNDS {
                    black_box(model.answer(black_box(round)));
                }
            }
        })
    });
    g.finish();
}

criterion_group!(benches, episodes);
criterion_main!(benches);
