// A hot JS function with a distinctive name: V8 compiles it (optimized,
// '*' in the perf map) and, with --perf-basic-prof, names its code in
// /tmp/perf-PID.map. Usage: node --perf-basic-prof hot.js CPU_SECONDS
// It runs for CPU time, not wall time, so that on a loaded machine the hot
// function's share of the samples still dwarfs the start-up's.
'use strict';

function hotLoopKprof(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += (i * i) % 7;
	return s;
}

const seconds = Number(process.argv[2] || 1);
console.log(`pid ${process.pid}`);
let sink = 0;
const start = process.cpuUsage();
const used = () => { const u = process.cpuUsage(start); return (u.user + u.system) / 1e6; };
while (used() < seconds)
	sink += hotLoopKprof(100000);
if (sink === 42)
	console.log(sink);
