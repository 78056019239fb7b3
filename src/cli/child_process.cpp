#include "cli/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace sonde::cli {
namespace {

const int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Read by the signal handler: lock-free, so async-signal-safe.
std::atomic<pid_t> g_child{0};
static_assert(std::atomic<pid_t>::is_always_lock_free);

void forward_signal(int sig, siginfo_t* info, void*) {
  int saved_errno = errno;
  pid_t child = g_child.load();
  // A terminal's ^C or hang-up (sent by the kernel) already reaches the
  // child, which shares our process group; forwarding it would deliver it
  // twice. Signals a process sent to sonde alone (kill, timeout) are forwarded.
  if (child > 0 && info->si_code != SI_KERNEL && info->si_pid != child) kill(child, sig);
  errno = saved_errno;
}

// Installs the forwarders and returns the signals it installed them for. A
// signal ignored when sonde started (nohup, background jobs) stays ignored,
// so that the program inherits that as it would without sonde.
std::vector<int> install_forwarders() {
  std::vector<int> installed;
  for (int sig : kForwardedSignals) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, nullptr) == 0) installed.push_back(sig);
  }
  return installed;
}

}  // namespace

Launch launch(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  // The child reports a failed exec through this pipe; a successful exec
  // closes it (O_CLOEXEC), so the parent reads end-of-file.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw LaunchError(std::string("pipe: ") + std::strerror(errno));

  // Signals stay blocked until g_child is set, so none arrives unforwarded.
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  for (int sig : kForwardedSignals) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &previous);
  std::vector<int> installed = install_forwarders();

  pid_t pid = fork();
  if (pid == 0) {
    // The forwarders mean nothing in the child (exec would reset them anyway).
    for (int sig : installed) signal(sig, SIG_DFL);
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    close(fds[0]);
    execvp(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = write(fds[1], &err, sizeof err);
    (void)ignored;
    _exit(kCannotExecute);
  }
  int fork_errno = errno;
  if (pid > 0) g_child.store(pid);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    throw LaunchError(std::string("fork: ") + std::strerror(fork_errno));
  }

  Launch result{pid, 0};
  ssize_t n;
  do {
    n = read(fds[0], &result.exec_errno, sizeof result.exec_errno);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof result.exec_errno)) result.exec_errno = 0;
  close(fds[0]);
  return result;
}

pid_t forwarding_to() { return g_child.load(); }

int wait_for_child(pid_t pid) {
  // Waits for the child's end without reaping it, so that while a signal
  // may still be forwarded its pid is the child's zombie; then stops the
  // forwarding, then reaps. Reaping first left a window in which a signal
  // sent to sonde (the diagnosis engine stopping its system under test,
  // a timeout) went to whichever new process had been given that pid.
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0) {
    if (errno != EINTR) break;
  }
  // One atomic store: a handler running now reads the zombie's pid or 0.
  if (g_child.load() == pid) g_child.store(0);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

std::string describe_signal(int sig) {
  std::string text = "signal " + std::to_string(sig);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 32)
  const char* abbrev = sigabbrev_np(sig);
  const char* description = sigdescr_np(sig);
  if (abbrev != nullptr && description != nullptr) {
    text += std::string(" (SIG") + abbrev + ": " + description + ")";
  }
#else
  text += std::string(" (") + strsignal(sig) + ")";
#endif
  return text;
}

}  // namespace sonde::cli
