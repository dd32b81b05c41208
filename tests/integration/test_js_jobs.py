"""JavaScript's job queue at the deadline (src/engine/quickjs/engine_js.c, js_settle
and js_after_result; QuickJS patch deps/quickjs/patches/0002): an endless
queue of promise jobs before an await that never settles ends as a
timeout at the deadline, with the runtime usable, or as memory_limit when
the chain of promises it builds fills the heap first; never as "a Promise
that can never settle"."""
from conftest import ev

# Each job returns a new promise that the previous one waits on: the queue
# never empties and the chain grows by a link per job (as it does in node).
CHAIN = ("Promise.resolve().then(function f() { return Promise.resolve().then(f) });\n"
         "await new Promise(() => {})")


def test_endless_promise_chain_is_a_timeout_at_the_deadline():
    """Regression: after the stop, each queued job was run with a one-byte
    stack to fail it, every failure rejecting a link of the chain and so
    queuing the next link's rejection: hundreds of thousands of jobs, so
    the eval ended as "did not stop within the 0.5 s grace; the worker was
    killed". (The heap is large here so that the chain cannot fill it
    first: see the next test.)"""
    r = ev("javascript", CHAIN, "--memory", "1024", "--timeout", "2")
    err = r.json["error"]
    assert (r.rc, err["kind"], err["type"]) == (3, "timeout", "TimeoutError"), r
    assert "still usable" in err["message"] and "killed" not in err["message"], err


def test_endless_chain_that_fills_the_heap_is_memory_limit():
    """Regression: QuickJS drops a job it has no memory to queue, so when
    the chain filled the heap the queue ran dry and the eval was a
    guest_error "the result is a Promise that can never settle" (under
    the default 128 MiB too, about a second in, depending on when the
    cycle collector last ran)."""
    r = ev("javascript", CHAIN, "--memory", "16", "--timeout", "30")
    err = r.json["error"]
    assert (r.rc, err["kind"]) == (5, "memory_limit"), r
    assert "never settle" not in err["message"], err


def test_endless_microtask_loop_before_a_pending_await_is_a_timeout():
    r = ev("javascript", "function f() { Promise.resolve().then(f) } f();\n"
                         "await new Promise(() => {})", "--timeout", "0.5")
    err = r.json["error"]
    assert (r.rc, err["kind"]) == (3, "timeout"), r
    assert "still usable" in err["message"], err


def test_a_promise_nothing_can_settle_is_still_reported_at_once():
    """The rule the stop must not hide: with no job and no tool call left,
    a pending promise is a guest_error at once, not a wait to the deadline."""
    r = ev("javascript", "await new Promise(() => {})", "--timeout", "30")
    err = r.json["error"]
    assert (r.rc, err["kind"]) == (1, "guest_error"), r
    assert "never settle" in err["message"], err
