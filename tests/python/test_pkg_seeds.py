"""Acceptance: every scenario of the team's seed-snippets.md
(../shared/seed-snippets.md) runs as written and prints what its comments
say. The snippets are copied here verbatim (CI has no shared folder); each
runs in a fresh interpreter, as a user would run it."""
import os
import subprocess
import sys

import pytest

import ccpkg

SNIPPETS = {}
EXPECTED = {}

SNIPPETS[1] = r'''
from codecage import IsolatedRuntime, RuntimeConfig, CodecageError

with IsolatedRuntime(RuntimeConfig(timeout=2.0), sandbox="require") as rt:
    rt.bind_function("lookup", lambda sku: {"A1": 3.5}[sku])   # the only thing the guest can call
    print(rt.eval("lookup('A1') * 2"))                          # 7.0 (or 7: the engine's number tag decides)
    try:
        rt.eval("new Array(2 ** 32 - 1).fill(0)")
    except CodecageError as e:                                  # memory_limit or WorkerCrashed
        print(type(e).__name__)
print("host still fine")
'''

# Each printed line, with the alternatives its comment allows.
EXPECTED[1] = [('7.0', '7'), ('MemoryLimitError', 'WorkerCrashed'), ('host still fine',)]

SNIPPETS[2] = r'''
from codecage import IsolatedRuntime, ToolBridge

def get_weather(city):
    return {"city": city, "temp_c": 21}

def send_email(to, body):
    raise PermissionError("outbound mail is disabled")

bridge = ToolBridge({"get_weather": get_weather, "send_email": send_email}, max_calls=2)

with IsolatedRuntime(sandbox="require") as rt:
    bridge.attach(rt)
    print(rt.eval("await tools.get_weather('Zurich')"))            # {'city': 'Zurich', 'temp_c': 21}
    print(rt.eval("try { await tools.send_email('a@example.com', 'hi') } catch (e) { e.name }"))
                                                                    # PermissionError
    print(rt.eval("try { await tools.get_weather('Bern') } catch (e) { e.name }"))
                                                                    # ToolBudgetError (3rd call, never reached the host)
    print(bridge.calls_made, bridge.calls_remaining)               # 2 0
'''

# Each printed line, with the alternatives its comment allows.
EXPECTED[2] = [("{'city': 'Zurich', 'temp_c': 21}",), ('PermissionError',), ('ToolBudgetError',), ('2 0',)]

SNIPPETS[3] = r'''
import codecage

codecage.configure_default_runtime(isolated=True, sandbox="require")
print(codecage.eval("1 + 1"))                                   # 2
'''

# Each printed line, with the alternatives its comment allows.
EXPECTED[3] = [('2',)]

SNIPPETS[4] = r'''
from codecage import IsolatedRuntime, RuntimeConfig, WEB_POLYFILLS

with IsolatedRuntime(RuntimeConfig(bootstrap=WEB_POLYFILLS)) as rt:
    print(rt.eval("[typeof TextEncoder, typeof setTimeout, typeof structuredClone, typeof window]"))
    # ['function', 'function', 'function', 'undefined']
'''

# Each printed line, with the alternatives its comment allows.
EXPECTED[4] = [("['function', 'function', 'function', 'undefined']",)]

SNIPPETS[5] = r'''
from codecage import IsolatedRuntime, ToolBridge

SALES = [{"region": "East", "amount": 1000}, {"region": "West", "amount": 900},
         {"region": "East", "amount": 750}]

def fetch_sales():
    return SALES

bridge = ToolBridge({"fetch_sales": fetch_sales}, max_calls=5)

with IsolatedRuntime(language="python", sandbox="require") as py:
    bridge.attach(py)
    best = py.eval(
        "rows = tools.fetch_sales()\n"
        "totals = {}\n"
        "for r in rows: totals[r['region']] = totals.get(r['region'], 0) + r['amount']\n"
        "max(totals.items(), key=lambda kv: kv[1])")
    print(best)                                                 # ['East', 1750]
    print(py.eval("try:\n    open('/etc/passwd').read()\nexcept OSError as e:\n    r = type(e).__name__\nr"))
                                                                # PermissionError (or FileNotFoundError: the host file is unreachable)

with IsolatedRuntime(sandbox="require") as js:
    bridge.attach(js)
    js.bind_function("getAnalysis", lambda: best)
    print(js.eval("const [region, total] = getAnalysis(); `${region}: ${total}`"))   # East: 1750
    print(js.eval("typeof fetch"))                              # undefined
    print(js.eval("(await tools.fetch_sales()).length"))        # 3
print(bridge.calls_made, "of 5")                                # 2 of 5
'''

# Each printed line, with the alternatives its comment allows.
EXPECTED[5] = [("['East', 1750]",), ('PermissionError', 'FileNotFoundError'), ('East: 1750',), ('undefined',), ('3',), ('2 of 5',)]



def run_snippet(code):
    env = dict(os.environ, PYTHONPATH=ccpkg.PKG_DIR)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env)


@pytest.mark.userns
@pytest.mark.landlock
@pytest.mark.seccomp
@pytest.mark.parametrize("n", sorted(SNIPPETS))
def test_seed_snippet(n):
    proc = run_snippet(SNIPPETS[n])
    assert proc.returncode == 0, proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == len(EXPECTED[n]), proc.stdout
    for line, allowed in zip(lines, EXPECTED[n]):
        assert line in allowed, (line, allowed, proc.stdout)


def test_redacted_bridge_keeps_the_name_only():
    # The sentence after snippet 2: redact_host_errors=True.
    code = SNIPPETS[2].replace("max_calls=2)", "max_calls=2, redact_host_errors=True)")
    code += ("\nwith IsolatedRuntime(sandbox='require') as rt:\n"
             "    b = ToolBridge({'send_email': send_email}, redact_host_errors=True)\n"
             "    b.attach(rt)\n"
             "    print(rt.eval(\"try { send_email('a', 'b') } catch (e) { e.name + '|' + e.message }\"))\n")
    proc = run_snippet(code)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.splitlines()[-1]
    name, message = last.split("|")
    assert name == "PermissionError"
    assert "outbound mail" not in proc.stdout
    assert message == "the host tool failed (details are not shown to guest code)"
