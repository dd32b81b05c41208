// Loaded first on both sides (the sandbox and node) by test_libs_node.py:
// a fixed clock and a seeded Math.random, so outputs can be compared byte
// for byte. Our own code, not a library.
(function () {
	var T0 = 1700000000000;
	var RealDate = Date;
	function FixedDate() {
		var a = Array.prototype.slice.call(arguments);
		var d = a.length ? new (Function.prototype.bind.apply(RealDate, [null].concat(a)))()
				 : new RealDate(T0);
		Object.setPrototypeOf(d, FixedDate.prototype);
		return this instanceof FixedDate ? d : d.toString();
	}
	FixedDate.prototype = Object.create(RealDate.prototype);
	FixedDate.prototype.constructor = FixedDate;
	FixedDate.now = function () { return T0; };
	FixedDate.UTC = RealDate.UTC;
	FixedDate.parse = RealDate.parse;
	globalThis.Date = FixedDate;
	var s = 42;
	Math.random = function () {
		s = (s * 1103515245 + 12345) % 2147483648;
		return s / 2147483648;
	};
})();
