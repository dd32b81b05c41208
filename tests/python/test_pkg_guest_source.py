"""What the guest's source looks like from Python: a UTF-8 byte order mark
at the start is skipped as python3 skips it in a file."""
import pytest

import ccpkg  # noqa: F401  (builds the package)

from codecage import GuestError, IsolatedRuntime


@pytest.mark.parametrize("lang,code", [("python", "\ufeffx = 21\nx * 2"),
                                       ("javascript", "\ufefflet x = 21;\nx * 2")])
def test_source_with_a_bom_runs(lang, code):
    """Regression (Python): `SyntaxError: invalid non-printable character
    U+FEFF` for a file saved with a byte order mark."""
    with IsolatedRuntime(language=lang) as rt:
        assert rt.eval(code) == 42
        with pytest.raises(GuestError) as ei:
            rt.eval(code.replace("x * 2", "x.nope()"))
        assert "\ufeff" not in ei.value.traceback
