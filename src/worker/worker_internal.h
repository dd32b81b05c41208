/* Worker core internals shared by main.c, output.c, tools.c and
 * channel.c (not for engines). */
#ifndef CC_WORKER_INTERNAL_H
#define CC_WORKER_INTERNAL_H

#include <msgpack.h>
#include <stdbool.h>
#include <stdint.h>

#include "codecage.h"
#include "worker.h"

void cc_worker_begin_eval(uint64_t id, uint64_t timeout_ms);
void cc_worker_take_clock(const cc_value *m);
void cc_worker_flush_output(void);
/* While on, guest output is dropped, not sent (a library's console
 * output while it loads, before "ready"). */
void cc_worker_discard_output(bool on);
void cc_worker_tools_begin(uint64_t eval_id);
void cc_worker_tools_end(void);
/* File a "reply" frame read outside an eval (a late reply is dropped). */
void cc_worker_take_reply(cc_value *m);
/* Read one frame that must be a reply or a clock (the only things the
 * supervisor sends while a request is being served) and file it
 * (tools.c). Blocking; anything else ends the worker. */
void cc_worker_file_incoming(void);

/* ---- channel.c: frames on the channel ---- */

/* What to call when a send would block and a frame is coming in
 * (cc_worker_file_incoming; main.c sets it before the first frame). */
void cc_worker_channel_init(void (*incoming)(void));
/* Look for input on the channel for up to CC_SPIN_NS (frame.h) without
 * sleeping (reading it ahead). True when something (or EOF) is there. */
bool cc_worker_spin_for_input(void);
/* One look, without waiting or spinning: the same answer, one recv() at
 * most. */
bool cc_worker_input_waiting(void);
/* Sleep until the channel is readable (true) or deadline_ns
 * (CLOCK_MONOTONIC) passes or a signal lands (false). */
bool cc_worker_poll_input(int64_t deadline_ns);
/* Read one frame from the channel (blocking), whose length must be <=
 * cap; *buf is the caller's. Returns 0, -1 on end of file or an I/O error,
 * -2 over the cap. Reads ahead: see cc_worker_input_buffered. */
int cc_worker_read_frame(char **buf, size_t *len, size_t cap);
/* Bytes of the next frame already read from the socket. */
bool cc_worker_input_buffered(void);
/* Send one frame; while the write would block, file incoming frames. */
void cc_worker_send_frame(const void *payload, size_t len);
/* display.c: the eval's displays. reset at the start of an eval; settle
 * turns a refused display (count or bytes) or a value that no longer fits
 * beside the displays into an output_limit outcome; count and cost (bytes
 * of host memory once decoded, about) before packing; pack writes the
 * "displays" field (nothing when there are none). */
void cc_worker_display_reset(void);
void cc_worker_display_settle(struct cc_outcome *o);
size_t cc_worker_display_count(void);
size_t cc_worker_display_cost(void);
void cc_worker_display_pack(msgpack_packer *pk);
void cc_outcome_init(struct cc_outcome *o);
void cc_outcome_reset(struct cc_outcome *o);

extern const struct cc_engine *const cc_worker_engine;

#endif
