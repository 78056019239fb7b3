/* sonde: the C API of the monitoring library (libsonde).
 *
 * Monitoring starts by itself when libsonde is loaded (configured by a file
 * and SONDE_* environment variables, see docs/configuration.md) and stops at
 * exit, flushing everything. Probes cost almost nothing when monitoring or
 * the operation is disabled.
 *
 *   static sonde_op op = SONDE_OP_INIT("checkout");
 *   sonde_begin(&op);
 *   ...
 *   if (failed) sonde_failed(&op, "out of stock"); else sonde_end(&op);
 *
 * Every sonde_begin must be paired with exactly one sonde_end or
 * sonde_failed on the same thread; mismatched ends are ignored (and counted),
 * so that a missed end never corrupts the rest of the trace.
 *
 * Compiled with SONDE_ENABLE=0 (-DSONDE_ENABLE=0), every function here and
 * in sonde/records.h and every SONDE_* macro becomes an inline no-op: the
 * program builds and runs without libsonde (not linked, nothing recorded).
 */
#ifndef SONDE_SONDE_H
#define SONDE_SONDE_H

#include <stddef.h>
#include <stdint.h>

/* 1 (default): probes call libsonde. 0: probes compile to nothing. */
#ifndef SONDE_ENABLE
#define SONDE_ENABLE 1
#endif
#if !SONDE_ENABLE && defined(SONDE_BUILDING_LIBRARY)
#error "libsonde itself cannot be built with SONDE_ENABLE=0"
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(SONDE_BUILDING_LIBRARY)
#define SONDE_API __attribute__((visibility("default")))
#else
#define SONDE_API
#endif

/* A static operation descriptor. Declare one per probe site with
 * static storage; libsonde fills in `id` and `state` on first use. */
typedef struct sonde_op {
  const char* name;       /* operation name as it appears in traces */
  const char* file;       /* source file, may be NULL */
  int line;               /* source line, 0 if unknown */
  volatile uint32_t id;   /* assigned by libsonde; 0 until registered */
  volatile uint8_t state; /* 0 unregistered; then the current enabled or disabled tag */
  uint8_t reserved[3];
} sonde_op;

#define SONDE_OP_INIT(op_name)                       \
  {                                                  \
    (op_name), __FILE__, __LINE__, 0, 0, { 0, 0, 0 } \
  }

#if SONDE_ENABLE /* else: the no-op definitions at the end */

SONDE_API void sonde_begin(sonde_op* op);
SONDE_API void sonde_end(sonde_op* op);
/* Ends the operation as failed; `cause` is copied (may be NULL). */
SONDE_API void sonde_failed(sonde_op* op, const char* cause);

/* ---- Control ---------------------------------------------------------- */

/* 1 if monitoring is active (configured and not disabled). */
SONDE_API int sonde_is_enabled(void);
/* Turns all probes on or off at run time. */
SONDE_API void sonde_set_enabled(int enabled);
/* Replaces the include/exclude patterns (Kieker's adaptive-monitoring lines:
 * "+pattern" includes, "-pattern" excludes, "#" comments, one per line; the
 * last matching line wins). Returns 0, or -1 with a message in `error`. */
SONDE_API int sonde_set_patterns(const char* lines, char* error, size_t error_size);
/* Writes everything recorded so far to the log (blocking, bounded by the
 * writer's progress). Returns 0 on success. */
SONDE_API int sonde_flush(void);
/* Flight recorder (flight = on): asks the writer thread to write a snapshot
 * of the last flight_window_ms with `reason` in its header, and returns at
 * once. Returns 0 if asked, -1 if the flight recorder is not on. */
SONDE_API int sonde_snapshot(const char* reason);
/* Stops monitoring, flushes and closes the log. Called automatically at exit. */
SONDE_API void sonde_shutdown(void);

#endif /* SONDE_ENABLE */

/* ---- Trace context propagation --------------------------------------- */

/* A captured position in a trace, to be continued in another thread or process. */
typedef struct sonde_context {
  uint64_t trace_id;
  int32_t order_index; /* order index of the last event before the capture */
  uint32_t flags;      /* 1: valid; 2: part of a W3C trace that sonde did not start */
  /* With flag 2: the W3C trace id (high and low 64 bits), as a traceparent
   * carried it in; sonde keeps it whole and writes it on. */
  uint64_t w3c_trace_id_high;
  uint64_t w3c_trace_id_low;
  /* The span a continuation of this context is a child of: from
   * sonde_context_capture, the span sonde exports for the execution running
   * at the capture (the traceparent's parent-id that sonde_context_inject
   * writes); from sonde_context_extract, the caller's parent-id. 0: none. */
  uint64_t span_id;
} sonde_context;

#if SONDE_ENABLE

/* Captures the calling thread's current trace position. Outside a trace the
 * result is invalid (flags == 0). */
SONDE_API sonde_context sonde_context_capture(void);
/* The next trace started on this thread becomes a child of `ctx`
 * (parentTraceId/parentOrderId in its TraceMetadata). */
SONDE_API void sonde_context_continue(const sonde_context* ctx);
/* Writes a W3C traceparent header value ("00-<32 hex>-<16 hex>-01", 55
 * characters plus NUL) for `ctx`: its trace id, and as parent-id the span
 * sonde exports for the execution that was running at the capture. Returns
 * 0, or -1 if ctx is invalid or the buffer is smaller than 56 bytes. */
SONDE_API int sonde_context_inject(const sonde_context* ctx, char* out, size_t out_size);
/* Parses a traceparent value. Returns 0 and fills `ctx`, or -1 if malformed.
 * A trace sonde did not start (flag 2) keeps its 128-bit id and the caller's
 * span id: the trace that continues `ctx` records them, sends them on and
 * exports under them. */
SONDE_API int sonde_context_extract(const char* traceparent, sonde_context* ctx);

#endif /* SONDE_ENABLE */

/* ---- Counters --------------------------------------------------------- */

typedef struct sonde_stats {
  uint64_t events_recorded; /* events probes put into buffers */
  uint64_t events_written;  /* events the writer has written */
  uint64_t events_dropped;  /* events lost to the drop policy or write errors */
  uint64_t buffers_written;
  uint64_t write_errors;
} sonde_stats;

#if SONDE_ENABLE

SONDE_API sonde_stats sonde_get_stats(void);

#else /* !SONDE_ENABLE: the same API as inline no-ops, as when monitoring is off. */

#if defined(__GNUC__)
#define SONDE_DETAIL_UNUSED __attribute__((unused))
#else
#define SONDE_DETAIL_UNUSED
#endif

static inline SONDE_DETAIL_UNUSED void sonde_begin(sonde_op* op) { (void)op; }
static inline SONDE_DETAIL_UNUSED void sonde_end(sonde_op* op) { (void)op; }
static inline SONDE_DETAIL_UNUSED void sonde_failed(sonde_op* op, const char* cause) {
  (void)op;
  (void)cause;
}
static inline SONDE_DETAIL_UNUSED int sonde_is_enabled(void) { return 0; }
static inline SONDE_DETAIL_UNUSED void sonde_set_enabled(int enabled) { (void)enabled; }
/* Accepted and ignored: there is nothing to apply them to. */
static inline SONDE_DETAIL_UNUSED int sonde_set_patterns(const char* lines, char* error,
                                                         size_t error_size) {
  (void)lines;
  (void)error;
  (void)error_size;
  return 0;
}
/* Nothing to write: fails, as sonde_flush does while monitoring is off. */
static inline SONDE_DETAIL_UNUSED int sonde_flush(void) { return -1; }
static inline SONDE_DETAIL_UNUSED int sonde_snapshot(const char* reason) {
  (void)reason;
  return -1;
}
static inline SONDE_DETAIL_UNUSED void sonde_shutdown(void) {}
/* Never in a trace: an invalid context. */
static inline SONDE_DETAIL_UNUSED sonde_context sonde_context_capture(void) {
  sonde_context ctx = {0, 0, 0, 0, 0, 0};
  return ctx;
}
static inline SONDE_DETAIL_UNUSED void sonde_context_continue(const sonde_context* ctx) {
  (void)ctx;
}
static inline SONDE_DETAIL_UNUSED int sonde_context_inject(const sonde_context* ctx, char* out,
                                                           size_t out_size) {
  (void)ctx;
  (void)out;
  (void)out_size;
  return -1;
}
/* Nothing is extracted: no trace to continue. */
static inline SONDE_DETAIL_UNUSED int sonde_context_extract(const char* traceparent,
                                                            sonde_context* ctx) {
  (void)traceparent;
  (void)ctx;
  return -1;
}
static inline SONDE_DETAIL_UNUSED sonde_stats sonde_get_stats(void) {
  sonde_stats s = {0, 0, 0, 0, 0};
  return s;
}

#endif /* SONDE_ENABLE */

#ifdef __cplusplus
}
#endif

#endif /* SONDE_SONDE_H */
