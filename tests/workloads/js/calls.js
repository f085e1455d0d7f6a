// Many calls of a tiny JS function from a hot loop, so that a good share of
// the samples land in the callee's prologue or epilogue (before its
// push rbp / mov rbp, rsp, or after its pop): there a frame-pointer walk
// skips the caller. V8 writes no unwind tables for its code, so the caller
// is found from the stack snapshot. Run with --no-turbo-inlining (else
// TurboFan inlines the callee into the loop) and --perf-basic-prof.
// Usage: node ... calls.js CPU_SECONDS
'use strict';

function fibHotKernel(n) {
	let a = 0, b = 1;
	for (let i = 0; i < n; i++) {
		const t = a + b;
		a = b;
		b = t % 1000003;
	}
	return a;
}

const start = process.cpuUsage();
const used = () => { const u = process.cpuUsage(start); return (u.user + u.system) / 1e6; };

function jsBusyLoop(seconds) {
	let s = 0;
	while (used() < seconds)
		for (let k = 0; k < 1000; k++)
			s += fibHotKernel(2);
	return s;
}

console.log(`pid ${process.pid}`);
if (jsBusyLoop(Number(process.argv[2] || 1)) === 42)
	console.log('42');
