/* sonde: records for what the interposition probes cannot see (docs/probes.md).
 *
 * A program that sends messages through an in-process queue or a broker
 * client, or queries a database through a driver sonde does not interpose,
 * reports those here; the records are tied to the calling thread's current
 * trace position like the probes' own, and written only while the matching
 * probe is on (probe_messaging, probe_database; switchable at run time via
 * probes_file). A call costs a switch load when the probe is off, and no
 * lock or I/O on the calling thread when it is on.
 *
 *   int64_t t0 = now_ns();
 *   queue.push(order);
 *   sonde_record_message_send("orders", sizeof order, now_ns() - t0);
 */
#ifndef SONDE_RECORDS_H
#define SONDE_RECORDS_H

#include "sonde/sonde.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A message sent to `destination` (queue, topic or peer; copied) of `bytes`
 * bytes, which took `duration_ns` to send (-1 if unknown). Written as
 * sonde.record.MessageSend when probe_messaging is on. */
#if SONDE_ENABLE

SONDE_API void sonde_record_message_send(const char* destination, int64_t bytes,
                                         int64_t duration_ns);

/* A database call executing `sql` (copied) that took `duration_ns` (-1 if
 * unknown). Written as sonde.record.DatabaseCall when probe_database is on. */
SONDE_API void sonde_record_database_call(const char* sql, int64_t duration_ns);

/* Whether a probe is on now: "lock_wait", "database" or "messaging".
 * 1 on, 0 off, -1 unknown name. Lets a program wait until a probes_file
 * change has been applied. */
SONDE_API int sonde_probe_enabled(const char* name);

#else /* !SONDE_ENABLE (sonde/sonde.h): nothing is recorded, no probe is on. */

static inline SONDE_DETAIL_UNUSED void sonde_record_message_send(const char* destination,
                                                                 int64_t bytes,
                                                                 int64_t duration_ns) {
  (void)destination;
  (void)bytes;
  (void)duration_ns;
}
static inline SONDE_DETAIL_UNUSED void sonde_record_database_call(const char* sql,
                                                                  int64_t duration_ns) {
  (void)sql;
  (void)duration_ns;
}
static inline SONDE_DETAIL_UNUSED int sonde_probe_enabled(const char* name) {
  (void)name;
  return 0;
}

#endif /* SONDE_ENABLE */

#ifdef __cplusplus
}
#endif

#endif /* SONDE_RECORDS_H */
