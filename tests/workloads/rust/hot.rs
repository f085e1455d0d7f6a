// A Rust workload with known names: kprof_rust::spin_rust_kprof and the
// generic method <kprof_rust::Spinner<u32>>::spin_generic_kprof, each half
// of the CPU time, in turns of 10 ms of the thread's CPU time (as
// KP_SPIN_FOR in ../workload.h: a loop's cost per iteration varies several
// times over between machines, so equal iteration counts are no equal
// shares). Build: rustc --crate-name kprof_rust -O -g
// -C force-frame-pointers=yes. Usage: kprof_rust CPU_SECONDS

// The thread's CPU time from libc (std has no such clock); struct timespec
// on 64-bit Linux.
#[repr(C)]
struct Timespec {
    tv_sec: i64,
    tv_nsec: i64,
}
extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
const CLOCK_THREAD_CPUTIME_ID: i32 = 3;

fn thread_cpu_seconds() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

// Evaluates $call again and again for $slice seconds of CPU time. A macro,
// so that main stays the caller's frame (a helper function would be inlined
// into main and show as an inline frame of its own).
macro_rules! spin_for {
    ($slice:expr, $call:expr) => {{
        let until = thread_cpu_seconds() + $slice;
        loop {
            $call;
            if thread_cpu_seconds() >= until {
                break;
            }
        }
    }};
}

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
    // CPU time, as spin.c: a loaded machine changes the run's length, not
    // its number of samples
    let end = thread_cpu_seconds() + seconds;
    let s = Spinner { step: black_box(3u32) };
    let mut sink = 0u64;
    while thread_cpu_seconds() < end {
        spin_for!(0.01, sink = sink.wrapping_add(spin_rust_kprof(black_box(100_000))));
        spin_for!(0.01, sink = sink.wrapping_add(s.spin_generic_kprof(black_box(100_000))));
    }
    black_box(sink);
}
