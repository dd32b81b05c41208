// node's side of test_libs_node.py: load the same files as classic scripts
// in the global scope (as the sandbox does), run the same async body, and
// print its result (a string) on stdout.
const fs = require('fs');
const vm = require('vm');
const req = JSON.parse(fs.readFileSync(0, 'utf8'));
globalThis.self = globalThis;
// node 20 has Blob but no FileReader (three's GLTFExporter reads Blobs with
// one): a minimal one over Blob, for node's side only.
if (!globalThis.FileReader)
	globalThis.FileReader = class {
		_done(p) {
			p.then((r) => {
				this.result = r;
				const ev = { target: this };
				if (this.onload) this.onload(ev);
				if (this.onloadend) this.onloadend(ev);
			});
		}
		readAsArrayBuffer(b) { this._done(b.arrayBuffer()); }
		readAsDataURL(b) {
			this._done(b.arrayBuffer().then((a) => 'data:' + (b.type || 'application/octet-stream') +
				';base64,' + Buffer.from(a).toString('base64')));
		}
	};
for (const f of req.files)
	vm.runInThisContext(fs.readFileSync(f, 'utf8'), { filename: f,
		importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER });
// A package the sandbox loads as ES modules or as CommonJS (issue 27):
// node imports (requires) the same entry and sets the same global, the
// namespace or, when that is all it exports, the default export.
(async () => {
	for (const [g, f] of req.modules || []) {
		const ns = await import(f);
		const keys = Object.keys(ns);
		globalThis[g] = keys.length === 1 && keys[0] === 'default' ? ns.default : ns;
	}
	for (const [g, f] of req.requires || [])
		globalThis[g] = require(f);
	return vm.runInThisContext('(async () => {' + req.code + '})()');
})().then(
	(v) => process.stdout.write(String(v)),
	(e) => { console.error(e); process.exit(1); });
