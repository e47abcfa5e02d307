//! Memory of the tool-loop harness as episodes get longer: one episode each of 10, 100
//! and 1,000 rounds through `toolgauge::episode::run_episode` with the suite's mock host,
//! the bench model of `benches/loops/mod.rs` (one call per round, then an answer), then
//! the transcript and the judge, under a counting global allocator.
//!
//! The harness must not copy the history per round (see `src/episode/mod.rs`): what it
//! allocates per round has to stay the same however many rounds came before, and the
//! only thing that grows with the episode is the conversation itself (one assistant
//! turn and one tool result per round, kept in the outcome). The bench model reads the
//! allocation counter when a request arrives and when its answer is built, so a round's
//! harness allocation is everything from one answer to the next request: the model's
//! own answer is left out. The table shows it for the first and last rounds, the
//! whole-episode totals per round, and the peak heap; time per round is indicative
//! (`cargo bench --bench episodes` is the timing bench).
//!
//! Run: `cargo bench --bench episode_memory`.

mod loops;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use toolgauge::suite::trajectory::StopReason;
use toolgauge::tools::suite_host;

/// The system allocator, counting live bytes, the peak of live bytes, and bytes and
/// blocks allocated (a `realloc` counts as a new block of the new size).
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize, block: usize) {
    let live = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(live, Relaxed);
    BYTES.fetch_add(block, Relaxed);
    BLOCKS.fetch_add(1, Relaxed);
}

// SAFETY: every call is forwarded to `System` unchanged; the counters are only read.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grew(layout.size(), layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Relaxed);
            grew(new_size, new_size);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Bytes and blocks allocated so far.
fn allocated() -> (usize, usize) {
    (BYTES.load(Relaxed), BLOCKS.load(Relaxed))
}

/// Start counting afresh: the peak from the bytes live now.
fn reset() -> usize {
    let live = LIVE.load(Relaxed);
    PEAK.store(live, Relaxed);
    live
}

/// Where the model was, and the bytes and blocks allocated by then.
type Reading = (loops::Phase, (usize, usize));

/// One row of the table.
struct Row {
    rounds: usize,
    /// Harness bytes and blocks of each round that made a call (rounds 1..rounds-1).
    per_round: Vec<(usize, usize)>,
    total_bytes: usize,
    retained: usize,
    peak: usize,
    run_us: f64,
    judge_bytes: usize,
    judge_us: f64,
}

fn median(mut xs: Vec<usize>) -> usize {
    xs.sort_unstable();
    xs[xs.len() / 2]
}

fn mean(xs: &[usize]) -> f64 {
    xs.iter().sum::<usize>() as f64 / xs.len() as f64
}

fn measure(rt: &tokio::runtime::Runtime, rounds: usize) -> Row {
    let p = loops::Prepared::with_rounds(rounds);
    let host = suite_host();
    // The probe's readings go to storage reserved up front: reading allocates nothing.
    let readings: Arc<Mutex<Vec<Reading>>> =
        Arc::new(Mutex::new(Vec::with_capacity(2 * rounds + 2)));
    let mut model = loops::BenchModel::new(rounds);
    let sink = readings.clone();
    model.probe = Some(Box::new(move |phase| {
        sink.lock().expect("probe lock").push((phase, allocated()))
    }));
    // Warm up (lazy regexes, the runtime), then forget the readings.
    let warm = rt.block_on(p.play(&loops::BenchModel::new(rounds), host.as_ref()));
    assert_eq!(warm.stop(), Some(StopReason::Answered));
    assert!(p.judge(&warm).is_empty(), "the bench episode passes");
    drop(warm);

    let base = reset();
    let (bytes0, _) = allocated();
    let outcome = rt.block_on(p.play(&model, host.as_ref()));
    let (bytes1, _) = allocated();
    let retained = LIVE.load(Relaxed) - base;
    let peak = PEAK.load(Relaxed) - base;
    assert_eq!(outcome.rounds.len(), rounds);
    assert_eq!(outcome.tool_calls(), rounds - 1);

    let r = readings.lock().expect("readings");
    assert_eq!(r.len(), 2 * rounds);
    // Round k's harness work: from the model's answer in round k to the request of k+1.
    let per_round: Vec<(usize, usize)> = (0..rounds - 1)
        .map(|k| {
            let (ph_a, (b_a, n_a)) = r[2 * k + 1];
            let (ph_b, (b_b, n_b)) = r[2 * k + 2];
            assert_eq!((ph_a, ph_b), (loops::Phase::Answered, loops::Phase::Asked));
            (b_b - b_a, n_b - n_a)
        })
        .collect();
    drop(r);

    let (jb0, _) = allocated();
    let reasons = p.judge(&outcome);
    let (jb1, _) = allocated();
    assert!(reasons.is_empty(), "{reasons:?}");
    drop(outcome);

    // Time: enough episodes for about 20,000 rounds.
    let plain = loops::BenchModel::new(rounds);
    let reps = (20_000 / rounds).max(1);
    let started = Instant::now();
    let mut outcomes = Vec::with_capacity(reps.min(64));
    for i in 0..reps {
        outcomes.push(rt.block_on(p.play(&plain, host.as_ref())));
        if i % 64 == 63 {
            outcomes.clear();
        }
    }
    let run_us = started.elapsed().as_secs_f64() * 1e6 / (reps * rounds) as f64;
    let last = outcomes.pop().expect("an outcome");
    let judge_reps = (2_000 / rounds).max(3);
    let started = Instant::now();
    for _ in 0..judge_reps {
        std::hint::black_box(p.judge(&last));
    }
    let judge_us = started.elapsed().as_secs_f64() * 1e6 / (judge_reps * rounds) as f64;

    Row {
        rounds,
        per_round,
        total_bytes: bytes1 - bytes0,
        retained,
        peak,
        run_us,
        judge_bytes: jb1 - jb0,
        judge_us,
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing: run once.
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let rows: Vec<Row> = [10, 100, 1_000].iter().map(|&n| measure(&rt, n)).collect();

    println!("Harness allocation per round (model's answer excluded), by round number:");
    println!(
        "{:>7} | {:>15} | {:>15} | {:>12} | {:>12} | {:>13}",
        "rounds", "rounds 1-9 (B)", "last 9 (B)", "median (B)", "mean (B)", "blocks/round"
    );
    for row in &rows {
        let bytes: Vec<usize> = row.per_round.iter().map(|x| x.0).collect();
        let blocks: Vec<usize> = row.per_round.iter().map(|x| x.1).collect();
        let first = mean(&bytes[..9.min(bytes.len())]);
        let last = mean(&bytes[bytes.len().saturating_sub(9)..]);
        println!(
            "{:>7} | {:>15.0} | {:>15.0} | {:>12} | {:>12.0} | {:>13}",
            row.rounds,
            first,
            last,
            median(bytes.clone()),
            mean(&bytes),
            median(blocks),
        );
    }
    println!();
    println!("Whole episode (run_episode), and the judge (transcript + judge_episode):");
    println!(
        "{:>7} | {:>13} | {:>15} | {:>11} | {:>10} | {:>10} | {:>13} | {:>10}",
        "rounds",
        "alloc/round",
        "retained/round",
        "peak heap",
        "peak/round",
        "µs/round",
        "judge B/round",
        "judge µs/r"
    );
    for row in &rows {
        let n = row.rounds as f64;
        println!(
            "{:>7} | {:>11.0} B | {:>13.0} B | {:>9.1} K | {:>8.0} B | {:>10.2} | {:>13.0} | {:>10.2}",
            row.rounds,
            row.total_bytes as f64 / n,
            row.retained as f64 / n,
            row.peak as f64 / 1024.0,
            row.peak as f64 / n,
            row.run_us,
            row.judge_bytes as f64 / n,
            row.judge_us,
        );
    }
}
