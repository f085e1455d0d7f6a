// A Rust workload with known names: kprof_rust::spin_rust_kprof and the
// generic method <kprof_rust::Spinner<u32>>::spin_generic_kprof, each half
// of the time. Build: rustc --crate-name kprof_rust -O -g
// -C force-frame-pointers=yes. Usage: kprof_rust SECONDS
use std::time::{Duration, Instant};

// std::hint::black_box is Rust 1.66+; a volatile read also keeps the
// optimizer from folding the loops away, and builds with Debian's 1.63.
fn black_box<T: Copy>(x: T) -> T {
    unsafe { std::ptr::read_volatile(&x) }
}

#[inline(never)]
fn spin_rust_kprof(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = black_box(acc.wrapping_add(i.wrapping_mul(i)));
    }
    acc
}

struct Spinner<T> {
    step: T,
}

impl<T: Copy + Into<u64>> Spinner<T> {
    #[inline(never)]
    fn spin_generic_kprof(&self, n: u64) -> u64 {
        let mut acc = 0u64;
        for i in 0..n {
            acc = black_box(acc ^ i.wrapping_add(self.step.into()));
        }
        acc
    }
}

fn main() {
    let seconds: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    let s = Spinner { step: black_box(3u32) };
    let mut sink = 0u64;
    while Instant::now() < end {
        sink = sink.wrapping_add(spin_rust_kprof(black_box(200_000)));
        sink = sink.wrapping_add(s.spin_generic_kprof(black_box(200_000)));
    }
    black_box(sink);
}
