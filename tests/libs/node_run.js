// node's side of test_libs_node.py: load the same files as classic scripts
// in the global scope (as the sandbox does), run the same async body, and
// print its result (a string) on stdout.
const fs = require('fs');
const vm = require('vm');
const req = JSON.parse(fs.readFileSync(0, 'utf8'));
globalThis.self = globalThis;
for (const f of req.files)
	vm.runInThisContext(fs.readFileSync(f, 'utf8'), { filename: f,
		importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
vm.runInThisContext('(async () => {' + req.code + '})()').then(
	(v) => process.stdout.write(String(v)),
	(e) => { console.error(e); process.exit(1); });
