// A server that never returns: a worker thread runs handle_request in a loop
// forever; main waits forever. It is stopped with a signal (the test sends
// SIGTERM, SIGINT or SIGHUP after the first requests are done).
// With trace_start=handle_request each request is one trace, and the worker's
// loop (which never returns) is not recorded.
// Usage: test_endless_server READY_FILE   (creates READY_FILE after 100 requests)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile long g_sink;
static const char* g_ready_file;

__attribute__((noinline)) static void parse(int i) { g_sink += i; }
__attribute__((noinline)) static void respond(int i) { g_sink += 2 * i; }

__attribute__((noinline)) static void handle_request(int i) {
  parse(i);
  respond(i);
}

__attribute__((noinline)) static void signal_ready(void) {
  FILE* f = fopen(g_ready_file, "w");
  if (f != NULL) fclose(f);
}

__attribute__((noinline)) static void* worker_loop(void* arg) {
  (void)arg;
  for (int i = 0;; ++i) {
    handle_request(i);
    if (i == 100) signal_ready();
    usleep(200);
  }
  return NULL;
}

int main(int argc, char** argv) {
  g_ready_file = argc > 1 ? argv[1] : "ready";
  pthread_t worker;
  pthread_create(&worker, NULL, worker_loop, NULL);
  for (;;) pause();
}
