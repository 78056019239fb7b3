// A thread that returns from its instrumented frames and ends while the log
// is being closed: the worker waits inside three frames until monitoring
// stops (main returns, libsonde's exit handler begins to close the log),
// then unwinds and ends at once. Its exits come after the probes stopped
// recording, so the log must close its frames itself, although the thread
// may be gone (or its stack moved on) by the time the writer gets there.
// Usage: test_returns_at_close   (sonde_is_enabled is looked up, not linked)
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

static atomic_int g_waiting;
static int (*g_is_enabled)(void);

__attribute__((noinline)) static void wait_for_close(void) {
  atomic_store(&g_waiting, 1);
  while (g_is_enabled()) sched_yield();
}

__attribute__((noinline)) static void middle(void) { wait_for_close(); }

__attribute__((noinline)) static void* worker(void* arg) {
  (void)arg;
  middle();
  return NULL;
}

int main(void) {
  g_is_enabled = (int (*)(void))dlsym(RTLD_DEFAULT, "sonde_is_enabled");
  if (g_is_enabled == NULL) return 2;  // not run under libsonde
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  if (pthread_create(&t, &attr, worker, NULL) != 0) return 3;
  while (!atomic_load(&g_waiting)) sched_yield();
  return 0;
}
