// Compute micro-benchmarks for bench/all.py, the same file in every engine:
// codecage's guest (`codecage run`), QuickJS's qjs, node --jitless, node.
// Each benchmark times itself inside the engine (performance.now where the
// engine has it, else Date.now: codecage's QuickJS has no `performance`,
// so rounds last well over 100 ms): one warm-up round, then ROUNDS rounds;
// prints one JSON line {name: [milliseconds per round]}. compute.py is the
// same work in Python.
const ROUNDS = 5;
const now = typeof performance !== "undefined" ? () => performance.now() : () => Date.now();

function fib(n) {
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

function recursion() {
	for (let r = 0; r < 12; r++)
		fib(27);
}

function churn() {
	// Build and drop many small objects and arrays (allocator and GC).
	for (let r = 0; r < 3; r++) {
		let batch = [];
		for (let i = 0; i < 50000; i++)
			batch.push({ id: i, name: "item", tags: [i, i + 1], score: i * 0.5 });
		batch = null;
	}
}

const DOC = [];
for (let i = 0; i < 2000; i++)
	DOC.push({ id: i, name: "user" + i, active: i % 2 === 0, score: i * 1.5,
		   tags: ["a", "b", "c"], nested: { x: i, y: [1, 2, 3], s: "text ".repeat(4) } });

function jsonRoundTrip() {
	for (let r = 0; r < 30; r++)
		if (JSON.parse(JSON.stringify(DOC)).length !== 2000)
			throw new Error("json round trip");
}

function runAll() {
	const out = {};
	for (const [name, fn] of [["recursion", recursion], ["churn", churn], ["json", jsonRoundTrip]]) {
		fn();
		const times = [];
		for (let r = 0; r < ROUNDS; r++) {
			const t = now();
			fn();
			times.push(now() - t);
		}
		out[name] = times;
	}
	return out;
}

console.log(JSON.stringify(runAll()));
