//! Token counting (o200k_base, `toolgauge::score::tokens`): the cost of estimating usage
//! for answers that are one unbroken word, and of loading the vocabulary.
//!
//! `count/<kind>/<size>` counts 1 MB and 10 MB of each kind of text that makes long
//! pre-tokens or long whitespace runs (one letter repeated, an upper-case run, a
//! two-letter pattern, random base64, random lower-case letters, a digit sequence, CJK
//! without spaces, a run of spaces, of tabs, of line breaks, random whitespace of every
//! kind, runs of up to 100,000 spaces or tabs between words, a run of punctuation, of
//! combining accents), so the time per byte of the two sizes shows the cost grows
//! linearly. `pretokenize/toolgauge/...` times toolgauge's pre-tokenizer alone on the
//! same texts, `pretokenize/fancy_regex/...` the pattern as tiktoken runs it
//! (fancy-regex; its one-run line says how many pieces it gave up on). `load/...` times
//! loading toolgauge's compact vocabulary and tiktoken-rs's full `CoreBPE`, and prints
//! the heap each takes (peak bytes allocated while loading, counted by this bench's
//! allocator).
//!
//! Run: `cargo bench --bench tokens` (all), `cargo bench --bench tokens -- count/letter`;
//! `cargo bench --bench tokens -- --test` runs each once and prints the one-run lines
//! (tokens, seconds, peak heap) only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use toolgauge::score::tokens;

/// The system allocator, counting the bytes in use and their peak.
struct Counting;

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counters change.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: ptr was allocated by System with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size >= layout.size() {
            let now = IN_USE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                - layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: as for dealloc; new_size is the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `f` returns, the seconds it took (one run: criterion's figures are the
/// measured ones; this line is what `-- --test` prints), and its peak heap in MB above
/// what was in use before.
fn once<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let before = IN_USE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let start = Instant::now();
    let out = f();
    let seconds = start.elapsed().as_secs_f64();
    let peak = PEAK.load(Ordering::Relaxed);
    (out, seconds, (peak - before) as f64 / 1e6)
}

const MB: usize = 1_000_000;

fn count(c: &mut Criterion) {
    tokens::count("warm up: load the vocabulary");
    let mut g = c.benchmark_group("count");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    for kind in tokens::LONG_KINDS {
        for size in [MB, 10 * MB] {
            let text = tokens::long_text(kind, size);
            let (n, s, heap) = once(|| tokens::count(&text));
            eprintln!("count/{kind}/{size}: {n} tokens, once {s:.3} s, peak heap {heap:.1} MB");
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new(kind, size), &text, |b, t| {
                b.iter(|| tokens::count(black_box(t)))
            });
        }
    }
    g.finish();
}

fn pretokenize(c: &mut Criterion) {
    let fancy = fancy_regex::Regex::new(tiktoken_rs::O200K_BASE_PAT_STR).expect("compiles");
    let mut g = c.benchmark_group("pretokenize");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    for kind in tokens::LONG_KINDS {
        for size in [MB, 10 * MB] {
            let text = tokens::long_text(kind, size);
            let (pieces, s, heap) = once(|| tokens::pieces(&text));
            eprintln!(
                "pretokenize/toolgauge/{kind}/{size}: {pieces} pieces, once {s:.3} s, peak heap {heap:.1} MB"
            );
            let (pieces, s, heap) = once(|| fancy.find_iter(&text).count());
            let failed = fancy.find_iter(&text).filter(|p| p.is_err()).count();
            eprintln!(
                "pretokenize/fancy_regex/{kind}/{size}: {pieces} pieces ({failed} given up), once {s:.3} s, peak heap {heap:.1} MB"
            );
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(
                BenchmarkId::new(format!("toolgauge/{kind}"), size),
                &text,
                |b, t| b.iter(|| tokens::pieces(black_box(t))),
            );
            g.bench_with_input(
                BenchmarkId::new(format!("fancy_regex/{kind}"), size),
                &text,
                |b, t| b.iter(|| fancy.find_iter(black_box(t)).count()),
            );
        }
    }
    g.finish();
}

fn load(c: &mut Criterion) {
    let (n, s, heap) = once(tokens::load_fresh);
    eprintln!("load/toolgauge: {n} tokens, once {s:.3} s, peak heap {heap:.1} MB");
    let (bpe, s, heap) = once(|| tiktoken_rs::o200k_base().expect("tiktoken-rs loads"));
    eprintln!("load/tiktoken_rs_core_bpe: once {s:.3} s, peak heap {heap:.1} MB");
    drop(bpe);
    let mut g = c.benchmark_group("load");
    g.sample_size(10);
    g.bench_function("toolgauge", |b| b.iter(tokens::load_fresh));
    g.bench_function("tiktoken_rs_core_bpe", |b| {
        b.iter(|| tiktoken_rs::o200k_base().expect("tiktoken-rs loads"))
    });
    g.finish();
}

criterion_group!(benches, count, pretokenize, load);
criterion_main!(benches);
