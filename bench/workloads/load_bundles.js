// bench/all.py's libraries section: node loading browser bundles as the
// sandbox does (classic scripts in the global scope, in order), then 1+1.
// usage: node bench/workloads/load_bundles.js FILE... ; exit status 1 if a
// bundle left no global (vegaLite, when given) or 1+1 is not 2.
const fs = require('fs');
const vm = require('vm');
globalThis.self = globalThis;
for (const f of process.argv.slice(2))
	vm.runInThisContext(fs.readFileSync(f, 'utf8'), { filename: f });
const names = process.argv.slice(2).join(' ');
if (vm.runInThisContext('1+1') !== 2 ||
    (names.includes('vega-lite') && typeof vegaLite.compile !== 'function'))
	process.exit(1);
