#include "analysis/render/graphviz_render.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

namespace sonde::analysis {
namespace {

// Closes a descriptor once, on any path out of render_dot.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

bool make_pipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.fd = fds[0];
  write_end.fd = fds[1];
  return true;
}

// Writing to a pipe whose reader died raises SIGPIPE, which would kill the
// whole process. Block it on this thread while dot runs, and swallow one
// that we caused; EPIPE from write() reports the same thing.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t pending;
    sigemptyset(&pending);
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~SigpipeGuard() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        sigset_t only;
        sigemptyset(&only);
        sigaddset(&only, SIGPIPE);
        const timespec zero{0, 0};
        sigtimedwait(&only, nullptr, &zero);
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeGuard(const SigpipeGuard&) = delete;
  SigpipeGuard& operator=(const SigpipeGuard&) = delete;

 private:
  sigset_t old_;
  bool was_pending_ = false;
};

bool valid_format(std::string_view format) {
  if (format.empty()) return false;
  for (char c : format) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':';
    if (!ok) return false;
  }
  return true;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string find_executable(std::string_view program) {
  if (program.empty()) return {};
  if (program.find('/') != std::string_view::npos) {
    std::string path(program);
    return ::access(path.c_str(), X_OK) == 0 ? path : std::string();
  }
  const char* env = std::getenv("PATH");
  const std::string_view dirs = env != nullptr ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string_view::npos) end = dirs.size();
    std::string dir(dirs.substr(start, end - start));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + std::string(program);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return {};
}

RenderResult render_dot(std::string_view dot_source, std::string_view format,
                        std::string_view dot_program, int timeout_ms) {
  RenderResult result;
  if (!valid_format(format)) {
    result.error = "invalid Graphviz output format '" + std::string(format) + "'";
    return result;
  }
  const std::string path = find_executable(dot_program);
  if (path.empty()) {
    result.error = "cannot find the Graphviz program '" + std::string(dot_program) +
                   "' (install the 'graphviz' package, or write a .dot file instead)";
    return result;
  }

  // Everything the child needs is prepared before fork: after fork only
  // async-signal-safe calls are allowed in a multithreaded process.
  const std::string format_arg = "-T" + std::string(format);
  std::vector<char*> argv = {const_cast<char*>(path.c_str()), const_cast<char*>(format_arg.c_str()),
                             nullptr};
  Fd in_r, in_w, out_r, out_w, err_r, err_w, exec_r, exec_w;
  if (!make_pipe(in_r, in_w) || !make_pipe(out_r, out_w) || !make_pipe(err_r, err_w) ||
      !make_pipe(exec_r, exec_w)) {
    result.error = std::string("cannot create pipes for dot: ") + std::strerror(errno);
    return result;
  }

  SigpipeGuard sigpipe_guard;
  const pid_t pid = ::fork();
  if (pid < 0) {
    result.error = std::string("cannot start dot: fork failed: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    // Child: the pipe ends become stdin/stdout/stderr (dup2 clears
    // O_CLOEXEC on the copies); if exec fails, report errno through exec_w,
    // which closes by itself when exec succeeds.
    if (::dup2(in_r.fd, 0) < 0 || ::dup2(out_w.fd, 1) < 0 || ::dup2(err_w.fd, 2) < 0) {
      const int e = errno;
      (void)!::write(exec_w.fd, &e, sizeof e);
      ::_exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    ::execv(path.c_str(), argv.data());
    const int e = errno;
    (void)!::write(exec_w.fd, &e, sizeof e);
    ::_exit(127);
  }

  in_r.reset();
  out_w.reset();
  err_w.reset();
  exec_w.reset();
  ::fcntl(in_w.fd, F_SETFL, ::fcntl(in_w.fd, F_GETFL) | O_NONBLOCK);

  // Feed stdin while draining stdout and stderr, so that a large graph
  // cannot deadlock with dot blocked on a full output pipe.
  std::string err_text;
  size_t written = 0;
  if (dot_source.empty()) in_w.reset();
  char buf[65536];
  int io_errno = 0;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    pollfd fds[3];
    nfds_t n = 0;
    int in_slot = -1, out_slot = -1, err_slot = -1;
    if (in_w.fd >= 0) {
      in_slot = static_cast<int>(n);
      fds[n++] = {in_w.fd, POLLOUT, 0};
    }
    if (out_r.fd >= 0) {
      out_slot = static_cast<int>(n);
      fds[n++] = {out_r.fd, POLLIN, 0};
    }
    if (err_r.fd >= 0) {
      err_slot = static_cast<int>(n);
      fds[n++] = {err_r.fd, POLLIN, 0};
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    const int ready = ::poll(fds, n, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      io_errno = errno;
      break;
    }
    if (ready == 0) continue;  // the deadline is checked at the top
    if (in_slot >= 0 && fds[in_slot].revents != 0) {
      const ssize_t w = ::write(in_w.fd, dot_source.data() + written, dot_source.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      // EPIPE: dot stopped reading (it exited); its stderr says why.
      if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == dot_source.size()) {
        in_w.reset();
      }
    }
    auto drain = [&](int slot, Fd& fd, std::string& sink) {
      if (slot < 0 || fds[slot].revents == 0) return;
      const ssize_t r = ::read(fd.fd, buf, sizeof buf);
      if (r > 0) {
        sink.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        fd.reset();
      }
    };
    drain(out_slot, out_r, result.output);
    drain(err_slot, err_r, err_text);
  }
  in_w.reset();

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  int exec_errno = 0;
  const bool exec_failed =
      ::read(exec_r.fd, &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno);

  if (timed_out) {
    const std::string limit = timeout_ms % 1000 == 0 ? std::to_string(timeout_ms / 1000) + " s"
                                                     : std::to_string(timeout_ms) + " ms";
    result.error = "'" + path + "' did not finish within " + limit +
                   " and was stopped (the graph is too large to lay out; write DOT text instead)";
  } else if (exec_failed) {
    result.error = "cannot run '" + path + "': " + std::strerror(exec_errno);
  } else if (io_errno != 0) {
    result.error = std::string("I/O error talking to dot: ") + std::strerror(io_errno);
  } else if (WIFSIGNALED(status)) {
    result.error = "'" + path + "' was killed by signal " + std::to_string(WTERMSIG(status));
  } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.error = "'" + path + "' failed (exit status " + std::to_string(WEXITSTATUS(status)) +
                   ")" + (err_text.empty() ? "" : ": " + trimmed(err_text));
  } else {
    result.ok = true;
    return result;
  }
  result.output.clear();
  return result;
}

}  // namespace sonde::analysis
