/* The pusher's state, shared by push.c (the API) and queue.c (the queue
 * and the sender thread). Everything below `mu` is guarded by it. */
#ifndef KP_PUSH_QUEUE_H
#define KP_PUSH_QUEUE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "push/pushP.h"

struct kp_queue_window {
	struct kp_queue_window *next;
	uint8_t *data; /* NULL: in the spool only, read back when its turn comes */
	size_t len;
	uint64_t from_ns, until_ns;
	uint32_t pending; /* bit i: tg[i] has not received it */
	uint32_t held;	  /* bit i: it waited for tg[i] while tg[i] was failing (this run) */
	bool busy;	  /* being sent: not evicted */
	bool spooled;
	char spool_name[64];
};

struct kp_queue_target {
	struct kp_target t;
	uint64_t next_try_ms; /* monotonic; 0: now */
	unsigned backoff_ms;  /* the last delay, 0: not failing */
	bool failing;	      /* an episode was reported and has not ended */
	uint64_t fail_since_ms;
	bool recovering;		/* answering again after an episode: reported once the
					 * windows it held are settled, if any was delivered */
	uint64_t outage_ms, sent_again; /* sent_again: windows held and then delivered */
	char drop_why[64]; /* the status of the last refusal, to report a run of them once */
	uint64_t drop_run;
};

struct kp_push {
	struct kp_queue_target tg[KP_PUSH_MAX_TARGETS];
	size_t nt;
	char *service;
	struct kp_label labels[KP_PUSH_MAX_LABELS];
	size_t nl;
	char **headers; /* the credentials among them: wiped when freed */
	size_t nh;
	struct kp_spool *spool;
	uint64_t max_memory;
	long timeout_ms;
	unsigned bmin, bmax, rand;
	void (*log)(void *arg, const char *line);
	void *log_arg;
	pthread_t thread;
	bool started, locks_made;
	_Atomic bool abort; /* cuts the request under way (read by libcurl's callback) */

	pthread_mutex_t mu;
	pthread_cond_t cv;		     /* CLOCK_MONOTONIC; broadcast at every change */
	struct kp_queue_window *head, *tail; /* oldest first */
	uint64_t mem;			     /* bytes of window data in memory */
	bool stop, finishing;
	bool losing, spool_failing; /* a loss or a spool failure reported, not yet over */
	size_t rr;		    /* the target tried first next time */
	struct kp_push_stats st;
};

uint64_t kp_queue_now_ms(void);
void kp_queue_log(struct kp_push *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The sender thread's function. */
void *kp_queue_sender(void *arg);
/* Appends w (mu held). */
void kp_queue_append(struct kp_push *p, struct kp_queue_window *w);
/* Keeps the data in memory under max_memory, oldest out first (mu held). */
void kp_queue_bound(struct kp_push *p);
/* Writes w to the spool (mu not held), room made under its bound first. */
void kp_queue_spool(struct kp_push *p, struct kp_queue_window *w);
/* Queues what the spool holds from a previous run (before the thread starts). */
void kp_queue_reload(struct kp_push *p);
/* At the end: the reports still owed, the pending counts (thread
 * stopped); the caller says what is left (kp_push_stats). */
void kp_queue_summary(struct kp_push *p);
/* Frees every window (thread stopped); spooled files stay. */
void kp_queue_clear(struct kp_push *p);

#endif
